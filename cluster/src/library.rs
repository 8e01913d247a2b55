//! A library whose books are subjects of one replicated log: the
//! [`replay::Origin`] of a [`replay::Library`] whose files are copies.
//!
//! Book `NAME` of library `LIB` is the subject `lorebank.LIB.book.NAME`. Opening a
//! book the node has no file of creates an empty replica and fetches it; every
//! opened book gets a [`Replica`] as its commit gate and is brought up to date
//! before its first use; a book is created by publishing its first group with the
//! subject expected empty.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use ledger::{GateRefusal, GateRefusalKind, Ledger, OpenError};
use ledger_model::{Hash32, Seq};
use replay::library::check_name;
use replay::{BookError, Origin};

use crate::log::Log;
use crate::replica::{Policy, Replica, Synced};

/// The first bytes of a checkpoint in the checkpoint store.
pub const CHECKPOINT_MAGIC: &[u8; 8] = b"LBCKPT01";
/// blake3 `derive_key` context of a stored checkpoint's checksum.
pub const CHECKPOINT_CHECKSUM_CONTEXT: &str = "lorebank 2026-12-02 replica checkpoint v1";
/// Checkpoints a node keeps of a book (as `replay`'s default).
const CHECKPOINTS_KEPT: usize = 6;
/// A book opened with at least this many events to apply takes the stream's
/// checkpoint, if it has a usable one.
pub const CHECKPOINT_FETCH_EVENTS: u64 = 2_000;

/// What the server reports of one book.
#[derive(Clone, Debug)]
pub struct BookState {
    /// The book.
    pub name: String,
    /// Last log position processed.
    pub position: u64,
    /// The head.
    pub head: Seq,
    /// Why writes are refused, if they are.
    pub halted: Option<String>,
    /// The last message skipped, in words.
    pub last_skipped: Option<String>,
}

/// The books of one library in one log, as one node has them open.
pub struct ClusterOrigin {
    library: String,
    log: Arc<dyn Log>,
    policy: Policy,
    open: Mutex<BTreeMap<String, Arc<Replica>>>,
    /// The newest checkpoint revision this node put in (or found in) the store, by book.
    shared: Mutex<BTreeMap<String, u64>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unavailable(book: &str, error: impl std::fmt::Display) -> BookError {
    BookError::Append(ledger::AppendError::Gate(GateRefusal {
        kind: GateRefusalKind::Unavailable,
        detail: format!("book {book}: {error}"),
    }))
}

/// A refusal of the gate or a catch-up, as a book error.
pub fn book_error(refusal: GateRefusal) -> BookError {
    BookError::Append(ledger::AppendError::Gate(refusal))
}

impl ClusterOrigin {
    /// The books of library `library` (a book name) in `log`.
    pub fn new(library: &str, log: Arc<dyn Log>, policy: Policy) -> Result<ClusterOrigin, BookError> {
        check_name(library).map_err(|error| BookError::Invalid(format!("library name: {error}")))?;
        Ok(ClusterOrigin {
            library: library.to_owned(),
            log,
            policy,
            open: Mutex::new(BTreeMap::new()),
            shared: Mutex::new(BTreeMap::new()),
        })
    }

    /// The library's name.
    pub fn library(&self) -> &str {
        &self.library
    }

    /// The subjects' common prefix: `lorebank.LIB.book.`.
    pub fn prefix(&self) -> String {
        format!("lorebank.{}.book.", self.library)
    }

    /// The subject of book `name`.
    pub fn subject_of(&self, name: &str) -> String {
        format!("{}{name}", self.prefix())
    }

    /// The book a subject of this library names.
    pub fn book_of<'a>(&self, subject: &'a str) -> Option<&'a str> {
        let prefix = self.prefix();
        subject.strip_prefix(prefix.as_str()).filter(|name| check_name(name).is_ok())
    }

    /// The replica of open book `name`.
    pub fn replica(&self, name: &str) -> Option<Arc<Replica>> {
        lock(&self.open).get(name).cloned()
    }

    /// Brings open book `name` up to date; `None` when it is not open.
    pub fn sync(&self, name: &str) -> Option<Result<Synced, BookError>> {
        self.replica(name).map(|replica| replica.sync().map_err(book_error))
    }

    /// Every open book, as the server reports it.
    pub fn books(&self) -> Vec<BookState> {
        let open: Vec<Arc<Replica>> = lock(&self.open).values().cloned().collect();
        open.iter()
            .map(|replica| {
                let (position, head) = replica.tip();
                BookState {
                    name: replica.book().to_owned(),
                    position,
                    head: head.seq,
                    halted: replica.halted(),
                    last_skipped: replica.last_skipped(),
                }
            })
            .collect()
    }

    fn replica_of(&self, name: &str, ledger: &Ledger) -> Result<Arc<Replica>, BookError> {
        let mark = ledger.replica()?.ok_or_else(|| {
            BookError::Invalid(format!(
                "{} is a book of its own, not a copy of library {}'s book {name}: move it out of the library's directory, or bring it into the library with `lorebank serve --cluster … --seed` (docs/operations.md)",
                ledger.path().display(),
                self.library
            ))
        })?;
        let head = ledger.head()?;
        Ok(Arc::new(Replica::new(name, &self.subject_of(name), Arc::clone(&self.log), self.policy, head, mark)))
    }

    /// Takes the stream's checkpoint of book `name` into `ledger` when it is newer than
    /// the ledger's own and was taken on this log (its chain hash is the log's at its
    /// revision); returns its revision. A checkpoint that fails is ignored: it is a
    /// shortcut, never the book.
    pub fn fetch_checkpoint(&self, name: &str, ledger: &Ledger) -> Result<Option<Seq>, BookError> {
        let Some((revision, bytes)) = self.log.get_checkpoint(name).map_err(|error| unavailable(name, error))? else {
            return Ok(None);
        };
        let Some((chain, written_at_ms, state)) = parse_checkpoint(&bytes) else { return Ok(None) };
        let revision = Seq(revision);
        let head = ledger.head()?;
        let newest = ledger.checkpoints()?.last().map_or(Seq::ZERO, |info| info.revision);
        if revision > head.seq || revision <= newest || ledger.get(revision)?.hash != chain {
            return Ok(None);
        }
        ledger.put_checkpoint(revision, written_at_ms, state, CHECKPOINTS_KEPT)?;
        lock(&self.shared).insert(name.to_owned(), revision.0);
        Ok(Some(revision))
    }

    /// Puts the newest checkpoint of each open book in the stream when it is newer
    /// than the one there; returns how many were put.
    pub fn share_checkpoints(&self, ledgers: &[(String, Arc<Ledger>)]) -> usize {
        let mut n_shared = 0;
        for (name, ledger) in ledgers {
            let Ok(Some(newest)) = ledger.checkpoints().map(|all| all.last().copied()) else { continue };
            let known = lock(&self.shared).get(name).copied();
            let stored = match known {
                Some(known) => Some(known),
                None => match self.log.checkpoint_revision(name) {
                    Ok(stored) => stored,
                    Err(_) => continue,
                },
            };
            if stored.is_some_and(|stored| stored >= newest.revision.0) {
                lock(&self.shared).insert(name.clone(), stored.unwrap_or_default());
                continue;
            }
            let Ok(Some((info, state))) = ledger.checkpoint_at_or_before(newest.revision) else { continue };
            let bytes = checkpoint_bytes(info.chain, info.written_at_ms, &state);
            if self.log.put_checkpoint(name, info.revision.0, &bytes).is_ok() {
                lock(&self.shared).insert(name.clone(), info.revision.0);
                n_shared += 1;
            }
        }
        n_shared
    }
}

/// A checkpoint as the store holds it: magic, chain hash of its revision, when it was
/// written, the checkpoint bytes, and a checksum of all that.
pub fn checkpoint_bytes(chain: Hash32, written_at_ms: u64, state: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 32 + 8 + state.len() + 32);
    out.extend_from_slice(CHECKPOINT_MAGIC);
    out.extend_from_slice(&chain.0);
    out.extend_from_slice(&written_at_ms.to_le_bytes());
    out.extend_from_slice(state);
    let checksum = blake3::Hasher::new_derive_key(CHECKPOINT_CHECKSUM_CONTEXT).update(&out).finalize();
    out.extend_from_slice(checksum.as_bytes());
    out
}

/// The parts of a stored checkpoint, if its checksum holds.
pub fn parse_checkpoint(bytes: &[u8]) -> Option<(Hash32, u64, &[u8])> {
    let body_len = bytes.len().checked_sub(32)?;
    let (body, checksum) = bytes.split_at(body_len);
    if blake3::Hasher::new_derive_key(CHECKPOINT_CHECKSUM_CONTEXT).update(body).finalize().as_bytes() != checksum {
        return None;
    }
    let rest = body.strip_prefix(CHECKPOINT_MAGIC.as_slice())?;
    let chain = Hash32(rest.get(..32)?.try_into().ok()?);
    let written_at_ms = u64::from_le_bytes(rest.get(32..40)?.try_into().ok()?);
    Some((chain, written_at_ms, rest.get(40..)?))
}

impl Origin for ClusterOrigin {
    fn list(&self) -> Result<Vec<String>, BookError> {
        let subjects = self.log.subjects(&self.prefix()).map_err(|error| unavailable("(the library)", error))?;
        let mut names: Vec<String> =
            subjects.iter().filter_map(|subject| self.book_of(subject)).map(str::to_owned).collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn fetch(&self, name: &str, path: &Path) -> Result<bool, BookError> {
        let first = self.log.next(&self.subject_of(name), 1).map_err(|error| unavailable(name, error))?;
        if first.is_none() {
            return Ok(false);
        }
        drop(Ledger::create_replica(path)?);
        Ok(true)
    }

    fn create(&self, name: &str, path: &Path) -> Result<Ledger, BookError> {
        let first = self.log.next(&self.subject_of(name), 1).map_err(|error| unavailable(name, error))?;
        if first.is_some() {
            return Err(OpenError::Exists { path: format!("book {name} of library {}", self.library) }.into());
        }
        let ledger = Ledger::create_replica(path)?;
        let replica = self.replica_of(name, &ledger)?;
        ledger.set_gate(Some(replica as Arc<dyn ledger::CommitGate>));
        Ok(ledger)
    }

    fn attach(&self, name: &str, ledger: &Arc<Ledger>) -> Result<(), BookError> {
        let replica = self.replica_of(name, ledger)?;
        let mark = ledger.replica()?.unwrap_or_default();
        replica.attach(ledger);
        lock(&self.open).insert(name.to_owned(), Arc::clone(&replica));
        // A copy the stream no longer holds is kept and read; its writes are refused.
        if replica.check_mark(mark).is_err() {
            return Ok(());
        }
        let before = ledger.head()?.seq;
        match replica.sync() {
            Ok(synced) if synced.head.seq.0 >= before.0 + CHECKPOINT_FETCH_EVENTS => {
                let _ = self.fetch_checkpoint(name, ledger);
            }
            // Reads go on at the revision the file has: a refused message or a log
            // out of reach is reported by the next write, status and catch-up.
            _ => {}
        }
        Ok(())
    }

    fn detach(&self, name: &str) {
        lock(&self.open).remove(name);
    }
}
