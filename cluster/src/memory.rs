//! An in-memory [`Log`] for tests and benchmarks: one order over every subject,
//! message-id deduplication, and the expected-position check, which can be turned
//! off to play a clustered JetStream that accepts two publishes with the same
//! expected position (nats-io/nats-server#4320), so tests can show that the chain
//! and the confirmation keep a book from forking even then.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::log::{Log, LogError, Published, Stored};

#[derive(Default)]
struct Inner {
    /// position - 1 → (subject, message).
    messages: Vec<(String, Stored)>,
    checkpoints: BTreeMap<String, (u64, Vec<u8>)>,
    deleted: std::collections::BTreeSet<u64>,
}

/// An in-memory log.
#[derive(Default)]
pub struct MemoryLog {
    inner: Mutex<Inner>,
    ignore_expected: AtomicBool,
    forget_last: AtomicBool,
}

impl MemoryLog {
    /// An empty log that honours the expected position.
    pub fn new() -> MemoryLog {
        MemoryLog::default()
    }

    /// From now on, accept publishes whatever the subject's last position is.
    pub fn ignore_expected(&self, ignore: bool) {
        self.ignore_expected.store(ignore, Ordering::SeqCst);
    }

    /// From now on, refuse every publish that expects a position other than 0, as
    /// nats-server 2.9 does on a subject whose last message was deleted (its
    /// per-subject state then names a message it no longer has).
    pub fn forget_last(&self, forget: bool) {
        self.forget_last.store(forget, Ordering::SeqCst);
    }

    /// Appends `bytes` on `subject` with no check at all (a forger, or a tool that
    /// publishes without the header); returns the position.
    pub fn inject(&self, subject: &str, bytes: &[u8]) -> u64 {
        let mut inner = self.lock();
        let position = inner.messages.len() as u64 + 1;
        inner.messages.push((subject.to_owned(), Stored { position, msg_id: None, bytes: bytes.to_vec() }));
        position
    }

    /// Deletes the message at `position` (what an operator does to a refused one).
    pub fn delete(&self, position: u64) {
        self.lock().deleted.insert(position);
    }

    /// Every message on `subject`, in order.
    pub fn messages(&self, subject: &str) -> Vec<Stored> {
        let inner = self.lock();
        inner
            .messages
            .iter()
            .filter(|(on, stored)| on == subject && !inner.deleted.contains(&stored.position))
            .map(|(_, stored)| stored.clone())
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Inner {
    fn visible(&self) -> impl Iterator<Item = &(String, Stored)> {
        self.messages.iter().filter(|(_, stored)| !self.deleted.contains(&stored.position))
    }
}

impl Log for MemoryLog {
    fn publish(&self, subject: &str, expected: Option<u64>, msg_id: &str, bytes: &[u8]) -> Result<Published, LogError> {
        let mut inner = self.lock();
        if let Some((_, stored)) = inner.visible().find(|(_, stored)| stored.msg_id.as_deref() == Some(msg_id)) {
            return Ok(Published { position: stored.position, duplicate: true });
        }
        let last =
            inner.visible().filter(|(on, _)| on == subject).map(|(_, stored)| stored.position).last().unwrap_or(0);
        let stale = expected.is_some_and(|expected| expected != last);
        let stale = stale || (expected.is_some() && self.forget_last.load(Ordering::SeqCst) && last != 0);
        if stale && !self.ignore_expected.load(Ordering::SeqCst) {
            return Err(LogError::WrongLast {
                subject: subject.to_owned(),
                detail: format!("wrong last sequence: {last}"),
            });
        }
        let position = inner.messages.len() as u64 + 1;
        let stored = Stored { position, msg_id: Some(msg_id.to_owned()), bytes: bytes.to_vec() };
        inner.messages.push((subject.to_owned(), stored));
        Ok(Published { position, duplicate: false })
    }

    fn next(&self, subject: &str, from: u64) -> Result<Option<Stored>, LogError> {
        let inner = self.lock();
        let found = inner.visible().find(|(on, stored)| on == subject && stored.position >= from);
        Ok(found.map(|(_, stored)| stored.clone()))
    }

    fn get(&self, position: u64) -> Result<Option<(String, Stored)>, LogError> {
        let inner = self.lock();
        let found = inner.visible().find(|(_, stored)| stored.position == position).cloned();
        Ok(found)
    }

    fn read_from(
        &self,
        subject: &str,
        from: u64,
        visit: &mut dyn FnMut(Stored) -> ControlFlow<()>,
    ) -> Result<(), LogError> {
        let found: Vec<Stored> = {
            let inner = self.lock();
            inner
                .visible()
                .filter(|(on, stored)| on == subject && stored.position >= from)
                .map(|(_, stored)| stored.clone())
                .collect()
        };
        for stored in found {
            if visit(stored).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn subjects(&self, prefix: &str) -> Result<Vec<String>, LogError> {
        let inner = self.lock();
        let mut subjects: Vec<String> = inner
            .visible()
            .map(|(on, _)| on.clone())
            .filter(|on| on.strip_prefix(prefix).is_some_and(|rest| !rest.is_empty() && !rest.contains('.')))
            .collect();
        subjects.sort();
        subjects.dedup();
        Ok(subjects)
    }

    fn put_checkpoint(&self, name: &str, revision: u64, bytes: &[u8]) -> Result<(), LogError> {
        self.lock().checkpoints.insert(name.to_owned(), (revision, bytes.to_vec()));
        Ok(())
    }

    fn checkpoint_revision(&self, name: &str) -> Result<Option<u64>, LogError> {
        Ok(self.lock().checkpoints.get(name).map(|(revision, _)| *revision))
    }

    fn get_checkpoint(&self, name: &str) -> Result<Option<(u64, Vec<u8>)>, LogError> {
        Ok(self.lock().checkpoints.get(name).cloned())
    }
}
