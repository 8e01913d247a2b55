//! The book as an application service: init in one step, rollback planned and
//! submitted against one head, error classes.

use book::{Book, BookError, ErrorClass, WriteOptions};
use ledger_model::*;

fn write() -> WriteOptions {
    WriteOptions { actor: "human:test".into(), source: None, expect_head: None, recorded_at_ms: 1 }
}

fn put(number: u32, src: &str, dst: &str) -> Body {
    Body::TermPut(TermPut {
        window: Window { since: 1, until: None },
        ..TermPut::new(RecordId::new(RecordKind::Term, number).unwrap(), src, dst)
    })
}

fn new_book(dir: &tempfile::TempDir) -> Book {
    let path = dir.path().join("book.lorebank");
    Book::init(&path, "plain", &WriteOptions { actor: "system:init".into(), ..write() }).unwrap();
    Book::open(&path).unwrap()
}

#[test]
fn a_rollback_planned_before_another_write_conflicts_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir);
    book.submit_labelled(&write(), book::Labelled::numbered(vec![put(1, "alpha", "Alpha")], "test"), Vec::new())
        .unwrap();
    let plan = book.plan_rollback_at_head(Seq(1), None).unwrap();
    assert_eq!(plan.head, Seq(2));
    // Another write lands between the plan and its submission.
    book.submit_labelled(&write(), book::Labelled::numbered(vec![put(2, "beta", "Beta")], "test"), Vec::new()).unwrap();
    let error = book.submit_rollback(plan, &write()).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Conflict, "{error}");
    assert_eq!(book.ledger().head().unwrap().seq, Seq(3), "the stale plan wrote nothing");
    // Planned again at the new head, it goes through.
    book.rollback(Seq(1), None, &write()).unwrap();
    assert!(book.state(None).unwrap().active_terms(None).is_empty());
}

#[test]
fn init_refuses_an_existing_path_and_a_bad_actor_before_creating_anything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let bad = Book::init(&path, "plain", &WriteOptions { actor: "robot x".into(), ..write() }).unwrap_err();
    assert_eq!(bad.class(), ErrorClass::Invalid, "{bad}");
    assert!(!path.exists());
    let unknown = Book::init(&path, "klingon", &write()).unwrap_err();
    assert!(matches!(unknown, BookError::Invalid(_)), "{unknown}");
    assert!(!path.exists());
    Book::init(&path, "plain", &write()).unwrap();
    let again = Book::init(&path, "plain", &write()).unwrap_err();
    assert_eq!(again.class(), ErrorClass::Invalid, "{again}");
}
