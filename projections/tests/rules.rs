//! Every write-time rule, one row each: a batch in the JSON form of `apply` and the
//! refusal it must get from `decide`. Together the rows cover every `Problem`
//! variant, so a rule cannot lose its refusal (or its message) unnoticed.

mod support;

use std::collections::BTreeSet;

use ledger_model::*;
use projections::{decide, Environment, Rejection, SnapshotId};
use support::{has_table, source_text, Sim, RENDER_FORMATS, TOKEN_ESTIMATORS};
use test_support::records::put;

/// The simulated profile, plus what real profiles do to invisible characters (drop
/// them) and a character that folds to five, to reach the automaton's length limit.
fn fold(text: &str) -> String {
    support::fold(text).replace(['\u{200b}', '\u{ad}'], "").replace('ꙮ', "ooooo")
}

/// A book at revision 5: config, T-1 萧炎 with alias 炎子, T-2 retired, S-1.
fn book() -> Sim {
    let mut sim = Sim::default();
    sim.ok(vec![
        Body::ConfigSet(ConfigSet {
            assembly: AssemblyConfig::default(),
            profile: ProfileRef { name: "zh".into(), table: Some(Hash32([1; 32])) },
        }),
        Body::TermPut(put("T-1", "萧炎", "Сяо Янь")),
        Body::AliasAdded(AliasAdded {
            id: "T-1".parse().unwrap(),
            surface: "炎子".into(),
            kind: AliasKind::Nickname,
            window: None,
            release_to: None,
        }),
        Body::TermPut(put("T-2", "药老", "Яо Лао")),
    ]);
    sim.ok(vec![Body::TermRetired(TermRetired { id: "T-2".parse().unwrap(), reason: None })]);
    sim
}

fn judge(sim: &Sim, lines: &[&str]) -> Result<(), Rejection> {
    let batch: Vec<NewEvent> = lines
        .iter()
        .map(|line| NewEvent {
            recorded_at_ms: 1,
            actor: "human:test".into(),
            source: "rules".into(),
            body: serde_json::from_str(line).unwrap_or_else(|error| panic!("{line}: {error}")),
        })
        .collect();
    let snapshot_at = |revision: Seq| sim.states.get(revision.0 as usize).map(|state| state.snapshot_id());
    let env = Environment {
        fold: &fold,
        render_formats: RENDER_FORMATS,
        token_estimators: TOKEN_ESTIMATORS,
        has_table: &has_table,
        source_text: &source_text,
        snapshot_at: &snapshot_at,
    };
    decide(&sim.state, &env, &batch).map(|_| ())
}

/// The name of a problem's variant, from its `Debug` form.
fn variant(rejection: &Rejection) -> String {
    let debug = format!("{:?}", rejection.problem);
    debug.split(['(', ' ', '{']).next().unwrap().to_owned()
}

const ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn every_write_time_rule_refuses_with_its_message() {
    let long_key = "ꙮ".repeat(60);
    let long = format!(r#"{{"term_put":{{"id":"T-9","src":"{long_key}","dst":"Длинный"}}}}"#);
    let unknown_table = format!(r#"{{"config_set":{{"profile":{{"name":"zh","table":"{ZEROS}"}}}}}}"#);
    #[rustfmt::skip]
    let rows: &[(&[&str], &str, &str)] = &[
        (&[r#"{"term_put":{"id":"T-9","src":"炎","dst":"Янь"}}"#], "Field", "field `term_put.src`"),
        (&[r#"{"term_put":{"id":"T-9","src":"萧\u2028炎","dst":"Янь"}}"#], "Field", "U+2028"),
        (&[r#"{"term_put":{"id":"T-9","src":"萧炎","dst":"Янь\u202e"}}"#], "Field", "field `term_put.dst`"),
        (&[r#"{"term_retired":{"id":"T-99"}}"#], "UnknownRecord", "unknown record T-99"),
        (&[r#"{"term_put":{"id":"T-9","src":"顾寒川","dst":"Гу","supersedes":"T-98"}}"#], "UnknownRecord", "unknown record T-98"),
        (&[r#"{"alias_added":{"id":"T-2","surface":"药药"}}"#], "Retired", "T-2 is retired"),
        (&[r#"{"alias_removed":{"id":"T-1","surface":"炎炎"}}"#], "UnknownAlias", r#"T-1 has no alias "炎炎""#),
        (&[r#"{"rollback_marker":{"to":99}}"#], "RollbackBeyondHead", "cannot roll back to revision 99: the head is 5"),
        (
            &[r#"{"summary_put":{"id":"S-2","scope":{"arc":{"from":1,"to":10}},"text":"Итог.","visible_from":5}}"#],
            "SummaryTooEarly",
            "S-2 would be visible from chapter 5, before its scope ends at chapter 10",
        ),
        (&[r#"{"term_put":{"id":"T-9","src":"蕭炎","dst":"Другой"}}"#], "Unique", "UNIQUE(src, sense, window) violated"),
        (&[r#"{"term_put":{"id":"T-9","src":"\u200b\u200b","dst":"Пусто"}}"#], "UnusableKey", r#"field `term_put.src`: key "\u{200b}\u{200b}" folds to """#),
        (&[r#"{"alias_added":{"id":"T-1","surface":"\u00ad\u00ad"}}"#], "UnusableKey", "field `alias_added.surface`"),
        (&[r#"{"term_put":{"id":"T-9","src":"《》","dst":"Кавычки"}}"#], "UnusableKey", "no letter or digit"),
        (&[r#"{"term_put":{"id":"T-9","src":"\u0301\u0301","dst":"Знак"}}"#], "UnusableKey", "no letter or digit"),
        (
            &[r#"{"term_put":{"id":"T-9","src":"灶","dst":"Очаг","secondary":{"logic":"and_any","keys":["灶王","……"]}}}"#],
            "UnusableKey",
            "field `term_put.secondary.keys[1]`",
        ),
        (&[&long], "UnusableKey", "longer than the matcher's limit of 256"),
        (&[r#"{"term_put":{"id":"T-9","src":"炎\u200b","dst":"Янь"}}"#], "UnusableKey", "shorter than min_key_chars 2"),
        (&[r#"{"alias_added":{"id":"T-1","surface":"\u00ad炎"}}"#], "UnusableKey", "shorter than min_key_chars 2"),
        (&[r#"{"config_set":{"assembly":{"render_format":7}}}"#], "UnknownRenderFormat", "unsupported render format 7 (this build renders [1, 2])"),
        (&[r#"{"config_set":{"assembly":{"token_estimator":9}}}"#], "UnknownTokenEstimator", "unsupported token estimator 9 (this build has [1])"),
        (&[r#"{"config_set":{"profile":{"name":"ja"}}}"#], "NoFoldTable", r#"config_set names profile "ja" without a fold table"#),
        (&[&unknown_table], "UnknownFoldTable", "is not stored in the book"),
        (
            &[r#"{"rollback_marker":{"to":4}}"#, r#"{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао"}}"#],
            "RollbackNotLast",
            "event 1: a rollback_marker must be the last event of its batch",
        ),
        (&[r#"{"rollback_marker":{"to":1}}"#], "RollbackMismatch", "rollback_marker to revision 1 does not close a rollback"),
        (&[r#"{"rollback_marker":{"to":0}}"#], "RollbackMismatch", "rollback_marker to revision 0 does not close a rollback"),
        (
            &[r#"{"term_put":{"id":"T-9","src":"顾寒川","dst":"Гу"}}"#, r#"{"term_put":{"id":"T-9","src":"顾寒川","dst":"Гу Ханьчуань"}}"#],
            "Duplicate",
            "event 2: term_put T-9 is also written, differently, by event 1 of this batch",
        ),
        (
            &[r#"{"term_put":{"id":"T-9","src":"顾寒川","dst":"Гу","owner":"human:editors"}}"#],
            "UndeclaredParty",
            r#"field `term_put.owner`: party "human:editors" is not declared: the book declares no parties yet"#,
        ),
        (
            &[
                r#"{"governance_set":{"conflict_policy":"flag","parties":["human:editors"]}}"#,
                r#"{"alias_added":{"id":"T-1","surface":"炎帝","release_to":["*","tool:pipeline"]}}"#,
            ],
            "UndeclaredParty",
            r#"event 2: field `alias_added.release_to[1]`: party "tool:pipeline" is not one of the book's parties"#,
        ),
        (
            &[r#"{"rule_put":{"id":"R-1","text":"На «вы».","applies_to":["dialogue"]}}"#],
            "RulesNeedRenderFormat",
            "rules are rendered by render format 2 or later, and the book's config sets render format 1",
        ),
        (
            &[
                r#"{"config_set":{"assembly":{"render_format":2}}}"#,
                r#"{"rule_put":{"id":"R-1","text":"На «вы».","applies_to":[{"record":"T-77"}]}}"#,
            ],
            "UnknownScopeRecord",
            "event 2: field `rule_put.applies_to[0].record`: the scope names T-77, which the book does not have",
        ),
        (&[r#"{"concept_dropped":{"surface":"林晚"}}"#], "UnknownConcept", r#""林晚" is not an expected concept"#),
        (
            &[r#"{"concept_expected":{"surface":"萧炎"}}"#, r#"{"concept_expected":{"surface":"蕭炎"}}"#],
            "ConceptTwice",
            r#"event 2: "蕭炎" is already expected as "萧炎": both fold to the same surface"#,
        ),
    ];
    let sim = book();
    let mut seen = BTreeSet::new();
    for (lines, expected_variant, message) in rows {
        let rejection = judge(&sim, lines).expect_err(&format!("{lines:?} was accepted"));
        assert_eq!(variant(&rejection), *expected_variant, "{lines:?}: {rejection}");
        assert!(rejection.to_string().contains(message), "{lines:?}: {rejection}\nexpected: {message}");
        seen.insert(variant(&rejection));
    }
    let every: BTreeSet<String> = [
        "Field",
        "UnknownRecord",
        "Retired",
        "UnknownAlias",
        "RollbackBeyondHead",
        "SummaryTooEarly",
        "Unique",
        "UnusableKey",
        "UnknownRenderFormat",
        "UnknownTokenEstimator",
        "NoFoldTable",
        "UnknownFoldTable",
        "RollbackNotLast",
        "RollbackMismatch",
        "Duplicate",
        "UndeclaredParty",
        "RulesNeedRenderFormat",
        "UnknownScopeRecord",
        "UnknownConcept",
        "ConceptTwice",
    ]
    .map(String::from)
    .into();
    assert_eq!(seen, every);
}

#[test]
fn the_batches_next_to_each_rule_are_accepted() {
    let sim = book();
    let ok = |lines: &[&str]| judge(&sim, lines).unwrap_or_else(|rejection| panic!("{lines:?}: {rejection}"));
    ok(&[r#"{"term_put":{"id":"T-9","src":"顾寒川","dst":"Гу"}}"#]);
    ok(&[r#"{"term_put":{"id":"T-9","src":"ꙮ萧","dst":"Знак"}}"#]);
    ok(&[r#"{"term_put":{"id":"T-9","src":"é́","dst":"Знак"}}"#]);
    ok(&[r#"{"term_put":{"id":"T-9","src":"灶\u200b","dst":"Очаг","secondary":{"logic":"and_any","keys":["灶王"]}}}"#]);
    ok(&[r#"{"summary_put":{"id":"S-2","scope":{"arc":{"from":1,"to":10}},"text":"Итог.","visible_from":11}}"#]);
    ok(&[r#"{"config_set":{"assembly":{"token_budget":10}}}"#]);
    // The same event twice is one write.
    let put = r#"{"term_put":{"id":"T-9","src":"顾寒川","dst":"Гу"}}"#;
    ok(&[put, put]);
    // Compensating events that restore revision 4's snapshot may close with a marker.
    ok(&[r#"{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао"}}"#, r#"{"rollback_marker":{"to":4}}"#]);
    let at_4: SnapshotId = sim.at(4).snapshot_id();
    assert_ne!(sim.state.snapshot_id(), at_4);
}
