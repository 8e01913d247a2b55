//! A write decides on the book's head state itself and takes its snapshot ID from the
//! head's encoded records (`Book::submit`): a refused batch, even one refused after
//! some of its events were applied, leaves the head as it was, and every ID a write
//! answers is the one a fresh fold of the log gives.

use book::{Book, BookError};
use ledger_model::*;
use test_support::books::init_book;
use test_support::records::{alias, event, id, term};

/// The head as a fold of the whole log gives it, and its snapshot ID.
fn folded(book: &Book) -> (projections::State, projections::SnapshotId) {
    let events = book.ledger().events(Seq(1), Seq(u64::MAX)).unwrap();
    let state = projections::State::fold(&events);
    let snapshot = state.snapshot_id();
    (state, snapshot)
}

#[test]
fn a_refused_batch_leaves_the_head_as_it_was_and_every_answered_id_is_the_folded_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = init_book(&path, "zh");
    let first = book
        .submit(&[event(term(1, "沈照", "Шэнь Чжао")), event(term(2, "雾川", "Мглистая река"))], None, vec![])
        .unwrap();
    assert_eq!(first.snapshot, folded(&book).1);
    let before = book.state(None).unwrap();

    // Refused after two events were applied: the third names no term.
    let refused = [
        event(term(3, "白衣先生", "Господин в белом")),
        event(Body::AliasAdded(alias("T-1", "沈郎"))),
        event(Body::AliasAdded(alias("T-9", "无名"))),
    ];
    let error = book.submit(&refused, None, vec![]).unwrap_err();
    assert!(matches!(error, BookError::Rejected(_)), "{error}");
    // Refused whole: UNIQUE is checked after the batch, so every event was applied.
    let clash = [event(term(3, "白衣先生", "Господин в белом")), event(term(4, "白衣先生", "Белый господин"))];
    assert!(matches!(book.submit(&clash, None, vec![]).unwrap_err(), BookError::Rejected(_)));
    // Refused before deciding: a stale expected head.
    let stale = book.submit(&[event(term(3, "白衣先生", "Господин в белом"))], Some(Seq(1)), vec![]).unwrap_err();
    assert!(stale.to_string().contains("expected"), "{stale}");
    assert_eq!(book.state(None).unwrap(), before, "a refused batch changed the head");
    assert_eq!(folded(&book).0, *before);

    // The writes after the refusals answer the IDs a fresh fold gives, as do a no-op
    // batch and a dry run.
    for batch in [
        vec![event(term(3, "白衣先生", "Господин в белом")), event(Body::AliasAdded(alias("T-1", "沈郎")))],
        vec![event(term(3, "白衣先生", "Господин в белом"))],
        vec![event(Body::TermRetired(TermRetired { id: id("T-2"), reason: None }))],
        vec![event(term(2, "雾川", "Туманная река"))],
    ] {
        let dry = book.dry_submit(&batch, &[]).unwrap();
        let submitted = book.submit(&batch, None, vec![]).unwrap();
        assert_eq!(dry.snapshot, submitted.snapshot);
        assert_eq!(dry.revision, submitted.revision);
        let (state, snapshot) = folded(&book);
        assert_eq!(submitted.snapshot, snapshot);
        assert_eq!(submitted.revision, state.revision());
        assert_eq!(*book.state(None).unwrap(), state);
    }
}
