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

#[test]
fn a_dry_run_answers_as_the_write_would_and_leaves_the_open_book_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = init_book(&path, "zh");
    // Large enough that the snapshot document spans many of the tracker's blocks;
    // written twice, so the book keeps its index of keys and its tracker.
    let terms: Vec<NewEvent> =
        (1..=1_000u32).map(|n| event(term(n, format!("名{n:04}"), format!("Имя номер {n} в книге")))).collect();
    book.submit(&terms, None, vec![]).unwrap();
    book.submit(&[event(term(1_001, "沈照", "Шэнь Чжао"))], None, vec![]).unwrap();
    let batches = [
        // Accepted: a new term, a longer rendering at the front, an alias, a retirement.
        vec![event(term(1_002, "雾川", "Мглистая река"))],
        vec![event(term(1, "名0001", "Имя номер 1 в книге, и длиннее"))],
        vec![event(Body::AliasAdded(alias("T-1001", "沈郎")))],
        vec![event(Body::TermRetired(TermRetired { id: id("T-500"), reason: None }))],
        // Refused by UNIQUE (checked with the index), after the first event applied.
        vec![event(term(1_003, "白衣先生", "Господин в белом")), event(term(1_004, "名0007", "Другое имя"))],
        // Refused by an unknown record.
        vec![event(Body::AliasAdded(alias("T-9999", "无名")))],
    ];
    for batch in &batches {
        let before = book.state(None).unwrap();
        let (_, head_id) = folded(&book);
        book.assembler().unwrap();
        let dry = book.dry_submit(batch, &[]);
        // The head's assembler is kept, over the head as it was.
        let kept = book.assembler_built(&projections::Reader::Full).unwrap().expect("the assembler is kept");
        assert_eq!((kept.revision(), kept.snapshot()), (before.revision(), head_id));
        assert_eq!(*book.state(None).unwrap(), *before, "a dry run changed the head");
        assert_eq!(book.snapshot_info(None).unwrap().snapshot, head_id);
        let written = book.submit(batch, None, vec![]);
        match (dry, written) {
            (Ok(dry), Ok(written)) => {
                let (dry_decision, decision) = (&dry.decision, &written.decision);
                assert_eq!(
                    (&dry_decision.events, &dry_decision.dropped, &dry_decision.warnings),
                    (&decision.events, &decision.dropped, &decision.warnings)
                );
                assert_eq!((dry.revision, dry.snapshot), (written.revision, written.snapshot));
                assert!(dry.appended.is_none());
                let (state, snapshot) = folded(&book);
                assert_eq!((written.snapshot, written.revision), (snapshot, state.revision()));
            }
            (Err(dry), Err(written)) => assert_eq!(dry.to_string(), written.to_string()),
            (dry, written) => panic!("dry run: {dry:?}; write: {written:?}"),
        }
    }
    // A dry run that is not followed by its write leaves nothing of itself in the
    // next write's answer.
    let dry = book.dry_submit(&[event(term(2, "名0002", "Имя номер 2, которое не записано"))], &[]).unwrap();
    assert_ne!(dry.snapshot, folded(&book).1);
    let last = book.submit(&[event(term(1_005, "云山", "Юньшань"))], None, vec![]).unwrap();
    assert_eq!(last.snapshot, folded(&book).1);
}

/// The first assembly after a write builds the head's projection and uses it as
/// built; its bytes are filed in the book's cache when the book closes (not while it
/// stays open, so that no write waits for them), and are the bytes a freeze of the
/// head gives, found by the next process without a rebuild.
#[test]
fn the_projection_built_after_a_write_is_filed_as_a_freeze_of_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = init_book(&path, "zh");
    let written = book
        .submit(&[event(term(1, "沈照", "Шэнь Чжао")), event(term(2, "雾川", "Мглистая река"))], None, vec![])
        .unwrap();
    let assembled = book.assemble_chunk(&book::Reader::Full, 1, "1", "沈照走过雾川。", None, false).unwrap();
    assert_eq!(assembled.receipt.snapshot, written.snapshot.0);
    let (state, snapshot) = folded(&book);
    let profile = book.profile(&state).unwrap().unwrap();
    let id = projections::release::view_id(snapshot, &book::Reader::Full);
    assert_eq!(book.ledger().cache_get(id.0).unwrap(), None, "filed when the book closes");
    drop(book);

    let ledger = ledger::Ledger::open_read_only(&path).unwrap();
    let filed = ledger.cache_get(id.0).unwrap().expect("the head's projection is in the cache");
    assert_eq!(filed, projections::frozen::freeze_as(&state, id, &profile).unwrap());
    drop(ledger);
    let mut book = book::Book::open(&path).unwrap();
    let (state, _) = folded(&book);
    let (_, at_hand) = book.frozen(&state).unwrap();
    assert!(at_hand, "the next process loads the filed projection");
}

/// A book that stays open through many writes, each followed by an assembly, holds
/// at most `FROZEN_HELD_MAX` projections in memory, and when it closes files the
/// newest `CACHE_PUTS_QUEUED_MAX` it built: the next process loads those, and builds
/// any older one again if it needs it.
#[test]
fn an_open_book_holds_a_bounded_number_of_projections_and_files_the_newest() {
    use ledger_model::limits::{CACHE_PUTS_QUEUED_MAX, FROZEN_HELD_MAX};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = init_book(&path, "zh");
    let mut ids = Vec::new();
    for number in 1..=(FROZEN_HELD_MAX as u32 + 3) {
        let written = book.submit(&[event(term(number, format!("人名{number}"), "Имя"))], None, vec![]).unwrap();
        book.assembler().unwrap();
        assert!(book.n_frozen_held() <= FROZEN_HELD_MAX, "{} held after {number} writes", book.n_frozen_held());
        ids.push(projections::release::view_id(written.snapshot, &book::Reader::Full));
    }
    assert_eq!(book.n_frozen_held(), FROZEN_HELD_MAX);
    let (state, _) = folded(&book);
    assert!(book.frozen(&state).unwrap().1, "the head's projection is held");
    drop(book);

    let ledger = ledger::Ledger::open_read_only(&path).unwrap();
    for (age, id) in ids.iter().rev().enumerate() {
        let filed = ledger.cache_get(id.0).unwrap().is_some();
        assert_eq!(filed, age < CACHE_PUTS_QUEUED_MAX, "the projection of write {} from the last", age + 1);
    }
}
