//! A group's portable form, its parts, and the rule that turns an external log of
//! parts into a book (`docs/scale.md`).
//!
//! The writer thread commits *groups* (the batches, blobs, documents and snapshot
//! index entries of one transaction). A book replicated through an external ordered
//! log (NATS JetStream in `cluster`; the ledger knows none) travels as those groups:
//! [`Group::encode`] gives a group's bytes (ending in a checksum that is also its
//! id), [`split`] cuts them into [`Part`]s small enough for the log's messages, and a
//! [`Follower`] reads the parts back in log order and decides, as a pure function of
//! the parts before, which groups form the book: a group is applied when it is whole,
//! well formed and starts at the book's head; what racing writers leave behind
//! (abandoned or orphaned parts, a group that starts at another head) is skipped; and
//! what no honest writer makes (damage, forgery) is refused, naming what failed.
//! Every record of a group is opened as every read opens it before the group is
//! handed out ([`CheckedGroup`]), so [`crate::Ledger::apply_replica`] stores only
//! groups whose chain was verified.

use ledger_model::limits::DOCUMENT_BYTES_MAX;
use ledger_model::record;
use ledger_model::{Hash32, Seq};

use crate::store::Head;
use crate::writer::Document;

/// The first bytes of a group's byte form.
pub const GROUP_MAGIC: &[u8; 8] = b"LBGROUP1";
/// The first bytes of a part.
pub const PART_MAGIC: &[u8; 8] = b"LBPART01";
/// blake3 `derive_key` context of a group's checksum, which is also its id.
pub const GROUP_CHECKSUM_CONTEXT: &str = "lorebank 2026-12-02 replica group v1";
/// Bytes of a part's header: magic, group id, index, count.
pub const PART_HEADER_BYTES: usize = 8 + 32 + 4 + 4;
/// Most parts one group may have.
pub const PARTS_MAX: u32 = 1_024;
/// Largest byte form of a group (what a follower holds while a group arrives).
pub const REPLICA_GROUP_BYTES_MAX: usize = 256 << 20;

/// Why a part or a group is refused. Every message names what failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplicaError {
    /// The message is not a well-formed part.
    #[error("not a part: {0}")]
    Part(String),
    /// The group's byte form is malformed or fails its checksum.
    #[error("group {id}: {detail}")]
    Group {
        /// The id the parts named.
        id: String,
        /// What is wrong.
        detail: String,
    },
    /// A record of the group does not open or does not link.
    #[error("record {index} of the group (event {seq}): {detail}")]
    Record {
        /// 0-based index in the group.
        index: usize,
        /// The seq it must have.
        seq: Seq,
        /// What is wrong.
        detail: String,
    },
    /// Something other than a record (a document, a snapshot entry) is malformed.
    #[error("{0}")]
    Content(String),
    /// The group is larger than a follower holds.
    #[error("a group of {n_bytes} bytes is over the limit of {bytes_max} bytes")]
    TooLarge {
        /// Its size.
        n_bytes: usize,
        /// The limit.
        bytes_max: usize,
    },
}

/// One group: what one transaction of the writer commits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The head the group starts at.
    pub before: Head,
    /// The sealed records, seqs `before.seq + 1 …`, exactly as stored.
    pub records: Vec<Vec<u8>>,
    /// Blobs committed with the group: content id and bytes.
    pub blobs: Vec<(Hash32, Vec<u8>)>,
    /// Documents filed with the group, in arrival order.
    pub documents: Vec<Document>,
    /// Snapshot index entries of the group's batch ends.
    pub snapshots: Vec<(Hash32, Seq)>,
}

fn group_hasher() -> blake3::Hasher {
    blake3::Hasher::new_derive_key(GROUP_CHECKSUM_CONTEXT)
}

fn put_u32(out: &mut Vec<u8>, value: usize) {
    // Counts and lengths are bounded far below u32::MAX by the ledger's limits.
    out.extend_from_slice(&(value as u32).to_le_bytes());
}

impl Group {
    /// The byte form (see `docs/scale.md`), ending in the checksum that is the id.
    pub fn encode(&self) -> Vec<u8> {
        let records: usize = self.records.iter().map(|record| 4 + record.len()).sum();
        let blobs: usize = self.blobs.iter().map(|(_, bytes)| 36 + bytes.len()).sum();
        let documents: usize = self.documents.iter().map(|d| 42 + d.key.len() + d.bytes.len()).sum();
        let mut out = Vec::with_capacity(8 + 40 + 16 + records + blobs + documents + self.snapshots.len() * 40 + 32);
        out.extend_from_slice(GROUP_MAGIC);
        out.extend_from_slice(&self.before.seq.0.to_le_bytes());
        out.extend_from_slice(&self.before.hash.0);
        put_u32(&mut out, self.records.len());
        for record in &self.records {
            put_u32(&mut out, record.len());
            out.extend_from_slice(record);
        }
        put_u32(&mut out, self.blobs.len());
        for (id, bytes) in &self.blobs {
            out.extend_from_slice(&id.0);
            put_u32(&mut out, bytes.len());
            out.extend_from_slice(bytes);
        }
        put_u32(&mut out, self.documents.len());
        for document in &self.documents {
            out.extend_from_slice(&document.id.0);
            out.extend_from_slice(&document.group.to_le_bytes());
            // Keys are at most DOCUMENT_KEY_CHARS_MAX characters: under u16::MAX bytes.
            out.extend_from_slice(&(document.key.len() as u16).to_le_bytes());
            out.extend_from_slice(document.key.as_bytes());
            put_u32(&mut out, document.bytes.len());
            out.extend_from_slice(&document.bytes);
        }
        put_u32(&mut out, self.snapshots.len());
        for (id, revision) in &self.snapshots {
            out.extend_from_slice(&id.0);
            out.extend_from_slice(&revision.0.to_le_bytes());
        }
        let checksum = group_hasher().update(&out).finalize();
        out.extend_from_slice(checksum.as_bytes());
        out
    }

    /// The id of a group's byte form: its checksum (the last 32 bytes).
    pub fn id_of(bytes: &[u8]) -> Option<Hash32> {
        let start = bytes.len().checked_sub(32)?;
        bytes[start..].try_into().ok().map(Hash32)
    }

    /// Parses a group's byte form, checking its structure and checksum (not its
    /// records: [`Group::check`] opens those).
    pub fn decode(bytes: &[u8]) -> Result<Group, ReplicaError> {
        let id = Group::id_of(bytes).map_or_else(|| "(too short)".to_owned(), |id| id.to_hex());
        let fail = |detail: String| ReplicaError::Group { id: id.clone(), detail };
        if bytes.len() < GROUP_MAGIC.len() + 40 + 16 + 32 {
            return Err(fail(format!("{} bytes, shorter than any group", bytes.len())));
        }
        let (body, checksum) = bytes.split_at(bytes.len() - 32);
        if group_hasher().update(body).finalize().as_bytes() != checksum {
            return Err(fail("fails its checksum".into()));
        }
        let mut cursor = Cursor { bytes: body, at: 0 };
        let magic = cursor.take(8).map_err(&fail)?;
        if magic != GROUP_MAGIC {
            return Err(fail(format!("unknown magic {:?}", String::from_utf8_lossy(magic))));
        }
        let before = Head { seq: Seq(cursor.u64().map_err(&fail)?), hash: cursor.hash().map_err(&fail)? };
        let n_records = cursor.count(4).map_err(&fail)?;
        let mut records = Vec::with_capacity(n_records);
        for _ in 0..n_records {
            let len = cursor.u32().map_err(&fail)? as usize;
            records.push(cursor.take(len).map_err(&fail)?.to_vec());
        }
        let n_blobs = cursor.count(36).map_err(&fail)?;
        let mut blobs = Vec::with_capacity(n_blobs);
        for _ in 0..n_blobs {
            let blob_id = cursor.hash().map_err(&fail)?;
            let len = cursor.u32().map_err(&fail)? as usize;
            blobs.push((blob_id, cursor.take(len).map_err(&fail)?.to_vec()));
        }
        let n_documents = cursor.count(42).map_err(&fail)?;
        let mut documents = Vec::with_capacity(n_documents);
        for _ in 0..n_documents {
            let document_id = cursor.hash().map_err(&fail)?;
            let group = cursor.u32().map_err(&fail)?;
            let key_len = u16::from_le_bytes(cursor.array::<2>().map_err(&fail)?) as usize;
            let key = std::str::from_utf8(cursor.take(key_len).map_err(&fail)?)
                .map_err(|_| fail("a document key is not UTF-8".into()))?
                .to_owned();
            let len = cursor.u32().map_err(&fail)? as usize;
            let bytes = cursor.take(len).map_err(&fail)?.to_vec();
            documents.push(Document { id: document_id, bytes, group, key });
        }
        let n_snapshots = cursor.count(40).map_err(&fail)?;
        let mut snapshots = Vec::with_capacity(n_snapshots);
        for _ in 0..n_snapshots {
            let snapshot = cursor.hash().map_err(&fail)?;
            snapshots.push((snapshot, Seq(cursor.u64().map_err(&fail)?)));
        }
        if cursor.at != body.len() {
            return Err(fail(format!("{} bytes after the last field", body.len() - cursor.at)));
        }
        Ok(Group { before, records, blobs, documents, snapshots })
    }

    /// Opens every record as every read opens it (header, payload length and hash,
    /// strict decode), checks that they are the seqs after `before` and link to it and
    /// to each other, that the last one ends its batch, and that every document and
    /// snapshot entry is one the ledger can store.
    pub fn check(self) -> Result<CheckedGroup, ReplicaError> {
        let id = Group::id_of(&self.encode()).unwrap_or_default();
        self.check_as(id)
    }

    /// [`Group::check`] of a group whose id (the checksum of its byte form) is known.
    fn check_as(self, id: Hash32) -> Result<CheckedGroup, ReplicaError> {
        let mut head = self.before;
        let n_records = self.records.len();
        if self.before.seq.0.checked_add(n_records as u64).is_none() {
            return Err(ReplicaError::Group {
                id: id.to_hex(),
                detail: format!(
                    "it starts at event {} and holds {n_records} events, past the largest seq",
                    self.before.seq
                ),
            });
        }
        for (index, bytes) in self.records.iter().enumerate() {
            let seq = head.seq.next();
            let fail = |detail: String| ReplicaError::Record { index, seq, detail };
            let (event, batch_end) = record::open_in_batch(seq, bytes).map_err(|error| fail(error.to_string()))?;
            if event.prev != head.hash {
                return Err(fail(format!(
                    "broken link: prev is {}, but event {} hashes to {}",
                    event.prev, head.seq, head.hash
                )));
            }
            if index + 1 == n_records && batch_end == Some(false) {
                return Err(fail("the group ends inside a batch".into()));
            }
            head = Head { seq, hash: event.hash };
        }
        for document in &self.documents {
            if ledger_model::validate::document_key(&document.key).is_err() {
                return Err(ReplicaError::Content(format!(
                    "document {}: shelf key {:?} cannot be stored",
                    document.id, document.key
                )));
            }
            if document.bytes.len() > DOCUMENT_BYTES_MAX {
                return Err(ReplicaError::Content(format!(
                    "document {}: {} bytes, over the limit of {DOCUMENT_BYTES_MAX}",
                    document.id,
                    document.bytes.len()
                )));
            }
        }
        for (snapshot, revision) in &self.snapshots {
            if *revision <= self.before.seq || *revision > head.seq {
                return Err(ReplicaError::Content(format!(
                    "snapshot index entry {snapshot} names revision {revision}, outside the group's events {}..={}",
                    self.before.seq.next(),
                    head.seq
                )));
            }
        }
        // Postcondition: the group's events are the seqs right after its start.
        assert_eq!(head.seq.0 - self.before.seq.0, n_records as u64, "a checked group holds one event per record");
        Ok(CheckedGroup { group: self, end: head, id })
    }
}

/// A group whose records were all opened and found to form a chain from its
/// `before` head ([`Group::check`]): the only kind [`crate::Ledger::apply_replica`]
/// takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedGroup {
    group: Group,
    end: Head,
    id: Hash32,
}

impl CheckedGroup {
    /// The group.
    pub fn group(&self) -> &Group {
        &self.group
    }

    /// The head the group starts at.
    pub fn before(&self) -> Head {
        self.group.before
    }

    /// The head after the group.
    pub fn end(&self) -> Head {
        self.end
    }

    /// The group's id: the checksum of its byte form.
    pub fn id(&self) -> Hash32 {
        self.id
    }
}

/// Reads the fields of a group's byte form, never past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "truncated: {n} bytes wanted at byte {}, {} left",
                self.at,
                self.bytes.len() - self.at
            ));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn hash(&mut self) -> Result<Hash32, String> {
        Ok(Hash32(self.array()?))
    }

    /// A count of items of at least `item_bytes` each: never more than the bytes left
    /// could hold, so a forged count allocates nothing.
    fn count(&mut self, item_bytes: usize) -> Result<usize, String> {
        let count = self.u32()? as usize;
        let left = self.bytes.len() - self.at;
        if count > left / item_bytes {
            return Err(format!(
                "a count of {count} items at byte {}, more than the {left} bytes left hold",
                self.at - 4
            ));
        }
        Ok(count)
    }
}

/// One message of a group in transit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part<'a> {
    /// The group's id.
    pub group: Hash32,
    /// This part's place, from 0.
    pub index: u32,
    /// How many parts the group has.
    pub count: u32,
    /// The next slice of the group's byte form.
    pub bytes: &'a [u8],
}

impl<'a> Part<'a> {
    /// Parses a message as a part.
    pub fn parse(message: &'a [u8]) -> Result<Part<'a>, ReplicaError> {
        if message.len() < PART_HEADER_BYTES {
            return Err(ReplicaError::Part(format!("{} bytes, shorter than a part's header", message.len())));
        }
        if &message[..8] != PART_MAGIC {
            return Err(ReplicaError::Part(format!("unknown magic {:?}", String::from_utf8_lossy(&message[..8]))));
        }
        let mut group = [0u8; 32];
        group.copy_from_slice(&message[8..40]);
        let index = u32::from_le_bytes([message[40], message[41], message[42], message[43]]);
        let count = u32::from_le_bytes([message[44], message[45], message[46], message[47]]);
        if count == 0 || count > PARTS_MAX || index >= count {
            return Err(ReplicaError::Part(format!("part {index} of {count} (at most {PARTS_MAX} parts)")));
        }
        Ok(Part { group: Hash32(group), index, count, bytes: &message[PART_HEADER_BYTES..] })
    }
}

/// Cuts a group's byte form into parts of at most `part_bytes_max` bytes each
/// (header included).
pub fn split(group_bytes: &[u8], part_bytes_max: usize) -> Result<Vec<Vec<u8>>, ReplicaError> {
    if group_bytes.len() > REPLICA_GROUP_BYTES_MAX {
        return Err(ReplicaError::TooLarge { n_bytes: group_bytes.len(), bytes_max: REPLICA_GROUP_BYTES_MAX });
    }
    let id = Group::id_of(group_bytes).ok_or_else(|| ReplicaError::Part("an empty group".into()))?;
    let slice = part_bytes_max.saturating_sub(PART_HEADER_BYTES).max(1);
    let count = group_bytes.len().div_ceil(slice).max(1);
    if count > PARTS_MAX as usize {
        return Err(ReplicaError::TooLarge { n_bytes: group_bytes.len(), bytes_max: PARTS_MAX as usize * slice });
    }
    Ok(group_bytes
        .chunks(slice)
        .enumerate()
        .map(|(index, bytes)| {
            let mut part = Vec::with_capacity(PART_HEADER_BYTES + bytes.len());
            part.extend_from_slice(PART_MAGIC);
            part.extend_from_slice(&id.0);
            part.extend_from_slice(&(index as u32).to_le_bytes());
            part.extend_from_slice(&(count as u32).to_le_bytes());
            part.extend_from_slice(bytes);
            part
        })
        .collect())
}

/// Why a follower skipped a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A part that does not continue the group in progress right after its previous
    /// part (what a writer that lost a race leaves).
    Orphan {
        /// The group it names.
        group: Hash32,
        /// Its index.
        index: u32,
    },
    /// A whole, well-formed group that starts at another head than the book's (it
    /// lost a race to the group applied before it).
    Superseded {
        /// Its id.
        group: Hash32,
        /// Where it starts.
        before: Head,
    },
}

/// What a follower made of one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offered {
    /// A part of a group that is not complete yet.
    Pending,
    /// A message that is not part of the book.
    Skipped(Skip),
    /// A whole group, checked, that starts at the book's head: apply it, then call
    /// [`Follower::applied`].
    Ready(CheckedGroup),
}

#[derive(Clone, Debug)]
struct Pending {
    group: Hash32,
    count: u32,
    next: u32,
    bytes: Vec<u8>,
}

/// Reads a log of parts in order and decides which groups form the book: the same
/// decisions on every node, because they depend only on the messages before.
#[derive(Clone, Debug)]
pub struct Follower {
    head: Head,
    position: u64,
    pending: Option<Pending>,
}

impl Follower {
    /// A follower whose book is at `head`, having read the log up to `position`
    /// (0: nothing), with no group in progress.
    pub fn at(head: Head, position: u64) -> Follower {
        Follower { head, position, pending: None }
    }

    /// The book's head as the follower has it.
    pub fn head(&self) -> Head {
        self.head
    }

    /// The position of the last message read (applied, skipped or pending).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Offers the message at `position` (after every earlier one). `Err` refuses it:
    /// the follower's head and position are as they were, and the book stops here.
    ///
    /// # Panics
    /// If `position` is not after the last message read: the caller reads the log in
    /// order.
    pub fn offer(&mut self, position: u64, message: &[u8]) -> Result<Offered, ReplicaError> {
        // Precondition: positions never move back.
        assert!(position > self.position, "messages are offered in log order ({position} after {})", self.position);
        let (head, position_before) = (self.head, self.position);
        let offered = self.follow(position, message);
        // Postcondition: only an applied group moves the head; the position moves to
        // the message when it is pending or skipped, and a ready group starts at the
        // head it was checked from.
        assert_eq!(self.head, head, "offering a message never moves the head");
        match &offered {
            Ok(Offered::Pending) => {
                assert!(self.position == position && self.pending.is_some(), "a pending part is read and held");
            }
            Ok(Offered::Skipped(_)) => {
                assert!(self.position == position && self.pending.is_none(), "a skipped message ends any group");
            }
            Ok(Offered::Ready(group)) => {
                assert_eq!(group.before(), self.head, "a ready group starts at the head it was checked from");
                assert!(
                    self.position == position_before && self.pending.is_none(),
                    "a ready group waits to be applied"
                );
            }
            Err(_) => assert_eq!(self.position, position_before, "a refused message is not read"),
        }
        offered
    }

    /// [`Follower::offer`] without its assertions.
    fn follow(&mut self, position: u64, message: &[u8]) -> Result<Offered, ReplicaError> {
        let part = Part::parse(message)?;
        // A group in progress survives only if this message continues it.
        let pending = self.pending.take();
        let mut pending = match pending {
            Some(pending) if part.index > 0 && pending.group == part.group && pending.next == part.index => {
                if pending.count != part.count {
                    return Err(ReplicaError::Part(format!(
                        "part {} of group {} says {} parts, part 0 said {}",
                        part.index, part.group, part.count, pending.count
                    )));
                }
                pending
            }
            _ if part.index > 0 => {
                self.position = position;
                return Ok(Offered::Skipped(Skip::Orphan { group: part.group, index: part.index }));
            }
            _ => Pending { group: part.group, count: part.count, next: 0, bytes: Vec::new() },
        };
        if pending.bytes.len() + part.bytes.len() > REPLICA_GROUP_BYTES_MAX {
            return Err(ReplicaError::TooLarge {
                n_bytes: pending.bytes.len() + part.bytes.len(),
                bytes_max: REPLICA_GROUP_BYTES_MAX,
            });
        }
        // A group's parts are contiguous: this one is the next, within the count.
        assert!(
            pending.next == part.index && part.index < pending.count,
            "a group's parts are contiguous (part {} after {} of {})",
            part.index,
            pending.next,
            pending.count
        );
        pending.bytes.extend_from_slice(part.bytes);
        pending.next += 1;
        if pending.next < pending.count {
            self.pending = Some(pending);
            self.position = position;
            return Ok(Offered::Pending);
        }
        if Group::id_of(&pending.bytes) != Some(pending.group) {
            return Err(ReplicaError::Group {
                id: pending.group.to_hex(),
                detail: "its parts do not end in the id they name".into(),
            });
        }
        let group = Group::decode(&pending.bytes)?.check_as(pending.group)?;
        if group.before() != self.head {
            self.position = position;
            return Ok(Offered::Skipped(Skip::Superseded { group: pending.group, before: group.before() }));
        }
        Ok(Offered::Ready(group))
    }

    /// Records that the group [`Follower::offer`] handed out for the message at
    /// `position` was applied.
    ///
    /// # Panics
    /// If `group` does not start at the follower's head or `position` is not after
    /// the last message read: it is not the group `offer` handed out.
    pub fn applied(&mut self, position: u64, group: &CheckedGroup) {
        // Precondition: the group is the one handed out, at the head it was checked
        // from, and positions never move back.
        assert_eq!(group.before(), self.head, "an applied group starts at the head it was checked from");
        assert!(position > self.position, "a group is applied at a later message ({position} after {})", self.position);
        assert!(group.end().seq >= group.before().seq, "a group's end is not before its start");
        self.head = group.end();
        self.position = position;
        self.pending = None;
    }
}

/// Where a replica's last group is in the external log, stored with the group in
/// the same transaction (`meta.replica`), so a node can check on opening that the log
/// still holds what its file ends at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicaPosition {
    /// The log position of the group's last part (0: an empty replica).
    pub position: u64,
    /// The group's id.
    pub group: Hash32,
}

impl ReplicaPosition {
    pub(crate) fn to_bytes(self) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[..8].copy_from_slice(&self.position.to_le_bytes());
        out[8..].copy_from_slice(&self.group.0);
        out
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<ReplicaPosition> {
        let position = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
        let group: [u8; 32] = bytes.get(8..40)?.try_into().ok()?;
        (bytes.len() == 40).then_some(ReplicaPosition { position, group: Hash32(group) })
    }
}

/// What kind of refusal a commit gate gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateRefusalKind {
    /// The book moved on elsewhere (another writer got there first): catch up and
    /// decide again. Nothing of the group is in the book.
    Stale,
    /// The external log did not answer in time: the outcome is unknown (the group
    /// may be in the log), as for a write cut off by a timeout.
    Unavailable,
    /// The external log holds something the book cannot take (damage, forgery, a
    /// log that lost what this file holds): writes stop until it is repaired.
    Refused,
    /// The group cannot be replicated (too large for the log).
    Invalid,
}

/// Why a commit gate stopped a group: nothing of it was written locally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateRefusal {
    /// What kind.
    pub kind: GateRefusalKind,
    /// What happened, naming the book and the log position where there is one.
    pub detail: String,
}

impl std::fmt::Display for GateRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

/// Sees every group a ledger's writer thread is about to commit and decides whether
/// it may ([`crate::Ledger::set_gate`]): called on the writer thread after the group
/// is sealed inside its transaction and before the durable commit. `Ok(position)`
/// lets the commit go on and stores `position` with it; `Err` aborts the transaction, and
/// every batch of the group is answered with the refusal.
///
/// A replicating gate publishes the group to its log here; it must not call back
/// into the ledger (the writer thread is waiting for it).
pub trait CommitGate: Send + Sync {
    /// Admits `group` (sealed at `group.before`), or refuses it.
    fn admit(&self, group: &Group) -> Result<ReplicaPosition, GateRefusal>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_model::record::{seal_in_batch, SCHEMA_CURRENT};
    use ledger_model::{Body, NewEvent, TermRetired};

    fn event(n: u32) -> NewEvent {
        NewEvent {
            recorded_at_ms: 7,
            actor: "human:test".into(),
            source: "test".into(),
            body: Body::TermRetired(TermRetired { id: format!("T-{n}").parse().unwrap(), reason: None }),
        }
    }

    /// A group of `n` one-event batches after `before`.
    fn group(before: Head, n: u32, tag: u32) -> Group {
        let mut head = before;
        let mut records = Vec::new();
        for i in 0..n {
            let payload = event(tag * 1000 + i).encode().unwrap();
            let seq = head.seq.next();
            let (bytes, hash) = seal_in_batch(seq, head.hash, SCHEMA_CURRENT, &payload, true);
            records.push(bytes);
            head = Head { seq, hash };
        }
        let documents =
            vec![Document { id: Hash32([tag as u8; 32]), bytes: vec![1, 2, 3], group: 1, key: "c1".into() }];
        Group { before, records, blobs: vec![(Hash32([9; 32]), vec![4; 10])], documents, snapshots: vec![] }
    }

    #[test]
    fn a_group_reads_back_as_itself_and_checks() {
        let group = group(Head::EMPTY, 3, 1);
        let bytes = group.encode();
        let decoded = Group::decode(&bytes).unwrap();
        assert_eq!(decoded, group);
        let checked = decoded.check().unwrap();
        assert_eq!(checked.end().seq, Seq(3));
        for cut in [0, 1, 20, bytes.len() - 33, bytes.len() - 1] {
            assert!(Group::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[60] ^= 1;
        assert!(matches!(Group::decode(&flipped), Err(ReplicaError::Group { .. })));
    }

    #[test]
    fn a_changed_record_with_a_new_checksum_is_refused_by_the_chain() {
        let mut group = group(Head::EMPTY, 3, 1);
        let last = group.records[1].len() - 1;
        group.records[1][last] ^= 1;
        let error = Group::decode(&group.encode()).unwrap().check().unwrap_err();
        assert!(matches!(error, ReplicaError::Record { index: 1, seq: Seq(2), .. }), "{error}");
        assert!(error.to_string().contains("payload hash"), "{error}");
    }

    fn parts(group: &Group, size: usize) -> Vec<Vec<u8>> {
        split(&group.encode(), size).unwrap()
    }

    #[test]
    fn the_follower_applies_whole_groups_at_the_head_and_skips_what_races_leave() {
        let first = group(Head::EMPTY, 2, 1);
        let first_end = first.clone().check().unwrap().end();
        // Loses the race: also starts at the empty book.
        let loser = group(Head::EMPTY, 1, 2);
        let second = group(first_end, 4, 3);
        let second_parts = parts(&second, 200);
        assert!(second_parts.len() > 2);
        let abandoned = parts(&group(first_end, 5, 4), 200);

        let mut follower = Follower::at(Head::EMPTY, 0);
        let mut position = 0;
        let mut offer = |follower: &mut Follower, message: &[u8]| {
            position += 1;
            let offered = follower.offer(position, message).unwrap();
            if let Offered::Ready(group) = &offered {
                follower.applied(position, group);
            }
            offered
        };
        assert!(matches!(offer(&mut follower, &parts(&first, 1 << 20)[0]), Offered::Ready(_)));
        assert!(matches!(offer(&mut follower, &parts(&loser, 1 << 20)[0]), Offered::Skipped(Skip::Superseded { .. })));
        // An abandoned group: two parts, then a new group starts.
        assert_eq!(offer(&mut follower, &abandoned[0]), Offered::Pending);
        assert_eq!(offer(&mut follower, &abandoned[1]), Offered::Pending);
        assert_eq!(offer(&mut follower, &second_parts[0]), Offered::Pending);
        // The abandoned group's next part comes too late: an orphan, which also ends
        // the group in progress.
        assert!(matches!(offer(&mut follower, &abandoned[2]), Offered::Skipped(Skip::Orphan { index: 2, .. })));
        assert!(matches!(offer(&mut follower, &second_parts[1]), Offered::Skipped(Skip::Orphan { index: 1, .. })));
        assert_eq!(follower.head(), first_end);
        // The same group published again whole is applied.
        let last = second_parts.len() - 1;
        for part in &second_parts[..last] {
            assert_eq!(offer(&mut follower, part), Offered::Pending);
        }
        assert!(matches!(offer(&mut follower, &second_parts[last]), Offered::Ready(_)));
        assert_eq!(follower.head().seq, Seq(6));
        assert_eq!(follower.position(), position);
    }

    #[test]
    fn damage_is_refused_and_leaves_the_follower_as_it_was() {
        let good = group(Head::EMPTY, 2, 1);
        let mut follower = Follower::at(Head::EMPTY, 0);
        for bad in [b"not a part at all, not at all, not at all, not..".to_vec(), vec![0; 10]] {
            assert!(matches!(follower.offer(1, &bad), Err(ReplicaError::Part(_))));
        }
        // A part whose bytes were changed: the group fails its checksum.
        let mut changed = parts(&good, 1 << 20).remove(0);
        let at = changed.len() / 2;
        changed[at] ^= 0x40;
        assert!(matches!(follower.offer(1, &changed), Err(ReplicaError::Group { .. })));
        // A forged record resealed into a group with a fresh checksum: the chain.
        let mut forged = good.clone();
        let end = forged.records[0].len() - 1;
        forged.records[0][end] ^= 1;
        let error = follower.offer(1, &parts(&forged, 1 << 20)[0]).unwrap_err();
        assert!(matches!(error, ReplicaError::Record { index: 0, .. }), "{error}");
        assert_eq!((follower.head(), follower.position()), (Head::EMPTY, 0));
        assert!(matches!(follower.offer(1, &parts(&good, 1 << 20)[0]), Ok(Offered::Ready(_))));
    }

    #[test]
    fn a_group_may_not_end_inside_a_batch_or_name_snapshots_outside_it() {
        let mut cut = group(Head::EMPTY, 1, 1);
        let payload = event(5).encode().unwrap();
        let (record, _) = seal_in_batch(Seq(1), Hash32::GENESIS, SCHEMA_CURRENT, &payload, false);
        cut.records = vec![record];
        assert!(cut.check().unwrap_err().to_string().contains("inside a batch"));
        let mut snapshot = group(Head::EMPTY, 1, 1);
        snapshot.snapshots.push((Hash32([1; 32]), Seq(2)));
        assert!(matches!(snapshot.check(), Err(ReplicaError::Content(_))));
    }

    #[test]
    fn a_group_whose_events_would_pass_the_largest_seq_is_refused_not_a_panic() {
        let mut forged = group(Head::EMPTY, 1, 1);
        forged.before = Head { seq: Seq(u64::MAX), hash: Hash32::GENESIS };
        let mut follower = Follower::at(Head::EMPTY, 0);
        let error = follower.offer(1, &parts(&forged, 1 << 20)[0]).unwrap_err();
        assert!(matches!(error, ReplicaError::Group { .. }), "{error}");
        assert!(error.to_string().contains("past the largest seq"), "{error}");
        assert!(matches!(forged.check(), Err(ReplicaError::Group { .. })));
    }

    #[test]
    fn split_parts_parse_and_count() {
        let bytes = group(Head::EMPTY, 3, 1).encode();
        let parts = split(&bytes, PART_HEADER_BYTES + 100).unwrap();
        assert_eq!(parts.len(), bytes.len().div_ceil(100));
        let mut joined = Vec::new();
        for (index, part) in parts.iter().enumerate() {
            let parsed = Part::parse(part).unwrap();
            assert_eq!((parsed.index as usize, parsed.count as usize), (index, parts.len()));
            joined.extend_from_slice(parsed.bytes);
        }
        assert_eq!(joined, bytes);
        let mut large = group(Head::EMPTY, 1, 1);
        large.blobs.push((Hash32([3; 32]), vec![0; PARTS_MAX as usize]));
        assert!(matches!(split(&large.encode(), PART_HEADER_BYTES + 1), Err(ReplicaError::TooLarge { .. })));
    }
}
