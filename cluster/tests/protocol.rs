//! The replication protocol on two (and three) nodes of one library over an
//! in-memory log, with the real book service on each node (`docs/scale.md`):
//!
//! * writers on both nodes write one book at once, retrying stale attempts as the
//!   server does (catch up, decide again); afterwards both nodes hold byte-identical
//!   books with every acknowledged write exactly once, whether the log honours the
//!   expected sequence or, as a clustered JetStream may under concurrency, accepts
//!   every publish: then the confirmation and the chain keep the book from forking;
//! * a forged or damaged message is refused, naming the book, the stream sequence and
//!   what failed, the local book is untouched, writes stop, and they resume once the
//!   message is removed;
//! * a fresh node materializes the book, identical, and a node whose file the log no
//!   longer holds keeps it and refuses writes.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use book::{ErrorClass, Labelled, Library, LibraryLimits, Reader, WriteOptions};
use cluster::{ClusterOrigin, Log, MemoryLog, Policy};
use ledger::replica::{split, Group};
use ledger_model::{Body, Seq};
use test_support::records;

struct Node {
    _dir: tempfile::TempDir,
    library: Library,
    origin: Arc<ClusterOrigin>,
}

fn node(log: &Arc<MemoryLog>) -> Node {
    let dir = tempfile::tempdir().unwrap();
    let origin = Arc::new(ClusterOrigin::new("main", Arc::clone(log) as Arc<dyn Log>, Policy::default()).unwrap());
    let library =
        Library::with_origin(dir.path(), LibraryLimits::default(), Arc::clone(&origin) as Arc<dyn book::Origin>)
            .unwrap();
    Node { _dir: dir, library, origin }
}

fn write_options() -> WriteOptions {
    WriteOptions { actor: "human:test".into(), source: Some("test".into()), expect_head: None, recorded_at_ms: 1 }
}

fn term(id: u32) -> Body {
    records::term(id, format!("词{id:05}"), format!("слово {id}"))
}

/// Writes `body` on `node` as the server does: catch up, decide, and run again when
/// the attempt was stale. Returns the head the write answered.
fn write(node: &Node, body: Body) -> Seq {
    for _ in 0..200 {
        if let Some(Err(error)) = node.origin.sync("book") {
            panic!("catch-up failed: {error}");
        }
        let open = node.library.open("book").unwrap();
        let labelled = Labelled { label: String::new(), default_source: "test".into(), body: body.clone() };
        let written = open.lock().submit_labelled(&write_options(), vec![labelled], vec![]);
        match written {
            Ok(written) => return written.submitted.revision,
            Err(error) if error.class() == ErrorClass::Conflict => continue,
            Err(error) => panic!("write failed: {error}"),
        }
    }
    panic!("a write stayed stale 200 times");
}

fn head_of(node: &Node) -> (ledger::Head, projections::SnapshotId) {
    let open = node.library.open("book").unwrap();
    let mut book = open.lock();
    let head = book.ledger().head().unwrap();
    (head, book.snapshot_info(None).unwrap().snapshot)
}

fn archive(node: &Node) -> ledger::Archive {
    let open = node.library.open("book").unwrap();
    let book = open.lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.archive");
    book.ledger().export_archive(&out, false).unwrap();
    ledger::read_archive("a", &std::fs::read(&out).unwrap()).unwrap()
}

fn terms(node: &Node) -> Vec<String> {
    let open = node.library.open("book").unwrap();
    let glossary = open.lock().glossary(&Reader::Full, None, None).unwrap();
    glossary.state.terms().keys().map(ToString::to_string).collect()
}

fn two_nodes_write_one_book(ignore_expected: bool) {
    let log = Arc::new(MemoryLog::new());
    log.ignore_expected(ignore_expected);
    let (a, b) = (node(&log), node(&log));
    a.library.create("book", "plain", &write_options()).unwrap();
    // One race for certain, whatever the threads below do: both nodes at the same
    // head, `a` writes, then `b` writes without catching up. The log refuses `b`'s
    // publish or, ignoring the expected sequence, stores it as a loser; either way
    // `b`'s write is answered as stale and nothing of it enters the book.
    write(&b, term(1));
    write(&a, term(2));
    let stale = Labelled { label: String::new(), default_source: "test".into(), body: term(3) };
    let refused = b.library.open("book").unwrap().lock().submit_labelled(&write_options(), vec![stale], vec![]);
    assert_eq!(refused.err().map(|error| error.class()), Some(ErrorClass::Conflict), "a stale write is a conflict");
    let next = AtomicU32::new(3);
    let acked = Mutex::new(vec!["T-1".to_string(), "T-2".to_string()]);
    std::thread::scope(|scope| {
        for writer in 0..6 {
            let node = if writer % 2 == 0 { &a } else { &b };
            let (next, acked) = (&next, &acked);
            scope.spawn(move || {
                for _ in 0..15 {
                    let id = next.fetch_add(1, Ordering::SeqCst);
                    write(node, term(id));
                    acked.lock().unwrap().push(format!("T-{id}"));
                }
            });
        }
    });
    for node in [&a, &b] {
        node.origin.sync("book").unwrap().unwrap();
    }
    assert_eq!(head_of(&a), head_of(&b));
    assert_eq!(archive(&a), archive(&b), "the two nodes' books differ");
    let mut acked = acked.into_inner().unwrap();
    acked.sort();
    let mut found = terms(&a);
    found.sort();
    assert_eq!(found, acked, "every acknowledged write exactly once");
    // 92 writes of one event each, after the init's config.
    assert_eq!(head_of(&a).0.seq, Seq(93));
    for node in [&a, &b] {
        node.library.open("book").unwrap().lock().verify().unwrap();
    }
    let skipped = log.messages("lorebank.main.book.book").len() as u64 - 93;
    if ignore_expected {
        assert!(skipped > 0, "the log accepted every publish, so the stale write was left in it as a loser");
    } else {
        assert_eq!(skipped, 0, "a log that honours the expected sequence stores no loser");
    }
    // A fresh node materializes the same book.
    let c = node(&log);
    assert_eq!(head_of(&c), head_of(&a));
    assert_eq!(archive(&c), archive(&a));
}

#[test]
fn two_nodes_write_one_book_and_never_fork() {
    two_nodes_write_one_book(false);
}

#[test]
fn a_log_that_accepts_every_publish_still_cannot_fork_the_book() {
    two_nodes_write_one_book(true);
}

#[test]
fn a_forged_message_is_refused_and_the_book_resumes_without_it() {
    let log = Arc::new(MemoryLog::new());
    let a = node(&log);
    a.library.create("book", "plain", &write_options()).unwrap();
    write(&a, term(1));
    let before = archive(&a);
    let subject = "lorebank.main.book.book";
    let messages = log.messages(subject);
    // The last group, with one byte of its record changed and a fresh checksum.
    let last = messages.last().unwrap();
    let part = ledger::replica::Part::parse(&last.bytes).unwrap();
    let mut group = Group::decode(part.bytes).unwrap();
    let mut forged = group.clone();
    let end = forged.records[0].len() - 1;
    forged.records[0][end] ^= 1;
    forged.before = ledger::Head { seq: Seq(2), hash: ledger::Head::default().hash };
    let forged_at = log.inject(subject, &split(&forged.encode(), 1 << 20).unwrap()[0]);
    let error = a.origin.sync("book").unwrap().unwrap_err().to_string();
    assert!(error.contains("book book") && error.contains(&format!("stream sequence {forged_at}")), "{error}");
    assert!(error.contains("record 0 of the group (event 3)"), "{error}");
    assert_eq!(archive(&a), before, "the local book is untouched");
    // Writes stop, naming the same message; reads go on.
    let labelled = Labelled { label: String::new(), default_source: "test".into(), body: term(2) };
    let refused =
        a.library.open("book").unwrap().lock().submit_labelled(&write_options(), vec![labelled], vec![]).unwrap_err();
    assert_eq!(refused.class(), ErrorClass::Corrupt, "{refused}");
    assert!(refused.to_string().contains(&format!("stream sequence {forged_at}")), "{refused}");
    assert_eq!(terms(&a), ["T-1"]);
    // Bytes that are no part at all are refused too.
    log.delete(forged_at);
    let garbage_at = log.inject(subject, b"{\"term_put\": \"not a part\"}");
    let error = a.origin.sync("book").unwrap().unwrap_err().to_string();
    assert!(error.contains(&format!("stream sequence {garbage_at}")) && error.contains("not a part"), "{error}");
    // Once an operator removes it, the book resumes, though the log then refuses
    // every expected sequence on the subject (as nats-server 2.9 does).
    log.delete(garbage_at);
    log.forget_last(true);
    a.origin.sync("book").unwrap().unwrap();
    write(&a, term(2));
    assert_eq!(terms(&a), ["T-1", "T-2"]);
    // A well-formed group that starts at an old head is a race's loser: skipped.
    group.records.clear();
    group.blobs.clear();
    group.snapshots.clear();
    let stale_at = log.inject(subject, &split(&group.encode(), 1 << 20).unwrap()[0]);
    let synced = a.origin.sync("book").unwrap().unwrap();
    assert_eq!((synced.position, synced.n_skipped), (stale_at, 1));
    write(&a, term(3));
    log.forget_last(false);
    let b = node(&log);
    assert_eq!(archive(&b), archive(&a));
}

#[test]
fn a_copy_the_log_no_longer_holds_is_kept_and_refuses_writes() {
    let log = Arc::new(MemoryLog::new());
    let a = node(&log);
    a.library.create("book", "plain", &write_options()).unwrap();
    write(&a, term(1));
    let kept = archive(&a);
    drop(a.library);
    // The same directory, served from a log that lost everything.
    let empty = Arc::new(MemoryLog::new());
    let origin = Arc::new(ClusterOrigin::new("main", Arc::clone(&empty) as Arc<dyn Log>, Policy::default()).unwrap());
    let library =
        Library::with_origin(a._dir.path(), LibraryLimits::default(), Arc::clone(&origin) as Arc<dyn book::Origin>)
            .unwrap();
    let again = Node { _dir: a._dir, library, origin };
    assert_eq!(archive(&again), kept);
    assert_eq!(terms(&again), ["T-1"]);
    let halted = again.origin.books()[0].halted.clone().unwrap();
    assert!(halted.contains("no longer holds"), "{halted}");
    let labelled = Labelled { label: String::new(), default_source: "test".into(), body: term(2) };
    let refused = again
        .library
        .open("book")
        .unwrap()
        .lock()
        .submit_labelled(&write_options(), vec![labelled], vec![])
        .unwrap_err();
    assert!(refused.to_string().contains("no longer holds"), "{refused}");
    assert!(empty.messages("lorebank.main.book.book").is_empty());
}

#[test]
fn a_large_batch_travels_in_parts() {
    let log = Arc::new(MemoryLog::new());
    let policy = Policy { part_bytes_max: 4096, ..Policy::default() };
    let dir = tempfile::tempdir().unwrap();
    let origin = Arc::new(ClusterOrigin::new("main", Arc::clone(&log) as Arc<dyn Log>, policy).unwrap());
    let library =
        Library::with_origin(dir.path(), LibraryLimits::default(), Arc::clone(&origin) as Arc<dyn book::Origin>)
            .unwrap();
    let a = Node { _dir: dir, library, origin };
    a.library.create("book", "plain", &write_options()).unwrap();
    let bodies: Vec<Labelled> = (1..=400)
        .map(|id| Labelled { label: format!("line {id}"), default_source: "test".into(), body: term(id) })
        .collect();
    a.library.open("book").unwrap().lock().submit_labelled(&write_options(), bodies, vec![]).unwrap();
    let n_messages = log.messages("lorebank.main.book.book").len();
    assert!(n_messages > 10, "{n_messages} messages");
    let b = node(&log);
    assert_eq!(archive(&b), archive(&a));
    assert_eq!(terms(&b).len(), 400);
}

#[test]
fn a_book_of_its_own_is_refused_or_seeded_into_the_library() {
    let log = Arc::new(MemoryLog::new());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    book::Book::init(&path, "plain", &write_options()).unwrap();
    {
        let mut book = book::Book::open(&path).unwrap();
        for batch in 0..3u32 {
            let bodies: Vec<Labelled> = (1..=5)
                .map(|i| Labelled { label: String::new(), default_source: "test".into(), body: term(batch * 10 + i) })
                .collect();
            book.submit_labelled(&write_options(), bodies, vec![]).unwrap();
        }
    }
    let origin = |seed: bool| {
        Arc::new(ClusterOrigin::new("main", Arc::clone(&log) as Arc<dyn Log>, Policy::default()).unwrap().seeding(seed))
    };
    let refusing = origin(false);
    let library =
        Library::with_origin(dir.path(), LibraryLimits::default(), Arc::clone(&refusing) as Arc<dyn book::Origin>)
            .unwrap();
    let error = library.open("book").unwrap_err().to_string();
    assert!(error.contains("a book of its own") && error.contains("--seed"), "{error}");
    drop(library);
    let seeding = origin(true);
    let library =
        Library::with_origin(dir.path(), LibraryLimits::default(), Arc::clone(&seeding) as Arc<dyn book::Origin>)
            .unwrap();
    let a = Node { _dir: dir, library, origin: seeding };
    assert_eq!(terms(&a).len(), 15);
    let b = node(&log);
    assert_eq!(archive(&b), archive(&a), "the library's book is the file, byte for byte");
    write(&b, term(99));
    a.origin.sync("book").unwrap().unwrap();
    assert_eq!(head_of(&a), head_of(&b));
}

#[test]
fn a_fresh_node_takes_the_checkpoint_another_shared() {
    let log = Arc::new(MemoryLog::new());
    let a = node(&log);
    a.library.create("book", "plain", &write_options()).unwrap();
    for batch in 0..5u32 {
        let bodies: Vec<Labelled> = (1..=500)
            .map(|i| Labelled { label: String::new(), default_source: "test".into(), body: term(batch * 1000 + i) })
            .collect();
        a.library.open("book").unwrap().lock().submit_labelled(&write_options(), bodies, vec![]).unwrap();
    }
    let ledger = {
        let open = a.library.open("book").unwrap();
        let mut book = open.lock();
        // The book's policy files one every 2,000 events, in the background.
        book.wait_for_checkpoint();
        book.ledger_handle()
    };
    let newest = ledger.checkpoints().unwrap().last().copied().expect("a checkpoint after 2,500 events");
    assert_eq!(a.origin.share_checkpoints(&[("book".into(), Arc::clone(&ledger))]), 1);
    assert_eq!(a.origin.share_checkpoints(&[("book".into(), ledger)]), 0, "shared once");
    assert_eq!(log.checkpoint_revision("book").unwrap(), Some(newest.revision.0));
    let b = node(&log);
    let open = b.library.open("book").unwrap();
    let taken = open.lock().ledger().checkpoints().unwrap();
    assert_eq!(taken.iter().map(|info| info.revision).collect::<Vec<_>>(), [newest.revision]);
    drop(open);
    assert_eq!(head_of(&b), head_of(&a));
    assert_eq!(terms(&b), terms(&a));
    b.library.open("book").unwrap().lock().verify().unwrap();
    // A checkpoint taken on another log (its chain hash is not this log's) is ignored.
    let c = node(&Arc::new(MemoryLog::new()));
    c.library.create("book", "plain", &write_options()).unwrap();
    let bodies: Vec<Labelled> = (1..=newest.revision.0 as u32)
        .map(|i| Labelled { label: String::new(), default_source: "other".into(), body: term(i) })
        .collect();
    c.library.open("book").unwrap().lock().submit_labelled(&write_options(), bodies, vec![]).unwrap();
    let other = c.library.open("book").unwrap().lock().ledger_handle();
    assert!(other.head().unwrap().seq >= newest.revision);
    assert_eq!(b.origin.fetch_checkpoint("book", &other).unwrap(), None);
    assert!(other.checkpoints().unwrap().iter().all(|info| info.revision != newest.revision));
}

#[test]
fn a_running_node_whose_log_lost_its_tip_refuses_writes() {
    let log = Arc::new(MemoryLog::new());
    let a = node(&log);
    a.library.create("book", "plain", &write_options()).unwrap();
    write(&a, term(1));
    write(&a, term(2));
    let kept = archive(&a);
    // The stream loses its last acknowledged message (a quorum lost power before it
    // was synced), while the node runs.
    let messages = log.messages("lorebank.main.book.book");
    log.delete(messages.last().unwrap().position);
    let labelled = Labelled { label: String::new(), default_source: "test".into(), body: term(3) };
    let refused =
        a.library.open("book").unwrap().lock().submit_labelled(&write_options(), vec![labelled], vec![]).unwrap_err();
    assert_eq!(refused.class(), ErrorClass::Corrupt, "{refused}");
    assert!(refused.to_string().contains("no longer holds"), "{refused}");
    assert_eq!(archive(&a), kept, "the copy, which holds the lost write, is kept");
    assert_eq!(terms(&a), ["T-1", "T-2"]);
    assert!(a.origin.sync("book").unwrap().is_err(), "the copy no longer follows the log");
}
