//! A library: a directory of books, each a file named by a validated name, opened
//! on demand, and closed when idle or when more books are open than allowed (least
//! recently used first). A server hosts one library; every use case on a book is
//! then a call on the [`Book`] it hands out.
//!
//! A name never reaches the file system before it is validated: `[a-z0-9]`, then up
//! to 63 of `[a-z0-9_-]`. Book `wuchuan` is the file `wuchuan.lorebank` in the
//! directory.
//!
//! The books can also be copies of books kept elsewhere (a library replicated
//! through NATS JetStream, `docs/scale.md`): an [`Origin`] then says which books
//! there are, makes a book's file when the directory has none, and attaches every
//! ledger the library opens or creates (its commit gate) before it is used.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ledger::{Ledger, Patience};

use crate::book::Book;
use crate::error::BookError;
use crate::service::{Initialized, WriteOptions};

/// The extension of a book file in a library.
pub const BOOK_EXTENSION: &str = "lorebank";

/// The longest book name.
pub const NAME_LEN_MAX: usize = 64;

/// Checks a book name: `[a-z0-9][a-z0-9_-]{0,63}`.
pub fn check_name(name: &str) -> Result<(), BookError> {
    let bytes = name.as_bytes();
    let valid = !bytes.is_empty()
        && bytes.len() <= NAME_LEN_MAX
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        let shown: String = name.chars().take(NAME_LEN_MAX + 1).collect::<String>().escape_debug().to_string();
        Err(BookError::Invalid(format!(
            "book name \"{shown}\" is not valid: expected a lowercase letter or digit, then up to 63 of a-z, 0-9, `_` and `-`"
        )))
    }
}

/// Where a library's books come from when its files are copies of books kept
/// elsewhere: a replicated log (`cluster`). The library asks it which books there
/// are, lets it make a book's file before opening it, has it create the ledger of a
/// new book, and hands it every ledger it opens, before any use.
pub trait Origin: Send + Sync {
    /// The names of the books the library holds, sorted.
    fn list(&self) -> Result<Vec<String>, BookError>;
    /// Makes the file of book `name` at `path` (which does not exist) if the library
    /// holds the book; `Ok(false)` if it holds no such book.
    fn fetch(&self, name: &str, path: &Path) -> Result<bool, BookError>;
    /// The ledger a new book `name` is built in, at the temporary `path`: refused
    /// (`OpenError::Exists`) when the library holds a book of that name.
    fn create(&self, name: &str, path: &Path) -> Result<Ledger, BookError>;
    /// Attaches the ledger of book `name`, just opened, and brings it up to date.
    fn attach(&self, name: &str, ledger: &Arc<Ledger>) -> Result<(), BookError>;
    /// Book `name` was closed.
    fn detach(&self, name: &str);
}

/// How many books stay open, and for how long without use.
#[derive(Clone, Copy, Debug)]
pub struct LibraryLimits {
    /// Books open at once; opening one more closes the least recently used idle one.
    pub max_open: usize,
    /// Memory the open books may hold by their own estimate
    /// ([`Book::resident_bytes`]); past it, least recently used idle books are closed.
    pub max_open_bytes: u64,
    /// A book unused this long is closed by [`Library::close_idle`].
    pub idle: Duration,
    /// How long opening a book waits for another process that has it open.
    pub open_wait: Duration,
}

impl Default for LibraryLimits {
    fn default() -> LibraryLimits {
        LibraryLimits {
            max_open: 64,
            max_open_bytes: u64::MAX,
            idle: Duration::from_secs(300),
            open_wait: Duration::from_secs(5),
        }
    }
}

/// An open book of a library. The book is behind a lock for the use cases that need
/// it whole; assembling and recording need it only to get the head's
/// [`crate::Assembler`], so many chunks are assembled at once.
pub struct OpenBook {
    name: String,
    book: Mutex<Book>,
    last_used: Mutex<Instant>,
    /// The book's last estimate of its memory ([`Book::resident_bytes`]).
    bytes: AtomicU64,
}

impl std::fmt::Debug for OpenBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenBook").field("name", &self.name).finish()
    }
}

impl OpenBook {
    /// The book's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The book, for one use case. A use case that panicked left the book's caches
    /// in an unknown state: they are dropped, and the ledger (which checks itself)
    /// is kept.
    pub fn lock(&self) -> MutexGuard<'_, Book> {
        *self.last_used.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
        match self.book.lock() {
            Ok(book) => book,
            Err(poisoned) => {
                let mut book = poisoned.into_inner();
                book.forget_states();
                self.book.clear_poison();
                book
            }
        }
    }

    /// The book if no other use case holds it now, for a caller that must not wait
    /// (an async worker): `None` when it is held, or when a use case panicked while
    /// holding it (then [`OpenBook::lock`] drops its caches first).
    pub fn try_lock(&self) -> Option<MutexGuard<'_, Book>> {
        let book = self.book.try_lock().ok()?;
        *self.last_used.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
        Some(book)
    }

    fn idle_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(*self.last_used.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// The book's estimate of its memory: fresh when no request holds the book, the
    /// last one otherwise.
    pub fn resident_bytes(&self) -> u64 {
        if let Ok(mut book) = self.book.try_lock() {
            self.bytes.store(book.resident_bytes(), Ordering::Relaxed);
        }
        self.bytes.load(Ordering::Relaxed)
    }
}

/// What a library has open, for a status report.
#[derive(Clone, Debug)]
pub struct LibraryStatus {
    /// The directory.
    pub dir: PathBuf,
    /// The names of the open books, least recently used first.
    pub open: Vec<String>,
    /// The limits.
    pub limits: LibraryLimits,
    /// The open books' estimate of their memory, summed.
    pub open_bytes: u64,
    /// Books opened since the library was made.
    pub n_opened: u64,
    /// Books closed since (idle, evicted, or at shutdown).
    pub n_closed: u64,
}

struct Shelves {
    open: BTreeMap<String, Arc<OpenBook>>,
    n_opened: u64,
    n_closed: u64,
}

impl Shelves {
    /// What the open books hold, by their own estimates.
    fn resident_bytes(&self) -> u64 {
        self.open.values().map(|open| open.resident_bytes()).sum()
    }

    /// Takes the least recently used open book no caller holds off the shelves, if
    /// there is one, and counts it closed.
    fn close_idlest(&mut self, now: Instant) -> Option<Arc<OpenBook>> {
        let victim = self
            .open
            .iter()
            .filter(|(_, open)| Arc::strong_count(open) == 1)
            .max_by_key(|(_, open)| open.idle_for(now))
            .map(|(name, _)| name.clone())?;
        let open = self.open.remove(&victim)?;
        self.n_closed += 1;
        Some(open)
    }
}

/// A directory of books.
pub struct Library {
    dir: PathBuf,
    limits: LibraryLimits,
    shelves: Mutex<Shelves>,
    /// Serializes opens and creations, so two requests never open one file twice.
    opening: Mutex<()>,
    /// Where the books come from when the files are copies.
    origin: Option<Arc<dyn Origin>>,
}

impl Library {
    /// The library in directory `dir`, which must exist.
    pub fn new(dir: &Path, limits: LibraryLimits) -> Result<Library, BookError> {
        if !dir.is_dir() {
            return Err(BookError::Invalid(format!("{} is not a directory", dir.display())));
        }
        Ok(Library {
            dir: dir.to_owned(),
            limits: LibraryLimits { max_open: limits.max_open.max(1), ..limits },
            shelves: Mutex::new(Shelves { open: BTreeMap::new(), n_opened: 0, n_closed: 0 }),
            opening: Mutex::new(()),
            origin: None,
        })
    }

    /// The library in directory `dir` whose books are copies of `origin`'s.
    pub fn with_origin(dir: &Path, limits: LibraryLimits, origin: Arc<dyn Origin>) -> Result<Library, BookError> {
        Ok(Library { origin: Some(origin), ..Library::new(dir, limits)? })
    }

    /// Tells the origin that `closing` were closed (after they are dropped).
    fn closed(&self, closing: Vec<Arc<OpenBook>>) {
        let names: Vec<String> = closing.iter().map(|open| open.name.clone()).collect();
        // Closing waits for a book's background checkpoint: outside every lock.
        drop(closing);
        if let Some(origin) = &self.origin {
            for name in &names {
                origin.detach(name);
            }
        }
    }

    fn shelves(&self) -> MutexGuard<'_, Shelves> {
        self.shelves.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The file of book `name` (checked).
    pub fn path_of(&self, name: &str) -> Result<PathBuf, BookError> {
        check_name(name)?;
        Ok(self.dir.join(format!("{name}.{BOOK_EXTENSION}")))
    }

    /// The names of the books in the directory (or, for copies, in their origin),
    /// sorted.
    pub fn list(&self) -> Result<Vec<String>, BookError> {
        if let Some(origin) = &self.origin {
            return origin.list();
        }
        let entries = std::fs::read_dir(&self.dir).map_err(|error| {
            BookError::Open(ledger::OpenError::Io { path: self.dir.display().to_string(), detail: error.to_string() })
        })?;
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let file_name = entry.file_name().into_string().ok()?;
                let name = file_name.strip_suffix(&format!(".{BOOK_EXTENSION}"))?.to_owned();
                check_name(&name).ok().map(|()| name)
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// The book `name` if it is open now; never opens it, never waits for a book
    /// being opened (a caller that must not wait falls back to [`Library::open`]).
    pub fn open_now(&self, name: &str) -> Option<Arc<OpenBook>> {
        self.shelves().open.get(name).map(Arc::clone)
    }

    /// Book `name`, opened if it is not open. Opening one more than the limit closes
    /// the least recently used book that no request is using; when every open book
    /// is in use, this fails as busy and opens nothing.
    pub fn open(&self, name: &str) -> Result<Arc<OpenBook>, BookError> {
        let path = self.path_of(name)?;
        if let Some(open) = self.shelves().open.get(name) {
            *open.last_used.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Instant::now();
            return Ok(Arc::clone(open));
        }
        let _opening = self.opening.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(open) = self.shelves().open.get(name) {
            return Ok(Arc::clone(open));
        }
        if !path.exists() {
            let fetched = match &self.origin {
                Some(origin) => origin.fetch(name, &path)?,
                None => false,
            };
            if !fetched {
                return Err(BookError::NoBook(name.to_owned()));
            }
        }
        self.make_room()?;
        let mut patience = Patience::new(self.limits.open_wait);
        let book = Book::new(Ledger::open_in_turn(&path, &mut patience)?);
        if let Some(origin) = &self.origin {
            origin.attach(name, &book.ledger_handle())?;
        }
        let open = Arc::new(OpenBook {
            name: name.to_owned(),
            book: Mutex::new(book),
            last_used: Mutex::new(Instant::now()),
            bytes: AtomicU64::new(0),
        });
        let mut shelves = self.shelves();
        shelves.open.insert(name.to_owned(), Arc::clone(&open));
        shelves.n_opened += 1;
        Ok(open)
    }

    /// Closes least recently used idle books until one more fits under the count,
    /// and, counting an open ledger's worth for it, under the byte limit (a book
    /// that grows once open is held to the limit by [`Library::close_idle`]).
    fn make_room(&self) -> Result<(), BookError> {
        let mut closing = Vec::new();
        let refused = {
            let mut shelves = self.shelves();
            let mut refused = None;
            loop {
                let over_count = shelves.open.len() >= self.limits.max_open;
                // Room for the book about to open, at least an open ledger's worth.
                let over_bytes = self.limits.max_open_bytes < u64::MAX
                    && shelves.resident_bytes() + crate::book::OPEN_LEDGER_BYTES > self.limits.max_open_bytes;
                if !over_count && !over_bytes {
                    break;
                }
                let Some(open) = shelves.close_idlest(Instant::now()) else {
                    // Over the bytes only: every open book is in use, and one more may
                    // still open (a budget of memory is not a reason to refuse work).
                    if over_count {
                        refused = Some(BookError::Open(ledger::OpenError::Busy {
                            path: format!("the library ({} books open, all in use)", self.limits.max_open),
                            waited: "0 s".to_owned(),
                        }));
                    }
                    break;
                };
                closing.push(open);
            }
            refused
        };
        self.closed(closing);
        refused.map_or(Ok(()), Err)
    }

    /// Creates book `name` with `profile` and the default languages (see
    /// [`Book::init`]); it is not opened.
    pub fn create(&self, name: &str, profile: &str, write: &WriteOptions) -> Result<Initialized, BookError> {
        self.create_claimed(name, profile, &ledger_model::LanguagesSet::default(), write, None)
    }

    /// [`Library::create`] in `languages` ([`Book::init_in`]), the first batch
    /// carrying `claim`'s idempotency marker.
    pub fn create_claimed(
        &self,
        name: &str,
        profile: &str,
        languages: &ledger_model::LanguagesSet,
        write: &WriteOptions,
        claim: Option<crate::idempotency::Claim>,
    ) -> Result<Initialized, BookError> {
        let path = self.path_of(name)?;
        let _opening = self.opening.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match &self.origin {
            Some(origin) => Book::init_with(&path, profile, languages, write, claim, |temp| origin.create(name, temp)),
            None => Book::init_with(&path, profile, languages, write, claim, |temp| Ok(ledger::Ledger::create(temp)?)),
        }
    }

    /// Closes the books unused for longer than the idle limit (and not in use), and
    /// idle books past the byte limit; returns how many.
    pub fn close_idle(&self) -> usize {
        let now = Instant::now();
        let closing: Vec<Arc<OpenBook>> = {
            let mut shelves = self.shelves();
            let idle: Vec<String> = shelves
                .open
                .iter()
                .filter(|(_, open)| Arc::strong_count(open) == 1 && open.idle_for(now) >= self.limits.idle)
                .map(|(name, _)| name.clone())
                .collect();
            let closing: Vec<_> = idle.iter().filter_map(|name| shelves.open.remove(name)).collect();
            shelves.n_closed += closing.len() as u64;
            closing
        };
        let n_closed = closing.len();
        self.closed(closing);
        // The byte limit: make_room closes idle books until the rest fit (it refuses
        // only past the count, and closing here never opens one).
        let n_before = self.shelves().n_closed;
        let _ = self.make_room_for_bytes();
        n_closed + (self.shelves().n_closed - n_before) as usize
    }

    fn make_room_for_bytes(&self) -> Result<(), BookError> {
        if self.limits.max_open_bytes == u64::MAX {
            return Ok(());
        }
        let mut closing = Vec::new();
        {
            let mut shelves = self.shelves();
            let now = Instant::now();
            while shelves.resident_bytes() > self.limits.max_open_bytes {
                let Some(open) = shelves.close_idlest(now) else { break };
                closing.push(open);
            }
        }
        self.closed(closing);
        Ok(())
    }

    /// Closes every book (at shutdown): each waits for its background checkpoint.
    pub fn close_all(&self) -> usize {
        let closing: Vec<Arc<OpenBook>> = {
            let mut shelves = self.shelves();
            let closing: Vec<_> = std::mem::take(&mut shelves.open).into_values().collect();
            shelves.n_closed += closing.len() as u64;
            closing
        };
        let n_closed = closing.len();
        self.closed(closing);
        n_closed
    }

    /// What is open.
    pub fn status(&self) -> LibraryStatus {
        let shelves = self.shelves();
        let now = Instant::now();
        let mut open: Vec<(&String, Duration)> =
            shelves.open.iter().map(|(name, open)| (name, open.idle_for(now))).collect();
        open.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let open_bytes = shelves.open.values().map(|open| open.resident_bytes()).sum();
        LibraryStatus {
            dir: self.dir.clone(),
            open: open.into_iter().map(|(name, _)| name.clone()).collect(),
            limits: self.limits,
            open_bytes,
            n_opened: shelves.n_opened,
            n_closed: shelves.n_closed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn names() {
        for good in ["a", "0", "wuchuan", "book-2_x", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "..", "../etc", "a/b", "A", "-a", "_a", "a\0", "a.b", "é", &"a".repeat(65), "a b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
