//! Every rule and reason code of `docs/assembly.md`, one readable case each.
//!
//! `check(glossary, chapter, chunk, prev, expect)` folds a glossary written in the JSON
//! form of `lorebank apply` (one event body per line) through `decide` into a state,
//! freezes it with the real `zh` profile, assembles `chunk` at `chapter` after the
//! chunks in `prev` (each one's receipt feeding the next), and compares a rendering of
//! the result with the expectation: the context bytes, then every hit with its
//! disposition and reason, the injected entries, what the budget evicted, and the
//! summaries shown. `UPDATE_EXPECT=1 cargo test -p assembly --test check` rewrites
//! the expectations in place; review the diff like code.
//!
//! A glossary without a `config_set` line gets the default assembly configuration
//! and the `zh` profile.

use std::fmt::Write as _;

use assembly::assemble::{assemble, assemble_with, Assembly, Example, Previous};
use expect_test::{expect, Expect};
use ledger_model::{AssemblyConfig, Body, ConfigSet, Hash32, NewEvent, ProfileRef};
use projections::frozen::{freeze, Frozen};
use projections::{decide, Environment, State};
use test_support::profiles::zh_profile;

/// The frozen projection of a glossary, built in memory as a book would build it.
/// A line `---` ends one batch (one `apply`) and starts the next.
fn frozen(glossary: &str) -> Frozen {
    let profile = zh_profile();
    let table = Hash32(profile.id().0);
    let mut batches: Vec<Vec<Body>> = vec![Vec::new()];
    for (line_idx, line) in glossary.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if line.trim() == "---" {
            batches.push(Vec::new());
            continue;
        }
        let mut body: Body =
            serde_json::from_str(line).unwrap_or_else(|error| panic!("glossary line {}: {error}", line_idx + 1));
        if let Body::ConfigSet(config) = &mut body {
            assert_eq!(config.profile.name, "zh", "glossary line {}: the check harness folds with zh", line_idx + 1);
            config.profile.table.get_or_insert(table);
        }
        batches.last_mut().expect("one batch at least").push(body);
    }
    if !batches.iter().flatten().any(|body| matches!(body, Body::ConfigSet(_))) {
        let config = ConfigSet {
            assembly: AssemblyConfig::default(),
            profile: ProfileRef { name: "zh".into(), table: Some(table) },
        };
        batches[0].insert(0, Body::ConfigSet(config));
    }
    let fold = |text: &str| profile.fold(text);
    let has_table = |id: Hash32| id == table;
    let env = Environment {
        fold: &fold,
        render_formats: assembly::assemble::RENDER_FORMATS,
        token_estimators: assembly::assemble::TOKEN_ESTIMATORS,
        has_table: &has_table,
        source_text: &|_| None,
        snapshot_at: &|_| None,
    };
    let mut state = State::new();
    for bodies in batches {
        let batch: Vec<NewEvent> = bodies
            .into_iter()
            .map(|body| NewEvent { recorded_at_ms: 0, actor: "human:check".into(), source: "check".into(), body })
            .collect();
        state = decide(&state, &env, &batch).unwrap_or_else(|rejection| panic!("glossary: {rejection}")).state;
    }
    let bytes = freeze(&state, profile).expect("freeze");
    Frozen::load(&bytes, profile, state.snapshot_id()).expect("load the frozen projection")
}

/// A value's name as documented (its serde name: `spoiler_window`, `sticky`, …).
fn name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("serialize").trim_matches('"').to_owned()
}

fn render(assembly: &Assembly) -> String {
    let mut out = String::new();
    assert!(assembly.context.is_empty() || assembly.context.ends_with('\n'), "every context line ends with \\n");
    out.push_str("context:\n");
    if assembly.context.is_empty() {
        out.push_str("  (empty)\n");
    }
    for line in assembly.context.lines() {
        let _ = writeln!(out, "  | {line}");
    }
    out.push_str("hits:\n");
    if assembly.hits.is_empty() {
        out.push_str("  (none)\n");
    }
    for hit in &assembly.hits {
        let reason = hit.reason.map(|reason| format!(" ({})", name(&reason))).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} chars {}..{} T-{}: {}{reason}",
            hit.text,
            hit.chars.0,
            hit.chars.1,
            hit.term,
            name(&hit.disposition)
        );
    }
    out.push_str("injected:\n");
    if assembly.injected.is_empty() {
        out.push_str("  (none)\n");
    }
    for entry in &assembly.injected {
        let unverified = if entry.unverified { ", unverified" } else { "" };
        let _ = writeln!(out, "  T-{} via {}{unverified}, {} tokens", entry.term, name(&entry.via), entry.tokens);
    }
    let list = |prefix: &str, numbers: &[u32]| -> String {
        numbers.iter().map(|number| format!("{prefix}-{number}")).collect::<Vec<_>>().join(" ")
    };
    if !assembly.evicted.is_empty() {
        let _ = writeln!(out, "evicted (budget): {}", list("T", &assembly.evicted));
    }
    if !assembly.sticky_in.is_empty() {
        let _ = writeln!(out, "sticky in: {}", list("T", &assembly.sticky_in));
    }
    if !assembly.summaries.is_empty() {
        let _ = writeln!(out, "summaries: {}", list("S", &assembly.summaries));
    }
    if !assembly.rules.is_empty() {
        out.push_str("rules:\n");
    }
    for decision in &assembly.rules {
        let reason = decision.reason.map(|reason| format!(" ({})", name(&reason))).unwrap_or_default();
        let _ = writeln!(out, "  R-{}: {}{reason}", decision.rule, name(&decision.disposition));
    }
    if !assembly.cascade.is_empty() {
        out.push_str("cascade:\n");
    }
    for found in &assembly.cascade {
        let reason = found.reason.map(|reason| format!(" ({})", name(&reason))).unwrap_or_default();
        let _ = writeln!(
            out,
            "  T-{} by {} at depth {}: {}{reason}",
            found.term,
            found.by,
            found.depth,
            name(&found.disposition)
        );
    }
    out
}

/// Assembles `prev` in order (each receipt's `recent` feeding the next), then `chunk`,
/// and checks the rendering of the last assembly.
fn check(glossary: &str, chapter: u32, chunk: &str, prev: &[(u32, &str)], expect: Expect) {
    let frozen = frozen(glossary);
    let mut previous: Option<(u32, Vec<Vec<u32>>)> = None;
    for &(prev_chapter, prev_chunk) in prev {
        let link = previous.as_ref().map(|(chapter, recent)| Previous { chapter: *chapter, recent });
        let assembly = assemble(&frozen, prev_chapter, prev_chunk, link).expect("assemble a previous chunk");
        previous = Some((prev_chapter, assembly.recent));
    }
    let link = previous.as_ref().map(|(chapter, recent)| Previous { chapter: *chapter, recent });
    let assembly = assemble(&frozen, chapter, chunk, link).expect("assemble");
    // The same inputs give the same bytes.
    assert_eq!(assemble(&frozen, chapter, chunk, link).expect("assemble again"), assembly);
    expect.assert_eq(&render(&assembly));
}

// ---- Fold and match -------------------------------------------------------------

const SECT: &str = r#"
{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь","kind":"character","gender":"m","decl":["Сяо Яня","Сяо Яню"]}}
{"term_put":{"id":"T-2","src":"长明","dst":"Чанмин","kind":"artifact","gender":"m"}}
{"term_put":{"id":"T-3","src":"长明灯","dst":"негасимая лампада","kind":"object","gender":"f"}}
{"alias_added":{"id":"T-1","surface":"炎子","kind":"nickname"}}
"#;

#[test]
fn a_line_is_src_dst_tags_and_declension() {
    check(
        SECT,
        1,
        "萧炎拔出长明。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 萧炎 -> Сяо Янь #character, m; Сяо Яня, Сяо Яню
              | 长明 -> Чанмин #artifact, m
            hits:
              萧炎 chars 0..2 T-1: confirmed
              长明 chars 4..6 T-2: confirmed
            injected:
              T-1 via hit, 16 tokens
              T-2 via hit, 10 tokens
        "#]],
    );
}

#[test]
fn the_longest_key_wins_and_traditional_spellings_fold() {
    // 長明燈 folds to 长明灯: the lamp, never the sword 长明 inside it. 蕭炎 is 萧炎, and
    // the alias 炎子 names the same record, which is injected once.
    check(
        SECT,
        1,
        "蕭炎點亮長明燈，炎子笑了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 萧炎 -> Сяо Янь #character, m; Сяо Яня, Сяо Яню
              | 长明灯 -> негасимая лампада #object, f
            hits:
              蕭炎 chars 0..2 T-1: confirmed
              長明燈 chars 4..7 T-3: confirmed
              炎子 chars 8..10 T-1: confirmed
            injected:
              T-1 via hit, 16 tokens
              T-3 via hit, 14 tokens
        "#]],
    );
}

#[test]
fn an_empty_match_injects_nothing() {
    check(
        SECT,
        1,
        "这一段里没有任何词条。",
        &[],
        expect![[r#"
        context:
          (empty)
        hits:
          (none)
        injected:
          (none)
    "#]],
    );
}

// ---- Decide per hit: windows ----------------------------------------------------

const WINDOWS: &str = r#"
{"term_put":{"id":"T-1","src":"药老","dst":"Яо Лао","window":{"since":1,"until":9}}}
{"term_put":{"id":"T-2","src":"药尘","dst":"Яо Чэнь","window":{"since":5},"supersedes":"T-1"}}
{"term_put":{"id":"T-3","src":"萧炎","dst":"Сяо Янь"}}
{"alias_added":{"id":"T-3","surface":"炎帝","kind":"title","window":{"since":8}}}
{"term_put":{"id":"T-4","src":"纳兰","dst":"Налань","window":{"since":1,"until":2}}}
"#;

#[test]
fn a_record_whose_window_starts_later_is_a_spoiler() {
    // T-2 starts at chapter 5; the alias 炎帝 of T-3 at chapter 8.
    check(
        WINDOWS,
        3,
        "药老说：药尘就是我。炎帝萧炎。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 药老 -> Яо Лао
          | 萧炎 -> Сяо Янь
        hits:
          药老 chars 0..2 T-1: confirmed
          药尘 chars 4..6 T-2: rejected (spoiler_window)
          炎帝 chars 10..12 T-3: rejected (spoiler_window)
          萧炎 chars 12..14 T-3: confirmed
        injected:
          T-1 via hit, 6 tokens
          T-3 via hit, 7 tokens
    "#]],
    );
}

#[test]
fn a_superseded_or_expired_record_is_out_of_window() {
    // From chapter 5, T-2 supersedes T-1, whose window is cut to end at chapter 4;
    // T-4's window ended at chapter 2.
    check(
        WINDOWS,
        6,
        "药老说：药尘就是我。纳兰来了。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 药尘 -> Яо Чэнь
        hits:
          药老 chars 0..2 T-1: rejected (out_of_window)
          药尘 chars 4..6 T-2: confirmed
          纳兰 chars 10..12 T-4: rejected (out_of_window)
        injected:
          T-2 via hit, 7 tokens
    "#]],
    );
}

// ---- Decide per hit: status and verdicts ----------------------------------------

const STATUS: &str = r#"
{"term_put":{"id":"T-1","src":"灯宗","dst":"Секта Фонаря","status":"auto"}}
{"term_put":{"id":"T-2","src":"夜宗","dst":"Ночная секта","status":"draft"}}
{"term_put":{"id":"T-3","src":"雾川","dst":"Мглистая река"}}
"#;

#[test]
fn an_auto_or_draft_record_is_unreviewed() {
    check(
        STATUS,
        1,
        "灯宗与夜宗隔着雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 雾川 -> Мглистая река
          | 灯宗 -> Секта Фонаря [unverified]
          | 夜宗 -> Ночная секта [unverified]
        hits:
          灯宗 chars 0..2 T-1: ambiguous (unreviewed)
          夜宗 chars 3..5 T-2: ambiguous (unreviewed)
          雾川 chars 7..9 T-3: confirmed
        injected:
          T-3 via hit, 9 tokens
          T-1 via hit, unverified, 12 tokens
          T-2 via hit, unverified, 12 tokens
    "#]],
    );
}

#[test]
fn every_verdict() {
    // accept: the auto T-1 is confirmed. verify: the approved T-3 is flagged.
    // reject: the approved T-4 is blocked. withdraw: T-2 is judged by its status
    // (draft) again.
    let glossary = format!(
        "{STATUS}{}",
        r#"
{"term_put":{"id":"T-4","src":"沈照","dst":"Шэнь Чжао"}}
{"disposition_set":{"target":"T-1","verdict":"accept","reason":"checked"}}
{"disposition_set":{"target":"T-2","verdict":"accept","reason":"checked"}}
---
{"disposition_set":{"target":"T-2","verdict":"withdraw","reason":"too_early"}}
{"disposition_set":{"target":"T-3","verdict":"verify","reason":"wrong_gender"}}
{"disposition_set":{"target":"T-4","verdict":"reject","reason":"spoiler"}}
"#
    );
    check(
        &glossary,
        1,
        "灯宗与夜宗隔着雾川，沈照看着。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 灯宗 -> Секта Фонаря
          | 夜宗 -> Ночная секта [unverified]
          | 雾川 -> Мглистая река [unverified]
        hits:
          灯宗 chars 0..2 T-1: confirmed
          夜宗 chars 3..5 T-2: ambiguous (unreviewed)
          雾川 chars 7..9 T-3: ambiguous (flagged_for_verification)
          沈照 chars 10..12 T-4: rejected (blocked_by_disposition)
        injected:
          T-1 via hit, 8 tokens
          T-2 via hit, unverified, 12 tokens
          T-3 via hit, unverified, 12 tokens
    "#]],
    );
}

// ---- Decide per hit: secondary keys ---------------------------------------------

const SECONDARY: &str = r#"
{"term_put":{"id":"T-1","src":"长老","dst":"старейшина (and_any)","secondary":{"logic":"and_any","keys":["宗门","夜里"]}}}
{"term_put":{"id":"T-2","src":"师兄","dst":"старший брат (and_all)","secondary":{"logic":"and_all","keys":["宗门","夜里"]}}}
{"term_put":{"id":"T-3","src":"师姐","dst":"старшая сестра (not_any)","secondary":{"logic":"not_any","keys":["宗门","夜里"]}}}
{"term_put":{"id":"T-4","src":"掌门","dst":"глава (not_all)","secondary":{"logic":"not_all","keys":["宗门","夜里"]}}}
"#;

#[test]
fn secondary_keys_with_one_key_present() {
    // 宗門 folds to the key 宗门; 夜里 is absent.
    check(
        SECONDARY,
        1,
        "長老、师兄、师姐、掌门都在宗門。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 长老 -> старейшина (and_any)
          | 掌门 -> глава (not_all)
        hits:
          長老 chars 0..2 T-1: confirmed
          师兄 chars 3..5 T-2: rejected (secondary_keys)
          师姐 chars 6..8 T-3: rejected (secondary_keys)
          掌门 chars 9..11 T-4: confirmed
        injected:
          T-1 via hit, 11 tokens
          T-4 via hit, 9 tokens
    "#]],
    );
}

#[test]
fn secondary_keys_with_every_key_present() {
    check(
        SECONDARY,
        1,
        "夜里，长老、师兄、师姐、掌门都在宗门。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 长老 -> старейшина (and_any)
          | 师兄 -> старший брат (and_all)
        hits:
          长老 chars 3..5 T-1: confirmed
          师兄 chars 6..8 T-2: confirmed
          师姐 chars 9..11 T-3: rejected (secondary_keys)
          掌门 chars 12..14 T-4: rejected (secondary_keys)
        injected:
          T-1 via hit, 11 tokens
          T-2 via hit, 11 tokens
    "#]],
    );
}

#[test]
fn secondary_keys_with_no_key_present() {
    check(
        SECONDARY,
        1,
        "长老、师兄、师姐、掌门都在山上。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 师姐 -> старшая сестра (not_any)
          | 掌门 -> глава (not_all)
        hits:
          长老 chars 0..2 T-1: rejected (secondary_keys)
          师兄 chars 3..5 T-2: rejected (secondary_keys)
          师姐 chars 6..8 T-3: confirmed
          掌门 chars 9..11 T-4: confirmed
        injected:
          T-3 via hit, 12 tokens
          T-4 via hit, 9 tokens
    "#]],
    );
}

// ---- Decide per hit: senses -----------------------------------------------------

const SENSES: &str = r#"
{"term_put":{"id":"T-1","src":"长明","sense":"sword","dst":"Чанмин","kind":"artifact"}}
{"term_put":{"id":"T-2","src":"长明","sense":"person","dst":"Чанмин","kind":"character","priority":5}}
{"term_put":{"id":"T-3","src":"白衣","sense":"title","dst":"Господин в белом","secondary":{"logic":"and_any","keys":["先生"]}}}
{"term_put":{"id":"T-4","src":"白衣","sense":"clothes","dst":"белые одежды","secondary":{"logic":"not_any","keys":["先生"]}}}
"#;

#[test]
fn several_senses_left_for_a_surface_collide() {
    // Both senses of 长明 remain: both are injected, unverified, by priority.
    check(
        SENSES,
        1,
        "他握紧了长明。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 长明 -> Чанмин #character [unverified]
          | 长明 -> Чанмин #artifact [unverified]
        hits:
          长明 chars 4..6 T-1: ambiguous (sense_collision)
          长明 chars 4..6 T-2: ambiguous (sense_collision)
        injected:
          T-2 via hit, unverified, 14 tokens
          T-1 via hit, unverified, 13 tokens
    "#]],
    );
}

#[test]
fn secondary_keys_settle_a_sense() {
    // 先生 is present: the title sense holds, the clothes sense is rejected.
    check(
        SENSES,
        1,
        "白衣先生来了。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 白衣 -> Господин в белом
        hits:
          白衣 chars 0..2 T-3: confirmed
          白衣 chars 0..2 T-4: rejected (secondary_keys)
        injected:
          T-3 via hit, 9 tokens
    "#]],
    );
}

// ---- Sticky and constant records ------------------------------------------------

const SCENE: &str = r#"
{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао","priority":1}}
{"term_put":{"id":"T-2","src":"顾寒川","dst":"Гу Ханьчуань","priority":3}}
{"term_put":{"id":"T-3","src":"雾川","dst":"Мглистая река","constant":true}}
{"term_put":{"id":"T-4","src":"夜宗","dst":"Ночная секта","constant":true,"window":{"since":4}}}
{"term_put":{"id":"T-5","src":"灯宗","dst":"Секта Фонаря","status":"auto","priority":2}}
{"term_put":{"id":"T-6","src":"长明灯","dst":"негасимая лампада"}}
{"disposition_set":{"target":"T-6","verdict":"reject","reason":"spoiler"}}
{"term_put":{"id":"T-7","src":"白衣","dst":"Господин в белом","constant":true}}
{"disposition_set":{"target":"T-7","verdict":"reject","reason":"spoiler"}}
{"term_put":{"id":"T-8","src":"长老","dst":"старейшина","constant":true}}
{"disposition_set":{"target":"T-8","verdict":"verify","reason":"wrong_gender"}}
"#;

#[test]
fn constant_records_in_their_window_come_without_a_hit() {
    // T-3 is constant from chapter 1, T-4 only from chapter 4. Verdicts hold as for
    // hits: the rejected T-7 stays out, the flagged T-8 is marked.
    check(
        SCENE,
        2,
        "这一段里没有任何词条。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 雾川 -> Мглистая река
          | 长老 -> старейшина [unverified]
        hits:
          (none)
        injected:
          T-3 via constant, 9 tokens
          T-8 via constant, unverified, 12 tokens
    "#]],
    );
}

#[test]
fn a_constant_record_hit_in_the_chunk_is_injected_once() {
    // Hit in the chunk, T-4 and T-3 go in once each, as hits, in text order.
    check(
        SCENE,
        4,
        "夜宗的人渡过雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 长老 -> старейшина [unverified]
          | 夜宗 -> Ночная секта
          | 雾川 -> Мглистая река
        hits:
          夜宗 chars 0..2 T-4: confirmed
          雾川 chars 6..8 T-3: confirmed
        injected:
          T-8 via constant, unverified, 12 tokens
          T-4 via hit, 8 tokens
          T-3 via hit, 9 tokens
    "#]],
    );
}

#[test]
fn records_hit_in_the_previous_chunks_of_the_chapter_are_sticky() {
    // Hit in the two previous chunks (sticky_chunks is 2 by default): T-2, T-5 and
    // T-1, by priority, after the constants; the rejected T-6 was never a hit, and the
    // unreviewed T-5 is marked.
    check(
        SCENE,
        1,
        "他们走了很久。",
        &[(1, "沈照提着长明灯。"), (1, "顾寒川与灯宗的人说话。")],
        expect![[r#"
            context:
              | [glossary]
              | 雾川 -> Мглистая река
              | 长老 -> старейшина [unverified]
              | 顾寒川 -> Гу Ханьчуань
              | 灯宗 -> Секта Фонаря [unverified]
              | 沈照 -> Шэнь Чжао
            hits:
              (none)
            injected:
              T-3 via constant, 9 tokens
              T-8 via constant, unverified, 12 tokens
              T-2 via sticky, 9 tokens
              T-5 via sticky, unverified, 12 tokens
              T-1 via sticky, 7 tokens
            sticky in: T-2 T-5 T-1
        "#]],
    );
}

#[test]
fn sticky_records_last_sticky_chunks_chunks() {
    // 沈照 was hit three chunks ago: with sticky_chunks 2 it is no longer carried.
    check(
        SCENE,
        1,
        "他们走了很久。",
        &[(1, "沈照提着灯。"), (1, "顾寒川说话。"), (1, "没有词条。")],
        expect![[r#"
            context:
              | [glossary]
              | 雾川 -> Мглистая река
              | 长老 -> старейшина [unverified]
              | 顾寒川 -> Гу Ханьчуань
            hits:
              (none)
            injected:
              T-3 via constant, 9 tokens
              T-8 via constant, unverified, 12 tokens
              T-2 via sticky, 9 tokens
            sticky in: T-2
        "#]],
    );
}

#[test]
fn sticky_records_do_not_cross_chapters() {
    check(
        SCENE,
        2,
        "他们走了很久。",
        &[(1, "沈照与顾寒川。")],
        expect![[r#"
        context:
          | [glossary]
          | 雾川 -> Мглистая река
          | 长老 -> старейшина [unverified]
        hits:
          (none)
        injected:
          T-3 via constant, 9 tokens
          T-8 via constant, unverified, 12 tokens
    "#]],
    );
}

// ---- Order ----------------------------------------------------------------------

const ORDER: &str = r#"
{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао"}}
{"term_put":{"id":"T-2","src":"顾寒川","dst":"Гу Ханьчуань"}}
{"term_put":{"id":"T-3","src":"雾川","dst":"Мглистая река","constant":true,"priority":1}}
{"term_put":{"id":"T-4","src":"夜宗","dst":"Ночная секта","constant":true,"priority":1}}
{"term_put":{"id":"T-5","src":"宗主","dst":"глава секты","constant":true,"priority":7}}
{"term_put":{"id":"T-6","src":"灯宗","dst":"Секта Фонаря","status":"auto"}}
{"term_put":{"id":"T-7","src":"白衣","dst":"Господин в белом","status":"auto","priority":4}}
{"term_put":{"id":"T-8","src":"长老","dst":"старейшина","priority":2}}
{"term_put":{"id":"T-9","src":"师兄","dst":"старший брат","priority":2}}
"#;

#[test]
fn order_is_constant_confirmed_sticky_ambiguous() {
    // Constant by priority then id (T-5, T-3, T-4); confirmed by first occurrence
    // (顾寒川 before 沈照); sticky by priority then id (T-8, T-9); ambiguous by priority
    // (T-7 before T-6).
    check(
        ORDER,
        1,
        "灯宗的顾寒川见了白衣与沈照。",
        &[(1, "师兄和长老。")],
        expect![[r#"
            context:
              | [glossary]
              | 宗主 -> глава секты
              | 雾川 -> Мглистая река
              | 夜宗 -> Ночная секта
              | 顾寒川 -> Гу Ханьчуань
              | 沈照 -> Шэнь Чжао
              | 长老 -> старейшина
              | 师兄 -> старший брат
              | 白衣 -> Господин в белом [unverified]
              | 灯宗 -> Секта Фонаря [unverified]
            hits:
              灯宗 chars 0..2 T-6: ambiguous (unreviewed)
              顾寒川 chars 3..6 T-2: confirmed
              白衣 chars 8..10 T-7: ambiguous (unreviewed)
              沈照 chars 11..13 T-1: confirmed
            injected:
              T-5 via constant, 8 tokens
              T-3 via constant, 9 tokens
              T-4 via constant, 8 tokens
              T-2 via hit, 9 tokens
              T-1 via hit, 7 tokens
              T-8 via sticky, 8 tokens
              T-9 via sticky, 8 tokens
              T-7 via hit, unverified, 13 tokens
              T-6 via hit, unverified, 12 tokens
            sticky in: T-8 T-9
        "#]],
    );
}

// ---- Budget ---------------------------------------------------------------------

#[test]
fn the_budget_is_filled_first_fit_and_never_padded() {
    // Budget 20: T-1 (7 tokens) fits; T-2 (20 tokens: 3 ideographs and 51 other
    // chars, ceil(3 + 15.3) + 1) would make 27 and is evicted; the shorter T-3 (7)
    // still fits after it, for 14 of 20. The block is not padded to the budget.
    let glossary = r#"
{"config_set":{"assembly":{"token_budget":20,"sticky_chunks":2,"min_key_chars":2,"render_format":1,"token_estimator":1},"profile":{"name":"zh"}}}
{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао"}}
{"term_put":{"id":"T-2","src":"长明灯","dst":"негасимая лампада","kind":"object","gender":"f","decl":["негасимой лампады"]}}
{"term_put":{"id":"T-3","src":"雾川","dst":"Мглистая"}}
"#;
    check(
        glossary,
        1,
        "沈照提着长明灯过雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 沈照 -> Шэнь Чжао
          | 雾川 -> Мглистая
        hits:
          沈照 chars 0..2 T-1: confirmed
          长明灯 chars 4..7 T-2: confirmed
          雾川 chars 8..10 T-3: confirmed
        injected:
          T-1 via hit, 7 tokens
          T-3 via hit, 7 tokens
        evicted (budget): T-2
    "#]],
    );
}

// ---- Summaries ------------------------------------------------------------------

const SUMMARIES: &str = r#"
{"summary_put":{"id":"S-1","scope":"book","text":"Юный Шэнь Чжао   ищет\nнегасимую лампаду."}}
{"summary_put":{"id":"S-2","scope":{"chapter":2},"text":"Глава 2: письмо."}}
{"summary_put":{"id":"S-3","scope":{"chapter":3},"text":"Глава 3: раскрытие.","visible_from":6}}
"#;

#[test]
fn the_book_summary_shows_from_chapter_one() {
    // Whitespace inside a summary collapses to single spaces.
    check(
        SUMMARIES,
        1,
        "这一段里没有任何词条。",
        &[],
        expect![[r#"
        context:
          | [summaries]
          | (book) Юный Шэнь Чжао ищет негасимую лампаду.
        hits:
          (none)
        injected:
          (none)
        summaries: S-1
    "#]],
    );
}

#[test]
fn the_previous_chapters_summary_shows_in_the_next_chapter() {
    check(
        SUMMARIES,
        3,
        "这一段里没有任何词条。",
        &[],
        expect![[r#"
        context:
          | [summaries]
          | (book) Юный Шэнь Чжао ищет негасимую лампаду.
          | (chapter 2) Глава 2: письмо.
        hits:
          (none)
        injected:
          (none)
        summaries: S-1 S-2
    "#]],
    );
}

#[test]
fn a_chapter_summary_waits_for_its_visible_from() {
    // S-3 covers chapter 3 but is visible only from chapter 6.
    check(
        SUMMARIES,
        4,
        "这一段里没有任何词条。",
        &[],
        expect![[r#"
        context:
          | [summaries]
          | (book) Юный Шэнь Чжао ищет негасимую лампаду.
        hits:
          (none)
        injected:
          (none)
        summaries: S-1
    "#]],
    );
}

const ARCS: &str = r#"
{"summary_put":{"id":"S-1","scope":"book","text":"Книга."}}
{"summary_put":{"id":"S-4","scope":{"arc":{"from":1,"to":2}},"text":"Арка 1-2, пересказ."}}
{"summary_put":{"id":"S-5","scope":{"arc":{"from":3,"to":5}},"text":"Арка 3-5, пересказ.","visible_from":7}}
"#;

#[test]
fn an_arc_summary_is_a_recap_shown_from_visible_from_on() {
    // S-4 (arc 1-2, visible by default from chapter 3, the chapter after the arc)
    // should show at chapter 3 as the recap of chapters 1-2; S-5 (arc 3-5, visible
    // from 7) not yet.
    check(
        ARCS,
        3,
        "这一段里没有任何词条。",
        &[],
        expect![[r#"
            context:
              | [summaries]
              | (book) Книга.
              | (arc, chapters 1-2) Арка 1-2, пересказ.
            hits:
              (none)
            injected:
              (none)
            summaries: S-1 S-4
        "#]],
    );
}

// ---- Conflict policies -------------------------------------------------------------

/// Two senses of 长明: the sword, found with its secondary key 剑, and a chant word
/// without secondary keys; and two records that render the same dst.
fn senses(policy: &str) -> String {
    format!(
        r#"
{{"governance_set":{{"conflict_policy":"{policy}"}}}}
{{"term_put":{{"id":"T-1","src":"长明","sense":"sword","dst":"Чанмин","kind":"artifact","secondary":{{"logic":"and_any","keys":["剑"]}},"priority":1}}}}
{{"term_put":{{"id":"T-2","src":"长明","sense":"chant","dst":"Вечный свет","kind":"word","status":"auto","priority":5}}}}
{{"term_put":{{"id":"T-3","src":"阿青","dst":"А Цин","kind":"character","priority":2}}}}
{{"term_put":{{"id":"T-4","src":"阿清","dst":"А Цин","kind":"character","status":"auto"}}}}
"#
    )
}

#[test]
fn flag_marks_every_sense_that_passes_unverified() {
    // The policy of a book that declares none: both senses are injected, unverified;
    // two records rendering the same dst are injected as they are.
    check(
        &senses("flag"),
        1,
        "他握着剑柄，长明出鞘。阿青和阿清都来了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 阿青 -> А Цин #character
              | 长明 -> Вечный свет #word [unverified]
              | 长明 -> Чанмин #artifact [unverified]
              | 阿清 -> А Цин #character [unverified]
            hits:
              长明 chars 6..8 T-1: ambiguous (sense_collision)
              长明 chars 6..8 T-2: ambiguous (sense_collision)
              阿青 chars 11..13 T-3: confirmed
              阿清 chars 14..16 T-4: ambiguous (unreviewed)
            injected:
              T-3 via hit, 9 tokens
              T-2 via hit, unverified, 14 tokens
              T-1 via hit, unverified, 13 tokens
              T-4 via hit, unverified, 13 tokens
        "#]],
    );
}

#[test]
fn prefer_specific_takes_the_sense_whose_secondary_keys_matched() {
    check(
        &senses("prefer_specific"),
        1,
        "他握着剑柄，长明出鞘。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 长明 -> Чанмин #artifact
            hits:
              长明 chars 6..8 T-1: confirmed (policy_prefer_specific)
              长明 chars 6..8 T-2: rejected (policy_prefer_specific)
            injected:
              T-1 via hit, 9 tokens
        "#]],
    );
}

#[test]
fn prefer_priority_takes_the_sense_of_the_highest_priority_and_settles_a_shared_dst() {
    check(
        &senses("prefer_priority"),
        1,
        "他握着剑柄，长明出鞘。阿青和阿清都来了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 阿青 -> А Цин #character
              | 长明 -> Вечный свет #word [unverified]
            hits:
              长明 chars 6..8 T-1: rejected (policy_prefer_priority)
              长明 chars 6..8 T-2: ambiguous (unreviewed)
              阿青 chars 11..13 T-3: confirmed
              阿清 chars 14..16 T-4: rejected (policy_prefer_priority)
            injected:
              T-3 via hit, 9 tokens
              T-2 via hit, unverified, 14 tokens
        "#]],
    );
}

#[test]
fn the_loser_of_a_shared_dst_is_not_carried_in_as_sticky_either() {
    // 阿清 was hit in the previous chunk; here it loses to 阿青 on priority, and stays out.
    check(
        &senses("prefer_priority"),
        1,
        "阿青和阿清都来了。",
        &[(1, "阿清来了。")],
        expect![[r#"
        context:
          | [glossary]
          | 阿青 -> А Цин #character
        hits:
          阿青 chars 0..2 T-3: confirmed
          阿清 chars 3..5 T-4: rejected (policy_prefer_priority)
        injected:
          T-3 via hit, 9 tokens
    "#]],
    );
}

#[test]
fn prefer_approved_takes_the_reviewed_record() {
    check(
        &senses("prefer_approved"),
        1,
        "他握着剑柄，长明出鞘。阿青和阿清都来了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 长明 -> Чанмин #artifact
              | 阿青 -> А Цин #character
            hits:
              长明 chars 6..8 T-1: confirmed (policy_prefer_approved)
              长明 chars 6..8 T-2: rejected (policy_prefer_approved)
              阿青 chars 11..13 T-3: confirmed
              阿清 chars 14..16 T-4: rejected (policy_prefer_approved)
            injected:
              T-1 via hit, 9 tokens
              T-3 via hit, 9 tokens
        "#]],
    );
}

#[test]
fn a_policy_that_prefers_no_single_record_falls_back_to_flag() {
    // Two senses whose secondary keys both matched: neither is preferred, and both are
    // flagged as under `flag`. With only 塔 in the chunk, the sword's keys fail and the
    // tower is the one sense left: confirmed, no policy needed.
    let glossary = r#"
{"governance_set":{"conflict_policy":"prefer_specific"}}
{"term_put":{"id":"T-1","src":"长明","sense":"sword","dst":"Чанмин","secondary":{"logic":"and_any","keys":["剑"]}}}
{"term_put":{"id":"T-2","src":"长明","sense":"tower","dst":"Башня Чанмин","secondary":{"logic":"and_any","keys":["塔"]}}}
"#;
    check(
        glossary,
        1,
        "塔下，长明在此。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 长明 -> Башня Чанмин
        hits:
          长明 chars 3..5 T-1: rejected (secondary_keys)
          长明 chars 3..5 T-2: confirmed
        injected:
          T-2 via hit, 8 tokens
    "#]],
    );
    check(
        glossary,
        1,
        "塔下有剑，长明在此。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 长明 -> Чанмин [unverified]
              | 长明 -> Башня Чанмин [unverified]
            hits:
              长明 chars 5..7 T-1: ambiguous (sense_collision)
              长明 chars 5..7 T-2: ambiguous (sense_collision)
            injected:
              T-1 via hit, unverified, 10 tokens
              T-2 via hit, unverified, 12 tokens
        "#]],
    );
}

// ---- Rules (render format 2) -------------------------------------------------------

const RULES: &str = r#"
{"config_set":{"assembly":{"render_format":2},"profile":{"name":"zh"}}}
{"term_put":{"id":"T-1","src":"顾寒川","dst":"Гу Ханьчуань","kind":"character","gender":"m"}}
{"term_put":{"id":"T-2","src":"雾川","dst":"Мглистая река","kind":"place","gender":"f"}}
{"rule_put":{"id":"R-1","text":"Гу Ханьчуань говорит ученикам «ты»;\nученики ему — «вы».","applies_to":["dialogue"],"does_not_apply_to":[]}}
{"rule_put":{"id":"R-2","text":"Названия мест не склонять в заголовках.","applies_to":[{"kind":"place"}],"does_not_apply_to":[{"chapters":{"since":3,"until":3}}],"priority":3}}
{"rule_put":{"id":"R-3","text":"Ночную секту называть только после главы 4.","applies_to":[{"record":"T-1"}],"window":{"since":4}}}
{"rule_put":{"id":"R-4","text":"Черновое правило.","applies_to":["narration"],"status":"draft"}}
"#;

#[test]
fn a_dialogue_rule_is_injected_in_a_chunk_with_dialogue_only() {
    check(
        RULES,
        1,
        "顾寒川说：“回去。”",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 顾寒川 -> Гу Ханьчуань #character, m
          | [rules]
          | Гу Ханьчуань говорит ученикам «ты»; ученики ему — «вы».
          | Черновое правило. [unverified]
        hits:
          顾寒川 chars 0..3 T-1: confirmed
        injected:
          T-1 via hit, 13 tokens
        rules:
          R-1: confirmed
          R-3: rejected (spoiler_window)
          R-4: ambiguous (unreviewed)
    "#]],
    );
    check(
        RULES,
        1,
        "顾寒川站在渡口。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 顾寒川 -> Гу Ханьчуань #character, m
          | [rules]
          | Черновое правило. [unverified]
        hits:
          顾寒川 chars 0..3 T-1: confirmed
        injected:
          T-1 via hit, 13 tokens
        rules:
          R-3: rejected (spoiler_window)
          R-4: ambiguous (unreviewed)
    "#]],
    );
}

#[test]
fn scopes_by_kind_record_and_chapters_and_the_window_of_a_rule() {
    // Chapter 2: R-2 (a place is called for), R-3 spoiler-blocked (from chapter 4), R-4
    // unverified (a draft, narration). Chapter 3: R-2 is excluded there.
    check(
        RULES,
        2,
        "顾寒川回到雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 顾寒川 -> Гу Ханьчуань #character, m
          | 雾川 -> Мглистая река #place, f
          | [rules]
          | Названия мест не склонять в заголовках.
          | Черновое правило. [unverified]
        hits:
          顾寒川 chars 0..3 T-1: confirmed
          雾川 chars 5..7 T-2: confirmed
        injected:
          T-1 via hit, 13 tokens
          T-2 via hit, 12 tokens
        rules:
          R-2: confirmed
          R-3: rejected (spoiler_window)
          R-4: ambiguous (unreviewed)
    "#]],
    );
    check(
        RULES,
        3,
        "顾寒川回到雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 顾寒川 -> Гу Ханьчуань #character, m
          | 雾川 -> Мглистая река #place, f
          | [rules]
          | Черновое правило. [unverified]
        hits:
          顾寒川 chars 0..3 T-1: confirmed
          雾川 chars 5..7 T-2: confirmed
        injected:
          T-1 via hit, 13 tokens
          T-2 via hit, 12 tokens
        rules:
          R-3: rejected (spoiler_window)
          R-4: ambiguous (unreviewed)
    "#]],
    );
    check(
        RULES,
        4,
        "顾寒川回到雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 顾寒川 -> Гу Ханьчуань #character, m
          | 雾川 -> Мглистая река #place, f
          | [rules]
          | Названия мест не склонять в заголовках.
          | Ночную секту называть только после главы 4.
          | Черновое правило. [unverified]
        hits:
          顾寒川 chars 0..3 T-1: confirmed
          雾川 chars 5..7 T-2: confirmed
        injected:
          T-1 via hit, 13 tokens
          T-2 via hit, 12 tokens
        rules:
          R-2: confirmed
          R-3: confirmed
          R-4: ambiguous (unreviewed)
    "#]],
    );
}

#[test]
fn a_rejected_rule_is_not_injected_and_rules_share_the_budget_after_terms() {
    let glossary = format!(
        "{RULES}{}",
        r#"{"disposition_set":{"target":"R-4","verdict":"reject","reason":"too_vague"}}
---
{"config_set":{"assembly":{"token_budget":30,"render_format":2},"profile":{"name":"zh"}}}
"#
    );
    check(
        &glossary,
        2,
        "顾寒川回到雾川。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 顾寒川 -> Гу Ханьчуань #character, m
          | 雾川 -> Мглистая река #place, f
        hits:
          顾寒川 chars 0..3 T-1: confirmed
          雾川 chars 5..7 T-2: confirmed
        injected:
          T-1 via hit, 13 tokens
          T-2 via hit, 12 tokens
        rules:
          R-2: rejected (budget)
          R-3: rejected (spoiler_window)
          R-4: rejected (blocked_by_disposition)
    "#]],
    );
}

#[test]
fn render_format_1_renders_no_rules_block() {
    // A book on format 1 holds no rules (decide refuses them); its contexts are the
    // bytes format 2 gives a book without rules.
    let format_1 = r#"
{"config_set":{"assembly":{"render_format":1},"profile":{"name":"zh"}}}
{"term_put":{"id":"T-1","src":"顾寒川","dst":"Гу Ханьчуань","kind":"character","gender":"m"}}
"#;
    let format_2 = format_1.replace(r#""render_format":1"#, r#""render_format":2"#);
    let one = assemble(&frozen(format_1), 1, "顾寒川说：“回去。”", None).unwrap();
    let two = assemble(&frozen(&format_2), 1, "顾寒川说：“回去。”", None).unwrap();
    assert_eq!(one.context, two.context);
    assert!(two.rules.is_empty());
}

fn example(term: u32, source: &str, target: &str) -> Example {
    Example {
        term,
        source: source.into(),
        target: target.into(),
        chapter: 1,
        receipt: Hash32([term as u8; 32]),
        check: Hash32([0xC0 | term as u8; 32]),
    }
}

#[test]
fn render_format_3_shows_an_offered_example_for_a_term_injected_for_a_hit() {
    let format_3 = r#"
{"config_set":{"assembly":{"render_format":3,"token_budget":800},"profile":{"name":"zh"}}}
{"term_put":{"id":"T-1","src":"顾寒川","dst":"Гу Ханьчуань","kind":"character","gender":"m"}}
{"term_put":{"id":"T-2","src":"沈照","dst":"Шэнь Чжао","kind":"character","gender":"f"}}
{"term_put":{"id":"T-3","src":"长明","dst":"Чанмин","constant":true}}
"#;
    let frozen = frozen(format_3);
    let text = "顾寒川说：“回去。”";
    // Without examples, format 3 renders format 2's bytes.
    let format_2 = format_3.replace(r#""render_format":3"#, r#""render_format":2"#);
    let bare = assemble(&frozen, 2, text, None).unwrap();
    assert_eq!(bare.context, assemble(&self::frozen(&format_2), 2, text, None).unwrap().context);
    assert!(bare.examples.is_empty());
    let offered = [
        // T-1's first example is the one shown; the second is never used.
        example(1, "沈照看着顾寒川，\n没有说话。", "Шэнь Чжао смотрела на  Гу Ханьчуаня и молчала."),
        example(1, "顾寒川走了。", "Гу Ханьчуань ушёл."),
        // T-2 is not hit in this chunk; T-3 comes in as a constant, not for a hit.
        example(2, "沈照醒了。", "Шэнь Чжао проснулась."),
        example(3, "长明亮了。", "Чанмин засветился."),
    ];
    let shown = assemble_with(&frozen, 2, text, None, &offered).unwrap();
    assert_eq!(
        shown.context,
        format!(
            "{}[examples]\n沈照看着顾寒川， 没有说话。 -> Шэнь Чжао смотрела на Гу Ханьчуаня и молчала.\n",
            bare.context
        )
    );
    assert_eq!(shown.examples.len(), 1);
    assert_eq!(shown.examples[0].example, offered[0]);
    // Everything else is as without examples.
    assert_eq!((&shown.injected, &shown.hits, &shown.evicted), (&bare.injected, &bare.hits, &bare.evicted));
    // Formats 1 and 2 show none.
    assert_eq!(assemble_with(&self::frozen(&format_2), 2, text, None, &offered).unwrap().context, bare.context);
}

#[test]
fn an_example_comes_after_terms_and_rules_in_the_budget_and_is_left_out_when_it_does_not_fit() {
    let glossary = |budget: u32| {
        format!(
            r#"
{{"config_set":{{"assembly":{{"render_format":3,"token_budget":{budget}}},"profile":{{"name":"zh"}}}}}}
{{"term_put":{{"id":"T-1","src":"顾寒川","dst":"Гу Ханьчуань"}}}}
"#
        )
    };
    let offered = [example(1, "沈照看着顾寒川。", "Шэнь Чжао смотрела на Гу Ханьчуаня.")];
    let text = "顾寒川说：“回去。”";
    // A budget of exactly the line and the example holds both; one token less, the line
    // alone.
    let line = assembly::assemble::estimate_tokens_v1("顾寒川 -> Гу Ханьчуань");
    let example_tokens = assembly::assemble::estimate_tokens_v1(&assembly::assemble::render_example_v3(
        &offered[0].source,
        &offered[0].target,
    ));
    let fits = assemble_with(&frozen(&glossary(line + example_tokens)), 1, text, None, &offered).unwrap();
    assert_eq!(fits.examples.len(), 1);
    assert_eq!(fits.examples[0].tokens, example_tokens);
    let short = assemble_with(&frozen(&glossary(line + example_tokens - 1)), 1, text, None, &offered).unwrap();
    assert!(short.examples.is_empty());
    // The term's own line is never evicted for an example.
    assert_eq!(short.injected.len(), 1);
    assert!(short.evicted.is_empty());
}

#[test]
fn voices_tell_dialogue_from_narration() {
    use assembly::assemble::voices;
    assert_eq!(voices("顾寒川说：“回去。”"), (true, true));
    assert_eq!(voices("“回去。”"), (true, false));
    assert_eq!(voices("「行け」と言った"), (true, true));
    assert_eq!(voices("他说 \"go\" 然后走了"), (true, true));
    assert_eq!(voices("沈照握紧长明。"), (false, true));
    // Punctuation and quotes alone are neither; an open mark runs to the end.
    assert_eq!(voices("“……”"), (false, false));
    assert_eq!(voices("“没说完"), (true, false));
}

// ---- Cascading activation ---------------------------------------------------------

/// A master and two disciples: 沈照's note names his master 顾寒川, whose note names
/// the lamp; 苏青 has no note. `extra` is appended (a `cascade_set`, a verdict, …).
fn sect_of_notes(extra: &str) -> String {
    format!(
        r#"
{{"term_put":{{"id":"T-1","src":"沈照","dst":"Шэнь Чжао","kind":"character","note":"沈照的师父是顾寒川。"}}}}
{{"term_put":{{"id":"T-2","src":"顾寒川","dst":"Гу Ханьчуань","kind":"character","note":"顾寒川守着长明灯。"}}}}
{{"term_put":{{"id":"T-3","src":"长明灯","dst":"негасимая лампада","kind":"object"}}}}
{{"term_put":{{"id":"T-4","src":"苏青","dst":"Су Цин","kind":"character"}}}}
{extra}"#
    )
}

#[test]
fn without_a_cascade_set_a_note_brings_nothing() {
    check(
        &sect_of_notes(""),
        1,
        "沈照醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 沈照 -> Шэнь Чжао #character
            hits:
              沈照 chars 0..2 T-1: confirmed
            injected:
              T-1 via hit, 11 tokens
        "#]],
    );
}

#[test]
fn a_note_brings_the_record_it_names_after_the_direct_entries() {
    // Depth 1: 沈照's note brings 顾寒川; 顾寒川's own note (the lamp) is a second round.
    check(
        &sect_of_notes(r#"{"cascade_set":{"depth":1}}"#),
        1,
        "沈照醒了，苏青在门外。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 沈照 -> Шэнь Чжао #character
              | 苏青 -> Су Цин #character
              | 顾寒川 -> Гу Ханьчуань #character
            hits:
              沈照 chars 0..2 T-1: confirmed
              苏青 chars 5..7 T-4: confirmed
            injected:
              T-1 via hit, 11 tokens
              T-4 via hit, 10 tokens
              T-2 via cascade, 13 tokens
            cascade:
              T-2 by T-1 at depth 1: confirmed
        "#]],
    );
}

#[test]
fn each_round_scans_what_the_round_before_brought_to_the_declared_depth() {
    check(
        &sect_of_notes(r#"{"cascade_set":{"depth":2}}"#),
        1,
        "沈照醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 沈照 -> Шэнь Чжао #character
              | 顾寒川 -> Гу Ханьчуань #character
              | 长明灯 -> негасимая лампада #object
            hits:
              沈照 chars 0..2 T-1: confirmed
            injected:
              T-1 via hit, 11 tokens
              T-2 via cascade, 13 tokens
              T-3 via cascade, 13 tokens
            cascade:
              T-2 by T-1 at depth 1: confirmed
              T-3 by T-2 at depth 2: confirmed
        "#]],
    );
}

#[test]
fn a_record_found_directly_is_not_brought_again() {
    // 顾寒川 is in the chunk: injected as a hit, never listed as found by the cascade.
    check(
        &sect_of_notes(r#"{"cascade_set":{"depth":1}}"#),
        1,
        "顾寒川看着沈照。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 顾寒川 -> Гу Ханьчуань #character
              | 沈照 -> Шэнь Чжао #character
              | 长明灯 -> негасимая лампада #object
            hits:
              顾寒川 chars 0..3 T-2: confirmed
              沈照 chars 5..7 T-1: confirmed
            injected:
              T-2 via hit, 13 tokens
              T-1 via hit, 11 tokens
              T-3 via cascade, 13 tokens
            cascade:
              T-3 by T-2 at depth 1: confirmed
        "#]],
    );
}

#[test]
fn a_cascade_keeps_the_window_and_verdict_rules() {
    // 顾寒川 starts at chapter 5: at chapter 2 the note may not bring him (a spoiler),
    // and so not the lamp his note names. The lamp is rejected by an editor.
    let glossary = r#"
{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао","note":"沈照的师父是顾寒川，灯是长明灯。"}}
{"term_put":{"id":"T-2","src":"顾寒川","dst":"Гу Ханьчуань","window":{"since":5}}}
{"term_put":{"id":"T-3","src":"长明灯","dst":"негасимая лампада"}}
{"term_put":{"id":"T-4","src":"苏青","dst":"Су Цин","status":"draft","note":"苏青是沈照的师妹。"}}
{"disposition_set":{"target":"T-3","verdict":"reject","reason":"wrong_sense"}}
{"cascade_set":{"depth":3}}
"#;
    check(
        glossary,
        2,
        "苏青醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 苏青 -> Су Цин [unverified]
              | 沈照 -> Шэнь Чжао
            hits:
              苏青 chars 0..2 T-4: ambiguous (unreviewed)
            injected:
              T-4 via hit, unverified, 10 tokens
              T-1 via cascade, 7 tokens
            cascade:
              T-1 by T-4 at depth 1: confirmed
              T-2 by T-1 at depth 2: rejected (spoiler_window)
              T-3 by T-1 at depth 2: rejected (blocked_by_disposition)
        "#]],
    );
    check(
        glossary,
        2,
        "沈照醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 沈照 -> Шэнь Чжао
            hits:
              沈照 chars 0..2 T-1: confirmed
            injected:
              T-1 via hit, 7 tokens
            cascade:
              T-2 by T-1 at depth 1: rejected (spoiler_window)
              T-3 by T-1 at depth 1: rejected (blocked_by_disposition)
        "#]],
    );
}

#[test]
fn quiet_records_trigger_nothing_and_direct_only_records_are_never_brought() {
    check(
        &sect_of_notes(r#"{"cascade_set":{"depth":2,"quiet":["T-1"]}}"#),
        1,
        "沈照醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 沈照 -> Шэнь Чжао #character
            hits:
              沈照 chars 0..2 T-1: confirmed
            injected:
              T-1 via hit, 11 tokens
        "#]],
    );
    check(
        &sect_of_notes(r#"{"cascade_set":{"depth":2,"direct_only":["T-2"]}}"#),
        1,
        "沈照醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 沈照 -> Шэнь Чжао #character
            hits:
              沈照 chars 0..2 T-1: confirmed
            injected:
              T-1 via hit, 11 tokens
        "#]],
    );
}

#[test]
fn a_summary_shown_brings_the_records_it_names() {
    let glossary = sect_of_notes(
        r#"{"cascade_set":{"depth":1,"quiet":["T-1","T-2"]}}
{"summary_put":{"id":"S-1","scope":"book","text":"苏青寻找长明灯。"}}"#,
    );
    check(
        &glossary,
        1,
        "沈照醒了。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 沈照 -> Шэнь Чжао #character
          | 苏青 -> Су Цин #character
          | 长明灯 -> негасимая лампада #object
          | [summaries]
          | (book) 苏青寻找长明灯。
        hits:
          沈照 chars 0..2 T-1: confirmed
        injected:
          T-1 via hit, 11 tokens
          T-4 via cascade, 10 tokens
          T-3 via cascade, 13 tokens
        summaries: S-1
        cascade:
          T-4 by S-1 at depth 1: confirmed
          T-3 by S-1 at depth 1: confirmed
    "#]],
    );
}

#[test]
fn the_budget_ranks_direct_entries_above_what_a_cascade_brings() {
    // Room for 沈照 (11) and 苏青 (10) but not 顾寒川 (14) after them: the cascade's
    // entry is evicted, never a direct one.
    let glossary = sect_of_notes(
        r#"{"cascade_set":{"depth":1}}
{"config_set":{"assembly":{"token_budget":25},"profile":{"name":"zh"}}}"#,
    );
    check(
        &glossary,
        1,
        "沈照醒了，苏青在门外。",
        &[],
        expect![[r#"
        context:
          | [glossary]
          | 沈照 -> Шэнь Чжао #character
          | 苏青 -> Су Цин #character
        hits:
          沈照 chars 0..2 T-1: confirmed
          苏青 chars 5..7 T-4: confirmed
        injected:
          T-1 via hit, 11 tokens
          T-4 via hit, 10 tokens
        evicted (budget): T-2
        cascade:
          T-2 by T-1 at depth 1: confirmed
    "#]],
    );
}

#[test]
fn notes_that_name_each_other_bring_each_record_once() {
    // 沈照's note names 顾寒川 and 顾寒川's names 沈照: at depth 3 the cascade stops when
    // nothing new is found, and nothing a cascade brings is passed on as sticky.
    let glossary = r#"
{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао","note":"师父：顾寒川"}}
{"term_put":{"id":"T-2","src":"顾寒川","dst":"Гу Ханьчуань","note":"弟子：沈照"}}
{"term_put":{"id":"T-3","src":"苏青","dst":"Су Цин","note":"师兄：沈照"}}
{"cascade_set":{"depth":3}}
"#;
    check(
        glossary,
        1,
        "苏青醒了。",
        &[],
        expect![[r#"
            context:
              | [glossary]
              | 苏青 -> Су Цин
              | 沈照 -> Шэнь Чжао
              | 顾寒川 -> Гу Ханьчуань
            hits:
              苏青 chars 0..2 T-3: confirmed
            injected:
              T-3 via hit, 6 tokens
              T-1 via cascade, 7 tokens
              T-2 via cascade, 9 tokens
            cascade:
              T-1 by T-3 at depth 1: confirmed
              T-2 by T-1 at depth 2: confirmed
        "#]],
    );
    check(
        glossary,
        1,
        "天亮了。",
        &[(1, "苏青醒了。")],
        expect![[r#"
        context:
          | [glossary]
          | 苏青 -> Су Цин
          | 沈照 -> Шэнь Чжао
          | 顾寒川 -> Гу Ханьчуань
        hits:
          (none)
        injected:
          T-3 via sticky, 6 tokens
          T-1 via cascade, 7 tokens
          T-2 via cascade, 9 tokens
        sticky in: T-3
        cascade:
          T-1 by T-3 at depth 1: confirmed
          T-2 by T-1 at depth 2: confirmed
    "#]],
    );
}
