//! The book's source text as use cases, on real text (the head of 西游记 and two
//! slices of 吾輩は猫である from `tests/data/corpora`): a chapter added, listed and
//! read back byte for byte (a byte order mark dropped, CRLF kept), the same text
//! again appending nothing, a folder imported with chapters numbered by file name,
//! all or nothing, and every refusal naming its field or file with nothing written;
//! no snapshot ID ever moves, a rollback restores the text of then, `verify` names a
//! damaged text, and backups and archives carry it.

use std::path::Path;

use book::{Book, BookError, ErrorClass, WriteOptions};
use ledger_model::*;
use test_support::books::{init_book, write_as};

fn corpus(name: &str) -> String {
    let path = format!("{}/../tests/data/corpora/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// The first `n` characters of a corpus file.
fn slice(name: &str, n: usize) -> String {
    corpus(name).chars().take(n).collect()
}

fn write() -> WriteOptions {
    write_as("human:test")
}

fn head(book: &Book) -> u64 {
    book.ledger().head().unwrap().seq.0
}

fn snapshot(book: &mut Book) -> projections::SnapshotId {
    let state = book.state(None).unwrap();
    book.snapshot_id(&state)
}

#[test]
fn a_chapter_is_added_listed_and_read_back_byte_for_byte_without_moving_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("b.lore"), "zh");
    let before = snapshot(&mut book);
    let text = slice("xiyouji-head.txt", 2_000);
    // A byte order mark is dropped; CRLF is kept as it is.
    let crlf = text.replace('\n', "\r\n");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(crlf.as_bytes());
    let added = book.source_add(1, Some("第一回 灵根育孕源流出".into()), &bytes, &write()).unwrap();
    assert!(added.written.is_some());
    let put = &added.chapters[0];
    assert_eq!((put.chapter, put.bytes, put.chars), (1, crlf.len() as u64, crlf.chars().count() as u64));
    assert_eq!(put.text, source_text_id(crlf.as_bytes()));
    assert_eq!(snapshot(&mut book), before, "a chapter's text is in no snapshot");
    let (chapter, read) = book.source_text(1).unwrap();
    assert_eq!(read, crlf, "the text comes back byte for byte, CRLF and all");
    assert_eq!(chapter.title.as_deref(), Some("第一回 灵根育孕源流出"));
    assert_eq!(chapter.seq.0, head(&book));
    // The same text and title again: nothing appended; another title: a change.
    let at = head(&book);
    let again = book.source_add(1, Some("第一回 灵根育孕源流出".into()), crlf.as_bytes(), &write()).unwrap();
    assert!(again.written.is_none() && !again.chapters[0].changed);
    assert_eq!(head(&book), at);
    book.source_add(1, None, crlf.as_bytes(), &write()).unwrap();
    assert_eq!(head(&book), at + 1);
    // A second chapter in Japanese; the list is in chapter order.
    let neko = slice("wagahai-kushami.txt", 1_500);
    book.source_add(7, None, neko.as_bytes(), &write()).unwrap();
    let list = book.source_list().unwrap();
    let listed: Vec<(u32, u64, u64)> = list.iter().map(|c| (c.chapter, c.bytes, c.chars)).collect();
    assert_eq!(
        listed,
        [(1, crlf.len() as u64, crlf.chars().count() as u64), (7, neko.len() as u64, neko.chars().count() as u64)]
    );
    assert_eq!(snapshot(&mut book), before);
    assert!(matches!(book.source_text(2), Err(BookError::NotFound { .. })));
    book.verify().unwrap();
}

#[test]
fn bad_text_is_refused_naming_what_is_wrong_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("b.lore"), "zh");
    let at = head(&book);
    let text = slice("xiyouji-head.txt", 200);
    let mut bad = text.as_bytes().to_vec();
    bad.insert(30, 0xFF);
    let line = text.as_bytes()[..30].iter().filter(|b| **b == b'\n').count() + 1;
    let error = book.source_add(1, None, &bad, &write()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("text: not UTF-8: line {line}, byte 30 is not the start of a UTF-8 character")
    );
    assert_eq!(error.class(), ErrorClass::Invalid);
    let error = book.source_add(0, None, text.as_bytes(), &write()).unwrap_err();
    assert!(matches!(error, BookError::InvalidField { field: "chapter", .. }), "{error}");
    let error = book.source_add(1, Some("a\nb".into()), text.as_bytes(), &write()).unwrap_err();
    assert!(error.to_string().contains("source_set.title"), "{error}");
    let error = book.source_add(1, None, b"\xEF\xBB\xBF", &write()).unwrap_err();
    assert!(error.to_string().contains("empty"), "{error}");
    let huge = vec![b'a'; limits::SOURCE_TEXT_BYTES_MAX as usize + 1];
    let error = book.source_add(1, None, &huge, &write()).unwrap_err();
    assert!(matches!(error, BookError::TooLarge(_)) && error.to_string().contains("SOURCE_TEXT_BYTES_MAX"), "{error}");
    // A source_set whose text is neither in the batch nor in the book.
    let orphan = SourceSet { chapter: 1, title: None, text: Some(source_text_id(b"nowhere")), bytes: 7 };
    let event =
        NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "t".into(), body: Body::SourceSet(orphan) };
    let error = book.submit(std::slice::from_ref(&event), None, Vec::new()).unwrap_err();
    assert!(error.to_string().contains("source_set.text") && error.to_string().contains("not stored"), "{error}");
    // A blob that is not the text it is named by.
    let error = book.submit(&[event], None, vec![(source_text_id(b"nowhere"), b"elsewhere".to_vec())]).unwrap_err();
    assert!(matches!(error, BookError::InvalidField { field: "source_set.text", .. }), "{error}");
    assert_eq!(head(&book), at, "nothing was written");
    assert!(book.source_list().unwrap().is_empty());
}

#[test]
fn a_folder_imports_with_chapters_numbered_by_file_name_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("b.lore"), "ja");
    let before = snapshot(&mut book);
    let one = slice("wagahai-kushami.txt", 800);
    let two = slice("wagahai-violin.txt", 900);
    let three = slice("wagahai-kushami.txt", 300);
    let files = |names: [&str; 3]| -> Vec<(String, Vec<u8>)> {
        names
            .into_iter()
            .zip([&one, &two, &three])
            .map(|(name, text)| (name.into(), text.as_bytes().to_vec()))
            .collect()
    };
    let at = head(&book);
    // Two files of one chapter, a file without a number, a text that is not UTF-8.
    let error = book.source_import(files(["001.txt", "ch1-again.md", "第3章.txt"]), &write()).unwrap_err();
    assert_eq!(error.to_string(), "001.txt and ch1-again.md are both chapter 1");
    let error = book.source_import(files(["001.txt", "第二章.txt", "第3章.txt"]), &write()).unwrap_err();
    assert!(error.to_string().starts_with("第二章.txt: no chapter number"), "{error}");
    let mut broken = files(["001.txt", "ch12-title.md", "第3章.txt"]);
    broken[2].1.push(0xC3);
    let error = book.source_import(broken, &write()).unwrap_err();
    assert!(error.to_string().starts_with("第3章.txt: not UTF-8"), "{error}");
    assert_eq!(head(&book), at, "a refused import writes nothing");
    // A title set before is kept by an import.
    book.source_add(12, Some("第十二章".into()), b"old", &write()).unwrap();
    let imported = book.source_import(files(["001.txt", "ch12-title.md", "第3章.txt"]), &write()).unwrap();
    let chapters: Vec<(String, u32, bool)> =
        imported.chapters.iter().map(|c| (c.file.clone(), c.chapter, c.changed)).collect();
    assert_eq!(
        chapters,
        [("001.txt".into(), 1, true), ("第3章.txt".into(), 3, true), ("ch12-title.md".into(), 12, true)]
    );
    let written = imported.written.unwrap();
    assert_eq!(written.submitted.decision.events.len(), 3, "one batch");
    assert_eq!(written.submitted.decision.events[0].source, "001.txt");
    assert_eq!(book.source_text(12).unwrap().0.title.as_deref(), Some("第十二章"));
    assert_eq!(book.source_text(3).unwrap().1, three);
    // Importing the same files again appends nothing.
    let at = head(&book);
    let again = book.source_import(files(["001.txt", "ch12-title.md", "第3章.txt"]), &write()).unwrap();
    assert!(again.written.is_none());
    assert_eq!(head(&book), at);
    assert_eq!(snapshot(&mut book), before);
}

#[test]
fn a_rollback_restores_the_text_of_then_and_the_snapshot_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("b.lore"), "zh");
    let first = slice("xiyouji-head.txt", 500);
    book.source_add(1, None, first.as_bytes(), &write()).unwrap();
    let then = book.ledger().head().unwrap().seq;
    let snapshot_then = snapshot(&mut book);
    book.source_add(1, Some("改".into()), slice("xiyouji-head.txt", 900).as_bytes(), &write()).unwrap();
    book.source_add(2, None, slice("xiyouji-head.txt", 100).as_bytes(), &write()).unwrap();
    book.rollback(then, None, &write()).unwrap();
    assert_eq!(book.source_text(1).unwrap(), (book.source_text(1).unwrap().0, first));
    assert_eq!(book.source_text(1).unwrap().0.title, None);
    assert!(matches!(book.source_text(2), Err(BookError::NotFound { .. })));
    assert_eq!(snapshot(&mut book), snapshot_then);
}

#[test]
fn verify_names_a_damaged_text_and_copies_carry_the_texts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.lore");
    let text = slice("wagahai-violin.txt", 3_000);
    {
        let mut book = init_book(&path, "ja");
        book.source_add(4, Some("第四章".into()), text.as_bytes(), &write()).unwrap();
        let report = book.verify().unwrap();
        assert!(report.n_blobs >= 2, "the fold table and the text");
        // A backup and an archive round trip keep the text and the snapshot.
        let backup = dir.path().join("backup.lore");
        book.backup(&backup, false).unwrap();
        let archive = dir.path().join("b.lorearchive");
        let exported = book.export_archive(&archive, false).unwrap();
        let imported_path = dir.path().join("imported.lore");
        let imported = Book::import_archive(&archive, &imported_path).unwrap();
        assert_eq!(imported.snapshot, exported.snapshot);
        for copy in [&backup, &imported_path] {
            let mut copy = Book::open(copy).unwrap();
            copy.verify().unwrap();
            assert_eq!(copy.source_text(4).unwrap().1, text, "{}", copy.ledger().path().display());
        }
    }
    // A flipped bit inside the stored text is named as the chapter's text.
    let needle = &text.as_bytes()[600..640];
    assert!(flip(&path, needle) >= 1);
    let mut book = Book::open(&path).unwrap();
    let error = book.verify().unwrap_err().to_string();
    assert!(error.contains("source text of chapter 4 at event"), "{error}");
}

fn flip(path: &Path, needle: &[u8]) -> usize {
    test_support::damage::flip_near(path, needle, 5, 0x01)
}

#[test]
fn a_scan_without_a_text_reads_the_whole_chapter_and_names_a_chapter_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = init_book(&dir.path().join("b.lore"), "zh");
    let text = slice("xiyouji-head.txt", 6_000);
    book.source_add(1, None, text.as_bytes(), &write()).unwrap();
    // The whole chapter, under the chunk key `source`, is what a scan of its text gives.
    let whole = book.scan(1, None, None, true, &write()).unwrap();
    let given = book.scan(1, Some("source"), Some(&text), true, &write()).unwrap();
    assert_eq!(format!("{whole:?}"), format!("{given:?}"));
    assert!(!whole.sightings.is_empty(), "西游记's opening has names the book does not know");
    assert!(
        whole.proposed.iter().all(|candidate| candidate.evidence.as_deref().unwrap_or("").contains("\nch1/source@")),
        "{whole:?}"
    );
    let at = head(&book);
    let error = book.scan(2, None, None, false, &write()).unwrap_err();
    assert!(matches!(error, BookError::InvalidField { field: "chapter", .. }), "{error}");
    assert!(error.to_string().contains("chapter 2 has no source text"), "{error}");
    let error = book.scan(1, None, Some("萧炎"), false, &write()).unwrap_err();
    assert!(matches!(error, BookError::InvalidField { field: "chunk", .. }), "{error}");
    assert_eq!(head(&book), at);
    // Written, the scan proposes candidates from the whole chapter.
    let written = book.scan(1, None, None, false, &write()).unwrap();
    assert!(head(&book) > at, "{written:?}");
}
