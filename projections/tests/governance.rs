//! Given/when/then tests of the governance fields (the additive memory profile):
//! what `decide` refuses about parties, rules and expected concepts; who reads what
//! (`State::view_for`, "absence is not permission"); and what the snapshot ID covers
//! of governance (nothing, for a book that uses none of it).

mod support;

use ledger_model::*;
use projections::{Problem, Reader, State};
use support::Sim;
use test_support::records::{id, put};

const EDITORS: &str = "human:editors";
const PIPELINE: &str = "tool:pipeline";
const VENDOR: &str = "vendor:acme";

fn party(name: &str) -> Reader {
    Reader::Party(name.to_owned())
}

fn governance(policy: ConflictPolicy, defaults: Vec<RecordDefaults>) -> Body {
    Body::GovernanceSet(GovernanceSet {
        conflict_policy: policy,
        parties: vec![EDITORS.into(), PIPELINE.into(), VENDOR.into()],
        defaults,
    })
}

fn releases(parties: &[&str]) -> Option<Vec<String>> {
    Some(parties.iter().map(|party| party.to_string()).collect())
}

fn rule(id_text: &str, applies_to: Vec<Selector>) -> RulePut {
    RulePut {
        id: id(id_text),
        text: "К 师父 обращаются на «вы».".into(),
        applies_to,
        does_not_apply_to: Some(Vec::new()),
        window: Window::default(),
        status: Status::Approved,
        priority: 0,
        owner: None,
        owner_role: None,
        release_to: None,
    }
}

fn render_format(version: u16) -> Body {
    Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig { render_format: version, ..AssemblyConfig::default() },
        profile: ProfileRef { name: "zh".into(), table: Some(Hash32([1; 32])) },
    })
}

/// Ids of the terms `reader` sees, in id order.
fn terms_seen(state: &State, reader: &Reader) -> Vec<String> {
    state.view_for(reader).terms().keys().map(ToString::to_string).collect()
}

#[test]
fn a_record_may_name_only_declared_parties() {
    let mut sim = Sim::default();
    // No governance yet: no party is declared, and the refusal says how to declare one.
    let refused = sim
        .submit(vec![Body::TermPut(TermPut { owner: Some(EDITORS.into()), ..put("T-1", "萧炎", "Сяо Янь") })])
        .unwrap_err();
    let Problem::UndeclaredParty { field, any_declared: false, .. } = &refused.problem else { panic!("{refused}") };
    assert_eq!(field, "term_put.owner");
    assert!(refused.to_string().contains("governance_set first"), "{refused}");
    sim.ok(vec![governance(ConflictPolicy::Flag, Vec::new())]);
    // A typo in a release list is named by its index.
    let refused = sim
        .submit(vec![Body::TermPut(TermPut {
            release_to: releases(&[PIPELINE, "tool:pipline"]),
            ..put("T-1", "萧炎", "Сяо Янь")
        })])
        .unwrap_err();
    let Problem::UndeclaredParty { field, party, any_declared: true } = &refused.problem else { panic!("{refused}") };
    assert_eq!((field.as_str(), party.as_str()), ("term_put.release_to[1]", "tool:pipline"));
    // `*` is every party, never a name to declare.
    sim.ok(vec![Body::TermPut(TermPut {
        owner: Some(EDITORS.into()),
        release_to: releases(&["*"]),
        note_release_to: releases(&[EDITORS]),
        ..put("T-1", "萧炎", "Сяо Янь")
    })]);
    // A governance that drops a party a record still names is refused whole.
    let refused = sim
        .submit(vec![Body::GovernanceSet(GovernanceSet {
            conflict_policy: ConflictPolicy::Flag,
            parties: vec![PIPELINE.into()],
            defaults: Vec::new(),
        })])
        .unwrap_err();
    assert_eq!(refused.index, None);
    assert!(refused.to_string().contains("T-1 term_put.owner"), "{refused}");
}

#[test]
fn governance_defaults_name_declared_parties_and_classes() {
    let mut sim = Sim::default();
    let bad_class = RecordDefaults { records: "terms".into(), owner: None, owner_role: None, release_to: None };
    let refused = sim.submit(vec![governance(ConflictPolicy::Flag, vec![bad_class])]).unwrap_err();
    assert!(refused.to_string().contains("governance_set.defaults[0].records"), "{refused}");
    let undeclared =
        RecordDefaults { records: "*".into(), owner: Some("human:nobody".into()), owner_role: None, release_to: None };
    let refused = sim.submit(vec![governance(ConflictPolicy::Flag, vec![undeclared])]).unwrap_err();
    assert!(refused.to_string().contains("defaults[0].owner"), "{refused}");
    let twice = RecordDefaults { records: "term".into(), owner: None, owner_role: None, release_to: None };
    let refused = sim.submit(vec![governance(ConflictPolicy::Flag, vec![twice.clone(), twice])]).unwrap_err();
    assert!(refused.to_string().contains("defaults[1].records"), "{refused}");
}

#[test]
fn rules_need_a_scope_a_render_format_that_renders_them_and_known_scope_records() {
    let mut sim = Sim::default();
    sim.ok(vec![render_format(1), Body::TermPut(put("T-1", "师父", "Учитель"))]);
    let refused = sim.submit(vec![Body::RulePut(rule("R-1", Vec::new()))]).unwrap_err();
    assert!(refused.to_string().contains("rule_put.applies_to"), "{refused}");
    let refused = sim.submit(vec![Body::RulePut(rule("R-1", vec![Selector::Dialogue]))]).unwrap_err();
    assert_eq!(refused.problem, Problem::RulesNeedRenderFormat { render_format: 1 });
    // In one batch with the config that renders it, the rule is accepted.
    sim.ok(vec![render_format(2), Body::RulePut(rule("R-1", vec![Selector::Dialogue]))]);
    // Back to format 1 while a rule is active: refused.
    let refused = sim.submit(vec![render_format(1)]).unwrap_err();
    assert_eq!(refused.problem, Problem::RulesNeedRenderFormat { render_format: 1 });
    let refused = sim.submit(vec![Body::RulePut(rule("R-2", vec![Selector::Record(id("T-9"))]))]).unwrap_err();
    let Problem::UnknownScopeRecord { field, id: missing } = &refused.problem else { panic!("{refused}") };
    assert_eq!((field.as_str(), *missing), ("rule_put.applies_to[0].record", id("T-9")));
    // Verdicts judge rules too; a retired rule takes none.
    sim.ok(vec![Body::DispositionSet(DispositionSet {
        target: id("R-1"),
        verdict: Verdict::Reject,
        reason: "too_strict".into(),
        note: None,
    })]);
    assert_eq!(sim.state.rules()[&id("R-1")].verdict, Some((Verdict::Reject, "too_strict".into())));
    sim.ok(vec![Body::RuleRetired(RuleRetired { id: id("R-1"), reason: None })]);
    let refused = sim
        .submit(vec![Body::DispositionSet(DispositionSet {
            target: id("R-1"),
            verdict: Verdict::Accept,
            reason: "ok".into(),
            note: None,
        })])
        .unwrap_err();
    assert_eq!(refused.problem, Problem::Retired(id("R-1")));
}

#[test]
fn expected_concepts_are_registered_once_by_their_folded_surface() {
    let mut sim = Sim::default();
    let expect =
        |surface: &str| Body::ConceptExpected(ConceptExpected { surface: surface.into(), kind: None, note: None });
    sim.ok(vec![expect("萧炎")]);
    // Registering it again is a no-op; under another spelling that folds the same, refused.
    assert_eq!(sim.ok(vec![expect("萧炎")]).dropped, [0]);
    let refused = sim.submit(vec![expect("蕭炎")]).unwrap_err();
    assert_eq!(refused.problem, Problem::ConceptTwice { surface: "蕭炎".into(), registered: "萧炎".into() });
    let refused = sim.submit(vec![Body::ConceptDropped(ConceptDropped { surface: "药老".into() })]).unwrap_err();
    assert_eq!(refused.problem, Problem::UnknownConcept("药老".into()));
    // The register changes no snapshot.
    let before = sim.state.snapshot_id();
    sim.ok(vec![expect("药老"), Body::ConceptDropped(ConceptDropped { surface: "萧炎".into() })]);
    assert_eq!(sim.state.snapshot_id(), before);
    assert_eq!(sim.state.expected().keys().collect::<Vec<_>>(), ["药老"]);
}

#[test]
fn a_book_that_restricts_nothing_is_read_whole_by_every_party() {
    let mut sim = Sim::default();
    sim.ok(vec![
        governance(ConflictPolicy::Flag, Vec::new()),
        Body::TermPut(put("T-1", "萧炎", "Сяо Янь")),
        Body::TermPut(TermPut { release_to: releases(&["*"]), ..put("T-2", "药老", "Яо Лао") }),
    ]);
    assert!(!sim.state.is_restricted());
    for reader in [Reader::Full, party(PIPELINE), party(VENDOR)] {
        assert_eq!(terms_seen(&sim.state, &reader), ["T-1", "T-2"], "{reader}");
    }
}

#[test]
fn absence_is_not_permission_once_anything_is_restricted() {
    let mut sim = Sim::default();
    sim.ok(vec![
        governance(ConflictPolicy::Flag, Vec::new()),
        Body::TermPut(TermPut { owner: Some(VENDOR.into()), ..put("T-1", "萧炎", "Сяо Янь") }),
        Body::TermPut(TermPut { release_to: releases(&["*"]), ..put("T-2", "药老", "Яо Лао") }),
        Body::TermPut(TermPut {
            release_to: releases(&[EDITORS]), ..put("T-3", "纳兰嫣然", "Налань Яньжань")
        }),
        Body::TermPut(TermPut {
            release_to: releases(&[]),
            owner: Some(PIPELINE.into()),
            ..put("T-4", "云山", "Юньшань")
        }),
    ]);
    assert!(sim.state.is_restricted());
    // T-1 has no release list: only its owner reads it. T-2 is everyone's. T-3 is the
    // editors'. T-4 is released to nobody, but its owner reads it.
    assert_eq!(terms_seen(&sim.state, &party(PIPELINE)), ["T-2", "T-4"]);
    assert_eq!(terms_seen(&sim.state, &party(EDITORS)), ["T-2", "T-3"]);
    assert_eq!(terms_seen(&sim.state, &party(VENDOR)), ["T-1", "T-2"]);
    assert_eq!(terms_seen(&sim.state, &Reader::Full), ["T-1", "T-2", "T-3", "T-4"]);
    // Retiring the one restricted record makes the book unrestricted again: T-1 is
    // everyone's once more.
    sim.ok(vec![
        Body::TermRetired(TermRetired { id: id("T-3"), reason: None }),
        Body::TermRetired(TermRetired { id: id("T-4"), reason: None }),
    ]);
    assert!(!sim.state.is_restricted());
    assert!(terms_seen(&sim.state, &party(PIPELINE)).contains(&"T-1".to_owned()));
}

#[test]
fn aliases_and_notes_are_read_by_whoever_reads_the_term_unless_they_say_otherwise() {
    let mut sim = Sim::default();
    sim.ok(vec![
        governance(ConflictPolicy::Flag, Vec::new()),
        Body::TermPut(TermPut {
            note: Some("предатель; раскрыт в главе 200".into()),
            note_release_to: releases(&[EDITORS]),
            release_to: releases(&["*"]),
            ..put("T-1", "萧炎", "Сяо Янь")
        }),
        Body::AliasAdded(AliasAdded {
            id: id("T-1"),
            surface: "炎帝".into(),
            kind: AliasKind::Title,
            window: None,
            release_to: releases(&[EDITORS]),
        }),
        Body::AliasAdded(AliasAdded {
            id: id("T-1"),
            surface: "炎子".into(),
            kind: AliasKind::Nickname,
            window: None,
            release_to: None,
        }),
    ]);
    let pipeline = sim.state.view_for(&party(PIPELINE));
    let term = &pipeline.terms()[&id("T-1")];
    assert_eq!(term.put.note, None);
    assert_eq!(term.aliases.keys().collect::<Vec<_>>(), ["炎子"]);
    let editors = sim.state.view_for(&party(EDITORS));
    let term = &editors.terms()[&id("T-1")];
    assert_eq!(term.put.note.as_deref(), Some("предатель; раскрыт в главе 200"));
    assert_eq!(term.aliases.keys().collect::<Vec<_>>(), ["炎子", "炎帝"]);
}

#[test]
fn defaults_apply_field_by_field_from_the_most_specific_class() {
    let mut sim = Sim::default();
    sim.ok(vec![governance(
        ConflictPolicy::Flag,
        vec![
            // Declared in an order other than their specificity: it does not matter.
            RecordDefaults {
                records: "*".into(),
                owner: Some(EDITORS.into()),
                owner_role: Some("chief editor".into()),
                release_to: releases(&["*"]),
            },
            RecordDefaults {
                records: "term:character".into(),
                owner: Some(VENDOR.into()),
                owner_role: None,
                release_to: releases(&[EDITORS]),
            },
        ],
    )]);
    sim.ok(vec![
        Body::TermPut(TermPut { kind: Some("character".into()), ..put("T-1", "萧炎", "Сяо Янь") }),
        Body::TermPut(TermPut { kind: Some("place".into()), ..put("T-2", "云山", "Юньшань") }),
        Body::TermPut(TermPut {
            kind: Some("character".into()),
            owner: Some(PIPELINE.into()),
            ..put("T-3", "药老", "Яо Лао")
        }),
    ]);
    let governed = sim.state.governed(id("T-1"));
    assert_eq!(
        (governed.owner, governed.owner_role, governed.release_to),
        (Some(VENDOR), Some("chief editor"), Some(&[EDITORS.to_owned()][..]))
    );
    assert_eq!(sim.state.governed(id("T-2")).owner, Some(EDITORS));
    assert_eq!(sim.state.governed(id("T-3")).owner, Some(PIPELINE));
    // The character defaults restrict: T-1 reaches the editors and its owner only.
    assert_eq!(terms_seen(&sim.state, &party(PIPELINE)), ["T-2", "T-3"]);
}

#[test]
fn the_snapshot_of_a_book_without_governance_is_what_it_was_before_schema_2() {
    let mut plain = Sim::default();
    plain.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    assert!(plain.state.governance_doc().is_empty());
    // A declared `flag`, parties, owners and an unrestricted release change no
    // assembly, and no ID.
    let mut governed = Sim::default();
    governed.ok(vec![
        governance(ConflictPolicy::Flag, Vec::new()),
        Body::TermPut(TermPut {
            owner: Some(EDITORS.into()),
            owner_role: Some("chief editor".into()),
            release_to: releases(&["*"]),
            ..put("T-1", "萧炎", "Сяо Янь")
        }),
    ]);
    assert_eq!(governed.state.snapshot_id(), plain.state.snapshot_id());
    // Another policy, a restriction, a rule: each changes what some assembly is.
    let with = |bodies: Vec<Body>| {
        let mut sim = Sim::default();
        sim.ok(vec![governance(ConflictPolicy::Flag, Vec::new()), Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
        sim.ok(bodies);
        sim.state.snapshot_id()
    };
    let base = with(vec![Body::TermPut(put("T-2", "药老", "Яо Лао"))]);
    assert_eq!(base, {
        let mut sim = Sim::default();
        sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь")), Body::TermPut(put("T-2", "药老", "Яо Лао"))]);
        sim.state.snapshot_id()
    });
    let policy = with(vec![governance(ConflictPolicy::PreferPriority, Vec::new())]);
    let restricted =
        with(vec![Body::TermPut(TermPut { release_to: releases(&[EDITORS]), ..put("T-2", "药老", "Яо Лао") })]);
    let ruled = with(vec![render_format(2), Body::RulePut(rule("R-1", vec![Selector::Dialogue]))]);
    let ids = [base, policy, restricted, ruled];
    for (idx, a) in ids.iter().enumerate() {
        for b in &ids[idx + 1..] {
            assert_ne!(a, b);
        }
    }
    // In a restricted book, an owner decides who reads an unreleased record: covered.
    let owned = |owner: &str| {
        let mut sim = Sim::default();
        sim.ok(vec![
            governance(ConflictPolicy::Flag, Vec::new()),
            Body::TermPut(TermPut { owner: Some(owner.into()), ..put("T-1", "萧炎", "Сяо Янь") }),
            Body::TermPut(TermPut { release_to: releases(&[EDITORS]), ..put("T-2", "药老", "Яо Лао") }),
        ]);
        sim.state.snapshot_id()
    };
    assert_ne!(owned(PIPELINE), owned(VENDOR));
}

#[test]
fn a_rollback_to_before_the_first_governance_lands_on_its_snapshot() {
    let mut sim = Sim::default();
    sim.ok(vec![render_format(1), Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let before = sim.state.clone();
    sim.ok(vec![
        governance(ConflictPolicy::PreferApproved, Vec::new()),
        render_format(2),
        Body::TermPut(TermPut {
            owner: Some(EDITORS.into()),
            release_to: releases(&[EDITORS]),
            ..put("T-1", "萧炎", "Сяо Янь")
        }),
        Body::RulePut(rule("R-1", vec![Selector::Narration])),
    ]);
    assert_ne!(sim.state.snapshot_id(), before.snapshot_id());
    let plan = projections::plan_rollback(&sim.state, &before, None).unwrap();
    // The governance goes first, so the records after it name only its parties.
    assert!(matches!(plan[0], Body::GovernanceSet(_)), "{plan:?}");
    sim.ok(plan);
    assert_eq!(sim.state.snapshot_id(), before.snapshot_id());
    assert_eq!(sim.state.conflict_policy(), ConflictPolicy::Flag);
    assert!(sim.state.active_rules(None).is_empty());
}
