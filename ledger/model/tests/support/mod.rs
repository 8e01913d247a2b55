//! Example events and proptest strategies shared by the model's integration tests.
#![allow(dead_code)]

use ledger_model::*;
use proptest::prelude::*;

pub fn id(text: &str) -> RecordId {
    text.parse().unwrap()
}

/// One example of every body kind of schema 1, named, with every field schema 2 added
/// absent: the schema-1 golden fixtures pin their schema-1 bytes.
pub fn schema1_examples() -> Vec<(&'static str, NewEvent)> {
    let event = |actor: &str, source: &str, body: Body| NewEvent {
        recorded_at_ms: 1_764_000_000_000,
        actor: actor.to_owned(),
        source: source.to_owned(),
        body,
    };
    vec![
        (
            "term_put",
            event(
                "human:anna",
                "ch1#p3",
                Body::TermPut(TermPut {
                    id: id("T-412"),
                    src: "萧炎".into(),
                    sense: Some("person".into()),
                    dst: "Сяо Янь".into(),
                    kind: Some("character".into()),
                    gender: Some(Gender::Masculine),
                    decl: vec!["Сяо Яня".into(), "Сяо Яню".into()],
                    speech: Some("дерзко, коротко".into()),
                    note: Some("главный герой".into()),
                    window: Window { since: 1, until: Some(120) },
                    status: Status::Approved,
                    priority: -3,
                    constant: true,
                    secondary: Some(SecondaryKeys {
                        logic: KeyLogic::NotAll,
                        keys: vec!["斗气".into(), "药老".into()],
                    }),
                    supersedes: Some(id("T-7")),
                    owner: None,
                    owner_role: None,
                    release_to: None,
                    note_release_to: None,
                }),
            ),
        ),
        (
            "term_retired",
            event(
                "human:anna",
                "review-12",
                Body::TermRetired(TermRetired { id: id("T-412"), reason: Some("дубль".into()) }),
            ),
        ),
        (
            "alias_added",
            event(
                "import:galtransl",
                "glossary.tsv:14",
                Body::AliasAdded(AliasAdded {
                    id: id("T-412"),
                    surface: "蕭炎".into(),
                    kind: AliasKind::Variant,
                    window: Some(Window { since: 3, until: None }),
                    release_to: None,
                }),
            ),
        ),
        (
            "alias_removed",
            event("human:boris", "cli", Body::AliasRemoved(AliasRemoved { id: id("T-412"), surface: "炎子".into() })),
        ),
        (
            "summary_put",
            event(
                "llm:summarizer",
                "ch4",
                Body::SummaryPut(SummaryPut {
                    id: id("S-12"),
                    scope: Scope::Arc { from: 1, to: 4 },
                    text: "Сяо Янь теряет силу.\nСтарик в кольце просыпается.".into(),
                    visible_from: Some(5),
                    owner: None,
                    owner_role: None,
                    release_to: None,
                }),
            ),
        ),
        (
            "summary_retired",
            event("human:anna", "cli", Body::SummaryRetired(SummaryRetired { id: id("S-12"), reason: None })),
        ),
        (
            "candidate_proposed",
            event(
                "tool:embed",
                "ch9#p1",
                Body::CandidateProposed(CandidateProposed {
                    id: id("C-77"),
                    surface: "炎帝".into(),
                    suggested_dst: Some("Император Пламени".into()),
                    evidence: Some("cosine 0.82 to T-412".into()),
                    origin: Origin::Embedding,
                    trust: Trust::Low,
                    score: None,
                    related: None,
                    duplicate: None,
                }),
            ),
        ),
        (
            "disposition_set",
            event(
                "human:anna",
                "ticket-31",
                Body::DispositionSet(DispositionSet {
                    target: id("C-77"),
                    verdict: Verdict::Reject,
                    reason: "spoiler".into(),
                    note: None,
                }),
            ),
        ),
        (
            "config_set",
            event(
                "system:init",
                "init",
                Body::ConfigSet(ConfigSet {
                    assembly: AssemblyConfig::default(),
                    profile: ProfileRef { name: "zh".into(), table: Some(Hash32([7; 32])) },
                }),
            ),
        ),
        (
            "rollback_marker",
            event(
                "human:anna",
                "cli",
                Body::RollbackMarker(RollbackMarker {
                    to: Seq(1840), reason: Some("неудачный импорт".into())
                }),
            ),
        ),
    ]
}

/// One example of every body kind of schema 2, named: the schema-1 examples with
/// the governance fields set, then the kinds schema 2 added. The golden fixtures in
/// `tests/golden/schema-2/` pin their bytes.
pub fn examples() -> Vec<(&'static str, NewEvent)> {
    let mut examples = schema1_examples();
    for (_, event) in &mut examples {
        match &mut event.body {
            Body::TermPut(put) => {
                put.owner = Some("human:names-editor".into());
                put.owner_role = Some("редактор имён".into());
                put.release_to = Some(vec!["tool:pipeline".into(), "human:editors".into()]);
                put.note_release_to = Some(vec!["human:editors".into()]);
            }
            Body::AliasAdded(alias) => alias.release_to = Some(vec!["*".into()]),
            Body::SummaryPut(put) => {
                put.owner = Some("human:editors".into());
                put.release_to = Some(vec![]);
            }
            Body::CandidateProposed(candidate) => {
                candidate.score = Some(873_100);
                candidate.related = Some(id("T-412"));
                candidate.duplicate = Some(id("T-7"));
            }
            _ => {}
        }
    }
    let event = |actor: &str, source: &str, body: Body| NewEvent {
        recorded_at_ms: 1_764_000_000_000,
        actor: actor.to_owned(),
        source: source.to_owned(),
        body,
    };
    examples.extend([
        (
            "rule_put",
            event(
                "human:anna",
                "style-guide#3",
                Body::RulePut(RulePut {
                    id: id("R-3"),
                    text: "К 师父 обращаются на «вы».".into(),
                    applies_to: vec![
                        Selector::Dialogue,
                        Selector::Kind("character".into()),
                        Selector::Record(id("T-412")),
                    ],
                    does_not_apply_to: Some(vec![Selector::Chapters(Window { since: 200, until: Some(210) })]),
                    window: Window { since: 2, until: None },
                    status: Status::Approved,
                    priority: 5,
                    owner: Some("human:editors".into()),
                    owner_role: Some("style editor".into()),
                    release_to: Some(vec!["*".into()]),
                }),
            ),
        ),
        (
            "rule_retired",
            event(
                "human:anna",
                "cli",
                Body::RuleRetired(RuleRetired { id: id("R-3"), reason: Some("устарело".into()) }),
            ),
        ),
        (
            "governance_set",
            event(
                "human:anna",
                "governance.jsonl:1",
                Body::GovernanceSet(GovernanceSet {
                    conflict_policy: ConflictPolicy::PreferSpecific,
                    parties: vec!["human:editors".into(), "human:names-editor".into(), "tool:pipeline".into()],
                    defaults: vec![
                        RecordDefaults {
                            records: "term:character".into(),
                            owner: Some("human:names-editor".into()),
                            owner_role: Some("names editor".into()),
                            release_to: None,
                        },
                        RecordDefaults {
                            records: "*".into(),
                            owner: Some("human:editors".into()),
                            owner_role: None,
                            release_to: Some(vec!["*".into()]),
                        },
                    ],
                }),
            ),
        ),
        (
            "concept_expected",
            event(
                "import:cast-list",
                "cast.txt:4",
                Body::ConceptExpected(ConceptExpected {
                    surface: "林晚".into(),
                    kind: Some("character".into()),
                    note: Some("из списка издателя".into()),
                }),
            ),
        ),
        (
            "concept_dropped",
            event("human:anna", "cli", Body::ConceptDropped(ConceptDropped { surface: "林晚".into() })),
        ),
        (
            "embedding_model_set",
            event(
                "human:anna",
                "cli",
                Body::EmbeddingModelSet(EmbeddingModelSet {
                    name: "multilingual-e5-small".into(),
                    model_blake3: Hash32([0xab; 32]),
                    tokenizer_blake3: Some(Hash32([0xcd; 32])),
                    dim: 384,
                    dtype: VectorDtype::F32,
                    pooling: EmbeddingPooling::Mean,
                    normalized: true,
                    runtime_version: "1.31.1".into(),
                    output: Some("last_hidden_state".into()),
                    suggest_min_score: 800_000,
                    dedupe_min_score: 920_000,
                    operator_libraries_blake3: vec![Hash32([0xef; 32])],
                }),
            ),
        ),
        (
            "languages_set",
            event(
                "human:anna",
                "cli",
                Body::LanguagesSet(LanguagesSet { source: Some("en".into()), target: Some("es-419".into()) }),
            ),
        ),
        (
            "source_set",
            event(
                "human:anna",
                "cli",
                Body::SourceSet(SourceSet {
                    chapter: 12,
                    title: Some("第十二章 风起".into()),
                    text: Some(source_text_id("萧炎站在山门前。\n".as_bytes())),
                    bytes: 25,
                }),
            ),
        ),
        (
            "proxy_template_set",
            event(
                "human:anna",
                "cli",
                Body::ProxyTemplateSet(ProxyTemplateSet {
                    template: Some("Глоссарий книги, переводи по нему:\n\n{context}".into()),
                }),
            ),
        ),
        (
            "model_prompt_set",
            event(
                "human:anna",
                "cli",
                Body::ModelPromptSet(ModelPromptSet {
                    job: "extract".into(),
                    text: Some("List the proper names of this {language} text as JSON.".into()),
                }),
            ),
        ),
        (
            "model_policy_set",
            event(
                "human:anna",
                "cli",
                Body::ModelPolicySet(ModelPolicySet { party: "llm:judge".into(), decides: vec!["gender".into()] }),
            ),
        ),
        (
            "cascade_set",
            event(
                "human:anna",
                "cli",
                Body::CascadeSet(CascadeSet {
                    depth: 2,
                    quiet: vec!["T-3".parse().unwrap()],
                    direct_only: vec!["T-1".parse().unwrap(), "T-7".parse().unwrap()],
                }),
            ),
        ),
        (
            "examples_set",
            event(
                "human:anna",
                "cli",
                Body::ExamplesSet(ExamplesSet {
                    always: vec!["T-2".parse().unwrap()],
                    never: vec!["T-5".parse().unwrap(), "T-9".parse().unwrap()],
                }),
            ),
        ),
    ]);
    examples
}

fn text(max_chars: usize) -> impl Strategy<Value = String> {
    // Mixed scripts, including characters of every UTF-8 length.
    prop::collection::vec(
        prop_oneof![
            prop::char::range('a', 'z'),
            prop::char::range('а', 'я'),
            prop::char::range('\u{4e00}', '\u{4fff}'),
            prop::char::range('\u{3041}', '\u{30ff}'),
            Just('😀'),
            Just(' '),
        ],
        1..=max_chars,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn record_id(kind: RecordKind) -> impl Strategy<Value = RecordId> {
    (1u32..=RECORD_NUMBER_MAX_FOR_TESTS).prop_map(move |number| RecordId::new(kind, number).unwrap())
}

const RECORD_NUMBER_MAX_FOR_TESTS: u32 = ledger_model::ids::RECORD_NUMBER_MAX;

fn any_kind() -> impl Strategy<Value = RecordKind> {
    prop_oneof![Just(RecordKind::Term), Just(RecordKind::Summary), Just(RecordKind::Candidate), Just(RecordKind::Rule)]
}

fn window() -> impl Strategy<Value = Window> {
    (any::<u32>(), any::<Option<u32>>()).prop_map(|(since, until)| Window { since, until })
}

fn term_put() -> impl Strategy<Value = TermPut> {
    (
        (record_id(RecordKind::Term), text(8), prop::option::of(text(4)), text(16), prop::option::of(text(6))),
        (
            prop::option::of(prop_oneof![
                Just(Gender::Masculine),
                Just(Gender::Feminine),
                Just(Gender::Neuter),
                Just(Gender::Plural)
            ]),
            prop::collection::vec(text(10), 0..4),
            prop::option::of(text(20)),
            prop::option::of(text(20)),
            window(),
        ),
        (
            prop_oneof![Just(Status::Approved), Just(Status::Auto), Just(Status::Draft)],
            any::<i32>(),
            any::<bool>(),
            prop::option::of(
                (
                    prop_oneof![
                        Just(KeyLogic::AndAny),
                        Just(KeyLogic::AndAll),
                        Just(KeyLogic::NotAny),
                        Just(KeyLogic::NotAll)
                    ],
                    prop::collection::vec(text(5), 0..3),
                )
                    .prop_map(|(logic, keys)| SecondaryKeys { logic, keys }),
            ),
            prop::option::of(record_id(RecordKind::Term)),
        ),
        (prop::option::of(text(8)), prop::option::of(text(8)), release(), release()),
    )
        .prop_map(
            |(
                (id, src, sense, dst, kind),
                (gender, decl, speech, note, window),
                (status, priority, constant, secondary, supersedes),
                (owner, owner_role, release_to, note_release_to),
            )| TermPut {
                id,
                src,
                sense,
                dst,
                kind,
                gender,
                decl,
                speech,
                note,
                window,
                status,
                priority,
                constant,
                secondary,
                supersedes,
                owner,
                owner_role,
                release_to,
                note_release_to,
            },
        )
}

fn release() -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::of(prop::collection::vec(text(6), 0..3))
}

fn selector() -> impl Strategy<Value = Selector> {
    prop_oneof![
        text(6).prop_map(Selector::Kind),
        record_id(RecordKind::Term).prop_map(Selector::Record),
        window().prop_map(Selector::Chapters),
        Just(Selector::Dialogue),
        Just(Selector::Narration),
    ]
}

fn rule_put() -> impl Strategy<Value = RulePut> {
    (
        (record_id(RecordKind::Rule), text(30), prop::collection::vec(selector(), 0..3)),
        (prop::option::of(prop::collection::vec(selector(), 0..3)), window(), any::<i32>()),
        (prop::option::of(text(8)), prop::option::of(text(8)), release()),
    )
        .prop_map(
            |((id, text, applies_to), (does_not_apply_to, window, priority), (owner, owner_role, release_to))| {
                RulePut {
                    id,
                    text,
                    applies_to,
                    does_not_apply_to,
                    window,
                    status: Status::Auto,
                    priority,
                    owner,
                    owner_role,
                    release_to,
                }
            },
        )
}

fn governance_set() -> impl Strategy<Value = GovernanceSet> {
    (
        prop_oneof![
            Just(ConflictPolicy::Flag),
            Just(ConflictPolicy::PreferSpecific),
            Just(ConflictPolicy::PreferPriority),
            Just(ConflictPolicy::PreferApproved)
        ],
        prop::collection::vec(text(8), 0..4),
        prop::collection::vec(
            (text(6), prop::option::of(text(6)), prop::option::of(text(6)), release()).prop_map(
                |(records, owner, owner_role, release_to)| RecordDefaults { records, owner, owner_role, release_to },
            ),
            0..3,
        ),
    )
        .prop_map(|(conflict_policy, parties, defaults)| GovernanceSet { conflict_policy, parties, defaults })
}

/// Any body, valid or not: the codec must round-trip all of them.
pub fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        term_put().prop_map(Body::TermPut),
        (record_id(RecordKind::Term), prop::option::of(text(10)))
            .prop_map(|(id, reason)| Body::TermRetired(TermRetired { id, reason })),
        (
            record_id(RecordKind::Term),
            text(8),
            prop_oneof![
                Just(AliasKind::Variant),
                Just(AliasKind::Nickname),
                Just(AliasKind::Title),
                Just(AliasKind::Reading)
            ],
            prop::option::of(window()),
            release(),
        )
            .prop_map(|(id, surface, kind, window, release_to)| Body::AliasAdded(AliasAdded {
                id,
                surface,
                kind,
                window,
                release_to
            })),
        (record_id(RecordKind::Term), text(8))
            .prop_map(|(id, surface)| Body::AliasRemoved(AliasRemoved { id, surface })),
        (
            record_id(RecordKind::Summary),
            prop_oneof![
                any::<u32>().prop_map(Scope::Chapter),
                (any::<u32>(), any::<u32>()).prop_map(|(from, to)| Scope::Arc { from, to }),
                Just(Scope::Book)
            ],
            text(40),
            any::<Option<u32>>(),
            (prop::option::of(text(8)), prop::option::of(text(8)), release()),
        )
            .prop_map(|(id, scope, text, visible_from, (owner, owner_role, release_to))| {
                Body::SummaryPut(SummaryPut { id, scope, text, visible_from, owner, owner_role, release_to })
            }),
        (record_id(RecordKind::Summary), prop::option::of(text(10)))
            .prop_map(|(id, reason)| Body::SummaryRetired(SummaryRetired { id, reason })),
        (
            record_id(RecordKind::Candidate),
            text(8),
            prop::option::of(text(8)),
            prop::option::of(text(20)),
            prop_oneof![
                Just(Origin::Extractor),
                Just(Origin::Embedding),
                Just(Origin::Postcheck),
                Just(Origin::Import)
            ],
            prop_oneof![Just(Trust::Low), Just(Trust::Normal)],
            any::<Option<i32>>(),
            prop::option::of(record_id(RecordKind::Term)),
            prop::option::of(record_id(RecordKind::Term)),
        )
            .prop_map(|(id, surface, suggested_dst, evidence, origin, trust, score, related, duplicate)| {
                Body::CandidateProposed(CandidateProposed {
                    id,
                    surface,
                    suggested_dst,
                    evidence,
                    origin,
                    trust,
                    score,
                    related,
                    duplicate,
                })
            }),
        (
            any_kind().prop_flat_map(record_id),
            prop_oneof![Just(Verdict::Accept), Just(Verdict::Verify), Just(Verdict::Reject), Just(Verdict::Withdraw)],
            text(10),
            prop::option::of(text(10))
        )
            .prop_map(|(target, verdict, reason, note)| Body::DispositionSet(DispositionSet {
                target,
                verdict,
                reason,
                note
            })),
        (any::<(u32, u32, u32, u16, u16)>(), text(4), prop::option::of(any::<[u8; 32]>().prop_map(Hash32))).prop_map(
            |((token_budget, sticky_chunks, min_key_chars, render_format, token_estimator), name, table)| {
                Body::ConfigSet(ConfigSet {
                    assembly: AssemblyConfig {
                        token_budget,
                        sticky_chunks,
                        min_key_chars,
                        render_format,
                        token_estimator,
                    },
                    profile: ProfileRef { name, table },
                })
            }
        ),
        (any::<u64>(), prop::option::of(text(10)))
            .prop_map(|(to, reason)| Body::RollbackMarker(RollbackMarker { to: Seq(to), reason })),
        rule_put().prop_map(Body::RulePut),
        (record_id(RecordKind::Rule), prop::option::of(text(10)))
            .prop_map(|(id, reason)| Body::RuleRetired(RuleRetired { id, reason })),
        governance_set().prop_map(Body::GovernanceSet),
        (text(8), prop::option::of(text(6)), prop::option::of(text(20)))
            .prop_map(|(surface, kind, note)| Body::ConceptExpected(ConceptExpected { surface, kind, note })),
        text(8).prop_map(|surface| Body::ConceptDropped(ConceptDropped { surface })),
        (
            (text(8), any::<[u8; 32]>().prop_map(Hash32), prop::option::of(any::<[u8; 32]>().prop_map(Hash32))),
            (
                any::<u32>(),
                prop_oneof![Just(EmbeddingPooling::Mean), Just(EmbeddingPooling::Cls), Just(EmbeddingPooling::InGraph)]
            ),
            (any::<bool>(), text(6), prop::option::of(text(8)), any::<i32>(), any::<i32>()),
            prop::collection::vec(any::<[u8; 32]>().prop_map(Hash32), 0..3),
        )
            .prop_map(
                |(
                    (name, model_blake3, tokenizer_blake3),
                    (dim, pooling),
                    (normalized, runtime_version, output, suggest_min_score, dedupe_min_score),
                    operator_libraries_blake3,
                )| {
                    Body::EmbeddingModelSet(EmbeddingModelSet {
                        name,
                        model_blake3,
                        tokenizer_blake3,
                        dim,
                        dtype: VectorDtype::F32,
                        pooling,
                        normalized,
                        runtime_version,
                        output,
                        suggest_min_score,
                        dedupe_min_score,
                        operator_libraries_blake3,
                    })
                }
            ),
        (prop::option::of(text(8)), prop::option::of(text(8)))
            .prop_map(|(source, target)| Body::LanguagesSet(LanguagesSet { source, target })),
        (any::<u32>(), prop::option::of(text(8)), prop::option::of(any::<[u8; 32]>()), any::<u64>()).prop_map(
            |(chapter, title, text, bytes)| Body::SourceSet(SourceSet {
                chapter,
                title,
                text: text.map(Hash32),
                bytes
            })
        ),
        prop::option::of(text(8)).prop_map(|template| Body::ProxyTemplateSet(ProxyTemplateSet { template })),
        (text(8), prop::option::of(text(8))).prop_map(|(job, text)| Body::ModelPromptSet(ModelPromptSet { job, text })),
        (text(8), prop::collection::vec(text(8), 0..3))
            .prop_map(|(party, decides)| Body::ModelPolicySet(ModelPolicySet { party, decides })),
        (
            any::<u8>(),
            prop::collection::vec(record_id(RecordKind::Term), 0..3),
            prop::collection::vec(record_id(RecordKind::Term), 0..3)
        )
            .prop_map(|(depth, quiet, direct_only)| Body::CascadeSet(CascadeSet { depth, quiet, direct_only })),
        (
            prop::collection::vec(record_id(RecordKind::Term), 0..3),
            prop::collection::vec(record_id(RecordKind::Term), 0..3)
        )
            .prop_map(|(always, never)| Body::ExamplesSet(ExamplesSet { always, never })),
    ]
}

pub fn new_event() -> impl Strategy<Value = NewEvent> {
    (any::<u64>(), text(12), text(12), body()).prop_map(|(recorded_at_ms, actor, source, body)| NewEvent {
        recorded_at_ms,
        actor,
        source,
        body,
    })
}
