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

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use ledger_model::limits::{
    BATCH_BYTES_MAX, BATCH_EVENTS_MAX, DOCUMENT_BYTES_MAX, DOCUMENT_KEY_CHARS_MAX, GROUP_BYTES_MAX,
};
use ledger_model::record::{self, SCHEMA_CURRENT};
use ledger_model::{Hash32, NewEvent, Seq};
use redb::ReadableTable;

use crate::error::AppendError;
use crate::store::{
    blob_record, panic_text, Head, Shared, BLOBS, DOCUMENTS, DOCUMENT_LOG, EVENTS, META, META_HEAD, SHELVES, SNAPSHOTS,
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

pub(crate) struct Request {
    pub(crate) payloads: Vec<Vec<u8>>,
    pub(crate) expected: Option<Seq>,
    pub(crate) attachments: Attachments,
    pub(crate) reply: Sender<Result<Appended, AppendError>>,
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
    let refuse = |reason: String| AppendError::DocumentKey { key: key.chars().take(80).collect(), reason };
    let n_chars = key.chars().count();
    if n_chars == 0 {
        return Err(refuse("is empty".into()));
    }
    if n_chars > DOCUMENT_KEY_CHARS_MAX {
        return Err(refuse(format!("{n_chars} characters, over the limit of {DOCUMENT_KEY_CHARS_MAX}")));
    }
    if let Some(c) = key.chars().find(|c| c.is_control()) {
        return Err(refuse(format!("holds the control character {c:?}")));
    }
    if document.bytes.len() > DOCUMENT_BYTES_MAX {
        return Err(AppendError::DocumentTooLarge { n_bytes: document.bytes.len(), bytes_max: DOCUMENT_BYTES_MAX });
    }
    Ok(())
}

impl Request {
    /// Bytes the request writes.
    fn n_bytes(&self) -> usize {
        let payloads: usize = self.payloads.iter().map(Vec::len).sum();
        let blobs: usize = self.attachments.blobs.iter().map(|(_, bytes)| bytes.len()).sum();
        let documents: usize = self.attachments.documents.iter().map(|document| document.bytes.len()).sum();
        payloads + blobs + documents
    }
}

/// The first request plus what is queued behind it, up to [`GROUP_BATCHES_MAX`]
/// requests and [`GROUP_BYTES_MAX`] bytes (a request that would pass the byte limit
/// waits for the next group, unless it is the first).
fn take_group(first: Request, queue: &Receiver<Request>, held: &mut Option<Request>) -> Vec<Request> {
    let mut n_bytes = first.n_bytes();
    let mut group = vec![first];
    while group.len() < GROUP_BATCHES_MAX {
        let Ok(request) = queue.try_recv() else { break };
        let size = request.n_bytes();
        if n_bytes + size > GROUP_BYTES_MAX {
            *held = Some(request);
            break;
        }
        n_bytes += size;
        group.push(request);
    }
    group
}

pub(crate) fn encode_batch(batch: &[NewEvent]) -> Result<Vec<Vec<u8>>, AppendError> {
    if batch.is_empty() {
        return Err(AppendError::EmptyBatch);
    }
    let mut n_bytes = 0usize;
    let mut payloads = Vec::with_capacity(batch.len());
    for (index, event) in batch.iter().enumerate() {
        let payload = event.encode().map_err(|error| AppendError::Encode { index, error })?;
        // Paired with the strict decode on every read: what is written must read back
        // as written. Checked here, on the appender's thread, to keep it out of the
        // single writer's transaction.
        let back: NewEvent =
            ledger_model::codec::decode_strict(&payload).map_err(|error| AppendError::Encode { index, error })?;
        assert_eq!(&back, event, "event {index} does not decode to itself");
        n_bytes += payload.len();
        payloads.push(payload);
    }
    if batch.len() > BATCH_EVENTS_MAX || n_bytes > BATCH_BYTES_MAX {
        return Err(AppendError::BatchTooLarge {
            n_events: batch.len(),
            n_bytes,
            events_max: BATCH_EVENTS_MAX,
            bytes_max: BATCH_BYTES_MAX,
        });
    }
    Ok(payloads)
}

pub(crate) fn spawn(shared: Arc<Shared>) -> (Sender<Request>, JoinHandle<()>) {
    let (requests, queue) = crossbeam_channel::unbounded();
    let writer = std::thread::Builder::new()
        .name("lorebank-writer".into())
        .spawn(move || run(&shared, &queue))
        .expect("cannot spawn the ledger writer thread");
    (requests, writer)
}

fn run(shared: &Shared, queue: &Receiver<Request>) {
    let mut held = None;
    loop {
        let first = match held.take() {
            Some(request) => request,
            None => match queue.recv() {
                Ok(request) => request,
                Err(_) => break,
            },
        };
        let group = take_group(first, queue, &mut held);
        let answers = match shared.poisoned() {
            Some(reason) => group.iter().map(|_| Err(AppendError::Poisoned(reason.clone()))).collect(),
            None => guarded_commit(shared, &group).unwrap_or_else(|detail| {
                shared.poison(&format!("failed commit: {detail}"));
                group.iter().map(|_| Err(AppendError::Io(detail.clone()))).collect()
            }),
        };
        for (request, answer) in group.into_iter().zip(answers) {
            // An appender that gave up waiting is no reason to stop.
            let _ = request.reply.send(answer);
        }
    }
}

/// [`commit_group`], with a panic inside redb (damaged pages) turned into a failed
/// commit, so the writer thread keeps answering.
fn guarded_commit(shared: &Shared, group: &[Request]) -> Result<Vec<Result<Appended, AppendError>>, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commit_group(shared, group)))
        .unwrap_or_else(|payload| Err(format!("storage structure is damaged ({})", panic_text(payload.as_ref()))))
}

/// Writes the group in one transaction. `Err` means nothing was committed.
fn commit_group(shared: &Shared, group: &[Request]) -> Result<Vec<Result<Appended, AppendError>>, String> {
    let txn = shared.db.writable().map_err(|e| e.to_string())?.begin_write().map_err(|e| e.to_string())?;
    let mut answers = Vec::with_capacity(group.len());
    {
        let mut meta = txn.open_table(META).map_err(|e| e.to_string())?;
        let mut head = meta
            .get(META_HEAD)
            .map_err(|e| e.to_string())?
            .and_then(|guard| Head::from_bytes(guard.value()))
            .ok_or("meta `head` is missing or malformed")?;
        let head_before = head;
        let mut events = txn.open_table(EVENTS).map_err(|e| e.to_string())?;
        let mut blobs = txn.open_table(BLOBS).map_err(|e| e.to_string())?;
        let mut snapshots = txn.open_table(SNAPSHOTS).map_err(|e| e.to_string())?;
        let mut documents = txn.open_table(DOCUMENTS).map_err(|e| e.to_string())?;
        let mut document_log = txn.open_table(DOCUMENT_LOG).map_err(|e| e.to_string())?;
        let mut shelves = txn.open_table(SHELVES).map_err(|e| e.to_string())?;
        let mut n_logged = document_log.last().map_err(|e| e.to_string())?.map_or(0, |(key, _)| key.value());
        let mut wrote_derived = false;
        for request in group {
            if let Some(expected) = request.expected {
                if expected != head.seq {
                    answers.push(Err(AppendError::Conflict { expected, actual: head.seq }));
                    continue;
                }
            }
            let first = head.seq.next();
            for (index, payload) in request.payloads.iter().enumerate() {
                let seq = head.seq.next();
                let batch_end = index + 1 == request.payloads.len();
                let (bytes, hash) = record::seal_in_batch(seq, head.hash, SCHEMA_CURRENT, payload, batch_end);
                events.insert(seq.0, bytes.as_slice()).map_err(|e| e.to_string())?;
                head = Head { seq, hash };
            }
            for document in &request.attachments.documents {
                if documents.get(&document.id.0).map_err(|e| e.to_string())?.is_none() {
                    documents
                        .insert(&document.id.0, blob_record(&document.bytes).as_slice())
                        .map_err(|e| e.to_string())?;
                    n_logged += 1;
                    document_log.insert(n_logged, &document.id.0).map_err(|e| e.to_string())?;
                    shelves
                        .insert((document.group, document.key.as_str(), n_logged), &document.id.0)
                        .map_err(|e| e.to_string())?;
                    wrote_derived = true;
                }
            }
            for (id, bytes) in &request.attachments.blobs {
                if blobs.get(&id.0).map_err(|e| e.to_string())?.is_none() {
                    wrote_derived = true;
                    blobs.insert(&id.0, blob_record(bytes).as_slice()).map_err(|e| e.to_string())?;
                }
            }
            if let Some(snapshot) = request.attachments.snapshot {
                if snapshots.get(&snapshot.0).map_err(|e| e.to_string())?.is_none() {
                    snapshots.insert(&snapshot.0, head.seq.0).map_err(|e| e.to_string())?;
                }
            }
            answers.push(Ok(Appended { first, last: head.seq, hash: head.hash }));
        }
        if head == head_before && !wrote_derived {
            // Every batch conflicted and nothing else was new: nothing to make durable.
            drop((meta, events, blobs, snapshots, documents, document_log, shelves));
            txn.abort().map_err(|e| e.to_string())?;
            return Ok(answers);
        }
        if head != head_before {
            meta.insert(META_HEAD, head.to_bytes().as_slice()).map_err(|e| e.to_string())?;
        }
    }
    txn.commit().map_err(|e| e.to_string())?;
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(n_bytes: usize) -> Request {
        let (reply, _) = crossbeam_channel::bounded(1);
        Request { payloads: vec![vec![0; n_bytes]], expected: None, attachments: Attachments::default(), reply }
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
