//! Closing the loop as book use cases: a post-check stored beside its receipt and
//! listed in the audit, its proposals for a reviewer, the review queue (accept,
//! reject, verify), and the unknown-name alarm proposing candidates that change no
//! snapshot until accepted.

use book::check::CheckOptions;
use book::review::{Acceptance, ReviewItem};
use book::{Book, WriteOptions};
use ledger::Ledger;
use ledger_model::*;
use matcher::{Flavour, ProfileBuilder};
use postcheck::Verdict as CheckVerdict;
use test_support::books::{write_as, zh_book};
use test_support::records::{candidate_id, event, put, term_id};

/// A zh book with three terms: an approved one with declared forms, an approved one
/// without, and an unreviewed (`auto`) one.
fn book(path: &std::path::Path) -> Book {
    let shen = TermPut {
        gender: Some(Gender::Masculine),
        kind: Some("character".into()),
        decl: vec!["Шэнь Чжао".into()],
        ..put(1, "沈照", "Шэнь Чжао")
    };
    let river = TermPut {
        gender: Some(Gender::Feminine),
        kind: Some("place".into()),
        decl: vec!["Мглистой реки".into(), "Мглистую реку".into()],
        ..put(2, "雾川", "Мглистая река")
    };
    let sect = TermPut { status: Status::Auto, ..put(3, "灯宗", "Секта Фонаря") };
    zh_book(path, vec![Body::TermPut(shen), Body::TermPut(river), Body::TermPut(sect)])
}

fn write() -> WriteOptions {
    write_as("human:editor")
}

fn options(propose: bool) -> CheckOptions {
    CheckOptions { record: true, propose, actor: "tool:postcheck".into(), recorded_at_ms: 0 }
}

const CHUNK: &str = "沈照站在雾川边。灯宗的人都睡了，沈照还醒着。";

/// The receipt of `CHUNK`, recorded as chunk 1 of chapter 1.
fn recorded(book: &mut Book) -> String {
    book.assemble_chunk(&book::Reader::Full, 1, "1", CHUNK, None, true).unwrap().id.to_hex()
}

#[test]
fn a_check_finds_what_the_translation_left_out_and_is_stored_beside_the_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let receipt = recorded(&mut book);
    // 雾川 (T-2) is left out; 沈照 (T-1) twice in the source, once here.
    let translation = "Шэнь Чжао стоял у реки. Люди Секты Фонаря уснули.";
    let checked = book.check(&receipt, translation, &options(false)).unwrap();
    let verdicts: Vec<(u32, CheckVerdict, u32, u32, bool)> = checked
        .stored
        .check
        .items
        .iter()
        .map(|item| (item.term, item.verdict, item.source_count, item.found_count, item.review))
        .collect();
    assert!(verdicts.contains(&(1, CheckVerdict::Rendered, 2, 1, false)), "{verdicts:?}");
    assert!(verdicts.contains(&(2, CheckVerdict::Missing, 1, 0, false)), "{verdicts:?}");
    // The unreviewed record is flagged for review whatever the check finds.
    assert!(verdicts.iter().any(|(term, _, _, _, review)| *term == 3 && *review), "{verdicts:?}");
    assert!(checked.failed());
    assert!(checked.proposed.is_none());
    // Stored beside the receipt, with the translation's hash, and listed by the audit.
    let receipt_id = Hash32::from_hex(&receipt).unwrap();
    let stored = book.checks_of(receipt_id).unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].0, checked.id);
    assert_eq!(stored[0].1.translation, translation);
    assert_eq!(stored[0].1.translation_hash, Hash32(*blake3::hash(translation.as_bytes()).as_bytes()));
    let audit = book.audit(1).unwrap();
    assert_eq!(audit.chunks[0].checks.len(), 1);
    // The same check again is the same id and is listed once; another translation
    // is listed after it.
    let again = book.check(&receipt, translation, &options(false)).unwrap();
    assert_eq!(again.id, checked.id);
    book.check(&receipt, "Шэнь Чжао у Мглистой реки. Шэнь Чжао не спал.", &options(false)).unwrap();
    let stored = book.checks_of(receipt_id).unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].0, checked.id);
    // A check never writes an event unless it proposes.
    assert_eq!(book.state(None).unwrap().revision(), Seq(4));
}

#[test]
fn a_check_is_filed_with_its_time_and_actor_and_again_only_when_it_is_not_the_latest() {
    use book::check::CheckFiling;
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let receipt = recorded(&mut book);
    let receipt_id = Hash32::from_hex(&receipt).unwrap();
    let at = |recorded_at_ms: u64, actor: &str| CheckOptions {
        record: true,
        propose: false,
        actor: actor.into(),
        recorded_at_ms,
    };
    let first = book.check(&receipt, "Шэнь Чжао.", &at(1_000, "human:anna")).unwrap().id;
    // The same check right after is not filed again: its filing keeps the first time.
    book.check(&receipt, "Шэнь Чжао.", &at(2_000, "human:boris")).unwrap();
    let second = book.check(&receipt, "Шэнь Чжао у реки.", &at(3_000, "human:boris")).unwrap().id;
    // Back to the first translation: it is the latest again, filed with its new time.
    book.check(&receipt, "Шэнь Чжао.", &at(4_000, "tool:pipeline")).unwrap();
    let filed = |check: Hash32, at_ms: u64, actor: &str| CheckFiling { check, recorded: Some((at_ms, actor.into())) };
    assert_eq!(
        book.check_filings(receipt_id).unwrap(),
        vec![
            filed(first, 1_000, "human:anna"),
            filed(second, 3_000, "human:boris"),
            filed(first, 4_000, "tool:pipeline")
        ]
    );
    let checks: Vec<Hash32> = book.checks_of(receipt_id).unwrap().into_iter().map(|(id, _)| id).collect();
    assert_eq!(checks, vec![first, second, first]);
    // A filing holds its actor, so an actor an event could not name is refused, and
    // nothing is filed; a dry run files nothing and names no one.
    let error = book.check(&receipt, "Шэнь Чжао!", &at(5_000, "anna")).unwrap_err();
    assert!(matches!(error, book::BookError::InvalidField { field: "actor", .. }), "{error}");
    let dry = CheckOptions { record: false, ..at(5_000, "anna") };
    book.check(&receipt, "Шэнь Чжао!", &dry).unwrap();
    assert_eq!(book.check_filings(receipt_id).unwrap().len(), 3);
}

#[test]
fn a_filing_of_a_bare_check_id_reads_as_a_check_without_time_or_actor() {
    // Index entries written before filings held a time and an actor are the check id
    // alone (32 bytes), at the ids book/src/check.rs derives.
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let receipt = recorded(&mut book);
    let receipt_id = Hash32::from_hex(&receipt).unwrap();
    let dry = CheckOptions { record: false, ..options(false) };
    let checked = book.check(&receipt, "Шэнь Чжао.", &dry).unwrap();
    let bytes = checked.stored.encode().unwrap();
    let index = |n: u32| {
        let mut hasher = blake3::Hasher::new_derive_key("lorebank 2026 postcheck index v1");
        Hash32(*hasher.update(&receipt_id.0).update(&n.to_le_bytes()).finalize().as_bytes())
    };
    book.ledger().file_documents(Vec::new(), vec![(checked.id, bytes), (index(0), checked.id.0.to_vec())]).unwrap();
    let filings = book.check_filings(receipt_id).unwrap();
    assert_eq!(filings, vec![book::check::CheckFiling { check: checked.id, recorded: None }]);
    assert_eq!(book.checks_of(receipt_id).unwrap()[0].1, checked.stored);
    // An entry that is neither is damage, named.
    book.ledger().file_documents(Vec::new(), vec![(index(1), vec![1, 2, 3])]).unwrap();
    let error = book.check_filings(receipt_id).unwrap_err();
    assert!(error.to_string().contains("check index entry 1"), "{error}");
    assert_eq!(error.class(), book::ErrorClass::Corrupt);
}

#[test]
fn a_filing_has_one_byte_form() {
    use book::check::CheckFiling;
    // Format 1 (varint), the check id, the time (varint), the actor (length, bytes).
    let filing = CheckFiling { check: Hash32([7; 32]), recorded: Some((1_700_000_000_000, "human:anna".into())) };
    let bytes = filing.to_bytes().unwrap();
    let mut expected = vec![1];
    expected.extend([7; 32]);
    expected.extend([0xfd, 0x00, 0x68, 0xe5, 0xcf, 0x8b, 0x01, 0x00, 0x00]);
    expected.push(10);
    expected.extend(b"human:anna");
    assert_eq!(bytes, expected);
    assert_eq!(CheckFiling::from_bytes(&bytes), Ok(filing));
    let bare = CheckFiling { check: Hash32([7; 32]), recorded: None };
    assert_eq!(bare.to_bytes().unwrap(), vec![7; 32]);
    // Anything else is refused: another format, trailing bytes, a short id.
    let mut other = bytes.clone();
    other[0] = 2;
    assert!(CheckFiling::from_bytes(&other).is_err());
    assert!(CheckFiling::from_bytes(&[bytes.as_slice(), &[0]].concat()).is_err());
    assert!(CheckFiling::from_bytes(&[7; 31]).is_err());
}

#[test]
fn a_translation_too_large_to_store_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let receipt = recorded(&mut book);
    let huge = "Шэнь Чжао. ".repeat(limits::DOCUMENT_BYTES_MAX / 10);
    let error = book.check(&receipt, &huge, &options(true)).unwrap_err();
    assert!(error.to_string().contains("over the limit of"), "{error}");
    assert!(book.checks_of(Hash32::from_hex(&receipt).unwrap()).unwrap().is_empty());
    assert_eq!(book.state(None).unwrap().revision(), Seq(4));
}

#[test]
fn a_failing_check_proposes_verify_for_a_reviewer_and_the_queue_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let receipt = recorded(&mut book);
    let checked = book.check(&receipt, "Шэнь Чжао стоял. Секта Фонаря спала.", &options(true)).unwrap();
    let written = checked.proposed.expect("a missing term is proposed");
    let events = written.submitted.decision.events;
    assert_eq!(events.len(), 1);
    let Body::DispositionSet(disposition) = &events[0].body else { panic!("{events:?}") };
    assert_eq!(
        (disposition.target, disposition.verdict, disposition.reason.as_str()),
        (term_id(2), Verdict::Verify, "postcheck_missing")
    );
    assert_eq!(events[0].actor, "tool:postcheck");
    let queue = book.review_list(None).unwrap();
    let flagged: Vec<(RecordId, String)> = queue
        .iter()
        .filter_map(|item| match item {
            ReviewItem::Flagged { put, why, .. } => Some((put.id, why.clone())),
            ReviewItem::Candidate { .. } | ReviewItem::FlaggedRule { .. } => None,
        })
        .collect();
    assert_eq!(flagged, [(term_id(2), "verify:postcheck_missing".into()), (term_id(3), "unreviewed:auto".into())]);
    // The reviewer accepts the record: it leaves the queue.
    book.review_accept(term_id(2), &Acceptance::default(), &write()).unwrap();
    assert!(book.review_list(None).unwrap().iter().all(|item| item.id() != term_id(2)));
}

#[test]
fn the_alarm_proposes_unknown_names_once_and_adds_later_sightings_as_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let snapshot = book.snapshot_info(None).unwrap().snapshot;
    let text = "空空道人笑道：“空空道人来也。”沈照不答。";
    let dry = book.scan_names(2, "1", text, true, &write()).unwrap();
    assert!(dry.written.is_none());
    assert!(book.state(None).unwrap().candidates().is_empty());
    let scanned = book.scan_names(2, "1", text, false, &write()).unwrap();
    let surfaces: Vec<&str> = scanned.sightings.iter().map(|(sighting, _)| sighting.surface.as_str()).collect();
    assert!(surfaces.contains(&"空空道人"), "{surfaces:?}");
    // A known name is never proposed.
    assert!(!surfaces.iter().any(|surface| surface.contains("沈照")), "{surfaces:?}");
    let state = book.state(None).unwrap();
    let proposed: Vec<&CandidateProposed> = state.candidates().values().map(|c| &c.proposed).collect();
    let daoist = proposed.iter().find(|p| p.surface == "空空道人").expect("proposed");
    assert_eq!(
        (daoist.origin, daoist.trust, daoist.suggested_dst.as_deref()),
        (Origin::Extractor, Trust::Normal, None)
    );
    assert!(daoist.evidence.as_deref().unwrap().starts_with("sightings: "), "{:?}", daoist.evidence);
    // Candidates change no snapshot.
    assert_eq!(book.snapshot_info(None).unwrap().snapshot, snapshot);
    // The same chunk again: nothing new. Another chunk: more evidence, same candidate.
    let head = book.state(None).unwrap().revision();
    assert!(book.scan_names(2, "1", text, false, &write()).unwrap().written.is_none());
    assert_eq!(book.state(None).unwrap().revision(), head);
    // With nothing to write, a stale expected head still refuses; a dry run never does.
    let stale = WriteOptions { expect_head: Some(Seq(head.0 - 1)), ..write() };
    let refused = book.scan_names(2, "1", text, false, &stale).unwrap_err();
    assert!(refused.to_string().contains("expected head"), "{refused}");
    assert!(book.scan_names(2, "1", text, true, &stale).is_ok());
    let current = WriteOptions { expect_head: Some(head), ..write() };
    assert!(book.scan_names(2, "1", text, false, &current).unwrap().written.is_none());
    book.scan_names(3, "4", "空空道人又来了，空空道人笑道。", false, &write()).unwrap();
    let state = book.state(None).unwrap();
    let daoists: Vec<&CandidateProposed> =
        state.candidates().values().map(|c| &c.proposed).filter(|p| p.surface == "空空道人").collect();
    assert_eq!(daoists.len(), 1);
    assert!(daoists[0].evidence.as_deref().unwrap().contains("ch3/4@"), "{:?}", daoists[0].evidence);
    let sightings = daoists[0].evidence.as_deref().unwrap().lines().count() - 1;
    assert!(sightings >= 2, "{:?}", daoists[0].evidence);
}

#[test]
fn an_accepted_candidate_is_injected_in_the_next_assembly_and_a_rejected_one_never() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let text = "空空道人笑道：“空空道人来也。”";
    book.scan_names(2, "1", text, false, &write()).unwrap();
    let state = book.state(None).unwrap();
    let c = state.candidates().values().find(|c| c.proposed.surface == "空空道人").unwrap().proposed.id;
    let before = book.assemble_chunk(&book::Reader::Full, 2, "1", text, None, false).unwrap();
    assert!(!before.assembly.context.contains("Даос"), "{}", before.assembly.context);
    // Accepting needs a rendering.
    let error = book.review_accept(c, &Acceptance::default(), &write()).unwrap_err();
    assert!(error.to_string().contains("has no suggested rendering: accepting it needs one"), "{error}");
    let acceptance =
        Acceptance {
            dst: Some("Даос Пустоты".into()), gender: Some(Gender::Masculine), ..Acceptance::default()
        };
    let written = book.review_accept(c, &acceptance, &write()).unwrap();
    let events = &written.submitted.decision.events;
    assert_eq!(events.len(), 2, "the term and the verdict in one batch");
    let Body::TermPut(put) = &events[0].body else { panic!("{events:?}") };
    assert_eq!((put.id, put.src.as_str(), put.status), (term_id(4), "空空道人", Status::Approved));
    let after = book.assemble_chunk(&book::Reader::Full, 2, "1", text, None, false).unwrap();
    assert!(after.assembly.context.contains("Даос Пустоты"), "{}", after.assembly.context);
    assert!(book.review_list(None).unwrap().iter().all(|item| item.id() != c));
    // Rejecting a record takes it out of every assembly.
    book.review_judge(term_id(4), Verdict::Reject, "not_a_name", None, &write()).unwrap();
    let rejected = book.assemble_chunk(&book::Reader::Full, 2, "1", text, None, false).unwrap();
    assert!(!rejected.assembly.context.contains("Даос Пустоты"), "{}", rejected.assembly.context);
    // A bad reason code is refused with nothing written.
    let head = book.state(None).unwrap().revision();
    assert!(book.review_judge(term_id(1), Verdict::Verify, "Not A Code", None, &write()).is_err());
    assert!(book.review_judge(candidate_id(99), Verdict::Reject, "rejected", None, &write()).is_err());
    assert_eq!(book.state(None).unwrap().revision(), head);
}

#[test]
fn a_book_without_a_language_has_no_alarm() {
    let dir = tempfile::tempdir().unwrap();
    let profile = ProfileBuilder::new(Flavour::Plain).build().unwrap();
    let table = Hash32(profile.id().0);
    let mut book = Book::new(Ledger::create(&dir.path().join("p.lorebank")).unwrap());
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "plain".into(), table: Some(table) },
    });
    book.submit(&[event(config)], Some(Seq(0)), vec![(table, profile.to_bytes())]).unwrap();
    let error = book.scan_names(1, "1", "空空道人", false, &write()).unwrap_err();
    assert!(error.to_string().contains("knows Chinese (zh) and Japanese (ja) books"), "{error}");
}

fn low_trust(number: u32, surface: &str, score: i32, related: RecordId, duplicate: Option<RecordId>) -> Body {
    Body::CandidateProposed(CandidateProposed {
        id: candidate_id(number),
        surface: surface.into(),
        suggested_dst: None,
        evidence: Some(format!("ch1/1@0-2 near {related}")),
        origin: Origin::Embedding,
        trust: Trust::Low,
        score: Some(score),
        related: Some(related),
        duplicate,
    })
}

#[test]
fn an_accepted_suggestion_is_an_alias_of_its_term_and_an_accepted_pair_merges_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = book(&dir.path().join("b.lorebank"));
    let text = "阿照站在桥上。";
    book.scan_names(1, "1", "空空道人笑道：“空空道人来也。”", false, &write()).unwrap();
    let bodies = vec![
        low_trust(10, "阿照", 850_000, term_id(1), None),
        low_trust(11, "灯宗", 990_000, term_id(2), Some(term_id(3))),
        low_trust(12, "雾河", 870_000, term_id(2), None),
    ];
    book.submit_labelled(&write(), book::Labelled::numbered(bodies, "test"), Vec::new()).unwrap();
    // Extractor candidates first; then low trust, best score first.
    let queue: Vec<(RecordId, Trust)> = book
        .review_list(None)
        .unwrap()
        .iter()
        .filter_map(|item| match item {
            ReviewItem::Candidate { proposed, .. } => Some((proposed.id, proposed.trust)),
            _ => None,
        })
        .collect();
    let first_low = queue.iter().position(|(_, trust)| *trust == Trust::Low).unwrap();
    assert!(queue[first_low..].iter().all(|(_, trust)| *trust == Trust::Low), "{queue:?}");
    assert_eq!(
        queue.iter().filter(|(_, trust)| *trust == Trust::Low).map(|(id, _)| *id).collect::<Vec<_>>(),
        [candidate_id(11), candidate_id(12), candidate_id(10)]
    );
    assert_eq!(queue.first().map(|(_, trust)| *trust), Some(Trust::Normal));
    let snapshot = book.state(None).unwrap().snapshot_id();
    // A suggestion is not a new term: a rendering is refused, and nothing is written.
    let error = book
        .review_accept(candidate_id(10), &Acceptance { dst: Some("Чжао".into()), ..Acceptance::default() }, &write())
        .unwrap_err();
    assert!(
        error.to_string().contains("alias of T-1") && error.to_string().contains("a rendering cannot be given"),
        "{error}"
    );
    let before = book.assemble_chunk(&book::Reader::Full, 1, "1", text, None, false).unwrap();
    assert!(!before.assembly.context.contains("阿照"), "{}", before.assembly.context);
    // Accepted: the span is an alias of T-1, so the next assembly finds T-1 by it.
    let written = book.review_accept(candidate_id(10), &Acceptance::default(), &write()).unwrap();
    let events = &written.submitted.decision.events;
    assert_eq!(events.len(), 2, "the alias and the verdict in one batch");
    let Body::AliasAdded(alias) = &events[0].body else { panic!("{events:?}") };
    assert_eq!((alias.id, alias.surface.as_str()), (term_id(1), "阿照"));
    let after = book.assemble_chunk(&book::Reader::Full, 1, "1", text, None, false).unwrap();
    assert!(after.assembly.context.contains("Шэнь Чжао"), "{}", after.assembly.context);
    assert!(after.assembly.hits.iter().any(|hit| hit.term == 1 && hit.text == "阿照"), "{:?}", after.assembly.hits);
    // A pair: the verdict alone, and the snapshot does not move.
    let snapshot_after_alias = book.state(None).unwrap().snapshot_id();
    assert_ne!(snapshot_after_alias, snapshot);
    let written = book.review_accept(candidate_id(11), &Acceptance::default(), &write()).unwrap();
    let events = &written.submitted.decision.events;
    let [NewEvent { body: Body::DispositionSet(verdict), .. }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(
        (verdict.target, verdict.verdict, verdict.reason.as_str()),
        (candidate_id(11), Verdict::Accept, "same_entity")
    );
    assert!(verdict.note.as_deref().unwrap().contains("T-3 is the same entity as T-2"), "{verdict:?}");
    assert_eq!(book.state(None).unwrap().snapshot_id(), snapshot_after_alias);
    assert!(book.state(None).unwrap().is_active(term_id(3)), "nothing merged, nothing retired");
    // A suggestion whose term was retired since cannot be accepted; nothing is written.
    book.submit_labelled(
        &write(),
        book::Labelled::numbered(vec![Body::TermRetired(TermRetired { id: term_id(2), reason: None })], "test"),
        Vec::new(),
    )
    .unwrap();
    let head = book.state(None).unwrap().revision();
    assert!(book.review_accept(candidate_id(12), &Acceptance::default(), &write()).is_err());
    assert_eq!(book.state(None).unwrap().revision(), head);
}
