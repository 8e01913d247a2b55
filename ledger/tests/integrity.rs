//! Storage integrity beyond the event chain, on real redb files: `verify` names a
//! damaged blob, document or shelf entry; damaged cache entries are dropped and never
//! reported as damage; verify reads one snapshot while appends land; a read-only
//! open never writes; storage limits on document keys and documents are refused;
//! documents read back by shelf and by id prefix.

mod support;

use std::path::{Path, PathBuf};

use ledger::{AppendError, Attachments, Document, Ledger, ReadError, VerifyError};
use ledger_model::limits::{DOCUMENT_BYTES_MAX, DOCUMENT_KEY_CHARS_MAX};
use ledger_model::{Hash32, Seq};
use support::term;
use test_support::damage::flip_near;

fn book(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("book.lorebank")
}

fn document(id: u8, key: &str, bytes: &[u8]) -> Document {
    Document { id: Hash32([id; 32]), bytes: bytes.to_vec(), group: 1, key: key.into() }
}

/// A book with two events, a blob, two documents and a cache entry, each findable by
/// its marker.
fn full_book(dir: &tempfile::TempDir) -> PathBuf {
    let path = book(dir);
    let ledger = Ledger::create(&path).unwrap();
    let attachments = Attachments {
        blobs: vec![(Hash32([7; 32]), b"blob-marker: a fold table".to_vec())],
        snapshot: Some(Hash32([9; 32])),
        documents: Vec::new(),
    };
    ledger.append_with(&[term(1, "event-one")], Some(Seq(0)), attachments).unwrap();
    ledger.append(&[term(2, "event-two")], Some(Seq(1))).unwrap();
    ledger
        .file_documents(
            vec![document(1, "shelf-a", b"document-marker-one"), document(2, "shelf-b", b"document-marker-two")],
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
    assert_eq!((report.n_events, report.n_blobs, report.n_documents, report.n_cache_dropped), (2, 2, 2, 0));
}

#[test]
fn verify_names_a_damaged_blob() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_near(&path, b"blob-marker", 3, 0x10), 1);
    assert_eq!(damaged_object(&path), format!("blob {}", Hash32([7; 32])));
    let error = Ledger::open(&path).unwrap().blob(Hash32([7; 32])).unwrap_err();
    assert_eq!(error.to_string(), format!("blob {} is corrupted: fails its checksum", Hash32([7; 32])));
    assert!(!matches!(error, ReadError::Corrupted { .. }), "a blob is not an event: {error:?}");
}

#[test]
fn verify_names_a_damaged_text_blob() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_near(&path, b"text-marker", 0, 0x10), 1);
    assert_eq!(damaged_object(&path), format!("blob {}", Hash32([8; 32])));
}

#[test]
fn verify_names_a_damaged_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_near(&path, b"document-marker-two", 16, 0x10), 1);
    assert_eq!(damaged_object(&path), format!("document {}", Hash32([2; 32])));
}

#[test]
fn verify_names_a_damaged_shelf_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    // The shelf key is stored once, in the shelf table; its document log position
    // follows it. Flip a bit of the position of shelf-b (2 becomes 18).
    assert_eq!(flip_near(&path, b"shelf-b", 7, 0x10), 1);
    let object = damaged_object(&path);
    assert!(object.starts_with("shelf entry (group 1, key \"shelf-b\""), "{object}");
}

#[test]
fn verify_names_a_damaged_snapshot_index_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    // The entry is key [9; 32] → revision 1 (u64 LE); make it revision 17.
    let mut needle = vec![9u8; 32];
    needle.extend_from_slice(&1u64.to_le_bytes());
    assert_eq!(flip_near(&path, &needle, 32, 0x10), 1);
    assert_eq!(damaged_object(&path), format!("snapshot index entry {}", Hash32([9; 32])));
}

#[test]
fn a_damaged_cache_entry_is_dropped_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = full_book(&dir);
    assert_eq!(flip_near(&path, b"cache-marker", 2, 0x10), 1);
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
        assert_eq!(ledger.document(Hash32([1; 32])).unwrap().as_deref(), Some(&b"document-marker-one"[..]));
        let refused = ledger.append(&[term(3, "x")], None).unwrap_err();
        assert!(
            matches!(&refused, AppendError::Io(error) if error.to_string() == "the book is open read-only"),
            "{refused:?}"
        );
        assert!(ledger.cache_put(Hash32([6; 32]), b"x").is_err());
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "a read-only open changed the file");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);
}

#[test]
fn storage_limits_on_documents_are_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    let long = "k".repeat(DOCUMENT_KEY_CHARS_MAX + 1);
    for key in ["", "a\nb", "tab\there", long.as_str()] {
        let error = ledger.file_documents(vec![document(1, key, b"r")], Vec::new()).unwrap_err();
        assert!(matches!(error, AppendError::DocumentKey { .. }), "{key:?}: {error:?}");
        assert!(error.to_string().starts_with("document key "), "{error}");
    }
    let error = ledger.file_documents(vec![document(1, "ok", &vec![0; DOCUMENT_BYTES_MAX + 1])], Vec::new());
    let expected = AppendError::DocumentTooLarge { n_bytes: DOCUMENT_BYTES_MAX + 1, bytes_max: DOCUMENT_BYTES_MAX };
    assert!(matches!(error, Err(AppendError::DocumentTooLarge { .. })), "{error:?}");
    assert_eq!(error.unwrap_err().to_string(), expected.to_string());
    ledger.file_documents(vec![document(1, &"k".repeat(DOCUMENT_KEY_CHARS_MAX), b"r")], Vec::new()).unwrap();
    assert_eq!(ledger.verify().unwrap().n_documents, 1);
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

#[test]
fn documents_filed_under_two_groups_read_back_by_shelf_and_by_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    let filed = |id: u8, group: u32, key: &str| Document {
        id: Hash32([id; 32]),
        bytes: format!("document {id}").into_bytes(),
        group,
        key: key.into(),
    };
    ledger.file_documents(vec![filed(0xa1, 2, "b"), filed(0xa2, 1, "z")], Vec::new()).unwrap();
    ledger.file_documents(vec![filed(0xb3, 2, "a"), filed(0xb4, 2, "b")], Vec::new()).unwrap();
    // Filing a stored document again changes nothing.
    ledger.file_documents(vec![filed(0xa1, 7, "other")], Vec::new()).unwrap();

    let group_two = ledger.filed(Some(2)).unwrap();
    let expected = vec![
        (2, "a".to_owned(), 3, Hash32([0xb3; 32])),
        (2, "b".to_owned(), 1, Hash32([0xa1; 32])),
        (2, "b".to_owned(), 4, Hash32([0xb4; 32])),
    ];
    assert_eq!(group_two, expected);
    assert_eq!(ledger.filed(Some(1)).unwrap(), vec![(1, "z".to_owned(), 2, Hash32([0xa2; 32]))]);
    assert!(ledger.filed(Some(7)).unwrap().is_empty());
    assert_eq!(ledger.filed(None).unwrap().len(), 4);

    assert_eq!(ledger.documents_with_prefix("B3B3", 5).unwrap(), vec![Hash32([0xb3; 32])]);
    assert_eq!(ledger.documents_with_prefix("a", 5).unwrap(), vec![Hash32([0xa1; 32]), Hash32([0xa2; 32])]);
    assert_eq!(ledger.documents_with_prefix("a", 1).unwrap().len(), 1);
    assert!(ledger.documents_with_prefix("c", 5).unwrap().is_empty());
    assert_eq!(ledger.document(Hash32([0xb4; 32])).unwrap().as_deref(), Some(&b"document 180"[..]));
    assert_eq!(ledger.document(Hash32([0xc5; 32])).unwrap(), None);
    assert_eq!(ledger.verify().unwrap().n_documents, 4);
}

/// `file_documents_then` answers once, on the writer thread, after the documents
/// are durable; what it refuses before queueing comes back from the call, and the
/// answer function is never called.
#[test]
fn filing_without_waiting_answers_once_after_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = book(&dir);
    let ledger = Ledger::create(&path).unwrap();
    let (answered, answers) = std::sync::mpsc::channel();
    let doc = document(1, "shelf-a", b"filed without waiting");
    let send = answered.clone();
    ledger
        .file_documents_then(vec![doc.clone()], vec![(Hash32([8; 32]), b"input".to_vec())], move |answer| {
            send.send(answer.map_err(|error| error.to_string())).unwrap()
        })
        .unwrap();
    assert_eq!(answers.recv_timeout(std::time::Duration::from_secs(30)).unwrap(), Ok(()));
    assert_eq!(ledger.document(doc.id).unwrap().as_deref(), Some(&b"filed without waiting"[..]));

    // Refused before it is queued: the error comes back here, the function is dropped
    // uncalled.
    let send = answered.clone();
    let error = ledger
        .file_documents_then(vec![document(2, "", b"r")], Vec::new(), move |answer| {
            send.send(answer.map_err(|error| error.to_string())).unwrap()
        })
        .unwrap_err();
    assert!(matches!(error, AppendError::DocumentKey { .. }), "{error:?}");
    drop(ledger);
    let read_only = Ledger::open_read_only(&path).unwrap();
    let send = answered.clone();
    let error = read_only
        .file_documents_then(vec![document(3, "shelf-c", b"r")], Vec::new(), move |answer| {
            send.send(answer.map_err(|error| error.to_string())).unwrap()
        })
        .unwrap_err();
    assert!(matches!(error, AppendError::Io(_)), "{error:?}");
    drop(answered);
    assert!(answers.recv().is_err(), "no function was called for a refused filing");
}
