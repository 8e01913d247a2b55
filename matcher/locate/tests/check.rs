//! The chunk a request translates, found through the wrappers real tools put around it,
//! one readable case each.
//!
//! `check(index, request, expect)` locates `request` and compares a rendering of the
//! outcome with the expectation: the chapter, which of its paragraphs the source span
//! covers (`whole` when it starts and ends with them), the chars matched, the request
//! span with its first and last chars, and the request's CJK letters inside registered
//! text. Every request is built from the corpus slices of `tests/data/corpora/`
//! (`common`): 西游记 (zh) and 吾輩は猫である (ja), cut into their chapters, with
//! wrappers in the shape of GalTransl's, LinguaGacha's and AiNiee's prompts.
//! `UPDATE_EXPECT=1 cargo test -p locate --test check` rewrites the expectations in
//! place; review the diff like code.

mod common;

use common::{index_of, lines, paragraphs, wagahai, wagahai_index, xiyouji, xiyouji_index};
use expect_test::{expect, Expect};
use locate::{Index, Located, Options, Outcome};
use test_support::profiles::zh_profile;

/// Names that occur in nearly every chapter of the 西游记 slice, as a tool's own
/// glossary lists them.
const NAMES: &[(&str, &str, &str)] = &[
    ("花果山", "Гора Цветов и Плодов", "地名"),
    ("猴王", "Царь обезьян", "主角"),
    ("悟空", "Укун", "主角"),
    ("大圣", "Великий мудрец", "称号"),
    ("玉帝", "Нефритовый император", ""),
    ("菩萨", "бодхисаттва", ""),
];

fn render(index: &Index, request: &str, outcome: &Outcome) -> String {
    let coverage = outcome.coverage();
    let coverage = format!("registered {} of {} CJK letters", coverage.registered_cjk, coverage.request_cjk);
    match outcome {
        Outcome::Found { chunk, .. } => format!("found {}\n{coverage}", describe(index, request, chunk)),
        Outcome::Ambiguous { candidates, .. } => {
            let listed: Vec<String> = candidates.iter().map(|c| format!("  {}", describe(index, request, c))).collect();
            format!("ambiguous\n{}\n{coverage}", listed.join("\n"))
        }
        Outcome::NotFound { nearest: Some(chunk), .. } => {
            format!("not found; nearest {}\n{coverage}", describe(index, request, chunk))
        }
        Outcome::NotFound { nearest: None, .. } => format!("not found\n{coverage}"),
    }
}

/// `chapter 3 ¶4..=9 whole, 1234 chars; request 56..7890 「第一句…最后」`.
fn describe(index: &Index, request: &str, chunk: &Located) -> String {
    let text = index.chapter_text(chunk.chapter).expect("a registered chapter");
    let source = &text[chunk.source.clone()];
    // Paragraphs by byte range in the chapter.
    let mut spans = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if !trimmed.is_empty() {
            let start = at + line.find(trimmed).unwrap();
            spans.push(start..start + trimmed.len());
        }
        at += line.len();
    }
    let first = spans.iter().position(|s| s.end > chunk.source.start).unwrap();
    let last = spans.iter().rposition(|s| s.start < chunk.source.end).unwrap();
    let whole = spans[first].start == chunk.source.start && spans[last].end == chunk.source.end;
    let cut = if whole {
        "whole".to_owned()
    } else {
        format!("from byte {} to {}", chunk.source.start - spans[first].start, chunk.source.end - spans[last].start)
    };
    let ends = |s: &str| {
        let chars: Vec<char> = s.chars().collect();
        let head: String = chars.iter().take(6).collect();
        let tail: String = chars.iter().skip(chars.len().saturating_sub(6)).collect();
        format!("「{}…{}」", head.replace('\n', "⏎"), tail.replace('\n', "⏎"))
    };
    assert_eq!(paragraphs(source).len(), last - first + 1, "the span covers paragraphs {first}..={last}");
    format!(
        "chapter {} ¶{first}..={last} {cut}, {} chars; request {}..{} {}",
        chunk.chapter,
        chunk.chars,
        chunk.request.start,
        chunk.request.end,
        ends(&request[chunk.request.clone()])
    )
}

fn check(index: &Index, request: &str, expect: Expect) {
    check_with(index, request, &Options::default(), expect);
}

fn check_with(index: &Index, request: &str, options: &Options, expect: Expect) {
    let outcome = index.locate_with(request, options).expect("locate");
    // Every span lies on char boundaries of its text.
    let spans: Vec<&Located> = match &outcome {
        Outcome::Found { chunk, .. } => vec![chunk],
        Outcome::Ambiguous { candidates, .. } => candidates.iter().collect(),
        Outcome::NotFound { nearest, .. } => nearest.iter().collect(),
    };
    for chunk in spans {
        let text = index.chapter_text(chunk.chapter).unwrap();
        assert!(text.get(chunk.source.clone()).is_some() && request.get(chunk.request.clone()).is_some());
    }
    expect.assert_eq(&render(index, request, &outcome));
}

fn galtransl_glossary() -> String {
    NAMES
        .iter()
        .map(
            |(src, dst, note)| {
                if note.is_empty() {
                    format!("{src}->{dst}\n")
                } else {
                    format!("{src}->{dst} #{note}\n")
                }
            },
        )
        .collect()
}

/// GalTransl's `GalTransl_TRANS_PROMPT` with its system prompt, aimed at Russian: a
/// `src->dst #note` glossary, then the lines as they are, one per line.
fn galtransl(chunk: &[&str]) -> String {
    format!(
        "你是一个视觉小说翻译模型，可以通顺地使用给定的术语表以指定的风格将中文翻译成俄文，并联系上下文正确使用人称代词。\n\
         参考以下术语表（可为空，格式为src->dst #备注）：\n{}\
         根据上述术语表的对应关系和备注，结合历史剧情和上下文，以流畅的风格将下面的文本从中文翻译成俄文：\n{}",
        galtransl_glossary(),
        chunk.join("\n")
    )
}

/// LinguaGacha's shape: instructions in English, `src -> dst #note` term lines, and the
/// lines as a JSONL code block, one `{"i":"line"}` object a line.
fn linguagacha(chunk: &[&str]) -> String {
    let terms: String = NAMES.iter().map(|(src, dst, note)| format!("{src} -> {dst} #{note}\n")).collect();
    let input: String =
        chunk.iter().enumerate().map(|(i, line)| format!("{{\"{i}\":\"{}\"}}\n", line.replace('"', "\\\""))).collect();
    format!(
        "Translate the Chinese text below into Russian. Keep every line; answer in the same JSONL format.\n\
         Glossary:\n{terms}\nInput:\n```jsonline\n{input}```\n"
    )
}

/// AiNiee's shape: a system prompt, a `原文|译文|备注` table of terms, the previous
/// lines in `<previous>` when given, and the numbered lines in `<textarea>`.
fn ainiee(previous: &[&str], chunk: &[&str]) -> String {
    let mut out = String::from("You are a professional novel translator. Translate the text into Russian.\n###术语表\n|原文|译文|备注|\n|---|---|---|\n");
    for (src, dst, note) in NAMES {
        out.push_str(&format!("|{src}|{dst}|{note}|\n"));
    }
    if !previous.is_empty() {
        out.push_str(&format!("###上文内容\n<previous>\n{}\n</previous>\n", previous.join("\n")));
    }
    out.push_str("###这是你接下来的翻译任务，原文文本如下\n<textarea>\n");
    for (i, line) in chunk.iter().enumerate() {
        out.push_str(&format!("{}.{line}\n", i + 1));
    }
    out.push_str("</textarea>\n");
    out
}

#[test]
fn a_galtransl_prompt_with_a_glossary_of_names_found_everywhere() {
    let chunk = lines(xiyouji(), 4, 3..9);
    check(
        xiyouji_index(),
        &galtransl(&chunk),
        expect![[r#"
            found chapter 4 ¶3..=8 whole, 1009 chars; request 627..3635 「初登上界乍入…登云气力长。」
            registered 888 of 1022 CJK letters"#]],
    );
}

#[test]
fn linguagacha_term_lines_and_jsonl_lines() {
    let chunk = lines(xiyouji(), 5, 10..16);
    check(
        xiyouji_index(),
        &linguagacha(&chunk),
        expect![[r#"
            found chapter 5 ¶10..=15 whole, 917 chars; request 394..3190 「中间现出一尊…吃炒豆相似。」
            registered 842 of 863 CJK letters"#]],
    );
}

#[test]
fn ainiee_tables_and_numbered_lines() {
    let chunk = lines(xiyouji(), 6, 2..7);
    check(
        xiyouji_index(),
        &ainiee(&[], &chunk),
        expect![[r#"
            found chapter 6 ¶2..=6 whole, 1149 chars; request 444..3903 「菩萨引众同入…呼大圣一个是」
            registered 1030 of 1077 CJK letters"#]],
    );
}

#[test]
fn the_previous_chunk_sent_as_context_is_not_the_chunk() {
    let previous = lines(xiyouji(), 3, 4..6);
    let chunk = lines(xiyouji(), 3, 6..10);
    check(
        xiyouji_index(),
        &ainiee(&previous, &chunk),
        expect![[r#"
            found chapter 3 ¶6..=9 whole, 1143 chars; request 1256..4682 「却说那花果山…委的再无。”」
            registered 1201 of 1252 CJK letters"#]],
    );
}

#[test]
fn context_longer_than_the_chunk_is_still_context() {
    let previous = lines(xiyouji(), 3, 2..8);
    let chunk = lines(xiyouji(), 3, 8..9);
    check(
        xiyouji_index(),
        &ainiee(&previous, &chunk),
        expect![[r#"
            found chapter 3 ¶8..=8 whole, 223 chars; request 2766..3435 「美猴王正喜间…等我去来。”」
            registered 864 of 915 CJK letters"#]],
    );
}

#[test]
fn a_request_with_no_registered_text() {
    // Chapters 1-7 registered; the request translates chapter 8.
    let index = index_of(zh_profile(), &xiyouji()[..7]);
    let chunk = lines(xiyouji(), 8, 3..9);
    check(
        &index,
        &galtransl(&chunk),
        expect![[r#"
            not found
            registered 0 of 422 CJK letters"#]],
    );
    // The wrapper alone: names and instructions.
    check(
        xiyouji_index(),
        &galtransl(&[]),
        expect![[r#"
        not found
        registered 0 of 134 CJK letters"#]],
    );
}

#[test]
fn short_dialogue_lines_at_the_edges_join_the_chunk() {
    // Lines 10-20 of chapter 10: short lines such as 「あら、何で？」 start and end it.
    let chunk = lines(wagahai(), 10, 19..31);
    check(
        wagahai_index(),
        &ainiee(&[], &chunk),
        expect![[r#"
            found chapter 10 ¶19..=30 whole, 400 chars; request 444..1809 「「あら、何で….「なぜ？」」
            registered 346 of 403 CJK letters"#]],
    );
}

/// `text` in traditional characters (OpenCC s2t, as `matcher/tests/real_data.rs`
/// makes its twins), with the full-width punctuation a tool may write half-width.
fn traditional_half_width(text: &str) -> String {
    let s2t = opencc_rust::OpenCC::new("/usr/share/opencc/s2t.json").expect("OpenCC's s2t (scripts/setup.sh)");
    let traditional = s2t.convert(text).expect("s2t");
    traditional.replace('：', ":").replace('！', "!").replace('？', "?").replace('；', ";").replace('，', ",")
}

#[test]
fn a_traditional_chunk_with_half_width_punctuation_meets_the_simplified_book() {
    let chunk = lines(xiyouji(), 7, 5..10);
    let converted: Vec<String> = chunk.iter().map(|line| traditional_half_width(line)).collect();
    assert_ne!(converted[0], chunk[0]);
    let converted: Vec<&str> = converted.iter().map(String::as_str).collect();
    check(
        xiyouji_index(),
        &galtransl(&converted),
        expect![[r#"
            found chapter 7 ¶5..=9 whole, 397 chars; request 627..1814 「那老君到兜率…言。⏎又詩:」
            registered 365 of 499 CJK letters"#]],
    );
}

/// 吾輩は猫である's text without its Aozora ruby (`《reading》` and the `｜` that
/// starts a base), as a tool that strips markup sends it.
fn without_ruby(text: &str) -> String {
    let mut out = String::new();
    let mut in_reading = false;
    for c in text.chars() {
        match c {
            '《' => in_reading = true,
            '》' => in_reading = false,
            '｜' => {}
            _ if !in_reading => out.push(c),
            _ => {}
        }
    }
    out
}

/// Full-width katakana made half-width (`ジャム` → `ｼﾞｬﾑ`), the voiced ones as a base
/// and a sound mark.
fn half_width_katakana(text: &str) -> String {
    const FULL: &str = "ァアィイゥウェエォオカキクケコサシスセソタチッツテトナニヌネノハヒフヘホマミムメモャヤュユョヨラリルレロワヲンー";
    const HALF: &str = "ｧｱｨｲｩｳｪｴｫｵｶｷｸｹｺｻｼｽｾｿﾀﾁｯﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓｬﾔｭﾕｮﾖﾗﾘﾙﾚﾛﾜｦﾝｰ";
    const VOICED: &str = "ガギグゲゴザジズゼゾダヂヅデドバビブベボヴ";
    const VOICED_BASE: &str = "カキクケコサシスセソタチツテトハヒフヘホウ";
    const SEMI: &str = "パピプペポ";
    const SEMI_BASE: &str = "ハヒフヘホ";
    let half = |c: char| FULL.chars().position(|f| f == c).and_then(|i| HALF.chars().nth(i));
    let mut out = String::new();
    for c in text.chars() {
        if let Some(i) = VOICED.chars().position(|v| v == c) {
            out.push(half(VOICED_BASE.chars().nth(i).unwrap()).unwrap());
            out.push('ﾞ');
        } else if let Some(i) = SEMI.chars().position(|v| v == c) {
            out.push(half(SEMI_BASE.chars().nth(i).unwrap()).unwrap());
            out.push('ﾟ');
        } else {
            out.push(half(c).unwrap_or(c));
        }
    }
    out
}

#[test]
fn a_japanese_chunk_without_ruby_and_with_half_width_katakana() {
    // Chapter 3's end: 迷亭 and the wife on ジャム and 大根卸《だいこおろし》.
    let chunk = lines(wagahai(), 3, 1..2);
    let chunk: Vec<String> = chunk.iter().map(|line| half_width_katakana(&without_ruby(line))).collect();
    assert!(chunk[0].contains("ｼﾞｬﾑ") && !chunk[0].contains('《'));
    let chunk: Vec<&str> = chunk.iter().map(String::as_str).collect();
    check(
        wagahai_index(),
        &linguagacha(&chunk),
        expect![[r#"
            found chapter 3 ¶1..=1 whole, 3516 chars; request 394..11074 「「どうも御退…情に見える。」
            registered 3191 of 3212 CJK letters"#]],
    );
}

/// 西游记 1-8 and a chapter 9 that opens with chapter 1's opening poem (诗曰 and its
/// four lines) and has nothing else.
fn with_a_repeated_poem() -> Index {
    let mut chapters = xiyouji().to_vec();
    let poem = lines(xiyouji(), 1, 1..6).join("\r\n\r\n    ");
    chapters.push((9, format!("第九回 重出\r\n\r\n    {poem}\r\n")));
    index_of(zh_profile(), &chapters)
}

#[test]
fn a_line_repeated_in_two_chapters_is_ambiguous() {
    let index = with_a_repeated_poem();
    let poem = lines(xiyouji(), 1, 1..6);
    check(
        &index,
        &galtransl(&poem),
        expect![[r#"
            ambiguous
              chapter 1 ¶1..=5 whole, 62 chars; request 627..817 「诗曰：⏎混沌…西游释厄传。」
              chapter 9 ¶1..=5 whole, 62 chars; request 627..817 「诗曰：⏎混沌…西游释厄传。」
            registered 57 of 191 CJK letters"#]],
    );
    // With the paragraph after it, only chapter 1 holds the chunk.
    let longer = lines(xiyouji(), 1, 1..7);
    check(
        &index,
        &galtransl(&longer),
        expect![[r#"
            found chapter 1 ¶1..=6 whole, 529 chars; request 627..2219 「诗曰：⏎混沌…曰人生于寅。」
            registered 464 of 598 CJK letters"#]],
    );
    // A header naming the chapter settles it.
    check_with(
        &index,
        &galtransl(&poem),
        &Options { chapter: Some(9), ..Options::default() },
        expect![[r#"
            found chapter 9 ¶1..=5 whole, 62 chars; request 627..817 「诗曰：⏎混沌…西游释厄传。」
            registered 57 of 191 CJK letters"#]],
    );
}

#[test]
fn an_unregistered_chunk_quoting_a_registered_line_is_not_found() {
    // Chapters 1-7 registered; chapter 8's lines with one line of chapter 1's poem
    // among them: a run, but a small share of the request.
    let index = index_of(zh_profile(), &xiyouji()[..7]);
    let mut chunk = lines(xiyouji(), 8, 3..9);
    chunk.insert(3, lines(xiyouji(), 1, 2..3)[0]);
    check(
        &index,
        &galtransl(&chunk),
        expect![[r#"
            not found; nearest chapter 1 ¶1..=2 whole, 18 chars; request 1031..1086 「诗曰：⏎混沌…渺渺无人见。」
            registered 16 of 436 CJK letters"#]],
    );
}
