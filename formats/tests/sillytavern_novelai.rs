//! SillyTavern World Info and NovelAI lorebook: the fixtures written from the spec
//! (docs/formats.md) read exactly, bad files refused with the
//! place and field, detection, the exported bytes, what an export cannot hold, and
//! round trips.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use formats::{Alias, At, ExportInput, ExportTerm, Format, Lost, Notice, Parsed, ReadError, Term};
use ledger_model::{AliasKind, KeyLogic, Scope, SecondaryKeys, Status, SummaryPut};
use proptest::prelude::*;
use test_support::interchange::strategies::cjk_src;
use test_support::interchange::{
    alias, assert_read_write_read, assert_write_read, content_of, error, fixture, languages, lost, read_as, uid,
};
use test_support::records::{summary_id, term_id};

/// The golden export at `path`; `LOREBANK_BLESS=1` rewrites it from `bytes` (for a
/// deliberate change of what the writer writes, reviewed in the diff).
fn golden(path: &str, bytes: &[u8]) -> String {
    if std::env::var_os("LOREBANK_BLESS").is_some_and(|bless| bless == "1") {
        let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::write(&full, bytes).unwrap_or_else(|error| panic!("{full}: {error}"));
    }
    String::from_utf8(fixture(path)).unwrap()
}

/// `bytes` read as `format` of a Chinese book.
fn read(format: Format, bytes: &[u8]) -> Parsed {
    read_as("zh", format, bytes)
}

fn notice(at: &At, message: &str) -> Notice {
    Notice { at: Some(at.clone()), message: message.to_owned() }
}

fn dst() -> impl Strategy<Value = String> {
    "[А-Яа-яЁё]{1,8}( [А-Яа-яЁё-]{1,8}){0,2}"
}

fn note() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[А-Яа-я0-9 ,.:→\u{4e00}-\u{4e20}]{0,24}(\n[А-Яа-я ,.\u{4e00}-\u{4e20}]{0,24}){0,3}")
        .prop_map(|note| note.map(|note| note.trim().to_owned()).filter(|note| !note.is_empty()))
}

fn logic() -> impl Strategy<Value = KeyLogic> {
    prop_oneof![Just(KeyLogic::AndAny), Just(KeyLogic::NotAll), Just(KeyLogic::NotAny), Just(KeyLogic::AndAll)]
}

/// Keys without repeats, none equal to `src`.
fn distinct(src: &str, keys: Vec<String>) -> Vec<String> {
    let mut distinct: Vec<String> = Vec::new();
    for key in keys {
        if key != src && !distinct.contains(&key) {
            distinct.push(key);
        }
    }
    distinct
}

/// A term carrying only what a lore format carries: with `full` (SillyTavern) also
/// priority and secondary keys.
fn lore_term(full: bool) -> impl Strategy<Value = Term> {
    (
        cjk_src(),
        dst(),
        note(),
        prop::collection::vec(cjk_src(), 0..3),
        any::<bool>(),
        any::<bool>(),
        any::<i32>(),
        proptest::option::of((logic(), prop::collection::vec(cjk_src(), 1..4))),
    )
        .prop_map(move |(src, dst, note, aliases, draft, constant, priority, secondary)| {
            let aliases = distinct(&src, aliases).iter().map(|surface| alias(surface)).collect();
            let secondary =
                secondary.filter(|_| full).map(|(logic, keys)| SecondaryKeys { logic, keys: distinct("", keys) });
            Term {
                note,
                status: if draft { Status::Draft } else { Status::Approved },
                constant,
                priority: if full { priority } else { 0 },
                secondary,
                aliases,
                ..Term::new(src, dst)
            }
        })
}

fn summary() -> impl Strategy<Value = SummaryPut> {
    let scope = prop_oneof![
        (1u32..500).prop_map(Scope::Chapter),
        (1u32..500, 0u32..50).prop_map(|(from, length)| Scope::Arc { from, to: from + length }),
        Just(Scope::Book),
    ];
    (1u32..1000, scope, proptest::option::of(1u32..1000), "[А-Яа-я \u{4e00}-\u{4e20}\n.]{1,40}").prop_map(
        |(number, scope, visible_from, text)| SummaryPut {
            id: summary_id(number),
            scope,
            text,
            visible_from,
            owner: None,
            owner_role: None,
            release_to: None,
        },
    )
}

fn lore_export(full: bool) -> impl Strategy<Value = ExportInput> {
    (prop::collection::vec(lore_term(full), 0..8), prop::collection::vec(summary(), 0..3)).prop_map(
        |(terms, summaries)| ExportInput {
            source_lang: "zh".into(),
            target_lang: "ru".into(),
            chapter: Some(7),
            terms: terms
                .into_iter()
                .enumerate()
                .map(|(index, term)| ExportTerm { id: term_id(index as u32 * 3 + 1), term })
                .collect(),
            summaries,
        },
    )
}

/// A JSON value built from a fixture with parts replaced by arbitrary values: what a
/// damaged or hand-edited file may hold.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,8}".prop_map(Value::String),
        "/[a-z(|)]{0,4}/[gimsuy-]{0,3}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z0-9]{0,6}|uid|key|keys|entries|id|text", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Replaces the value at a pseudo-random place of `value` (chosen by `path`) with
/// `replacement`.
fn graft(value: &mut serde_json::Value, path: &[usize], replacement: serde_json::Value) {
    use serde_json::Value;
    let Some((&first, rest)) = path.split_first() else {
        *value = replacement;
        return;
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(first % map.len()).cloned().unwrap();
            graft(map.get_mut(&key).unwrap(), rest, replacement);
        }
        Value::Array(items) if !items.is_empty() => {
            let index = first % items.len();
            graft(&mut items[index], rest, replacement);
        }
        other => *other = replacement,
    }
}

// ---------------------------------------------------------------------------------
// SillyTavern
// ---------------------------------------------------------------------------------

const ST_ACTIVATION: &str = "SillyTavern activates an entry when a key occurs in the last scanDepth messages (a \
    lower-cased substring test unless caseSensitive; matchWholeWords changes nothing for CJK keys, since every CJK \
    character is a word boundary to JavaScript), keeps it with its probability, inserts by order and stops at the \
    token budget (25 % of the context by default); lorebank matches keys leftmost-longest on folded text inside \
    their windows, never rolls a probability, and evicts by its own budget";

const ST_DISABLED: &str = "a disabled SillyTavern entry is never activated; lorebank imports it as a draft, which \
    it injects marked [unverified]";

fn entry(at: &At, term: Term) -> formats::Entry {
    formats::Entry { at: at.clone(), term }
}

#[test]
fn sillytavern_fixture_reads_every_field() {
    let parsed = read(Format::SillyTavern, &fixture("sillytavern/world.json"));
    let (u0, u2, u5, u7, u10, u11, u12, u13, u14, u15) =
        (uid("0"), uid("2"), uid("5"), uid("7"), uid("10"), uid("11"), uid("12"), uid("13"), uid("14"), uid("15"));
    // Entries in uid order (10 after 7, though "10" sorts before "2" as text).
    let entries = vec![
        entry(
            &u0,
            Term {
                note: Some("Главный герой, носит кольцо.".into()),
                priority: 100,
                aliases: vec![alias("炎子")],
                ..Term::new("萧炎", "Сяо Янь")
            },
        ),
        // The rendering line lorebank writes first is taken out of the note.
        entry(
            &u2,
            Term {
                note: Some("Дух в кольце.\nУчитель Сяо Яня.".into()),
                priority: 250,
                constant: true,
                secondary: Some(SecondaryKeys {
                    logic: KeyLogic::AndAny,
                    keys: vec!["戒指".into(), "骨灵冷火".into()],
                }),
                ..Term::new("药老", "Яо Лао")
            },
        ),
        entry(
            &u5,
            Term {
                note: Some("Невеста, расторгшая помолвку.".into()),
                priority: 100,
                secondary: Some(SecondaryKeys { logic: KeyLogic::NotAll, keys: vec!["退婚".into()] }),
                ..Term::new("纳兰嫣然", "Налань Яньжань")
            },
        ),
        entry(
            &u7,
            Term {
                priority: 100,
                secondary: Some(SecondaryKeys { logic: KeyLogic::NotAny, keys: vec!["夢".into()] }),
                ..Term::new("竜騎士", "Драконий рыцарь")
            },
        ),
        // No comment: the rendering comes from the content's first line.
        entry(
            &u10,
            Term {
                note: Some("Трансформируется при луне.".into()),
                status: Status::Draft,
                priority: -5,
                secondary: Some(SecondaryKeys {
                    logic: KeyLogic::AndAll, keys: vec!["変身".into(), "契約".into()]
                }),
                ..Term::new("魔法少女", "Девочка-волшебница")
            },
        ),
        // `{{char}}` is a macro, so 云韵 is the first plaintext key; not selective, so
        // no secondary keys.
        entry(&u15, Term { priority: 100, aliases: vec![alias("云宗主")], ..Term::new("云韵", "Юнь Юнь") }),
    ];
    assert_eq!(parsed.entries, entries);
    assert_eq!(
        parsed.summaries,
        vec![formats::ImportedSummary {
            at: u13.clone(),
            put: SummaryPut {
                id: summary_id(2),
                scope: Scope::Chapter(3),
                text: "Сяо Янь находит кольцо.\n药老 просыпается.".into(),
                visible_from: Some(4),
                owner: None,
                owner_role: None,
                release_to: None,
            },
        }]
    );
    assert_eq!(
        parsed.skipped,
        vec![
            formats::Skipped { at: u11.clone(), reason: "no plaintext key: every key is a regex or a macro".into() },
            formats::Skipped {
                at: u12,
                reason: "no key (a keyless entry is a term only when its comment marks a lorebank summary)".into(),
            },
            formats::Skipped { at: u14, reason: "no dst".into() },
        ]
    );
    let expected_lost = vec![
        lost(&At::File, "originalData", "{\"entries\":[],\"name\":\"斗破苍穹\"}"),
        lost(&u2, "displayIndex", "1"),
        lost(&u5, "position", "4"),
        lost(&u5, "depth", "2"),
        lost(&u5, "role", "1"),
        lost(&u5, "characterFilter", "{\"isExclude\":true,\"names\":[\"Xiao Yan.png\"],\"tags\":[]}"),
        lost(&u5, "content", "@@activate"),
        lost(&u7, "key", "/ドラゴン.+/i"),
        lost(&u7, "keysecondary", "/幻.?/"),
        lost(&u7, "probability", "50"),
        lost(&u7, "useProbability", "false"),
        lost(&u7, "scanDepth", "5"),
        lost(&u7, "caseSensitive", "false"),
        lost(&u7, "matchWholeWords", "true"),
        lost(&u7, "useGroupScoring", "true"),
        lost(&u10, "group", "героини"),
        lost(&u10, "groupOverride", "true"),
        lost(&u10, "groupWeight", "40"),
        lost(&u10, "sticky", "2"),
        lost(&u10, "cooldown", "3"),
        lost(&u10, "delay", "1"),
        lost(&u11, "key", "/斗(气|者)/"),
        lost(&u15, "key", "{{char}}"),
        lost(&u15, "keysecondary", "宗主"),
        lost(&u15, "vectorized", "true"),
        lost(&u15, "addMemo", "true"),
        lost(&u15, "ignoreBudget", "true"),
        lost(&u15, "excludeRecursion", "true"),
        lost(&u15, "preventRecursion", "true"),
        lost(&u15, "matchPersonaDescription", "true"),
        lost(&u15, "matchCharacterDescription", "true"),
        lost(&u15, "matchCharacterPersonality", "true"),
        lost(&u15, "matchCharacterDepthPrompt", "true"),
        lost(&u15, "matchScenario", "true"),
        lost(&u15, "matchCreatorNotes", "true"),
        lost(&u15, "delayUntilRecursion", "2"),
        lost(&u15, "outletName", "lore"),
        lost(&u15, "automationId", "qr-yun"),
        lost(&u15, "triggers", "[\"normal\",\"swipe\"]"),
        lost(&u15, "extensions", "{\"weight\":3}"),
    ];
    assert_eq!(parsed.lost, expected_lost);
    assert_eq!(parsed.lost.len(), 40);
    assert_eq!(
        parsed.notices,
        vec![
            notice(&u0, "repeated key \"萧炎\" dropped"),
            Notice { at: None, message: ST_ACTIVATION.into() },
            Notice { at: None, message: ST_DISABLED.into() },
        ]
    );
}

#[test]
fn sillytavern_entry_of_an_older_version_takes_the_defaults() {
    // SillyTavern before 2024 wrote fewer fields; absent ones have their defaults,
    // and `selective` absent is true.
    let bytes = r#"{"entries":{"3":{"uid":3,"key":["斗帝"],"keysecondary":["远古"],"comment":"Доу Ди","content":"",
        "constant":false,"selectiveLogic":3,"order":100,"position":0,"disable":false}}}"#;
    let parsed = read(Format::SillyTavern, bytes.as_bytes());
    let expected = Term {
        priority: 100,
        secondary: Some(SecondaryKeys { logic: KeyLogic::AndAll, keys: vec!["远古".into()] }),
        ..Term::new("斗帝", "Доу Ди")
    };
    assert_eq!(parsed.entries, vec![entry(&uid("3"), expected)]);
    assert_eq!(parsed.lost, Vec::new());
    assert_eq!(parsed.notices, vec![Notice { at: None, message: ST_ACTIVATION.into() }]);
}

#[test]
fn sillytavern_rendering_line_is_removed_only_when_it_is_this_entrys() {
    let read_one = |comment: &str, content: &str| {
        let file =
            serde_json::json!({"entries": {"0": {"uid": 0, "key": ["萧炎"], "comment": comment, "content": content}}});
        let parsed = read(Format::SillyTavern, file.to_string().as_bytes());
        let term = &parsed.entries[0].term;
        (term.dst.clone(), term.note.clone())
    };
    let note = |text: &str| Some(text.to_owned());
    // Exactly this entry's rendering line: removed.
    assert_eq!(read_one("Сяо Янь", "萧炎 → Сяо Янь\nГерой."), ("Сяо Янь".into(), note("Герой.")));
    assert_eq!(read_one("Сяо Янь", "萧炎 → Сяо Янь"), ("Сяо Янь".into(), None));
    // Another rendering, another src, or another arrow: kept in the note.
    assert_eq!(read_one("Сяо Янь", "萧炎 → Сяо Ян\nГерой."), ("Сяо Янь".into(), note("萧炎 → Сяо Ян\nГерой.")));
    assert_eq!(read_one("Сяо Янь", "药老 → Яо Лао"), ("Сяо Янь".into(), note("药老 → Яо Лао")));
    assert_eq!(read_one("Сяо Янь", "萧炎 -> Сяо Янь"), ("Сяо Янь".into(), note("萧炎 -> Сяо Янь")));
    // Only the first line is the rendering line.
    assert_eq!(read_one("Сяо Янь", "萧炎 → Сяо Янь\n萧炎 → Сяо Янь"), ("Сяо Янь".into(), note("萧炎 → Сяо Янь")));
    // No comment: the rendering line gives the rendering.
    assert_eq!(read_one("", "萧炎 → Сяо Янь\r\nГерой.\r\nСын клана."), ("Сяо Янь".into(), note("Герой.\nСын клана.")));
    let file = r#"{"entries":{"0":{"uid":0,"key":["萧炎"],"comment":"  ","content":"萧炎 → \nГерой."}}}"#;
    let parsed = read(Format::SillyTavern, file.as_bytes());
    assert_eq!(parsed.entries, Vec::new());
    assert_eq!(parsed.skipped, vec![formats::Skipped { at: uid("0"), reason: "no dst".into() }]);
}

fn at_field(at: At, field: &str, message: &str) -> ReadError {
    error(Some(at), Some(field), message)
}

/// Every bad file and the exact error; none panics.
fn assert_bad_inputs(format: Format, table: Vec<(&[u8], ReadError)>) {
    for (bytes, expected) in table {
        let result = formats::read(format, bytes, &languages("zh"));
        assert_eq!(result, Err(expected), "{}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn sillytavern_bad_inputs_name_the_uid_and_field() {
    let entries = |entry: &str| format!(r#"{{"entries":{{"3":{entry}}}}}"#);
    let owned: Vec<(String, ReadError)> = vec![
        (entries(r#"{"uid":4}"#), at_field(uid("3"), "uid", "must be 3, the entry's key in `entries`, not 4")),
        (entries(r#"{"uid":"3"}"#), at_field(uid("3"), "uid", "must be 3, the entry's key in `entries`, not \"3\"")),
        (entries("[]"), at_field(uid("3"), "entry", "must be an object, not []")),
        (entries(r#"{"key":"萧炎"}"#), at_field(uid("3"), "key", "must be a list of strings, not \"萧炎\"")),
        (entries(r#"{"key":["萧炎",1]}"#), at_field(uid("3"), "key", "must be a list of strings, not [\"萧炎\",1]")),
        (entries(r#"{"keysecondary":{}}"#), at_field(uid("3"), "keysecondary", "must be a list of strings, not {}")),
        (
            entries(r#"{"key":["萧炎"],"selectiveLogic":7}"#),
            at_field(uid("3"), "selectiveLogic", "7 is not 0 (AND ANY), 1 (NOT ALL), 2 (NOT ANY) or 3 (AND ALL)"),
        ),
        (
            entries(r#"{"selectiveLogic":"1"}"#),
            at_field(uid("3"), "selectiveLogic", "must be a whole number, not \"1\""),
        ),
        (entries(r#"{"selectiveLogic":1.5}"#), at_field(uid("3"), "selectiveLogic", "must be a whole number, not 1.5")),
        (entries(r#"{"selective":"yes"}"#), at_field(uid("3"), "selective", "must be true or false, not \"yes\"")),
        (entries(r#"{"constant":1}"#), at_field(uid("3"), "constant", "must be true or false, not 1")),
        (entries(r#"{"disable":"false"}"#), at_field(uid("3"), "disable", "must be true or false, not \"false\"")),
        (entries(r#"{"comment":["Сяо Янь"]}"#), at_field(uid("3"), "comment", "must be a string, not [\"Сяо Янь\"]")),
        (entries(r#"{"content":5}"#), at_field(uid("3"), "content", "must be a string, not 5")),
        (entries(r#"{"order":1e12}"#), at_field(uid("3"), "order", "1000000000000 is out of range for a priority")),
        (entries(r#"{"order":"100"}"#), at_field(uid("3"), "order", "must be a whole number, not \"100\"")),
        (
            r#"{"entries":{"a":{}}}"#.into(),
            at_field(uid("a"), "uid", "entries key \"a\" is not a uid (a whole number)"),
        ),
        (
            r#"{"entries":{"07":{}}}"#.into(),
            at_field(uid("07"), "uid", "entries key \"07\" is not a uid (a whole number)"),
        ),
        (r#"{"entries":[]}"#.into(), at_field(At::File, "entries", "must be an object keyed by uid, not []")),
        (
            r#"{"lorebookVersion":4,"entries":[]}"#.into(),
            at_field(At::File, "entries", "a list, as in a NovelAI lorebook: read this file as `novelai`"),
        ),
        (r#"{"name":"x"}"#.into(), at_field(At::File, "entries", "missing: World Info is {\"entries\": {uid: entry}}")),
        ("[]".into(), error(None, None, "a SillyTavern World Info file is a JSON object with `entries`")),
        (
            "{\"entries\":\n{\"0\":}}".into(),
            error(Some(At::Line(2)), None, "malformed JSON: expected value at line 2 column 6"),
        ),
    ];
    let mut table: Vec<(&[u8], ReadError)> =
        owned.iter().map(|(text, error)| (text.as_bytes(), error.clone())).collect();
    let latin1: &[u8] = b"{\"entries\":{\"0\":{\"key\":[\"caf\xe9\"]}}}";
    table.push((
        latin1,
        error(Some(At::Line(1)), None, "not UTF-8 (invalid byte at offset 28); save the file as UTF-8"),
    ));
    assert_bad_inputs(Format::SillyTavern, table);
}

#[test]
fn detect_picks_sillytavern_and_novelai() {
    let world = fixture("sillytavern/world.json");
    let lorebook = fixture("novelai/doupo.lorebook");
    assert_eq!(formats::detect("world.json", &world), Ok(Format::SillyTavern));
    assert_eq!(formats::detect("world", &world), Ok(Format::SillyTavern));
    assert_eq!(formats::detect("world.txt", &world), Ok(Format::SillyTavern));
    assert_eq!(formats::detect("doupo.lorebook", &lorebook), Ok(Format::NovelAi));
    // A lorebook has `entries` too: saved as .json, or with no extension, it is still
    // NovelAI's.
    assert_eq!(formats::detect("doupo.json", &lorebook), Ok(Format::NovelAi));
    assert_eq!(formats::detect("doupo", &lorebook), Ok(Format::NovelAi));
    // And what lorebank writes is detected as what it is.
    let input = export_input(vec![ExportTerm { id: term_id(1), term: Term::new("萧炎", "Сяо Янь") }], vec![]);
    let world = formats::write(Format::SillyTavern, &input).unwrap().bytes;
    let lorebook = formats::write(Format::NovelAi, &input).unwrap().bytes;
    assert_eq!(formats::detect("export.json", &world), Ok(Format::SillyTavern));
    assert_eq!(formats::detect("export.json", &lorebook), Ok(Format::NovelAi));
}

fn export_input(terms: Vec<ExportTerm>, summaries: Vec<SummaryPut>) -> ExportInput {
    ExportInput { source_lang: "zh".into(), target_lang: "ru".into(), chapter: Some(3), terms, summaries }
}

/// Two terms and a summary, with every field a lore format carries set.
fn sample_export() -> ExportInput {
    let yao = Term {
        note: Some("Дух в кольце.\nУчитель.".into()),
        priority: 250,
        constant: true,
        secondary: Some(SecondaryKeys { logic: KeyLogic::NotAll, keys: vec!["戒指".into(), "骨灵".into()] }),
        aliases: vec![alias("药尘")],
        ..Term::new("药老", "Яо Лао")
    };
    let girl = Term { status: Status::Draft, ..Term::new("魔法少女", "Девочка-волшебница") };
    let summary = SummaryPut {
        id: summary_id(2),
        scope: Scope::Arc { from: 1, to: 2 },
        text: "Сяо Янь находит кольцо.".into(),
        visible_from: Some(3),
        owner: None,
        owner_role: None,
        release_to: None,
    };
    export_input(
        vec![ExportTerm { id: term_id(4), term: yao }, ExportTerm { id: term_id(9), term: girl }],
        vec![summary],
    )
}

#[test]
fn sillytavern_export_is_a_file_sillytavern_writes() {
    let exported = formats::write(Format::SillyTavern, &sample_export()).unwrap();
    assert_eq!(exported.lost, Vec::new());
    let expected = golden("sillytavern/export.json", &exported.bytes);
    assert_eq!(String::from_utf8(exported.bytes.clone()).unwrap(), expected);
    // Every field of SillyTavern's new-entry template (`newWorldInfoEntryDefinition`
    // without the definition-only `characterFilter*`), in its order, after the uid.
    let template = [
        "uid",
        "key",
        "keysecondary",
        "comment",
        "content",
        "constant",
        "vectorized",
        "selective",
        "selectiveLogic",
        "addMemo",
        "order",
        "position",
        "disable",
        "ignoreBudget",
        "excludeRecursion",
        "preventRecursion",
        "matchPersonaDescription",
        "matchCharacterDescription",
        "matchCharacterPersonality",
        "matchCharacterDepthPrompt",
        "matchScenario",
        "matchCreatorNotes",
        "delayUntilRecursion",
        "probability",
        "useProbability",
        "depth",
        "outletName",
        "group",
        "groupOverride",
        "groupWeight",
        "scanDepth",
        "caseSensitive",
        "matchWholeWords",
        "useGroupScoring",
        "automationId",
        "role",
        "sticky",
        "cooldown",
        "delay",
        "triggers",
    ];
    let text = String::from_utf8(exported.bytes.clone()).unwrap();
    let fields: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("            \""))
        .filter_map(|line| line.split_once('"').map(|(name, _)| name))
        .collect();
    assert_eq!(fields.len(), 3 * template.len());
    for entry in fields.chunks(template.len()) {
        assert_eq!(entry, template);
    }
    assert_eq!(formats::write(Format::SillyTavern, &sample_export()).unwrap().bytes, exported.bytes);
}

#[test]
fn export_reports_what_a_lore_entry_cannot_hold() {
    let term = Term {
        kind: Some("character".into()),
        gender: Some(ledger_model::Gender::Masculine),
        window: ledger_model::Window { since: 2, until: Some(9) },
        status: Status::Auto,
        priority: 5,
        secondary: Some(SecondaryKeys { logic: KeyLogic::AndAny, keys: vec!["戒指".into(), "/戒.?/".into()] }),
        aliases: vec![
            Alias { surface: "小炎子".into(), kind: AliasKind::Nickname, window: None },
            Alias {
                surface: "炎帝".into(),
                kind: AliasKind::Title,
                window: Some(ledger_model::Window { since: 5, until: None }),
            },
            alias("/炎.+/i"),
        ],
        ..Term::new("萧炎", "Сяо Янь")
    };
    let input = export_input(vec![ExportTerm { id: term_id(7), term }], vec![]);
    let at = At::Record(term_id(7));
    let record = |field: &str| Lost { at: at.clone(), field: field.into(), value: None };
    let specific = vec![
        lost(&at, "aliases.kind", "小炎子: nickname"),
        lost(&at, "aliases.kind", "炎帝: title"),
        lost(&at, "aliases.window", "炎帝: 5-"),
        lost(&at, "aliases", "/炎.+/i"),
        lost(&at, "status", "auto"),
    ];
    let st = formats::write(Format::SillyTavern, &input).unwrap();
    let mut expected = vec![record("kind"), record("gender"), record("window")];
    expected.extend(specific.iter().cloned());
    expected.push(lost(&at, "secondary", "/戒.?/"));
    assert_eq!(st.lost, expected);
    let nai = formats::write(Format::NovelAi, &input).unwrap();
    let mut expected =
        vec![record("kind"), record("gender"), record("window"), record("priority"), record("secondary")];
    expected.extend(specific);
    assert_eq!(nai.lost, expected);
}

#[test]
fn the_spoiler_gate_holds_in_the_file_the_writer_adds_nothing() {
    // The book gives the writer what chapter 3 may see; the file holds exactly that:
    // no entry, key, rendering or summary of its own.
    for format in [Format::SillyTavern, Format::NovelAi] {
        let input = sample_export();
        let exported = formats::write(format, &input).unwrap();
        let parsed = read(format, &exported.bytes);
        let (terms, summaries) = content_of(&parsed);
        assert_eq!(terms.iter().map(|term| term.src.as_str()).collect::<Vec<_>>(), ["药老", "魔法少女"]);
        assert_eq!(summaries, input.summaries);
        let value: serde_json::Value = serde_json::from_slice(&exported.bytes).unwrap();
        let count = match &value["entries"] {
            serde_json::Value::Object(entries) => entries.len(),
            serde_json::Value::Array(entries) => entries.len(),
            _ => unreachable!(),
        };
        assert_eq!(count, 3, "{format}");
        let empty = formats::write(format, &export_input(vec![], vec![])).unwrap();
        assert_eq!(read(format, &empty.bytes), Parsed::default(), "{format}");
    }
}

#[test]
fn fixtures_are_fixed_points_of_read_write_read() {
    for (format, path) in [
        (Format::SillyTavern, "sillytavern/world.json"),
        (Format::NovelAi, "novelai/doupo.lorebook"),
        (Format::SillyTavern, "sillytavern/export.json"),
        (Format::NovelAi, "novelai/export.lorebook"),
    ] {
        assert_read_write_read(path, "zh", format, &fixture(path));
    }
}

#[test]
fn a_note_that_starts_with_the_rendering_line_comes_back_whole() {
    let note = "萧炎 → Сяо Янь\nГерой.";
    let term = Term { note: Some(note.into()), ..Term::new("萧炎", "Сяо Янь") };
    for format in [Format::SillyTavern, Format::NovelAi] {
        assert_write_read("zh", format, &export_input(vec![ExportTerm { id: term_id(1), term: term.clone() }], vec![]));
    }
}

#[test]
fn regex_keys_are_told_apart_as_the_tools_do() {
    // SillyTavern's parseRegexFromString: `/pattern/flags`, flags from `gimsuy` each
    // at most once, no unescaped `/` inside; anything else is a plaintext key.
    let keys = ["萧炎", "/炎.+/gi", "/a\\/b/", "/a/b/", "/炎/gg", "/炎/x", "//", "/炎", "{{user}}的剑", "{{炎"];
    let file = serde_json::json!({"entries": {"0": {"uid": 0, "key": keys, "comment": "Сяо Янь"}}});
    let parsed = read(Format::SillyTavern, file.to_string().as_bytes());
    let surfaces: Vec<&str> = parsed.entries[0].term.aliases.iter().map(|alias| alias.surface.as_str()).collect();
    assert_eq!(surfaces, ["/a/b/", "/炎/gg", "/炎/x", "//", "/炎", "{{炎"]);
    let at = uid("0");
    assert_eq!(
        parsed.lost,
        vec![lost(&at, "key", "/炎.+/gi"), lost(&at, "key", "/a\\/b/"), lost(&at, "key", "{{user}}的剑")]
    );
    // NovelAI: `/pattern/flags` with flags from `imsu`, `-` turning one off.
    let keys = ["萧炎", "/炎.+/i", "/炎/-m", "/炎/g", "//"];
    let file =
        serde_json::json!({"lorebookVersion": 4, "entries": [{"id": "a", "keys": keys, "displayName": "Сяо Янь"}]});
    let parsed = read(Format::NovelAi, file.to_string().as_bytes());
    let surfaces: Vec<&str> = parsed.entries[0].term.aliases.iter().map(|alias| alias.surface.as_str()).collect();
    assert_eq!(surfaces, ["/炎/g", "//"]);
    assert_eq!(parsed.lost, vec![lost(uid("a"), "keys", "/炎.+/i"), lost(uid("a"), "keys", "/炎/-m")]);
}

#[test]
fn summary_markers_are_recognised_only_exactly() {
    let read_title = |title: &str| {
        let file = serde_json::json!({"entries": {"0": {"uid": 0, "key": [], "comment": title, "content": "Текст."}}});
        read(Format::SillyTavern, file.to_string().as_bytes())
    };
    let book = read_title("lorebank summary S-1 book");
    assert_eq!(
        book.summaries[0].put,
        SummaryPut {
            id: summary_id(1),
            scope: Scope::Book,
            text: "Текст.".into(),
            visible_from: None,
            owner: None,
            owner_role: None,
            release_to: None
        }
    );
    let arc = read_title("lorebank summary S-12 arc 3-5 from 6");
    assert_eq!(arc.summaries[0].put.scope, Scope::Arc { from: 3, to: 5 });
    assert_eq!(arc.summaries[0].put.visible_from, Some(6));
    for title in [
        "lorebank summary T-1 book",
        "lorebank summary S-01 book",
        "lorebank summary S-1 chapter 03",
        "lorebank summary S-1 chapter 3 from",
        "lorebank summary S-1 book extra",
        "lorebank summary S-1  book",
        "Lorebank summary S-1 book",
        "lorebank summary S-1 arc 3",
    ] {
        let parsed = read_title(title);
        assert_eq!(parsed.summaries, Vec::new(), "{title}");
        assert_eq!(parsed.skipped.len(), 1, "{title}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn sillytavern_round_trip(input in lore_export(true)) {
        assert_write_read("zh", Format::SillyTavern, &input);
    }

    #[test]
    fn novelai_round_trip(input in lore_export(false)) {
        assert_write_read("zh", Format::NovelAi, &input);
    }

    #[test]
    fn export_then_read_then_export_is_a_fixed_point(input in lore_export(true)) {
        for format in [Format::SillyTavern, Format::NovelAi] {
            let bytes = formats::write(format, &input).unwrap().bytes;
            assert_read_write_read("an export", "zh", format, &bytes);
        }
    }

    #[test]
    fn readers_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        for format in [Format::SillyTavern, Format::NovelAi] {
            let _ = formats::read(format, &bytes, &languages("zh"));
        }
    }

    #[test]
    fn readers_never_panic_on_damaged_files(
        path in prop::collection::vec(any::<usize>(), 0..6),
        replacement in json_value(),
    ) {
        for (format, name) in [(Format::SillyTavern, "sillytavern/world.json"), (Format::NovelAi, "novelai/doupo.lorebook")] {
            let mut value: serde_json::Value = serde_json::from_slice(&fixture(name)).unwrap();
            graft(&mut value, &path, replacement.clone());
            let _ = formats::read(format, value.to_string().as_bytes(), &languages("zh"));
        }
    }
}

// ---------------------------------------------------------------------------------
// NovelAI
// ---------------------------------------------------------------------------------

const NAI_ACTIVATION: &str = "NovelAI activates an entry when a key occurs in the last searchRange characters of \
    the story, case-insensitively and bounded by word edges (how the bound treats CJK is not documented), and \
    inserts by budget priority within token budgets; lorebank matches keys leftmost-longest on folded text inside \
    their windows and evicts by its own budget";

const NAI_DISABLED: &str = "a disabled NovelAI entry is never activated; lorebank imports it as a draft, which it \
    injects marked [unverified]";

#[test]
fn novelai_fixture_reads_every_field() {
    let parsed = read(Format::NovelAi, &fixture("novelai/doupo.lorebook"));
    let xiao = uid("bd90161f-4ff6-44a0-8522-0f25ad26aae3");
    let dragon = uid("0f4b3c1e-9a57-4d2e-8b61-3c9e2f7a1d05");
    let girl = uid("6a1d2b7c-3e4f-4a5b-9c6d-7e8f9a0b1c2d");
    let dou = uid("7b2e3c8d-4f5a-4b6c-8d7e-8f9a0b1c2d3e");
    let summary = uid("8c3f4d9e-5a6b-4c7d-9e8f-9a0b1c2d3e4f");
    let sect = uid("9d4a5eaf-6b7c-4d8e-8f9a-0b1c2d3e4f5a");
    let world = uid("ae5b6fb0-7c8d-4e9f-9a0b-1c2d3e4f5a6b");
    let bride = uid("bf6c7ac1-8d9e-4fa0-8b1c-2d3e4f5a6b7c");
    assert_eq!(
        parsed.entries,
        vec![
            entry(
                &xiao,
                Term {
                    note: Some("Главный герой, носит кольцо.".into()),
                    aliases: vec![alias("炎帝")],
                    ..Term::new("萧炎", "Сяо Янь")
                }
            ),
            entry(
                &dragon,
                Term {
                    note: Some("Летает на драконе.".into()),
                    constant: true,
                    ..Term::new("竜騎士", "Драконий рыцарь")
                }
            ),
            entry(&girl, Term { status: Status::Draft, ..Term::new("魔法少女", "Девочка-волшебница") }),
            entry(&sect, Term { note: Some("Секта на горе.".into()), ..Term::new("云岚宗", "New Lorebook Entry") }),
        ]
    );
    assert_eq!(
        parsed.summaries,
        vec![formats::ImportedSummary {
            at: summary,
            put: SummaryPut {
                id: summary_id(1),
                scope: Scope::Book,
                text: "Юный Сяо Янь возвращает силу.".into(),
                visible_from: None,
                owner: None,
                owner_role: None,
                release_to: None,
            },
        }]
    );
    assert_eq!(
        parsed.skipped,
        vec![
            formats::Skipped { at: dou.clone(), reason: "no plaintext key: every key is a regex".into() },
            formats::Skipped {
                at: world,
                reason: "no key (a keyless entry is a term only when its displayName marks a lorebank summary)".into(),
            },
            formats::Skipped { at: bride, reason: "no dst".into() },
        ]
    );
    assert_eq!(
        parsed.lost,
        vec![
            lost(&At::File, "categories", "[{\"enabled\":true,\"id\":\"c0ffee\",\"name\":\"Персонажи\"}]"),
            lost(&At::File, "settings.orderByKeyLocations", "true"),
            lost(&dragon, "keys", "/ドラゴン.+/i"),
            lost(&dragon, "searchRange", "5000"),
            lost(&dragon, "contextConfig.budgetPriority", "500"),
            lost(&dragon, "contextConfig.insertionPosition", "-3"),
            lost(&dragon, "contextConfig.insertionType", "sentence"),
            lost(&dragon, "contextConfig.maximumTrimType", "token"),
            lost(&dragon, "contextConfig.prefix", "["),
            lost(&dragon, "contextConfig.reservedTokens", "100"),
            lost(&dragon, "contextConfig.suffix", "]\n"),
            lost(&dragon, "contextConfig.tokenBudget", "0.5"),
            lost(&dragon, "contextConfig.trimDirection", "trimTop"),
            lost(&dou, "keys", "/斗(气|者)/"),
            lost(&sect, "keyRelative", "true"),
            lost(&sect, "nonStoryActivatable", "true"),
            lost(&sect, "category", "c0ffee"),
            lost(&sect, "loreBiasGroups", "[{\"bias\":0.5,\"enabled\":true,\"ensureSequenceFinish\":false,\"ge…"),
        ]
    );
    assert_eq!(
        parsed.notices,
        vec![
            notice(&xiao, "repeated key \"萧炎\" dropped"),
            notice(&sect, "displayName is NovelAI's placeholder \"New Lorebook Entry\", imported as the rendering"),
            Notice { at: None, message: NAI_ACTIVATION.into() },
            Notice { at: None, message: NAI_DISABLED.into() },
        ]
    );
}

#[test]
fn novelai_bad_inputs_name_the_entry_and_field() {
    let id = "1b2c3d4e-0000-4000-8000-000000000001";
    let entries = |entry: &str| format!(r#"{{"lorebookVersion":4,"entries":[{entry}]}}"#);
    let owned: Vec<(String, ReadError)> = vec![
        (entries("3"), at_field(At::Entry(1), "entry", "must be an object, not 3")),
        (
            entries(&format!(r#"{{"id":"{id}","keys":"萧炎"}}"#)),
            at_field(uid(id), "keys", "must be a list of strings, not \"萧炎\""),
        ),
        (
            entries(&format!(r#"{{"id":"{id}","keys":[["萧炎"]]}}"#)),
            at_field(uid(id), "keys", "must be a list of strings, not [[\"萧炎\"]]"),
        ),
        (
            entries(r#"{"keys":["萧炎"],"enabled":"no"}"#),
            at_field(At::Entry(1), "enabled", "must be true or false, not \"no\""),
        ),
        (
            entries(r#"{"forceActivation":1}"#),
            at_field(At::Entry(1), "forceActivation", "must be true or false, not 1"),
        ),
        (entries(r#"{"displayName":7}"#), at_field(At::Entry(1), "displayName", "must be a string, not 7")),
        (entries(r#"{"text":false}"#), at_field(At::Entry(1), "text", "must be a string, not false")),
        (entries(r#"{"id":5}"#), at_field(At::Entry(1), "id", "must be a string, not 5")),
        (
            entries(r#"{"lastUpdatedAt":"today"}"#),
            at_field(At::Entry(1), "lastUpdatedAt", "must be a number, not \"today\""),
        ),
        (
            r#"{"lorebookVersion":4,"entries":{}}"#.into(),
            at_field(
                At::File,
                "entries",
                "an object keyed by uid, as in SillyTavern World Info: read this file as `sillytavern`",
            ),
        ),
        (r#"{"lorebookVersion":4,"entries":"x"}"#.into(), at_field(At::File, "entries", "must be a list, not \"x\"")),
        (
            r#"{"lorebookVersion":"4","entries":[]}"#.into(),
            at_field(At::File, "lorebookVersion", "must be a whole number, not \"4\""),
        ),
        (r#"{"entries":[]}"#.into(), at_field(At::File, "lorebookVersion", "missing: not a NovelAI lorebook")),
        ("[]".into(), error(None, None, "a NovelAI lorebook is a JSON object with `lorebookVersion` and `entries`")),
        (
            "{\"lorebookVersion\":4,".into(),
            error(Some(At::Line(1)), None, "malformed JSON: EOF while parsing a value at line 1 column 21"),
        ),
    ];
    let table = owned.iter().map(|(text, error)| (text.as_bytes(), error.clone())).collect();
    assert_bad_inputs(Format::NovelAi, table);
}

#[test]
fn novelai_export_is_a_lorebook_like_novelais_own() {
    let exported = formats::write(Format::NovelAi, &sample_export()).unwrap();
    // Priority and secondary keys are not NovelAI fields.
    let at = At::Record(term_id(4));
    assert_eq!(
        exported.lost,
        vec![
            Lost { at: at.clone(), field: "priority".into(), value: None },
            Lost { at, field: "secondary".into(), value: None },
        ]
    );
    let expected = golden("novelai/export.lorebook", &exported.bytes);
    assert_eq!(String::from_utf8(exported.bytes.clone()).unwrap(), expected);
    let value: serde_json::Value = serde_json::from_slice(&exported.bytes).unwrap();
    assert_eq!(value["lorebookVersion"], 4);
    // Ids are derived from the record id, so every export of a record gives it the same.
    assert_eq!(value["entries"][0]["id"], "6c6f7265-0000-8000-8054-000000000004");
    assert_eq!(value["entries"][2]["id"], "6c6f7265-0000-8000-8053-000000000002");
    assert_eq!(value["entries"][0]["lastUpdatedAt"], 0);
    assert_eq!(formats::write(Format::NovelAi, &sample_export()).unwrap().bytes, exported.bytes);
}
