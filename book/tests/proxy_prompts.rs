//! Issue 27: request bodies built by the real prompt builders of GalTransl and AiNiee,
//! from their templates vendored in `tests/data/prompts/` (provenance in each folder's
//! README.md). The chunk is found in the book's source text (西游记, chapters 1–8 of
//! `tests/data/corpora/xiyouji-head.txt`), the tool's own glossary block and its
//! previous-context block activate nothing, and a term whose window starts at a later
//! chapter stays out.
//!
//! The builders below are small re-implementations of what each tool's code does with
//! its templates (the function and line followed are cited at each step); the tools'
//! code is not copied. The bodies they build are golden files beside the templates
//! (`request-*.json`): `LOREBANK_BLESS=1 cargo test -p book --test proxy_prompts`
//! rewrites them; review the diff.

use std::collections::BTreeSet;
use std::path::PathBuf;

use book::proxy::{Hint, Placed};
use book::Book;
use ledger_model::*;
use serde_json::{json, Value};
use test_support::books::{write_as, zh_book};
use test_support::records::put;

/// 西游记, the title to part of chapter 8, simplified, CRLF.
const XIYOUJI: &str = include_str!("../../tests/data/corpora/xiyouji-head.txt");

fn prompts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/prompts")
}

fn fixture(path: &str) -> String {
    let full = prompts_dir().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{}: {error}", full.display()))
}

fn strings(tool: &str) -> Value {
    serde_json::from_str(&fixture(&format!("{tool}/builder-strings.json"))).unwrap()
}

fn string(strings: &Value, key: &str) -> String {
    strings[key].as_str().unwrap_or_else(|| panic!("builder-strings.json has no {key}")).to_owned()
}

/// The golden request body at `path`; `LOREBANK_BLESS=1` rewrites it from `body`.
fn golden(path: &str, body: &Value) {
    let text = format!("{}\n", serde_json::to_string_pretty(body).unwrap());
    if std::env::var_os("LOREBANK_BLESS").is_some_and(|bless| bless == "1") {
        let full = prompts_dir().join(path);
        std::fs::write(&full, &text).unwrap_or_else(|error| panic!("{}: {error}", full.display()));
    }
    assert_eq!(fixture(path), text, "{path} differs from the body built; LOREBANK_BLESS=1 rewrites it");
}

/// 西游记's chapters 1–8, each from its `第…回` heading to the next (CRLF kept).
fn chapters() -> Vec<(u32, String)> {
    let mut chapters: Vec<(u32, String)> = Vec::new();
    for line in XIYOUJI.split_inclusive("\r\n") {
        if line.starts_with('第') && line.contains('回') {
            chapters.push((chapters.len() as u32 + 1, String::new()));
        }
        if let Some((_, text)) = chapters.last_mut() {
            text.push_str(line);
        }
    }
    assert_eq!(chapters.len(), 8);
    chapters
}

/// The paragraphs of a chapter (its heading is paragraph 0), without indentation.
fn paragraphs(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|line| !line.is_empty()).collect()
}

/// A string as Python's `json.dumps(..., ensure_ascii=False)` writes it.
fn py_json_str(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The book's terms: (number, src, dst, first chapter of the window).
const TERMS: &[(u32, &str, &str, u32)] = &[
    (1, "悟空", "Укун", 1),
    (2, "祖师", "Патриарх", 1),
    (3, "花果山", "Гора Цветов и Плодов", 1),
    (4, "菩提祖师", "Патриарх Субхути", 1),
    (5, "美猴王", "Прекрасный Царь обезьян", 1),
    // The spoiler gate: in the chunks below, but their windows start later.
    (6, "正果", "праведный плод", 8),
    (7, "筋斗云", "облако-кувырок", 3),
    (8, "猢狲", "макака", 1),
    (9, "水帘洞", "Пещера Водного Занавеса", 1),
];

/// A tool's own glossary (its GPT dictionary, its Glossary page): the book's terms but
/// the gated ones' windows, and a name the book does not hold.
const TOOL_GLOSSARY: &[(&str, &str, &str)] = &[
    ("菩提祖师", "Патриарх Субхути", "师父"),
    ("祖师", "Патриарх", ""),
    ("悟空", "Укун", "主角"),
    ("孙悟空", "Сунь Укун", "主角"),
    ("花果山", "Гора Цветов и Плодов", "地名"),
    ("美猴王", "Прекрасный Царь обезьян", ""),
    ("猴王", "Царь обезьян", ""),
    ("水帘洞", "Пещера Водного Занавеса", "地名"),
    ("筋斗云", "облако-кувырок", ""),
    ("正果", "праведный плод", ""),
    ("猢狲", "макака", ""),
];

fn book_with_source(dir: &std::path::Path) -> (Book, Vec<(u32, String)>) {
    let bodies = TERMS
        .iter()
        .map(|(number, src, dst, since)| {
            Body::TermPut(TermPut { window: Window { since: *since, until: None }, ..put(*number, *src, *dst) })
        })
        .collect();
    let mut book = zh_book(&dir.join("b.lorebank"), bodies);
    let chapters = chapters();
    let write = write_as("human:editor");
    for (number, text) in &chapters {
        book.source_add(*number, None, text.as_bytes(), &write).unwrap();
    }
    (book, chapters)
}

/// What the tests check of one request: where its lines are and which terms the
/// assembled context may and may not hold.
struct Expect<'a> {
    chapter: u32,
    lines: &'a [&'a str],
    injected: &'a [u32],
    never: &'a [u32],
}

/// The last user message and the first message's text when it is a system message,
/// as the proxy reads them (`src/http/proxy.rs`).
fn texts_of(body: &Value) -> (String, Option<String>) {
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap();
    let system = (messages[0]["role"] == "system").then(|| messages[0]["content"].as_str().unwrap().to_owned());
    (user.to_owned(), system)
}

fn check(book: &mut Book, chapters: &[(u32, String)], body: &Value, expect: &Expect) {
    let (user, system) = texts_of(body);
    let Placed::Chunk(chunk) = book.proxy_locate(&user, &Hint::default()).unwrap() else {
        panic!("not found: {user}");
    };
    assert_eq!(chunk.chapter, expect.chapter);
    let text = &chapters[expect.chapter as usize - 1].1;
    let first = expect.lines[0];
    let last = expect.lines[expect.lines.len() - 1];
    let start = text.find(first).unwrap();
    let end = text.find(last).unwrap() + last.len();
    let span = chunk.source.clone().unwrap();
    assert_eq!(span, start..end, "the span is the lines sent: {:?}", chunk.text);
    assert_eq!(chunk.text, text[span.clone()]);
    assert_eq!(paragraphs(&chunk.text), expect.lines, "the chunk is the lines sent, in order");
    let request = chunk.request.clone().unwrap();
    assert!(user[request.clone()].contains(first), "the request span starts at the lines");

    let prepared = book.proxy_prepare(&user, &Hint::default(), system.as_deref()).unwrap().unwrap();
    let injected: BTreeSet<u32> = prepared.assembled.assembly.injected.iter().map(|entry| entry.term).collect();
    let context = &prepared.assembled.assembly.context;
    assert_eq!(injected, expect.injected.iter().copied().collect(), "{context}");
    for never in expect.never {
        let (_, _, dst, _) = TERMS.iter().find(|(number, ..)| number == never).unwrap();
        assert!(!context.contains(dst), "T-{never} {dst} injected: {context}");
    }
    // The system message sent is the tool's own, then the book's context.
    let sent = prepared.system.unwrap();
    assert!(sent.starts_with(system.as_deref().unwrap_or_default()) && sent.ends_with(context.as_str()));
}

// ---------------------------------------------------------------------------------
// GalTransl, engine ForGal-json, at GalTransl/GalTransl@62fb211.

/// One line of GalTransl's input: its index, speaker and text.
struct GalLine<'a> {
    index: u32,
    speaker: &'a str,
    src: &'a str,
}

/// `CGptDict.gen_prompt(trans_list, "gpt")` (`GalTransl/Dictionary.py` l. 394–457): an
/// entry goes in when its source occurs in the lines written `speaker:src`, or (once
/// removed from them) inside an entry already used; rows `| src | dst | note |`, under
/// `TITLE_GPT`.
fn galtransl_glossary(lines: &[GalLine], title: &str) -> String {
    let mut input: String = lines.iter().map(|l| format!("{}:{}", l.speaker, l.src)).collect::<Vec<_>>().join("\n");
    let copy = input.clone();
    let mut used: Vec<&str> = Vec::new();
    let mut prompt = String::new();
    for (src, dst, note) in TOOL_GLOSSARY {
        let add = input.contains(src) || (copy.contains(src) && used.iter().any(|word| src.contains(word)));
        if add {
            // `_format_dic_entry_gpt`, l. 405–411.
            prompt.push_str(&format!("| {src} | {dst} |"));
            if !note.is_empty() {
                prompt.push_str(&format!(" {note}"));
            }
            prompt.push_str(" |\n");
            input = input.replace(src, "");
            used.push(src);
        }
    }
    if prompt.is_empty() {
        prompt
    } else {
        format!("{title}{prompt}")
    }
}

/// The body `ForGalJsonTranslate.translate` sends (`GalTransl/Backend/ForGalJsonTranslate.py`
/// l. 57–131): each line `sig|{"id": …, "name": …, "src": …}` (`_encode_sig_jsonline`,
/// l. 30, `json.dumps(ensure_ascii=False)`; the three-char sig is random there, fixed
/// here), the prompt filled by `BaseTranslate._build_prompt_request` (l. 310–319, in that
/// order) then `_apply_history_result` (l. 321–329), the history being earlier lines'
/// translations (`_format_restore_context_line`/`_payload`, l. 414–429), and the messages
/// system + user sent by `ask_chatbot` (l. 676–685: model, messages, stream; the other
/// parameters NOT_GIVEN are left out by the SDK).
fn galtransl_request(lines: &[GalLine], history: &[(u32, &str)]) -> Value {
    let strings = strings("galtransl");
    let input: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let sig = ["k3f", "q8a", "z0m", "p5d", "w2x", "e7h", "r4n", "t9c"][i % 8];
            let name = if line.speaker.is_empty() {
                String::new()
            } else {
                format!(", \"name\": {}", py_json_str(line.speaker))
            };
            format!("{sig}|{{\"id\": {}{name}, \"src\": {}}}", line.index, py_json_str(line.src))
        })
        .collect();
    let glossary = galtransl_glossary(lines, &string(&strings, "TITLE_GPT"));
    let prompt = fixture("galtransl/FORGAL_JSON_TRANS_PROMPT.txt")
        .replace("[translation_guideline]", &fixture("galtransl/Basic.md"))
        .replace("[Input]", &input.join("\n"))
        .replace("[Glossary]", &glossary)
        .replace("[SourceLang]", "Simplified_Chinese")
        .replace("[TargetLang]", "Russian");
    let history = if history.is_empty() {
        string(&strings, "history_none")
    } else {
        let sig = string(&strings, "history_sig");
        let rows: Vec<String> =
            history.iter().map(|(id, dst)| format!("{sig}|{{\"id\": {id}, \"dst\": {}}}", py_json_str(dst))).collect();
        format!(
            "{}{}{}",
            string(&strings, "history_payload_open"),
            rows.join("\n"),
            string(&strings, "history_payload_close")
        )
    };
    let prompt = prompt.replace("[history_result]", &history);
    json!({
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": fixture("galtransl/FORGAL_JSON_SYSTEM_PROMPT.txt")},
            {"role": "user", "content": prompt},
        ],
        "stream": true,
    })
}

#[test]
fn galtransl_forgal_json_with_speaker_names_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, chapters) = book_with_source(dir.path());
    // Chapter 2, paragraphs 7–10: 祖师 and 悟空 on the ways of the Dao, each line
    // attributed by the tool's script to the speaker 菩提祖师 (a term of the book that
    // the lines do not hold).
    let paragraphs = paragraphs(&chapters[1].1);
    let chunk = &paragraphs[7..11];
    let lines: Vec<GalLine> =
        chunk.iter().zip(7..).map(|(src, index)| GalLine { index, speaker: "菩提祖师", src }).collect();
    let history = [
        (5, "Открыл единое слово, обращённое к истине, указал путь к нерождённому."),
        (6, "Сунь Укун слушал рядом и от радости чесал уши и щёки; Патриарх спросил его."),
    ];
    let body = galtransl_request(&lines, &history);
    golden("galtransl/request-forgal-json.json", &body);
    let (user, _) = texts_of(&body);
    // The tool's glossary block holds 菩提祖师 (from the speaker), and the gated 正果.
    assert!(user.contains("| 菩提祖师 | Патриарх Субхути | 师父 |\n") && user.contains("| 正果 |"), "{user}");
    check(
        &mut book,
        &chapters,
        &body,
        &Expect { chapter: 2, lines: chunk, injected: &[1, 2], never: &[4, 6, 3, 5, 8, 9] },
    );
}

// ---------------------------------------------------------------------------------
// AiNiee, the common prompt, at NEKOparapa/AiNiee@38b70aa.

/// AiNiee's `build_glossary_prompt` (`ModuleFolders/Domain/PromptBuilder/PromptBuilder.py`
/// l. 443–489) for a non-Chinese target: the rows of `GlossaryHelper.collect_matched_rows`
/// (a row goes in when its source occurs in the chunk's lines joined by `\n`), each
/// `src|dst|info` (a space for no info), after the header.
fn ainiee_glossary(lines: &[&str], header: &str) -> String {
    let full = lines.join("\n");
    let mut out = vec![header.to_owned()];
    for (src, dst, note) in TOOL_GLOSSARY {
        if full.contains(src) {
            out.push(format!("{src}|{dst}|{}", if note.is_empty() { " " } else { note }));
        }
    }
    if out.len() == 1 {
        String::new()
    } else {
        out.join("\n")
    }
}

/// The body AiNiee sends: `PromptBuilder.generate_prompt` (l. 894–1017) with the common
/// prompt (`build_system`, l. 74–110: `common_system_en.txt` for a non-Chinese target, the
/// languages' English names, stripped), the glossary switch on (appended to the system
/// text), the dynamic few-shot switch off, `pre_line_counts` lines before the chunk
/// (`build_pre_text`, l. 823–840), the lines numbered (`build_source_text`, l. 417–440)
/// after `build_userQueryPrefix` (l. 866–872) in `<textarea>`; then
/// `OpenaiRequester.request_openai` (`ModuleFolders/Infrastructure/LLMRequester/OpenaiRequester.py`
/// l. 234–266) puts the system message first and sends model, messages and
/// `"stream": false` (temperature 1.0 is left out, `extra_body` is empty).
fn ainiee_request(previous: &[&str], lines: &[&str]) -> Value {
    let strings = strings("ainiee");
    let mut system = fixture("ainiee/common_system_en.txt")
        .replace("{source_language}", "Chinese")
        .replace("{target_language}", "Russian")
        .trim()
        .to_owned();
    system.push_str(&ainiee_glossary(lines, &string(&strings, "glossary_header")));
    let previous = if previous.is_empty() {
        String::new()
    } else {
        format!("{}{}\n{}", string(&strings, "previous_open"), previous.join("\n"), string(&strings, "previous_close"))
    };
    let numbered: Vec<String> = lines.iter().enumerate().map(|(i, line)| format!("{}.{line}", i + 1)).collect();
    let user = format!(
        "{previous}\n{}<textarea>\n{}\n</textarea>",
        string(&strings, "user_query_prefix"),
        numbered.join("\n")
    );
    json!({
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
        "stream": false,
    })
}

#[test]
fn ainiee_common_prompt_with_previous_lines_and_its_glossary_in_the_system_message() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, chapters) = book_with_source(dir.path());
    // Chapter 2, paragraphs 32–36: 悟空 flies home to 花果山 on his 筋斗云; the two
    // lines before (祖师 sends the 猢狲 away) go as context.
    let paragraphs = paragraphs(&chapters[1].1);
    let previous = &paragraphs[30..32];
    let chunk = &paragraphs[32..37];
    let body = ainiee_request(previous, chunk);
    golden("ainiee/request-common.json", &body);
    let (user, system) = texts_of(&body);
    assert!(user.contains("<previous>") && user.contains("猢狲") && user.contains("祖师"), "{user}");
    assert!(system.unwrap().contains("\n筋斗云|облако-кувырок| "), "the tool's glossary holds the gated term");
    check(
        &mut book,
        &chapters,
        &body,
        &Expect { chapter: 2, lines: chunk, injected: &[1, 3, 5, 9], never: &[2, 4, 7, 8, 6] },
    );
}

/// The body `ForNovelTranslate.translate` sends (`GalTransl/Backend/ForNovelTranslate.py`
/// l. 50–95): each line `src\tindex` (a tab in the text written `[t]`, l. 69–73), the
/// prompt `FORNOVEL_TRANS_PROMPT_EN` filled as ForGal-json's, the glossary
/// `CGptDict.gen_prompt(…, "tsv")` (`batch_translate`, l. 331: rows `src\tdst[\tnote]`
/// under `SRC\tDST\tNOTE`, `GalTransl/Dictionary.py` l. 421–428), no history yet
/// (the chapter's first lines), and the system message `FORGAL_TSV_SYSTEM` (l. 37, 91).
fn galtransl_novel_request(lines: &[GalLine]) -> Value {
    let strings = strings("galtransl");
    let input: Vec<String> =
        lines.iter().map(|line| format!("{}\t{}", line.src.replace('\t', "[t]"), line.index)).collect();
    let mut input_text: String =
        lines.iter().map(|l| format!("{}:{}", l.speaker, l.src)).collect::<Vec<_>>().join("\n");
    let mut glossary = String::new();
    for (src, dst, note) in TOOL_GLOSSARY {
        if input_text.contains(src) {
            glossary.push_str(&format!("{src}\t{dst}"));
            if !note.is_empty() {
                glossary.push_str(&format!("\t{note}"));
            }
            glossary.push('\n');
            input_text = input_text.replace(src, "");
        }
    }
    if !glossary.is_empty() {
        glossary = format!("{}{glossary}", string(&strings, "TITLE_TSV"));
    }
    let prompt = fixture("galtransl/FORNOVEL_TRANS_PROMPT_EN.txt")
        .replace("[translation_guideline]", &fixture("galtransl/Basic.md"))
        .replace("[Input]", &input.join("\n"))
        .replace("[Glossary]", &glossary)
        .replace("[SourceLang]", "Simplified_Chinese")
        .replace("[TargetLang]", "Russian")
        .replace("[history_result]", &string(&strings, "history_none"));
    json!({
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": fixture("galtransl/FORGAL_TSV_SYSTEM.txt")},
            {"role": "user", "content": prompt},
        ],
        "stream": true,
    })
}

#[test]
fn galtransl_fornovel_tsv_lines_in_a_chapter_where_a_gated_term_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, chapters) = book_with_source(dir.path());
    // Chapter 4, paragraphs 1–2: 美猴王 rides his 筋斗云 to heaven; 筋斗云's window
    // opens at chapter 3, so here it is injected.
    let paragraphs = paragraphs(&chapters[3].1);
    let chunk = &paragraphs[1..3];
    let lines: Vec<GalLine> = chunk.iter().zip(1..).map(|(src, index)| GalLine { index, speaker: "", src }).collect();
    let body = galtransl_novel_request(&lines);
    golden("galtransl/request-fornovel.json", &body);
    let (user, _) = texts_of(&body);
    assert!(user.contains("SRC\tDST\tNOTE\n") && user.contains("筋斗云\tоблако-кувырок\n"), "{user}");
    check(
        &mut book,
        &chapters,
        &body,
        &Expect { chapter: 4, lines: chunk, injected: &[1, 5, 7], never: &[2, 4, 6, 8] },
    );
}
