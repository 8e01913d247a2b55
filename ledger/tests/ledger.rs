//! The ledger's storage contract, on real redb files in a temp dir: atomic batches,
//! optimistic concurrency, reads that check the chain, `verify` naming the first bad
//! seq after a byte of the file is flipped, and appends refused after corruption.

mod support;

use std::time::Duration;

use ledger::{AppendError, Ledger, OpenError, Patience, ReadError, VerifyError};
use ledger_model::{Body, Seq, TermPut};
use support::term;
use test_support::damage::flip_near;

fn book(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("book.lorebank")
}

#[test]
fn batches_append_and_read_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    assert_eq!(ledger.head().unwrap().seq, Seq(0));
    let first = ledger.append(&[term(1, "a"), term(2, "b")], Some(Seq(0))).unwrap();
    assert_eq!((first.first, first.last), (Seq(1), Seq(2)));
    let second = ledger.append(&[term(3, "c")], None).unwrap();
    assert_eq!((second.first, second.last), (Seq(3), Seq(3)));
    let events = ledger.events(Seq(1), Seq(10)).unwrap();
    assert_eq!(events.iter().map(|e| e.seq.0).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(events[2].content, term(3, "c"));
    assert_eq!(events[1].prev, events[0].hash);
    assert_eq!(ledger.head().unwrap().hash, events[2].hash);
    assert_eq!(ledger.events(Seq(2), Seq(2)).unwrap()[0].content, term(2, "b"));
    assert!(matches!(ledger.get(Seq(4)), Err(ReadError::NotFound { seq: Seq(4), head: Seq(3) })));
}

#[test]
fn a_stale_expected_head_conflicts_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    ledger.append(&[term(1, "a")], Some(Seq(0))).unwrap();
    let error = ledger.append(&[term(2, "b"), term(3, "c")], Some(Seq(0))).unwrap_err();
    assert!(matches!(error, AppendError::Conflict { expected: Seq(0), actual: Seq(1) }), "{error:?}");
    assert_eq!(ledger.head().unwrap().seq, Seq(1));
    assert_eq!(ledger.verify().unwrap().n_events, 1);
}

#[test]
fn bad_batches_are_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    assert!(matches!(ledger.append(&[], None), Err(AppendError::EmptyBatch)));
    let mut huge = term(1, "huge");
    if let Body::TermPut(TermPut { note, .. }) = &mut huge.body {
        *note = Some("字".repeat(30_000));
    }
    let error = ledger.append(&[term(2, "ok"), huge], None).unwrap_err();
    assert!(matches!(error, AppendError::Encode { index: 1, .. }), "{error:?}");
    assert_eq!(ledger.head().unwrap().seq, Seq(0));
}

#[test]
fn reopening_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    {
        let ledger = Ledger::create(&path).unwrap();
        ledger.append(&[term(1, "a"), term(2, "b")], None).unwrap();
    }
    assert!(matches!(Ledger::create(&path), Err(OpenError::Exists { .. })));
    let ledger = Ledger::open(&path).unwrap();
    let report = ledger.verify().unwrap();
    assert_eq!((report.n_events, report.head.seq), (2, Seq(2)));
    assert!(matches!(Ledger::open(&dir.path().join("missing.lorebank")), Err(OpenError::Missing { .. })));
}

#[test]
fn a_second_open_in_the_same_process_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let _ledger = Ledger::create(&path).unwrap();
    assert!(matches!(Ledger::open(&path), Err(OpenError::InUse { .. })));
}

#[test]
fn an_open_in_turn_waits_for_the_holder_and_gets_the_book_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    drop(Ledger::create(&path).unwrap());
    let first = Ledger::open_in_turn(&path, &mut Patience::new(Duration::ZERO)).unwrap();
    let (opened, waiting) = std::sync::mpsc::channel();
    let second = std::thread::spawn({
        let path = path.clone();
        move || {
            let ledger = Ledger::open_in_turn(&path, &mut Patience::new(Duration::from_secs(30)));
            opened.send(()).unwrap();
            ledger.unwrap().head().unwrap().seq
        }
    });
    first.append(&[term(1, "a")], Some(Seq(0))).unwrap();
    assert!(waiting.try_recv().is_err(), "the second open did not wait for the first");
    drop(first);
    assert_eq!(second.join().unwrap(), Seq(1), "the second open did not see the first one's append");
}

#[test]
fn an_open_in_turn_that_runs_out_of_patience_says_so_once_and_names_the_book() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    drop(Ledger::create(&path).unwrap());
    let _held = Ledger::open_in_turn(&path, &mut Patience::new(Duration::ZERO)).unwrap();
    let mut notices = Vec::new();
    let error = Ledger::open_read_only_in_turn(
        &path,
        &mut Patience::telling(Duration::from_millis(1200), |notice| notices.push(notice.to_owned())),
    )
    .err()
    .expect("opened a book another handle writes");
    assert_eq!(
        error.to_string(),
        format!("{} is in use by another process: gave up after waiting 1.2 s", path.display())
    );
    assert_eq!(
        notices,
        [format!("waiting for {}: another lorebank process is writing it (giving up after 1.2 s)", path.display())]
    );
}

#[test]
fn an_open_in_turn_of_a_missing_book_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let error = Ledger::open_in_turn(&path, &mut Patience::new(Duration::ZERO)).err().unwrap();
    assert!(matches!(error, OpenError::Missing { .. }), "{error}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the open left files beside a missing book");
}

#[test]
fn a_file_that_is_not_a_ledger_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    std::fs::write(&path, "glossary\tnot a ledger\n").unwrap();
    let error = Ledger::open(&path).err().expect("opened a text file");
    assert!(
        matches!(error, OpenError::Corrupted { .. } | OpenError::Io { .. } | OpenError::NotALedger { .. }),
        "{error:?}"
    );
}

fn corrupted_book(flip_marker: &str, offset: isize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    {
        let ledger = Ledger::create(&path).unwrap();
        for number in 1..=5 {
            ledger.append(&[term(number, &format!("marker-{number}-end"))], None).unwrap();
        }
    }
    assert!(flip_near(&path, flip_marker.as_bytes(), offset, 0x10) >= 1);
    (dir, path)
}

#[test]
fn verify_names_the_first_bad_seq_after_a_flipped_payload_byte() {
    let (_dir, path) = corrupted_book("marker-3-end", 2);
    let ledger = Ledger::open(&path).unwrap();
    let error = ledger.verify().unwrap_err();
    assert!(matches!(error, VerifyError::Corrupted { seq: Seq(3), .. }), "{error:?}");
    // Corruption poisons the ledger: no appends until reopened and verified.
    let refused = ledger.append(&[term(9, "after")], None).unwrap_err();
    assert!(matches!(refused, AppendError::Poisoned(_)), "{refused:?}");
    // Reads that cross the bad event fail too; reads before it still work.
    assert!(matches!(ledger.events(Seq(1), Seq(5)), Err(ReadError::Corrupted { seq: Seq(3), .. })));
    assert_eq!(ledger.events(Seq(1), Seq(2)).unwrap().len(), 2);
}

#[test]
fn a_flipped_byte_in_the_last_event_fails_the_open() {
    let (_dir, path) = corrupted_book("marker-5-end", 0);
    let error = Ledger::open(&path).err().expect("opened a corrupted book");
    assert!(matches!(error, OpenError::Corrupted { .. }), "{error:?}");
}

#[test]
fn a_flipped_header_byte_breaks_the_chain() {
    // The header precedes the payload; the source string (the marker) is near the
    // payload's start. Walk back into the header's prev-hash bytes of event 2.
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let marker = "marker-2-end";
    let payload_offset;
    {
        let ledger = Ledger::create(&path).unwrap();
        for number in 1..=3 {
            ledger.append(&[term(number, &format!("marker-{number}-end"))], None).unwrap();
        }
        let event = term(2, marker).encode().unwrap();
        let at = event.windows(marker.len()).position(|w| w == marker.as_bytes()).unwrap();
        payload_offset = at as isize;
    }
    // 80-byte header; prev hash occupies header bytes 16..48.
    assert!(flip_near(&path, marker.as_bytes(), -payload_offset - 80 + 20, 0x10) >= 1);
    let ledger = Ledger::open(&path).unwrap();
    let error = ledger.verify().unwrap_err();
    assert!(matches!(error, VerifyError::Corrupted { seq: Seq(2), .. }), "{error:?}");
}

#[test]
fn attachments_commit_with_their_batch_or_not_at_all() {
    use ledger::Attachments;
    use ledger_model::Hash32;
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    let table = (Hash32([1; 32]), b"fold table".to_vec());
    let attachments =
        Attachments { blobs: vec![table.clone()], snapshot: Some(Hash32([9; 32])), documents: Vec::new() };
    // A conflicting batch writes neither its events nor its attachments.
    let refused = ledger.append_with(&[term(1, "a")], Some(Seq(5)), attachments.clone());
    assert!(matches!(refused, Err(AppendError::Conflict { .. })));
    assert_eq!(ledger.blob(table.0).unwrap(), None);
    assert_eq!(ledger.snapshot_revision(Hash32([9; 32])).unwrap(), None);
    ledger.append_with(&[term(1, "a"), term(2, "b")], Some(Seq(0)), attachments.clone()).unwrap();
    assert_eq!(ledger.blob(table.0).unwrap(), Some(table.1.clone()));
    assert_eq!(ledger.snapshot_revision(Hash32([9; 32])).unwrap(), Some(Seq(2)));
    // The index keeps the first revision with a snapshot.
    ledger.append_with(&[term(3, "c")], None, attachments).unwrap();
    assert_eq!(ledger.snapshot_revision(Hash32([9; 32])).unwrap(), Some(Seq(2)));
    ledger.index_snapshot(Hash32([9; 32]), Seq(1)).unwrap();
    assert_eq!(ledger.snapshot_revision(Hash32([9; 32])).unwrap(), Some(Seq(1)));
}

#[test]
fn cache_entries_round_trip_and_a_damaged_one_is_never_returned() {
    use ledger_model::Hash32;
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let key = Hash32([3; 32]);
    {
        let ledger = Ledger::create(&path).unwrap();
        ledger.cache_put(key, b"frozen-projection-bytes").unwrap();
        assert_eq!(ledger.cache_get(key).unwrap().as_deref(), Some(&b"frozen-projection-bytes"[..]));
        assert_eq!(ledger.cache_clear().unwrap(), 1);
        assert_eq!(ledger.cache_get(key).unwrap(), None);
        ledger.cache_put(key, b"frozen-projection-bytes").unwrap();
    }
    assert!(flip_near(&path, b"frozen-projection", 3, 0x10) >= 1);
    let ledger = Ledger::open(&path).unwrap();
    assert_eq!(ledger.cache_get(key).unwrap(), None);
}

/// Queues an entry (`key`, bytes `key`'s first byte) whose bytes the writer makes only
/// once the returned sender is sent to, and returns once the writer is making them.
fn hold_the_writer(ledger: &Ledger, key: ledger_model::Hash32) -> crossbeam_channel::Sender<()> {
    let (started, on_the_writer) = crossbeam_channel::bounded(1);
    let (release, released) = crossbeam_channel::bounded::<()>(1);
    assert!(ledger.cache_put_later(key, move || {
        started.send(()).unwrap();
        released.recv().unwrap();
        vec![key.0[0]]
    }));
    on_the_writer.recv_timeout(Duration::from_secs(30)).unwrap();
    release
}

/// An entry queued for the writer is read back by the thread that queued it even
/// while the writer is still busy, is filed before the book closes, and is never
/// queued by a read-only handle.
#[test]
fn a_cache_entry_filed_later_is_read_at_once_and_kept_when_the_book_closes() {
    use ledger_model::Hash32;
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    let release = hold_the_writer(&ledger, Hash32([1; 32]));
    assert!(ledger.cache_put_later(Hash32([2; 32]), || vec![2]));
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        release.send(()).unwrap();
    });
    // The writer is still making the first entry: the read waits for both.
    assert_eq!(ledger.cache_get(Hash32([2; 32])).unwrap(), Some(vec![2]));
    releaser.join().unwrap();
    ledger.append(&[term(1, "a")], Some(Seq(0))).unwrap();

    // Queued behind a busy writer when the book closes: filed before it closes.
    let release = hold_the_writer(&ledger, Hash32([3; 32]));
    assert!(ledger.cache_put_later(Hash32([4; 32]), || vec![4]));
    let closing = std::thread::spawn(move || drop(ledger));
    std::thread::sleep(Duration::from_millis(100));
    release.send(()).unwrap();
    closing.join().unwrap();

    let ledger = Ledger::open_read_only(&path).unwrap();
    for n in 1..=4u8 {
        assert_eq!(ledger.cache_get(Hash32([n; 32])).unwrap(), Some(vec![n]), "entry {n}");
    }
    assert!(!ledger.cache_put_later(Hash32([5; 32]), || vec![5]));
    assert_eq!(ledger.head().unwrap().seq, Seq(1));
}

/// At most `CACHE_PUTS_QUEUED_MAX` entries wait for the writer; one more is not
/// queued (and never filed). An entry whose bytes cannot be made is dropped, and the
/// writer goes on appending.
#[test]
fn cache_entries_filed_later_are_bounded_and_a_failing_one_is_dropped() {
    use ledger_model::limits::CACHE_PUTS_QUEUED_MAX;
    use ledger_model::Hash32;
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    // The writer is making the first entry's bytes; the queue is empty.
    let release = hold_the_writer(&ledger, Hash32([0; 32]));
    for n in 1..=CACHE_PUTS_QUEUED_MAX as u8 {
        assert!(ledger.cache_put_later(Hash32([n; 32]), move || vec![n]), "entry {n}");
    }
    let over = Hash32([CACHE_PUTS_QUEUED_MAX as u8 + 1; 32]);
    assert!(!ledger.cache_put_later(over, || b"over".to_vec()));
    release.send(()).unwrap();
    assert_eq!(ledger.cache_get(Hash32([0; 32])).unwrap(), Some(vec![0]));
    for n in 1..=CACHE_PUTS_QUEUED_MAX as u8 {
        assert_eq!(ledger.cache_get(Hash32([n; 32])).unwrap(), Some(vec![n]));
    }
    assert_eq!(ledger.cache_get(over).unwrap(), None);

    assert!(ledger.cache_put_later(Hash32([9; 32]), || panic!("the bytes cannot be made")));
    assert_eq!(ledger.cache_get(Hash32([9; 32])).unwrap(), None);
    ledger.append(&[term(1, "a")], Some(Seq(0))).unwrap();
    assert_eq!(ledger.head().unwrap().seq, Seq(1));
}
