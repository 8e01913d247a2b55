//! One book of a replicated library on one node: its commit gate (publish, confirm,
//! then the writer commits) and its catch-up (fetch, follow, apply), around one
//! shared *tip*: the last log position this node has processed on the book's subject
//! and the head that left. `docs/scale.md` gives the protocol and its argument.
//!
//! The gate runs on the ledger's writer thread; catch-up on a request's thread and
//! waits for the writer to apply what it fetched. So the gate never waits for
//! catch-up: each takes the tip's lock only to read or move the tip, never across a
//! call into the log or the ledger. Their races resolve through the tip's head (a gate
//! whose group was sealed at another head than the tip's refuses it as stale) and the
//! ledger's own check that an applied group starts at its head.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use ledger::replica::{split, CheckedGroup, Follower, Group, Offered, Skip};
use ledger::{AppendError, CommitGate, GateRefusal, GateRefusalKind, Head, Ledger, ReplicaPosition};
use ledger_model::record;

use crate::log::{Log, LogError, Stored};

/// How a replica talks to its log.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// How long a publish (or its confirmation) is retried while the log does not
    /// answer or has no leader. Must stay well under the stream's duplicate window
    /// (2 minutes), so a retried publish is always recognized.
    pub publish_deadline: Duration,
    /// The largest part, header included (the server's `max_payload` less room for
    /// the message's headers).
    pub part_bytes_max: usize,
    /// Messages a catch-up fetches one at a time before it switches to a bulk read.
    pub next_max: usize,
    /// Bytes of groups a catch-up applies in one local transaction.
    pub apply_bytes_max: usize,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            publish_deadline: Duration::from_secs(30),
            part_bytes_max: (1 << 20) - 4096,
            next_max: 16,
            apply_bytes_max: 16 << 20,
        }
    }
}

/// Why a book stopped taking writes on this node.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Halt {
    reason: String,
    /// The log no longer holds what the file ends at: following it would misread
    /// its positions. Only a new file (or a new log) ends it.
    lost: bool,
}

#[derive(Clone, Debug)]
struct Tip {
    position: u64,
    head: Head,
    halt: Option<Halt>,
}

/// What a catch-up did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    /// The head after it.
    pub head: Head,
    /// The last log position processed.
    pub position: u64,
    /// Groups applied.
    pub n_groups: u64,
    /// Messages skipped (abandoned, orphaned or superseded).
    pub n_skipped: u64,
}

/// One book on one node.
pub struct Replica {
    book: String,
    subject: String,
    log: Arc<dyn Log>,
    policy: Policy,
    tip: Mutex<Tip>,
    follow: Mutex<Follower>,
    ledger: Mutex<Weak<Ledger>>,
    /// The last message skipped, in words.
    skipped: Mutex<Option<String>>,
    /// Told that the subject has news since the last catch-up began.
    behind: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn refusal(kind: GateRefusalKind, detail: String) -> GateRefusal {
    GateRefusal { kind, detail }
}

/// The head after `group`: its last record's chain hash (the group was checked or
/// sealed by the writer).
fn end_of(group: &Group) -> Head {
    let header = group
        .records
        .last()
        .and_then(|bytes| bytes.get(..record::HEADER_BYTES))
        .and_then(|bytes| bytes.try_into().ok())
        .and_then(|bytes| record::Header::from_bytes(bytes).ok());
    header.map_or(group.before, |header| Head { seq: header.seq, hash: header.chain_hash() })
}

impl Replica {
    /// Book `book` on `subject`, whose local file is at `head` with `position` (the last
    /// group it holds, [`Ledger::replica`]).
    pub fn new(
        book: &str,
        subject: &str,
        log: Arc<dyn Log>,
        policy: Policy,
        head: Head,
        position: ReplicaPosition,
    ) -> Replica {
        Replica {
            book: book.to_owned(),
            subject: subject.to_owned(),
            log,
            policy,
            tip: Mutex::new(Tip { position: position.position, head, halt: None }),
            follow: Mutex::new(Follower::at(head, position.position)),
            ledger: Mutex::new(Weak::new()),
            skipped: Mutex::new(None),
            behind: AtomicBool::new(false),
        }
    }

    /// The book's name.
    pub fn book(&self) -> &str {
        &self.book
    }

    /// Attaches the book's ledger: this replica becomes its commit gate.
    pub fn attach(self: &Arc<Replica>, ledger: &Arc<Ledger>) {
        *lock(&self.ledger) = Arc::downgrade(ledger);
        ledger.set_gate(Some(Arc::clone(self) as Arc<dyn CommitGate>));
    }

    /// The last log position processed and the head it left.
    pub fn tip(&self) -> (u64, Head) {
        let tip = lock(&self.tip);
        (tip.position, tip.head)
    }

    /// Notes that the subject has a message this node may not have (a prompt from
    /// the log): the next write catches up first.
    pub fn prompt(&self) {
        self.behind.store(true, Ordering::SeqCst);
    }

    /// Whether a write should catch up first: a prompt came since the last catch-up
    /// began, or the book's writes are stopped (a catch-up tries the refused message
    /// again, and resumes the book once it is gone).
    pub fn is_behind(&self) -> bool {
        self.behind.load(Ordering::SeqCst) || lock(&self.tip).halt.is_some()
    }

    /// The last message a catch-up skipped, in words.
    pub fn last_skipped(&self) -> Option<String> {
        lock(&self.skipped).clone()
    }

    /// Why writes are refused, if they are.
    pub fn halted(&self) -> Option<String> {
        lock(&self.tip).halt.as_ref().map(|halt| halt.reason.clone())
    }

    /// Checks that the log still holds the message the file ends at (`at`): if it
    /// does not, writes stop and the file is kept as it is.
    pub fn check_position(&self, at: ReplicaPosition) -> Result<(), GateRefusal> {
        if at.position == 0 {
            return Ok(());
        }
        let found = self.log.get(at.position).map_err(|error| self.unavailable(error))?;
        let holds = match &found {
            Some((subject, stored)) => {
                subject == &self.subject
                    && ledger::replica::Part::parse(&stored.bytes).is_ok_and(|part| part.group == at.group)
            }
            None => false,
        };
        if holds {
            return Ok(());
        }
        let reason = format!(
            "book {}: this node's copy ends at stream sequence {} (group {}), which the library's stream no longer holds: the stream was deleted, purged or lost acknowledged messages; the copy is kept as it is, reads go on from it, and writes are refused (docs/operations.md)",
            self.book, at.position, at.group
        );
        lock(&self.tip).halt = Some(Halt { reason: reason.clone(), lost: true });
        Err(refusal(GateRefusalKind::Refused, reason))
    }

    fn unavailable(&self, error: LogError) -> GateRefusal {
        refusal(GateRefusalKind::Unavailable, format!("book {}: {error}", self.book))
    }

    /// Brings the book up to date with the log: fetches the messages after the tip,
    /// follows them and applies every group that forms the book, checked. A refused
    /// message stops the book (writes are refused until the message is gone) and is
    /// returned, naming the book, the stream sequence and what failed; the local book
    /// holds what came before it.
    pub fn sync(&self) -> Result<Synced, GateRefusal> {
        let Some(ledger) = lock(&self.ledger).upgrade() else {
            return Err(refusal(GateRefusalKind::Unavailable, format!("book {} is closed", self.book)));
        };
        let mut follower = lock(&self.follow);
        self.behind.store(false, Ordering::SeqCst);
        let mut synced = Synced::default();
        loop {
            let tip = lock(&self.tip).clone();
            if let Some(halt) = tip.halt.as_ref().filter(|halt| halt.lost) {
                return Err(refusal(GateRefusalKind::Refused, halt.reason.clone()));
            }
            if follower.position() != tip.position || follower.head() != tip.head {
                *follower = Follower::at(tip.head, tip.position);
            }
            let messages = self.fetch(follower.position() + 1)?;
            if messages.is_empty() {
                let mut tip = lock(&self.tip);
                if tip.position == follower.position() {
                    tip.halt = None;
                }
                synced.head = tip.head;
                synced.position = tip.position;
                return Ok(synced);
            }
            let start = (follower.position(), follower.head());
            let mut ready: Vec<CheckedGroup> = Vec::new();
            let mut last = None;
            let mut n_ready_bytes = 0usize;
            let mut refused = None;
            for stored in messages {
                match follower.offer(stored.position, &stored.bytes) {
                    Ok(Offered::Pending) => {}
                    Ok(Offered::Skipped(skip)) => {
                        synced.n_skipped += 1;
                        *lock(&self.skipped) =
                            Some(format!("stream sequence {}: {}", stored.position, skip_words(&skip)));
                    }
                    Ok(Offered::Ready(group)) => {
                        follower.applied(stored.position, &group);
                        last = Some(ReplicaPosition { position: stored.position, group: group.id() });
                        n_ready_bytes += stored.bytes.len();
                        ready.push(group);
                        if n_ready_bytes >= self.policy.apply_bytes_max {
                            break;
                        }
                    }
                    Err(error) => {
                        refused = Some(format!(
                            "book {}: stream sequence {}: refused: {error}; the book stops at event {} until the message is removed",
                            self.book,
                            stored.position,
                            follower.head().seq
                        ));
                        break;
                    }
                }
            }
            // A catch-up applies at the head: the groups the follower handed out chain
            // from the head it started the round at, and its position only moved on.
            let mut at = start.1;
            for group in &ready {
                assert_eq!(group.before(), at, "a group to apply starts where the one before it ended");
                at = group.end();
            }
            assert!(follower.position() >= start.0, "a catch-up never moves back in the log");
            assert!(last.is_none_or(|last| last.position <= follower.position()), "the last group applied was read");
            let n_groups = ready.len() as u64;
            let applied = match last {
                Some(last) => ledger.apply_replica(ready, last).map(Some),
                None => Ok(None),
            };
            match applied {
                Ok(_) => {
                    synced.n_groups += n_groups;
                    let mut tip = lock(&self.tip);
                    if (tip.position, tip.head) == start {
                        tip.position = follower.position();
                        tip.head = follower.head();
                    }
                }
                // The writer committed a group of this node's gate first: start again
                // from the tip it left.
                Err(AppendError::NotAtHead { .. }) => {
                    *follower = Follower::at(tip.head, tip.position);
                    continue;
                }
                Err(error) => {
                    *follower = Follower::at(tip.head, tip.position);
                    return Err(refusal(
                        GateRefusalKind::Unavailable,
                        format!("book {}: the groups fetched could not be applied: {error}", self.book),
                    ));
                }
            }
            if let Some(reason) = refused {
                lock(&self.tip).halt = Some(Halt { reason: reason.clone(), lost: false });
                return Err(refusal(GateRefusalKind::Refused, reason));
            }
        }
    }

    /// The messages on the subject from `from` on: one at a time for a few (the
    /// common case: none, or the few another node just wrote), then in bulk.
    ///
    /// The positions are checked to increase from `from` on (a log that answers out of
    /// order is unavailable, never followed), so the follower reads them in order.
    fn fetch(&self, from: u64) -> Result<Vec<Stored>, GateRefusal> {
        let mut messages = Vec::new();
        let mut at = from;
        while messages.len() < self.policy.next_max {
            let next = self.next_from(at).map_err(|error| self.unavailable(error))?;
            let Some(stored) = next else { return Ok(messages) };
            at = stored.position + 1;
            messages.push(stored);
        }
        let mut n_bytes = 0usize;
        let mut out_of_order = None;
        self.log
            .read_from(&self.subject, at, &mut |stored| {
                if let Some(error) = out_of_order_error(at, stored.position) {
                    out_of_order = Some(error);
                    return ControlFlow::Break(());
                }
                at = stored.position + 1;
                n_bytes += stored.bytes.len();
                messages.push(stored);
                // Enough for a few local transactions; the next round fetches the rest.
                if n_bytes >= 4 * self.policy.apply_bytes_max {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .map_err(|error| self.unavailable(error))?;
        if let Some(error) = out_of_order {
            return Err(self.unavailable(error));
        }
        Ok(messages)
    }

    /// The first message on the subject at position `from` or after ([`Log::next`]),
    /// refused as the log's failure if its position is before `from`.
    fn next_from(&self, from: u64) -> Result<Option<Stored>, LogError> {
        let next = self.log.next(&self.subject, from)?;
        match next.as_ref().and_then(|stored| out_of_order_error(from, stored.position)) {
            Some(error) => Err(error),
            None => Ok(next),
        }
    }

    /// Publishes one part and confirms that it is the first message on the subject
    /// after `expected`; returns its position.
    fn publish_part(&self, expected: u64, msg_id: &str, bytes: &[u8], deadline: Instant) -> Result<u64, GateRefusal> {
        let mut pause = Duration::from_millis(50);
        let mut wait = |what: &LogError| -> Result<(), GateRefusal> {
            if Instant::now() + pause > deadline {
                return Err(refusal(
                    GateRefusalKind::Unavailable,
                    format!(
                        "book {}: the library's log did not take the write within {:.0} s ({what}); it may still be in the log: retry with the same Idempotency-Key",
                        self.book,
                        self.policy.publish_deadline.as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
            Ok(())
        };
        // The expected sequence makes a lost race cheap to find out; the confirmation
        // below is what keeps a book from forking, so it is left out when the log
        // contradicts itself (nats-server 2.9, after the subject's last message was
        // deleted, refuses every expected sequence but 0).
        let mut expect = Some(expected);
        let published = loop {
            match self.log.publish(&self.subject, expect, msg_id, bytes) {
                Ok(published) => break published,
                Err(LogError::WrongLast { detail, .. }) => match self.next_from(expected + 1) {
                    // Nothing after the tip, yet the tip is not the subject's last: the
                    // log contradicts itself, or it lost the tip's message (then this
                    // node's copy is ahead of the library, and must not go on).
                    Ok(None) if expect.is_some() => match self.log.get(expected) {
                        Ok(Some((subject, _))) if subject == self.subject => expect = None,
                        Ok(_) if expected == 0 => expect = None,
                        Ok(_) => {
                            let reason = format!(
                                "book {}: this node has processed the library's stream up to sequence {expected}, which the stream no longer holds: the stream was deleted, purged or lost acknowledged messages; the copy is kept as it is, reads go on from it, and writes are refused (docs/operations.md)",
                                self.book
                            );
                            lock(&self.tip).halt = Some(Halt { reason: reason.clone(), lost: true });
                            return Err(refusal(GateRefusalKind::Refused, reason));
                        }
                        Err(error) => wait(&error)?,
                    },
                    Ok(_) => {
                        return Err(refusal(
                            GateRefusalKind::Stale,
                            format!("book {}: another writer got there first ({detail})", self.book),
                        ));
                    }
                    Err(error) => wait(&error)?,
                },
                Err(error) => wait(&error)?,
            }
        };
        loop {
            match self.next_from(expected + 1) {
                Ok(Some(first)) if first.position == published.position || first.msg_id.as_deref() == Some(msg_id) => {
                    return Ok(first.position);
                }
                Ok(Some(first)) => {
                    return Err(refusal(
                        GateRefusalKind::Stale,
                        format!(
                            "book {}: another writer's message (stream sequence {}) came first after {expected}",
                            self.book, first.position
                        ),
                    ));
                }
                // Acknowledged, but not visible at the leader yet: ask again.
                Ok(None) => wait(&LogError::Unavailable("the message is not visible yet".into()))?,
                Err(error) => wait(&error)?,
            }
        }
    }
}

/// The log's failure when it answers a read from position `from` with a message at
/// `position` before it: positions on a subject only increase.
fn out_of_order_error(from: u64, position: u64) -> Option<LogError> {
    (position < from)
        .then(|| LogError::Unavailable(format!("it answered stream sequence {position} to a read from {from} on")))
}

/// A skipped message in words (kept for a report).
fn skip_words(skip: &Skip) -> String {
    match skip {
        Skip::Orphan { group, index } => format!("part {index} of group {group} without the part before it"),
        Skip::Superseded { group, before } => format!("group {group}, which starts at event {}", before.seq),
    }
}

impl Replica {
    /// Publishes `group`, which must start at the tip's head, and confirms each of its
    /// parts; on success the tip is at its last part. What the gate does before the
    /// writer commits, and how a book of its own is brought into a library.
    ///
    /// # Panics
    /// If `group` is not one a writer sealed (or one of a checked book): its last
    /// record must be the event `records.len()` after its start.
    pub fn publish(&self, group: &Group) -> Result<ReplicaPosition, GateRefusal> {
        let (expected, head) = {
            let tip = lock(&self.tip);
            if let Some(halt) = &tip.halt {
                return Err(refusal(GateRefusalKind::Refused, halt.reason.clone()));
            }
            (tip.position, tip.head)
        };
        if head != group.before {
            return Err(refusal(
                GateRefusalKind::Stale,
                format!(
                    "book {}: the write was sealed at event {}, but this node follows the library at event {} (stream sequence {expected})",
                    self.book, group.before.seq, head.seq
                ),
            ));
        }
        let bytes = group.encode();
        let id = Group::id_of(&bytes).unwrap_or_default();
        let parts = split(&bytes, self.policy.part_bytes_max)
            .map_err(|error| refusal(GateRefusalKind::Invalid, format!("book {}: {error}", self.book)))?;
        // What is published is what was sealed: the group's parts, in order, under
        // its id; and its records are the events right after its start.
        let end = end_of(group);
        assert_eq!(
            end.seq.0,
            group.before.seq.0 + group.records.len() as u64,
            "a published group's events follow its start"
        );
        for (index, part) in parts.iter().enumerate() {
            let parsed = ledger::replica::Part::parse(part);
            assert!(
                parsed.is_ok_and(|parsed| {
                    (parsed.group, parsed.index as usize, parsed.count as usize) == (id, index, parts.len())
                }),
                "part {index} of the group is its part {index} of {}",
                parts.len()
            );
        }
        let deadline = Instant::now() + self.policy.publish_deadline;
        let mut position = expected;
        for (index, part) in parts.iter().enumerate() {
            let msg_id = format!("{}.{}.{index}", self.book, id.to_hex());
            let published = self.publish_part(position, &msg_id, part, deadline)?;
            // Sequence numbers increase: each part is confirmed first after the one
            // before it.
            assert!(published > position, "part {index} is confirmed at {published}, after {position}");
            position = published;
        }
        let mut tip = lock(&self.tip);
        if position > tip.position {
            tip.position = position;
            tip.head = end;
        }
        Ok(ReplicaPosition { position, group: id })
    }
}

impl CommitGate for Replica {
    fn admit(&self, group: &Group) -> Result<ReplicaPosition, GateRefusal> {
        self.publish(group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Published;
    use crate::MemoryLog;

    /// A log whose reads answer with its first message whatever position they ask
    /// from: a log that breaks its own order.
    struct Backwards(MemoryLog);

    impl Log for Backwards {
        fn publish(&self, subject: &str, expected: Option<u64>, id: &str, bytes: &[u8]) -> Result<Published, LogError> {
            self.0.publish(subject, expected, id, bytes)
        }
        fn next(&self, subject: &str, _from: u64) -> Result<Option<Stored>, LogError> {
            self.0.next(subject, 1)
        }
        fn get(&self, position: u64) -> Result<Option<(String, Stored)>, LogError> {
            self.0.get(position)
        }
        fn read_from(
            &self,
            subject: &str,
            _from: u64,
            visit: &mut dyn FnMut(Stored) -> ControlFlow<()>,
        ) -> Result<(), LogError> {
            self.0.read_from(subject, 1, visit)
        }
        fn subjects(&self, prefix: &str) -> Result<Vec<String>, LogError> {
            self.0.subjects(prefix)
        }
        fn put_checkpoint(&self, name: &str, revision: u64, bytes: &[u8]) -> Result<(), LogError> {
            self.0.put_checkpoint(name, revision, bytes)
        }
        fn checkpoint_revision(&self, name: &str) -> Result<Option<u64>, LogError> {
            self.0.checkpoint_revision(name)
        }
        fn get_checkpoint(&self, name: &str) -> Result<Option<(u64, Vec<u8>)>, LogError> {
            self.0.get_checkpoint(name)
        }
    }

    #[test]
    fn a_log_that_answers_before_the_position_asked_is_unavailable_not_followed() {
        let log = Backwards(MemoryLog::new());
        for _ in 0..3 {
            log.0.inject("lorebank.lib.book.b", b"not a part");
        }
        let replica = Replica::new(
            "b",
            "lorebank.lib.book.b",
            Arc::new(log),
            Policy::default(),
            Head::EMPTY,
            ReplicaPosition::default(),
        );
        let refused = replica.fetch(3).unwrap_err();
        assert_eq!(refused.kind, GateRefusalKind::Unavailable);
        assert!(refused.detail.contains("answered stream sequence 1 to a read from 3"), "{}", refused.detail);
        let bulk = Replica { policy: Policy { next_max: 1, ..Policy::default() }, ..replica };
        let refused = bulk.fetch(1).unwrap_err();
        assert!(refused.detail.contains("answered stream sequence 1 to a read from 2"), "{}", refused.detail);
    }
}
