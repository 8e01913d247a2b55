//! Assembly over forged frozen projections: bytes changed behind recomputed hashes
//! (what anyone who can write the cache can produce) are refused by `Frozen::load` or
//! assemble without a panic. Valid projections at the extremes of their ranges
//! assemble without a panic too.

use std::sync::OnceLock;

use assembly::assemble::{assemble, Previous};
use ledger_model::*;
use matcher::{Profile, ProfileBuilder, AUTOMATON_ID_CONTEXT};
use projections::frozen::{archive, freeze, seal, sections, table, Frozen, FrozenTable};
use projections::snapshot::SnapshotId;
use projections::State;
use proptest::prelude::*;

fn profile() -> &'static Profile {
    static PROFILE: OnceLock<Profile> = OnceLock::new();
    PROFILE.get_or_init(|| ProfileBuilder::nfkc_only().build().unwrap())
}

fn id(text: &str) -> RecordId {
    text.parse().unwrap()
}

fn term(id_text: &str, src: &str, dst: &str) -> TermPut {
    TermPut {
        kind: Some("character".into()),
        gender: Some(Gender::Feminine),
        decl: vec!["форма".into()],
        ..TermPut::new(id(id_text), src, dst)
    }
}

/// A glossary that reaches every branch of assembly: windows, aliases, a constant
/// term, secondary keys, verdicts, statuses and summaries of every scope.
fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let bodies = vec![
            Body::TermPut(term("T-1", "Lin Dong", "Линь Дун")),
            Body::AliasAdded(AliasAdded {
                id: id("T-1"),
                surface: "Dong".into(),
                kind: AliasKind::Nickname,
                window: Some(Window { since: 2, until: None }),
                release_to: None,
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
            Body::DispositionSet(DispositionSet {
                target: id("T-2"),
                verdict: Verdict::Verify,
                reason: "check".into(),
                note: None,
            }),
            Body::TermPut(term("T-6", "Mo", "Мо")),
            Body::DispositionSet(DispositionSet {
                target: id("T-6"),
                verdict: Verdict::Reject,
                reason: "wrong".into(),
                note: None,
            }),
            Body::SummaryPut(SummaryPut {
                id: id("S-1"),
                scope: Scope::Book,
                text: "A  book.".into(),
                visible_from: None,
                owner: None,
                owner_role: None,
                release_to: None,
            }),
            Body::SummaryPut(SummaryPut {
                id: id("S-2"),
                scope: Scope::Arc { from: 1, to: 4 },
                text: "An arc.".into(),
                visible_from: Some(1),
                owner: None,
                owner_role: None,
                release_to: None,
            }),
            Body::SummaryPut(SummaryPut {
                id: id("S-3"),
                scope: Scope::Chapter(1),
                text: "Ch 1.".into(),
                visible_from: None,
                owner: None,
                owner_role: None,
                release_to: None,
            }),
        ];
        let mut state = State::new();
        for (idx, body) in bodies.into_iter().enumerate() {
            let content = NewEvent { recorded_at_ms: 1, actor: "human:test".into(), source: "test".into(), body };
            state.apply(&Event {
                seq: Seq(idx as u64 + 1),
                prev: Hash32::GENESIS,
                hash: Hash32::GENESIS,
                schema: 1,
                content,
            });
        }
        state
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
    freeze(state(), profile()).unwrap()
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
    let frozen = Frozen::load(&honest(), profile(), snapshot()).unwrap();
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
    let mut state = State::new();
    let body = Body::SummaryPut(SummaryPut {
        id: id("S-1"),
        scope: Scope::Chapter(u32::MAX),
        text: "The end.".into(),
        visible_from: Some(1),
        owner: None,
        owner_role: None,
        release_to: None,
    });
    let content = NewEvent { recorded_at_ms: 1, actor: "human:test".into(), source: "test".into(), body };
    state.apply(&Event { seq: Seq(1), prev: Hash32::GENESIS, hash: Hash32::GENESIS, schema: 1, content });
    let frozen = Frozen::load(&freeze(&state, profile()).unwrap(), profile(), state.snapshot_id()).unwrap();
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
        if let Ok(frozen) = Frozen::load(&seal(snapshot(), profile().id(), &table_bytes, matcher), profile(), snapshot()) {
            assemble_all(&frozen);
        }
    }

    #[test]
    fn forged_matcher_bytes_never_panic_assembly(at in any::<usize>(), value in any::<u8>()) {
        let bytes = honest();
        let (table_bytes, matcher) = sections(&bytes).unwrap();
        let matcher = forge_matcher(matcher, at, value);
        if let Ok(frozen) = Frozen::load(&seal(snapshot(), profile().id(), table_bytes, &matcher), profile(), snapshot()) {
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
        let bytes = seal(snapshot(), profile().id(), &archive(&forged).unwrap(), &matcher);
        if let Ok(frozen) = Frozen::load(&bytes, profile(), snapshot()) {
            assemble_all(&frozen);
        }
    }
}
