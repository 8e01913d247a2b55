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

fn summary_id(number: u32) -> RecordId {
    RecordId::new(RecordKind::Summary, number).unwrap()
}

#[test]
fn a_summary_put_is_previewed_without_writing_numbered_when_new_and_warns_of_the_owner_it_drops() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir);
    let owned = Body::SummaryPut(SummaryPut {
        id: summary_id(1),
        scope: Scope::Book,
        text: "The whole book.".into(),
        visible_from: None,
        owner: Some("human:editors".into()),
        owner_role: None,
        release_to: None,
    });
    let parties = Body::GovernanceSet(GovernanceSet {
        conflict_policy: ConflictPolicy::Flag,
        parties: vec!["human:editors".into()],
        defaults: Vec::new(),
    });
    book.submit_labelled(&write(), book::Labelled::numbered(vec![parties, owned], "test"), Vec::new()).unwrap();
    let head = book.ledger().head().unwrap().seq;
    let fields = book::SummaryFields { scope: Scope::Chapter(2), text: "Chapter two.".into(), visible_from: Some(3) };
    // The preview decides the put against the head and writes nothing.
    let (current, put, what_if) = book.summary_put_what_if(Some(summary_id(1)), &fields, &write()).unwrap();
    assert_eq!(current.unwrap().owner.as_deref(), Some("human:editors"));
    assert_eq!((put.scope, put.owner.as_deref()), (Scope::Chapter(2), None), "the put is whole, as summary put's");
    assert!(what_if.written.all_warnings().iter().any(|warning| warning.contains("drops its owner")));
    assert_eq!(what_if.written.submitted.decision.events.len(), 1);
    assert_eq!(book.ledger().head().unwrap().seq, head, "a preview wrote something");
    // Saved: the same put, the same warning, the default source of `summary put`.
    let written = book.summary_put(Some(summary_id(1)), &fields, &write()).unwrap();
    assert!(written.all_warnings().iter().any(|warning| warning.contains("drops its owner")));
    let event = book.ledger().get(Seq(head.0 + 1)).unwrap();
    assert_eq!(event.content.source, book::service::APPEND_SOURCE);
    assert_eq!(event.content.body, Body::SummaryPut(put));
    // A new summary takes the next free number; a stale expected head is a conflict.
    let (_, new, _) = book.summary_put_what_if(None, &fields, &write()).unwrap();
    assert_eq!(new.id, summary_id(2));
    let stale = WriteOptions { expect_head: Some(head), ..write() };
    let error = book.summary_put(None, &fields, &stale).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Conflict, "{error}");
    // The scope is read as `summary put --scope` reads it; anything else names `scope`.
    assert_eq!(book::service::parse_scope("arc:2-5").unwrap(), Scope::Arc { from: 2, to: 5 });
    assert_eq!(book::service::parse_scope("x").unwrap_err().field().as_deref(), Some("scope"));
}

#[test]
fn selectors_are_read_as_the_rule_form_writes_them_and_a_word_that_is_none_names_the_field() {
    use book::service::{parse_selectors, selectors_text};
    let text = "dialogue, kind:character, T-12, chapters:2-9, chapters:4-, narration";
    let selectors = parse_selectors(text, "applies_to").unwrap();
    assert_eq!(
        selectors,
        vec![
            Selector::Dialogue,
            Selector::Kind("character".into()),
            Selector::Record(RecordId::new(RecordKind::Term, 12).unwrap()),
            Selector::Chapters(Window { since: 2, until: Some(9) }),
            Selector::Chapters(Window { since: 4, until: None }),
            Selector::Narration,
        ]
    );
    assert_eq!(selectors_text(&selectors), text);
    assert_eq!(
        parse_selectors("chapters:3", "applies_to").unwrap(),
        vec![Selector::Chapters(Window { since: 3, until: Some(3) })]
    );
    assert!(parse_selectors("", "applies_to").unwrap().is_empty(), "the book's rule refuses an empty scope");
    for bad in ["speech", "chapters:x-2", "kind"] {
        let error = parse_selectors(bad, "does_not_apply_to").unwrap_err();
        assert_eq!(error.field().as_deref(), Some("does_not_apply_to"), "{bad}");
    }
}

#[test]
fn a_rule_put_keeps_the_owner_and_is_numbered_when_new() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir);
    let parties = Body::GovernanceSet(GovernanceSet {
        conflict_policy: ConflictPolicy::Flag,
        parties: vec!["human:editors".into()],
        defaults: Vec::new(),
    });
    let mut config = book.state(None).unwrap().config().unwrap().clone();
    config.assembly.render_format = 2;
    let config = Body::ConfigSet(config);
    book.submit_labelled(&write(), book::Labelled::numbered(vec![parties, config], "test"), Vec::new()).unwrap();
    let fields = book::RuleFields {
        text: "Address elders formally.".into(),
        applies_to: vec![Selector::Dialogue],
        does_not_apply_to: None,
        window: Window { since: 1, until: None },
        status: Status::Approved,
        priority: 0,
    };
    let head = book.ledger().head().unwrap().seq;
    let (current, put, _) = book.rule_put_what_if(None, &fields, &write()).unwrap();
    assert_eq!((current, put.id), (None, RecordId::new(RecordKind::Rule, 1).unwrap()));
    assert_eq!(book.ledger().head().unwrap().seq, head, "a preview wrote something");
    let owned = Body::RulePut(RulePut { owner: Some("human:editors".into()), ..put });
    book.submit_labelled(&write(), book::Labelled::numbered(vec![owned], "test"), Vec::new()).unwrap();
    let revised = book::RuleFields { priority: 3, ..fields };
    book.rule_put(Some(RecordId::new(RecordKind::Rule, 1).unwrap()), &revised, &write()).unwrap();
    let state = book.state(None).unwrap();
    let rule = &state.rules()[&RecordId::new(RecordKind::Rule, 1).unwrap()];
    assert_eq!((rule.put.priority, rule.put.owner.as_deref()), (3, Some("human:editors")), "the owner is kept");
}
