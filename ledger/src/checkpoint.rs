//! Checkpoints: derived bytes (a folded state, for `book`) filed by the revision
//! they were taken at, with the chain hash of that revision, so a reader can start
//! there instead of at event 1.
//!
//! The ledger does not know what a checkpoint holds. It vouches only that the bytes
//! are the ones written (a checksum) and that they were taken on this log: the chain
//! hash stored with them is the hash of the event at their revision. A checkpoint
//! failing either is never handed out; a writable handle drops it. Like the cache,
//! checkpoints are not part of the chain and can all be dropped
//! ([`Ledger::clear_checkpoints`]) and rewritten.
//!
//! Stored as `checksum ‖ chain hash ‖ written_at_ms (u64 LE) ‖ bytes` in the
//! `checkpoints` table, and the same header (`chain hash ‖ written_at_ms ‖ length`,
//! 48 bytes) in `checkpoint_heads`, so listing and choosing a checkpoint read a few
//! bytes, not megabytes. Both tables are created on first write; a book without them
//! has no checkpoints.

use ledger_model::record;
use ledger_model::{Hash32, Seq};
use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata, TableDefinition, TableError};

use crate::error::ReadError;
use crate::store::{blob_record, checked, read_error, EVENTS};
use crate::Ledger;

pub(crate) const CHECKPOINTS: TableDefinition<u64, &[u8]> = TableDefinition::new("checkpoints");
pub(crate) const CHECKPOINT_HEADS: TableDefinition<u64, &[u8; 48]> = TableDefinition::new("checkpoint_heads");

/// Newest checkpoints [`Ledger::put_checkpoint`] always keeps when it prunes.
pub const CHECKPOINTS_RECENT: usize = 2;

/// A stored checkpoint, without its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The revision it was taken at.
    pub revision: Seq,
    /// The chain hash of that revision.
    pub chain: Hash32,
    /// When it was written, unix ms (informational: when the next one is due).
    pub written_at_ms: u64,
    /// Size of its bytes.
    pub n_bytes: u64,
}

/// A stored value split into its parts, if its checksum holds.
fn parse(revision: u64, stored: &[u8]) -> Option<(CheckpointInfo, &[u8])> {
    let inner = checked(stored)?;
    let (chain, rest) = inner.split_at_checked(32)?;
    let (written, bytes) = rest.split_at_checked(8)?;
    let info = CheckpointInfo {
        revision: Seq(revision),
        chain: Hash32(chain.try_into().ok()?),
        written_at_ms: u64::from_le_bytes(written.try_into().ok()?),
        n_bytes: bytes.len() as u64,
    };
    Some((info, bytes))
}

/// A `checkpoint_heads` entry.
fn head_bytes(info: &CheckpointInfo) -> [u8; 48] {
    let mut out = [0u8; 48];
    out[..32].copy_from_slice(&info.chain.0);
    out[32..40].copy_from_slice(&info.written_at_ms.to_le_bytes());
    out[40..].copy_from_slice(&info.n_bytes.to_le_bytes());
    out
}

fn parse_head(revision: u64, bytes: &[u8; 48]) -> CheckpointInfo {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    CheckpointInfo {
        revision: Seq(revision),
        chain: Hash32(bytes[..32].try_into().expect("32 bytes")),
        written_at_ms: word(32),
        n_bytes: word(40),
    }
}

/// The chain hash of event `seq`, read in `events`.
fn chain_at(events: &impl ReadableTable<u64, &'static [u8]>, seq: Seq) -> Result<Option<Hash32>, ReadError> {
    let Some(guard) = events.get(seq.0).map_err(read_error)? else { return Ok(None) };
    match record::open(seq, guard.value()) {
        Ok(event) => Ok(Some(event.hash)),
        Err(error) => Err(ReadError::Corrupted { seq, detail: error.to_string() }),
    }
}

/// What the checkpoint walk of [`crate::Ledger::verify`] found.
pub(crate) struct Checked {
    pub(crate) n_good: u64,
    /// Revisions of checkpoints that fail their checksum, disagree with their
    /// header, or were not taken on this log.
    pub(crate) bad: Vec<u64>,
}

/// Opens a checkpoint table in a read transaction; `None` when the book has none.
macro_rules! open_or_none {
    ($txn:expr, $table:expr) => {
        match $txn.open_table($table) {
            Ok(table) => Some(table),
            Err(TableError::TableDoesNotExist(_)) => None,
            Err(error) => return Err(read_error(error)),
        }
    };
}

/// Checks every checkpoint in `txn`: its checksum, its header, and its chain hash.
pub(crate) fn check_all(txn: &ReadTransaction) -> Result<Checked, ReadError> {
    let mut out = Checked { n_good: 0, bad: Vec::new() };
    let (Some(heads), Some(table)) = (open_or_none!(txn, CHECKPOINT_HEADS), open_or_none!(txn, CHECKPOINTS)) else {
        return Ok(out);
    };
    let events = txn.open_table(EVENTS).map_err(read_error)?;
    let mut revisions = std::collections::BTreeSet::new();
    for entry in heads.iter().map_err(read_error)? {
        revisions.insert(entry.map_err(read_error)?.0.value());
    }
    for entry in table.iter().map_err(read_error)? {
        revisions.insert(entry.map_err(read_error)?.0.value());
    }
    for revision in revisions {
        let head = heads.get(revision).map_err(read_error)?.map(|guard| parse_head(revision, guard.value()));
        let stored = table.get(revision).map_err(read_error)?;
        let good = match (head, stored.as_ref().and_then(|guard| parse(revision, guard.value()))) {
            (Some(head), Some((info, _))) => head == info && chain_at(&events, Seq(revision))? == Some(info.chain),
            _ => false,
        };
        if good {
            out.n_good += 1;
        } else {
            out.bad.push(revision);
        }
    }
    Ok(out)
}

impl Ledger {
    /// The newest checkpoint at or before `revision` whose checksum holds, whose
    /// header agrees, and whose chain hash is this log's at its revision, with its
    /// bytes. Checkpoints failing any of these are skipped, and dropped when the
    /// handle is writable.
    pub fn checkpoint_at_or_before(&self, revision: Seq) -> Result<Option<(CheckpointInfo, Vec<u8>)>, ReadError> {
        let (found, bad) = self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let (Some(heads), Some(table)) = (open_or_none!(txn, CHECKPOINT_HEADS), open_or_none!(txn, CHECKPOINTS))
            else {
                return Ok((None, Vec::new()));
            };
            let events = txn.open_table(EVENTS).map_err(read_error)?;
            let mut bad = Vec::new();
            for entry in heads.range(..=revision.0).map_err(read_error)?.rev() {
                let (key, value) = entry.map_err(read_error)?;
                let head = parse_head(key.value(), value.value());
                if chain_at(&events, head.revision)? != Some(head.chain) {
                    bad.push(head.revision.0);
                    continue;
                }
                let stored = table.get(head.revision.0).map_err(read_error)?;
                match stored.as_ref().and_then(|guard| parse(head.revision.0, guard.value())) {
                    Some((info, bytes)) if info == head => return Ok((Some((info, bytes.to_vec())), bad)),
                    _ => bad.push(head.revision.0),
                }
            }
            Ok((None, bad))
        })?;
        if !bad.is_empty() && !self.is_read_only() {
            self.drop_checkpoints(&bad)?;
        }
        Ok(found)
    }

    /// Every checkpoint, oldest first, by its header (the bytes are not read or
    /// checked: [`Ledger::checkpoint_at_or_before`] and [`Ledger::verify`] do that).
    pub fn checkpoints(&self) -> Result<Vec<CheckpointInfo>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let Some(heads) = open_or_none!(txn, CHECKPOINT_HEADS) else { return Ok(Vec::new()) };
            let mut out = Vec::new();
            for entry in heads.iter().map_err(read_error)? {
                let (key, value) = entry.map_err(read_error)?;
                out.push(parse_head(key.value(), value.value()));
            }
            Ok(out)
        })
    }

    /// Files `bytes` as the checkpoint at `revision` (an event of the log), then
    /// prunes the checkpoints to at most `keep`: the [`CHECKPOINTS_RECENT`] newest,
    /// and older ones spread over the log, so an `--as-of` far back still starts
    /// near its revision. One durable commit; the log is not touched.
    pub fn put_checkpoint(
        &self,
        revision: Seq,
        written_at_ms: u64,
        bytes: &[u8],
        keep: usize,
    ) -> Result<(), ReadError> {
        let db = self.shared.db.writable()?;
        let txn = db.begin_write().map_err(read_error)?;
        {
            let events = txn.open_table(EVENTS).map_err(read_error)?;
            let Some(chain) = chain_at(&events, revision)? else {
                drop(events);
                return Err(ReadError::NotFound { seq: revision, head: self.head()?.seq });
            };
            let info = CheckpointInfo { revision, chain, written_at_ms, n_bytes: bytes.len() as u64 };
            let mut value = Vec::with_capacity(40 + bytes.len());
            value.extend_from_slice(&chain.0);
            value.extend_from_slice(&written_at_ms.to_le_bytes());
            value.extend_from_slice(bytes);
            let mut table = txn.open_table(CHECKPOINTS).map_err(read_error)?;
            let mut heads = txn.open_table(CHECKPOINT_HEADS).map_err(read_error)?;
            table.insert(revision.0, blob_record(&value).as_slice()).map_err(read_error)?;
            heads.insert(revision.0, &head_bytes(&info)).map_err(read_error)?;
            let mut revisions = Vec::new();
            for entry in heads.iter().map_err(read_error)? {
                revisions.push(entry.map_err(read_error)?.0.value());
            }
            for gone in pruned(&revisions, keep) {
                table.remove(gone).map_err(read_error)?;
                heads.remove(gone).map_err(read_error)?;
            }
        }
        txn.commit().map_err(read_error)
    }

    /// Drops the checkpoints at `revisions`.
    pub fn drop_checkpoints(&self, revisions: &[u64]) -> Result<(), ReadError> {
        let db = self.shared.db.writable()?;
        let txn = db.begin_write().map_err(read_error)?;
        {
            let mut table = txn.open_table(CHECKPOINTS).map_err(read_error)?;
            let mut heads = txn.open_table(CHECKPOINT_HEADS).map_err(read_error)?;
            for revision in revisions {
                table.remove(*revision).map_err(read_error)?;
                heads.remove(*revision).map_err(read_error)?;
            }
        }
        txn.commit().map_err(read_error)
    }

    /// Drops every checkpoint; returns how many there were.
    pub fn clear_checkpoints(&self) -> Result<u64, ReadError> {
        let db = self.shared.db.writable()?;
        let txn = db.begin_write().map_err(read_error)?;
        let n_dropped;
        {
            let mut table = txn.open_table(CHECKPOINTS).map_err(read_error)?;
            let mut heads = txn.open_table(CHECKPOINT_HEADS).map_err(read_error)?;
            n_dropped = table.len().map_err(read_error)?.max(heads.len().map_err(read_error)?);
            table.retain(|_, _| false).map_err(read_error)?;
            heads.retain(|_, _| false).map_err(read_error)?;
        }
        txn.commit().map_err(read_error)?;
        Ok(n_dropped)
    }
}

/// Which of `revisions` (ascending) go so that at most `keep` remain: never the
/// [`CHECKPOINTS_RECENT`] newest; otherwise, repeatedly, the one whose removal
/// leaves the smallest gap between its neighbours (event 0 counting as the first
/// neighbour), the older on a tie. What remains is spread over the log.
fn pruned(revisions: &[u64], keep: usize) -> Vec<u64> {
    let keep = keep.max(CHECKPOINTS_RECENT);
    let mut kept = revisions.to_vec();
    let mut gone = Vec::new();
    while kept.len() > keep {
        let n_candidates = kept.len() - CHECKPOINTS_RECENT;
        let merged_gap = |index: usize| kept[index + 1] - if index == 0 { 0 } else { kept[index - 1] };
        let index = (0..n_candidates).min_by_key(|&index| (merged_gap(index), kept[index])).unwrap_or(0);
        gone.push(kept.remove(index));
    }
    gone
}

#[cfg(test)]
mod tests {
    use super::pruned;

    #[test]
    fn pruning_keeps_the_newest_and_spreads_the_rest() {
        assert_eq!(pruned(&[10, 20, 30], 4), Vec::<u64>::new());
        // Dropping 10 or 20 leaves a gap of 20 (0..20, 10..30): the older goes.
        assert_eq!(pruned(&[10, 20, 30, 1000, 1010], 4), [10]);
        // The newest two stay whatever the gaps; then 9998 (gap 5000..9999), then
        // 100 (gap 0..5000, smaller than 100..9999).
        assert_eq!(pruned(&[100, 5000, 9998, 9999, 10_000], 3), [9998, 100]);
        assert_eq!(pruned(&[1, 2], 0), Vec::<u64>::new());
    }
}
