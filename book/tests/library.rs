//! A library closes its least recently used idle books by count and by the books'
//! own estimate of their memory (`LibraryLimits::max_open_bytes`), and a book in
//! use is never closed for either.

use std::time::Duration;

use book::{Library, LibraryLimits, Reader, WriteOptions, OPEN_LEDGER_BYTES};

fn write() -> WriteOptions {
    WriteOptions { actor: "human:test".into(), source: None, expect_head: None, recorded_at_ms: 1 }
}

#[test]
fn books_past_the_byte_budget_close_least_recently_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let setup = Library::new(dir.path(), LibraryLimits::default()).unwrap();
    for name in ["a", "b", "c", "d"] {
        setup.create(name, "plain", &write()).unwrap();
    }
    drop(setup);
    // Room for two small books and a half.
    let limits = LibraryLimits {
        max_open: 100,
        max_open_bytes: OPEN_LEDGER_BYTES * 5 / 2,
        idle: Duration::from_secs(3600),
        open_wait: Duration::from_secs(5),
    };
    let library = Library::new(dir.path(), limits).unwrap();
    let mut held = None;
    for name in ["a", "b", "c", "d"] {
        let open = library.open(name).unwrap();
        open.lock().glossary(&Reader::Full, None, None).unwrap();
        assert!(open.resident_bytes() > OPEN_LEDGER_BYTES);
        if name == "a" {
            // Book a stays in use.
            held = Some(open);
        }
    }
    // Opening c and d each closed the least recently used idle book first (b, then
    // c) to make room for one more, never a, which is in use.
    let status = library.status();
    assert_eq!(status.open, ["a", "d"], "least recently used first");
    assert_eq!(status.n_closed, 2);
    assert!(status.open_bytes <= limits.max_open_bytes, "{} > {}", status.open_bytes, limits.max_open_bytes);
    drop(held);
    drop(library);
    // A book that grows once open (its fold table and frozen projection loaded for an
    // assembly) is held to the budget by the reaper's pass: the least recently used
    // idle book closes. The budget: room for a grown book and half a small one.
    let grown = {
        let library = Library::new(dir.path(), LibraryLimits::default()).unwrap();
        let d = library.open("d").unwrap();
        d.lock().assembler_for(&Reader::Full).unwrap();
        d.resident_bytes()
    };
    let limits = LibraryLimits { max_open_bytes: grown + OPEN_LEDGER_BYTES / 2, ..limits };
    let library = Library::new(dir.path(), limits).unwrap();
    library.open("a").unwrap().lock().glossary(&Reader::Full, None, None).unwrap();
    let d = library.open("d").unwrap();
    d.lock().assembler_for(&Reader::Full).unwrap();
    drop(d);
    assert!(library.status().open_bytes > limits.max_open_bytes);
    assert_eq!(library.close_idle(), 1);
    let status = library.status();
    assert_eq!(status.open, ["d"]);
    assert!(status.open_bytes <= limits.max_open_bytes, "{} > {}", status.open_bytes, limits.max_open_bytes);
}

#[test]
fn a_byte_budget_never_refuses_a_book_when_every_open_one_is_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let setup = Library::new(dir.path(), LibraryLimits::default()).unwrap();
    for name in ["a", "b"] {
        setup.create(name, "plain", &write()).unwrap();
    }
    drop(setup);
    let limits = LibraryLimits { max_open_bytes: 1, ..LibraryLimits::default() };
    let library = Library::new(dir.path(), limits).unwrap();
    let a = library.open("a").unwrap();
    a.lock().glossary(&Reader::Full, None, None).unwrap();
    let b = library.open("b").unwrap();
    b.lock().glossary(&Reader::Full, None, None).unwrap();
    assert_eq!(library.status().open.len(), 2);
}
