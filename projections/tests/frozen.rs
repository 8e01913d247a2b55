//! The frozen projection cache: loading it gives exactly the table a rebuild gives,
//! equal snapshots freeze to equal bytes, and damaged or foreign bytes are refused
//! with an error, never a panic.

mod support;

use std::sync::OnceLock;

use ledger_model::*;
use matcher::{Flavour, Profile, ProfileBuilder};
use projections::frozen::{freeze, table, Frozen, FrozenError};
use projections::plan_rollback;
use proptest::prelude::*;
use support::{id, term, Sim};

fn profile() -> &'static Profile {
    static PROFILE: OnceLock<Profile> = OnceLock::new();
    PROFILE.get_or_init(|| ProfileBuilder::new(Flavour::Zh).build().unwrap())
}

fn glossary() -> Sim {
    let mut sim = Sim::default();
    sim.ok(vec![
        Body::TermPut(TermPut {
            decl: vec!["Сяо Яня".into()],
            gender: Some(Gender::Masculine),
            ..term("T-1", "萧炎", "Сяо Янь")
        }),
        Body::AliasAdded(AliasAdded {
            id: id("T-1"),
            surface: "炎子".into(),
            kind: AliasKind::Nickname,
            window: Some(Window { since: 3, until: None }),
        }),
        Body::TermPut(TermPut { window: Window { since: 1, until: Some(9) }, ..term("T-2", "药老", "Яо Лао") }),
        Body::TermPut(TermPut {
            window: Window { since: 5, until: None },
            supersedes: Some(id("T-2")),
            ..term("T-3", "药尘", "Яо Чэнь")
        }),
        Body::SummaryPut(SummaryPut {
            id: id("S-1"),
            scope: Scope::Book,
            text: "Сяо Янь теряет силу.".into(),
            visible_from: None,
        }),
    ]);
    sim
}

#[test]
fn a_loaded_cache_equals_the_rebuilt_table_and_finds_traditional_spellings() {
    let sim = glossary();
    let bytes = freeze(&sim.state, profile()).unwrap();
    let frozen = Frozen::load(&bytes, profile(), sim.state.snapshot_id()).unwrap();
    assert_eq!(frozen.to_table(), table(&sim.state));
    assert_eq!(frozen.table().terms.len(), 3);
    // T-2 is cut at chapter 4 by T-3's supersession.
    let t2 = frozen.table().terms.iter().find(|term| term.number == 2).unwrap();
    assert_eq!(t2.window.as_ref().map(|w| (w.0.to_native(), w.1.as_ref().map(|u| u.to_native()))), Some((1, Some(4))));
    // The automaton finds 蕭炎 (traditional) as the surface of T-1.
    let text = profile().normalize("他叫蕭炎，也叫炎子。").unwrap();
    let hits = frozen.matcher().find(&text);
    let found: Vec<&str> = hits
        .iter()
        .flat_map(|hit| frozen.matcher().values(hit.pattern))
        .map(|value| frozen.table().surfaces[*value as usize].surface.as_str())
        .collect();
    assert_eq!(found, ["萧炎", "炎子"]);
}

#[test]
fn equal_snapshots_freeze_to_equal_bytes() {
    let mut sim = glossary();
    let before = freeze(&sim.state, profile()).unwrap();
    let target = sim.state.clone();
    sim.ok(vec![
        Body::TermPut(term("T-1", "萧炎", "Сяо Ян")),
        Body::TermRetired(TermRetired { id: id("T-2"), reason: None }),
    ]);
    assert_ne!(freeze(&sim.state, profile()).unwrap(), before);
    let plan = plan_rollback(&sim.state, &target, None).unwrap();
    sim.ok(plan);
    assert_eq!(freeze(&sim.state, profile()).unwrap(), before);
}

#[test]
fn foreign_or_damaged_bytes_are_refused() {
    let sim = glossary();
    let bytes = freeze(&sim.state, profile()).unwrap();
    let mut other = glossary();
    other.ok(vec![Body::TermPut(term("T-9", "纳兰", "Налань"))]);
    assert!(matches!(
        Frozen::load(&bytes, profile(), other.state.snapshot_id()),
        Err(FrozenError::WrongSnapshot { .. })
    ));
    assert!(matches!(Frozen::load(&bytes[..20], profile(), sim.state.snapshot_id()), Err(FrozenError::Header(_))));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_damage_never_panics(flip_at in any::<prop::sample::Index>(), bit in 0u8..8, cut in any::<prop::sample::Index>()) {
        let sim = glossary();
        let snapshot = sim.state.snapshot_id();
        let mut bytes = freeze(&sim.state, profile()).unwrap();
        let at = flip_at.index(bytes.len());
        bytes[at] ^= 1 << bit;
                // Every byte is covered: header fields are checked, the table and the
        // automaton each carry a hash.
        prop_assert!(Frozen::load(&bytes, profile(), snapshot).is_err(), "flip at {} loaded", at);
        let cut = cut.index(bytes.len());
        let _ = Frozen::load(&bytes[..cut], profile(), snapshot);
    }
}
