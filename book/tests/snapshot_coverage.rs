//! What the snapshot ID covers, against what assembly injects (docs/format.md,
//! "Snapshot ID"):
//!
//! * a field that can change an assembly is covered: changing it changes some
//!   assembly (with a witness book built for the change) and the snapshot ID;
//! * the covered fields no render format of this build injects (a term's sense,
//!   speech and note, an alias's kind, `min_key_chars`, the profile's name, and render
//!   format 2 instead of 1 in a book without rules, and the proxy template, which
//!   only the proxy's system message reads) change the snapshot ID but no assembly;
//! * what is not covered (provenance, time, verdict reasons, candidates, retired
//!   records, past versions, a chapter's source text) changes neither.

use book::assemble::{assemble, Assembly, Previous};
use ledger_model::*;
use projections::frozen::{freeze, Frozen};
use projections::{SnapshotId, State};
use proptest::prelude::*;
use test_support::profiles::zh_profile;
use test_support::records::{self, character, id, summary};

/// The term every mutation is about: T-5 萧炎, found in chunks as 萧炎 or 炎子.
fn base_term() -> TermPut {
    TermPut {
        gender: Some(Gender::Masculine), decl: vec!["Сяо Яня".into()], ..character("T-5", "萧炎", "Сяо Янь")
    }
}

/// `surface` as an alias of T-5.
fn alias(surface: &str, kind: AliasKind, window: Option<Window>) -> AliasAdded {
    AliasAdded { kind, window, ..records::alias("T-5", surface) }
}

fn config(assembly: AssemblyConfig, name: &str) -> ConfigSet {
    let table = Hash32(zh_profile().id().0);
    ConfigSet { assembly, profile: ProfileRef { name: name.into(), table: Some(table) } }
}

/// A book described by its parts; `bodies` lists its events.
#[derive(Clone, Debug)]
struct Spec {
    config: ConfigSet,
    term: TermPut,
    alias: AliasAdded,
    summaries: Vec<SummaryPut>,
    verdict: Option<(Verdict, String)>,
    /// Further terms (witnesses), put after the main one.
    others: Vec<TermPut>,
    /// The book's proxy template.
    template: Option<String>,
}

impl Spec {
    fn base() -> Spec {
        Spec {
            config: config(AssemblyConfig::default(), "zh"),
            term: base_term(),
            alias: alias("炎子", AliasKind::Nickname, None),
            summaries: vec![
                summary("S-1", Scope::Book, "Книга о лампаде."),
                summary("S-2", Scope::Chapter(3), "Глава три."),
            ],
            verdict: None,
            others: Vec::new(),
            template: None,
        }
    }

    fn bodies(&self) -> Vec<Body> {
        let mut bodies = vec![Body::ConfigSet(self.config.clone()), Body::TermPut(self.term.clone())];
        bodies.push(Body::AliasAdded(self.alias.clone()));
        bodies.extend(self.others.iter().cloned().map(Body::TermPut));
        bodies.extend(self.summaries.iter().cloned().map(Body::SummaryPut));
        if let Some((verdict, reason)) = &self.verdict {
            bodies.push(Body::DispositionSet(DispositionSet {
                target: id("T-5"),
                verdict: *verdict,
                reason: reason.clone(),
                note: None,
            }));
        }
        if let Some(template) = &self.template {
            bodies.push(Body::ProxyTemplateSet(ProxyTemplateSet { template: Some(template.clone()) }));
        }
        bodies
    }
}

/// Folds `bodies` as events with the given provenance.
fn state_of(bodies: &[Body], actor: &str, time: u64) -> State {
    let mut state = State::new();
    for body in bodies {
        let event = Event {
            seq: state.revision().next(),
            prev: Hash32::GENESIS,
            hash: Hash32::GENESIS,
            schema: ledger_model::record::SCHEMA_CURRENT,
            content: NewEvent {
                recorded_at_ms: time,
                actor: actor.into(),
                source: "coverage".into(),
                body: body.clone(),
            },
        };
        state.apply(&event);
    }
    state
}

/// A chunk to assemble: chapter, text, the previous receipt's recent hits.
type Probe = (u32, &'static str, Option<Vec<Vec<u32>>>);

/// The chunks every book is assembled with.
fn probes(chapters: &[u32]) -> Vec<Probe> {
    let mut probes = Vec::new();
    for &chapter in chapters.iter().chain(&[1, 3, 4, 5, 40]) {
        for text in ["萧炎来。", "炎子来。", "无"] {
            probes.push((chapter, text, None));
            probes.push((chapter, text, Some(vec![vec![5]; 64])));
        }
    }
    probes
}

fn assemblies(state: &State, chapters: &[u32]) -> Vec<Result<Assembly, String>> {
    let snapshot: SnapshotId = state.snapshot_id();
    let frozen = freeze(state, zh_profile()).and_then(|bytes| Frozen::load(&bytes, zh_profile(), snapshot)).unwrap();
    probes(chapters)
        .into_iter()
        .map(|(chapter, text, recent)| {
            let previous = recent.as_ref().map(|recent| Previous { chapter, recent });
            assemble(&frozen, chapter, text, previous).map_err(|error| error.to_string())
        })
        .collect()
}

fn cjk() -> impl Strategy<Value = String> {
    // U+4E00..U+4FFF holds none of the characters of the probe chunks.
    prop::collection::vec(prop::char::range('\u{4e00}', '\u{4fff}'), 2..4).prop_map(|c| c.into_iter().collect())
}

fn word() -> impl Strategy<Value = String> {
    "[а-я]{1,12}"
}

fn code() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,10}"
}

/// A change to a covered field that can change an assembly, with its witness.
fn injected_change() -> impl Strategy<Value = (String, Spec, Vec<u32>)> {
    let base = Spec::base;
    let term_change = |name: &'static str, change: fn(&mut TermPut, String)| {
        (Just(name), word()).prop_map(move |(name, value)| {
            let mut spec = base();
            change(&mut spec.term, value);
            (name.to_owned(), spec, Vec::new())
        })
    };
    prop_oneof![
        cjk().prop_map(move |src| {
            let mut spec = base();
            spec.term.src = src;
            ("src".to_owned(), spec, Vec::new())
        }),
        term_change("dst", |term, value| term.dst = format!("{value}!")),
        code().prop_map(move |kind| {
            let mut spec = base();
            spec.term.kind = Some(format!("{kind}x")).filter(|k| k != "character");
            ("kind".to_owned(), spec, Vec::new())
        }),
        prop_oneof![Just(None), Just(Some(Gender::Feminine)), Just(Some(Gender::Neuter)), Just(Some(Gender::Plural))]
            .prop_map(move |gender| {
                let mut spec = base();
                spec.term.gender = gender;
                ("gender".to_owned(), spec, Vec::new())
            }),
        prop::collection::vec(word(), 0..3).prop_map(move |decl| {
            let mut spec = base();
            spec.term.decl = decl.into_iter().map(|form| form + "у").collect();
            ("decl".to_owned(), spec, Vec::new())
        }),
        (2u32..50).prop_map(move |since| {
            let mut spec = base();
            spec.term.window = Window { since, until: None };
            ("window".to_owned(), spec, vec![since])
        }),
        prop_oneof![Just(Status::Auto), Just(Status::Draft)].prop_map(move |status| {
            let mut spec = base();
            spec.term.status = status;
            ("status".to_owned(), spec, Vec::new())
        }),
        Just(()).prop_map(move |()| {
            let mut spec = base();
            spec.term.constant = true;
            ("constant".to_owned(), spec, Vec::new())
        }),
        // A verdict matters where it overrides the status: accept on an auto term.
        prop_oneof![Just(Verdict::Reject), Just(Verdict::Verify), Just(Verdict::Accept)].prop_map(move |verdict| {
            let mut spec = base();
            spec.verdict = Some((verdict, "checked".into()));
            if verdict == Verdict::Accept {
                spec.term.status = Status::Auto;
            }
            ("verdict".to_owned(), spec, Vec::new())
        }),
        // Priority orders constant records: a witness with the new priority ties with
        // it and goes by id, so it must sit on the side the change moves T-5 to.
        (-1000i32..1000).prop_filter("changed", |p| *p != 0).prop_map(move |priority| {
            let mut spec = base();
            spec.term.priority = priority;
            spec.term.constant = true;
            let witness = if priority > 0 { "T-9" } else { "T-1" };
            spec.others.push(TermPut {
                id: id(witness),
                src: "药老".into(),
                dst: "Яо Лао".into(),
                priority,
                constant: true,
                ..base_term()
            });
            ("priority".to_owned(), spec, Vec::new())
        }),
        cjk().prop_map(move |surface| {
            let mut spec = base();
            spec.alias.surface = surface;
            ("alias surface".to_owned(), spec, Vec::new())
        }),
        (2u32..50).prop_map(move |since| {
            let mut spec = base();
            spec.alias.window = Some(Window { since, until: None });
            ("alias window".to_owned(), spec, vec![since])
        }),
        word().prop_map(move |text| {
            let mut spec = base();
            spec.summaries[0].text = format!("{text}.");
            ("summary text".to_owned(), spec, Vec::new())
        }),
        (5u32..50).prop_map(move |from| {
            let mut spec = base();
            spec.summaries[1].visible_from = Some(from);
            ("summary visible_from".to_owned(), spec, Vec::new())
        }),
        // A constant line costing one token more than the new budget fits only the old.
        (5u32..=132).prop_map(move |budget| {
            let mut spec = base();
            spec.config.assembly.token_budget = budget;
            spec.others.push(TermPut {
                id: id("T-9"),
                src: "药老".into(),
                // 2 + 1.2 + k tokens, rounded up, plus 1 for the newline: k + 5.
                dst: "名".repeat(budget as usize - 4),
                kind: None,
                gender: None,
                decl: Vec::new(),
                constant: true,
                ..base_term()
            });
            ("token_budget".to_owned(), spec, Vec::new())
        }),
        (0u32..=64).prop_filter("changed", |n| *n != 2).prop_map(move |sticky| {
            let mut spec = base();
            spec.config.assembly.sticky_chunks = sticky;
            ("sticky_chunks".to_owned(), spec, Vec::new())
        }),
        // Render formats 2 and 3 render a book without rules or examples as format 1
        // does (and a book with rules cannot be on format 1; examples are given to
        // assembly, not in the snapshot): the unknown formats after them differ.
        (4u16..10).prop_map(move |version| {
            let mut spec = base();
            spec.config.assembly.render_format = version;
            ("render_format".to_owned(), spec, Vec::new())
        }),
        (2u16..10).prop_map(move |version| {
            let mut spec = base();
            spec.config.assembly.token_estimator = version;
            ("token_estimator".to_owned(), spec, Vec::new())
        }),
    ]
}

/// A change to a covered field that no render format of this build injects.
fn inert_change() -> impl Strategy<Value = (String, Spec)> {
    let base = Spec::base;
    prop_oneof![
        code().prop_map(move |sense| {
            let mut spec = base();
            spec.term.sense = Some(sense);
            ("sense".to_owned(), spec)
        }),
        word().prop_map(move |speech| {
            let mut spec = base();
            spec.term.speech = Some(speech);
            ("speech".to_owned(), spec)
        }),
        word().prop_map(move |note| {
            let mut spec = base();
            spec.term.note = Some(note);
            ("note".to_owned(), spec)
        }),
        prop_oneof![Just(AliasKind::Variant), Just(AliasKind::Title), Just(AliasKind::Reading)].prop_map(move |kind| {
            let mut spec = base();
            spec.alias.kind = kind;
            ("alias kind".to_owned(), spec)
        }),
        (1u32..=16).prop_filter("changed", |n| *n != 2).prop_map(move |min| {
            let mut spec = base();
            spec.config.assembly.min_key_chars = min;
            ("min_key_chars".to_owned(), spec)
        }),
        code().prop_filter("changed", |name| name != "zh").prop_map(move |name| {
            let mut spec = base();
            spec.config.profile.name = name;
            ("profile name".to_owned(), spec)
        }),
        // Format 2 adds the rules block, format 3 the examples block; a book without
        // rules renders as in format 1, and no example is offered here.
        (2u16..=3).prop_map(move |version| {
            let mut spec = base();
            spec.config.assembly.render_format = version;
            (format!("render_format {version} without rules or examples"), spec)
        }),
        word().prop_map(move |word| {
            let mut spec = base();
            spec.template = Some(format!("{word}\n{{context}}"));
            ("proxy template".to_owned(), spec)
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_covered_field_that_is_injected_changes_the_id_and_some_assembly(
        (field, changed, chapters) in injected_change(),
    ) {
        let mut base = Spec::base();
        // The witnesses are part of both books: only the field differs.
        base.others = changed.others.iter().map(|other| TermPut { priority: 0, ..other.clone() }).collect();
        if field == "verdict" {
            base.term.status = changed.term.status;
        }
        if field == "priority" {
            base.term.constant = true;
            base.others[0].priority = changed.term.priority;
        }
        let before = state_of(&base.bodies(), "human:a", 1);
        let after = state_of(&changed.bodies(), "human:a", 1);
        prop_assert_ne!(before.snapshot_id(), after.snapshot_id(), "{}", field);
        prop_assert_ne!(assemblies(&before, &chapters), assemblies(&after, &chapters), "{}", field);
    }

    #[test]
    fn a_covered_field_that_is_not_injected_changes_the_id_and_no_assembly((field, changed) in inert_change()) {
        let before = state_of(&Spec::base().bodies(), "human:a", 1);
        let after = state_of(&changed.bodies(), "human:a", 1);
        prop_assert_ne!(before.snapshot_id(), after.snapshot_id(), "{}", field);
        prop_assert_eq!(assemblies(&before, &[]), assemblies(&after, &[]), "{}", field);
    }

    #[test]
    fn what_is_not_covered_changes_neither(
        actor in "(human|llm|import):[a-z]{1,8}", time in any::<u64>(), reason in code(), dst in word(),
        chapter in 1u32..200, text in any::<[u8; 32]>(), bytes in 1u64..1_000_000,
    ) {
        let mut base = Spec::base();
        base.verdict = Some((Verdict::Verify, "first_reason".into()));
        let before = state_of(&base.bodies(), "human:a", 1);
        // Other provenance and time, another verdict reason, a candidate, a retired
        // term and a past version of T-5.
        let mut changed = base.clone();
        changed.verdict = Some((Verdict::Verify, reason));
        let mut bodies = vec![Body::TermPut(TermPut { dst: format!("{dst}?"), ..base_term() })];
        bodies.extend(changed.bodies());
        bodies.push(Body::CandidateProposed(CandidateProposed {
            id: id("C-1"),
            surface: "沈照".into(),
            suggested_dst: Some(dst.clone()),
            evidence: None,
            origin: Origin::Extractor,
            trust: Trust::Normal,
            score: None,
            related: None,
            duplicate: None,
        }));
        bodies.push(Body::TermPut(TermPut { id: id("T-7"), src: "沈照".into(), dst, ..base_term() }));
        bodies.push(Body::TermRetired(TermRetired { id: id("T-7"), reason: None }));
        // The book's source text: a chapter set, another set and removed.
        bodies.push(Body::SourceSet(SourceSet { chapter, title: Some(format!("第{chapter}章")), text: Some(Hash32(text)), bytes }));
        bodies.push(Body::SourceSet(SourceSet { chapter: chapter + 1, title: None, text: Some(Hash32(text)), bytes }));
        bodies.push(Body::SourceSet(SourceSet { chapter: chapter + 1, ..SourceSet::default() }));
        let after = state_of(&bodies, &actor, time);
        prop_assert_ne!(before.revision(), after.revision());
        prop_assert_eq!(before.snapshot_id(), after.snapshot_id());
        prop_assert_eq!(assemblies(&before, &[]), assemblies(&after, &[]));
    }
}
