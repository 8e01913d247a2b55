//! A whole chapter assembled in one call: the same receipts, byte for byte, as its
//! chunks assembled one at a time with each chunk's `prev` the one before; every
//! receipt stored in one commit (all of them or none) and replaying identically.

use book::{Book, Chunk};
use ledger_model::*;
use test_support::books::{new_zh_book, zh_config};
use test_support::records::{character, event};

fn new_book(path: &std::path::Path) -> Book {
    let config = zh_config(AssemblyConfig { sticky_chunks: 2, ..AssemblyConfig::default() });
    let terms = [
        character(1, "顾寒川", "Гу Ханьчуань"),
        character(2, "沈照", "Шэнь Чжао"),
        character(3, "雾川", "Туманная река"),
    ];
    let mut batch = vec![event(config)];
    batch.extend(terms.into_iter().map(|term| event(Body::TermPut(term))));
    new_zh_book(path, batch)
}

const TEXTS: &[&str] = &[
    "顾寒川站在雾川边，沈照提着长明灯。",
    "他没有说话，只是看着河水。",
    "沈照问：“你还记得那一夜吗？”",
    "这一段里没有任何词条。",
];

fn chunks() -> Vec<Chunk> {
    TEXTS
        .iter()
        .enumerate()
        .map(|(idx, text)| Chunk { key: format!("{}", idx + 1), text: (*text).to_owned() })
        .collect()
}

#[test]
fn a_chapter_in_one_call_equals_its_chunks_one_by_one_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir.path().join("a.lorebank"));
    let together = book.assembler().unwrap().assemble_chapter(7, &chunks(), None, true).unwrap();

    let mut other = new_book(&dir.path().join("b.lorebank"));
    let mut prev = None;
    let mut one_by_one = Vec::new();
    for chunk in chunks() {
        let assembled = other.assemble_chunk(&book::Reader::Full, 7, &chunk.key, &chunk.text, prev, true).unwrap();
        prev = Some(assembled.id);
        one_by_one.push(assembled);
    }
    assert_eq!(together.len(), TEXTS.len());
    for (a, b) in together.iter().zip(&one_by_one) {
        assert_eq!(a.id, b.id, "chunk {}", a.receipt.chunk_key);
        assert_eq!(a.assembly.context, b.assembly.context);
    }
    // The chain: each chunk's prev is the one before, and sticky records carry over.
    assert_eq!(together[0].receipt.prev, None);
    for pair in together.windows(2) {
        assert_eq!(pair[1].receipt.prev, Some(pair[0].id));
    }
    assert!(!together[1].receipt.sticky_in.is_empty(), "the second chunk carries the first one's names");
    for assembled in &together {
        let replayed = book.replay(&book::Reader::Full, &assembled.id.to_hex()).unwrap();
        assert!(replayed.identical, "receipt {}", assembled.id);
    }
    assert_eq!(book.audit(7).unwrap().chunks.len(), TEXTS.len());
}

#[test]
fn a_chapter_with_one_bad_chunk_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir.path().join("a.lorebank"));
    let mut chunks = chunks();
    chunks[3].key = "bad\u{7}key".into();
    let error = book.assembler().unwrap().assemble_chapter(2, &chunks, None, true).unwrap_err();
    assert!(error.to_string().contains("control character"), "{error}");
    assert!(book.audit(2).unwrap().chunks.is_empty(), "no receipt of the chapter is stored");

    let dry = book.assembler().unwrap().assemble_chapter(2, &chunks[..3], None, false).unwrap();
    assert_eq!(dry.len(), 3);
    assert!(book.audit(2).unwrap().chunks.is_empty(), "a dry run stores nothing");
    assert!(book.receipt(&dry[0].id.to_hex()).is_err());
}

#[test]
fn the_assembler_follows_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir.path().join("a.lorebank"));
    let before = book.assembler().unwrap();
    book.submit(&[event(Body::TermPut(character(4, "长明灯", "Вечная лампа")))], None, Vec::new()).unwrap();
    let after = book.assembler().unwrap();
    assert_eq!(after.revision(), Seq(before.revision().0 + 1));
    assert_ne!(after.snapshot(), before.snapshot());
    // An assembler made before the write still assembles against its own snapshot.
    let old = before.assemble_chunk(1, "1", TEXTS[0], None, false).unwrap();
    let new = after.assemble_chunk(1, "1", TEXTS[0], None, false).unwrap();
    assert!(!old.assembly.context.contains("Вечная лампа"));
    assert!(new.assembly.context.contains("Вечная лампа"), "{}", new.assembly.context);
}

/// What-if on a book open for writing: the batch's state is assembled and nothing of
/// it is kept, not the events, not its frozen projection in the book's cache; a
/// different batch written afterwards at the revision it would have made gets its own
/// snapshot ID.
#[test]
fn a_what_if_on_a_writable_book_keeps_nothing_of_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir.path().join("a.lorebank"));
    book.assembler().unwrap().assemble_chapter(1, &chunks(), None, true).unwrap();
    let head = book.state(None).unwrap().revision();
    let write = book::WriteOptions {
        actor: book::Actor::Named("human:editor".into()),
        source: None,
        expect_head: None,
        recorded_at_ms: 1,
    };
    let put = Body::TermPut(character(2, "沈照", "Шэнь Чжао-младший"));
    let what_if = book.impact_with(&write, book::Labelled::numbered(vec![put], "test")).unwrap();
    let snapshot = what_if.written.submitted.snapshot;
    assert_ne!(snapshot, what_if.head_snapshot);
    // Chunks 1 and 3 name 沈照; 2 and 4 carry T-2 on as a sticky record.
    let reopened: Vec<&str> = what_if.chunks.iter().map(|chunk| chunk.chunk.chunk_key.as_str()).collect();
    assert_eq!(reopened, ["1", "2", "3", "4"]);
    assert_eq!(book.state(None).unwrap().revision(), head, "nothing appended");
    let view = projections::release::view_id(snapshot, &book::Reader::Full);
    assert_eq!(book.ledger().cache_get(view.0).unwrap(), None, "no frozen projection of the batch's state is stored");
    let other = Body::TermPut(character(2, "沈照", "Шэнь Чжао-старший"));
    let written = book.submit(&[event(other)], None, Vec::new()).unwrap();
    assert_ne!(written.snapshot, snapshot);
    let state = book.state(None).unwrap();
    assert_eq!(state.revision(), what_if.written.submitted.revision, "the revision the what-if would have made");
    assert_eq!(book.snapshot_id(&state), state.snapshot_id(), "the what-if's ID is not remembered for it");
}
