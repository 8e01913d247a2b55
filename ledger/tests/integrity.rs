//! Storage integrity beyond the event chain, on real redb files: `verify` names a
//! damaged blob, receipt or index entry; damaged cache entries are dropped and never
//! reported as damage; verify reads one snapshot while appends land; a read-only
//! open never writes; storage limits on chunk keys and receipts are refused.

mod support;

use std::path::{Path, PathBuf};

use ledger::{AppendError, Attachments, Ledger, ReadError, StoredReceipt, VerifyError};
use ledger_model::limits::{CHUNK_KEY_CHARS_MAX, RECEIPT_BYTES_MAX};
use ledger_model::{Hash32, Seq};
use support::term;

fn book(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("book.lorebank")
}

/// Flips one bit `offset` bytes after every stored copy of `marker`; returns how many.
fn flip_in_file(path: &Path, marker: &[u8], offset: usize) -> usize {
    let mut bytes = std::fs::read(path).unwrap();
    let positions: Vec<usize> =
        bytes.windows(marker.len()).enumerate().filter(|(_, w)| *w == marker).map(|(i, _)| i).collect();
    for position in &positions {
        bytes[position + offset] ^= 0x10;
    }
    std::fs::write(path, bytes).unwrap();
    positions.len()
}

fn receipt(id: u8, chunk_key: &str, bytes: &[u8]) -> StoredReceipt {
    StoredReceipt { id: Hash32([id; 32]), bytes: bytes.to_vec(), chapter: 1, chunk_key: chunk_key.into() }
}

/// A book with two events, a blob, two receipts and a cache entry, each findable by
/// its marker.
fn full_book(dir: &tempfile::TempDir) -> PathBuf {
    let path = book(dir);
    let ledger = Ledger::create(&path).unwrap();
    let attachments = Attachments {
        blobs: vec![(Hash32([7; 32]), b"blob-marker: a fold table".to_vec())],
        snapshot: Some(Hash32([9; 32])),
        receipts: Vec::new(),
    };
    ledger.append_with(&[term(1, "event-one")], Some(Seq(0)), attachments).unwrap();
    ledger.append(&[term(2, "event-two")], Some(Seq(1))).unwrap();
    ledger
        .record_receipts(
            vec![receipt(1, "chunk-a", b"receipt-marker-one"), receipt(2, "chunk-b", b"receipt-marker-two")],
            vec![(Hash32([8; 32]), b"text-marker: an input".to_vec())],
        )
        .unwrap();
    ledger.cache_put(Hash32([5; 32]), b"cache-marker: frozen").unwrap();
    path
}

fn damaged_object(path: &Path) -> String {
    let ledger = Ledger::open(path).unwrap();
    match ledger.verify() {
        Err(VerifyError::Damaged { object, .. }) => {
            let refused = ledger.append(&[term(3, "after")], None).unwrap_err();
            assert!(matches!(refused, AppendError::Poisoned(_)), "{refused:?}");
            object
        }
        other => panic!("verify did not report damage: {other:?}"),
    }
}

#[test]
fn an_intact_book_verifies_with_every_object_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    let report = Ledger::open(&path).unwrap().verify().unwrap();
    assert_eq!((report.n_events, report.n_blobs, report.n_receipts, report.n_cache_dropped), (2, 2, 2, 0));
}

#[test]
fn verify_names_a_damaged_blob() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_in_file(&path, b"blob-marker", 3), 1);
    assert_eq!(damaged_object(&path), format!("blob {}", Hash32([7; 32])));
    let error = Ledger::open(&path).unwrap().blob(Hash32([7; 32])).unwrap_err();
    assert_eq!(error.to_string(), format!("blob {} is corrupted: fails its checksum", Hash32([7; 32])));
    assert!(!matches!(error, ReadError::Corrupted { .. }), "a blob is not an event: {error:?}");
}

#[test]
fn verify_names_a_damaged_text_blob() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_in_file(&path, b"text-marker", 0), 1);
    assert_eq!(damaged_object(&path), format!("blob {}", Hash32([8; 32])));
}

#[test]
fn verify_names_a_damaged_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_in_file(&path, b"receipt-marker-two", 16), 1);
    assert_eq!(damaged_object(&path), format!("receipt {}", Hash32([2; 32])));
}

#[test]
fn verify_names_a_damaged_chunk_index_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    // The chunk key is stored once, in the chunk index; its receipt log position
    // follows it. Flip a bit of the position of chunk-b (2 becomes 18).
    assert_eq!(flip_in_file(&path, b"chunk-b", 7), 1);
    let object = damaged_object(&path);
    assert!(object.starts_with("chunk index entry (chapter 1, chunk \"chunk-b\""), "{object}");
}

#[test]
fn verify_names_a_damaged_snapshot_index_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    // The entry is key [9; 32] → revision 1 (u64 LE); make it revision 17.
    let mut needle = vec![9u8; 32];
    needle.extend_from_slice(&1u64.to_le_bytes());
    assert_eq!(flip_in_file(&path, &needle, 32), 1);
    assert_eq!(damaged_object(&path), format!("snapshot index entry {}", Hash32([9; 32])));
}

#[test]
fn a_damaged_cache_entry_is_dropped_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_in_file(&path, b"cache-marker", 2), 1);
    let ledger = Ledger::open(&path).unwrap();
    let report = ledger.verify().unwrap();
    assert_eq!(report.n_cache_dropped, 1);
    assert_eq!(ledger.cache_get(Hash32([5; 32])).unwrap(), None);
    assert_eq!(ledger.verify().unwrap().n_cache_dropped, 0, "dropped, so gone");
    ledger.append(&[term(3, "after")], Some(Seq(2))).unwrap();
}

#[test]
fn verify_while_appends_land_never_reports_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    ledger.append(&[term(1, "first")], None).unwrap();
    std::thread::scope(|scope| {
        let appender = scope.spawn(|| {
            for number in 2..=150 {
                ledger.append(&[term(number, "more")], None).unwrap();
            }
        });
        while !appender.is_finished() {
            let report = ledger.verify().unwrap();
            assert!(report.head.seq >= Seq(1));
        }
    });
    assert_eq!(ledger.verify().unwrap().n_events, 150);
}

#[test]
fn a_read_only_open_reads_and_verifies_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&path, permissions).unwrap();
    let before = std::fs::read(&path).unwrap();
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    {
        let ledger = Ledger::open_read_only(&path).unwrap();
        assert!(ledger.is_read_only());
        assert_eq!(ledger.verify().unwrap().n_events, 2);
        assert_eq!(ledger.events(Seq(1), Seq(2)).unwrap().len(), 2);
        assert_eq!(ledger.receipt(Hash32([1; 32])).unwrap().as_deref(), Some(&b"receipt-marker-one"[..]));
        let refused = ledger.append(&[term(3, "x")], None).unwrap_err();
        assert_eq!(refused, AppendError::Io("the book is open read-only".into()));
        assert!(ledger.cache_put(Hash32([6; 32]), b"x").is_err());
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "a read-only open changed the file");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);
}

#[test]
fn storage_limits_on_receipts_are_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    let long = "k".repeat(CHUNK_KEY_CHARS_MAX + 1);
    for key in ["", "a\nb", "tab\there", long.as_str()] {
        let error = ledger.record_receipts(vec![receipt(1, key, b"r")], Vec::new()).unwrap_err();
        assert!(matches!(error, AppendError::ChunkKey { .. }), "{key:?}: {error:?}");
    }
    let error = ledger.record_receipts(vec![receipt(1, "ok", &vec![0; RECEIPT_BYTES_MAX + 1])], Vec::new());
    assert_eq!(
        error,
        Err(AppendError::ReceiptTooLarge { n_bytes: RECEIPT_BYTES_MAX + 1, bytes_max: RECEIPT_BYTES_MAX })
    );
    ledger.record_receipts(vec![receipt(1, &"k".repeat(CHUNK_KEY_CHARS_MAX), b"r")], Vec::new()).unwrap();
    assert_eq!(ledger.verify().unwrap().n_receipts, 1);
}

#[test]
fn every_event_records_whether_it_ends_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&book(&dir)).unwrap();
    ledger.append(&[term(1, "a"), term(2, "b")], None).unwrap();
    ledger.append(&[term(3, "c")], None).unwrap();
    ledger.append(&[term(4, "d"), term(5, "e"), term(6, "f")], None).unwrap();
    let mut ends = Vec::new();
    ledger
        .scan_batches(Seq(1), Seq(u64::MAX), |event, end| {
            ends.push((event.seq.0, end));
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
    let expected = [(1, false), (2, true), (3, true), (4, false), (5, false), (6, true)];
    assert_eq!(ends, expected.map(|(seq, end)| (seq, Some(end))));
    assert_eq!(ledger.verify().unwrap().n_events, 6);
}
