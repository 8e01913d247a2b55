//! Backup, restore and the portable archive as book use cases (see
//! `docs/operations.md` and `docs/archive.md`): each is one call over the ledger's
//! copy functions, reporting the copy's head and the snapshot ID at that head.

use std::path::{Path, PathBuf};

use ledger::{BackupError, Copied, Head, Ledger, Patience, ReadError, Staged};
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
    pub fn import_archive(archive: &Path, book: &Path) -> Result<Copy, BookError> {
        if book.exists() {
            return Err(BookError::Invalid(format!(
                "{} already exists; import an archive into a new book",
                book.display()
            )));
        }
        let bytes = std::fs::read(archive).map_err(|error| {
            BookError::Read(ReadError::Io(ledger::io_context(format!("cannot read {}", archive.display()), error)))
        })?;
        let parsed = ledger::read_archive(&archive.display().to_string(), &bytes)?;
        drop(bytes);
        let staged = Ledger::stage_import(&parsed, book)?;
        checked_install(staged, archive, book)
    }
}
