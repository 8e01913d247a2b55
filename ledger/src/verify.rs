//! The part of [`crate::Ledger::verify`] past the event chain: every other stored
//! object, read in the caller's transaction.

use ledger_model::{Hash32, Seq};
use redb::{Database, ReadTransaction, ReadableTable};

use crate::store::{checked, BLOBS, CACHE, DOCUMENTS, DOCUMENT_LOG, SHELVES, SNAPSHOTS};

/// The first damaged object found.
pub(crate) struct Damage {
    pub(crate) object: String,
    pub(crate) detail: String,
}

/// What the object walk found.
pub(crate) struct Objects {
    pub(crate) n_blobs: u64,
    pub(crate) n_documents: u64,
    /// Cache entries failing their checksum (derived data: dropped, not damage).
    pub(crate) bad_cache: Vec<Hash32>,
    pub(crate) damage: Option<Damage>,
}

fn damage(object: String, detail: impl Into<String>) -> Option<Damage> {
    Some(Damage { object, detail: detail.into() })
}

/// Counts the checksummed entries of `table` (blobs or documents, keyed by content
/// id) up to the first that fails its checksum, which is named as a `kind`.
fn count_checked(
    table: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    kind: &str,
) -> Result<(u64, Option<Damage>), redb::Error> {
    let mut n_entries = 0u64;
    for entry in table.iter()? {
        let (key, value) = entry?;
        n_entries += 1;
        if checked(value.value()).is_none() {
            return Ok((n_entries, damage(format!("{kind} {}", Hash32(*key.value())), "fails its checksum")));
        }
    }
    Ok((n_entries, None))
}

/// Checks blobs and documents against their checksums, the document log (dense
/// from 1, every id a stored document, every document logged once), the shelves
/// (every position in the log with the same id), the snapshot index (revisions
/// within the head) and the cache checksums.
pub(crate) fn objects(txn: &ReadTransaction, head: Seq) -> Result<Objects, redb::Error> {
    let mut out = Objects { n_blobs: 0, n_documents: 0, bad_cache: Vec::new(), damage: None };
    (out.n_blobs, out.damage) = count_checked(&txn.open_table(BLOBS)?, "blob")?;
    if out.damage.is_some() {
        return Ok(out);
    }
    let documents = txn.open_table(DOCUMENTS)?;
    (out.n_documents, out.damage) = count_checked(&documents, "document")?;
    if out.damage.is_some() {
        return Ok(out);
    }
    let log = txn.open_table(DOCUMENT_LOG)?;
    let mut logged = Vec::new();
    for (index, entry) in log.iter()?.enumerate() {
        let (key, value) = entry?;
        let position = key.value();
        let id = Hash32(*value.value());
        if position != index as u64 + 1 {
            out.damage =
                damage(format!("document log position {position}"), format!("expected position {}", index + 1));
            return Ok(out);
        }
        if documents.get(&id.0)?.is_none() {
            out.damage =
                damage(format!("document log position {position}"), format!("names document {id}, not stored"));
            return Ok(out);
        }
        logged.push(id);
    }
    if logged.len() as u64 != out.n_documents {
        let detail = format!("{} documents stored, {} logged", out.n_documents, logged.len());
        out.damage = damage("the document log".into(), detail);
        return Ok(out);
    }
    let shelves = txn.open_table(SHELVES)?;
    let mut n_filed = 0u64;
    for entry in shelves.iter()? {
        let (key, value) = entry?;
        let (group, shelf_key, position) = key.value();
        let id = Hash32(*value.value());
        let object = || format!("shelf entry (group {group}, key {shelf_key:?}, position {position})");
        let at = usize::try_from(position).ok().and_then(|position| position.checked_sub(1));
        if at.and_then(|at| logged.get(at)) != Some(&id) {
            out.damage = damage(object(), format!("names document {id}, which the document log does not have there"));
            return Ok(out);
        }
        n_filed += 1;
    }
    if n_filed != out.n_documents {
        let detail = format!("{} documents stored, {n_filed} filed on shelves", out.n_documents);
        out.damage = damage("the shelves".into(), detail);
        return Ok(out);
    }
    let snapshots = txn.open_table(SNAPSHOTS)?;
    for entry in snapshots.iter()? {
        let (key, value) = entry?;
        let revision = value.value();
        if revision == 0 || revision > head.0 {
            let object = format!("snapshot index entry {}", Hash32(*key.value()));
            out.damage = damage(object, format!("revision {revision} is outside 1..={head}"));
            return Ok(out);
        }
    }
    let cache = txn.open_table(CACHE)?;
    for entry in cache.iter()? {
        let (key, value) = entry?;
        if checked(value.value()).is_none() {
            out.bad_cache.push(Hash32(*key.value()));
        }
    }
    Ok(out)
}

/// Deletes the named cache entries.
pub(crate) fn drop_cache(db: &Database, keys: &[Hash32]) -> Result<(), redb::Error> {
    let txn = db.begin_write()?;
    {
        let mut cache = txn.open_table(CACHE)?;
        for key in keys {
            cache.remove(&key.0)?;
        }
    }
    txn.commit()?;
    Ok(())
}
