//! Backup, restore and the portable archive as book use cases (see
//! `docs/operations.md` and `docs/archive.md`): each is one call over the ledger's
//! copy functions, reporting the copy's head and the snapshot ID at that head.

use std::io::Read;
use std::path::{Path, PathBuf};

use ledger::{BackupError, Copied, Head, Ledger, Patience, ReadError, Staged};
use ledger_model::limits::input::ARCHIVE_BYTES_MAX;
use projections::SnapshotId;

use crate::{Book, BookError};

/// What a backup, restore, archive export or archive import wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Copy {
    /// The file written.
    pub path: PathBuf,
    /// Events in the copy.
    pub n_events: u64,
    /// The copy's head.
    pub head: Head,
    /// The snapshot ID at that head.
    pub snapshot: SnapshotId,
    /// Blobs in the copy.
    pub n_blobs: u64,
    /// Documents (receipts, post-checks) in the copy.
    pub n_documents: u64,
    /// Size of the file written, in bytes.
    pub n_bytes: u64,
}

impl Copy {
    /// What the ledger copied to `path`, with the snapshot ID at the copy's head.
    fn of(path: &Path, copied: Copied, snapshot: SnapshotId) -> Copy {
        Copy {
            path: path.to_owned(),
            n_events: copied.n_events,
            head: copied.head,
            snapshot,
            n_blobs: copied.n_blobs,
            n_documents: copied.n_documents,
            n_bytes: copied.n_bytes,
        }
    }
}

impl From<BackupError> for BookError {
    fn from(error: BackupError) -> BookError {
        match error {
            BackupError::Exists { path } => BookError::DestinationExists { path },
            BackupError::Destination { .. } => BookError::Invalid(error.to_string()),
            BackupError::Archive { .. } => BookError::Corrupted(error.to_string()),
            BackupError::Verify { path, error } => match error {
                ledger::VerifyError::Io(error) => BookError::Read(ReadError::Io(ledger::io_context(path, error))),
                other => BookError::Corrupted(format!("{path}: {other}")),
            },
            BackupError::Open(error) => BookError::Open(error),
            BackupError::Io { path, detail } => {
                BookError::Read(ReadError::Io(std::io::Error::other(format!("{path}: {detail}"))))
            }
            other => BookError::Read(ReadError::Io(std::io::Error::other(other))),
        }
    }
}

/// The snapshot ID at the head of the book at `path`, read from a fresh read-only
/// open (what the copy itself says, not what the source had in memory).
fn snapshot_of(path: &Path, copied: Copied) -> Result<Copy, BookError> {
    let mut book = Book::new(Ledger::open_read_only(path)?);
    let info = book.snapshot_info(None)?;
    Ok(Copy::of(path, copied, info.snapshot))
}

/// The bytes of the archive file at `path`, at most `bytes_max` of them (the input
/// limit [`ARCHIVE_BYTES_MAX`]): a regular file over it is refused before it is read;
/// anything else (a pipe, a device) is read to one byte past it and refused there.
fn read_archive_file(path: &Path, bytes_max: u64) -> Result<Vec<u8>, BookError> {
    let cannot = |error: std::io::Error| {
        BookError::Read(ReadError::Io(ledger::io_context(format!("cannot read {}", path.display()), error)))
    };
    let over =
        || BookError::TooLarge(format!("{}: over the limit ARCHIVE_BYTES_MAX of {bytes_max} bytes", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let metadata = file.metadata().map_err(cannot)?;
    let mut bytes = Vec::new();
    if metadata.is_file() {
        if metadata.len() > bytes_max {
            return Err(over());
        }
        bytes.reserve_exact(metadata.len() as usize);
    }
    file.take(bytes_max.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > bytes_max {
        return Err(over());
    }
    Ok(bytes)
}

/// Checks the staged copy as `Book::verify` does (fold tables, receipts and their
/// texts, the snapshot index against the fold), then moves it into place.
fn checked_install(staged: Staged, source: &Path, target: &Path) -> Result<Copy, BookError> {
    {
        let mut book = Book::new(Ledger::open_read_only(staged.path())?);
        book.verify().map_err(|error| match error {
            ledger::VerifyError::Io(error) => {
                BookError::Read(ReadError::Io(ledger::io_context(source.display(), error)))
            }
            other => BookError::Corrupted(format!("{}: {other}", source.display())),
        })?;
    }
    let copied = staged.install()?;
    snapshot_of(target, copied)
}

impl Book {
    /// Checks that a file written beside `out` may be renamed over it (an export
    /// file, which replaces what is there): `out` is absent or a regular file, and
    /// neither this book nor one of its lock files ([`ledger::check_destination`]).
    pub fn check_destination(&self, out: &Path) -> Result<(), BookError> {
        Ok(ledger::check_destination(out, true, &[self.ledger().path()])?)
    }

    /// Backs the book up to `out` while writers keep appending: a copy of one
    /// consistent read transaction, verified before it is moved to `out`. Refuses
    /// an existing `out` unless `replace`.
    pub fn backup(&self, out: &Path, replace: bool) -> Result<Copy, BookError> {
        let copied = self.ledger().backup_to(out, replace)?;
        snapshot_of(out, copied)
    }

    /// Restores the backup `backup` to the book path `book` (any path): the backup
    /// is verified whole before anything is installed, and the copy is verified,
    /// synced and renamed into place. An existing `book` is refused unless `replace`,
    /// and then replaced while holding its writer turn.
    pub fn restore(backup: &Path, book: &Path, replace: bool, patience: &mut Patience) -> Result<Copy, BookError> {
        let staged = Ledger::stage_restore(backup, book, replace, patience)?;
        checked_install(staged, backup, book)
    }

    /// Writes the book in the portable archive form to `out` (refused if it exists
    /// unless `replace`); a damaged book is refused, naming the damage.
    pub fn export_archive(&mut self, out: &Path, replace: bool) -> Result<Copy, BookError> {
        let copied = self.ledger().export_archive(out, replace)?;
        let info = self.snapshot_info(Some(copied.head.seq))?;
        Ok(Copy::of(out, copied, info.snapshot))
    }

    /// Creates the book `book` (which must not exist) from the archive file
    /// `archive`, after checking every chain link, every blob and document checksum
    /// and the archive's own checksum; a damaged archive creates nothing.
    /// The archive is read whole into memory, through [`ARCHIVE_BYTES_MAX`]: a larger
    /// one is refused as too large before it is read.
    pub fn import_archive(archive: &Path, book: &Path) -> Result<Copy, BookError> {
        Book::import_archive_within(archive, book, ARCHIVE_BYTES_MAX)
    }

    /// [`Book::import_archive`] of an archive of at most `bytes_max` bytes.
    fn import_archive_within(archive: &Path, book: &Path, bytes_max: u64) -> Result<Copy, BookError> {
        if book.exists() {
            return Err(BookError::Invalid(format!(
                "{} already exists; import an archive into a new book",
                book.display()
            )));
        }
        let bytes = read_archive_file(archive, bytes_max)?;
        let parsed = ledger::read_archive(&archive.display().to_string(), &bytes)?;
        drop(bytes);
        let staged = Ledger::stage_import(&parsed, book)?;
        checked_install(staged, archive, book)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ledger_model::limits::input::ARCHIVE_BYTES_MAX;
    use ledger_model::*;

    use super::read_archive_file;
    use crate::{Book, BookError, Labelled, WriteOptions};

    /// The archive of a book of one term, written to `dir/book.archive`, and its size.
    fn archive(dir: &Path) -> (std::path::PathBuf, u64) {
        let write = WriteOptions { actor: "human:test".into(), source: None, expect_head: None, recorded_at_ms: 1 };
        let path = dir.join("book.lorebank");
        Book::init(&path, "plain", &write).unwrap();
        let mut book = Book::open(&path).unwrap();
        let put = Body::TermPut(TermPut::new("T-1".parse().unwrap(), "alpha", "Альфа"));
        book.submit_labelled(&write, Labelled::numbered(vec![put], "test"), Vec::new()).unwrap();
        let out = dir.join("book.archive");
        let copy = book.export_archive(&out, false).unwrap();
        (out, copy.n_bytes)
    }

    #[test]
    fn an_archive_at_the_limit_is_imported_and_one_byte_past_it_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let (archive, n_bytes) = archive(dir.path());
        assert_eq!(std::fs::metadata(&archive).unwrap().len(), n_bytes);
        let over = dir.path().join("over.lorebank");
        let error = Book::import_archive_within(&archive, &over, n_bytes - 1).unwrap_err();
        assert!(matches!(&error, BookError::TooLarge(message) if message.contains("ARCHIVE_BYTES_MAX")), "{error}");
        assert!(!over.exists(), "a refused archive created a book");
        let at = dir.path().join("at.lorebank");
        let imported = Book::import_archive_within(&archive, &at, n_bytes).unwrap();
        assert_eq!(imported.n_events, 2);
        // The limit itself: a sparse file one byte past it is refused before it is read.
        let huge = dir.path().join("huge.archive");
        std::fs::File::create(&huge).unwrap().set_len(ARCHIVE_BYTES_MAX + 1).unwrap();
        let error = Book::import_archive(&huge, &dir.path().join("huge.lorebank")).unwrap_err();
        assert!(matches!(&error, BookError::TooLarge(_)), "{error}");
    }

    #[test]
    fn an_endless_archive_is_refused_one_byte_past_the_limit() {
        let error = read_archive_file(Path::new("/dev/zero"), 1_000).unwrap_err();
        assert!(matches!(&error, BookError::TooLarge(message) if message.contains("1000 bytes")), "{error}");
        assert_eq!(read_archive_file(Path::new("/dev/null"), 1_000).unwrap(), Vec::<u8>::new());
    }
}
