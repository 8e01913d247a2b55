//! Demonstrations (render format 3) through the book: the pool sees a check filed
//! after it was read (its per-receipt cache is read again when a receipt's check
//! index grows), and the chunk shows the example the pool offers.

use book::check::CheckOptions;
use book::{Book, Reader, WriteOptions};
use ledger_model::*;

fn write() -> WriteOptions {
    WriteOptions { actor: "human:test".into(), source: None, expect_head: None, recorded_at_ms: 1 }
}

fn put(number: u32, src: &str, dst: &str, gender: Gender) -> NewEvent {
    let body = Body::TermPut(TermPut {
        window: Window { since: 1, until: None },
        gender: Some(gender),
        ..TermPut::new(RecordId::new(RecordKind::Term, number).unwrap(), src, dst)
    });
    NewEvent { recorded_at_ms: 1, actor: "human:test".into(), source: "test".into(), body }
}

fn checked(book: &mut Book, receipt: Hash32, translation: &str) {
    let options = CheckOptions { record: true, propose: false, actor: "tool:test".into(), recorded_at_ms: 2 };
    book.check(&receipt.to_hex(), translation, &options).unwrap();
}

#[test]
fn a_check_filed_after_the_pool_was_read_is_seen_by_the_next_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    Book::init(&path, "plain", &write()).unwrap();
    let mut book = Book::open(&path).unwrap();
    let mut config = book.state(None).unwrap().config().unwrap().clone();
    config.assembly.render_format = 3;
    let config = NewEvent {
        recorded_at_ms: 1,
        actor: "human:test".into(),
        source: "test".into(),
        body: Body::ConfigSet(config),
    };
    book.submit(
        &[config, put(1, "沈照", "Шэнь Чжао", Gender::Feminine), put(2, "顾寒川", "Гу Ханьчуань", Gender::Masculine)],
        None,
        Vec::new(),
    )
    .unwrap();
    let full = Reader::Full;
    let one = book.assemble_chunk(&full, 1, "1", "雨停了。沈照看着顾寒川，没有说话。\n", None, true).unwrap();
    checked(&mut book, one.id, "Дождь кончился. Шэнь Чжао смотрела на Гу Ханьчуаня и молчала.\n");
    let two = book.assemble_chunk(&full, 1, "2", "顾寒川走了。\n", None, true).unwrap();
    checked(&mut book, two.id, "Гу Ханьчуань ушёл.\n");
    // Nothing was found wrong: no example.
    let chunk = "沈照等顾寒川回来。\n";
    let before = book.assemble_chunk(&full, 2, "1", chunk, None, false).unwrap();
    assert!(before.assembly.examples.is_empty(), "{:?}", before.assembly.examples);
    // The second chunk is checked again, and this time the name is missing.
    checked(&mut book, two.id, "Он ушёл.\n");
    let after = book.assemble_chunk(&full, 2, "1", chunk, None, false).unwrap();
    let shown: Vec<(u32, &str)> =
        after.assembly.examples.iter().map(|shown| (shown.example.term, shown.example.target.as_str())).collect();
    assert_eq!(shown, [(2, "Шэнь Чжао смотрела на Гу Ханьчуаня и молчала.")]);
    assert_eq!(after.receipt.format, 4);
    assert_eq!(after.receipt.examples[0].receipt, one.id);
}
