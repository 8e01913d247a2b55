//! TMX: the sentence splitter on a table of texts of each rule (expect-test, one
//! case a line), its pieces joined giving the text back (proptest), and the
//! writer's documents valid against the TMX 1.4b DTD (lxml) and read back by
//! translate-toolkit's `tmxfile` to exactly the pairs written, with XML's special
//! characters escaped and each character XML 1.0 cannot hold refused by name.
//! `UPDATE_EXPECT=1 cargo test -p formats --test tmx` rewrites the table's
//! expectations in place; review the diff like code.

// A test writes files for Python to read; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;

use expect_test::{expect, Expect};
use formats::tmx::{
    sentences, unrepresentable, write, Origin, Pair, Refused, SentenceRule, Side, Stamp, TmxInput, TmxWritten, Written,
};
use ledger_model::Hash32;
use proptest::prelude::*;
use serde_json::Value;

/// The pieces of `text` under `rule`, one quoted piece a line.
fn check(rule: SentenceRule, text: &str, expect: Expect) {
    let rendered: String = sentences(text, rule).iter().map(|piece| format!("{piece:?}\n")).collect();
    expect.assert_eq(&rendered);
}

#[test]
fn cjk_sentences_end_after_their_stops_and_the_closing_quotes() {
    use SentenceRule::Cjk;
    check(
        Cjk,
        "他来了。她走了。",
        expect![[r#"
        "他来了。"
        "她走了。"
    "#]],
    );
    // A run of stops is one end; the quote that closes after it belongs to it.
    check(
        Cjk,
        "他问：“真的吗？！”她点头。",
        expect![[r#"
        "他问：“真的吗？！”"
        "她点头。"
    "#]],
    );
    // Speech ends a sentence, so its attribution is a sentence of its own.
    check(
        Cjk,
        "“你好！”他说。“再见……”",
        expect![[r#"
        "“你好！”"
        "他说。"
        "“再见……”"
    "#]],
    );
    check(
        Cjk,
        "「行くぞ！」と彼は言った。ﾐﾅﾄ｡ｷﾘﾉｶﾜ｡",
        expect![[r#"
        "「行くぞ！」"
        "と彼は言った。"
        "ﾐﾅﾄ｡"
        "ｷﾘﾉｶﾜ｡"
    "#]],
    );
    // A stop inside a quote ends a sentence too: quotes are not counted.
    check(
        Cjk,
        "「待って。行かないで」",
        expect![[r#"
        "「待って。"
        "行かないで」"
    "#]],
    );
    // A line break ends a sentence (a title), and the white space after an end is
    // the sentence's.
    check(
        Cjk,
        "第一章 灯宗少年\n\n雾川上的雾，一年到头都不散。 灯宗就建在岛上。\n",
        expect![[r#"
        "第一章 灯宗少年\n\n"
        "雾川上的雾，一年到头都不散。 "
        "灯宗就建在岛上。\n"
    "#]],
    );
    // White space before the first sentence is the first sentence's; a text without
    // an end is one sentence; Latin stops are not CJK ends.
    check(
        Cjk,
        "\n  没有句号的文字 v1.2 end.",
        expect![[r#"
        "\n  没有句号的文字 v1.2 end."
    "#]],
    );
    check(
        Cjk,
        " \n ",
        expect![[r#"
        " \n "
    "#]],
    );
    check(Cjk, "", expect![[""]]);
}

#[test]
fn russian_sentences_end_at_a_stop_before_space_and_no_lowercase_letter() {
    use SentenceRule::Russian;
    check(
        Russian,
        "Он пришёл. Она ушла.",
        expect![[r#"
        "Он пришёл. "
        "Она ушла."
    "#]],
    );
    // A lowercase letter after the stop continues the sentence; a run of stops is
    // one end.
    check(
        Russian,
        "Я... не знаю. Правда?! Да…",
        expect![[r#"
        "Я... не знаю. "
        "Правда?! "
        "Да…"
    "#]],
    );
    // No space after the stop: a number, an abbreviation.
    check(
        Russian,
        "Пи равно 3.14 и т.д. Потом.",
        expect![[r#"
        "Пи равно 3.14 и т.д. "
        "Потом."
    "#]],
    );
    // The closing quote is the sentence's; speech ends a sentence before its
    // attribution, as in the CJK rule.
    check(
        Russian,
        "«Привет!» — сказал он. Она молчала.",
        expect![[r#"
        "«Привет!» "
        "— сказал он. "
        "Она молчала."
    "#]],
    );
    check(
        Russian,
        "— А-Чжао, опять за маслом? — со смехом окликнула его сестра.",
        expect![[r#"
        "— А-Чжао, опять за маслом? "
        "— со смехом окликнула его сестра."
    "#]],
    );
    // A line break ends a sentence, even one a lowercase line continues.
    check(
        Russian,
        "Глава первая\nТуман не рассеивается...\nникогда.",
        expect![[r#"
        "Глава первая\n"
        "Туман не рассеивается...\n"
        "никогда."
    "#]],
    );
    // What the rule cannot tell: initials end sentences.
    check(
        Russian,
        "А. С. Пушкин писал.",
        expect![[r#"
        "А. "
        "С. "
        "Пушкин писал."
    "#]],
    );
    // CJK stops are not Russian ends.
    check(
        Russian,
        "他来了。她走了。",
        expect![[r#"
        "他来了。她走了。"
    "#]],
    );
}

#[test]
fn a_language_has_a_rule_by_its_primary_subtag() {
    for (lang, rule) in [
        ("zh", Some(SentenceRule::Cjk)),
        ("zh-Hans", Some(SentenceRule::Cjk)),
        ("JA", Some(SentenceRule::Cjk)),
        ("ru", Some(SentenceRule::Russian)),
        ("ru-RU", Some(SentenceRule::Russian)),
        ("und", None),
        ("en", None),
        ("", None),
    ] {
        assert_eq!(SentenceRule::for_lang(lang), rule, "{lang}");
    }
}

/// Texts made of what the rules look at: stops, closers, spaces, line breaks,
/// letters of both cases and CJK characters.
fn texts() -> impl Strategy<Value = String> {
    let alphabet: Vec<char> = "。！？!?…‥｡.」』”“’）)»\"' \n\t\u{3000}аБвГxY他了山1".chars().collect();
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(alphabet), 0..40)
            .prop_map(|chars| chars.into_iter().collect::<String>()),
        any::<String>(),
    ]
}

proptest! {
    #[test]
    fn splitting_then_joining_gives_back_the_text(text in texts()) {
        for rule in [SentenceRule::Cjk, SentenceRule::Russian] {
            let pieces = sentences(&text, rule);
            prop_assert_eq!(pieces.concat(), text.clone());
            prop_assert!(pieces.iter().all(|piece| !piece.is_empty()));
            if !text.trim().is_empty() {
                prop_assert!(pieces.iter().all(|piece| !piece.trim().is_empty()), "{:?}", pieces);
            }
        }
    }
}

fn hash(byte: u8) -> Hash32 {
    Hash32([byte; 32])
}

/// A pair of chunk `key` of chapter 1, created by anna at `at_ms`, changed by boris
/// a second later.
fn pair(key: &str, source: &str, target: &str, at_ms: u64) -> Pair {
    Pair {
        source: source.into(),
        target: target.into(),
        created: Some(Stamp { at_ms, by: "human:anna".into() }),
        changed: Some(Stamp { at_ms: at_ms + 1000, by: "human:boris".into() }),
        origin: Origin {
            chapter: 1,
            chunk_key: key.into(),
            receipt: hash(key.len() as u8),
            snapshot: hash(0xaa),
            check: hash(0xcc),
        },
    }
}

fn input(source_lang: &str, pairs: Vec<Pair>) -> TmxInput {
    TmxInput { tool_version: "9.9.9".into(), source_lang: source_lang.into(), target_lang: "ru".into(), pairs }
}

/// Writes each document to a file and checks them all with check_tmx.py; the JSON
/// it printed per file.
fn checked(name: &str, source_lang: &str, documents: &[&TmxWritten]) -> (bool, Vec<Value>) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tmx").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<PathBuf> = documents
        .iter()
        .enumerate()
        .map(|(index, written)| {
            let path = dir.join(format!("{index}.tmx"));
            std::fs::write(&path, &written.bytes).unwrap();
            path
        })
        .collect();
    let output = test_support::interchange::check_tmx(source_lang, "ru", &files);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.code().is_some_and(|code| code <= 1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<Value> = stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(results.len(), files.len(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    (output.status.success(), results)
}

/// What translate-toolkit read: (source, target) per unit.
fn pairs_read(result: &Value) -> Vec<(String, String)> {
    result["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|unit| (unit["source"].as_str().unwrap().to_owned(), unit["target"].as_str().unwrap().to_owned()))
        .collect()
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(source, target)| (source.to_string(), target.to_string())).collect()
}

#[test]
fn a_document_is_valid_against_the_dtd_and_reads_back_to_the_pairs_written() {
    let aligned = pair("1", "他来了。\n“你好！”她说。", "Он пришёл.\n«Привет!» Она сказала.", 1_700_000_000_000);
    let unaligned = pair("22", "他来了。她走了。", "Он пришёл, а она ушла.", 1_700_000_100_000);
    let special = pair(
        "333 <&>",
        "  \"引用\" & <タグ> ]]> 'a'\r\n\ttab\u{7f}\u{85}\u{9f}\u{fdd0}\u{10ffff} ",
        "'кавычки' & <теги> ]]>\r\u{2028}",
        0,
    );
    let written = write(&input("zh", vec![aligned, unaligned, special]));
    assert_eq!(written.written, vec![Written::Sentences(3), Written::Whole, Written::Whole]);
    assert!(written.refused.is_empty());
    assert_eq!(written.n_units(), 5);
    let (valid, results) = checked("valid", "zh", &[&written]);
    let result = &results[0];
    assert!(valid, "{result}");
    // Sentence units hold each sentence without the white space around it; a whole
    // chunk is written exactly, white space, carriage returns and all.
    assert_eq!(
        pairs_read(result),
        owned(&[
            ("他来了。", "Он пришёл."),
            ("“你好！”", "«Привет!»"),
            ("她说。", "Она сказала."),
            ("他来了。她走了。", "Он пришёл, а она ушла."),
            (
                "  \"引用\" & <タグ> ]]> 'a'\r\n\ttab\u{7f}\u{85}\u{9f}\u{fdd0}\u{10ffff} ",
                "'кавычки' & <теги> ]]>\r\u{2028}",
            ),
        ])
    );
    assert_eq!(result["srclang"], "zh");
    let header = &result["header"];
    for (attribute, value) in [
        ("creationtool", "lorebank"),
        ("creationtoolversion", "9.9.9"),
        ("segtype", "sentence"),
        ("o-tmf", "lorebank"),
        ("adminlang", "en"),
        ("srclang", "zh"),
        ("datatype", "plaintext"),
    ] {
        assert_eq!(header[attribute], value, "{attribute}: {header}");
    }
    let units = result["units"].as_array().unwrap();
    let receipt = hash(1).to_hex();
    assert_eq!(units[0]["id"], format!("{receipt}/1"));
    assert_eq!(
        units[0]["attributes"],
        serde_json::json!({
            "tuid": format!("{receipt}/1"),
            "creationdate": "20231114T221320Z",
            "creationid": "human:anna",
            "changedate": "20231114T221321Z",
            "changeid": "human:boris",
        })
    );
    assert_eq!(
        units[2]["props"],
        serde_json::json!([
            ["x-lorebank-chapter", "1"],
            ["x-lorebank-chunk", "1"],
            ["x-lorebank-receipt", receipt],
            ["x-lorebank-snapshot", hash(0xaa).to_hex()],
            ["x-lorebank-check", hash(0xcc).to_hex()],
            ["x-lorebank-sentence", "3/3"],
        ])
    );
    // A whole chunk in a document of sentences says so.
    assert_eq!(units[3]["attributes"]["segtype"], "paragraph");
    assert_eq!(units[4]["props"][1], serde_json::json!(["x-lorebank-chunk", "333 <&>"]));
    assert_eq!(units[4]["attributes"]["creationdate"], "19700101T000000Z");
    // The same input gives the same bytes.
    assert_eq!(write(&input("zh", vec![])).bytes, write(&input("zh", vec![])).bytes);
    let again = write(&input("zh", vec![pair("1", "他来了。", "Он пришёл.", 0)]));
    assert_eq!(again, write(&input("zh", vec![pair("1", "他来了。", "Он пришёл.", 0)])));
}

#[test]
fn a_document_of_whole_chunks_is_segmented_by_paragraph() {
    // A language without a rule is not split; neither is a pair whose sides split
    // into one sentence each, or into different numbers.
    let und = write(&input("und", vec![pair("1", "他来了。她走了。", "Он пришёл. Она ушла.", 0)]));
    let zh = write(&input(
        "zh",
        vec![pair("1", "他来了。", "Он пришёл.", 0), pair("2", "他来了。她走了。", "Он пришёл. И ушёл. Всё.", 0)],
    ));
    assert_eq!(und.written, vec![Written::Whole]);
    assert_eq!(zh.written, vec![Written::Whole, Written::Whole]);
    let (valid, results) = checked("paragraphs", "zh", &[&zh]);
    assert!(valid, "{results:?}");
    assert_eq!(results[0]["header"]["segtype"], "paragraph");
    assert_eq!(results[0]["units"][0]["attributes"].get("segtype"), None);
    let (valid, results) = checked("und", "und", &[&und]);
    assert!(valid, "{results:?}");
    assert_eq!(pairs_read(&results[0]), owned(&[("他来了。她走了。", "Он пришёл. Она ушла.")]));
    // Without stamps, no dates and no ids; an empty memory is a valid document.
    let bare =
        write(&input("zh", vec![Pair { created: None, changed: None, ..pair("1", "他来了。", "Он пришёл.", 0) }]));
    let empty = write(&input("zh", vec![]));
    let (valid, results) = checked("bare", "zh", &[&bare, &empty]);
    assert!(valid, "{results:?}");
    assert_eq!(results[0]["units"][0]["attributes"], serde_json::json!({ "tuid": hash(1).to_hex() }));
    assert_eq!(results[1]["units"], serde_json::json!([]));
}

#[test]
fn a_text_with_a_character_xml_cannot_hold_is_refused_and_named() {
    // XML 1.0 holds tab, line feed and carriage return of the C0 controls, and
    // neither U+FFFE nor U+FFFF; it holds DEL, the C1 controls and the other
    // noncharacters.
    for c in ['\0', '\u{1}', '\u{8}', '\u{b}', '\u{c}', '\u{1b}', '\u{1f}', '\u{fffe}', '\u{ffff}'] {
        assert_eq!(unrepresentable(&format!("a{c}b")), Some(c));
    }
    for c in ['\t', '\n', '\r', '\u{7f}', '\u{80}', '\u{9f}', '\u{fdd0}', '\u{1fffe}', '\u{10ffff}'] {
        assert_eq!(unrepresentable(&format!("a{c}b")), None, "U+{:04X}", c as u32);
    }
    let written = write(&input(
        "zh",
        vec![
            pair("1", "他来了。\u{1}", "Он пришёл.", 0),
            pair("2", "他来了。", "Он пришёл.", 0),
            pair("3", "他来了。", "Он\u{ffff} пришёл.\u{0}", 0),
        ],
    ));
    assert_eq!(written.written, vec![Written::Refused, Written::Whole, Written::Refused]);
    assert_eq!(
        written.refused,
        vec![
            Refused { pair: 0, side: Side::Source, character: '\u{1}' },
            Refused { pair: 2, side: Side::Target, character: '\u{ffff}' },
        ]
    );
    let (valid, results) = checked("refused", "zh", &[&written]);
    assert!(valid, "{results:?}");
    assert_eq!(pairs_read(&results[0]), owned(&[("他来了。", "Он пришёл.")]));
}

#[test]
fn the_dtd_check_refuses_a_document_that_breaks_the_dtd() {
    let written = write(&input("zh", vec![pair("1", "他来了。", "Он пришёл.", 0)]));
    let text = String::from_utf8(written.bytes.clone()).unwrap();
    let broken = TmxWritten {
        bytes: text
            .replace(" datatype=\"plaintext\"", "")
            .replace("<prop ", "<note ")
            .replace("</prop>", "</note>")
            .into_bytes(),
        ..written
    };
    let (valid, results) = checked("broken", "zh", &[&broken]);
    assert!(!valid);
    let errors = results[0]["errors"].to_string();
    assert!(errors.contains("datatype") && errors.contains("note"), "{errors}");
}
