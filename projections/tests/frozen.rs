//! The frozen projection cache: loading it gives exactly the table a rebuild gives,
//! equal snapshots freeze to equal bytes, and damaged or foreign bytes are refused
//! with an error, never a panic.

mod support;

use ledger_model::*;
use projections::frozen::{archive, freeze, seal, sections, table, Frozen, FrozenError, FrozenSurface, FrozenTable};
use projections::plan_rollback;
use projections::snapshot::SnapshotId;
use proptest::prelude::*;
use support::glossary;
use test_support::profiles::zh_profile;
use test_support::records::{id, put};

#[test]
fn a_loaded_cache_equals_the_rebuilt_table_and_finds_traditional_spellings() {
    let sim = glossary();
    let bytes = freeze(&sim.state, zh_profile()).unwrap();
    let frozen = Frozen::load(&bytes, zh_profile(), sim.state.snapshot_id()).unwrap();
    assert_eq!(frozen.to_table(), table(&sim.state));
    assert_eq!(frozen.n_terms(), 3);
    // T-2 is cut at chapter 4 by T-3's supersession.
    let (t2_idx, t2) = frozen.terms().find(|(_, term)| term.number() == 2).unwrap();
    assert_eq!(t2.window(), Some(Window { since: 1, until: Some(4) }));
    assert_eq!(frozen.term_index(2), Some(t2_idx));
    assert_eq!(frozen.term(t2_idx).dst(), "Яо Лао");
    let t1 = frozen.term(frozen.term_index(1).unwrap());
    assert_eq!((t1.gender(), t1.status(), t1.verdict()), (Some(Gender::Masculine), Status::Approved, None));
    assert_eq!(t1.decl().collect::<Vec<_>>(), ["Сяо Яня"]);
    assert_eq!(
        frozen.summaries().map(|summary| (summary.number(), summary.scope())).collect::<Vec<_>>(),
        [(1, Scope::Book)]
    );
    // The automaton finds 蕭炎 (traditional) as the surface of T-1.
    let text = zh_profile().normalize("他叫蕭炎，也叫炎子。").unwrap();
    let hits = frozen.matcher().find(&text);
    let found: Vec<&str> = hits
        .iter()
        .flat_map(|hit| frozen.matcher().values(hit.pattern))
        .map(|value| frozen.surface(*value).unwrap().surface())
        .collect();
    assert_eq!(found, ["萧炎", "炎子"]);
}

#[test]
fn equal_snapshots_freeze_to_equal_bytes() {
    let mut sim = glossary();
    let before = freeze(&sim.state, zh_profile()).unwrap();
    let target = sim.state.clone();
    sim.ok(vec![
        Body::TermPut(put("T-1", "萧炎", "Сяо Ян")),
        Body::TermRetired(TermRetired { id: id("T-2"), reason: None }),
    ]);
    assert_ne!(freeze(&sim.state, zh_profile()).unwrap(), before);
    let plan = plan_rollback(&sim.state, &target, None).unwrap();
    sim.ok(plan);
    assert_eq!(freeze(&sim.state, zh_profile()).unwrap(), before);
}

#[test]
fn foreign_or_damaged_bytes_are_refused() {
    let sim = glossary();
    let bytes = freeze(&sim.state, zh_profile()).unwrap();
    let mut other = glossary();
    other.ok(vec![Body::TermPut(put("T-9", "纳兰", "Налань"))]);
    assert!(matches!(
        Frozen::load(&bytes, zh_profile(), other.state.snapshot_id()),
        Err(FrozenError::WrongSnapshot { .. })
    ));
    assert!(matches!(Frozen::load(&bytes[..20], zh_profile(), sim.state.snapshot_id()), Err(FrozenError::Header(_))));
}

/// `bytes` with its table section replaced by `table`, every hash recomputed: what
/// anyone who can write the cache can produce.
fn forge_table(bytes: &[u8], snapshot: SnapshotId, table: &FrozenTable) -> Vec<u8> {
    let (_, matcher) = sections(bytes).unwrap();
    seal(snapshot, zh_profile().id(), &archive(table).unwrap(), matcher)
}

#[test]
fn forged_tables_with_valid_hashes_are_refused() {
    let sim = glossary();
    let snapshot = sim.state.snapshot_id();
    let bytes = freeze(&sim.state, zh_profile()).unwrap();
    // Resealing the honest table gives the honest bytes, so each forgery below differs
    // only by its change.
    assert_eq!(forge_table(&bytes, snapshot, &table(&sim.state)), bytes);
    type Forgery = (&'static str, fn(&mut FrozenTable));
    let forgeries: [Forgery; 11] = [
        ("surface 0 names term index 99 of 3", |table| table.surfaces[0].term = 99),
        ("constant list names term index Some(7)", |table| table.constant.push(7)),
        ("constant list names term index None where Some(0)", |table| table.terms[0].constant = true),
        ("term T-1: unknown verdict code 9", |table| table.terms[0].verdict = 9),
        ("term T-1: unknown gender code 5", |table| table.terms[0].gender = 5),
        ("term T-2: unknown status code 3", |table| table.terms[1].status = 3),
        ("term T-1: unknown secondary logic code 4", |table| table.terms[0].secondary = Some((4, vec!["x".into()]))),
        ("term 1 (T-1) is out of id order", |table| table.terms[1].number = 1),
        ("surface 1: unknown kind code 7", |table| table.surfaces[1].kind = 7),
        ("summary 0 (S-1): scope (3, 0, 0)", |table| table.summaries[0].scope = (3, 0, 0)),
        ("matcher value 3 names no surface (of 3)", |table| {
            table.surfaces.pop();
        }),
    ];
    for (expected, forge) in forgeries {
        let mut forged = table(&sim.state);
        forge(&mut forged);
        match Frozen::load(&forge_table(&bytes, snapshot, &forged), zh_profile(), snapshot) {
            Err(FrozenError::Table(detail)) => assert!(detail.contains(expected), "{detail:?} for {expected:?}"),
            other => panic!("{expected}: loaded as {other:?}"),
        }
    }
}

#[test]
fn a_matcher_that_does_not_belong_to_the_table_is_refused() {
    let sim = glossary();
    let snapshot = sim.state.snapshot_id();
    let honest = table(&sim.state);
    let archived = archive(&honest).unwrap();
    // One more surface: the matcher names a surface the table does not have.
    let mut more = honest.clone();
    more.surfaces.push(FrozenSurface { term: 0, kind: 1, surface: "蕭".into(), window: None });
    let matcher = projections::frozen::build_matcher(&more, zh_profile()).unwrap().to_bytes();
    let loaded = Frozen::load(&seal(snapshot, zh_profile().id(), &archived, &matcher), zh_profile(), snapshot);
    assert!(matches!(&loaded, Err(FrozenError::Table(detail)) if detail.contains("names no surface")), "{loaded:?}");
    // One surface fewer: the matcher does not find a surface of the table.
    let mut fewer = honest.clone();
    fewer.surfaces.pop();
    let matcher = projections::frozen::build_matcher(&fewer, zh_profile()).unwrap().to_bytes();
    let loaded = Frozen::load(&seal(snapshot, zh_profile().id(), &archived, &matcher), zh_profile(), snapshot);
    assert!(
        matches!(&loaded, Err(FrozenError::Table(detail)) if detail.contains("does not find surface 3")),
        "{loaded:?}"
    );
    // Format 1 projections (hash over the table alone) are refused, so they get rebuilt.
    let mut old = freeze(&sim.state, zh_profile()).unwrap();
    old[4..6].copy_from_slice(&1u16.to_le_bytes());
    assert!(matches!(Frozen::load(&old, zh_profile(), snapshot), Err(FrozenError::Header(_))));
}

/// Reads every field of every record through the typed views.
fn walk(frozen: &Frozen) {
    let config = frozen.assembly();
    let _ = (config.token_budget, config.render_format);
    for (idx, term) in frozen.terms() {
        let _ = (frozen.term(idx).number(), term.src(), term.sense(), term.dst(), term.kind(), term.gender());
        let _ = (term.decl().count(), term.window(), term.status(), term.priority(), term.constant());
        let _ = (term.secondary().map(|(logic, keys)| (logic, keys.count())), term.verdict(), term.in_window(3));
    }
    for idx in frozen.constant() {
        let _ = frozen.term(idx).src();
    }
    for pattern in frozen.matcher().pattern_ids() {
        for &value in frozen.matcher().values(pattern) {
            let surface = frozen.surface(value).expect("every matcher value names a surface");
            let _ = (frozen.term(surface.term()).src(), surface.alias_kind(), surface.window(), surface.surface());
        }
    }
    for summary in frozen.summaries() {
        let _ = (summary.number(), summary.scope(), summary.text(), summary.visible_from());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Damage behind valid hashes: a byte of the table section changed and the hashes
    /// recomputed. Loading refuses it or gives a projection whose every view works.
    #[test]
    fn forged_table_bytes_never_panic(at in any::<prop::sample::Index>(), value in any::<u8>()) {
        let sim = glossary();
        let snapshot = sim.state.snapshot_id();
        let bytes = freeze(&sim.state, zh_profile()).unwrap();
        let (table_bytes, matcher) = sections(&bytes).unwrap();
        let mut table_bytes = table_bytes.to_vec();
        let at = at.index(table_bytes.len());
        table_bytes[at] = value;
        if let Ok(frozen) = Frozen::load(&seal(snapshot, zh_profile().id(), &table_bytes, matcher), zh_profile(), snapshot) {
            walk(&frozen);
        }
    }

    /// Every index and code of the table set to an arbitrary value, hashes recomputed:
    /// loading refuses it or gives a projection whose every view works.
    #[test]
    fn forged_fields_never_panic(
        field in 0usize..8, which in any::<prop::sample::Index>(), value in any::<u32>(),
    ) {
        let sim = glossary();
        let snapshot = sim.state.snapshot_id();
        let bytes = freeze(&sim.state, zh_profile()).unwrap();
        let mut forged = table(&sim.state);
        let term = which.index(forged.terms.len());
        let surface = which.index(forged.surfaces.len());
        match field {
            0 => forged.surfaces[surface].term = value,
            1 => forged.surfaces[surface].kind = value as u8,
            2 => forged.constant.push(value),
            3 => forged.terms[term].gender = value as u8,
            4 => forged.terms[term].status = value as u8,
            5 => forged.terms[term].verdict = value as u8,
            6 => forged.terms[term].number = value,
            _ => forged.summaries[0].scope.0 = value as u8,
        }
        if let Ok(frozen) = Frozen::load(&forge_table(&bytes, snapshot, &forged), zh_profile(), snapshot) {
            walk(&frozen);
        }
    }

    #[test]
    fn arbitrary_damage_never_panics(flip_at in any::<prop::sample::Index>(), bit in 0u8..8, cut in any::<prop::sample::Index>()) {
        let sim = glossary();
        let snapshot = sim.state.snapshot_id();
        let mut bytes = freeze(&sim.state, zh_profile()).unwrap();
        let at = flip_at.index(bytes.len());
        bytes[at] ^= 1 << bit;
                // Every byte is covered: header fields are checked, the table and the
        // automaton each carry a hash.
        prop_assert!(Frozen::load(&bytes, zh_profile(), snapshot).is_err(), "flip at {} loaded", at);
        let cut = cut.index(bytes.len());
        let _ = Frozen::load(&bytes[..cut], zh_profile(), snapshot);
    }
}
