//! Books for the tests of the service and of the crates above it: a new book with the
//! zh profile in one batch, and the write options of a caller.

use std::path::Path;
use std::sync::OnceLock;

use crate::profiles::zh_profile;
use crate::records::event;
use book::{Book, ImportOptions, WriteOptions};
use ledger::Ledger;
use ledger_model::{AssemblyConfig, Body, ConfigSet, Hash32, NewEvent, ProfileRef, Seq};

/// The fold table of the zh profile: its id and bytes, as a book stores them.
pub fn zh_table() -> &'static (Hash32, Vec<u8>) {
    static TABLE: OnceLock<(Hash32, Vec<u8>)> = OnceLock::new();
    TABLE.get_or_init(|| (Hash32(zh_profile().id().0), zh_profile().to_bytes()))
}

/// The config of a book folded with the zh profile, assembling by `assembly`.
pub fn zh_config(assembly: AssemblyConfig) -> Body {
    Body::ConfigSet(ConfigSet { assembly, profile: ProfileRef { name: "zh".into(), table: Some(zh_table().0) } })
}

/// A new book at `path` whose first batch is `first` (a config naming the zh table
/// first), written with the table and expecting an empty book.
pub fn new_zh_book(path: &Path, first: Vec<NewEvent>) -> Book {
    let (table, bytes) = zh_table().clone();
    let mut book = Book::new(Ledger::create(path).unwrap());
    book.submit(&first, Some(Seq(0)), vec![(table, bytes)]).unwrap_or_else(|error| panic!("{error}"));
    book
}

/// A new book at `path` with the zh profile, the default assembly and `bodies`, in one
/// batch of [`event`]s.
pub fn zh_book(path: &Path, bodies: Vec<Body>) -> Book {
    let mut first = vec![event(zh_config(AssemblyConfig::default()))];
    first.extend(bodies.into_iter().map(event));
    new_zh_book(path, first)
}

/// The write options of `actor`: each body's own default source, no expected head,
/// recorded at 0 ms.
pub fn write_as(actor: &str) -> WriteOptions {
    WriteOptions { actor: actor.into(), source: None, expect_head: None, recorded_at_ms: 0 }
}

/// A book at `path` made by `Book::init` with `profile` (by `human:test`, from the
/// source `test`), opened.
pub fn init_book(path: &Path, profile: &str) -> Book {
    let write =
        WriteOptions { actor: "human:test".into(), source: Some("test".into()), expect_head: None, recorded_at_ms: 0 };
    Book::init(path, profile, &write).unwrap();
    Book::open(path).unwrap()
}

/// The options of a plain import: the format detected, nothing strict, written, by
/// the tool's own actor, recorded at 0 ms.
pub fn import_options() -> ImportOptions {
    ImportOptions {
        format: None,
        strict: false,
        dry_run: false,
        actor: None,
        expect_head: None,
        recorded_at_ms: 0,
        source_lang: None,
        target_lang: None,
    }
}
