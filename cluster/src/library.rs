//! A library whose books are subjects of one replicated log: the
//! [`book::Origin`] of a [`book::Library`] whose files are copies.
//!
//! Book `NAME` of library `LIB` is the subject `lorebank.LIB.book.NAME`. Opening a
//! book the node has no file of creates an empty replica and fetches it; every
//! opened book gets a [`Replica`] as its commit gate and is brought up to date
//! before its first use; a book is created by publishing its first group with the
//! subject expected empty.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use book::library::check_name;
use book::{BookError, Origin};
use ledger::{GateRefusal, GateRefusalKind, Ledger, OpenError};
use ledger_model::{Hash32, Seq};

use crate::log::Log;
use crate::replica::{Policy, Replica, Synced};

/// The first bytes of a checkpoint in the checkpoint store.
pub const CHECKPOINT_MAGIC: &[u8; 8] = b"LBCKPT01";
/// blake3 `derive_key` context of a stored checkpoint's checksum.
pub const CHECKPOINT_CHECKSUM_CONTEXT: &str = "lorebank 2026-12-02 replica checkpoint v1";
/// Checkpoints a node keeps of a book (as `book`'s default).
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
    /// The revision of the stream's checkpoint this node took when it opened the
    /// book, if it took one.
    pub checkpoint_taken: Option<u64>,
}

/// The books of one library in one log, as one node has them open.
pub struct ClusterOrigin {
    library: String,
    log: Arc<dyn Log>,
    policy: Policy,
    open: Mutex<BTreeMap<String, Arc<Replica>>>,
    /// The newest checkpoint revision this node put in (or found in) the store, by book.
    shared: Mutex<BTreeMap<String, u64>>,
    /// The revision of the stream's checkpoint each open book was opened with.
    taken: Mutex<BTreeMap<String, u64>>,
    /// Whether a book of its own in the directory is published into the library
    /// (when the library has no book of its name) instead of refused.
    seed: bool,
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
            taken: Mutex::new(BTreeMap::new()),
            seed: false,
        })
    }

    /// Publishes books of their own found in the directory into the library when they
    /// are first opened, if the library has no book of that name (`--seed`).
    pub fn seeding(mut self, seed: bool) -> ClusterOrigin {
        self.seed = seed;
        self
    }

    /// Publishes book `name`, a book of its own at `ledger`, into the library, whose
    /// subject for it must be empty, and makes the file the library's copy. The
    /// book travels as it is stored: every record byte for byte, in groups that end
    /// at batch ends, then its blobs and documents.
    fn seed_book(&self, name: &str, ledger: &Ledger) -> Result<(), BookError> {
        let subject = self.subject_of(name);
        if self.log.next(&subject, 1).map_err(|error| unavailable(name, error))?.is_some() {
            return Err(BookError::Invalid(format!(
                "{} is a book of its own, and library {} already holds a book {name}: move the file out of the directory (the library's book is fetched in its place)",
                ledger.path().display(),
                self.library
            )));
        }
        let dir = ledger.path().parent().unwrap_or(Path::new("."));
        let staging = dir.join(format!(".{name}.seed-{}.archive", std::process::id()));
        let archive = (|| {
            ledger.export_archive(&staging, true).map_err(|error| BookError::Invalid(error.to_string()))?;
            let bytes = std::fs::read(&staging)
                .map_err(|error| BookError::Invalid(format!("{}: {error}", staging.display())))?;
            ledger::read_archive(&staging.display().to_string(), &bytes)
                .map_err(|error| BookError::Invalid(error.to_string()))
        })();
        let _ = std::fs::remove_file(&staging);
        let archive = archive?;
        let replica =
            Replica::new(name, &subject, Arc::clone(&self.log), self.policy, ledger::Head::EMPTY, Default::default());
        let mut position = ledger::ReplicaPosition::default();
        for group in seed_groups(&archive, self.policy.apply_bytes_max) {
            position = replica.publish(&group).map_err(book_error)?;
        }
        ledger.apply_replica(Vec::new(), position)?;
        Ok(())
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

    /// Notes that open book `name`'s subject has news (a prompt from the log); a
    /// book that is not open needs none.
    pub fn prompt(&self, name: &str) {
        if let Some(replica) = self.replica(name) {
            replica.prompt();
        }
    }

    /// Whether open book `name` should catch up before a write: prompted since its
    /// last catch-up began, or its writes stopped (a book that is not open is caught
    /// up when it opens).
    pub fn is_behind(&self, name: &str) -> bool {
        self.replica(name).is_some_and(|replica| replica.is_behind())
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
                    checkpoint_taken: lock(&self.taken).get(replica.book()).copied(),
                }
            })
            .collect()
    }

    fn replica_of(&self, name: &str, ledger: &Ledger) -> Result<Arc<Replica>, BookError> {
        let position = ledger.replica()?.ok_or_else(|| {
            BookError::Invalid(format!(
                "{} is a book of its own, not a copy of library {}'s book {name}: move it out of the library's directory, or bring it into the library with `lorebank serve --cluster … --seed` (docs/operations.md)",
                ledger.path().display(),
                self.library
            ))
        })?;
        let head = ledger.head()?;
        Ok(Arc::new(Replica::new(name, &self.subject_of(name), Arc::clone(&self.log), self.policy, head, position)))
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

/// A book's stored form as groups: its records in groups of about `bytes_max` that end
/// at batch ends, each with the snapshot index entries of its revisions, then its
/// blobs and documents in groups of their own.
fn seed_groups(archive: &ledger::Archive, bytes_max: usize) -> Vec<ledger::replica::Group> {
    use ledger::replica::Group;
    let mut groups = Vec::new();
    let mut group = Group::default();
    let mut head = ledger::Head::EMPTY;
    let mut n_bytes = 0usize;
    for (index, record) in archive.records.iter().enumerate() {
        let header = record
            .get(..ledger_model::record::HEADER_BYTES)
            .and_then(|bytes| bytes.try_into().ok())
            .and_then(|bytes| ledger_model::record::Header::from_bytes(bytes).ok());
        let Some(header) = header else { continue };
        n_bytes += record.len();
        group.records.push(record.clone());
        head = ledger::Head { seq: Seq(index as u64 + 1), hash: header.chain_hash() };
        // Records of format 1 carry no batch end: any of them may end a group.
        if n_bytes >= bytes_max && header.batch_end != Some(false) {
            groups.push(std::mem::replace(&mut group, Group { before: head, ..Group::default() }));
            n_bytes = 0;
        }
    }
    if !group.records.is_empty() {
        groups.push(std::mem::replace(&mut group, Group { before: head, ..Group::default() }));
    }
    for (snapshot, revision) in &archive.snapshots {
        let holder = groups.iter_mut().find(|group| {
            group.before.seq < *revision && revision.0 <= group.before.seq.0 + group.records.len() as u64
        });
        if let Some(holder) = holder {
            holder.snapshots.push((*snapshot, *revision));
        }
    }
    let stored = |bytes: &[u8]| bytes.get(32..).unwrap_or_default().to_vec();
    let mut n_bytes = 0usize;
    let flush = |group: &mut Group, n_bytes: &mut usize, groups: &mut Vec<Group>| {
        if !group.blobs.is_empty() || !group.documents.is_empty() {
            groups.push(std::mem::replace(group, Group { before: head, ..Group::default() }));
        }
        *n_bytes = 0;
    };
    for (id, bytes) in &archive.blobs {
        group.blobs.push((*id, stored(bytes)));
        n_bytes += bytes.len();
        if n_bytes >= bytes_max {
            flush(&mut group, &mut n_bytes, &mut groups);
        }
    }
    for (id, shelf, key, bytes) in &archive.documents {
        group.documents.push(ledger::Document { id: *id, bytes: stored(bytes), group: *shelf, key: key.clone() });
        n_bytes += bytes.len();
        if n_bytes >= bytes_max {
            flush(&mut group, &mut n_bytes, &mut groups);
        }
    }
    flush(&mut group, &mut n_bytes, &mut groups);
    groups
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
        if self.seed && ledger.replica()?.is_none() {
            self.seed_book(name, ledger)?;
        }
        let replica = self.replica_of(name, ledger)?;
        let position = ledger.replica()?.unwrap_or_default();
        replica.attach(ledger);
        lock(&self.open).insert(name.to_owned(), Arc::clone(&replica));
        // A copy the stream no longer holds is kept and read; its writes are refused.
        if replica.check_position(position).is_err() {
            return Ok(());
        }
        let before = ledger.head()?.seq;
        match replica.sync() {
            Ok(synced) if synced.head.seq.0 >= before.0 + CHECKPOINT_FETCH_EVENTS => {
                if let Ok(Some(revision)) = self.fetch_checkpoint(name, ledger) {
                    lock(&self.taken).insert(name.to_owned(), revision.0);
                }
            }
            // Reads go on at the revision the file has: a refused message or a log
            // out of reach is reported by the next write, status and catch-up.
            _ => {}
        }
        Ok(())
    }

    fn detach(&self, name: &str) {
        lock(&self.open).remove(name);
        lock(&self.taken).remove(name);
    }
}
