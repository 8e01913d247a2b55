//! Backups, restores and the portable archive (see `docs/archive.md` and
//! `docs/operations.md`).
//!
//! * [`Ledger::backup_to`] copies every table except the cache inside ONE read
//!   transaction into a new redb file beside the destination, opens and verifies the
//!   copy, and only then moves it into place, so writers keep running and the
//!   destination is either the verified copy or untouched.
//! * [`Ledger::restore`] verifies a backup whole before it installs a copy of it at a
//!   book's path (atomically, and while holding the book's writer turn).
//! * [`Ledger::export_archive`] writes the archive form (independent of redb's
//!   layout); [`read_archive`] parses and checks one completely in memory (every
//!   chain link, every checksum) and [`Ledger::import_archive`] creates a book from it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use ledger_model::record;
use ledger_model::{Hash32, Seq};
use redb::{Database, ReadTransaction, ReadableTable, TableDefinition, WriteTransaction};

use crate::checkpoint::{CHECKPOINTS, CHECKPOINT_HEADS};
use crate::error::{OpenError, VerifyError};
use crate::store::{
    checked, create_tables, Head, BLOBS, DOCUMENTS, DOCUMENT_LOG, EVENTS, LEDGER_FORMAT, META, META_FORMAT, META_HEAD,
    SHELVES, SNAPSHOTS,
};
use crate::turns::{self, Access, Patience};
use crate::writer::LogTables;
use crate::Ledger;

/// The first line of every archive: the format name and its version.
pub const ARCHIVE_MAGIC: &[u8] = b"lorebank-archive 1\n";
/// blake3 `derive_key` context of the checksum in an archive's end frame.
pub const ARCHIVE_CHECKSUM_CONTEXT: &str = "lorebank 2026-12-01 archive v1";

const TAG_EVENT: u8 = b'E';
const TAG_BLOB: u8 = b'B';
const TAG_DOCUMENT: u8 = b'D';
const TAG_SNAPSHOT: u8 = b'S';
const TAG_END: u8 = b'Z';
/// Bytes of the end frame's body.
const END_BYTES: usize = 8 * 5 + 32 + 32;

/// What a backup, restore, export or import copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copied {
    /// Events copied (the whole chain).
    pub n_events: u64,
    /// The head of the copy.
    pub head: Head,
    /// Blobs copied.
    pub n_blobs: u64,
    /// Documents copied.
    pub n_documents: u64,
    /// Size of the file written, in bytes.
    pub n_bytes: u64,
}

/// Why a backup, restore, export or import did not happen. In every case the
/// destination is as it was before.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackupError {
    /// The destination exists and replacing it was not asked for.
    #[error("{path} already exists; refusing to replace it")]
    Exists {
        /// The destination.
        path: String,
    },
    /// An archive is damaged or malformed: nothing was created.
    #[error("archive {path}: byte {offset}: {detail}")]
    Archive {
        /// The archive.
        path: String,
        /// Offset of the frame (or field) at fault.
        offset: u64,
        /// What is wrong, naming the frame.
        detail: String,
    },
    /// The source or the copy failed its verification: nothing was installed.
    #[error("{path}: {error}")]
    Verify {
        /// The file verified.
        path: String,
        /// What verify found.
        error: VerifyError,
    },
    /// The destination is not a path a copy may be written to: not a regular file
    /// (a directory, a device such as `/dev/null`, a symbolic link), or a file the
    /// copy must never replace (the book itself, its lock files, the source).
    #[error("{path} {reason}; refusing to write there")]
    Destination {
        /// The destination.
        path: String,
        /// What it is.
        reason: String,
    },
    /// The source or the copy could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The file system or the storage failed.
    #[error("{path}: {detail}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        detail: String,
    },
}

fn io(path: &Path, error: impl std::fmt::Display) -> BackupError {
    BackupError::Io { path: path.display().to_string(), detail: error.to_string() }
}

/// A temporary file name beside `target` (same directory, so a rename is atomic).
fn temp_beside(target: &Path) -> PathBuf {
    let name = target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    target.with_file_name(format!(".{name}.partial-{}-{nanos}", std::process::id()))
}

/// Removes the temporary file unless it was moved into place.
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A verified copy in a file beside its destination, not yet in place: dropped, it is
/// deleted; [`Staged::install`] syncs it and moves it into place.
pub struct Staged {
    // Declared first: the file goes before the turn is released.
    partial: Partial,
    target: PathBuf,
    replace: bool,
    copied: Copied,
    _turn: Option<crate::turns::Turn>,
}

impl Staged {
    /// The path of the copy (beside the destination).
    pub fn path(&self) -> &Path {
        &self.partial.0
    }

    /// Syncs the copy and moves it to its destination (see [`Ledger::restore`] and
    /// [`Ledger::import_archive`] for when an existing destination is replaced).
    pub fn install(self) -> Result<Copied, BackupError> {
        let n_bytes = install(&self.partial, &self.target, self.replace)?;
        Ok(Copied { n_bytes, ..self.copied })
    }
}

fn refuse_existing(target: &Path, replace: bool) -> Result<(), BackupError> {
    if !replace && target.exists() {
        return Err(BackupError::Exists { path: target.display().to_string() });
    }
    Ok(())
}

/// Checks, before anything is written, that a copy may be moved to `target` by a
/// rename: `target` names a file, and is absent or a regular file; never a symbolic
/// link (a rename would replace the link, not what it points to), a directory or a
/// device such as `/dev/null`; and never one of `keep` (the book being copied, the
/// source being restored) or their lock files, found by identity (device and
/// inode), so a hard link or a path through a linked directory is recognized too.
/// An existing regular file is refused unless `replace`.
///
/// Every writer of a copy calls it: [`Ledger::backup_to`], [`Ledger::restore`],
/// [`Ledger::export_archive`], [`Ledger::import_archive`], and the application
/// for an export file.
pub fn check_destination(target: &Path, replace: bool, keep: &[&Path]) -> Result<(), BackupError> {
    let refuse = |reason: String| Err(BackupError::Destination { path: target.display().to_string(), reason });
    if target.file_name().is_none() {
        return refuse("names no file".into());
    }
    let found = match std::fs::symlink_metadata(target) {
        Ok(found) => found,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io(target, error)),
    };
    let kind = found.file_type();
    if kind.is_symlink() {
        let to = std::fs::read_link(target).map(|to| format!(" to {}", to.display())).unwrap_or_default();
        return refuse(format!("is a symbolic link{to}, not a regular file: name the file itself, or a new path"));
    }
    if !kind.is_file() {
        return refuse(format!("is {}, not a regular file", file_kind(&kind)));
    }
    for book in keep {
        if same_file(&found, book) {
            return refuse(format!("is {} itself", book.display()));
        }
        for lock in [turns::sidecar(book, ".lock"), turns::sidecar(book, ".turnstile")] {
            if same_file(&found, &lock) {
                return refuse(format!("is {}, a lock file of {}", lock.display(), book.display()));
            }
        }
    }
    if !replace {
        return Err(BackupError::Exists { path: target.display().to_string() });
    }
    Ok(())
}

/// What a file that is not a regular file is, for a person.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// Whether `file` (followed if it is a link) is the file `found` describes.
fn same_file(found: &std::fs::Metadata, file: &Path) -> bool {
    let Ok(other) = std::fs::metadata(file) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        found.dev() == other.dev() && found.ino() == other.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (found, other);
        false
    }
}

/// Syncs the finished temporary file and moves it to `target`: with `replace`, by a
/// rename over whatever is there; without, by a link that fails if `target` appeared
/// meanwhile. Then syncs the directory, so the new name is durable.
fn install(partial: &Partial, target: &Path, replace: bool) -> Result<u64, BackupError> {
    let file = File::open(&partial.0).map_err(|e| io(&partial.0, e))?;
    file.sync_all().map_err(|e| io(&partial.0, e))?;
    let n_bytes = file.metadata().map_err(|e| io(&partial.0, e))?.len();
    drop(file);
    if replace {
        // Again at the last moment: what is there may have changed while the copy
        // was written.
        check_destination(target, true, &[])?;
        std::fs::rename(&partial.0, target).map_err(|e| io(target, e))?;
    } else {
        match std::fs::hard_link(&partial.0, target) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(BackupError::Exists { path: target.display().to_string() })
            }
            // A file system without hard links: check, then rename.
            Err(_) => {
                refuse_existing(target, false)?;
                std::fs::rename(&partial.0, target).map_err(|e| io(target, e))?;
            }
        }
    }
    let dir = target.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(dir) = File::open(dir) {
        // Not every file system syncs a directory; the rename itself has happened.
        let _ = dir.sync_all();
    }
    Ok(n_bytes)
}

fn copy_table<K: redb::Key + 'static, V: redb::Value + 'static>(
    from: &ReadTransaction,
    to: &WriteTransaction,
    table: TableDefinition<K, V>,
) -> Result<(), redb::Error> {
    // Books older than a table (checkpoints came after ledger format 1's first
    // books) lack it; the copy has it, empty, as a new book would.
    let source = match from.open_table(table) {
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
        other => other?,
    };
    let mut target = to.open_table(table)?;
    for entry in source.iter()? {
        let (key, value) = entry?;
        target.insert(key.value(), value.value())?;
    }
    Ok(())
}

/// Opens the finished copy read-only and verifies it whole; its head must be `head`.
/// Returns what it holds (its size is counted when it is installed).
fn verify_copy(path: &Path, head: Head) -> Result<Copied, BackupError> {
    let copy = Ledger::open_read_only(path)?;
    let report = copy.verify().map_err(|error| BackupError::Verify { path: path.display().to_string(), error })?;
    if report.head != head {
        let detail = format!("the copy's head {} is not the source's {}", report.head.seq, head.seq);
        return Err(BackupError::Verify {
            path: path.display().to_string(),
            error: VerifyError::Corrupted { seq: report.head.seq, detail },
        });
    }
    Ok(Copied { n_events: report.n_events, head, n_blobs: report.n_blobs, n_documents: report.n_documents, n_bytes: 0 })
}

impl Ledger {
    /// Copies the whole book (every table but the cache, which is rebuilt when
    /// needed) as it is in ONE read transaction into a new file beside `out`, opens
    /// and verifies the copy, and only then moves it to `out`. Appends keep running
    /// meanwhile: the copy holds exactly the batches committed before its read
    /// transaction began. Refuses an existing `out` unless `replace`; never leaves a
    /// half-written `out`.
    pub fn backup_to(&self, out: &Path, replace: bool) -> Result<Copied, BackupError> {
        check_destination(out, replace, &[self.path()])?;
        let partial = Partial(temp_beside(out));
        let head = self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(crate::store::read_error)?;
            let head = head_of(&txn)?;
            let copied = copy_into(&txn, &partial.0);
            Ok::<_, crate::ReadError>(copied.map(|()| head))
        });
        let head = head.map_err(|error| self.read_failure(error))??;
        let copied = verify_copy(&partial.0, head)?;
        let n_bytes = install(&partial, out, replace)?;
        Ok(Copied { n_bytes, ..copied })
    }

    fn read_failure(&self, error: crate::ReadError) -> BackupError {
        BackupError::Verify { path: self.path().display().to_string(), error: error.into() }
    }

    /// Installs a copy of the backup `backup` at `book`: opens the backup read-only
    /// and verifies it whole (chain, every blob and document) before anything is
    /// written; then copies it into a new file beside `book`, verifies the copy,
    /// syncs it and renames it into place. An existing `book` is refused unless
    /// `replace`, and then replaced only while this process holds the book's writer
    /// turn (so no lorebank writer is inside). `book` may be any path.
    pub fn restore(backup: &Path, book: &Path, replace: bool, patience: &mut Patience) -> Result<Copied, BackupError> {
        Ledger::stage_restore(backup, book, replace, patience)?.install()
    }

    /// [`Ledger::restore`] up to the verified copy beside `book`, holding the writer
    /// turn; [`Staged::install`] moves it into place (a caller may check more first).
    pub fn stage_restore(
        backup: &Path,
        book: &Path,
        replace: bool,
        patience: &mut Patience,
    ) -> Result<Staged, BackupError> {
        let source = match Ledger::open_read_only(backup) {
            // A backup is written whole and closed: one that needs recovery was cut
            // short or damaged after it was written.
            Err(OpenError::NeedsRecovery { path }) => {
                let detail = "it is truncated, or was not closed cleanly: a backup is written whole and closed \
                              (a book a crash left open recovers with one writable open, `verify`)";
                return Err(BackupError::Verify {
                    path,
                    error: VerifyError::Damaged { object: "the file".into(), detail: detail.into() },
                });
            }
            other => other?,
        };
        source.verify().map_err(|error| BackupError::Verify { path: backup.display().to_string(), error })?;
        check_destination(book, replace, &[backup])?;
        let turn = if book.exists() { turns::wait_turn(book, Access::Write, patience)? } else { None };
        let partial = Partial(temp_beside(book));
        let head = source.guarded(|| {
            let txn = source.shared.db.begin_read().map_err(crate::store::read_error)?;
            let head = head_of(&txn)?;
            Ok::<_, crate::ReadError>(copy_into(&txn, &partial.0).map(|()| head))
        });
        let head = head.map_err(|error| source.read_failure(error))??;
        drop(source);
        let copied = verify_copy(&partial.0, head)?;
        Ok(Staged { partial, target: book.to_owned(), replace, copied, _turn: turn })
    }
}

/// Creates a redb file at `path` holding every table of `txn` but the cache.
fn copy_into(txn: &ReadTransaction, path: &Path) -> Result<(), BackupError> {
    let _ = std::fs::remove_file(path);
    let db = Database::create(path).map_err(|e| io(path, e))?;
    let write = db.begin_write().map_err(|e| io(path, e))?;
    let copied = (|| {
        create_tables(&write)?;
        copy_table(txn, &write, META)?;
        copy_table(txn, &write, EVENTS)?;
        copy_table(txn, &write, BLOBS)?;
        copy_table(txn, &write, SNAPSHOTS)?;
        copy_table(txn, &write, DOCUMENTS)?;
        copy_table(txn, &write, DOCUMENT_LOG)?;
        copy_table(txn, &write, SHELVES)?;
        copy_table(txn, &write, CHECKPOINTS)?;
        copy_table(txn, &write, CHECKPOINT_HEADS)?;
        copy_table(txn, &write, crate::derived::DERIVED)?;
        Ok::<_, redb::Error>(())
    })();
    copied.map_err(|e| io(path, e))?;
    write.commit().map_err(|e| io(path, e))?;
    compact(db, path)
}

/// Gives the pages a one-transaction copy left free back to the file system.
fn compact(mut db: Database, path: &Path) -> Result<(), BackupError> {
    db.compact().map_err(|e| io(path, e))?;
    Ok(())
}

/// A parsed, fully checked archive: what [`Ledger::import_archive`] writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Archive {
    /// Each event's stored record bytes, seq 1 first.
    pub records: Vec<Vec<u8>>,
    /// The head the chain ends at.
    pub head: Option<(Seq, Hash32)>,
    /// Blobs: content id and stored form (`checksum ‖ bytes`).
    pub blobs: Vec<(Hash32, Vec<u8>)>,
    /// Documents in arrival order: id, shelf group, shelf key, stored form.
    pub documents: Vec<(Hash32, u32, String, Vec<u8>)>,
    /// The snapshot index: snapshot ID and first batch-end revision.
    pub snapshots: Vec<(Hash32, Seq)>,
}

fn archive_checksum() -> blake3::Hasher {
    blake3::Hasher::new_derive_key(ARCHIVE_CHECKSUM_CONTEXT)
}

/// Writes frames, hashing every byte for the end frame.
struct FrameWriter<W: Write> {
    out: W,
    hasher: blake3::Hasher,
}

impl<W: Write> FrameWriter<W> {
    fn frame(&mut self, tag: u8, parts: &[&[u8]]) -> std::io::Result<()> {
        let len: usize = parts.iter().map(|part| part.len()).sum();
        let len = u32::try_from(len).map_err(|_| std::io::Error::other("a frame over 4 GiB"))?;
        let mut head = [0u8; 5];
        head[0] = tag;
        head[1..].copy_from_slice(&len.to_le_bytes());
        self.raw(&head)?;
        for part in parts {
            self.raw(part)?;
        }
        Ok(())
    }

    fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.out.write_all(bytes)
    }
}

impl Ledger {
    /// Writes the book in the archive form (`docs/archive.md`) to a new file beside
    /// `out`, read in ONE read transaction, checking every record, link and checksum
    /// as it goes (a damaged book is refused, naming the damage), then moves it to
    /// `out` (refused if `out` exists unless `replace`). Checkpoints and the cache are
    /// derived data and are not written.
    pub fn export_archive(&self, out: &Path, replace: bool) -> Result<Copied, BackupError> {
        check_destination(out, replace, &[self.path()])?;
        let partial = Partial(temp_beside(out));
        let file = File::create(&partial.0).map_err(|e| io(&partial.0, e))?;
        let mut writer = FrameWriter { out: std::io::BufWriter::new(file), hasher: archive_checksum() };
        let written = self.guarded(|| {
            let txn = self.shared.db.begin_read().map_err(crate::store::read_error)?;
            let head = head_of(&txn)?;
            let ioe = |e: std::io::Error| crate::ReadError::Io(e);
            writer.raw(ARCHIVE_MAGIC).map_err(ioe)?;
            let events = txn.open_table(EVENTS).map_err(crate::store::read_error)?;
            let mut n_events = 0u64;
            let mut prev = Hash32::GENESIS;
            for entry in events.iter().map_err(crate::store::read_error)? {
                let (key, value) = entry.map_err(crate::store::read_error)?;
                let seq = Seq(n_events + 1);
                let corrupted = |detail: String| crate::ReadError::Corrupted { seq, detail };
                if key.value() != seq.0 {
                    return Err(corrupted("missing below the head (torn write)".into()));
                }
                let event = record::open(seq, value.value()).map_err(|error| corrupted(error.to_string()))?;
                if event.prev != prev {
                    return Err(corrupted(format!(
                        "broken link: prev is {}, but event {} hashes to {prev}",
                        event.prev, n_events
                    )));
                }
                prev = event.hash;
                writer.frame(TAG_EVENT, &[&seq.0.to_le_bytes(), &event.hash.0, value.value()]).map_err(ioe)?;
                n_events += 1;
            }
            if n_events != head.seq.0 || prev != head.hash {
                let detail = format!("the log ends at event {n_events}, but the head is {}", head.seq);
                return Err(crate::ReadError::Corrupted { seq: head.seq, detail });
            }
            let mut n_blobs = 0u64;
            for entry in
                txn.open_table(BLOBS).map_err(crate::store::read_error)?.iter().map_err(crate::store::read_error)?
            {
                let (key, value) = entry.map_err(crate::store::read_error)?;
                let id = Hash32(*key.value());
                if checked(value.value()).is_none() {
                    return Err(crate::ReadError::Damaged {
                        object: format!("blob {id}"),
                        detail: "fails its checksum".into(),
                    });
                }
                writer.frame(TAG_BLOB, &[&id.0, value.value()]).map_err(ioe)?;
                n_blobs += 1;
            }
            let documents = txn.open_table(DOCUMENTS).map_err(crate::store::read_error)?;
            let mut shelved = Vec::new();
            for entry in
                txn.open_table(SHELVES).map_err(crate::store::read_error)?.iter().map_err(crate::store::read_error)?
            {
                let (key, value) = entry.map_err(crate::store::read_error)?;
                let (group, shelf_key, position) = key.value();
                shelved.push((position, group, shelf_key.to_owned(), Hash32(*value.value())));
            }
            shelved.sort_by_key(|(position, ..)| *position);
            let mut n_documents = 0u64;
            for (position, group, key, id) in shelved {
                if position != n_documents + 1 {
                    return Err(crate::ReadError::Damaged {
                        object: format!("shelf entry (group {group}, key {key:?}, position {position})"),
                        detail: format!("expected position {}", n_documents + 1),
                    });
                }
                let stored = documents.get(&id.0).map_err(crate::store::read_error)?;
                let Some(stored) = stored.filter(|guard| checked(guard.value()).is_some()) else {
                    return Err(crate::ReadError::Damaged {
                        object: format!("document {id}"),
                        detail: "is missing or fails its checksum".into(),
                    });
                };
                let key_len = u16::try_from(key.len())
                    .map_err(|_| crate::ReadError::Io(std::io::Error::other("a shelf key over 64 KiB")))?;
                writer
                    .frame(
                        TAG_DOCUMENT,
                        &[&id.0, &group.to_le_bytes(), &key_len.to_le_bytes(), key.as_bytes(), stored.value()],
                    )
                    .map_err(ioe)?;
                n_documents += 1;
            }
            let mut n_snapshots = 0u64;
            for entry in
                txn.open_table(SNAPSHOTS).map_err(crate::store::read_error)?.iter().map_err(crate::store::read_error)?
            {
                let (key, value) = entry.map_err(crate::store::read_error)?;
                writer.frame(TAG_SNAPSHOT, &[key.value(), &value.value().to_le_bytes()]).map_err(ioe)?;
                n_snapshots += 1;
            }
            let mut end = Vec::with_capacity(END_BYTES);
            for count in [n_events, head.seq.0, n_blobs, n_documents, n_snapshots] {
                end.extend_from_slice(&count.to_le_bytes());
            }
            end.extend_from_slice(&head.hash.0);
            let sum = writer.hasher.finalize();
            end.extend_from_slice(sum.as_bytes());
            writer.frame(TAG_END, &[&end]).map_err(ioe)?;
            writer.out.flush().map_err(ioe)?;
            Ok(Copied { n_events, head, n_blobs, n_documents, n_bytes: 0 })
        });
        let mut copied = written.map_err(|error| self.read_failure(error))?;
        drop(writer);
        copied.n_bytes = install(&partial, out, replace)?;
        Ok(copied)
    }

    /// Creates a new book at `path` from a checked [`Archive`] (see [`read_archive`]):
    /// written into a new file beside `path`, verified, synced and moved into place
    /// (refused if `path` exists). The book holds the archive's records byte for
    /// byte, so its head, snapshot IDs and receipts are the archived book's.
    pub fn import_archive(archive: &Archive, path: &Path) -> Result<Copied, BackupError> {
        Ledger::stage_import(archive, path)?.install()
    }

    /// [`Ledger::import_archive`] up to the verified book beside `path`;
    /// [`Staged::install`] moves it into place (a caller may check more first).
    pub fn stage_import(archive: &Archive, path: &Path) -> Result<Staged, BackupError> {
        check_destination(path, false, &[])?;
        let partial = Partial(temp_beside(path));
        let head = archive.head.map_or(Head::EMPTY, |(seq, hash)| Head { seq, hash });
        let written = (|| {
            let _ = std::fs::remove_file(&partial.0);
            let db = Database::create(&partial.0)?;
            let txn = db.begin_write()?;
            create_tables(&txn)?;
            {
                let mut tables = LogTables::open(&txn)?;
                tables.meta.insert(META_FORMAT, LEDGER_FORMAT.to_le_bytes().as_slice())?;
                tables.meta.insert(META_HEAD, head.to_bytes().as_slice())?;
                for (index, stored) in archive.records.iter().enumerate() {
                    tables.events.insert(index as u64 + 1, stored.as_slice())?;
                }
                for (id, stored) in &archive.blobs {
                    tables.blobs.insert(&id.0, stored.as_slice())?;
                }
                for (index, (id, group, key, stored)) in archive.documents.iter().enumerate() {
                    let position = index as u64 + 1;
                    tables.documents.insert(&id.0, stored.as_slice())?;
                    tables.document_log.insert(position, &id.0)?;
                    tables.shelves.insert((*group, key.as_str(), position), &id.0)?;
                }
                for (id, revision) in &archive.snapshots {
                    tables.snapshots.insert(&id.0, revision.0)?;
                }
            }
            txn.commit()?;
            Ok::<_, redb::Error>(db)
        })();
        compact(written.map_err(|e| io(&partial.0, e))?, &partial.0)?;
        let copied = verify_copy(&partial.0, head)?;
        Ok(Staged { partial, target: path.to_owned(), replace: false, copied, _turn: None })
    }
}

/// The head stored in `txn`.
fn head_of(txn: &ReadTransaction) -> Result<Head, crate::ReadError> {
    let meta = txn.open_table(META).map_err(crate::store::read_error)?;
    let head = meta.get(META_HEAD).map_err(crate::store::read_error)?.and_then(|guard| Head::from_bytes(guard.value()));
    head.ok_or_else(|| crate::ReadError::Corrupted {
        seq: Seq::ZERO,
        detail: "meta `head` is missing or malformed".into(),
    })
}

/// A cursor over archive bytes that names the offset of what it finds wrong.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut out = [0u8; 8];
    out.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(out)
}

fn hash_at(bytes: &[u8]) -> Hash32 {
    let mut out = [0u8; 32];
    out.copy_from_slice(&bytes[..32]);
    Hash32(out)
}

/// Parses archive bytes and checks everything before anything is created: the
/// header, every frame's tag, length and place in the order (events, blobs,
/// documents, snapshot index, end), every record (strict decode, its seq, its
/// payload hash, its link to the one before, its chain hash against the frame's),
/// every blob and document against its checksum, every shelf key, the counts and
/// head in the end frame, and the checksum of all bytes before the end frame.
/// `name` names the archive in errors. Never panics on any input.
pub fn read_archive(name: &str, bytes: &[u8]) -> Result<Archive, BackupError> {
    let fail =
        |offset: usize, detail: String| BackupError::Archive { path: name.to_owned(), offset: offset as u64, detail };
    check_archive_magic(bytes).map_err(|detail| fail(0, detail))?;
    let mut cursor = Cursor { bytes, at: ARCHIVE_MAGIC.len() };
    let mut reader =
        ArchiveReader { archive: Archive::default(), prev: Hash32::GENESIS, document_ids: Default::default() };
    let mut phase = 0u8;
    let mut frame_no = 0u64;
    loop {
        let start = cursor.at;
        frame_no += 1;
        let Some(head) = cursor.take(5) else {
            return Err(fail(start, format!("the archive ends before its end frame (frame {frame_no} is cut short)")));
        };
        let tag = head[0];
        let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let Some(body) = cursor.take(len) else {
            return Err(fail(
                start,
                format!("frame {frame_no} declares {len} bytes, but only {} remain", bytes.len() - start - 5),
            ));
        };
        let Some(order) = frame_order(tag) else {
            return Err(fail(start, format!("frame {frame_no} has the unknown tag {tag:#04x}")));
        };
        if order < phase {
            return Err(fail(start, format!("frame {frame_no} ({}) is out of order", tag as char)));
        }
        phase = order;
        let read = match tag {
            TAG_EVENT => reader.event(frame_no, body),
            TAG_BLOB | TAG_DOCUMENT => reader.object(tag, frame_no, body),
            TAG_SNAPSHOT => reader.snapshot(frame_no, body),
            _ => reader.end(body, &bytes[..start]),
        };
        read.map_err(|detail| fail(start, detail))?;
        if tag == TAG_END {
            if cursor.at != bytes.len() {
                return Err(fail(cursor.at, format!("{} bytes follow the end frame", bytes.len() - cursor.at)));
            }
            return Ok(reader.archive);
        }
    }
}

/// Checks the first line of an archive: what is wrong with it, if anything.
fn check_archive_magic(bytes: &[u8]) -> Result<(), String> {
    if bytes.starts_with(ARCHIVE_MAGIC) {
        return Ok(());
    }
    Err(match bytes.iter().position(|b| *b == b'\n') {
        Some(end) if bytes.starts_with(b"lorebank-archive ") => {
            format!("archive version {:?} is not one this build reads (1)", String::from_utf8_lossy(&bytes[17..end]))
        }
        _ => "not a lorebank archive (it does not start with \"lorebank-archive 1\")".to_owned(),
    })
}

/// The place of a frame's kind in an archive's order (events first, the end
/// last), or `None` for an unknown tag.
fn frame_order(tag: u8) -> Option<u8> {
    match tag {
        TAG_EVENT => Some(1),
        TAG_BLOB => Some(2),
        TAG_DOCUMENT => Some(3),
        TAG_SNAPSHOT => Some(4),
        TAG_END => Some(5),
        _ => None,
    }
}

/// An archive as its frames are read and checked, one frame kind a step; each
/// step returns what is wrong with its frame.
struct ArchiveReader {
    archive: Archive,
    /// The chain hash of the last event read.
    prev: Hash32,
    document_ids: std::collections::BTreeSet<[u8; 32]>,
}

impl ArchiveReader {
    /// An event frame: the event after the last, its record opened and linked.
    fn event(&mut self, frame_no: u64, body: &[u8]) -> Result<(), String> {
        let seq = Seq(self.archive.records.len() as u64 + 1);
        if body.len() < 40 {
            return Err(format!("event frame {frame_no} is {} bytes, too short", body.len()));
        }
        let framed_seq = le_u64(body);
        if framed_seq != seq.0 {
            return Err(format!("event frame {frame_no} holds event {framed_seq}, expected event {seq}"));
        }
        let framed_hash = hash_at(&body[8..]);
        let stored = &body[40..];
        let event = record::open(seq, stored).map_err(|error| format!("event {seq}: {error}"))?;
        let prev = self.prev;
        if event.prev != prev {
            return Err(format!(
                "event {seq}: broken link: prev is {}, but event {} hashes to {prev}",
                event.prev,
                seq.0 - 1
            ));
        }
        if event.hash != framed_hash {
            return Err(format!("event {seq}: chain hash {} differs from the archived {framed_hash}", event.hash));
        }
        self.prev = event.hash;
        self.archive.records.push(stored.to_vec());
        self.archive.head = Some((seq, event.hash));
        Ok(())
    }

    /// A blob frame (blobs in increasing id order) or a document frame (a shelf
    /// that can be stored, each id once), its stored form checked.
    fn object(&mut self, tag: u8, frame_no: u64, body: &[u8]) -> Result<(), String> {
        let what = if tag == TAG_BLOB { "blob" } else { "document" };
        let fixed = if tag == TAG_BLOB { 32 } else { 32 + 4 + 2 };
        if body.len() < fixed {
            return Err(format!("{what} frame {frame_no} is {} bytes, too short", body.len()));
        }
        let id = hash_at(body);
        let mut rest = &body[fixed..];
        let mut shelf = None;
        if tag == TAG_DOCUMENT {
            let group = u32::from_le_bytes([body[32], body[33], body[34], body[35]]);
            let key_len = u16::from_le_bytes([body[36], body[37]]) as usize;
            let Some(key) = rest.get(..key_len) else {
                return Err(format!("document {id}: its shelf key runs past the frame"));
            };
            let key = std::str::from_utf8(key).map_err(|_| format!("document {id}: its shelf key is not UTF-8"))?;
            let document = crate::Document { id, bytes: Vec::new(), group, key: key.to_owned() };
            crate::writer::check_document(&document).map_err(|error| format!("document {id}: {error}"))?;
            shelf = Some((group, key.to_owned()));
            rest = &rest[key_len..];
        }
        if checked(rest).is_none() {
            return Err(format!("{what} {id} fails its checksum"));
        }
        match shelf {
            Some((group, key)) => {
                if !self.document_ids.insert(id.0) {
                    return Err(format!("document {id} appears twice"));
                }
                self.archive.documents.push((id, group, key, rest.to_vec()));
            }
            None => {
                if self.archive.blobs.last().is_some_and(|(last, _)| last.0 >= id.0) {
                    return Err(format!("blob {id} is out of order or repeated"));
                }
                self.archive.blobs.push((id, rest.to_vec()));
            }
        }
        Ok(())
    }

    /// A snapshot index frame: in increasing id order, a revision within the chain.
    fn snapshot(&mut self, frame_no: u64, body: &[u8]) -> Result<(), String> {
        if body.len() != 40 {
            return Err(format!("snapshot frame {frame_no} is {} bytes, not 40", body.len()));
        }
        let id = hash_at(body);
        let revision = le_u64(&body[32..]);
        let head = self.archive.head.map_or(0, |(seq, _)| seq.0);
        if revision == 0 || revision > head {
            return Err(format!("snapshot {id}: revision {revision} is outside 1..={head}"));
        }
        if self.archive.snapshots.last().is_some_and(|(last, _)| last.0 >= id.0) {
            return Err(format!("snapshot {id} is out of order or repeated"));
        }
        self.archive.snapshots.push((id, Seq(revision)));
        Ok(())
    }

    /// The end frame: the counts and head hash of what was read, and the checksum of
    /// `before`, every byte before the end frame.
    fn end(&self, body: &[u8], before: &[u8]) -> Result<(), String> {
        if body.len() != END_BYTES {
            return Err(format!("the end frame is {} bytes, not {END_BYTES}", body.len()));
        }
        let archive = &self.archive;
        let counts: Vec<u64> = (0..5).map(|i| le_u64(&body[i * 8..])).collect();
        let actual = [
            archive.records.len() as u64,
            archive.head.map_or(0, |(seq, _)| seq.0),
            archive.blobs.len() as u64,
            archive.documents.len() as u64,
            archive.snapshots.len() as u64,
        ];
        let names = ["events", "head", "blobs", "documents", "snapshot index entries"];
        for ((declared, actual), what) in counts.iter().zip(actual).zip(names) {
            if *declared != actual {
                return Err(format!("the end frame declares {declared} {what}, the archive holds {actual}"));
            }
        }
        let head_hash = hash_at(&body[40..]);
        if head_hash != self.prev {
            return Err(format!("the end frame's head hash {head_hash} is not the chain's {}", self.prev));
        }
        let mut hasher = archive_checksum();
        hasher.update(before);
        if hasher.finalize().as_bytes() != &body[72..] {
            return Err("the archive's checksum does not match its bytes".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use ledger_model::{Body, NewEvent, TermRetired};

    use super::*;
    use crate::{Attachments, Document};

    fn event(n: u32) -> NewEvent {
        NewEvent {
            recorded_at_ms: u64::from(n),
            actor: "human:test".into(),
            source: format!("test#{n}"),
            body: Body::TermRetired(TermRetired { id: format!("T-{n}").parse().unwrap(), reason: None }),
        }
    }

    /// A small book with two batches, a blob, two documents and a snapshot entry.
    fn small_book(path: &Path) -> Ledger {
        let ledger = Ledger::create(path).unwrap();
        let blob = (Hash32([7; 32]), b"fold table".to_vec());
        let attachments = Attachments { blobs: vec![blob], snapshot: Some(Hash32([9; 32])), documents: Vec::new() };
        ledger.append_with(&[event(1), event(2)], Some(Seq(0)), attachments).unwrap();
        ledger.append(&[event(3)], Some(Seq(2))).unwrap();
        let document =
            |id: u8, key: &str| Document { id: Hash32([id; 32]), bytes: vec![id; 10], group: 1, key: key.into() };
        ledger.file_documents(vec![document(1, "a"), document(2, "b")], Vec::new()).unwrap();
        ledger
    }

    #[test]
    fn a_backup_during_four_appending_threads_verifies_and_ends_at_an_acknowledged_batch() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = small_book(&dir.path().join("book.lorebank"));
        let stop = AtomicBool::new(false);
        let (acknowledged, heads) = std::thread::scope(|scope| {
            let writers: Vec<_> = (0..4u32)
                .map(|writer| {
                    let (ledger, stop) = (&ledger, &stop);
                    scope.spawn(move || {
                        let mut acknowledged = Vec::new();
                        let mut n = 0;
                        while !stop.load(Ordering::Relaxed) || n < 5 {
                            let batch: Vec<NewEvent> =
                                (0..3).map(|i| event(1_000 * (writer + 1) + 3 * n + i)).collect();
                            acknowledged.push(ledger.append(&batch, None).unwrap().last);
                            n += 1;
                        }
                        acknowledged
                    })
                })
                .collect();
            let heads: Vec<Seq> = (0..6)
                .map(|n| {
                    let out = dir.path().join(format!("backup-{n}.lorebank"));
                    let copied = ledger.backup_to(&out, false).unwrap();
                    let copy = Ledger::open_read_only(&out).unwrap();
                    assert_eq!(copy.verify().unwrap().head, copied.head);
                    copied.head.seq
                })
                .collect();
            stop.store(true, Ordering::Relaxed);
            let acknowledged: Vec<Seq> = writers.into_iter().flat_map(|writer| writer.join().unwrap()).collect();
            (acknowledged, heads)
        });
        let full = ledger.events(Seq(1), Seq(u64::MAX)).unwrap();
        for (n, head) in heads.iter().enumerate() {
            assert!(*head == Seq(3) || acknowledged.contains(head), "backup {n} ends at {head}, not a batch end");
            let copy = Ledger::open_read_only(&dir.path().join(format!("backup-{n}.lorebank"))).unwrap();
            assert_eq!(copy.events(Seq(1), Seq(u64::MAX)).unwrap()[..], full[..head.0 as usize]);
            assert_eq!(copy.filed(None).unwrap(), ledger.filed(None).unwrap());
        }
    }

    fn exported(dir: &Path) -> Vec<u8> {
        let ledger = small_book(&dir.join("book.lorebank"));
        ledger.export_archive(&dir.join("book.archive"), false).unwrap();
        std::fs::read(dir.join("book.archive")).unwrap()
    }

    #[test]
    fn an_archive_imports_to_the_same_records_documents_and_index() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = exported(dir.path());
        let archive = read_archive("book.archive", &bytes).unwrap();
        let copied = Ledger::import_archive(&archive, &dir.path().join("new.lorebank")).unwrap();
        let (old, new) = (
            Ledger::open_read_only(&dir.path().join("book.lorebank")).unwrap(),
            Ledger::open_read_only(&dir.path().join("new.lorebank")).unwrap(),
        );
        assert_eq!(copied.head, old.head().unwrap());
        assert_eq!(new.events(Seq(1), Seq(9)).unwrap(), old.events(Seq(1), Seq(9)).unwrap());
        assert_eq!(new.filed(None).unwrap(), old.filed(None).unwrap());
        assert_eq!(new.snapshot_index().unwrap(), old.snapshot_index().unwrap());
        assert_eq!(new.blob(Hash32([7; 32])).unwrap().unwrap(), b"fold table");
        assert_eq!(new.document(Hash32([2; 32])).unwrap().unwrap(), vec![2; 10]);
        let again = Ledger::import_archive(&archive, &dir.path().join("new.lorebank"));
        assert!(matches!(again, Err(BackupError::Exists { .. })));
    }

    #[test]
    fn every_flipped_bit_and_every_truncation_of_an_archive_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = exported(dir.path());
        for at in 0..bytes.len() {
            for bit in [0x01u8, 0x80] {
                let mut damaged = bytes.clone();
                damaged[at] ^= bit;
                assert!(read_archive("x", &damaged).is_err(), "a flipped bit at byte {at} was accepted");
            }
        }
        for len in 0..bytes.len() {
            assert!(read_archive("x", &bytes[..len]).is_err(), "a truncation to {len} bytes was accepted");
        }
    }

    /// Damage a restore must name as damage: never an I/O failure, never a book
    /// that merely needs recovery.
    fn is_damage(error: &BackupError) -> bool {
        matches!(
            error,
            BackupError::Verify { error: VerifyError::Corrupted { .. } | VerifyError::Damaged { .. }, .. }
                | BackupError::Open(OpenError::Corrupted { .. } | OpenError::NotALedger { .. })
        )
    }

    #[test]
    fn every_truncation_and_every_flipped_page_head_of_a_backup_is_refused_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = small_book(&dir.path().join("book.lorebank"));
        ledger.backup_to(&dir.path().join("backup.lorebank"), false).unwrap();
        let clean = std::fs::read(dir.path().join("backup.lorebank")).unwrap();
        let (damaged, target) = (dir.path().join("damaged.lorebank"), dir.path().join("restored.lorebank"));
        let restore = |bytes: &[u8]| {
            std::fs::write(&damaged, bytes).unwrap();
            let restored = Ledger::restore(&damaged, &target, false, &mut Patience::new(Duration::ZERO));
            let _ = std::fs::remove_file(&target);
            restored
        };
        // Every length up to the whole file, at the page boundaries and in between.
        let lengths = (0..clean.len()).filter(|len| len % 4096 == 0 || len % 4096 == 1 || len % 997 == 0);
        for len in lengths {
            let error = restore(&clean[..len]).expect_err("a truncated backup was restored");
            assert!(is_damage(&error), "truncated to {len} of {}: {error:?}", clean.len());
        }
        // The first byte of every page (its type), and bytes inside pages: a flip is
        // harmless (a free page) or refused as damage, never another failure.
        let mut n_refused = 0;
        for at in (0..clean.len()).filter(|at| at % 4096 == 0 || at % 4096 == 300 || at % 4096 == 2222) {
            let mut bytes = clean.clone();
            bytes[at] ^= 0xff;
            if let Err(error) = restore(&bytes) {
                assert!(is_damage(&error), "flipped at {at}: {error:?}");
                n_refused += 1;
            }
        }
        assert!(n_refused > 0, "no flipped byte was found");
    }

    #[test]
    fn a_damaged_book_is_neither_backed_up_nor_exported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.lorebank");
        drop(small_book(&path));
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(10).position(|window| window == b"fold table").unwrap();
        bytes[at] ^= 0x01;
        std::fs::write(&path, bytes).unwrap();
        let ledger = Ledger::open_read_only(&path).unwrap();
        let backup = ledger.backup_to(&dir.path().join("backup.lorebank"), false);
        assert!(
            matches!(&backup, Err(BackupError::Verify { error: VerifyError::Damaged { object, .. }, .. }) if object.starts_with("blob")),
            "{backup:?}"
        );
        let export = ledger.export_archive(&dir.path().join("book.archive"), false);
        assert!(matches!(&export, Err(BackupError::Verify { error: VerifyError::Damaged { .. }, .. })), "{export:?}");
        let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["book.lorebank"], "a refused copy left a file");
    }
}
