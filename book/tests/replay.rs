//! Replay, spoiler gate, rollback and impact on real books in temp files, with a
//! real Chinese fold table: a receipt replays byte-identically after any later
//! appends and rollbacks; a record never appears before its window and is reported
//! as `spoiler_window`; after a rollback to R, nothing assembled at R is impacted;
//! a forged receipt fails replay naming the first differing byte.

use book::assemble::{Disposition, Reason};
use book::receipt::text_id;
use book::Book;
use ledger::{Document, Ledger};
use ledger_model::*;
use proptest::prelude::*;
use test_support::books::{zh_book, zh_table};
use test_support::records::{character, event};

fn term(number: u32, src: &str, dst: &str, window: Window) -> Body {
    Body::TermPut(TermPut { gender: Some(Gender::Masculine), window, ..character(number, src, dst) })
}

fn new_book(dir: &tempfile::TempDir) -> Book {
    zh_book(&dir.path().join("book.lorebank"), Vec::new())
}

const CHUNKS: &[&str] = &[
    "顾寒川站在雾川边，沈照提着长明灯。",
    "蕭炎望著霧川，顧寒川不語。",
    "夜宗宗主来了，沈照握紧了长明。",
    "这一段里没有任何词条。",
];

#[test]
fn the_spoiler_record_is_absent_before_its_chapter_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir);
    book.submit(
        &[
            event(term(1, "顾寒川", "Гу Ханьчуань", Window { since: 1, until: Some(3) })),
            event(term(2, "夜宗宗主", "Глава Ночной секты", Window { since: 4, until: None })),
        ],
        None,
        Vec::new(),
    )
    .unwrap();
    for chapter in 1..=6 {
        let assembled = book.assemble_chunk(&book::Reader::Full, chapter, "1", CHUNKS[2], None, true).unwrap();
        let injected: Vec<u32> = assembled.assembly.injected.iter().map(|entry| entry.term).collect();
        let blocked: Vec<(u32, Disposition, Option<Reason>)> =
            assembled.assembly.hits.iter().map(|hit| (hit.term, hit.disposition, hit.reason)).collect();
        if chapter < 4 {
            assert!(!injected.contains(&2), "chapter {chapter}: {injected:?}");
            assert!(
                !assembled.assembly.context.contains("Ночной"),
                "chapter {chapter} leaks: {}",
                assembled.assembly.context
            );
            assert_eq!(blocked, [(2, Disposition::Rejected, Some(Reason::SpoilerWindow))]);
            assert_eq!(assembled.assembly.retrieval.n_spoiler_blocked, 1);
        } else {
            assert_eq!(injected, [2]);
            assert_eq!(assembled.assembly.retrieval.n_spoiler_blocked, 0);
        }
    }
}

#[test]
fn a_traditional_chunk_and_its_simplified_twin_inject_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir);
    book.submit(
        &[
            event(term(1, "顾寒川", "Гу Ханьчуань", Window::default())),
            event(term(2, "雾川", "Мглистая река", Window::default())),
            event(term(3, "萧炎", "Сяо Янь", Window::default())),
        ],
        None,
        Vec::new(),
    )
    .unwrap();
    let traditional = book.assemble_chunk(&book::Reader::Full, 1, "t", CHUNKS[1], None, false).unwrap();
    let simplified =
        book.assemble_chunk(&book::Reader::Full, 1, "s", "萧炎望着雾川，顾寒川不语。", None, false).unwrap();
    assert_eq!(traditional.assembly.context, simplified.assembly.context);
    // Spans point into each original text.
    let spans: Vec<&str> =
        traditional.assembly.hits.iter().map(|hit| &CHUNKS[1][hit.bytes.0 as usize..hit.bytes.1 as usize]).collect();
    assert_eq!(spans, ["蕭炎", "霧川", "顧寒川"]);
}

#[test]
fn a_forged_receipt_fails_replay_at_the_first_differing_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = new_book(&dir);
    book.submit(&[event(term(1, "顾寒川", "Гу Ханьчуань", Window::default()))], None, Vec::new()).unwrap();
    let assembled = book.assemble_chunk(&book::Reader::Full, 1, "1", CHUNKS[0], None, true).unwrap();
    assert!(book.replay(&book::Reader::Full, &assembled.id.to_hex()).unwrap().identical);
    // A receipt claiming another output for the same input.
    let forged_output = assembled.assembly.context.replacen("Гу", "Ку", 1);
    let mut receipt = assembled.receipt.clone();
    receipt.output = text_id(&forged_output);
    let id = receipt.id();
    let stored = Document { id, bytes: receipt.encode(), group: 1, key: "forged".into() };
    book.ledger().file_documents(vec![stored], vec![(receipt.output, forged_output.clone().into_bytes())]).unwrap();
    let replayed = book.replay(&book::Reader::Full, &id.to_hex()[..12]).unwrap();
    assert!(!replayed.identical);
    let expected_at = forged_output.bytes().zip(assembled.assembly.context.bytes()).position(|(a, b)| a != b);
    assert_eq!(replayed.first_difference, expected_at);
    assert_eq!(replayed.context, assembled.assembly.context);
}

#[derive(Clone, Debug)]
enum Step {
    Put { number: u32, src: usize, dst: usize, since: u32 },
    Retire(u32),
    Assemble { chapter: u32, chunk: usize },
    Rollback { back: usize },
}

const SURFACES: &[&str] = &["顾寒川", "雾川", "沈照", "长明灯", "长明", "夜宗宗主"];
const DSTS: &[&str] = &["Гу", "Мгла", "Шэнь", "Лампада", "Чанмин"];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1u32..5, 0..SURFACES.len(), 0..DSTS.len(), 1u32..5).prop_map(|(number, src, dst, since)| Step::Put { number, src, dst, since }),
        1 => (1u32..5).prop_map(Step::Retire),
        3 => (1u32..6, 0..CHUNKS.len()).prop_map(|(chapter, chunk)| Step::Assemble { chapter, chunk }),
        1 => (0usize..8).prop_map(|back| Step::Rollback { back }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn receipts_replay_after_later_appends_and_rollbacks(steps in prop::collection::vec(step(), 1..25)) {
        let dir = tempfile::tempdir().unwrap();
        let mut book = new_book(&dir);
        let mut receipts = Vec::new();
        let mut boundaries = vec![book.state(None).unwrap().revision()];
        for (step_idx, step) in steps.iter().enumerate() {
            match step {
                Step::Put { number, src, dst, since } => {
                    let body = term(*number, SURFACES[*src], DSTS[*dst], Window { since: *since, until: None });
                    if book.submit(&[event(body)], None, Vec::new()).is_ok() {
                        boundaries.push(book.state(None).unwrap().revision());
                    }
                }
                Step::Retire(number) => {
                    let body = Body::TermRetired(TermRetired { id: RecordId::new(RecordKind::Term, *number).unwrap(), reason: None });
                    if book.submit(&[event(body)], None, Vec::new()).is_ok() {
                        boundaries.push(book.state(None).unwrap().revision());
                    }
                }
                Step::Assemble { chapter, chunk } => {
                    let prev = receipts.last().map(|(id, _): &(Hash32, u32)| *id).filter(|_| receipts.last().is_some_and(|(_, c)| c == chapter));
                    let assembled = book.assemble_chunk(&book::Reader::Full, *chapter, &format!("{step_idx}"), CHUNKS[*chunk], prev, true).unwrap();
                    receipts.push((assembled.id, *chapter));
                }
                Step::Rollback { back } => {
                    let to = boundaries[boundaries.len().saturating_sub(1 + back)];
                    let target = book.state(Some(to)).unwrap().snapshot_id();
                    let plan = book.plan_rollback(to, None).unwrap();
                    let events: Vec<NewEvent> = plan.into_iter().map(event).collect();
                    book.submit(&events, None, Vec::new()).unwrap();
                    prop_assert_eq!(book.state(None).unwrap().snapshot_id(), target);
                    boundaries.push(book.state(None).unwrap().revision());
                                        // Nothing of a chapter whose every chunk was assembled at the target
                    // revision's snapshot is impacted (an earlier chunk assembled at another
                    // snapshot can still impact a later one through sticky records).
                    for chunk in book.impact(None, None).unwrap() {
                        let chapter_at_target = receipts
                            .iter()
                            .filter(|(_, chapter)| *chapter == chunk.chapter)
                            .all(|(id, _)| book.receipt(&id.to_hex()).unwrap().1.snapshot == target.0);
                        prop_assert!(!chapter_at_target, "chunk {:?} of chapter {} impacted", chunk.chunk_key, chunk.chapter);
                    }
                    let since = book.state(None).unwrap().revision();
                    prop_assert!(book.impact(Some(since), None).unwrap().is_empty());
                }
            }
        }
        for (id, _) in &receipts {
            let replayed = book.replay(&book::Reader::Full, &id.to_hex()).unwrap();
            prop_assert!(replayed.identical, "receipt {} replays differently at byte {:?}", id, replayed.first_difference);
        }
        // A chapter whose every recorded chunk was assembled when the head had the
        // current snapshot is not impacted. (One chunk at the head snapshot can still
        // be impacted through an earlier chunk of its chapter: the earlier chunk's
        // re-assembly feeds it other sticky records.)
        let head = book.state(None).unwrap().snapshot_id();
        let impacted: Vec<Hash32> = book.impact(None, None).unwrap().iter().map(|chunk| chunk.receipt).collect();
        let snapshot_of = |id: &Hash32| book.receipt(&id.to_hex()).unwrap().1.snapshot;
        for (id, chapter) in &receipts {
            let chapter_at_head =
                receipts.iter().filter(|(_, other)| other == chapter).all(|(other, _)| snapshot_of(other) == head.0);
            if chapter_at_head {
                prop_assert!(!impacted.contains(id));
            }
        }
    }
}

#[test]
fn a_forged_length_prefix_is_refused_without_allocating_it() {
    // Found by fuzz_receipt_and_apply: a length prefix of about 2^60 elements. The
    // decode limit refuses it before anything is allocated.
    let bytes: &[u8] = &[
        13, 9, 65, 9, 32, 9, 225, 9, 252, 252, 13, 9, 252, 252, 63, 252, 252, 252, 252, 252, 252, 252, 252, 252, 174,
        252, 252, 252, 252, 34, 37, 37, 63, 63, 101, 252, 252, 252, 63, 252,
    ];
    assert!(book::receipt::Receipt::decode(bytes).is_err());
}

#[test]
fn a_fold_table_is_stored_only_under_its_own_content_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = Book::new(Ledger::create(&dir.path().join("book.lorebank")).unwrap());
    let (_, bytes) = zh_table().clone();
    let wrong = Hash32([9; 32]);
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "zh".into(), table: Some(wrong) },
    });
    let refused = book.submit(&[event(config)], None, vec![(wrong, bytes)]);
    assert!(matches!(refused, Err(book::BookError::Profile(_))), "{refused:?}");
    assert_eq!(book.ledger().head().unwrap().seq, Seq(0));
    assert_eq!(book.ledger().blob(wrong).unwrap(), None);
}
