//! Assembly over forged frozen projections: bytes changed behind recomputed hashes
//! (what anyone who can write the cache can produce) are refused by `Frozen::load` or
//! assemble without a panic. Valid projections at the extremes of their ranges
//! assemble without a panic too.

use std::sync::OnceLock;

use assembly::assemble::{assemble, Previous};
use ledger_model::*;
use matcher::AUTOMATON_ID_CONTEXT;
use projections::frozen::{archive, freeze, seal, sections, table, Frozen, FrozenTable};
use projections::snapshot::SnapshotId;
use projections::State;
use proptest::prelude::*;
use test_support::profiles::nfkc_profile;
use test_support::records::{alias, applied, character, event, summary, verdict};

fn term(id_text: &str, src: &str, dst: &str) -> TermPut {
    TermPut { gender: Some(Gender::Feminine), decl: vec!["форма".into()], ..character(id_text, src, dst) }
}

/// A glossary that reaches every branch of assembly: windows, aliases, a constant
/// term, secondary keys, verdicts, statuses and summaries of every scope.
fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let bodies = vec![
            Body::TermPut(term("T-1", "Lin Dong", "Линь Дун")),
            Body::AliasAdded(AliasAdded {
                kind: AliasKind::Nickname,
                window: Some(Window { since: 2, until: None }),
                ..alias("T-1", "Dong")
            }),
            Body::TermPut(TermPut { window: Window { since: 3, until: Some(5) }, ..term("T-2", "Yan", "Янь") }),
            Body::TermPut(TermPut { constant: true, priority: 5, ..term("T-3", "Sect", "Секта") }),
            Body::TermPut(TermPut {
                sense: Some("river".into()),
                secondary: Some(SecondaryKeys { logic: KeyLogic::AndAny, keys: vec!["water".into()] }),
                status: Status::Auto,
                ..term("T-4", "Long", "Лун")
            }),
            Body::TermPut(TermPut {
                sense: Some("dragon".into()),
                status: Status::Draft,
                ..term("T-5", "Long", "Дракон")
            }),
            Body::DispositionSet(verdict("T-2", Verdict::Verify, "check")),
            Body::TermPut(term("T-6", "Mo", "Мо")),
            Body::DispositionSet(verdict("T-6", Verdict::Reject, "wrong")),
            Body::SummaryPut(summary("S-1", Scope::Book, "A  book.")),
            Body::SummaryPut(SummaryPut {
                visible_from: Some(1),
                ..summary("S-2", Scope::Arc { from: 1, to: 4 }, "An arc.")
            }),
            Body::SummaryPut(summary("S-3", Scope::Chapter(1), "Ch 1.")),
        ];
        applied(bodies.into_iter().map(|body| NewEvent { recorded_at_ms: 1, ..event(body) }))
    })
}

const TEXT: &str = "Lin Dong met Yan by the water. Long, Long! Dong and Mo of the Sect.";

/// Assembles every chapter of interest, each after the previous chunk of the chapter.
fn assemble_all(frozen: &Frozen) {
    for chapter in [1, 2, 3, 4, 6, u32::MAX - 1] {
        let Ok(first) = assemble(frozen, chapter, TEXT, None) else { continue };
        let _ = assemble(frozen, chapter, TEXT, Some(Previous { chapter, recent: &first.recent }));
    }
}

fn snapshot() -> SnapshotId {
    state().snapshot_id()
}

fn honest() -> Vec<u8> {
    freeze(state(), nfkc_profile()).unwrap()
}

/// Matcher bytes with `at` set to `value` in the body and the body hash recomputed.
fn forge_matcher(matcher: &[u8], at: usize, value: u8) -> Vec<u8> {
    let mut forged = matcher.to_vec();
    let at = 48 + at % (forged.len() - 48);
    forged[at] = value;
    let hash = blake3::derive_key(AUTOMATON_ID_CONTEXT, &forged[48..]);
    forged[8..40].copy_from_slice(&hash);
    forged
}

#[test]
fn the_honest_projection_assembles_every_branch() {
    let frozen = Frozen::load(&honest(), nfkc_profile(), snapshot()).unwrap();
    let assembly = assemble(&frozen, 3, TEXT, None).unwrap();
    // Sect is hit, so it is ordered as a hit, not as a constant; Long has two live
    // senses; Mo is rejected; the chapter 1 summary is for chapter 2.
    assert_eq!(
        assembly.context,
        "[glossary]\nLin Dong -> Линь Дун #character, f; форма\nSect -> Секта #character, f; форма\n\
         Yan -> Янь #character, f; форма [unverified]\nLong -> Лун #character, f; форма [unverified]\n\
         Long -> Дракон #character, f; форма [unverified]\n\
         [summaries]\n(book) A book.\n(arc, chapters 1-4) An arc.\n"
    );
    assemble_all(&frozen);
}

#[test]
fn a_summary_of_the_last_chapter_assembles() {
    // Valid: chapters are any u32 from 1, and visible_from may be set early.
    let body =
        Body::SummaryPut(SummaryPut { visible_from: Some(1), ..summary("S-1", Scope::Chapter(u32::MAX), "The end.") });
    let state = applied([NewEvent { recorded_at_ms: 1, ..event(body) }]);
    let frozen = Frozen::load(&freeze(&state, nfkc_profile()).unwrap(), nfkc_profile(), state.snapshot_id()).unwrap();
    for chapter in [1, u32::MAX] {
        assert_eq!(assemble(&frozen, chapter, TEXT, None).unwrap().summaries, Vec::<u32>::new());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn forged_table_bytes_never_panic_assembly(at in any::<prop::sample::Index>(), value in any::<u8>()) {
        let bytes = honest();
        let (table_bytes, matcher) = sections(&bytes).unwrap();
        let mut table_bytes = table_bytes.to_vec();
        let at = at.index(table_bytes.len());
        table_bytes[at] = value;
        if let Ok(frozen) = Frozen::load(&seal(snapshot(), nfkc_profile().id(), &table_bytes, matcher), nfkc_profile(), snapshot()) {
            assemble_all(&frozen);
        }
    }

    #[test]
    fn forged_matcher_bytes_never_panic_assembly(at in any::<usize>(), value in any::<u8>()) {
        let bytes = honest();
        let (table_bytes, matcher) = sections(&bytes).unwrap();
        let matcher = forge_matcher(matcher, at, value);
        if let Ok(frozen) = Frozen::load(&seal(snapshot(), nfkc_profile().id(), table_bytes, &matcher), nfkc_profile(), snapshot()) {
            assemble_all(&frozen);
        }
    }

    #[test]
    fn forged_fields_never_panic_assembly(
        field in 0usize..10, which in any::<prop::sample::Index>(), value in any::<u32>(),
    ) {
        let mut forged: FrozenTable = table(state());
        let term = which.index(forged.terms.len());
        let surface = which.index(forged.surfaces.len());
        let summary = which.index(forged.summaries.len());
        match field {
            0 => forged.surfaces[surface].term = value,
            1 => forged.surfaces[surface].kind = value as u8,
            2 => forged.constant = vec![value],
            3 => forged.terms[term].gender = value as u8,
            4 => forged.terms[term].status = value as u8,
            5 => forged.terms[term].verdict = value as u8,
            6 => forged.terms[term].number = value,
            7 => forged.terms[term].secondary = Some((value as u8, vec!["water".into()])),
            8 => forged.summaries[summary].scope = (value as u8 % 4, value, value / 2),
            _ => forged.assembly = (value, value % 70, value, value as u16, (value >> 16) as u16),
        }
        let (_, matcher) = sections(&honest()).map(|(t, m)| (t.to_vec(), m.to_vec())).unwrap();
        let bytes = seal(snapshot(), nfkc_profile().id(), &archive(&forged).unwrap(), &matcher);
        if let Ok(frozen) = Frozen::load(&bytes, nfkc_profile(), snapshot()) {
            assemble_all(&frozen);
        }
    }
}
