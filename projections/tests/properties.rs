//! Properties of projections over random valid command sequences (proptest):
//!
//! * full rebuild from the log = incremental apply = the state `decide` predicted;
//! * rollback to any revision R at the end of a batch yields R's snapshot ID (and R's
//!   active records);
//! * snapshot IDs ignore provenance and history: equal content, equal ID;
//! * diff of a state with itself is empty, and diff R → head is empty after rollback
//!   to head.
//!
//! The histories include governance: owners and release lists on terms, aliases and
//! summaries, governance sets (policy, parties, defaults), rules, and expected
//! concepts, so every property holds of schema-2 books too; and the book's languages
//! (`languages_set`), which a rollback restores although no snapshot covers them; and
//! the proxy template (`proxy_template_set`, set and cleared), which the snapshot
//! covers in its own part, so the tracker and rollback are held to it too.

mod support;

use ledger_model::*;
use projections::frozen::Frozen;
use projections::{diff, plan_rollback, SnapshotTracker, State};
use proptest::prelude::*;
use support::Sim;
use test_support::records::{put, term_id};

const SURFACES: &[&str] = &["萧炎", "蕭炎", "药老", "藥老", "纳兰嫣然", "云山", "炎帝"];
const DSTS: &[&str] = &["Сяо Янь", "Яо Лао", "Налань", "Юньшань", "Император"];

const PARTIES: &[&str] = &["human:editors", "tool:pipeline"];

const LANGUAGES: &[&str] = &["en", "es", "zh-Hant", "ru"];

const TEMPLATES: &[&str] = &["Глоссарий:\n\n{context}", "{context}", "Use these.\n{context}\n\tEnd."];

/// A release list by number: `*`, one party, or nobody.
fn release_list(code: u8) -> Vec<String> {
    match code {
        0 => vec!["*".into()],
        1 => vec![PARTIES[1].into()],
        _ => Vec::new(),
    }
}

#[derive(Clone, Copy, Debug)]
struct Governed {
    owner: Option<u8>,
    release: Option<u8>,
    note_release: Option<u8>,
}

#[derive(Clone, Debug)]
enum Op {
    Put {
        id: u32,
        src: usize,
        dst: usize,
        sense: bool,
        since: u32,
        until: Option<u32>,
        supersedes: Option<u32>,
        governed: Governed,
    },
    Retire(u32),
    AliasAdd {
        id: u32,
        surface: usize,
        since: Option<u32>,
    },
    AliasRemove {
        id: u32,
        surface: usize,
    },
    Verdict {
        id: u32,
        verdict: u8,
    },
    Summary {
        id: u32,
        chapter: u32,
        text: usize,
    },
    SummaryRetire(u32),
    Config {
        budget: u32,
        render_format: u16,
    },
    Governance {
        policy: u8,
        parties: bool,
        default_release: Option<u8>,
    },
    Rule {
        id: u32,
        text: usize,
        dialogue: bool,
        since: u32,
        release: Option<u8>,
    },
    RuleRetire(u32),
    Expect(usize),
    Drop(usize),
    Languages {
        source: Option<usize>,
        target: Option<usize>,
    },
    Template(Option<usize>),
    Cascade {
        depth: u8,
        quiet: Vec<u32>,
        direct_only: Vec<u32>,
    },
    Examples {
        always: Vec<u32>,
        never: Vec<u32>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let window = (1u32..8, prop::option::of(0u32..6)).prop_map(|(since, len)| (since, len.map(|len| since + len)));
    let governed = (prop::option::of(0u8..2), prop::option::of(0u8..3), prop::option::of(0u8..3))
        .prop_map(|(owner, release, note_release)| Governed { owner, release, note_release });
    prop_oneof![
        4 => (1u32..6, 0..SURFACES.len(), 0..DSTS.len(), any::<bool>(), window, prop::option::of(1u32..6), governed)
            .prop_map(|(id, src, dst, sense, (since, until), supersedes, governed)| Op::Put { id, src, dst, sense, since, until, supersedes, governed }),
        1 => (1u32..6).prop_map(Op::Retire),
        2 => (1u32..6, 0..SURFACES.len(), prop::option::of(1u32..8)).prop_map(|(id, surface, since)| Op::AliasAdd { id, surface, since }),
        1 => (1u32..6, 0..SURFACES.len()).prop_map(|(id, surface)| Op::AliasRemove { id, surface }),
        1 => (1u32..6, 0u8..4).prop_map(|(id, verdict)| Op::Verdict { id, verdict }),
        1 => (1u32..4, 1u32..6, 0..DSTS.len()).prop_map(|(id, chapter, text)| Op::Summary { id, chapter, text }),
        1 => (1u32..4).prop_map(Op::SummaryRetire),
        1 => (100u32..900, 1u16..3).prop_map(|(budget, render_format)| Op::Config { budget, render_format }),
        1 => (0u8..4, any::<bool>(), prop::option::of(0u8..3))
            .prop_map(|(policy, parties, default_release)| Op::Governance { policy, parties, default_release }),
        1 => (1u32..4, 0..DSTS.len(), any::<bool>(), 1u32..6, prop::option::of(0u8..3))
            .prop_map(|(id, text, dialogue, since, release)| Op::Rule { id, text, dialogue, since, release }),
        1 => (1u32..4).prop_map(Op::RuleRetire),
        1 => (0..SURFACES.len()).prop_map(Op::Expect),
        1 => (0..SURFACES.len()).prop_map(Op::Drop),
        1 => (prop::option::of(0..LANGUAGES.len()), prop::option::of(0..LANGUAGES.len()))
            .prop_map(|(source, target)| Op::Languages { source, target }),
        1 => prop::option::of(0..TEMPLATES.len()).prop_map(Op::Template),
        1 => (0u8..4, prop::collection::btree_set(1u32..6, 0..3), prop::collection::btree_set(1u32..6, 0..3))
            .prop_map(|(depth, quiet, direct_only)| Op::Cascade {
                depth,
                quiet: quiet.into_iter().collect(),
                direct_only: direct_only.into_iter().collect(),
            }),
        1 => (prop::collection::btree_set(1u32..6, 0..3), prop::collection::btree_set(1u32..6, 0..3))
            .prop_map(|(always, never)| Op::Examples { always: always.into_iter().collect(), never: never.into_iter().collect() }),
    ]
}

fn rid(number: u32) -> RecordId {
    RecordId::new(RecordKind::Rule, number).unwrap()
}

fn body(op: &Op) -> Body {
    match op.clone() {
        Op::Put { id, src, dst, sense, since, until, supersedes, governed } => Body::TermPut(TermPut {
            sense: sense.then(|| "alt".into()),
            window: Window { since, until },
            supersedes: supersedes.filter(|old| *old != id).map(term_id),
            owner: governed.owner.map(|party| PARTIES[party as usize].into()),
            owner_role: governed.owner.map(|_| "editor".into()),
            release_to: governed.release.map(release_list),
            note_release_to: governed.note_release.map(release_list),
            note: Some("заметка".into()),
            ..put(&format!("T-{id}"), SURFACES[src], DSTS[dst])
        }),
        Op::Retire(id) => Body::TermRetired(TermRetired { id: term_id(id), reason: None }),
        Op::AliasAdd { id, surface, since } => Body::AliasAdded(AliasAdded {
            id: term_id(id),
            surface: SURFACES[surface].into(),
            kind: AliasKind::Variant,
            window: since.map(|since| Window { since, until: None }),
            release_to: None,
        }),
        Op::AliasRemove { id, surface } => {
            Body::AliasRemoved(AliasRemoved { id: term_id(id), surface: SURFACES[surface].into() })
        }
        Op::Verdict { id, verdict } => Body::DispositionSet(DispositionSet {
            target: term_id(id),
            verdict: [Verdict::Accept, Verdict::Verify, Verdict::Reject, Verdict::Withdraw][verdict as usize],
            reason: "review".into(),
            note: None,
        }),
        Op::Summary { id, chapter, text } => Body::SummaryPut(SummaryPut {
            id: RecordId::new(RecordKind::Summary, id).unwrap(),
            scope: Scope::Chapter(chapter),
            text: DSTS[text].into(),
            visible_from: None,
            owner: None,
            owner_role: None,
            release_to: None,
        }),
        Op::SummaryRetire(id) => {
            Body::SummaryRetired(SummaryRetired { id: RecordId::new(RecordKind::Summary, id).unwrap(), reason: None })
        }
        Op::Config { budget, render_format } => Body::ConfigSet(ConfigSet {
            assembly: AssemblyConfig { token_budget: budget, render_format, ..Default::default() },
            profile: ProfileRef { name: "zh".into(), table: Some(Hash32([1; 32])) },
        }),
        Op::Governance { policy, parties, default_release } => Body::GovernanceSet(GovernanceSet {
            conflict_policy: [
                ConflictPolicy::Flag,
                ConflictPolicy::PreferSpecific,
                ConflictPolicy::PreferPriority,
                ConflictPolicy::PreferApproved,
            ][policy as usize],
            parties: if parties { PARTIES.iter().map(|party| party.to_string()).collect() } else { Vec::new() },
            defaults: default_release
                .filter(|_| parties)
                .map(|code| RecordDefaults {
                    records: "term".into(),
                    owner: Some(PARTIES[0].into()),
                    owner_role: None,
                    release_to: Some(release_list(code)),
                })
                .into_iter()
                .collect(),
        }),
        Op::Rule { id, text, dialogue, since, release } => Body::RulePut(RulePut {
            id: rid(id),
            text: DSTS[text].into(),
            applies_to: vec![if dialogue { Selector::Dialogue } else { Selector::Kind("character".into()) }],
            does_not_apply_to: Some(Vec::new()),
            window: Window { since, until: None },
            status: Status::Approved,
            priority: 0,
            owner: None,
            owner_role: None,
            release_to: release.map(release_list),
        }),
        Op::RuleRetire(id) => Body::RuleRetired(RuleRetired { id: rid(id), reason: None }),
        Op::Expect(surface) => {
            Body::ConceptExpected(ConceptExpected { surface: SURFACES[surface].into(), kind: None, note: None })
        }
        Op::Drop(surface) => Body::ConceptDropped(ConceptDropped { surface: SURFACES[surface].into() }),
        Op::Languages { source, target } => Body::LanguagesSet(LanguagesSet {
            source: source.map(|language| LANGUAGES[language].into()),
            target: target.map(|language| LANGUAGES[language].into()),
        }),
        Op::Template(template) => {
            Body::ProxyTemplateSet(ProxyTemplateSet { template: template.map(|n| TEMPLATES[n].into()) })
        }
        Op::Cascade { depth, quiet, direct_only } => Body::CascadeSet(CascadeSet {
            depth,
            quiet: quiet.into_iter().map(term_id).collect(),
            direct_only: direct_only.into_iter().map(term_id).collect(),
        }),
        Op::Examples { always, never } => Body::ExamplesSet(ExamplesSet {
            always: always.into_iter().map(term_id).collect(),
            never: never.into_iter().map(term_id).collect(),
        }),
    }
}

/// Runs batches of ops through decide; refused batches are skipped, so what is left is
/// a valid history. The first batch sets a config so rollbacks have one to restore.
fn simulate(batches: &[Vec<Op>]) -> Sim {
    let mut sim = Sim::default();
    sim.ok(vec![body(&Op::Config { budget: 800, render_format: 1 })]);
    for batch in batches {
        let _ = sim.submit(batch.iter().map(body).collect());
    }
    sim
}

fn batches() -> impl Strategy<Value = Vec<Vec<Op>>> {
    prop::collection::vec(prop::collection::vec(op(), 1..4), 1..30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn rebuild_equals_incremental(batches in batches()) {
        let sim = simulate(&batches);
        let rebuilt = State::fold(&sim.events);
        prop_assert_eq!(&rebuilt, &sim.state);
        prop_assert_eq!(rebuilt.snapshot_id(), sim.state.snapshot_id());
        prop_assert_eq!(rebuilt.snapshot_bytes(), sim.state.snapshot_bytes());
        for revision in 0..=sim.state.revision().0 {
            let prefix = State::fold(&sim.events[..revision as usize]);
            prop_assert_eq!(&prefix, sim.at(revision));
        }
    }

    #[test]
    fn the_tracked_snapshot_id_is_the_snapshot_id_after_every_event(batches in batches()) {
        let sim = simulate(&batches);
        let mut state = State::new();
        let mut tracker = SnapshotTracker::new();
        for event in &sim.events {
            state.apply(event);
            tracker.touch(&state, projections::Touched::of(&event.content.body));
            prop_assert_eq!(tracker.id(&state), state.snapshot_id(), "after event {}", event.seq);
        }
    }

    #[test]
    fn a_tracker_touched_once_a_batch_or_built_from_the_state_gives_the_snapshot_id(batches in batches()) {
        // What a book does per write: the touches of a whole batch taken in against
        // the state after it; and what it does when it first needs a tracker.
        let sim = simulate(&batches);
        let mut tracker = SnapshotTracker::new();
        for pair in sim.boundaries.windows(2) {
            let (from, to) = (pair[0], pair[1]);
            let state = sim.at(to);
            for event in &sim.events[from as usize..to as usize] {
                tracker.touch(state, projections::Touched::of(&event.content.body));
            }
            prop_assert_eq!(tracker.id(state), state.snapshot_id(), "after the batch ending at {}", to);
            let mut built = SnapshotTracker::of(state);
            prop_assert_eq!(built.id(state), state.snapshot_id(), "built at {}", to);
            prop_assert_eq!(&built, &tracker, "built at {} and touched up to it", to);
        }
    }

    #[test]
    fn rollback_lands_on_the_old_snapshot_id(batches in batches(), pick in any::<prop::sample::Index>()) {
        let mut sim = simulate(&batches);
        let head = sim.state.revision().0;
        // Batch boundaries from revision 1 on (it holds the first config).
        let to = *pick.get(&sim.boundaries[1..]);
        let target = sim.at(to).clone();
        let plan = plan_rollback(&sim.state, &target, Some("test".into())).unwrap();
        let decision = sim.submit(plan).unwrap_or_else(|rejection| panic!("rollback refused: {rejection}"));
        prop_assert!(decision.events.last().is_some_and(|event| matches!(event.body, Body::RollbackMarker(_))));
        prop_assert_eq!(sim.state.snapshot_id(), target.snapshot_id());
        prop_assert_eq!(
            sim.state.proxy_template().map(|(template, _)| template),
            target.proxy_template().map(|(template, _)| template)
        );
        // The languages are no part of a snapshot, and come back all the same.
        prop_assert_eq!(sim.state.languages_declared(), target.languages_declared());
        prop_assert_eq!(
            (sim.state.source_lang(), sim.state.target_lang()),
            (target.source_lang(), target.target_lang())
        );
        let (records, config) = diff(&target, &sim.state);
        prop_assert!(records.is_empty(), "diff after rollback: {:?}", records);
        prop_assert!(config.is_empty());
        // History is untouched: everything before the rollback is still there.
        prop_assert!(sim.state.revision().0 > head);
    }

    #[test]
    fn snapshot_ids_ignore_provenance(batches in batches()) {
        let sim = simulate(&batches);
        let mut other = Sim { actor: "import:elsewhere".into(), ..Sim::default() };
        other.ok(vec![body(&Op::Config { budget: 800, render_format: 1 })]);
        // Re-put the final active content in one batch, by another actor.
        let mut bodies = Vec::new();
        if let Some(config) = sim.state.config() {
            bodies.push(Body::ConfigSet(config.clone()));
        }
        if let Some((governance, _)) = sim.state.governance_set() {
            bodies.push(Body::GovernanceSet(governance.clone()));
        }
        if let Some((template, _)) = sim.state.proxy_template() {
            bodies.push(Body::ProxyTemplateSet(ProxyTemplateSet { template: Some(template.to_owned()) }));
        }
        // After the terms it names (pushed at the end).
        let cascade = sim.state.cascade().map(|(set, _)| Body::CascadeSet(set.clone()));
        // Retired terms too (and retire them again), so `supersedes` references resolve.
        // A retired term's owner and releases are in no snapshot, and may name a party
        // the book has since stopped declaring, which a put would refuse: leave them out.
        for term in sim.state.terms().values() {
            let mut put = term.put.clone();
            if term.retired {
                (put.owner, put.owner_role, put.release_to, put.note_release_to) = (None, None, None, None);
            }
            bodies.push(Body::TermPut(put));
        }
        for term in sim.state.terms().values().filter(|term| term.retired) {
            bodies.push(Body::TermRetired(TermRetired { id: term.put.id, reason: None }));
        }
        for term in sim.state.terms().values().filter(|term| !term.retired) {
            bodies.extend(term.aliases.values().cloned().map(Body::AliasAdded));
            if let Some((verdict, reason)) = &term.verdict {
                bodies.push(Body::DispositionSet(DispositionSet { target: term.put.id, verdict: *verdict, reason: reason.clone(), note: None }));
            }
        }
        for summary in sim.state.summaries().values().filter(|s| !s.retired) {
            bodies.push(Body::SummaryPut(summary.put.clone()));
        }
        for rule in sim.state.rules().values().filter(|r| !r.retired) {
            bodies.push(Body::RulePut(rule.put.clone()));
            if let Some((verdict, reason)) = &rule.verdict {
                bodies.push(Body::DispositionSet(DispositionSet { target: rule.put.id, verdict: *verdict, reason: reason.clone(), note: None }));
            }
        }
        bodies.extend(cascade);
        other.ok(bodies);
        prop_assert_eq!(other.state.snapshot_id(), sim.state.snapshot_id());
    }
}

/// A rendering of term `number` by variant: the first two are as long as each other,
/// the others longer.
fn long_rendering(number: u32, variant: usize) -> String {
    match variant {
        0 => format!("Термин номер {number} из большого глоссария, вариант А"),
        1 => format!("Термин номер {number} из большого глоссария, вариант Б"),
        2 => format!("Термин {number}"),
        _ => format!("Термин номер {number} из большого глоссария, вариант с длинным хвостом"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// The tracker's ID on a book whose snapshot document spans many of the blocks
    /// the tracker hashes apart and several pages of encodings: writes of one term
    /// at the front, in the middle or past the end of the terms, of the same length
    /// or not, retirements; each gives the ID hashed from the whole document.
    #[test]
    fn a_large_book_s_tracked_id_is_its_snapshot_id(
        edits in prop::collection::vec((1u32..1_600, 0usize..4, prop::bool::weighted(0.15)), 1..20),
    ) {
        let mut sim = Sim::default();
        sim.ok((1..=1_200).map(|n| Body::TermPut(put(n, format!("词{n:05}"), long_rendering(n, 0)))).collect());
        let mut tracker = SnapshotTracker::of(&sim.state);
        prop_assert!(sim.state.snapshot_bytes().len() > 100_000, "the document spans many blocks");
        prop_assert_eq!(tracker.id(&sim.state), sim.state.snapshot_id());
        for (number, variant, retire) in edits {
            let id = RecordId::new(RecordKind::Term, number).unwrap();
            let body = if retire && sim.state.is_active(id) {
                Body::TermRetired(TermRetired { id, reason: None })
            } else {
                Body::TermPut(put(number, format!("词{number:05}"), long_rendering(number, variant)))
            };
            sim.ok(vec![body.clone()]);
            tracker.touch(&sim.state, projections::Touched::of(&body));
            prop_assert_eq!(tracker.id(&sim.state), sim.state.snapshot_id(), "after {:?}", body);
        }
    }
}

#[test]
fn different_content_gives_different_ids() {
    let mut a = Sim::default();
    a.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let mut b = Sim::default();
    b.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Ян"))]);
    assert_ne!(a.state.snapshot_id(), b.state.snapshot_id());
    // Retiring and re-putting lands on the first ID again.
    let first = a.state.snapshot_id();
    a.ok(vec![Body::TermRetired(TermRetired { id: test_support::records::id("T-1"), reason: None })]);
    assert_ne!(a.state.snapshot_id(), first);
    a.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    assert_eq!(a.state.snapshot_id(), first);
}

/// A term for the same-rendering property: source, rendering, window and what it
/// supersedes, each by number.
fn rendering_term(number: u32, (src, dst, since, length, supersedes): (usize, usize, u32, Option<u32>, u32)) -> Body {
    const SOURCES: &[&str] = &["萧炎", "小炎", "肖炎", "蕭炎", "炎帝", "药老", "藥老", "云山", "纳兰嫣然", "沈照"];
    const RENDERINGS: &[&str] = &["Сяо Янь", "сяо янь", "Яо Лао", "Алёна", "Алена"];
    let id = RecordId::new(RecordKind::Term, number).unwrap();
    // A sense of its own keeps two terms of one source apart for UNIQUE; the warning
    // does not look at senses.
    Body::TermPut(TermPut {
        sense: Some(format!("sense {number}")),
        window: Window { since, until: length.map(|length| since + length) },
        supersedes: RecordId::new(RecordKind::Term, supersedes).filter(|old| *old != id),
        ..TermPut::new(id, SOURCES[src % SOURCES.len()], RENDERINGS[dst % RENDERINGS.len()])
    })
}

proptest! {
    /// The same-rendering warning names exactly the terms the pairwise rule names: a
    /// term is in its rendering's warning when a term of another folded source shares
    /// the rendering (lowercased, ё as е) in an overlapping window, one of the two
    /// written by the batch (a put, or the term a put supersedes). The warning finds
    /// them by a sweep; the pairs are the oracle.
    #[test]
    fn the_same_rendering_warning_names_the_terms_of_every_pair(
        book in prop::collection::vec((0usize..10, 0usize..5, 1u32..8, prop::option::of(0u32..5), 0u32..8), 0..12),
        batch in prop::collection::vec((1u32..16, (0usize..10, 0usize..5, 1u32..8, prop::option::of(0u32..5), 0u32..8)), 1..8),
    ) {
        let mut sim = Sim::default();
        let book: Vec<Body> = book.into_iter().enumerate().map(|(index, term)| rendering_term(index as u32 + 1, term)).collect();
        if !book.is_empty() && sim.submit(book).is_err() {
            return Ok(());
        }
        let bodies: Vec<Body> = batch.into_iter().map(|(number, term)| rendering_term(number, term)).collect();
        let Ok(decision) = sim.submit(bodies.clone()) else { return Ok(()) };
        let mut touched = std::collections::BTreeSet::new();
        for (index, body) in bodies.iter().enumerate() {
            if let (false, Body::TermPut(put)) = (decision.dropped.contains(&index), body) {
                touched.insert(put.id);
                touched.extend(put.supersedes);
            }
        }
        let key = |dst: &str| dst.to_lowercase().replace('ё', "е");
        let active: Vec<(RecordId, String, String, Window)> = sim
            .state
            .active_terms(None)
            .into_iter()
            .filter_map(|active| Some((active.id, support::fold(&active.term.put.src), key(&active.term.put.dst), active.window?)))
            .collect();
        let mut expected: std::collections::BTreeMap<String, Vec<RecordId>> = std::collections::BTreeMap::new();
        for (id, src, dst, window) in &active {
            let paired = active.iter().any(|(other, other_src, other_dst, other_window)| {
                other_dst == dst && other_src != src && other_window.overlaps(window)
                    && (touched.contains(id) || touched.contains(other))
            });
            if paired {
                expected.entry(dst.clone()).or_default().push(*id);
            }
        }
        let found: std::collections::BTreeMap<String, Vec<RecordId>> = decision
            .warnings
            .iter()
            .map(|warning| {
                let projections::Warning::SameDst { dst, terms, n_terms } = warning;
                assert_eq!(*n_terms, terms.len(), "fewer terms than the listing cap");
                (key(dst), terms.iter().map(|(id, _, _)| *id).collect())
            })
            .collect();
        prop_assert_eq!(found.len(), decision.warnings.len(), "one warning per rendering");
        prop_assert_eq!(found, expected);
    }
}

proptest! {
    /// UNIQUE names the pair the pairwise rule finds first: surfaces grouped by
    /// (folded surface, sense), in the order of their terms' ids, each term's source
    /// before its aliases (by surface); the first surface with a surface of another
    /// term overlapping it after it, and the first such. The check finds it by a
    /// sweep; the pairs are the oracle.
    #[test]
    fn unique_names_the_first_pair_the_pairwise_rule_finds(
        terms in prop::collection::vec((0usize..4, 1u32..6, prop::option::of(0u32..4)), 1..5),
        aliases in prop::collection::vec((0usize..5, 0usize..8, prop::option::of((1u32..6, prop::option::of(0u32..3)))), 0..14),
    ) {
        // Sources and alias surfaces from a small alphabet that folds in twos (蕭/萧,
        // 藥/药, case), so groups hold several surfaces of one term and of others.
        const SURFACES: &[&str] = &["萧炎", "蕭炎", "药老", "藥老", "Lin", "lin", "LIN", "炎子"];
        let window = |since: u32, length: Option<u32>| Window { since, until: length.map(|length| since + length) };
        let mut bodies: Vec<Body> = terms
            .iter()
            .enumerate()
            .map(|(index, (src, since, length))| {
                let id = RecordId::new(RecordKind::Term, index as u32 + 1).unwrap();
                Body::TermPut(TermPut { window: window(*since, *length), ..TermPut::new(id, SURFACES[*src * 2], "Имя") })
            })
            .collect();
        let mut named = std::collections::BTreeSet::new();
        for (term_idx, surface, own) in &aliases {
            let term_number = (*term_idx % terms.len()) as u32 + 1;
            // One write of an alias per batch (a second one is refused as a duplicate).
            if !named.insert((term_number, *surface)) {
                continue;
            }
            bodies.push(Body::AliasAdded(AliasAdded {
                id: RecordId::new(RecordKind::Term, term_number).unwrap(),
                surface: SURFACES[*surface].into(),
                kind: AliasKind::default(),
                window: own.map(|(since, length)| window(since, length)),
                release_to: None,
            }));
        }
        // The state the batch leads to, without the rule: each event applied.
        let mut state = State::new();
        for body in &bodies {
            let content = NewEvent { recorded_at_ms: 1, actor: "human:test".into(), source: "sim".into(), body: body.clone() };
            let event = Event { seq: state.revision().next(), prev: Hash32::GENESIS, hash: Hash32::GENESIS, schema: record::SCHEMA_CURRENT, content };
            state.apply(&event);
        }
        let mut groups: std::collections::BTreeMap<String, Vec<(RecordId, String, Window)>> = std::collections::BTreeMap::new();
        for active in state.active_terms(None) {
            let Some(term_window) = active.window else { continue };
            groups.entry(support::fold(&active.term.put.src)).or_default().push((active.id, format!("src {:?}", active.term.put.src), term_window));
            for alias in active.term.aliases.values() {
                if let Some(alias_window) = State::alias_window(alias, active.window) {
                    groups.entry(support::fold(&alias.surface)).or_default().push((active.id, format!("alias {:?}", alias.surface), alias_window));
                }
            }
        }
        let mut expected = None;
        'groups: for (key, group) in &groups {
            for (a_idx, a) in group.iter().enumerate() {
                if let Some(b) = group[a_idx + 1..].iter().find(|b| a.0 != b.0 && a.2.overlaps(&b.2)) {
                    // Every term is written by the batch: the later one is named first.
                    expected = Some((key.clone(), b.clone(), a.clone()));
                    break 'groups;
                }
            }
        }
        let mut sim = Sim::default();
        match (sim.submit(bodies), expected) {
            (Ok(_), None) => {}
            (Err(rejection), Some((key, this, other))) => {
                let projections::Problem::Unique(conflict) = &rejection.problem else {
                    return Err(TestCaseError::fail(format!("not UNIQUE: {rejection}")));
                };
                prop_assert_eq!(&conflict.key, &key);
                prop_assert_eq!(&conflict.this, &this);
                prop_assert_eq!(&conflict.other, &other);
            }
            (decided, expected) => {
                return Err(TestCaseError::fail(format!("decided {:?}, the pairs say {expected:?}", decided.map(|d| d.events.len()))));
            }
        }
    }
}

/// One write to a crowded book of few keys, for the kept index: puts that move,
/// drop and take up supersessions, retirements that widen what they cut, aliases
/// with and without windows of their own.
#[derive(Clone, Debug)]
enum Crowded {
    Put { id: u32, src: usize, dst: usize, since: u32, until: Option<u32>, supersedes: Option<u32> },
    Retire(u32),
    AliasAdd { id: u32, surface: usize, since: Option<u32> },
    AliasRemove { id: u32, surface: usize },
}

fn crowded() -> impl Strategy<Value = Crowded> {
    prop_oneof![
        4 => (1u32..6, 0usize..4, 0usize..3, 1u32..8, prop::option::of(0u32..4), prop::option::of(1u32..6))
            .prop_map(|(id, src, dst, since, length, supersedes)| Crowded::Put { id, src, dst, since, until: length.map(|length| since + length), supersedes }),
        2 => (1u32..6).prop_map(Crowded::Retire),
        2 => (1u32..6, 0usize..4, prop::option::of(1u32..8)).prop_map(|(id, surface, since)| Crowded::AliasAdd { id, surface, since }),
        1 => (1u32..6, 0usize..4).prop_map(|(id, surface)| Crowded::AliasRemove { id, surface }),
    ]
}

fn crowded_body(op: &Crowded) -> Body {
    // Two pairs that fold alike (蕭/萧, case), two renderings that key alike.
    const KEYS: &[&str] = &["萧炎", "蕭炎", "Lin", "lin"];
    const RENDERINGS: &[&str] = &["Сяо Янь", "сяо янь", "Лин"];
    match op.clone() {
        Crowded::Put { id, src, dst, since, until, supersedes } => Body::TermPut(TermPut {
            window: Window { since, until },
            supersedes: supersedes.filter(|old| *old != id).map(term_id),
            ..put(&format!("T-{id}"), KEYS[src], RENDERINGS[dst])
        }),
        Crowded::Retire(id) => Body::TermRetired(TermRetired { id: term_id(id), reason: None }),
        Crowded::AliasAdd { id, surface, since } => Body::AliasAdded(AliasAdded {
            id: term_id(id),
            surface: KEYS[surface].into(),
            kind: AliasKind::Variant,
            window: since.map(|since| Window { since, until: None }),
            release_to: None,
        }),
        Crowded::AliasRemove { id, surface } => {
            Body::AliasRemoved(AliasRemoved { id: term_id(id), surface: KEYS[surface].into() })
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Deciding with the head's kept index answers as deciding over the whole book
    /// (the same events, warnings and refusals, UNIQUE's pair included), and the kept
    /// index is, after every batch, the index built anew from the state: `Sim`
    /// asserts both at every submit, on a book crowded enough that most batches
    /// collide.
    #[test]
    fn the_kept_index_decides_as_the_whole_book(batches in prop::collection::vec(prop::collection::vec(crowded(), 1..4), 1..40)) {
        let mut sim = Sim::default();
        for batch in &batches {
            let _ = sim.submit(batch.iter().map(crowded_body).collect());
        }
        prop_assert!(sim.index.is_some(), "no config was set, so the index is kept");
    }
}

/// A put that stops superseding a term widens that term's window again; the batch
/// names only the put, yet the widened window's conflict is found.
#[test]
fn a_supersession_moved_away_is_checked_with_the_index() {
    let mut sim = Sim::default();
    sim.ok(vec![
        Body::TermPut(TermPut { window: Window { since: 1, until: None }, ..put("T-1", "萧炎", "Сяо Янь") }),
        Body::TermPut(TermPut {
            window: Window { since: 5, until: None },
            supersedes: Some(term_id(1)),
            ..put("T-2", "药老", "Яо Лао")
        }),
        Body::TermPut(TermPut { window: Window { since: 6, until: None }, ..put("T-3", "蕭炎", "Сяо Янь") }),
    ]);
    assert!(sim.index.is_some(), "the book keeps its index");
    let moved = sim.submit(vec![Body::TermPut(TermPut {
        window: Window { since: 5, until: None },
        ..put("T-2", "药老", "Яо Лао")
    })]);
    let rejection = moved.expect_err("T-1 widens over T-3");
    let projections::Problem::Unique(conflict) = &rejection.problem else { panic!("not UNIQUE: {rejection}") };
    assert_eq!((conflict.this.0, conflict.other.0), (term_id(1), term_id(3)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A projection built in memory (what a book assembles with after a write) is the
    /// one its bytes load to: the same bytes as `freeze`, the same table, the same
    /// automaton, at every revision of a random history.
    #[test]
    fn a_projection_built_in_memory_is_the_one_its_bytes_load_to(batches in batches()) {
        let sim = simulate(&batches);
        let profile = test_support::profiles::zh_profile();
        for revision in 0..=sim.state.revision().0 {
            let state = sim.at(revision);
            let id = state.snapshot_id();
            let built = Frozen::build(state, id, profile).unwrap();
            let bytes = projections::frozen::freeze(state, profile).unwrap();
            prop_assert_eq!(&built.to_bytes(), &bytes, "at revision {}", revision);
            let loaded = Frozen::load(&bytes, profile, id).unwrap();
            prop_assert_eq!(built.to_table(), loaded.to_table());
            prop_assert_eq!(built.matcher().to_bytes(), loaded.matcher().to_bytes());
            prop_assert_eq!(built.snapshot(), loaded.snapshot());
        }
    }
}
