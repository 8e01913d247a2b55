//! Given/when/then tests of `decide` and the bi-temporal reads: each test builds a
//! book through `decide`, then checks what is refused, what is dropped, and what is
//! visible at which revision and chapter.

mod support;

use ledger_model::*;
use projections::{Problem, Warning};
use support::Sim;
use test_support::records::{id, put};

#[test]
fn a_term_revised_twice_has_three_versions_with_provenance() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Ян"))]);
    sim.actor = "human:boris".into();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    sim.actor = "llm:extractor".into();
    sim.ok(vec![Body::TermPut(TermPut { note: Some("герой".into()), ..put("T-1", "萧炎", "Сяо Янь") })]);
    // Each revision knows who made the content it holds; the rest is in the log.
    let put_by = |revision: u64| sim.at(revision).terms()[&id("T-1")].put_by.clone();
    assert_eq!(
        [1, 2, 3].map(|revision| (put_by(revision).actor, put_by(revision).seq.0)),
        [("human:test".to_owned(), 1), ("human:boris".to_owned(), 2), ("llm:extractor".to_owned(), 3)]
    );
    assert_eq!(put_by(3).kind, "term_put");
    // as_of an old revision shows the old rendering.
    assert_eq!(sim.at(1).terms()[&id("T-1")].put.dst, "Сяо Ян");
    assert_eq!(sim.at(3).terms()[&id("T-1")].put.dst, "Сяо Янь");
}

#[test]
fn an_identical_put_is_dropped() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let decision =
        sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь")), Body::TermPut(put("T-2", "药老", "Яо Лао"))]);
    assert_eq!(decision.dropped, [0]);
    assert_eq!(decision.events.len(), 1);
    assert_eq!(sim.state.revision(), Seq(2));
}

#[test]
fn a_window_starting_later_is_hidden_before_it_and_supersession_ends_the_old_record() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-2", "顾寒川", "Гу Ханьчуань"))]);
    sim.ok(vec![Body::TermPut(TermPut {
        window: Window { since: 121, until: None },
        supersedes: Some(id("T-2")),
        note: Some("глава Ночной секты".into()),
        ..put("T-4", "顾寒川", "Гу Ханьчуань")
    })]);
    let at = |chapter| sim.state.active_terms(Some(chapter)).iter().map(|a| a.id.to_string()).collect::<Vec<_>>();
    assert_eq!(at(5), ["T-2"]);
    assert_eq!(at(120), ["T-2"]);
    assert_eq!(at(121), ["T-4"]);
    let (window, by) = sim.state.effective_window(id("T-2"));
    assert_eq!((window, by), (Some(Window { since: 1, until: Some(120) }), Some(id("T-4"))));
    // The stored record of T-2 is untouched.
    assert_eq!(sim.state.terms()[&id("T-2")].put.window, Window::default());
}

#[test]
fn unique_refuses_overlapping_windows_and_names_the_other_record() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(TermPut {
        window: Window { since: 1, until: Some(50) },
        ..put("T-1", "萧炎", "Сяо Янь")
    })]);
    // Folded: 蕭炎 is 萧炎.
    let rejection = sim.submit(vec![Body::TermPut(put("T-2", "蕭炎", "Сяо Янь-2"))]).unwrap_err();
    let Problem::Unique(conflict) = &rejection.problem else { panic!("{rejection}") };
    assert_eq!((conflict.key.as_str(), conflict.this.0, conflict.other.0), ("萧炎", id("T-2"), id("T-1")));
    assert!(rejection.to_string().contains("T-1"), "{rejection}");
    // Disjoint windows are fine; so is another sense.
    sim.ok(vec![Body::TermPut(TermPut {
        window: Window { since: 51, until: None },
        ..put("T-2", "蕭炎", "Сяо Янь-2")
    })]);
    sim.ok(vec![Body::TermPut(TermPut { sense: Some("fire".into()), ..put("T-3", "萧炎", "Пламя") })]);
    // Through an alias as well.
    sim.ok(vec![Body::TermPut(put("T-4", "药老", "Яо Лао"))]);
    let rejection = sim.submit(vec![Body::AliasAdded(AliasAdded {
        id: id("T-4"),
        surface: "萧炎".into(),
        kind: AliasKind::Nickname,
        window: None,
        release_to: None,
    })]);
    assert!(matches!(rejection, Err(ref r) if matches!(r.problem, Problem::Unique(_))), "{rejection:?}");
    // Nothing refused was applied.
    assert_eq!(sim.state.revision(), Seq(4));
}

#[test]
fn a_batch_may_swap_surfaces_between_records() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь")), Body::TermPut(put("T-2", "药老", "Яо Лао"))]);
    sim.ok(vec![Body::TermPut(put("T-1", "药老", "Яо Лао")), Body::TermPut(put("T-2", "萧炎", "Сяо Янь"))]);
    assert_eq!(sim.state.terms()[&id("T-1")].put.src, "药老");
}

#[test]
fn references_to_unknown_or_retired_records_are_refused() {
    let mut sim = Sim::default();
    let unknown = sim.submit(vec![Body::TermRetired(TermRetired { id: id("T-9"), reason: None })]).unwrap_err();
    assert_eq!(unknown.problem, Problem::UnknownRecord(id("T-9")));
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    sim.ok(vec![Body::TermRetired(TermRetired { id: id("T-1"), reason: None })]);
    let retired = sim
        .submit(vec![Body::AliasAdded(AliasAdded {
            id: id("T-1"),
            surface: "炎子".into(),
            kind: AliasKind::Nickname,
            window: None,
            release_to: None,
        })])
        .unwrap_err();
    assert_eq!(retired.problem, Problem::Retired(id("T-1")));
    let no_alias = sim.submit(vec![
        Body::TermPut(put("T-2", "药老", "Яо Лао")),
        Body::AliasRemoved(AliasRemoved { id: id("T-2"), surface: "x".into() }),
    ]);
    assert!(matches!(no_alias.unwrap_err().problem, Problem::UnknownAlias { .. }));
    let beyond = sim.submit(vec![Body::RollbackMarker(RollbackMarker { to: Seq(99), reason: None })]).unwrap_err();
    assert_eq!(beyond.problem, Problem::RollbackBeyondHead { to: Seq(99), head: Seq(2) });
    let early = sim
        .submit(vec![Body::SummaryPut(SummaryPut {
            id: id("S-1"),
            scope: Scope::Chapter(3),
            text: "x".into(),
            visible_from: Some(2),
            owner: None,
            owner_role: None,
            release_to: None,
        })])
        .unwrap_err();
    assert!(matches!(early.problem, Problem::SummaryTooEarly { scope_end: 3, .. }), "{early}");
    // A put after retirement revives the term.
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    assert!(sim.state.is_active(id("T-1")));
}

#[test]
fn a_single_character_key_follows_the_configured_minimum() {
    let mut sim = Sim::default();
    assert!(matches!(sim.submit(vec![Body::TermPut(put("T-1", "炎", "Янь"))]).unwrap_err().problem, Problem::Field(_)));
    let config = ConfigSet {
        assembly: AssemblyConfig { min_key_chars: 1, ..Default::default() },
        profile: ProfileRef { name: "zh".into(), table: Some(Hash32([1; 32])) },
    };
    // The config and the short key in one batch: the key is judged by the new rule.
    sim.ok(vec![Body::ConfigSet(config), Body::TermPut(put("T-1", "炎", "Янь"))]);
}

#[test]
fn two_sources_with_one_rendering_are_a_warning() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let decision = sim.ok(vec![Body::TermPut(put("T-2", "小炎", "сяо янь"))]);
    assert_eq!(decision.warnings.len(), 1);
    let Warning::SameDst { dst, terms, n_terms } = &decision.warnings[0];
    let whole = Window::default();
    assert_eq!(dst, "Сяо Янь");
    assert_eq!(terms, &[(id("T-1"), "萧炎".to_owned(), whole), (id("T-2"), "小炎".to_owned(), whole)]);
    assert_eq!(*n_terms, 2);
    assert_eq!(
        decision.warnings[0].to_string(),
        r#"2 terms with different sources render as "Сяо Янь" in overlapping windows: T-1 "萧炎" (ch 1..), T-2 "小炎" (ch 1..)"#
    );
}

#[test]
fn a_partial_config_is_stored_whole_with_the_fields_in_force() {
    let mut sim = Sim::default();
    // Before any config, left-out fields take the defaults.
    let first: Body = serde_json::from_str(
        r#"{"config_set":{"assembly":{"sticky_chunks":5},"profile":{"name":"zh","table":"0101010101010101010101010101010101010101010101010101010101010101"}}}"#,
    )
    .unwrap();
    let decision = sim.ok(vec![first]);
    let Body::ConfigSet(stored) = &decision.events[0].body else { panic!("not a config") };
    assert_eq!(stored.assembly, AssemblyConfig { sticky_chunks: 5, ..AssemblyConfig::default() });
    // Later, they keep the values in force, profile included.
    let budget: Body = serde_json::from_str(r#"{"config_set":{"assembly":{"token_budget":10}}}"#).unwrap();
    let decision = sim.ok(vec![budget]);
    let Body::ConfigSet(stored) = &decision.events[0].body else { panic!("not a config") };
    assert_eq!(stored.assembly, AssemblyConfig { token_budget: 10, sticky_chunks: 5, ..AssemblyConfig::default() });
    assert_eq!(stored.profile, ProfileRef { name: "zh".into(), table: Some(Hash32([1; 32])) });
    // Leaving everything out changes nothing: the put is dropped as a no-op.
    let empty: Body = serde_json::from_str(r#"{"config_set":{}}"#).unwrap();
    assert_eq!(sim.ok(vec![empty]).dropped, [0]);
    assert_eq!(sim.state.assembly().token_budget, 10);
}

#[test]
fn a_first_config_without_a_profile_is_refused() {
    let mut sim = Sim::default();
    let body: Body = serde_json::from_str(r#"{"config_set":{"assembly":{"token_budget":10}}}"#).unwrap();
    let rejection = sim.submit(vec![body]).unwrap_err();
    assert!(rejection.to_string().contains("config_set.profile.name"), "{rejection}");
}

fn suggestion(candidate: &str, related: Option<&str>, duplicate: Option<&str>) -> Body {
    Body::CandidateProposed(CandidateProposed {
        id: id(candidate),
        surface: "炎儿".into(),
        suggested_dst: None,
        evidence: Some("ch1/1@3-5".into()),
        origin: Origin::Embedding,
        trust: Trust::Low,
        score: Some(901_000),
        related: related.map(id),
        duplicate: duplicate.map(id),
    })
}

#[test]
fn a_candidate_close_to_an_unknown_or_retired_term_is_refused() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь")), Body::TermPut(put("T-2", "药老", "Яо Лао"))]);
    let unknown = sim.submit(vec![suggestion("C-1", Some("T-9"), None)]).unwrap_err();
    assert_eq!((unknown.index, unknown.problem), (Some(0), Problem::UnknownRecord(id("T-9"))));
    let unknown_pair = sim.submit(vec![suggestion("C-1", Some("T-1"), Some("T-8"))]).unwrap_err();
    assert_eq!(unknown_pair.problem, Problem::UnknownRecord(id("T-8")));
    sim.ok(vec![Body::TermRetired(TermRetired { id: id("T-2"), reason: None })]);
    let retired = sim.submit(vec![suggestion("C-1", Some("T-1"), Some("T-2"))]).unwrap_err();
    assert_eq!(retired.problem, Problem::Retired(id("T-2")));
    // Close to an active term: accepted, and proposing it again changes nothing.
    sim.ok(vec![suggestion("C-1", Some("T-1"), None)]);
    assert_eq!(sim.state.candidates()[&id("C-1")].proposed.related, Some(id("T-1")));
    assert!(sim.ok(vec![suggestion("C-1", Some("T-1"), None)]).events.is_empty());
}

#[test]
fn the_embedding_model_is_configuration_outside_the_snapshot() {
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let before = sim.state.snapshot_id();
    let model = EmbeddingModelSet {
        name: "lorebank-tiny".into(),
        model_blake3: Hash32([1; 32]),
        tokenizer_blake3: Some(Hash32([2; 32])),
        dim: 32,
        dtype: VectorDtype::F32,
        pooling: EmbeddingPooling::Mean,
        normalized: true,
        runtime_version: "1.31.1".into(),
        output: None,
        suggest_min_score: 800_000,
        dedupe_min_score: 900_000,
        operator_libraries_blake3: Vec::new(),
    };
    sim.ok(vec![Body::EmbeddingModelSet(model.clone())]);
    assert_eq!(sim.state.embedding_model().map(|(set, _)| set), Some(&model));
    assert_eq!(sim.state.snapshot_id(), before, "a model changes no assembly, so no snapshot ID");
    // The same model again is a no-op; another replaces it, still outside the ID.
    assert!(sim.ok(vec![Body::EmbeddingModelSet(model.clone())]).events.is_empty());
    let other = EmbeddingModelSet { model_blake3: Hash32([3; 32]), ..model.clone() };
    sim.ok(vec![Body::EmbeddingModelSet(other.clone())]);
    assert_eq!(sim.state.embedding_model().map(|(set, _)| set), Some(&other));
    assert_eq!(sim.state.snapshot_id(), before);
    // Two models in one batch are two writes of one thing.
    let twice = sim.submit(vec![Body::EmbeddingModelSet(model), Body::EmbeddingModelSet(other)]);
    assert!(twice.is_err());
    // A party's view leaves the model out, like the review queue.
    let party = projections::Reader::Party("tool:pipeline".into());
    assert!(sim.state.view_for(&party).embedding_model().is_none());
}

#[test]
fn the_languages_are_configuration_outside_the_snapshot_with_the_profile_as_default() {
    let languages = |source: Option<&str>, target: Option<&str>| {
        Body::LanguagesSet(LanguagesSet { source: source.map(Into::into), target: target.map(Into::into) })
    };
    let mut sim = Sim::default();
    // Before any config and any declaration: undetermined source, Russian renderings.
    assert_eq!((sim.state.source_lang(), sim.state.target_lang()), ("und", "ru"));
    sim.ok(vec![config("ja")]);
    sim.ok(vec![Body::TermPut(put("T-1", "真昼", "Махиру"))]);
    assert_eq!((sim.state.source_lang(), sim.state.target_lang()), ("ja", "ru"));
    let before = sim.state.snapshot_id();
    // Declaring the defaults in a book that declares none changes nothing.
    assert!(sim.ok(vec![languages(None, None)]).events.is_empty());
    assert!(sim.state.languages_set().is_none());
    sim.ok(vec![languages(Some("en"), Some("es"))]);
    assert_eq!((sim.state.source_lang(), sim.state.target_lang()), ("en", "es"));
    assert_eq!(sim.state.snapshot_id(), before, "no render format injects a language, so no snapshot ID holds one");
    assert!(sim.ok(vec![languages(Some("en"), Some("es"))]).events.is_empty());
    // A declaration is whole: a language left out is the default again.
    sim.ok(vec![languages(None, Some("de"))]);
    assert_eq!((sim.state.source_lang(), sim.state.target_lang()), ("ja", "de"));
    // A source left out follows the profile.
    sim.ok(vec![config("zh")]);
    assert_eq!(sim.state.source_lang(), "zh");
    // Two declarations in one batch are two writes of one thing.
    let twice = sim.submit(vec![languages(Some("en"), None), languages(Some("fr"), None)]).unwrap_err();
    assert!(matches!(twice.problem, Problem::Duplicate { .. }), "{twice}");
    // A party's view keeps the languages: an export for a party is written in them.
    let party = projections::Reader::Party("tool:pipeline".into());
    assert_eq!(sim.state.view_for(&party).target_lang(), "de");
}

fn config(profile: &str) -> Body {
    Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: profile.into(), table: Some(Hash32([1; 32])) },
    })
}

#[test]
fn source_text_is_kept_by_chapter_outside_the_snapshot_and_a_rollback_restores_it() {
    // The simulated book holds every text but the all-zero id, as long as its first byte.
    let text = |length: u8, tag: u8| {
        let mut id = [tag; 32];
        id[0] = length;
        Hash32(id)
    };
    let set = |chapter: u32, title: Option<&str>, id: Hash32| {
        Body::SourceSet(SourceSet { chapter, title: title.map(Into::into), text: Some(id), bytes: u64::from(id.0[0]) })
    };
    let removed = |chapter: u32| Body::SourceSet(SourceSet { chapter, ..SourceSet::default() });
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let before = sim.state.snapshot_id();
    sim.ok(vec![set(1, Some("第一章"), text(10, 1)), set(2, None, text(20, 2))]);
    let at_2 = sim.state.revision();
    assert_eq!(sim.state.snapshot_id(), before, "a chapter's text is in no snapshot");
    let chapters: Vec<(u32, Option<Hash32>)> =
        sim.state.source_chapters().map(|(source, _)| (source.chapter, source.text)).collect();
    assert_eq!(chapters, [(1, Some(text(10, 1))), (2, Some(text(20, 2)))]);
    // The same text and title again is nothing; another title is a change.
    assert!(sim.ok(vec![set(1, Some("第一章"), text(10, 1))]).events.is_empty());
    sim.ok(vec![set(1, Some("第一章 风起"), text(30, 3)), removed(2)]);
    assert_eq!(sim.state.source_chapter(1).unwrap().0.text, Some(text(30, 3)));
    assert!(sim.state.source_chapter(2).is_none());
    // Removing a text the chapter lacks is nothing.
    assert!(sim.ok(vec![removed(7)]).events.is_empty());
    // A text the book does not hold, a length that is not the text's, two of one chapter.
    let unknown = Body::SourceSet(SourceSet { chapter: 3, title: None, text: Some(Hash32([0; 32])), bytes: 5 });
    let unknown = sim.submit(vec![unknown]).unwrap_err();
    assert!(matches!(unknown.problem, Problem::UnknownSourceText { chapter: 3, .. }), "{unknown}");
    assert!(unknown.to_string().contains("source_set.text"), "{unknown}");
    let wrong = Body::SourceSet(SourceSet { chapter: 3, title: None, text: Some(text(5, 9)), bytes: 6 });
    let wrong = sim.submit(vec![wrong]).unwrap_err();
    assert!(matches!(wrong.problem, Problem::SourceBytesMismatch { chapter: 3, declared: 6, actual: 5 }), "{wrong}");
    let twice = sim.submit(vec![set(4, None, text(5, 4)), set(4, None, text(6, 4))]).unwrap_err();
    assert!(matches!(twice.problem, Problem::Duplicate { .. }), "{twice}");
    // A rollback brings back the texts of then, and the snapshot stays.
    let target = sim.at(at_2.0).clone();
    let plan = projections::plan_rollback(&sim.state, &target, None).unwrap();
    sim.ok(plan);
    let chapters: Vec<(u32, Option<String>, Option<Hash32>)> =
        sim.state.source_chapters().map(|(source, _)| (source.chapter, source.title.clone(), source.text)).collect();
    assert_eq!(chapters, [(1, Some("第一章".to_owned()), Some(text(10, 1))), (2, None, Some(text(20, 2)))]);
    assert_eq!(sim.state.snapshot_id(), target.snapshot_id());
}

#[test]
fn the_proxy_template_is_in_the_snapshot_only_while_set_and_a_rollback_restores_it() {
    let template = |text: Option<&str>| Body::ProxyTemplateSet(ProxyTemplateSet { template: text.map(Into::into) });
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "萧炎", "Сяо Янь"))]);
    let (before, bytes_before) = (sim.state.snapshot_id(), sim.state.snapshot_bytes());
    // Clearing a template the book does not have is nothing.
    assert!(sim.ok(vec![template(None)]).events.is_empty());
    sim.ok(vec![template(Some("Глоссарий:\n\n{context}"))]);
    let at_set = sim.state.revision();
    assert_eq!(sim.state.proxy_template().map(|(text, by)| (text, by.seq)), Some(("Глоссарий:\n\n{context}", at_set)));
    let with_first = sim.state.snapshot_id();
    assert_ne!(with_first, before, "the template is in the snapshot");
    let bytes = sim.state.snapshot_bytes();
    assert_eq!(&bytes[..bytes_before.len()], &bytes_before[..], "its part follows the document");
    // The same template again is nothing; another one is another snapshot.
    assert!(sim.ok(vec![template(Some("Глоссарий:\n\n{context}"))]).events.is_empty());
    sim.ok(vec![template(Some("{context}"))]);
    assert_ne!(sim.state.snapshot_id(), with_first);
    // Two in one batch are refused.
    let twice = sim.submit(vec![template(Some("a {context}")), template(Some("b {context}"))]).unwrap_err();
    assert!(matches!(twice.problem, Problem::Duplicate { .. }), "{twice}");
    // A rollback brings back the template of then and its snapshot.
    let target = sim.at(at_set.0).clone();
    sim.ok(projections::plan_rollback(&sim.state, &target, None).unwrap());
    assert_eq!(sim.state.snapshot_id(), with_first);
    assert_eq!(sim.state.proxy_template().map(|(text, _)| text), Some("Глоссарий:\n\n{context}"));
    // Cleared, the bytes and the ID are those of a book that never had one.
    sim.ok(vec![template(None)]);
    assert_eq!(sim.state.proxy_template(), None);
    assert_eq!(sim.state.snapshot_bytes(), bytes_before);
    assert_eq!(sim.state.snapshot_id(), before);
}

#[test]
fn cascading_is_in_the_snapshot_only_while_its_depth_is_above_0_and_a_rollback_restores_it() {
    let cascade = |depth: u8, quiet: &[&str]| {
        Body::CascadeSet(CascadeSet {
            depth,
            quiet: quiet.iter().map(|id| id.parse().unwrap()).collect(),
            direct_only: Vec::new(),
        })
    };
    let mut sim = Sim::default();
    sim.ok(vec![Body::TermPut(put("T-1", "沈照", "Шэнь Чжао")), Body::TermPut(put("T-2", "顾寒川", "Гу Ханьчуань"))]);
    let (before, bytes_before) = (sim.state.snapshot_id(), sim.state.snapshot_bytes());
    // Turning off what is not on is nothing; lists without a depth change no assembly.
    assert!(sim.ok(vec![cascade(0, &[])]).events.is_empty());
    sim.ok(vec![cascade(0, &["T-1"])]);
    assert_eq!(sim.state.snapshot_id(), before, "no depth, no part");
    sim.ok(vec![cascade(2, &["T-1"])]);
    let at_set = sim.state.revision();
    let with_depth = sim.state.snapshot_id();
    assert_ne!(with_depth, before, "the cascade is in the snapshot");
    let bytes = sim.state.snapshot_bytes();
    assert_eq!(&bytes[..bytes_before.len()], &bytes_before[..], "its part follows the document");
    assert!(sim.ok(vec![cascade(2, &["T-1"])]).events.is_empty(), "the same declaration again is nothing");
    // A retired term named in a list changes no assembly, and so no ID.
    sim.ok(vec![cascade(2, &["T-1", "T-2"])]);
    let quiet_both = sim.state.snapshot_id();
    assert_ne!(quiet_both, with_depth);
    sim.ok(vec![Body::TermRetired(TermRetired { id: "T-2".parse().unwrap(), reason: None })]);
    let retired = sim.state.snapshot_id();
    sim.ok(vec![cascade(2, &["T-1"])]);
    assert_eq!(sim.state.snapshot_id(), retired);
    // A term the book never had is refused, naming it.
    let unknown = sim.submit(vec![cascade(1, &["T-9"])]).unwrap_err();
    assert!(matches!(unknown.problem, Problem::UnknownRecord(id) if id.to_string() == "T-9"), "{unknown}");
    let twice = sim.submit(vec![cascade(1, &[]), cascade(2, &[])]).unwrap_err();
    assert!(matches!(twice.problem, Problem::Duplicate { .. }), "{twice}");
    // A rollback brings back the declaration of then and its snapshot.
    let target = sim.at(at_set.0).clone();
    sim.ok(projections::plan_rollback(&sim.state, &target, None).unwrap());
    assert_eq!(sim.state.snapshot_id(), target.snapshot_id());
    assert_eq!(sim.state.cascade().map(|(set, _)| set.depth), Some(2));
    // Off again, the bytes are those of a book that never cascaded (T-2 revived by the
    // rollback).
    sim.ok(vec![cascade(0, &[])]);
    assert_eq!(sim.state.snapshot_bytes(), bytes_before);
    assert_eq!(sim.state.snapshot_id(), before);
}
