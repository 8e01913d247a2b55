//! Derived sets: checksummed bytes a caller can recompute from the log and what it
//! has besides (an embedding model's vectors, say), filed under a set name and a key.
//!
//! The ledger does not know what a set holds or how it was computed. It vouches only
//! that the bytes it hands out are the ones written (a checksum, as for blobs and the
//! cache), and it keeps the sets out of the chain: nothing in the log refers to them,
//! and a set can be dropped whole ([`Ledger::derived_clear`]) and recomputed. An entry
//! whose checksum fails is never handed out: reads skip it (and drop it on a writable
//! handle), and [`Ledger::verify`] counts it as dropped, not as damage of the book.
//!
//! Stored in the `derived` table, keyed by `(set, key)`, as `checksum ‖ bytes`. The
//! table is created on the first write; a book without it has no derived sets.

use std::ops::ControlFlow;

use redb::{ReadTransaction, ReadableTable, TableDefinition, TableError};

use crate::error::{storage_io, AppendError, ReadError};
use crate::store::{blob_record, checked, read_error, Db};
use crate::Ledger;

pub(crate) const DERIVED: TableDefinition<(&str, &[u8]), &[u8]> = TableDefinition::new("derived");

/// Longest set name, in bytes.
pub const DERIVED_SET_BYTES_MAX: usize = 64;
/// Longest key of a derived entry, in bytes.
pub const DERIVED_KEY_BYTES_MAX: usize = 1_024;
/// Largest derived entry, in bytes (as a document).
pub const DERIVED_VALUE_BYTES_MAX: usize = ledger_model::limits::DOCUMENT_BYTES_MAX;

/// One derived set and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivedSet {
    /// Its name.
    pub name: String,
    /// Its entries.
    pub n_entries: u64,
    /// The bytes of its keys and stored values (checksums included).
    pub n_bytes: u64,
}

/// What a walk over every derived entry found ([`Ledger::verify`]).
pub(crate) struct Checked {
    pub(crate) n_good: u64,
    /// Entries failing their checksum, as `(set, key)`.
    pub(crate) bad: Vec<(String, Vec<u8>)>,
}

/// The `derived` table as a read transaction sees it.
type DerivedTable = redb::ReadOnlyTable<(&'static str, &'static [u8]), &'static [u8]>;

fn open_or_none(txn: &ReadTransaction) -> Result<Option<DerivedTable>, ReadError> {
    match txn.open_table(DERIVED) {
        Ok(table) => Ok(Some(table)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(error) => Err(read_error(error)),
    }
}

/// Checks every derived entry's checksum.
pub(crate) fn check_all(txn: &ReadTransaction) -> Result<Checked, ReadError> {
    let mut out = Checked { n_good: 0, bad: Vec::new() };
    let Some(table) = open_or_none(txn)? else { return Ok(out) };
    for entry in table.iter().map_err(read_error)? {
        let (key, value) = entry.map_err(read_error)?;
        if checked(value.value()).is_some() {
            out.n_good += 1;
        } else {
            let (set, key) = key.value();
            out.bad.push((set.to_owned(), key.to_vec()));
        }
    }
    Ok(out)
}

fn check_set(set: &str) -> Result<(), AppendError> {
    if set.is_empty() || set.len() > DERIVED_SET_BYTES_MAX || set.chars().any(char::is_control) {
        return Err(AppendError::DerivedEntry {
            set: set.chars().take(80).collect(),
            reason: format!("a set name is 1 to {DERIVED_SET_BYTES_MAX} bytes without control characters"),
        });
    }
    Ok(())
}

fn storage(error: impl Into<redb::Error>) -> AppendError {
    AppendError::Io(storage_io(error.into()))
}

/// Whether `key` is in the range a scan of `prefix` covers.
fn has_prefix(key: &[u8], prefix: &[u8]) -> bool {
    key.starts_with(prefix)
}

impl Ledger {
    /// The entry `key` of set `set`: `Ok(None)` when absent or when its checksum fails
    /// (a damaged entry is dropped, on a writable handle, and recomputed by its caller).
    pub fn derived_get(&self, set: &str, key: &[u8]) -> Result<Option<Vec<u8>>, ReadError> {
        let (found, bad) = self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let Some(table) = open_or_none(&txn)? else { return Ok((None, false)) };
            let Some(guard) = table.get((set, key)).map_err(read_error)? else { return Ok((None, false)) };
            Ok(match checked(guard.value()) {
                Some(bytes) => (Some(bytes.to_vec()), false),
                None => (None, true),
            })
        })?;
        if bad {
            self.drop_derived(&[(set.to_owned(), key.to_vec())])?;
        }
        Ok(found)
    }

    /// Calls `visit` with every entry of set `set` whose key starts with `prefix`, in
    /// key order, with its checked bytes, until it breaks; all read in one
    /// transaction. Entries failing their checksum are skipped (and dropped on a
    /// writable handle); returns how many were.
    pub fn derived_scan(
        &self,
        set: &str,
        prefix: &[u8],
        mut visit: impl FnMut(&[u8], &[u8]) -> ControlFlow<()>,
    ) -> Result<u64, ReadError> {
        let bad = self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let Some(table) = open_or_none(&txn)? else { return Ok(Vec::new()) };
            let mut bad = Vec::new();
            for entry in table.range((set, prefix)..).map_err(read_error)? {
                let (key, value) = entry.map_err(read_error)?;
                let (entry_set, entry_key) = key.value();
                if entry_set != set || !has_prefix(entry_key, prefix) {
                    break;
                }
                match checked(value.value()) {
                    Some(bytes) => {
                        if visit(entry_key, bytes).is_break() {
                            break;
                        }
                    }
                    None => bad.push((set.to_owned(), entry_key.to_vec())),
                }
            }
            Ok(bad)
        })?;
        let n_bad = bad.len() as u64;
        if !bad.is_empty() {
            self.drop_derived(&bad)?;
        }
        Ok(n_bad)
    }

    /// The keys of set `set`, in key order, without reading or checking the bytes.
    pub fn derived_keys(&self, set: &str) -> Result<Vec<Vec<u8>>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let Some(table) = open_or_none(&txn)? else { return Ok(Vec::new()) };
            let mut keys = Vec::new();
            for entry in table.range((set, &[][..])..).map_err(read_error)? {
                let (key, _) = entry.map_err(read_error)?;
                let (entry_set, entry_key) = key.value();
                if entry_set != set {
                    break;
                }
                keys.push(entry_key.to_vec());
            }
            Ok(keys)
        })
    }

    /// Files `put` (key, bytes) in set `set` (replacing entries with the same keys)
    /// and removes the entries `remove`, in one durable commit that does not touch the
    /// log.
    pub fn derived_write(&self, set: &str, put: &[(Vec<u8>, Vec<u8>)], remove: &[Vec<u8>]) -> Result<(), AppendError> {
        check_set(set)?;
        for (key, value) in put {
            if key.len() > DERIVED_KEY_BYTES_MAX {
                return Err(AppendError::DerivedEntry {
                    set: set.to_owned(),
                    reason: format!("a key of {} bytes is over the limit of {DERIVED_KEY_BYTES_MAX}", key.len()),
                });
            }
            if value.len() > DERIVED_VALUE_BYTES_MAX {
                return Err(AppendError::DerivedEntry {
                    set: set.to_owned(),
                    reason: format!("an entry of {} bytes is over the limit of {DERIVED_VALUE_BYTES_MAX}", value.len()),
                });
            }
        }
        let db = self.shared.db.writable().map_err(|error| AppendError::Io(std::io::Error::other(error)))?;
        let txn = db.begin_write().map_err(storage)?;
        {
            let mut table = txn.open_table(DERIVED).map_err(storage)?;
            for key in remove {
                table.remove((set, key.as_slice())).map_err(storage)?;
            }
            for (key, value) in put {
                table.insert((set, key.as_slice()), blob_record(value).as_slice()).map_err(storage)?;
            }
        }
        txn.commit().map_err(storage)
    }

    /// Drops set `set` whole, or every set with `None`; returns how many entries there
    /// were.
    pub fn derived_clear(&self, set: Option<&str>) -> Result<u64, ReadError> {
        let db = self.shared.db.writable()?;
        let txn = db.begin_write().map_err(read_error)?;
        let mut n_dropped = 0u64;
        {
            let mut table = txn.open_table(DERIVED).map_err(read_error)?;
            table
                .retain(|(entry_set, _), _| {
                    let drop = set.is_none_or(|set| set == entry_set);
                    n_dropped += u64::from(drop);
                    !drop
                })
                .map_err(read_error)?;
        }
        txn.commit().map_err(read_error)?;
        Ok(n_dropped)
    }

    /// Every derived set, by name, with its size.
    pub fn derived_sets(&self) -> Result<Vec<DerivedSet>, ReadError> {
        self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            let Some(table) = open_or_none(&txn)? else { return Ok(Vec::new()) };
            let mut sets: Vec<DerivedSet> = Vec::new();
            for entry in table.iter().map_err(read_error)? {
                let (key, value) = entry.map_err(read_error)?;
                let (set, entry_key) = key.value();
                let n_bytes = (set.len() + entry_key.len() + value.value().len()) as u64;
                match sets.last_mut() {
                    Some(last) if last.name == set => {
                        last.n_entries += 1;
                        last.n_bytes += n_bytes;
                    }
                    _ => sets.push(DerivedSet { name: set.to_owned(), n_entries: 1, n_bytes }),
                }
            }
            Ok(sets)
        })
    }

    /// Checks every derived entry's checksum and drops (on a writable handle) those
    /// that fail it: returns (entries that hold, entries dropped).
    pub fn derived_check(&self) -> Result<(u64, u64), ReadError> {
        let checked = self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(read_error)?;
            check_all(&txn)
        })?;
        if !checked.bad.is_empty() {
            self.drop_derived(&checked.bad)?;
        }
        Ok((checked.n_good, checked.bad.len() as u64))
    }

    /// Deletes the named entries (damaged ones), when the handle is writable.
    pub(crate) fn drop_derived(&self, entries: &[(String, Vec<u8>)]) -> Result<(), ReadError> {
        let Db::Write(db) = &self.shared.db else { return Ok(()) };
        let txn = db.begin_write().map_err(read_error)?;
        {
            let mut table = txn.open_table(DERIVED).map_err(read_error)?;
            for (set, key) in entries {
                table.remove((set.as_str(), key.as_slice())).map_err(read_error)?;
            }
        }
        txn.commit().map_err(read_error)
    }
}
