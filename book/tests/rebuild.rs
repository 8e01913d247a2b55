//! The snapshot index is derived data that the log alone can rebuild: batch ends are
//! recorded in the log (record format 2), so `Book::rebuild_index` restores every
//! batch-end snapshot with its first revision, and every one of them replays.

use std::path::Path;

use book::Book;
use ledger::{Attachments, Ledger};
use ledger_model::*;
use projections::SnapshotId;
use test_support::books::{zh_config, zh_table};
use test_support::damage::flip_near;
use test_support::records::{event, term};

/// Appends straight to the ledger, without snapshot attachments: the index stays
/// empty, as after its loss.
fn unindexed_book(path: &Path) {
    let ledger = Ledger::create(path).unwrap();
    let config = zh_config(AssemblyConfig::default());
    let blobs = vec![zh_table().clone()];
    ledger.append_with(&[event(config)], None, Attachments { blobs, snapshot: None, documents: Vec::new() }).unwrap();
    ledger.append(&[event(term(1, "沈照", "Шэнь Чжао")), event(term(2, "雾川", "Мглистая река"))], None).unwrap();
    ledger.append(&[event(term(2, "雾川", "Туманная река"))], None).unwrap();
    ledger.append(&[event(term(2, "雾川", "Мглистая река"))], None).unwrap();
}

#[test]
fn rebuild_restores_every_batch_end_snapshot_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    unindexed_book(&path);
    let mut book = Book::open(&path).unwrap();
    assert!(book.ledger().snapshot_index().unwrap().is_empty());
    assert_eq!(book.rebuild_index().unwrap(), 4);
    let mut expected = Vec::new();
    for revision in [1, 3, 4] {
        let state = book.state(Some(Seq(revision))).unwrap();
        expected.push((state.snapshot_id().0, Seq(revision)));
    }
    // Revision 5 has revision 3's snapshot again: its first revision stays 3.
    assert_eq!(book.state(None).unwrap().snapshot_id().0, expected[1].0);
    expected.sort();
    assert_eq!(book.ledger().snapshot_index().unwrap(), expected);
    for (id, revision) in &expected {
        let assembly = book.assemble_at_snapshot(&book::Reader::Full, SnapshotId(*id), 1, "沈照走过雾川。").unwrap();
        assert_eq!(assembly.context.contains("Туманная река"), *revision == Seq(4), "revision {revision}");
    }
    book.verify().unwrap();
}

/// A book longer than `ledger::PIPELINE_MIN_EVENTS`, so folds of the whole log read
/// on a second thread: 6,000 term puts in batches of 500, each source marked.
fn long_book(path: &Path) -> u64 {
    let ledger = Ledger::create(path).unwrap();
    let events: Vec<NewEvent> =
        (1..=6_000u32).map(|n| event(term(1 + n % 700, format!("词{n}#"), format!("слово {n}")))).collect();
    for batch in events.chunks(500) {
        ledger.append(batch, None).unwrap();
    }
    const { assert!(6_000 > ledger::PIPELINE_MIN_EVENTS) };
    12
}

#[test]
fn a_long_log_folds_and_indexes_as_event_by_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let n_batches = long_book(&path);
    let mut book = Book::open(&path).unwrap();
    let mut one_by_one = projections::State::new();
    let mut ends = Vec::new();
    for event in book.ledger().events(Seq(1), Seq(u64::MAX)).unwrap() {
        one_by_one.apply_owned(event);
        if one_by_one.revision().0 % 500 == 0 {
            ends.push((one_by_one.snapshot_id().0, one_by_one.revision()));
        }
    }
    assert_eq!(book.state(None).unwrap().snapshot_id(), one_by_one.snapshot_id());
    assert_eq!(book.rebuild_index().unwrap(), n_batches);
    ends.sort();
    ends.dedup_by_key(|(id, _)| *id);
    assert_eq!(book.ledger().snapshot_index().unwrap(), ends);
    book.verify().unwrap();
}

#[test]
fn a_damaged_event_in_a_long_log_fails_the_fold_naming_its_seq() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    long_book(&path);
    assert!(flip_near(&path, "词4321#".as_bytes(), 3, 0x01) >= 1);
    let mut book = Book::open(&path).unwrap();
    let error = book.state(None).unwrap_err();
    assert_eq!(error.class(), book::ErrorClass::Corrupt);
    assert!(error.to_string().starts_with("event 4321 is corrupted: payload hash mismatch"), "{error}");
    let error = book.state(Some(Seq(5_000))).unwrap_err();
    assert!(error.to_string().starts_with("event 4321 is corrupted"), "{error}");
    assert_eq!(book.state(Some(Seq(4_320))).unwrap().revision(), Seq(4_320));
}
