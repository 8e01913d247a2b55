//! Turns at a book: lorebank processes that open the same book take turns, first
//! come first served, a writer alone and readers together.
//!
//! redb locks the book file itself and refuses a second open at once
//! (`DatabaseAlreadyOpen`); it does not wait. Turns are kept with two lock files beside
//! the book, locked with `flock`, which the kernel queues and releases when the
//! holding process ends however it ends (a `kill -9` included):
//!
//! * `BOOK.lock` is held for as long as the book is open: shared by a reader,
//!   exclusive by a writer.
//! * `BOOK.turnstile` stands in front of it: every opener takes it exclusive,
//!   then waits for `BOOK.lock`, then lets it go. A writer waiting for the readers
//!   already inside therefore holds up every later arrival, so readers never starve a
//!   writer, and a writer waits only for the readers that came before it.
//!
//! The files order the waiting and nothing else: the book's safety stays with redb's
//! own lock, so an opener that cannot create or open them (a read-only directory)
//! proceeds without a turn, and a copied book needs neither.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::error::OpenError;

/// How long after it starts to wait an open says so, once.
pub const NOTICE_AFTER: Duration = Duration::from_secs(1);

/// How often an open polls redb while a process that takes no turn holds the book.
const POLL: Duration = Duration::from_millis(10);

/// How long an open waits for its turn at a book, and whom it tells that it waits.
///
/// The limit covers the whole open, from [`Patience::new`]: the wait for a turn,
/// and any wait for a process that holds the book without taking one. After
/// [`NOTICE_AFTER`] of waiting, the notice is called once with a sentence that names
/// the book and what holds it.
pub struct Patience<'a> {
    started: Instant,
    limit: Duration,
    told: bool,
    notice: Box<dyn FnMut(&str) + 'a>,
}

impl Patience<'static> {
    /// Waits up to `limit`, silently.
    pub fn new(limit: Duration) -> Patience<'static> {
        Patience::telling(limit, |_| {})
    }
}

impl<'a> Patience<'a> {
    /// Waits up to `limit`, and calls `notice` once if the wait passes [`NOTICE_AFTER`].
    pub fn telling(limit: Duration, notice: impl FnMut(&str) + 'a) -> Patience<'a> {
        Patience { started: Instant::now(), limit, told: false, notice: Box::new(notice) }
    }

    /// The longest it waits.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    fn deadline(&self) -> Instant {
        self.started + self.limit
    }

    /// How long to sleep before there is something to do: tell, or give up.
    fn next_wake(&self) -> Duration {
        let now = Instant::now();
        let until = if self.told { self.deadline() } else { self.deadline().min(self.started + NOTICE_AFTER) };
        until.saturating_duration_since(now)
    }

    /// Tells the notice once, when its time has come; or fails if the time is up.
    fn check(&mut self, book: &Path, holder: impl FnOnce() -> &'static str) -> Result<(), OpenError> {
        let waited = self.started.elapsed();
        if waited >= self.limit {
            // It waited the whole limit (a little more, as a sleep ends late); the limit
            // is what the caller chose and recognizes.
            return Err(OpenError::Busy { path: book.display().to_string(), waited: seconds(self.limit) });
        }
        if !self.told && waited >= NOTICE_AFTER {
            self.told = true;
            let message =
                format!("waiting for {}: {} (giving up after {})", book.display(), holder(), seconds(self.limit));
            (self.notice)(&message);
        }
        Ok(())
    }

    /// Sleeps a poll step while a process that takes no turn holds the book, or fails if
    /// the time is up.
    pub(crate) fn pause(&mut self, book: &Path) -> Result<(), OpenError> {
        self.check(book, || "another process has it open")?;
        std::thread::sleep(POLL.min(self.next_wake().max(Duration::from_millis(1))));
        Ok(())
    }
}

/// A duration for a person, as it was likely given: "60 s", "1.5 s", "250 ms".
fn seconds(duration: Duration) -> String {
    let millis = duration.subsec_millis();
    if millis == 0 || duration.as_secs() >= 60 {
        format!("{} s", duration.as_secs())
    } else if millis % 100 == 0 {
        format!("{}.{} s", duration.as_secs(), millis / 100)
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// What an open is for: a writer waits alone, readers share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Write,
    Read,
}

/// A turn at a book: held until dropped, which must come after the book is closed.
#[derive(Debug)]
pub(crate) struct Turn {
    _held: File,
}

/// The path of a sidecar file: the book's path with `suffix` appended.
pub(crate) fn sidecar(book: &Path, suffix: &str) -> PathBuf {
    let mut name = book.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Waits for a turn at `book`. `None` when turns cannot be taken here (the lock files
/// cannot be created or opened, or the file system has no `flock`): the open goes on
/// without a turn, guarded by redb's own lock.
pub(crate) fn wait_turn(book: &Path, access: Access, patience: &mut Patience) -> Result<Option<Turn>, OpenError> {
    let (Some(gate), Some(held)) = (lock_file(&sidecar(book, ".turnstile")), lock_file(&sidecar(book, ".lock"))) else {
        return Ok(None);
    };
    let gate_held = match try_turn(&gate, &held, access) {
        Quick::Taken => return Ok(Some(Turn { _held: held })),
        Quick::Unusable => return Ok(None),
        Quick::Wait { gate_held } => gate_held,
    };
    // The blocking locks run on a thread of their own so that the wait can end at the
    // deadline. A thread left waiting past it gives up as soon as its turn comes.
    let abandoned = Arc::new(AtomicBool::new(false));
    let (send, receive) = mpsc::sync_channel(1);
    let spawned = {
        let abandoned = Arc::clone(&abandoned);
        std::thread::Builder::new().name("lorebank-turn".into()).spawn(move || {
            let _ = send.send(take_turn(gate, gate_held, held, access, &abandoned));
        })
    };
    if spawned.is_err() {
        return Ok(None);
    }
    let outcome = loop {
        match receive.recv_timeout(patience.next_wake()) {
            Ok(taken) => break Ok(taken.map(|held| Turn { _held: held })),
            Err(mpsc::RecvTimeoutError::Disconnected) => break Ok(None),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(error) = patience.check(book, || holder(book, access)) {
                    break Err(error);
                }
            }
        }
    };
    if outcome.is_err() {
        abandoned.store(true, Ordering::SeqCst);
    }
    outcome
}

/// Opens (creating it if need be) a lock file; `None` if neither works.
fn lock_file(path: &Path) -> Option<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .or_else(|_| File::open(path))
        .ok()
}

#[cfg(unix)]
mod os {
    use std::fs::File;

    pub(super) use rustix::fs::FlockOperation as Op;

    /// `flock`, retried when a signal interrupts it; `Ok(false)` when a non-blocking
    /// request finds the lock taken.
    pub(super) fn flock(file: &File, operation: Op) -> std::io::Result<bool> {
        loop {
            match rustix::fs::flock(file, operation) {
                Ok(()) => return Ok(true),
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::WOULDBLOCK) => return Ok(false),
                Err(error) => return Err(error.into()),
            }
        }
    }
}

/// What a first try without waiting found.
enum Quick {
    /// The turn is taken (the gate is released again).
    Taken,
    /// Turns cannot be taken here.
    Unusable,
    /// Someone is ahead: wait, holding the gate already or not.
    Wait { gate_held: bool },
}

/// Tries the turnstile and the book lock without waiting.
#[cfg(unix)]
fn try_turn(gate: &File, held: &File, access: Access) -> Quick {
    use os::{flock, Op};
    match flock(gate, Op::NonBlockingLockExclusive) {
        Ok(true) => {}
        Ok(false) => return Quick::Wait { gate_held: false },
        Err(_) => return Quick::Unusable,
    }
    let mode = match access {
        Access::Write => Op::NonBlockingLockExclusive,
        Access::Read => Op::NonBlockingLockShared,
    };
    match flock(held, mode) {
        Ok(true) if flock(gate, Op::Unlock).is_ok() => Quick::Taken,
        Ok(false) => Quick::Wait { gate_held: true },
        _ => Quick::Unusable,
    }
}

#[cfg(not(unix))]
fn try_turn(_gate: &File, _held: &File, _access: Access) -> Quick {
    Quick::Unusable
}

/// Through the turnstile to the book lock. `None` when turns cannot be taken here
/// or the opener gave up meanwhile.
#[cfg(unix)]
fn take_turn(gate: File, gate_held: bool, held: File, access: Access, abandoned: &AtomicBool) -> Option<File> {
    use os::{flock, Op};
    if !gate_held {
        flock(&gate, Op::LockExclusive).ok()?;
    }
    if abandoned.load(Ordering::SeqCst) {
        return None;
    }
    let mode = match access {
        Access::Write => Op::LockExclusive,
        Access::Read => Op::LockShared,
    };
    flock(&held, mode).ok()?;
    // Closing the gate's only descriptor releases it to the next in line.
    drop(gate);
    Some(held).filter(|_| !abandoned.load(Ordering::SeqCst))
}

#[cfg(not(unix))]
fn take_turn(_gate: File, _gate_held: bool, _held: File, _access: Access, _abandoned: &AtomicBool) -> Option<File> {
    None
}

/// What a waiting opener waits for, said for a person.
#[cfg(unix)]
fn holder(book: &Path, access: Access) -> &'static str {
    use os::{flock, Op};
    let writing = File::open(sidecar(book, ".lock"))
        .ok()
        .and_then(|probe| flock(&probe, Op::NonBlockingLockShared).ok())
        .is_some_and(|shared| !shared);
    match (writing, access) {
        (true, _) => "another lorebank process is writing it",
        (false, Access::Write) => "other lorebank processes are reading it",
        (false, Access::Read) => "another lorebank process is waiting to write it",
    }
}

#[cfg(not(unix))]
fn holder(_book: &Path, _access: Access) -> &'static str {
    "another lorebank process has it open"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_said_as_they_were_likely_given() {
        let said = |millis| seconds(Duration::from_millis(millis));
        assert_eq!(said(0), "0 s");
        assert_eq!(said(60_000), "60 s");
        assert_eq!(said(90_500), "90 s");
        assert_eq!(said(1_500), "1.5 s");
        assert_eq!(said(300), "0.3 s");
        assert_eq!(said(250), "250 ms");
    }
}
