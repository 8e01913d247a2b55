//! The redb file: table layout, opening, reads and verification.
//!
//! Tables (see `docs/format.md`):
//!
//! * `events`: `u64` seq → record bytes (`header ‖ payload`, see
//!   `ledger_model::record`). Keys are dense from 1 to the head.
//! * `blobs`: content id (32 bytes) → checksum ‖ bytes: fold tables the config
//!   names. Written with the batch that first refers to them.
//! * `snapshots`: snapshot ID → first batch-end revision that had it. Derived from
//!   the log: records of format 2 mark batch ends, so it can be rebuilt.
//! * `cache`: snapshot ID → checksum ‖ frozen projection bytes. Derived data: may be
//!   dropped and rebuilt at any time.
//! * `receipts` (documents): document id → checksum ‖ bytes.
//! * `receipt_log` (document log): `u64` (dense from 1, arrival order) → document id.
//! * `chunks` (shelves): (group, key, document log position) → document id.
//! * `derived`: (set, key) → checksum ‖ bytes. Derived data a caller recomputes
//!   (`derived.rs`); created on the first write.
//!
//! The names of the last three are the on-disk layout of ledger format 1; the
//! ledger gives them no meaning (its callers decide what a document, a group and a
//! key are).
//! * `meta`: `&str` → bytes. `format` → ledger format (`u16` LE); `head` → head seq
//!   (`u64` LE) ‖ head chain hash (32 bytes), written in the same transaction as the
//!   events it covers.

use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use ledger_model::record::{self, RecordError};
use ledger_model::{Event, Hash32, NewEvent, Seq};
use redb::{
    Database, ReadOnlyDatabase, ReadTransaction, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition,
};

use crate::error::{io_context, is_damage, storage_io, AppendError, OpenError, Poison, ReadError, VerifyError};
use crate::replica::{CheckedGroup, CommitGate, ReplicaPosition};
use crate::turns::{self, Access, Patience, Turn};
use crate::verify::{self, Damage};
use crate::writer::{self, Appended, Attachments, Chore, Document, Reply, Request, Then};

pub(crate) const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");
pub(crate) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(crate) const BLOBS: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("blobs");
pub(crate) const SNAPSHOTS: TableDefinition<&[u8; 32], u64> = TableDefinition::new("snapshots");
pub(crate) const CACHE: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("cache");
// Documents, their arrival log and their shelves. The table names are the on-disk
// layout of ledger format 1 (they must not change); the ledger gives them no meaning.
pub(crate) const DOCUMENTS: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("receipts");
pub(crate) const DOCUMENT_LOG: TableDefinition<u64, &[u8; 32]> = TableDefinition::new("receipt_log");
pub(crate) const SHELVES: TableDefinition<(u32, &str, u64), &[u8; 32]> = TableDefinition::new("chunks");
pub(crate) const META_FORMAT: &str = "format";
/// blake3 `derive_key` context of the checksum stored in front of every blob and
/// cache entry.
pub const STORED_CHECKSUM_CONTEXT: &str = "lorebank 2026-11-29 stored bytes v1";

fn checksum(bytes: &[u8]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new_derive_key(STORED_CHECKSUM_CONTEXT);
    hasher.update(bytes);
    *hasher.finalize().as_bytes()
}

/// `checksum ‖ bytes`: how blobs and cache entries are stored.
pub(crate) fn blob_record(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + bytes.len());
    out.extend_from_slice(&checksum(bytes));
    out.extend_from_slice(bytes);
    out
}

/// Stores a cache entry in its own transaction.
pub(crate) fn put_cache(db: &Database, key: Hash32, bytes: &[u8]) -> Result<(), redb::Error> {
    let txn = db.begin_write()?;
    {
        let mut table = txn.open_table(CACHE)?;
        table.insert(&key.0, blob_record(bytes).as_slice())?;
    }
    txn.commit()?;
    Ok(())
}

/// The bytes of a stored blob or cache entry, if its checksum holds.
pub(crate) fn checked(stored: &[u8]) -> Option<&[u8]> {
    let (sum, bytes) = stored.split_at_checked(32)?;
    (checksum(bytes) == sum).then_some(bytes)
}
pub(crate) const META_HEAD: &str = "head";
/// The [`ReplicaPosition`] of a node's copy of a replicated book, written with every
/// group it commits; absent in a book of its own.
pub(crate) const META_REPLICA: &str = "replica";

/// Ledger format version written by this code: the table layout above.
pub const LEDGER_FORMAT: u16 = 1;

/// The last event of the log: its seq and chain hash. `Seq(0)` and the genesis hash
/// for an empty ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Seq of the last event.
    pub seq: Seq,
    /// Chain hash of the last event.
    pub hash: Hash32,
}

impl Default for Head {
    fn default() -> Head {
        Head::EMPTY
    }
}

impl Head {
    /// The head of an empty book.
    pub const EMPTY: Head = Head { seq: Seq::ZERO, hash: Hash32::GENESIS };

    pub(crate) fn to_bytes(self) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[..8].copy_from_slice(&self.seq.0.to_le_bytes());
        out[8..].copy_from_slice(&self.hash.0);
        out
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Head> {
        let seq = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
        let hash: [u8; 32] = bytes.get(8..)?.try_into().ok()?;
        Some(Head { seq: Seq(seq), hash: Hash32(hash) })
    }
}

/// What a successful [`Ledger::verify`] vouches for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyReport {
    /// Events checked.
    pub n_events: u64,
    /// The head the chain ends at.
    pub head: Head,
    /// Blobs checked.
    pub n_blobs: u64,
    /// Documents checked.
    pub n_documents: u64,
    /// Cache entries that failed their checksum: dropped (on a writable handle),
    /// rebuilt when needed, not damage to the book.
    pub n_cache_dropped: u64,
    /// Checkpoints whose checksum holds and that were taken on this log.
    pub n_checkpoints: u64,
    /// Checkpoints failing their checksum or taken on another log: dropped (on a
    /// writable handle), rewritten when due, not damage to the book.
    pub n_checkpoints_dropped: u64,
    /// Derived entries ([`Ledger::derived_write`]) whose checksum holds.
    pub n_derived: u64,
    /// Derived entries failing their checksum: dropped (on a writable handle) and
    /// recomputed by whoever computes them, not damage to the book.
    pub n_derived_dropped: u64,
}

/// The redb handle: read-write, or read-only (never writes a byte of the file).
pub(crate) enum Db {
    Write(Database),
    Read(ReadOnlyDatabase),
}

impl Db {
    pub(crate) fn begin_read(&self) -> Result<ReadTransaction, redb::TransactionError> {
        match self {
            Db::Write(db) => db.begin_read(),
            Db::Read(db) => db.begin_read(),
        }
    }

    /// The writable database, or the error a write to a read-only book gets.
    pub(crate) fn writable(&self) -> Result<&Database, ReadError> {
        match self {
            Db::Write(db) => Ok(db),
            Db::Read(_) => Err(ReadError::Io(io::Error::other(READ_ONLY))),
        }
    }
}

pub(crate) const READ_ONLY: &str = "the book is open read-only";
pub(crate) const WRITER_STOPPED: &str = "the writer thread has stopped";

pub(crate) struct Shared {
    pub(crate) db: Db,
    pub(crate) path: PathBuf,
    /// Set after a failed commit or detected corruption; appends are refused.
    pub(crate) poison: Mutex<Option<Poison>>,
    /// The commit gate of a replicated book, if one is set.
    pub(crate) gate: Mutex<Option<Arc<dyn CommitGate>>>,
    /// Cache entries queued for the writer and not yet filed or dropped.
    pub(crate) chores_pending: AtomicUsize,
}

impl Shared {
    /// Stops appends for `reason`; the first reason stays.
    pub(crate) fn poison(&self, reason: Poison) {
        let mut poison = self.poison.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        poison.get_or_insert(reason);
    }

    /// Damage detected in `what`: appends stop until the book is repaired.
    pub(crate) fn poison_damaged(&self, what: String) {
        self.poison(Poison::Damaged(what));
    }

    pub(crate) fn poisoned(&self) -> Option<Poison> {
        self.poison.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub(crate) fn gate(&self) -> Option<Arc<dyn CommitGate>> {
        self.gate.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

/// One book's event log. Cheap to share between threads by reference: every method
/// takes `&self`, and appends from many threads are group-committed by one writer
/// thread.
pub struct Ledger {
    pub(crate) shared: Arc<Shared>,
    requests: Option<Sender<Request>>,
    /// Work for the writer that no caller waits for (none on a read-only book).
    chores: Option<Sender<Chore>>,
    writer: Option<JoinHandle<()>>,
    /// This process's turn at the book (see `turns`); declared last so that it is
    /// released only after the database above is closed.
    turn: Option<Turn>,
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

fn open_error(path: &Path, error: redb::DatabaseError) -> OpenError {
    let path = display(path);
    match error {
        redb::DatabaseError::DatabaseAlreadyOpen => OpenError::InUse { path },
        // redb names a file without its magic number an I/O error; such a file is not a
        // book at all (a typo in --book, a text file), which says more than "damaged".
        other => {
            let error = redb::Error::from(other);
            let detail = error.to_string();
            if detail.contains("Not a redb database") {
                OpenError::NotALedger { path }
            } else if is_damage(&error) {
                OpenError::Corrupted { path, detail }
            } else {
                OpenError::Io { path, detail }
            }
        }
    }
}

/// Opens the redb file, turning a panic inside redb (which it raises on some damaged
/// pages while opening) into [`OpenError::Corrupted`].
fn guarded_open<T>(path: &Path, open: impl FnOnce() -> Result<T, redb::DatabaseError>) -> Result<T, OpenError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(open)) {
        Ok(opened) => opened.map_err(|error| open_error(path, error)),
        Err(payload) => Err(OpenError::Corrupted {
            path: display(path),
            detail: format!("its storage structure is damaged ({})", panic_text(payload.as_ref())),
        }),
    }
}

pub(crate) fn read_error(error: impl Into<redb::Error>) -> ReadError {
    let error = error.into();
    if is_damage(&error) {
        return ReadError::Damaged { object: "the book file".into(), detail: format!("storage: {error}") };
    }
    ReadError::Io(storage_io(error))
}

/// The message of a caught panic.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(text), _) => (*text).to_owned(),
        (_, Some(text)) => text.clone(),
        _ => "a panic in the storage layer".into(),
    }
}

/// Events a pipelined scan hands over at a time ([`Ledger::scan_pipelined`]).
pub const PIPELINE_BATCH_EVENTS: usize = 1_024;
/// Batches that may wait between the reading thread and the visitor.
pub const PIPELINE_BATCHES_IN_FLIGHT: usize = 4;
/// Shortest range [`Ledger::scan_pipelined`] reads on a second thread.
pub const PIPELINE_MIN_EVENTS: u64 = 4_096;

/// Checked records on their way from the reading thread to the one that decodes
/// them: the payloads back to back, and each record's header fields with where its
/// payload ends.
#[derive(Default)]
struct Batch {
    payloads: Vec<u8>,
    heads: Vec<(Seq, Hash32, Hash32, u16, Option<bool>, usize)>,
}

impl Batch {
    fn push(&mut self, checked: &record::Checked<'_>) {
        self.payloads.extend_from_slice(checked.payload);
        self.heads.push((
            checked.seq,
            checked.prev,
            checked.hash,
            checked.schema,
            checked.batch_end,
            self.payloads.len(),
        ));
    }

    fn records(&self) -> impl Iterator<Item = record::Checked<'_>> {
        let mut start = 0;
        self.heads.iter().map(move |&(seq, prev, hash, schema, batch_end, end)| {
            let payload = &self.payloads[start..end];
            start = end;
            record::Checked { seq, prev, hash, schema, batch_end, payload }
        })
    }

    fn clear(&mut self) {
        self.payloads.clear();
        self.heads.clear();
    }
}

/// The reading thread's result; its panic (which `guarded` already turns into an
/// error inside the scan) is passed on.
fn join_reader(reader: std::thread::ScopedJoinHandle<'_, Result<(), ReadError>>) -> Result<(), ReadError> {
    reader.join().unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

fn corrupted(seq: Seq, error: RecordError) -> ReadError {
    ReadError::Corrupted { seq, detail: error.to_string() }
}

/// Creates, in `txn`, every table of a book that is not there yet: the one list of
/// the layout's tables.
pub(crate) fn create_tables(txn: &redb::WriteTransaction) -> Result<(), redb::Error> {
    txn.open_table(META)?;
    txn.open_table(EVENTS)?;
    txn.open_table(BLOBS)?;
    txn.open_table(SNAPSHOTS)?;
    txn.open_table(CACHE)?;
    txn.open_table(DOCUMENTS)?;
    txn.open_table(DOCUMENT_LOG)?;
    txn.open_table(SHELVES)?;
    txn.open_table(crate::checkpoint::CHECKPOINTS)?;
    txn.open_table(crate::checkpoint::CHECKPOINT_HEADS)?;
    txn.open_table(crate::derived::DERIVED)?;
    Ok(())
}

/// Writes the layout of an empty book: the format, the empty head and every table.
fn create_empty_book(db: &Database) -> Result<(), redb::Error> {
    let txn = db.begin_write()?;
    {
        let mut meta = txn.open_table(META)?;
        meta.insert(META_FORMAT, LEDGER_FORMAT.to_le_bytes().as_slice())?;
        meta.insert(META_HEAD, Head::EMPTY.to_bytes().as_slice())?;
    }
    create_tables(&txn)?;
    txn.commit()?;
    Ok(())
}

/// A failure of the storage layer while a new book is written.
fn create_failure(path: &Path, error: redb::Error) -> OpenError {
    OpenError::Io { path: display(path), detail: error.to_string() }
}

/// Creates the file of a new, empty book at `path`. Fails if anything is already
/// there.
fn create_file(path: &Path) -> Result<Database, OpenError> {
    if path.exists() {
        return Err(OpenError::Exists { path: display(path) });
    }
    let db = Database::create(path).map_err(|error| open_error(path, error))?;
    create_empty_book(&db).map_err(|error| create_failure(path, error))?;
    Ok(db)
}

impl Ledger {
    /// Creates a new, empty book at `path`. Fails if anything is already there.
    pub fn create(path: &Path) -> Result<Ledger, OpenError> {
        let db = create_file(path)?;
        Ok(Ledger::start(db, path))
    }

    /// Creates a new, empty book at `path` that is a node's copy of a replicated
    /// book: a replica at log position 0, so that only groups of its
    /// library ([`Ledger::apply_replica`], or appends through a [`CommitGate`]) are
    /// ever written to it. Fails if anything is already there.
    pub fn create_replica(path: &Path) -> Result<Ledger, OpenError> {
        let db = create_file(path)?;
        let marked = (|| -> Result<(), redb::Error> {
            let txn = db.begin_write()?;
            txn.open_table(META)?.insert(META_REPLICA, ReplicaPosition::default().to_bytes().as_slice())?;
            txn.commit()?;
            Ok(())
        })();
        marked.map_err(|error| create_failure(path, error))?;
        Ok(Ledger::start(db, path))
    }

    /// Opens an existing book. Checks the format and the last event against the
    /// stored head (a cheap check; [`Ledger::verify`] checks everything).
    pub fn open(path: &Path) -> Result<Ledger, OpenError> {
        if !path.exists() {
            return Err(OpenError::Missing { path: display(path) });
        }
        let db = guarded_open(path, || Database::open(path))?;
        Ledger::checked_open(Ledger::start(db, path))
    }

    /// Opens an existing book for reading only: the file is opened read-only and
    /// never written, so a book on read-only media or with mode 444 can be read,
    /// shown and verified. Appends and cache writes fail; reads behave as with
    /// [`Ledger::open`]. A book left unclean by a crash needs one read-write open to
    /// recover first ([`OpenError::NeedsRecovery`]).
    pub fn open_read_only(path: &Path) -> Result<Ledger, OpenError> {
        if !path.exists() {
            return Err(OpenError::Missing { path: display(path) });
        }
        let db = guarded_open(path, || match ReadOnlyDatabase::open(path) {
            Err(redb::DatabaseError::RepairAborted) => Ok(Err(OpenError::NeedsRecovery { path: display(path) })),
            other => other.map(Ok),
        })??;
        let shared = Arc::new(Shared {
            db: Db::Read(db),
            path: path.to_owned(),
            poison: Mutex::new(None),
            gate: Mutex::new(None),
            chores_pending: AtomicUsize::new(0),
        });
        Ledger::checked_open(Ledger { shared, requests: None, chores: None, writer: None, turn: None })
    }

    /// Opens an existing book like [`Ledger::open`], after waiting its turn: other
    /// lorebank processes that have the book open, or came first, go first, and this
    /// open waits alone (see the lock files in `docs/format.md`). Fails with
    /// [`OpenError::Busy`] when `patience` runs out.
    pub fn open_in_turn(path: &Path, patience: &mut Patience) -> Result<Ledger, OpenError> {
        Ledger::in_turn(path, Access::Write, patience, Ledger::open)
    }

    /// Opens an existing book like [`Ledger::open_read_only`], after waiting its turn
    /// like [`Ledger::open_in_turn`], but shared with the readers next to it in the
    /// line. Where the lock files cannot be created (a read-only directory) it opens
    /// without a turn.
    pub fn open_read_only_in_turn(path: &Path, patience: &mut Patience) -> Result<Ledger, OpenError> {
        Ledger::in_turn(path, Access::Read, patience, Ledger::open_read_only)
    }

    fn in_turn(
        path: &Path,
        access: Access,
        patience: &mut Patience,
        open: fn(&Path) -> Result<Ledger, OpenError>,
    ) -> Result<Ledger, OpenError> {
        if !path.exists() {
            return Err(OpenError::Missing { path: display(path) });
        }
        let turn = turns::wait_turn(path, access, patience)?;
        loop {
            // With a turn, the book is still open only while the process before this one
            // finishes closing, or in a process that takes no turn.
            match open(path) {
                Err(OpenError::InUse { .. }) => patience.pause(path)?,
                other => {
                    let mut ledger = other?;
                    ledger.turn = turn;
                    return Ok(ledger);
                }
            }
        }
    }

    /// Whether this handle was opened with [`Ledger::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        matches!(self.shared.db, Db::Read(_))
    }

    fn checked_open(ledger: Ledger) -> Result<Ledger, OpenError> {
        let path = &ledger.shared.path;
        let format = ledger.meta(META_FORMAT).map_err(|error| ledger.open_failure(error))?;
        let format = match format.as_deref() {
            Some([low, high]) => u16::from_le_bytes([*low, *high]),
            _ => return Err(OpenError::NotALedger { path: display(path) }),
        };
        if format != LEDGER_FORMAT {
            return Err(OpenError::UnsupportedFormat { path: display(path), format });
        }
        let tail = ledger
            .guarded(|| ledger.shared.db.begin_read().map_err(read_error).and_then(|txn| ledger.check_tail(&txn)));
        tail.map_err(|error| ledger.open_failure(error))?;
        Ok(ledger)
    }

    fn open_failure(&self, error: ReadError) -> OpenError {
        let path = display(&self.shared.path);
        match error {
            ReadError::Damaged { detail, .. } if detail.contains("'meta' does not exist") => {
                OpenError::NotALedger { path }
            }
            ReadError::Io(error) => OpenError::Io { path, detail: error.to_string() },
            other => OpenError::Corrupted { path, detail: other.to_string() },
        }
    }

    fn start(db: Database, path: &Path) -> Ledger {
        let shared = Arc::new(Shared {
            db: Db::Write(db),
            path: path.to_owned(),
            poison: Mutex::new(None),
            gate: Mutex::new(None),
            chores_pending: AtomicUsize::new(0),
        });
        let (requests, chores, writer) = writer::spawn(Arc::clone(&shared));
        Ledger { shared, requests: Some(requests), chores: Some(chores), writer: Some(writer), turn: None }
    }

    /// The path of the book file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    fn meta(&self, key: &str) -> Result<Option<Vec<u8>>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(META).map_err(read_error)?;
            let value = table.get(key).map_err(read_error)?;
            Ok(value.map(|guard| guard.value().to_vec()))
        })
    }

    /// Where this copy of a replicated book is in its library's log: the position
    /// and id of the last group it holds. `None` for a book of its own.
    pub fn replica(&self) -> Result<Option<ReplicaPosition>, ReadError> {
        match self.meta(META_REPLICA)? {
            None => Ok(None),
            Some(bytes) => ReplicaPosition::from_bytes(&bytes).map(Some).ok_or_else(|| ReadError::Damaged {
                object: "meta `replica`".into(),
                detail: format!("{} bytes, expected 40", bytes.len()),
            }),
        }
    }

    /// Sets (or, with `None`, removes) the commit gate: from now on every group the
    /// writer commits is first shown to it ([`CommitGate`]). A replica without a gate
    /// refuses every append ([`AppendError::Replica`]).
    pub fn set_gate(&self, gate: Option<Arc<dyn CommitGate>>) {
        *self.shared.gate.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = gate;
    }

    /// Stores `groups` (consecutive, the first starting at the head) of a replicated
    /// book, in one durable transaction with `position`, without the commit gate: they
    /// are already in the library's log. Every record was opened and linked when the
    /// group was checked; here the first group must start at the head (otherwise
    /// [`AppendError::NotAtHead`], and nothing is written). Returns the new head.
    pub fn apply_replica(&self, groups: Vec<CheckedGroup>, position: ReplicaPosition) -> Result<Head, AppendError> {
        if let Some(reason) = self.shared.poisoned() {
            return Err(AppendError::refused(reason));
        }
        let (reply, answer) = crossbeam_channel::bounded(1);
        let request = Request {
            payloads: Default::default(),
            n_events: 0,
            rest: None,
            expected: None,
            attachments: Attachments::default(),
            replica: Some(Box::new(writer::ReplicaApply { groups, position })),
            reply: Reply::Wait(reply),
        };
        self.send(request, &answer).map(|appended| Head { seq: appended.last, hash: appended.hash })
    }

    /// The current head.
    pub fn head(&self) -> Result<Head, ReadError> {
        let bytes = self.meta(META_HEAD)?;
        bytes
            .as_deref()
            .and_then(Head::from_bytes)
            .ok_or_else(|| self.detected(Seq::ZERO, "meta `head` is missing or malformed"))
    }

    /// Runs a read, turning a panic inside redb (which it raises on some damaged
    /// B-tree pages) into damage of the book file: bad input never panics.
    pub(crate) fn guarded<T, E: From<ReadError>>(&self, read: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|payload| {
            let detail = format!("its storage structure is damaged ({})", panic_text(payload.as_ref()));
            self.shared.poison_damaged(format!("the book file: {detail}"));
            Err(ReadError::Damaged { object: "the book file".into(), detail }.into())
        })
    }

    fn detected(&self, seq: Seq, detail: &str) -> ReadError {
        self.shared.poison_damaged(format!("event {seq}: {detail}"));
        ReadError::Corrupted { seq, detail: detail.to_owned() }
    }

    fn head_in(&self, txn: &ReadTransaction) -> Result<Head, ReadError> {
        let meta = txn.open_table(META).map_err(read_error)?;
        let head = meta.get(META_HEAD).map_err(read_error)?.and_then(|guard| Head::from_bytes(guard.value()));
        head.ok_or_else(|| self.detected(Seq::ZERO, "meta `head` is missing or malformed"))
    }

    /// The stored head matches the last stored event, read in one transaction (an
    /// append between two reads must not look like damage).
    fn check_tail(&self, txn: &ReadTransaction) -> Result<(), ReadError> {
        let head = self.head_in(txn)?;
        let table = txn.open_table(EVENTS).map_err(read_error)?;
        let last = table.last().map_err(read_error)?.map(|(key, _)| key.value()).unwrap_or(0);
        if last != head.seq.0 {
            return Err(self.detected(Seq(last), &format!("last stored event is {last}, but the head is {}", head.seq)));
        }
        if head.seq == Seq::ZERO {
            return Ok(());
        }
        let guard = table.get(head.seq.0).map_err(read_error)?.ok_or_else(|| self.detected(head.seq, "missing"))?;
        let event =
            record::open(head.seq, guard.value()).map_err(|error| self.detected(head.seq, &error.to_string()))?;
        if event.hash != head.hash {
            return Err(
                self.detected(head.seq, &format!("chain hash {} differs from the head's {}", event.hash, head.hash))
            );
        }
        Ok(())
    }

    /// The event at `seq`, with its payload hash checked (not its link to the
    /// previous event: [`Ledger::scan`] checks links).
    pub fn get(&self, seq: Seq) -> Result<Event, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(EVENTS).map_err(read_error)?;
            let Some(guard) = table.get(seq.0).map_err(read_error)? else {
                drop(table);
                return Err(ReadError::NotFound { seq, head: self.head()?.seq });
            };
            record::open(seq, guard.value()).map_err(|error| {
                self.shared.poison_damaged(format!("event {seq}: {error}"));
                corrupted(seq, error)
            })
        })
    }

    /// Calls `visit` with events `from ..= to` in order (clamped to the head), checking
    /// every payload hash and every chain link on the way, including the link into
    /// `from` and, when the walk reaches the head, the head hash. Stops early when
    /// `visit` breaks.
    pub fn scan(&self, from: Seq, to: Seq, mut visit: impl FnMut(Event) -> ControlFlow<()>) -> Result<(), ReadError> {
        let txn = self.shared.db.begin_read().map_err(read_error)?;
        self.scan_in(&txn, from, to, |event, _| visit(event))
    }

    /// [`Ledger::scan`], also telling `visit` whether each event ends its batch:
    /// `Some` for events of record format 2, `None` for format 1 (which did not
    /// record batch boundaries; the snapshot index keeps those books' boundaries).
    pub fn scan_batches(
        &self,
        from: Seq,
        to: Seq,
        visit: impl FnMut(Event, Option<bool>) -> ControlFlow<()>,
    ) -> Result<(), ReadError> {
        let txn = self.shared.db.begin_read().map_err(read_error)?;
        self.scan_in(&txn, from, to, visit)
    }

    /// [`Ledger::scan_batches`] on two threads: a reading thread walks the log in
    /// one read transaction, checking every record's header, payload hash and chain
    /// link exactly as [`Ledger::scan`] does, and hands the checked payloads, in
    /// batches of [`PIPELINE_BATCH_EVENTS`] (at most [`PIPELINE_BATCHES_IN_FLIGHT`]
    /// batches waiting), to the caller's thread, which decodes each strictly and
    /// passes it to `visit`. Reading and checking one batch overlaps with decoding
    /// and visiting the one before. The events are decoded by the thread that keeps
    /// or frees their strings: a fold whose frees landed in the reading thread's
    /// allocator arena ran about as long as its two halves one after the other.
    ///
    /// `visit` sees the same events in the same order, and the result is the same, as
    /// with [`Ledger::scan_batches`]: on damage, `visit` has seen every event before
    /// the damaged one, and the error names the damaged event (a payload that does
    /// not decode is named before any damage the reader found after it; the ledger,
    /// which refuses appends from then on, may name either). Ranges shorter than
    /// [`PIPELINE_MIN_EVENTS`] are scanned on the caller's thread (a thread costs
    /// more than it saves there). When `visit` stops early the reader has read at
    /// most a few batches ahead; damage it found there is not reported (the ledger,
    /// having detected it, still refuses appends).
    pub fn scan_pipelined(
        &self,
        from: Seq,
        to: Seq,
        mut visit: impl FnMut(Event, Option<bool>) -> ControlFlow<()>,
    ) -> Result<(), ReadError> {
        let txn = self.shared.db.begin_read().map_err(read_error)?;
        let head = self.guarded(|| self.head_in(&txn))?;
        let n_events = to.0.min(head.seq.0).saturating_sub(from.0.max(1)).saturating_add(1);
        if n_events < PIPELINE_MIN_EVENTS {
            return self.scan_in(&txn, from, to, visit);
        }
        let (full, received) = crossbeam_channel::bounded::<Batch>(PIPELINE_BATCHES_IN_FLIGHT);
        // Emptied batches go back to the reader, so their buffers are reused.
        let (emptied, reusable) = crossbeam_channel::bounded::<Batch>(PIPELINE_BATCHES_IN_FLIGHT + 1);
        std::thread::scope(|scope| {
            let reader = std::thread::Builder::new()
                .name("lorebank-scan".into())
                .spawn_scoped(scope, move || {
                    let mut batch = Batch::default();
                    let scanned = self.scan_checked_in(&txn, from, to, |checked| {
                        batch.push(&checked);
                        if batch.heads.len() < PIPELINE_BATCH_EVENTS {
                            return ControlFlow::Continue(());
                        }
                        let next = reusable.try_recv().unwrap_or_default();
                        match full.send(std::mem::replace(&mut batch, next)) {
                            Ok(()) => ControlFlow::Continue(()),
                            // The visitor stopped: nothing more to read.
                            Err(_) => ControlFlow::Break(()),
                        }
                    });
                    // The events before a damaged one are visited, as `scan` visits them.
                    if !batch.heads.is_empty() {
                        let _ = full.send(batch);
                    }
                    scanned
                })
                .map_err(|error| ReadError::Io(io_context("cannot start the reading thread", error)))?;
            for mut batch in &received {
                for checked in batch.records() {
                    // Decoded here, so the event's strings are allocated by the thread
                    // that keeps or frees them.
                    let event = match checked.decode() {
                        Ok(event) => event,
                        Err(error) => {
                            // Damage the reader had not reached yet comes first.
                            drop(received);
                            let _ = join_reader(reader);
                            return Err(self.detected(checked.seq, &error.to_string()));
                        }
                    };
                    if visit(event, checked.batch_end).is_break() {
                        // As with `scan`, stopping early is not a failure, whatever
                        // the reader found in the batches it read ahead.
                        drop(received);
                        return join_reader(reader).or(Ok(()));
                    }
                }
                batch.clear();
                let _ = emptied.try_send(batch);
            }
            join_reader(reader)
        })
    }

    fn scan_in(
        &self,
        txn: &ReadTransaction,
        from: Seq,
        to: Seq,
        mut visit: impl FnMut(Event, Option<bool>) -> ControlFlow<()>,
    ) -> Result<(), ReadError> {
        let mut damaged = None;
        self.scan_checked_in(txn, from, to, |checked| match checked.decode() {
            Ok(event) => visit(event, checked.batch_end),
            Err(error) => {
                damaged = Some(self.detected(checked.seq, &error.to_string()));
                ControlFlow::Break(())
            }
        })?;
        damaged.map_or(Ok(()), Err)
    }

    /// The walk of [`Ledger::scan`] without decoding: every record in `from ..= to`
    /// checked ([`record::check`]) and linked to the one before, in order, then the
    /// head's chain hash. `visit` decodes, or hands the record to a thread that does.
    fn scan_checked_in(
        &self,
        txn: &ReadTransaction,
        from: Seq,
        to: Seq,
        mut visit: impl FnMut(record::Checked<'_>) -> ControlFlow<()>,
    ) -> Result<(), ReadError> {
        self.guarded(|| {
            let head = self.head_in(txn)?;
            let from = Seq(from.0.max(1));
            let to = Seq(to.0.min(head.seq.0));
            if from > to {
                return Ok(());
            }
            let table = txn.open_table(EVENTS).map_err(read_error)?;
            let mut prev_hash = if from.0 == 1 {
                Hash32::GENESIS
            } else {
                let before = Seq(from.0 - 1);
                let guard = table
                    .get(before.0)
                    .map_err(read_error)?
                    .ok_or_else(|| self.detected(before, "missing below the head"))?;
                record::open(before, guard.value()).map_err(|error| self.detected(before, &error.to_string()))?.hash
            };
            let mut expected = from;
            for entry in table.range(from.0..=to.0).map_err(read_error)? {
                let (key, value) = entry.map_err(read_error)?;
                let seq = Seq(key.value());
                if seq != expected {
                    return Err(self.detected(expected, "missing below the head (torn write)"));
                }
                let checked =
                    record::check(seq, value.value()).map_err(|error| self.detected(seq, &error.to_string()))?;
                if checked.prev != prev_hash {
                    return Err(self.detected(
                        seq,
                        &format!(
                            "broken link: prev is {}, but event {} hashes to {}",
                            checked.prev,
                            seq.0 - 1,
                            prev_hash
                        ),
                    ));
                }
                prev_hash = checked.hash;
                expected = seq.next();
                if visit(checked).is_break() {
                    return Ok(());
                }
            }
            if expected <= to {
                return Err(self.detected(expected, "missing below the head (torn write)"));
            }
            if to == head.seq && prev_hash != head.hash {
                return Err(self.detected(to, &format!("chain hash {prev_hash} differs from the head's {}", head.hash)));
            }
            Ok(())
        })
    }

    /// Events `from ..= to` (clamped to the head), checked as in [`Ledger::scan`].
    pub fn events(&self, from: Seq, to: Seq) -> Result<Vec<Event>, ReadError> {
        let mut out = Vec::new();
        self.scan(from, to, |event| {
            out.push(event);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// Checks every stored object in one consistent read transaction (an append
    /// landing meanwhile is not seen, and never looks like damage): the whole chain
    /// (every record decodes strictly, every payload hash and link matches, seqs are
    /// dense from 1 to the head, nothing past the head, the head hash is the last
    /// event's), then every blob and document against its checksum, the document
    /// log and the shelves against the documents, and the snapshot index against the
    /// head.
    /// Reports the first damaged object by name.
    ///
    /// Cache entries that fail their checksum are derived data, not damage: they are
    /// listed in [`VerifyReport::n_cache_dropped`] and, on a writable handle, deleted
    /// (they are rebuilt when next needed). So are checkpoints and derived entries
    /// that fail theirs.
    ///
    /// Unnecessary for correctness of ordinary use (reads check what they touch, and
    /// opening checks the tail); run it after a crash, a copy between machines, or
    /// any doubt. `Ok` means every stored byte is what was written. `Corrupted` or
    /// `Damaged` means the book must not be trusted; the ledger refuses appends from
    /// then on.
    pub fn verify(&self) -> Result<VerifyReport, VerifyError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(|e| VerifyError::from(read_error(e)))?;
            self.check_tail(&txn)?;
            let mut n_events = 0u64;
            self.scan_in(&txn, Seq(1), Seq(u64::MAX), |_, _| {
                n_events += 1;
                ControlFlow::Continue(())
            })?;
            let head = self.head_in(&txn)?;
            let table = txn.open_table(EVENTS).map_err(|e| VerifyError::from(read_error(e)))?;
            let n_stored = table.len().map_err(|e| VerifyError::from(read_error(e)))?;
            if n_stored != n_events || n_events != head.seq.0 {
                self.shared.poison_damaged("stored events do not match the head".into());
                return Err(VerifyError::Corrupted {
                    seq: head.seq,
                    detail: format!("{n_stored} events stored, {n_events} on the chain, head {}", head.seq),
                });
            }
            let objects = verify::objects(&txn, head.seq).map_err(|e| VerifyError::from(read_error(e)))?;
            if let Some(Damage { object, detail }) = objects.damage {
                self.shared.poison_damaged(format!("{object}: {detail}"));
                return Err(VerifyError::Damaged { object, detail });
            }
            let checkpoints = crate::checkpoint::check_all(&txn)?;
            let derived = crate::derived::check_all(&txn)?;
            drop(table);
            drop(txn);
            let n_cache_dropped = objects.bad_cache.len() as u64;
            if let Db::Write(db) = &self.shared.db {
                if !objects.bad_cache.is_empty() {
                    verify::drop_cache(db, &objects.bad_cache).map_err(|e| VerifyError::from(read_error(e)))?;
                }
            }
            if !checkpoints.bad.is_empty() && !self.is_read_only() {
                self.drop_checkpoints(&checkpoints.bad)?;
            }
            if !derived.bad.is_empty() {
                self.drop_derived(&derived.bad)?;
            }
            Ok(VerifyReport {
                n_events,
                head,
                n_blobs: objects.n_blobs,
                n_documents: objects.n_documents,
                n_cache_dropped,
                n_checkpoints: checkpoints.n_good,
                n_checkpoints_dropped: checkpoints.bad.len() as u64,
                n_derived: derived.n_good,
                n_derived_dropped: derived.bad.len() as u64,
            })
        })
    }

    /// Appends `batch` atomically: all events commit, durably, or none do. With
    /// `expected_head: Some(seq)`, fails with [`AppendError::Conflict`] unless the head
    /// is `seq` when the batch's turn comes (optimistic concurrency). Concurrent calls
    /// are group-committed: several batches, one durable commit, each batch's
    /// expected head checked in arrival order.
    pub fn append(&self, batch: &[NewEvent], expected_head: Option<Seq>) -> Result<Appended, AppendError> {
        self.append_with(batch, expected_head, Attachments::default())
    }

    /// [`Ledger::append`], committing `attachments` in the same transaction.
    pub fn append_with(
        &self,
        batch: &[NewEvent],
        expected_head: Option<Seq>,
        attachments: Attachments,
    ) -> Result<Appended, AppendError> {
        if !writer::streams(batch) {
            let payloads = writer::encode_batch(batch)?;
            for document in &attachments.documents {
                writer::check_document(document)?;
            }
            if let Some(reason) = self.shared.poisoned() {
                return Err(AppendError::refused(reason));
            }
            let (reply, answer) = crossbeam_channel::bounded(1);
            let request = Request {
                payloads,
                n_events: batch.len(),
                rest: None,
                expected: expected_head,
                attachments,
                replica: None,
                reply: Reply::Wait(reply),
            };
            return self.send(request, &answer);
        }
        // A long batch goes to the writer part by part, so that sealing and inserting
        // one part overlaps with encoding and checking the next.
        let mut n_bytes = 0;
        let payloads = writer::first_part(batch, &mut n_bytes)?;
        for document in &attachments.documents {
            writer::check_document(document)?;
        }
        if let Some(reason) = self.shared.poisoned() {
            return Err(AppendError::refused(reason));
        }
        let (reply, answer) = crossbeam_channel::bounded(1);
        let (parts, rest) = crossbeam_channel::unbounded();
        let request = Request {
            payloads,
            n_events: batch.len(),
            rest: Some(rest),
            expected: expected_head,
            attachments,
            replica: None,
            reply: Reply::Wait(reply),
        };
        self.queue(request)?;
        writer::stream_rest(batch, n_bytes, &parts);
        drop(parts);
        Self::answer(&answer)
    }
}

impl Ledger {
    /// Files documents (and blobs, such as texts they refer to) through the writer
    /// thread: group-committed with whatever else is queued. Each new document is
    /// logged in arrival order and filed under its shelf (`group`, `key`); a
    /// document already stored is left as it is (and not filed again).
    pub fn file_documents(&self, documents: Vec<Document>, blobs: Vec<(Hash32, Vec<u8>)>) -> Result<(), AppendError> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.queue(self.filing(documents, blobs, Reply::Wait(reply))?)?;
        Self::answer(&answer).map(|_| ())
    }

    /// [`Ledger::file_documents`] without waiting: `then` gets the answer on the
    /// writer thread once the documents are durable (or refused), so it must be
    /// quick (an async task's wake-up), and it is called exactly once (with the
    /// error a waiting caller would get if the writer stops first). What is refused
    /// before anything is queued (a bad document, a poisoned or read-only ledger) is
    /// returned here, and `then` is never called.
    pub fn file_documents_then(
        &self,
        documents: Vec<Document>,
        blobs: Vec<(Hash32, Vec<u8>)>,
        then: impl FnOnce(Result<(), AppendError>) + Send + 'static,
    ) -> Result<(), AppendError> {
        let reply = Reply::Then(Then::new(move |answer: Result<Appended, AppendError>| then(answer.map(|_| ()))));
        self.queue(self.filing(documents, blobs, reply)?)
    }

    /// The writer's request to file `documents` and `blobs`, checked.
    /// A refusal disarms `reply`: the caller gets it from this call.
    fn filing(
        &self,
        documents: Vec<Document>,
        blobs: Vec<(Hash32, Vec<u8>)>,
        mut reply: Reply,
    ) -> Result<Request, AppendError> {
        let checked =
            documents.iter().try_for_each(writer::check_document).and_then(|()| match self.shared.poisoned() {
                Some(reason) => Err(AppendError::refused(reason)),
                None => Ok(()),
            });
        if let Err(refused) = checked {
            reply.disarm();
            return Err(refused);
        }
        let attachments = Attachments { blobs, snapshot: None, documents };
        Ok(Request {
            payloads: Default::default(),
            n_events: 0,
            rest: None,
            expected: None,
            attachments,
            replica: None,
            reply,
        })
    }

    /// Queues a request for the writer thread and waits for its answer.
    fn send(
        &self,
        request: Request,
        answer: &crossbeam_channel::Receiver<Result<Appended, AppendError>>,
    ) -> Result<Appended, AppendError> {
        self.queue(request)?;
        Self::answer(answer)
    }

    /// Queues a request for the writer thread. A request it cannot queue is
    /// answered by the error returned here, not through its reply.
    fn queue(&self, mut request: Request) -> Result<(), AppendError> {
        if self.is_read_only() {
            request.reply.disarm();
            return Err(AppendError::Io(io::Error::other(READ_ONLY)));
        }
        let unsent = match self.requests.as_ref() {
            Some(requests) => requests.send(request).err().map(|unsent| unsent.0),
            None => Some(request),
        };
        if let Some(mut request) = unsent {
            request.reply.disarm();
            return Err(AppendError::Io(io::Error::other(WRITER_STOPPED)));
        }
        Ok(())
    }

    /// The writer's answer to a queued request.
    fn answer(answer: &crossbeam_channel::Receiver<Result<Appended, AppendError>>) -> Result<Appended, AppendError> {
        answer.recv().unwrap_or_else(|_| Err(AppendError::Io(io::Error::other(WRITER_STOPPED))))
    }

    /// A stored document's bytes, checksum verified; `None` if absent.
    pub fn document(&self, id: Hash32) -> Result<Option<Vec<u8>>, ReadError> {
        self.checked_entry(DOCUMENTS, id, "document")
    }

    /// An entry of a `checksum ‖ bytes` table; a failed checksum is corruption.
    fn checked_entry(
        &self,
        table: TableDefinition<&[u8; 32], &[u8]>,
        id: Hash32,
        what: &str,
    ) -> Result<Option<Vec<u8>>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(table).map_err(read_error)?;
            let Some(guard) = table.get(&id.0).map_err(read_error)? else { return Ok(None) };
            match checked(guard.value()) {
                Some(bytes) => Ok(Some(bytes.to_vec())),
                None => {
                    let object = format!("{what} {id}");
                    self.shared.poison_damaged(format!("{object}: fails its checksum"));
                    Err(ReadError::Damaged { object, detail: "fails its checksum".into() })
                }
            }
        })
    }

    /// Document ids whose hex form starts with `prefix` (at most `limit` of them).
    pub fn documents_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<Hash32>, ReadError> {
        self.guarded(|| {
            let prefix = prefix.to_ascii_lowercase();
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(DOCUMENTS).map_err(read_error)?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(read_error)? {
                let (key, _) = entry.map_err(read_error)?;
                let id = Hash32(*key.value());
                if id.to_hex().starts_with(&prefix) {
                    out.push(id);
                    if out.len() >= limit {
                        break;
                    }
                }
            }
            Ok(out)
        })
    }

    /// Every filed document of `group` (all groups when `None`):
    /// (group, key, arrival position, document id), by group, key, then arrival
    /// order.
    pub fn filed(&self, group: Option<u32>) -> Result<Vec<(u32, String, u64, Hash32)>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(SHELVES).map_err(read_error)?;
            let mut out = Vec::new();
            let entries = match group {
                Some(group) => table.range((group, "", 0)..).map_err(read_error)?,
                None => table.iter().map_err(read_error)?,
            };
            for entry in entries {
                let (key, value) = entry.map_err(read_error)?;
                let (entry_group, shelf_key, position) = key.value();
                if group.is_some_and(|group| group != entry_group) {
                    break;
                }
                out.push((entry_group, shelf_key.to_owned(), position, Hash32(*value.value())));
            }
            Ok(out)
        })
    }

    /// A stored blob by content id, its checksum verified; `None` if absent.
    pub fn blob(&self, id: Hash32) -> Result<Option<Vec<u8>>, ReadError> {
        self.checked_entry(BLOBS, id, "blob")
    }

    /// The first batch-end revision whose state had snapshot `id`, if recorded.
    pub fn snapshot_revision(&self, id: Hash32) -> Result<Option<Seq>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(SNAPSHOTS).map_err(read_error)?;
            Ok(table.get(&id.0).map_err(read_error)?.map(|guard| Seq(guard.value())))
        })
    }

    /// Every entry of the snapshot index: (snapshot ID, first batch-end revision), by
    /// snapshot ID.
    pub fn snapshot_index(&self) -> Result<Vec<(Hash32, Seq)>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(SNAPSHOTS).map_err(read_error)?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(read_error)? {
                let (key, value) = entry.map_err(read_error)?;
                out.push((Hash32(*key.value()), Seq(value.value())));
            }
            Ok(out)
        })
    }

    /// Records `revision` as the first revision with snapshot `id`, unless one is
    /// already recorded. Used when rebuilding the index.
    pub fn index_snapshot(&self, id: Hash32, revision: Seq) -> Result<(), ReadError> {
        self.index_snapshots(&[(id, revision)])
    }

    /// [`Ledger::index_snapshot`] for many entries, in one transaction.
    pub fn index_snapshots(&self, entries: &[(Hash32, Seq)]) -> Result<(), ReadError> {
        let txn = self.shared.db.writable()?.begin_write().map_err(read_error)?;
        {
            let mut table = txn.open_table(SNAPSHOTS).map_err(read_error)?;
            for (id, revision) in entries {
                let known = table.get(&id.0).map_err(read_error)?.map(|guard| guard.value());
                if known.is_none_or(|known| revision.0 < known) {
                    table.insert(&id.0, revision.0).map_err(read_error)?;
                }
            }
        }
        txn.commit().map_err(read_error)
    }

    /// A cache entry. `Ok(None)` when absent or when its checksum fails (a damaged
    /// cache entry is dropped and rebuilt, never trusted).
    pub fn cache_get(&self, key: Hash32) -> Result<Option<Vec<u8>>, ReadError> {
        self.settle();
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let table = txn.open_table(CACHE).map_err(read_error)?;
            let Some(guard) = table.get(&key.0).map_err(read_error)? else { return Ok(None) };
            Ok(checked(guard.value()).map(<[u8]>::to_vec))
        })
    }

    /// Stores a cache entry (derived data; not part of the chain).
    pub fn cache_put(&self, key: Hash32, bytes: &[u8]) -> Result<(), ReadError> {
        put_cache(self.shared.db.writable()?, key, bytes).map_err(read_error)
    }

    /// Stores a cache entry whose bytes `bytes` makes, both on the ledger's writer
    /// thread, so that the caller waits for neither: the writer does it when no append
    /// waits (or after the group it is committing), and at the latest when the book
    /// closes. Readers of the cache ([`Ledger::cache_get`], [`Ledger::cache_clear`])
    /// first wait for the entries queued before them, so a reader never misses an
    /// entry its own thread queued.
    ///
    /// Returns whether the entry was queued: not on a read-only book, nor behind
    /// [`CACHE_PUTS_QUEUED_MAX`](ledger_model::limits::CACHE_PUTS_QUEUED_MAX) others. An entry is derived data: one that is not
    /// queued, or that cannot be filed (the book stopped appends, the disk is full),
    /// is dropped, and built again when it is next needed.
    pub fn cache_put_later(&self, key: Hash32, bytes: impl FnOnce() -> Vec<u8> + Send + 'static) -> bool {
        let Some(chores) = &self.chores else { return false };
        self.shared.chores_pending.fetch_add(1, Ordering::AcqRel);
        let queued = chores.try_send(Chore::CachePut { key, bytes: Box::new(bytes) }).is_ok();
        if !queued {
            self.shared.chores_pending.fetch_sub(1, Ordering::AcqRel);
        }
        queued
    }

    /// Waits until the cache entries queued so far are filed or dropped.
    pub fn settle(&self) {
        let Some(chores) = &self.chores else { return };
        if self.shared.chores_pending.load(Ordering::Acquire) == 0 {
            return;
        }
        let (done, settled) = crossbeam_channel::bounded(1);
        // A writer that is gone answers nothing: the send or the wait fails at once.
        if chores.send(Chore::Settle(done)).is_ok() {
            let _ = settled.recv();
        }
    }

    /// Drops every cache entry; returns how many there were. The snapshot index is
    /// kept: books of record format 1 cannot rebuild it from the log (see
    /// [`Ledger::scan_batches`]).
    pub fn cache_clear(&self) -> Result<u64, ReadError> {
        self.settle();
        let txn = self.shared.db.writable()?.begin_write().map_err(read_error)?;
        let n_entries;
        {
            let mut cache = txn.open_table(CACHE).map_err(read_error)?;
            n_entries = cache.len().map_err(read_error)?;
            cache.retain(|_, _| false).map_err(read_error)?;
        }
        txn.commit().map_err(read_error)?;
        Ok(n_entries)
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            // A writer that panicked has already failed its callers.
            let _ = writer.join();
        }
    }
}

/// Books on any redb storage backend: tests open a book on a backend that fails,
/// tears or loses writes (`ledger/tests/faults.rs`). Such a book has no path and no
/// lock files; `label` names it in errors and is what [`Ledger::path`] returns.
impl Ledger {
    /// Creates a new, empty book on `backend`, which must be empty (length 0).
    pub fn create_with_backend(backend: impl redb::StorageBackend, label: &str) -> Result<Ledger, OpenError> {
        let path = Path::new(label);
        let empty =
            backend.len().map_err(|error| OpenError::Io { path: label.to_owned(), detail: error.to_string() })?;
        if empty != 0 {
            return Err(OpenError::Exists { path: label.to_owned() });
        }
        let db = guarded_open(path, || redb::Builder::new().create_with_backend(backend))?;
        let io = |error: redb::Error| OpenError::Io { path: label.to_owned(), detail: error.to_string() };
        create_empty_book(&db).map_err(io)?;
        Ok(Ledger::start(db, path))
    }

    /// Opens an existing book on `backend` read-write, as [`Ledger::open`] opens a
    /// file (redb recovers a book left unclean first). An empty backend is
    /// [`OpenError::Missing`].
    pub fn open_with_backend(backend: impl redb::StorageBackend, label: &str) -> Result<Ledger, OpenError> {
        let path = Path::new(label);
        let len = backend.len().map_err(|error| OpenError::Io { path: label.to_owned(), detail: error.to_string() })?;
        if len == 0 {
            return Err(OpenError::Missing { path: label.to_owned() });
        }
        let db = guarded_open(path, || redb::Builder::new().create_with_backend(backend))?;
        Ledger::checked_open(Ledger::start(db, path))
    }
}
