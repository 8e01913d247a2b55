//! The single writer thread and group commit.
//!
//! Appenders encode their batch on their own thread, then send it over a crossbeam
//! channel. The writer takes the first waiting batch plus every batch already queued
//! behind it (up to [`GROUP_BATCHES_MAX`]), checks each batch's expected head in
//! arrival order against the head as the group has moved it, seals the accepted
//! events into the chain, and commits the whole group in one durable redb
//! transaction. A batch that conflicts is skipped and answered; the rest commit. If
//! the commit fails, every batch of the group fails, none is written, and the ledger
//! refuses further appends.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use ledger_model::limits::{
    BATCH_BYTES_MAX, BATCH_EVENTS_MAX, CACHE_PUTS_QUEUED_MAX, DOCUMENT_BYTES_MAX, GROUP_BYTES_MAX,
};
use ledger_model::record::{self, HEADER_BYTES, SCHEMA_CURRENT};
use ledger_model::{Hash32, NewEvent, Seq};
use redb::ReadableTable;

use crate::error::{storage_kind, AppendError, Poison};
use crate::replica::{CheckedGroup, GateRefusal, GateRefusalKind, Group, ReplicaPosition};
use crate::store::{
    blob_record, panic_text, put_cache, Head, Shared, BLOBS, DOCUMENTS, DOCUMENT_LOG, EVENTS, META, META_HEAD,
    META_REPLICA, SHELVES, SNAPSHOTS,
};

/// Most batches committed together in one durable transaction.
pub const GROUP_BATCHES_MAX: usize = 256;

/// Where an appended batch landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// Seq of the batch's first event.
    pub first: Seq,
    /// Seq of the batch's last event: the head right after the batch.
    pub last: Seq,
    /// Chain hash of the batch's last event.
    pub hash: Hash32,
}

/// Batches of at least this many events are streamed to the writer: sent in parts of
/// [`STREAM_PART_EVENTS`] as they are encoded, so the writer seals and inserts one
/// part while the appender encodes and checks the next.
pub(crate) const STREAM_MIN_EVENTS: usize = 256;
/// Events per part of a streamed batch.
pub(crate) const STREAM_PART_EVENTS: usize = 64;

/// Consecutive events of a batch, encoded and checked on the appender's thread: their
/// payloads back to back in one buffer, each with its payload hash
/// (position-independent, so it need not wait for the writer).
#[derive(Default)]
pub(crate) struct Part {
    bytes: Vec<u8>,
    /// (end of the payload in `bytes`, payload hash), per event.
    events: Vec<(usize, Hash32)>,
}

impl Part {
    /// Each event's payload and payload hash, in order.
    fn payloads(&self) -> impl Iterator<Item = (&[u8], Hash32)> {
        let starts = std::iter::once(0).chain(self.events.iter().map(|(end, _)| *end));
        starts.zip(&self.events).map(|(start, (end, hash))| (&self.bytes[start..*end], *hash))
    }
}

/// The rest of a streamed batch, part by part; an `Err` part, or the channel closing
/// before the batch is complete, abandons the batch (nothing of it is committed).
pub(crate) type Parts = Receiver<Result<Part, AppendError>>;

pub(crate) struct Request {
    /// The batch's first events (all of them unless `rest` is set).
    pub(crate) payloads: Part,
    /// Events in the batch in all.
    pub(crate) n_events: usize,
    /// For a streamed batch: the parts after `payloads`, as the appender encodes them.
    /// A streamed batch is committed in a group of its own.
    pub(crate) rest: Option<Parts>,
    pub(crate) expected: Option<Seq>,
    pub(crate) attachments: Attachments,
    /// Groups of a replicated book to store as they are (no gate), in a group of
    /// their own; the rest of the request is then empty.
    pub(crate) replica: Option<Box<ReplicaApply>>,
    pub(crate) reply: Reply,
}

/// How the writer answers a request once its group is committed (or refused).
pub(crate) enum Reply {
    /// To a caller waiting on the channel.
    Wait(Sender<Result<Appended, AppendError>>),
    /// By calling this on the writer thread, for a caller that must not wait (an
    /// async task that awaits what it sends): it must be quick, it delays the answers
    /// of the rest of the group.
    Then(Then),
}

/// A function that gets a request's answer, called exactly once: a request dropped
/// unanswered (the writer stopped with it queued) calls it with the error a waiting
/// caller would get.
pub(crate) struct Then(Option<Answer>);

/// What a [`Then`] calls with the answer.
type Answer = Box<dyn FnOnce(Result<Appended, AppendError>) + Send>;

impl Then {
    pub(crate) fn new(then: impl FnOnce(Result<Appended, AppendError>) + Send + 'static) -> Then {
        Then(Some(Box::new(then)))
    }
}

impl Drop for Then {
    fn drop(&mut self) {
        if let Some(then) = self.0.take() {
            then(Err(AppendError::Io(std::io::Error::other(crate::store::WRITER_STOPPED))));
        }
    }
}

impl Reply {
    /// Takes the function out of a `Then` unanswered: the caller got its answer
    /// otherwise (the request was never queued).
    pub(crate) fn disarm(&mut self) {
        if let Reply::Then(then) = self {
            then.0 = None;
        }
    }

    fn send(self, answer: Result<Appended, AppendError>) {
        match self {
            // A caller that gave up waiting is no reason to stop.
            Reply::Wait(waiting) => {
                let _ = waiting.send(answer);
            }
            Reply::Then(mut then) => {
                if let Some(then) = then.0.take() {
                    then(answer);
                }
            }
        }
    }
}

/// Checked groups of a replicated book and the replica position of the last one.
pub(crate) struct ReplicaApply {
    pub(crate) groups: Vec<CheckedGroup>,
    pub(crate) position: ReplicaPosition,
}

/// Derived data committed in the same transaction as a batch, or not at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attachments {
    /// Content-addressed blobs the batch refers to (fold tables), by content id.
    /// Stored once; a blob already present is left as it is.
    pub blobs: Vec<(Hash32, Vec<u8>)>,
    /// The snapshot ID of the state after the batch. The snapshot index maps it to
    /// the batch's last seq unless an earlier revision already had it.
    pub snapshot: Option<Hash32>,
    /// Documents to file (derived data: they never touch the chain).
    pub documents: Vec<Document>,
}

/// A document to file: content-addressed, checksummed bytes, filed under the
/// caller's shelf (`group`, `key`) in arrival order. The ledger gives the bytes,
/// the group and the key no meaning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// Content id of the document (the caller's; the ledger files it under this id).
    pub id: Hash32,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Group of the shelf.
    pub group: u32,
    /// Key of the shelf within the group.
    pub key: String,
}

/// A document's storage limits: its key is a key of the shelf table, its bytes must
/// decode again.
pub(crate) fn check_document(document: &Document) -> Result<(), AppendError> {
    let key = &document.key;
    ledger_model::validate::document_key(key)
        .map_err(|reason| AppendError::DocumentKey { key: key.chars().take(80).collect(), reason })?;
    if document.bytes.len() > DOCUMENT_BYTES_MAX {
        return Err(AppendError::DocumentTooLarge { n_bytes: document.bytes.len(), bytes_max: DOCUMENT_BYTES_MAX });
    }
    Ok(())
}

impl Request {
    /// Bytes the request writes.
    fn n_bytes(&self) -> usize {
        if let Some(apply) = &self.replica {
            let group = |group: &CheckedGroup| {
                let group = group.group();
                group.records.iter().map(Vec::len).sum::<usize>()
                    + group.blobs.iter().map(|(_, bytes)| bytes.len()).sum::<usize>()
                    + group.documents.iter().map(|document| document.bytes.len()).sum::<usize>()
            };
            return apply.groups.iter().map(group).sum();
        }
        let payloads = self.payloads.bytes.len();
        let blobs: usize = self.attachments.blobs.iter().map(|(_, bytes)| bytes.len()).sum();
        let documents: usize = self.attachments.documents.iter().map(|document| document.bytes.len()).sum();
        payloads + blobs + documents
    }
}

/// The first request plus what is queued behind it, up to [`GROUP_BATCHES_MAX`]
/// requests and [`GROUP_BYTES_MAX`] bytes (a request that would pass the byte limit
/// waits for the next group, unless it is the first).
/// A streamed batch, and the groups of a replicated book, are a group of their own.
fn take_group(first: Request, queue: &Receiver<Request>, held: &mut Option<Request>) -> Vec<Request> {
    let mut n_bytes = first.n_bytes();
    let alone = first.rest.is_some() || first.replica.is_some();
    let mut group = vec![first];
    while group.len() < GROUP_BATCHES_MAX && !alone {
        let Ok(request) = queue.try_recv() else { break };
        let size = request.n_bytes();
        if n_bytes + size > GROUP_BYTES_MAX || request.rest.is_some() || request.replica.is_some() {
            *held = Some(request);
            break;
        }
        n_bytes += size;
        group.push(request);
    }
    group
}

/// Encodes events `first..` of a batch (`part` is a slice of it starting at `first`),
/// each checked to read back as itself (the strict decode every read does will
/// accept it), adding their bytes to `n_bytes`.
fn encode_part(part: &[NewEvent], first: usize, n_bytes: &mut usize) -> Result<Part, AppendError> {
    let mut out = Part { bytes: Vec::with_capacity(part.len() * 256), events: Vec::with_capacity(part.len()) };
    for (offset, event) in part.iter().enumerate() {
        let start = out.bytes.len();
        ledger_model::codec::encode_checked_into(event, &mut out.bytes)
            .map_err(|error| AppendError::Encode { index: first + offset, error })?;
        out.events.push((out.bytes.len(), record::payload_hash(&out.bytes[start..])));
    }
    *n_bytes += out.bytes.len();
    Ok(out)
}

fn too_large(n_events: usize, n_bytes: usize) -> AppendError {
    AppendError::BatchTooLarge { n_events, n_bytes, events_max: BATCH_EVENTS_MAX, bytes_max: BATCH_BYTES_MAX }
}

/// Encodes and checks a whole batch before it is sent (batches shorter than
/// [`STREAM_MIN_EVENTS`]).
pub(crate) fn encode_batch(batch: &[NewEvent]) -> Result<Part, AppendError> {
    if batch.is_empty() {
        return Err(AppendError::EmptyBatch);
    }
    let mut n_bytes = 0usize;
    let payloads = encode_part(batch, 0, &mut n_bytes)?;
    if batch.len() > BATCH_EVENTS_MAX || n_bytes > BATCH_BYTES_MAX {
        return Err(too_large(batch.len(), n_bytes));
    }
    Ok(payloads)
}

/// Whether `batch` is streamed to the writer (see [`STREAM_MIN_EVENTS`]); a batch over
/// the event limit is not, so it is refused whole, before anything is sent.
pub(crate) fn streams(batch: &[NewEvent]) -> bool {
    (STREAM_MIN_EVENTS..=BATCH_EVENTS_MAX).contains(&batch.len())
}

/// The first part of a streamed batch, encoded and checked before the request is sent.
pub(crate) fn first_part(batch: &[NewEvent], n_bytes: &mut usize) -> Result<Part, AppendError> {
    encode_part(&batch[..STREAM_PART_EVENTS.min(batch.len())], 0, n_bytes)
}

/// Encodes the parts of a streamed batch after the first and sends each as soon as it
/// is checked. A failed check ends the stream with its error (the writer then
/// abandons the batch). Past [`BATCH_BYTES_MAX`], the rest is still encoded to name
/// the batch's size in the error, exactly as [`encode_batch`] would.
pub(crate) fn stream_rest(
    batch: &[NewEvent],
    mut n_bytes: usize,
    parts: &crossbeam_channel::Sender<Result<Part, AppendError>>,
) {
    let mut first = STREAM_PART_EVENTS.min(batch.len());
    while first < batch.len() {
        let part = &batch[first..(first + STREAM_PART_EVENTS).min(batch.len())];
        let encoded = encode_part(part, first, &mut n_bytes).and_then(|encoded| {
            if n_bytes <= BATCH_BYTES_MAX {
                return Ok(encoded);
            }
            let mut rest = n_bytes;
            encode_part(&batch[first + part.len()..], first + part.len(), &mut rest)?;
            Err(too_large(batch.len(), rest))
        });
        let failed = encoded.is_err();
        // A closed channel: the writer has answered already (a conflict, a failure).
        if parts.send(encoded).is_err() || failed {
            return;
        }
        first += part.len();
    }
}

/// Work the writer does between groups, which no appender waits for.
pub(crate) enum Chore {
    /// A cache entry whose bytes are made on the writer's thread
    /// (`Ledger::cache_put_later`).
    CachePut { key: Hash32, bytes: Box<dyn FnOnce() -> Vec<u8> + Send> },
    /// Answered once every chore queued before it is done (`Ledger::settle`).
    Settle(Sender<()>),
}

pub(crate) fn spawn(shared: Arc<Shared>) -> (Sender<Request>, Sender<Chore>, JoinHandle<()>) {
    let (requests, queue) = crossbeam_channel::unbounded();
    let (chores, chore_queue) = crossbeam_channel::bounded(CACHE_PUTS_QUEUED_MAX);
    let writer = std::thread::Builder::new()
        .name("lorebank-writer".into())
        .spawn(move || run(&shared, &queue, &chore_queue))
        .expect("cannot spawn the ledger writer thread");
    (requests, chores, writer)
}

fn run(shared: &Shared, queue: &Receiver<Request>, chores: &Receiver<Chore>) {
    let mut held = None;
    loop {
        let first = match held.take() {
            Some(request) => request,
            None => match next_request(shared, queue, chores) {
                Some(request) => request,
                None => break,
            },
        };
        let group = take_group(first, queue, &mut held);
        let mut spent = Vec::new();
        let answers = match shared.poisoned() {
            Some(reason) => group.iter().map(|_| Err(AppendError::refused(reason.clone()))).collect(),
            None => guarded_commit(shared, &group, &mut spent).unwrap_or_else(|failure| {
                shared.poison(Poison::FailedCommit(failure.to_string()));
                failure.answers(group.len())
            }),
        };
        for (request, answer) in group.into_iter().zip(answers) {
            request.reply.send(answer);
        }
        drop(spent);
        // One chore after every group, so that a steady stream of appends cannot
        // starve them.
        if let Ok(chore) = chores.try_recv() {
            do_chore(shared, chore);
        }
    }
    // The book is closing: what is still queued is filed first, so that a one-shot
    // command's cache entry is there for the next process.
    while let Ok(chore) = chores.try_recv() {
        do_chore(shared, chore);
    }
}

/// The next append request, doing chores while none waits (an append goes first when
/// both wait). `None` once the ledger is closing.
fn next_request(shared: &Shared, queue: &Receiver<Request>, chores: &Receiver<Chore>) -> Option<Request> {
    loop {
        match queue.try_recv() {
            Ok(request) => return Some(request),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        crossbeam_channel::select! {
            recv(queue) -> request => return request.ok(),
            recv(chores) -> chore => match chore {
                Ok(chore) => do_chore(shared, chore),
                // Never while the ledger is open: it holds the sender.
                Err(_) => return queue.recv().ok(),
            },
        }
    }
}

/// Files a queued cache entry, unless the book has stopped appends: an entry whose
/// bytes cannot be made or filed is dropped (it is built again when it is next
/// needed), and the writer goes on. A panic inside the storage engine is damage, as
/// in a group's commit.
fn do_chore(shared: &Shared, chore: Chore) {
    match chore {
        Chore::Settle(done) => {
            let _ = done.send(());
        }
        Chore::CachePut { key, bytes } => {
            if shared.poisoned().is_none() {
                let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(bytes));
                if let (Ok(bytes), Ok(db)) = (made, shared.db.writable()) {
                    let filed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| put_cache(db, key, &bytes)));
                    if let Err(payload) = filed {
                        shared.poison_damaged(format!(
                            "the book file: its storage structure is damaged ({})",
                            panic_text(payload.as_ref())
                        ));
                    }
                }
            }
            shared.chores_pending.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Why a group's transaction failed: nothing of it was committed. It stays typed
/// (a storage error keeps its source) until it becomes the failed commit's detail:
/// the handle's [`Poison::FailedCommit`] and each appender's [`AppendError::Io`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommitFailure {
    /// The storage engine failed.
    #[error(transparent)]
    Storage(#[from] redb::Error),
    /// The handle cannot write (it is read-only).
    #[error(transparent)]
    Handle(#[from] crate::error::ReadError),
    /// The storage structure is damaged (the engine panicked), or the group cannot
    /// be written as it is (its detail).
    #[error("{0}")]
    Damaged(String),
}

impl CommitFailure {
    /// The answers to the `n_requests` appenders of the failed group: each an I/O
    /// error of the storage engine's kind (`Other` if it was no I/O error) holding
    /// the one failure, which displays as the failure does.
    fn answers(self, n_requests: usize) -> Vec<Result<Appended, AppendError>> {
        let kind = match &self {
            CommitFailure::Storage(error) => storage_kind(error),
            _ => io::ErrorKind::Other,
        };
        let failure = Arc::new(self);
        (0..n_requests).map(|_| Err(AppendError::Io(io::Error::new(kind, Arc::clone(&failure))))).collect()
    }
}

macro_rules! storage_failures {
    ($($error:ty),*) => {$(
        impl From<$error> for CommitFailure {
            fn from(error: $error) -> CommitFailure {
                CommitFailure::Storage(redb::Error::from(error))
            }
        }
    )*};
}
storage_failures!(redb::TransactionError, redb::TableError, redb::StorageError, redb::CommitError);

/// [`commit_group`], with a panic inside redb (damaged pages) turned into a failed
/// commit, so the writer thread keeps answering.
fn guarded_commit(
    shared: &Shared,
    group: &[Request],
    spent: &mut Vec<Part>,
) -> Result<Vec<Result<Appended, AppendError>>, CommitFailure> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commit_group(shared, group, spent))).unwrap_or_else(
        |payload| {
            Err(CommitFailure::Damaged(format!("storage structure is damaged ({})", panic_text(payload.as_ref()))))
        },
    )
}

/// Writes the group in one transaction. `Err` means nothing was committed.
///
/// With a commit gate set (a replicated book), the group's sealed records, new blobs,
/// new documents and new snapshot index entries are shown to the gate before the
/// durable commit; a refusal aborts the transaction and answers every batch the group
/// accepted with it. A conflicting expected head is then stale (the book moved in its
/// library), not a conflict of the caller's. A replica without a gate takes nothing.
fn commit_group(
    shared: &Shared,
    group: &[Request],
    spent: &mut Vec<Part>,
) -> Result<Vec<Result<Appended, AppendError>>, CommitFailure> {
    if let Some(apply) = group.first().and_then(|request| request.replica.as_deref()) {
        return commit_replica(shared, apply).map(|answer| vec![answer]);
    }
    let gate = shared.gate();
    let txn = shared.db.writable()?.begin_write()?;
    let mut answers = Vec::with_capacity(group.len());
    {
        let tables = LogTables::open(&txn)?;
        if let (None, Some(position)) = (&gate, tables.replica_position()?) {
            let path = shared.path.display().to_string();
            drop(tables);
            txn.abort()?;
            return Ok(group.iter().map(|_| Err(AppendError::Replica { path: path.clone(), position })).collect());
        }
        let head_before = tables.head()?;
        let mut sealing = Sealing::new(tables, head_before, gate.is_some())?;
        for request in group {
            match sealing.seal(request, spent)? {
                Sealed::Answered(answer) => answers.push(answer),
                Sealed::Abandoned(error) => {
                    assert_eq!(group.len(), 1, "a streamed batch is a group of its own");
                    drop(sealing);
                    txn.abort()?;
                    return Ok(vec![Err(error)]);
                }
            }
        }
        let head = sealing.head;
        // Postcondition of the group: every request is answered, and the head only
        // moved forward.
        assert_eq!(answers.len(), group.len(), "every request of the group is answered");
        assert!(head.seq >= head_before.seq, "the head never moves back");
        if head == head_before && !sealing.wrote_derived {
            // Every batch conflicted and nothing else was new: nothing to make durable.
            drop(sealing);
            txn.abort()?;
            return Ok(answers);
        }
        if head != head_before {
            sealing.tables.meta.insert(META_HEAD, head.to_bytes().as_slice())?;
        }
        if let (Some(gate), Some(out)) = (&gate, &sealing.out) {
            match gate.admit(out) {
                Ok(position) => {
                    sealing.tables.meta.insert(META_REPLICA, position.to_bytes().as_slice())?;
                }
                Err(refusal) => {
                    drop(sealing);
                    txn.abort()?;
                    let refused = |answer: Result<Appended, AppendError>| match answer {
                        Ok(_) => Err(AppendError::Gate(refusal.clone())),
                        other => other,
                    };
                    return Ok(answers.into_iter().map(refused).collect());
                }
            }
        }
    }
    txn.commit()?;
    Ok(answers)
}

/// A group's batches being sealed into its transaction: the log's tables, the head
/// as the group has moved it, and what the gate is shown.
struct Sealing<'txn> {
    tables: LogTables<'txn>,
    head: Head,
    /// With a gate: what it is shown, only what this transaction adds.
    out: Option<Group>,
    /// The document log's last position, as the group files documents.
    n_logged: u64,
    /// Whether a document or blob was new.
    wrote_derived: bool,
    /// The record being sealed (its buffer is reused).
    record: Vec<u8>,
}

/// What became of one request of the group.
enum Sealed {
    /// Appended, or refused for its expected head; the group goes on.
    Answered(Result<Appended, AppendError>),
    /// A streamed batch that never completed: the transaction is abandoned.
    Abandoned(AppendError),
}

impl<'txn> Sealing<'txn> {
    fn new(tables: LogTables<'txn>, head: Head, gated: bool) -> Result<Sealing<'txn>, CommitFailure> {
        let n_logged = tables.n_logged()?;
        let out = gated.then(|| Group { before: head, ..Group::default() });
        Ok(Sealing { tables, head, out, n_logged, wrote_derived: false, record: Vec::new() })
    }

    /// Seals `request` after the head, if it was decided at the head: its events (a
    /// streamed batch's parts as they arrive, the ones received put in `spent`), then
    /// what it attaches.
    fn seal(&mut self, request: &Request, spent: &mut Vec<Part>) -> Result<Sealed, CommitFailure> {
        if let Some(expected) = request.expected.filter(|expected| *expected != self.head.seq) {
            return Ok(Sealed::Answered(Err(self.moved(expected))));
        }
        let first = self.head.seq.next();
        self.insert(request, first, &request.payloads)?;
        if let Some(rest) = &request.rest {
            if let Some(error) = self.insert_rest(request, first, rest, spent)? {
                return Ok(Sealed::Abandoned(error));
            }
        }
        self.attach(&request.attachments)?;
        // Postcondition of a batch: it is in the transaction whole, right after the
        // head it was decided at.
        assert_eq!(self.head.seq.0 + 1 - first.0, request.n_events as u64, "a batch commits whole");
        Ok(Sealed::Answered(Ok(Appended { first, last: self.head.seq, hash: self.head.hash })))
    }

    /// The refusal of a batch decided at `expected`, which the head has left: a
    /// conflict, or with a gate, a stale write (the book moved on in its library).
    fn moved(&self, expected: Seq) -> AppendError {
        if self.out.is_none() {
            return AppendError::Conflict { expected, actual: self.head.seq };
        }
        AppendError::Gate(GateRefusal {
            kind: GateRefusalKind::Stale,
            detail: format!(
                "the book moved on in its library: the write was decided at event {expected}, the head is now event {}",
                self.head.seq
            ),
        })
    }

    /// Seals the events of `part`, of the batch `request` whose first event is
    /// `first`, after the head.
    fn insert(&mut self, request: &Request, first: Seq, part: &Part) -> Result<(), CommitFailure> {
        for (payload, payload_hash) in part.payloads() {
            let seq = self.head.seq.next();
            // Precondition of a record: it belongs to this batch.
            assert!(seq.0 - first.0 < request.n_events as u64, "a part holds no event past its batch");
            let batch_end = seq.0 - first.0 + 1 == request.n_events as u64;
            self.record.resize(HEADER_BYTES + payload.len(), 0);
            let hash = record::seal_into(
                &mut self.record,
                seq,
                self.head.hash,
                SCHEMA_CURRENT,
                payload,
                payload_hash,
                batch_end,
            );
            self.tables.events.insert(seq.0, self.record.as_slice())?;
            if let Some(out) = self.out.as_mut() {
                out.records.push(self.record.clone());
            }
            self.head = Head { seq, hash };
        }
        Ok(())
    }

    /// Receives and seals the parts of a streamed batch after its first until the
    /// batch is whole. Returns the error that abandons it if it never is (a streamed
    /// batch is alone in its group: abandoning it abandons the transaction, and
    /// nothing is committed).
    fn insert_rest(
        &mut self,
        request: &Request,
        first: Seq,
        rest: &Parts,
        spent: &mut Vec<Part>,
    ) -> Result<Option<AppendError>, CommitFailure> {
        while self.head.seq.0 - first.0 + 1 != request.n_events as u64 {
            match rest.recv() {
                Ok(Ok(part)) => {
                    self.insert(request, first, &part)?;
                    // Freed after the answer, off the appender's wait.
                    spent.push(part);
                }
                Ok(Err(error)) => return Ok(Some(error)),
                Err(_) => {
                    let stopped = io::Error::other("the appender stopped before its batch was complete");
                    return Ok(Some(AppendError::Io(stopped)));
                }
            }
        }
        Ok(None)
    }

    /// Files what a batch attaches: documents and blobs not stored yet, and its
    /// snapshot index entry at the head unless an earlier revision has the snapshot.
    fn attach(&mut self, attachments: &Attachments) -> Result<(), CommitFailure> {
        for document in &attachments.documents {
            if self.tables.file_document(&mut self.n_logged, document)? {
                self.wrote_derived = true;
                if let Some(out) = self.out.as_mut() {
                    out.documents.push(document.clone());
                }
            }
        }
        for (id, bytes) in &attachments.blobs {
            if self.tables.file_blob(*id, bytes)? {
                self.wrote_derived = true;
                if let Some(out) = self.out.as_mut() {
                    out.blobs.push((*id, bytes.clone()));
                }
            }
        }
        if let Some(snapshot) = attachments.snapshot {
            if self.tables.index_snapshot(snapshot, self.head.seq)? {
                if let Some(out) = self.out.as_mut() {
                    out.snapshots.push((snapshot, self.head.seq));
                }
            }
        }
        Ok(())
    }
}

/// Stores checked groups of a replicated book in one transaction, the first at the
/// head and each after the one before; the records go in as they are (their chain
/// was verified by [`crate::replica::Group::check`]; here each one's seq and link are
/// read from its header again, against the head as it moves).
fn commit_replica(shared: &Shared, apply: &ReplicaApply) -> Result<Result<Appended, AppendError>, CommitFailure> {
    let txn = shared.db.writable()?.begin_write()?;
    let start;
    let mut head;
    {
        let mut tables = LogTables::open(&txn)?;
        head = tables.head()?;
        start = head;
        if let Some(first) = apply.groups.first().filter(|first| first.before() != head) {
            drop(tables);
            txn.abort()?;
            return Ok(Err(AppendError::NotAtHead { before: first.before(), head }));
        }
        let mut n_logged = tables.n_logged()?;
        for checked in &apply.groups {
            let group = checked.group();
            let mut broken = checked.before() != head;
            for bytes in &group.records {
                let header = bytes
                    .get(..HEADER_BYTES)
                    .and_then(|header| header.try_into().ok())
                    .and_then(|header| record::Header::from_bytes(header).ok());
                match header {
                    Some(header) if header.seq == head.seq.next() && header.prev == head.hash && !broken => {
                        tables.events.insert(header.seq.0, bytes.as_slice())?;
                        head = Head { seq: header.seq, hash: header.chain_hash() };
                    }
                    _ => broken = true,
                }
            }
            if broken || head != checked.end() {
                let before = checked.before();
                drop(tables);
                txn.abort()?;
                return Ok(Err(AppendError::NotAtHead { before, head }));
            }
            for document in &group.documents {
                tables.file_document(&mut n_logged, document)?;
            }
            for (id, bytes) in &group.blobs {
                tables.file_blob(*id, bytes)?;
            }
            for (snapshot, revision) in &group.snapshots {
                tables.index_snapshot(*snapshot, *revision)?;
            }
        }
        tables.meta.insert(META_HEAD, head.to_bytes().as_slice())?;
        tables.meta.insert(META_REPLICA, apply.position.to_bytes().as_slice())?;
    }
    txn.commit()?;
    Ok(Ok(Appended { first: start.seq.next(), last: head.seq, hash: head.hash }))
}

/// The tables of the log, opened for writing in one transaction: every table a
/// commit of the writer writes to, and that a book made from an archive is written
/// into ([`crate::Ledger::stage_import`]). Dropping it closes them, which the
/// transaction needs before it commits or aborts.
pub(crate) struct LogTables<'txn> {
    pub(crate) meta: redb::Table<'txn, &'static str, &'static [u8]>,
    pub(crate) events: redb::Table<'txn, u64, &'static [u8]>,
    pub(crate) blobs: redb::Table<'txn, &'static [u8; 32], &'static [u8]>,
    pub(crate) snapshots: redb::Table<'txn, &'static [u8; 32], u64>,
    pub(crate) documents: redb::Table<'txn, &'static [u8; 32], &'static [u8]>,
    pub(crate) document_log: redb::Table<'txn, u64, &'static [u8; 32]>,
    pub(crate) shelves: redb::Table<'txn, (u32, &'static str, u64), &'static [u8; 32]>,
}

impl<'txn> LogTables<'txn> {
    /// Opens the log's tables in `txn`.
    pub(crate) fn open(txn: &'txn redb::WriteTransaction) -> Result<LogTables<'txn>, redb::TableError> {
        Ok(LogTables {
            meta: txn.open_table(META)?,
            events: txn.open_table(EVENTS)?,
            blobs: txn.open_table(BLOBS)?,
            snapshots: txn.open_table(SNAPSHOTS)?,
            documents: txn.open_table(DOCUMENTS)?,
            document_log: txn.open_table(DOCUMENT_LOG)?,
            shelves: txn.open_table(SHELVES)?,
        })
    }

    /// The stored head.
    fn head(&self) -> Result<Head, CommitFailure> {
        self.meta
            .get(META_HEAD)?
            .and_then(|guard| Head::from_bytes(guard.value()))
            .ok_or_else(|| CommitFailure::Damaged("meta `head` is missing or malformed".into()))
    }

    /// The log position of a replica's last group (`meta.replica`; 0 if it does not
    /// read), or `None` in a book of its own.
    fn replica_position(&self) -> Result<Option<u64>, redb::StorageError> {
        let stored = self.meta.get(META_REPLICA)?;
        Ok(stored.map(|guard| ReplicaPosition::from_bytes(guard.value()).map_or(0, |stored| stored.position)))
    }

    /// The last position of the document log (0: none).
    fn n_logged(&self) -> Result<u64, redb::StorageError> {
        Ok(self.document_log.last()?.map_or(0, |(key, _)| key.value()))
    }

    /// Files `document` unless one with its id is stored: its bytes, its place in the
    /// arrival log (after `n_logged`, which it advances) and on its shelf. Returns
    /// whether it was new.
    fn file_document(&mut self, n_logged: &mut u64, document: &crate::Document) -> Result<bool, redb::StorageError> {
        if self.documents.get(&document.id.0)?.is_some() {
            return Ok(false);
        }
        self.documents.insert(&document.id.0, blob_record(&document.bytes).as_slice())?;
        *n_logged += 1;
        self.document_log.insert(*n_logged, &document.id.0)?;
        self.shelves.insert((document.group, document.key.as_str(), *n_logged), &document.id.0)?;
        Ok(true)
    }

    /// Stores a blob unless one with its id is stored. Returns whether it was new.
    fn file_blob(&mut self, id: Hash32, bytes: &[u8]) -> Result<bool, redb::StorageError> {
        if self.blobs.get(&id.0)?.is_some() {
            return Ok(false);
        }
        self.blobs.insert(&id.0, blob_record(bytes).as_slice())?;
        Ok(true)
    }

    /// Maps `snapshot` to `revision` unless an earlier revision has it. Returns
    /// whether it was new.
    fn index_snapshot(&mut self, snapshot: Hash32, revision: Seq) -> Result<bool, redb::StorageError> {
        if self.snapshots.get(&snapshot.0)?.is_some() {
            return Ok(false);
        }
        self.snapshots.insert(&snapshot.0, revision.0)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(n_bytes: usize) -> Request {
        let (reply, _) = crossbeam_channel::bounded(1);
        let payloads = Part { bytes: vec![0; n_bytes], events: vec![(n_bytes, Hash32::GENESIS)] };
        Request {
            payloads,
            n_events: 1,
            rest: None,
            expected: None,
            attachments: Attachments::default(),
            replica: None,
            reply: Reply::Wait(reply),
        }
    }

    #[test]
    fn a_group_stops_at_its_byte_limit_and_the_next_request_waits() {
        let (sender, queue) = crossbeam_channel::unbounded();
        for _ in 0..5 {
            sender.send(request(GROUP_BYTES_MAX / 4)).unwrap();
        }
        let mut held = None;
        let first = queue.recv().unwrap();
        let group = take_group(first, &queue, &mut held);
        assert_eq!(group.len(), 4);
        assert!(held.is_some());
        let group = take_group(held.take().unwrap(), &queue, &mut held);
        assert_eq!(group.len(), 1);
        assert!(held.is_none());
    }

    fn streamed() -> Request {
        let mut request = request(1);
        request.rest = Some(crossbeam_channel::unbounded().1);
        request
    }

    #[test]
    fn a_streamed_batch_is_a_group_of_its_own() {
        let (sender, queue) = crossbeam_channel::unbounded();
        sender.send(request(1)).unwrap();
        let mut held = None;
        assert_eq!(take_group(streamed(), &queue, &mut held).len(), 1);
        assert!(held.is_none());
        sender.send(streamed()).unwrap();
        sender.send(request(1)).unwrap();
        let group = take_group(queue.recv().unwrap(), &queue, &mut held);
        assert_eq!(group.len(), 1);
        assert!(held.as_ref().is_some_and(|request| request.rest.is_some()));
    }

    #[test]
    fn a_single_request_over_the_group_limit_still_forms_a_group() {
        let (sender, queue) = crossbeam_channel::unbounded();
        sender.send(request(1)).unwrap();
        let mut held = None;
        let group = take_group(request(GROUP_BYTES_MAX + 1), &queue, &mut held);
        assert_eq!(group.len(), 1);
        assert_eq!(held.map(|request| request.n_bytes()), Some(1));
    }
}
