//! GalTransl GPT dictionary and SakuraLLM gpt_dict, JSON and text (docs/formats.md).
//!
//! * Fixtures written from the spec (`tests/fixtures/galtransl`, `tests/fixtures/sakura`):
//!   exactly what each reads to (entries with their place, skipped, lost, notices).
//! * A bad-input table: each bad file and its exact error, never a panic; arbitrary bytes
//!   never panic.
//! * Detection by extension and by content.
//! * Exports: the exact bytes, one line or object per surface, and what each writer had
//!   to alter or could not hold.
//! * Round trips (proptest): write then read gives the terms back; read, write, read is a
//!   fixed point for every fixture.

use formats::{detect, read, write, At, ExportInput, Format, Notice, Parsed, ReadError, Term};
use proptest::prelude::*;
use test_support::interchange::strategies::line_export;
use test_support::interchange::*;
use test_support::records::term_id;

const FORMATS: [Format; 3] = [Format::GalTransl, Format::Sakura, Format::SakuraText];

fn notice(at: Option<At>, message: &str) -> Notice {
    Notice { at, message: message.into() }
}

const GALTRANSL_ACTIVATION: &str = "GalTransl injects an entry whenever its src occurs in the text (a \
    case-sensitive substring, longest keys first); lorebank matches keys leftmost-longest on folded text, inside \
    their windows";
const SAKURA_ACTIVATION: &str = "Sakura clients inject every entry whose src occurs in the text (a case-sensitive \
    substring, in file order); lorebank matches keys leftmost-longest on folded text, inside their windows";
const SLASH: &str = "a dst with `/` lists alternative renderings in GalTransl; lorebank keeps it as one rendering";
const TRIMMED: &str = "whitespace around a field trimmed (GalTransl keeps it)";
const COMMENT_WITH_A_TAB: &str = "a `//` line with a tab is an entry, in GalTransl too (a comment line has no tab)";
const BOM: &str = "byte order mark dropped from the first key (GalTransl keeps it as part of the key)";
const NOT_AN_ENTRY: &str = "no tab, four spaces or `->`: not an entry";
const SAKURA_COMMENT: &str = "a line starting with `//` or `\\\\` is a comment, skipped as manga-image-translator \
    skips it; SakuraLLM's own reader (translate_epub.py) refuses a `//` line without `->`";

// ---------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------

#[test]
fn galtransl_reads_every_line_form_as_load_dic_does() {
    let parsed = parse(Format::GalTransl, &fixture("galtransl/gpt-dict.txt"));
    assert_eq!(
        parsed.entries,
        vec![
            // A TAB line with a note, and one without.
            entry(At::Line(3), "ダリヤ", "Дария", Some("女主角，魔导具师")),
            entry(At::Line(4), "魔導具師", "мастер магических инструментов", None),
            // Four spaces are a TAB.
            entry(At::Line(5), "黑塔", "Чёрная башня", Some("地名")),
            // `src->dst #note#more`: every `#` is a column break, the rest is column 4.
            entry(At::Line(6), "炎の魔女", "Огненная ведьма", Some("称号")),
            // The `^^` and `1^` flags are removed from the key.
            entry(At::Line(7), "王都", "столица", None),
            entry(At::Line(8), "陛下", "Ваше величество", Some("敬称")),
            entry(At::Line(9), "斯卡法洛特", "Скальфаротто", Some("家族名")),
            // GalTransl has no comment syntax: a `//` line with a TAB is an entry.
            entry(At::Line(10), "// 注释", "这一行有制表符", None),
            // A repeat with an empty note is kept (the book refuses the duplicate).
            entry(At::Line(14), "魔導具師", "мастер магических инструментов", None),
            entry(At::Line(15), "人家", "я/меня", Some("第一人称")),
        ]
    );
    assert_eq!(
        parsed.skipped,
        vec![
            skipped(At::Line(11), NOT_AN_ENTRY),
            skipped(At::Line(12), "no dst"),
            skipped(At::Line(13), "repeats line 3"),
        ]
    );
    assert_eq!(
        parsed.lost,
        vec![
            lost(At::Line(6), "column 4", Some("第二卷")),
            lost(At::Line(7), "flag ^^", None),
            lost(At::Line(8), "flag 1^", None),
            lost(At::Line(9), "column 4", Some("旧译")),
            lost(At::Line(9), "column 5", Some("第三卷")),
        ]
    );
    assert_eq!(
        parsed.notices,
        vec![
            // The space GalTransl leaves before the `#` in dst.
            notice(Some(At::Line(6)), TRIMMED),
            notice(Some(At::Line(10)), COMMENT_WITH_A_TAB),
            notice(None, GALTRANSL_ACTIVATION),
            notice(None, SLASH),
        ]
    );
}

#[test]
fn galtransl_drops_the_byte_order_mark_of_the_first_key_and_reads_crlf_lines() {
    let parsed = parse(Format::GalTransl, &fixture("galtransl/bom-crlf.txt"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Line(1), "ダリヤ", "Дария", None),
            entry(At::Line(2), "黑塔", "Чёрная башня", Some("地名")),
            entry(At::Line(4), "陛下", "Ваше величество", None),
        ]
    );
    assert_eq!((parsed.skipped, parsed.lost), (vec![], vec![]));
    assert_eq!(parsed.notices, vec![notice(Some(At::Line(1)), BOM), notice(None, GALTRANSL_ACTIVATION)]);
}

#[test]
fn galtransl_repeats_are_judged_by_src_dst_and_a_non_empty_note() {
    let text = "黑塔\tЧёрная башня\t地名\n黑塔\tЧёрная башня\t城堡\n黑塔\tЧёрная башня\n黑塔\tЧёрная башня\t地名\n";
    let parsed = parse(Format::GalTransl, text.as_bytes());
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Line(1), "黑塔", "Чёрная башня", Some("地名")),
            entry(At::Line(2), "黑塔", "Чёрная башня", Some("城堡")),
            entry(At::Line(3), "黑塔", "Чёрная башня", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![skipped(At::Line(4), "repeats line 1")]);
}

#[test]
fn galtransl_header_comments_and_blank_lines_are_neither_entries_nor_skipped() {
    let text = "// 格式为日文[Tab]中文[Tab]解释(可不写)\n\n   \n// 示例\n";
    let parsed = parse(Format::GalTransl, text.as_bytes());
    assert_eq!(parsed, Parsed::default());
}

#[test]
fn sakura_json_reads_src_dst_info_and_reports_extra_keys_with_their_values() {
    let parsed = parse(Format::Sakura, &fixture("sakura/gpt_dict.json"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Entry(1), "ダリヤ", "Дария", Some("名字，女孩")),
            entry(At::Entry(2), "魔導具師", "мастер магических инструментов", None),
            entry(At::Entry(3), "黑塔", "Чёрная башня", None),
            entry(At::Entry(4), "炎の魔女", "Огненная ведьма", Some("称号")),
            entry(At::Entry(5), "王都", "столица", Some("地名")),
            entry(At::Entry(8), "陛下", "Ваше величество", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![skipped(At::Entry(6), "no dst"), skipped(At::Entry(7), "no dst")]);
    assert_eq!(
        parsed.lost,
        vec![lost(At::Entry(4), "tags", Some("[\"第二卷\"]")), lost(At::Entry(4), "weight", Some("3"))]
    );
    // Sakura matches the JSON fields as they are; the text form's reader strips them.
    assert_eq!(
        parsed.notices,
        vec![
            notice(Some(At::Entry(5)), "whitespace around a field trimmed (Sakura keeps it)"),
            notice(None, SAKURA_ACTIVATION),
        ]
    );
}

#[test]
fn sakura_text_reads_stripped_lines_and_skips_blank_ones() {
    let parsed = parse(Format::SakuraText, &fixture("sakura/gpt_dict.txt"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Line(1), "ダリヤ", "Дария", Some("名字，女孩")),
            entry(At::Line(2), "魔導具師", "мастер магических инструментов", None),
            entry(At::Line(4), "黑塔", "Чёрная башня", Some("地名")),
            entry(At::Line(6), "炎の魔女", "Огненная ведьма", None),
            entry(At::Line(8), "陛下", "Ваше величество", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![skipped(At::Line(7), "no dst")]);
    assert_eq!(parsed.lost, vec![]);
    assert_eq!(parsed.notices, vec![notice(None, SAKURA_ACTIVATION)]);
}

#[test]
fn files_without_entries_have_no_activation_notice() {
    for format in FORMATS {
        let empty: &[u8] = if format == Format::Sakura { b"[]" } else { b"" };
        assert_eq!(parse(format, empty), Parsed::default(), "{format}");
    }
}

// ---------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------

fn not_utf8(offset: usize) -> String {
    format!("not UTF-8 (invalid byte at offset {offset}); save the file as UTF-8")
}

#[test]
fn bad_files_are_refused_with_their_place_and_field() {
    let first_two = "ダリヤ\tДария\n黑塔\tЧёрная башня\n";
    let invalid_galtransl = [first_two.as_bytes(), b"\xff\x80\t\xd0\n"].concat();
    let first_sakura = "ダリヤ->Дария\n\n";
    let invalid_sakura = [first_sakura.as_bytes(), b"\xe7\x82->x\n"].concat();
    let gbk = b"[{\"src\": \"\xbb\xc6\", \"dst\": \"x\"}]".to_vec();
    let string_of = |text: &str| text.as_bytes().to_vec();
    let cases: Vec<(Format, Vec<u8>, ReadError)> = vec![
        (Format::GalTransl, invalid_galtransl, error(Some(At::Line(3)), None, &not_utf8(first_two.len()))),
        (
            Format::GalTransl,
            string_of("ダリヤ\tДария\n\tДария\t没有原文\n"),
            error(Some(At::Line(2)), Some("src"), "empty source term"),
        ),
        (Format::GalTransl, string_of("   \t Дария\n"), error(Some(At::Line(1)), Some("src"), "empty source term")),
        (Format::GalTransl, string_of("^^\tДария\n"), error(Some(At::Line(1)), Some("src"), "empty source term")),
        (Format::GalTransl, string_of("->Дария #名字\n"), error(Some(At::Line(1)), Some("src"), "empty source term")),
        (Format::Sakura, gbk, error(Some(At::Line(1)), None, &not_utf8(10))),
        (
            Format::Sakura,
            string_of("{\"src\": \"ダリヤ\", \"dst\": \"Дария\"}"),
            error(None, None, "a Sakura gpt_dict is a JSON list of {src, dst, info} objects"),
        ),
        (
            Format::Sakura,
            string_of("[{\"src\": \"ダリヤ\", \"dst\": \"Дария\"}, \"黑塔\"]"),
            error(Some(At::Entry(2)), Some("entry"), "not an object"),
        ),
        (
            Format::Sakura,
            string_of("[{\"src\": 5, \"dst\": \"Дария\"}]"),
            error(Some(At::Entry(1)), Some("src"), "must be a string, not 5"),
        ),
        (
            Format::Sakura,
            string_of("[{\"src\": \"黑塔\", \"dst\": [\"Чёрная\", \"башня\"]}]"),
            error(Some(At::Entry(1)), Some("dst"), "must be a string, not [\"Чёрная\",\"башня\"]"),
        ),
        (
            Format::Sakura,
            string_of("[{\"src\": \"黑塔\", \"dst\": \"Чёрная башня\", \"info\": {\"kind\": \"地名\"}}]"),
            error(Some(At::Entry(1)), Some("info"), "must be a string, not {\"kind\":\"地名\"}"),
        ),
        (
            Format::Sakura,
            string_of("[{\"src\": \"黑塔\", \"dst\": \"x\"}, {\"dst\": \"Дария\", \"info\": \"名字\"}]"),
            error(Some(At::Entry(2)), Some("src"), "missing or empty source term"),
        ),
        (
            Format::Sakura,
            string_of("[{\"src\": \" \", \"dst\": \"Дария\"}]"),
            error(Some(At::Entry(1)), Some("src"), "missing or empty source term"),
        ),
        (
            Format::Sakura,
            string_of("[\n    {\"src\": \"ダリヤ\", \"dst\": \"Дария\"}\n    {\"src\": \"黑塔\", \"dst\": \"x\"}\n]\n"),
            error(Some(At::Line(3)), None, "malformed JSON: expected `,` or `]` at line 3 column 5"),
        ),
        (
            Format::Sakura,
            string_of("[\n    {\"src\": \"ダリヤ\", \"dst\": \"Дария\"},\n"),
            error(Some(At::Line(3)), None, "malformed JSON: EOF while parsing a value at line 3 column 0"),
        ),
        (Format::SakuraText, invalid_sakura, error(Some(At::Line(3)), None, &not_utf8(first_sakura.len()))),
        (
            Format::SakuraText,
            string_of("ダリヤ->Дария\n炎の魔女->Огненная->ведьма\n"),
            error(Some(At::Line(2)), Some("line"), "a gpt_dict line is `src->dst #info` with exactly one `->`"),
        ),
        (
            Format::SakuraText,
            string_of("黑塔->Чёрная башня #地名#第二卷\n"),
            error(Some(At::Line(1)), Some("info"), "more than one `#` (Sakura's reader refuses the line)"),
        ),
        (
            Format::SakuraText,
            string_of("ダリヤ->Дария\n\n  ->Дария #名字\n"),
            error(Some(At::Line(3)), Some("src"), "empty source term"),
        ),
        (
            Format::SakuraText,
            string_of("ダリヤ Дария\n"),
            error(Some(At::Line(1)), Some("line"), "a gpt_dict line is `src->dst #info` with exactly one `->`"),
        ),
    ];
    for (format, bytes, expected) in cases {
        assert_eq!(
            read(format, &bytes, &languages("ja")),
            Err(expected),
            "{format}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for format in FORMATS {
            let _ = read(format, &bytes, &languages("ja"));
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[\\[\\]{}\",:0-9a-z \t\r\n炎ダ#>/^1\u{feff}-]{0,64}") {
        for format in FORMATS {
            let _ = read(format, text.as_bytes(), &languages("ja"));
        }
    }
}

// ---------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------

#[test]
fn detect_picks_these_formats_by_extension_and_by_content() {
    let cases = [
        ("galtransl/gpt-dict.txt", Format::GalTransl),
        ("galtransl/bom-crlf.txt", Format::GalTransl),
        ("sakura/gpt_dict.txt", Format::SakuraText),
        ("sakura/gpt_dict.json", Format::Sakura),
    ];
    for (path, format) in cases {
        let bytes = fixture(path);
        let name = path.rsplit('/').next().unwrap_or(path);
        assert_eq!(detect(name, &bytes), Ok(format), "{path} by extension");
        assert_eq!(detect("项目GPT字典", &bytes), Ok(format), "{path} by content");
    }
    for format in FORMATS {
        let exported = write(format, &sample()).expect("export");
        let name = format!("export.{}", format.extension());
        assert_eq!(detect(&name, &exported.bytes), Ok(format), "{name}");
    }
}

// ---------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------

/// Aliases, a note with a line break and a tab, `->` and `#` in fields, a field
/// the formats do not carry.
fn sample() -> ExportInput {
    export_input(vec![
        Term {
            note: Some("女主角\n魔导具师\t第一卷".into()),
            aliases: vec![alias("ダリヤ嬢"), alias("达莉雅")],
            ..Term::new("ダリヤ", "Дария")
        },
        Term { note: Some("称号 #2".into()), ..Term::new("炎の魔女", "Огненная->ведьма") },
        Term { kind: Some("place".into()), ..Term::new("黑塔", "Чёрная башня") },
    ])
}

#[test]
fn galtransl_export_is_one_tab_line_per_surface() {
    let exported = write(Format::GalTransl, &sample()).expect("export");
    let expected = "ダリヤ\tДария\t女主角 魔导具师 第一卷\n\
                    ダリヤ嬢\tДария\t女主角 魔导具师 第一卷\n\
                    达莉雅\tДария\t女主角 魔导具师 第一卷\n\
                    炎の魔女\tОгненная→ведьма\t称号 #2\n\
                    黑塔\tЧёрная башня\n";
    assert_eq!(String::from_utf8(exported.bytes).expect("UTF-8"), expected);
    let altered = Some("tab, line break or `->`");
    assert_eq!(
        exported.lost,
        vec![
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(3)), "kind", None),
            lost(At::Record(term_id(1)), "note", altered),
            lost(At::Record(term_id(2)), "dst", altered),
        ]
    );
}

#[test]
fn sakura_json_export_is_src_dst_info_per_surface_with_a_four_space_indent() {
    let exported = write(Format::Sakura, &sample()).expect("export");
    let expected = r#"[
    {
        "src": "ダリヤ",
        "dst": "Дария",
        "info": "女主角\n魔导具师\t第一卷"
    },
    {
        "src": "ダリヤ嬢",
        "dst": "Дария",
        "info": "女主角\n魔导具师\t第一卷"
    },
    {
        "src": "达莉雅",
        "dst": "Дария",
        "info": "女主角\n魔导具师\t第一卷"
    },
    {
        "src": "炎の魔女",
        "dst": "Огненная->ведьма",
        "info": "称号 #2"
    },
    {
        "src": "黑塔",
        "dst": "Чёрная башня"
    }
]
"#;
    assert_eq!(String::from_utf8(exported.bytes).expect("UTF-8"), expected);
    assert_eq!(
        exported.lost,
        vec![lost(At::Record(term_id(1)), "aliases", None), lost(At::Record(term_id(3)), "kind", None)]
    );
}

#[test]
fn sakura_text_export_is_one_arrow_line_per_surface() {
    let exported = write(Format::SakuraText, &sample()).expect("export");
    let expected = "ダリヤ->Дария #女主角 魔导具师 第一卷\n\
                    ダリヤ嬢->Дария #女主角 魔导具师 第一卷\n\
                    达莉雅->Дария #女主角 魔导具师 第一卷\n\
                    炎の魔女->Огненная→ведьма #称号 ＃2\n\
                    黑塔->Чёрная башня\n";
    assert_eq!(String::from_utf8(exported.bytes).expect("UTF-8"), expected);
    let altered = Some("`->`, `#` or line break");
    assert_eq!(
        exported.lost,
        vec![
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(3)), "kind", None),
            lost(At::Record(term_id(1)), "note", altered),
            lost(At::Record(term_id(2)), "dst", altered),
            lost(At::Record(term_id(2)), "note", altered),
        ]
    );
}

#[test]
fn what_the_writers_altered_reads_back_as_written() {
    let mut input = sample();
    for export in &mut input.terms {
        export.term.aliases.clear();
        export.term.kind = None;
    }
    let galtransl = parse(Format::GalTransl, &write(Format::GalTransl, &input).expect("export").bytes);
    assert_eq!(
        galtransl.entries,
        vec![
            entry(At::Line(1), "ダリヤ", "Дария", Some("女主角 魔导具师 第一卷")),
            entry(At::Line(2), "炎の魔女", "Огненная→ведьма", Some("称号 #2")),
            entry(At::Line(3), "黑塔", "Чёрная башня", None),
        ]
    );
    let text = parse(Format::SakuraText, &write(Format::SakuraText, &input).expect("export").bytes);
    assert_eq!(
        text.entries,
        vec![
            entry(At::Line(1), "ダリヤ", "Дария", Some("女主角 魔导具师 第一卷")),
            entry(At::Line(2), "炎の魔女", "Огненная→ведьма", Some("称号 ＃2")),
            entry(At::Line(3), "黑塔", "Чёрная башня", None),
        ]
    );
    let json = parse(Format::Sakura, &write(Format::Sakura, &input).expect("export").bytes);
    let terms: Vec<Term> = input.terms.iter().map(|export| export.term.clone()).collect();
    assert_eq!(terms_of(&json), terms);
}

// ---------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------

#[test]
fn read_write_read_is_a_fixed_point_for_every_fixture() {
    let fixtures = [
        (Format::GalTransl, "galtransl/gpt-dict.txt"),
        (Format::GalTransl, "galtransl/bom-crlf.txt"),
        (Format::Sakura, "sakura/gpt_dict.json"),
        (Format::SakuraText, "sakura/gpt_dict.txt"),
    ];
    for (format, path) in fixtures {
        let written = assert_read_write_read(path, "ja", format, &fixture(path));
        assert_eq!(written.lost, vec![], "{path}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn write_then_read_gives_the_terms_back(input in line_export("[a-zA-Z0-9，。]")) {
        for format in FORMATS {
            let (exported, parsed) = assert_write_read("ja", format, &input);
            let again = write(format, &export_input(terms_of(&parsed))).expect("export");
            prop_assert!(again.bytes == exported.bytes, "{}: export, import, export changed the bytes", format);
        }
    }
}

#[test]
fn galtransl_lines_of_only_spaces_and_tabs_are_blank() {
    // Four spaces are a tab, so an indented empty line has two empty columns: it is
    // a blank line, not an entry without a key.
    let text = "ダリヤ\tДария\n        \n\t\n \t  \r\n黑塔\tЧёрная башня\n";
    let parsed = parse(Format::GalTransl, text.as_bytes());
    assert_eq!(
        parsed.entries,
        vec![entry(At::Line(1), "ダリヤ", "Дария", None), entry(At::Line(5), "黑塔", "Чёрная башня", None)]
    );
    assert_eq!((parsed.skipped, parsed.lost), (vec![], vec![]));
}

#[test]
fn galtransl_export_reports_a_key_galtransl_would_read_as_a_flag() {
    let input =
        export_input(vec![Term { aliases: vec![alias("1^陛下")], ..Term::new("^^王都", "столица") }]);
    let exported = write(Format::GalTransl, &input).expect("export");
    assert_eq!(String::from_utf8(exported.bytes.clone()).expect("UTF-8"), "^^王都\tстолица\n1^陛下\tстолица\n");
    assert_eq!(
        exported.lost,
        vec![
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(1)), "src", Some("starts with `^^`, a flag to the format's reader")),
            lost(At::Record(term_id(1)), "aliases", Some("starts with `1^`, a flag to the format's reader")),
        ]
    );
    // What GalTransl (and lorebank) reads back: the keys without their flags.
    let parsed = parse(Format::GalTransl, &exported.bytes);
    assert_eq!(
        parsed.entries,
        vec![entry(At::Line(1), "王都", "столица", None), entry(At::Line(2), "陛下", "столица", None)]
    );
    // A key of nothing but flags would read back as no key at all.
    let input = export_input(vec![Term { aliases: vec![alias("^^1^")], ..Term::new("^^", "столица") }]);
    let exported = write(Format::GalTransl, &input).expect("export");
    assert_eq!(exported.bytes, b"");
    let only_flags = Some("key of nothing but flags");
    assert_eq!(
        exported.lost,
        vec![
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(1)), "entry", only_flags),
            lost(At::Record(term_id(1)), "entry", only_flags),
        ]
    );
}

#[test]
fn a_galtransl_file_in_the_sakura_line_form_with_a_header_is_detected_as_galtransl() {
    // GalTransl reads `src->dst #note` lines, and its header comment is no Sakura line
    // (Sakura's reader refuses a line without `->`).
    let text = "// 格式为日文[Tab]中文[Tab]解释(可不写)\nダリヤ->Дария #名字\n黑塔    Чёрная башня\n";
    assert_eq!(detect("项目GPT字典.txt", text.as_bytes()), Ok(Format::GalTransl));
    let parsed = parse(Format::GalTransl, text.as_bytes());
    assert_eq!(
        parsed.entries,
        vec![entry(At::Line(2), "ダリヤ", "Дария", Some("名字")), entry(At::Line(3), "黑塔", "Чёрная башня", None)]
    );
    // Every line in the Sakura form, blank lines between: Sakura text.
    assert_eq!(
        detect("gpt_dict.txt", "ダリヤ->Дария #名字\n\n黑塔->Чёрная башня\n".as_bytes()),
        Ok(Format::SakuraText)
    );
}

#[test]
fn sakura_text_comment_lines_are_skipped_as_manga_image_translator_writes_them() {
    // manga-image-translator's dict/sakura_dict.txt starts so (the real file is in
    // tests/data/formats/real/sakura): a `//` line without `->`, then a `\\` line
    // that holds `->` and `#`, then entries.
    let text =
        "// 示例字典，可自行添加或修改\n\\\\Sakura Format Glossary (Format: source term->target term #comment) \n\
                安芸倫也->安艺伦也 #名字\n\n  // 缩进的注释\n倫也->伦也\n";
    assert_eq!(detect("sakura_dict.txt", text.as_bytes()), Ok(Format::SakuraText));
    let parsed = parse(Format::SakuraText, text.as_bytes());
    assert_eq!(
        parsed.entries,
        vec![entry(At::Line(3), "安芸倫也", "安艺伦也", Some("名字")), entry(At::Line(6), "倫也", "伦也", None)]
    );
    assert_eq!((parsed.skipped, parsed.lost), (vec![], vec![]));
    assert_eq!(
        parsed.notices,
        vec![
            notice(Some(At::Line(1)), SAKURA_COMMENT),
            notice(Some(At::Line(2)), SAKURA_COMMENT),
            notice(Some(At::Line(5)), SAKURA_COMMENT),
            notice(None, SAKURA_ACTIVATION),
        ]
    );
    // A GalTransl dictionary with the same header stays GalTransl: its entries have tabs.
    let galtransl = "// 格式为日文[Tab]中文[Tab]解释(可不写)\n大家さん\t房东\n";
    assert_eq!(detect("项目GPT字典.txt", galtransl.as_bytes()), Ok(Format::GalTransl));
    // Only comments: nothing in the Sakura form, so GalTransl, which skips them too.
    assert_eq!(detect("dict.txt", "// a\n\\\\ b\n".as_bytes()), Ok(Format::GalTransl));
}

#[test]
fn sakura_text_export_writes_a_key_that_would_read_as_a_comment_full_width() {
    let input = export_input(vec![
        Term { aliases: vec![alias("\\\\ｂ")], ..Term::new("//注释", "Комментарий") },
        Term::new("/一/", "Косая"),
    ]);
    let exported = write(Format::SakuraText, &input).expect("export");
    assert_eq!(
        String::from_utf8(exported.bytes.clone()).expect("UTF-8"),
        "／/注释->Комментарий\n＼\\ｂ->Комментарий\n/一/->Косая\n"
    );
    assert_eq!(
        exported.lost,
        vec![
            // The format carries no aliases: each is a line of its own.
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(1)), "src", "starts with `//`, a comment to the format's reader"),
            lost(At::Record(term_id(1)), "aliases", "starts with `\\\\`, a comment to the format's reader"),
        ]
    );
    let read = parse(Format::SakuraText, &exported.bytes);
    let keys: Vec<&str> = read.entries.iter().map(|entry| entry.term.src.as_str()).collect();
    assert_eq!(keys, ["／/注释", "＼\\ｂ", "/一/"]);
}

#[test]
fn galtransl_flags_and_byte_order_marks_are_removed_however_many_there_are() {
    // Removing one flag or mark per read made each export read back shorter than the
    // last: read, write, read was no fixed point.
    let text = "\u{feff}\u{feff}\u{feff}ダリヤ\tДария\n^^^^1^王都\tстолица\n1^^^陛下\tВаше величество\n";
    let parsed = parse(Format::GalTransl, text.as_bytes());
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Line(1), "ダリヤ", "Дария", None),
            entry(At::Line(2), "王都", "столица", None),
            entry(At::Line(3), "陛下", "Ваше величество", None),
        ]
    );
    assert_eq!(
        parsed.lost,
        vec![
            lost(At::Line(2), "flag ^^", None),
            lost(At::Line(2), "flag ^^", None),
            lost(At::Line(2), "flag 1^", None),
            lost(At::Line(3), "flag 1^", None),
            lost(At::Line(3), "flag ^^", None),
        ]
    );
    assert_eq!(parsed.notices[0], notice(Some(At::Line(1)), BOM));
    let written = write(Format::GalTransl, &export_input(terms_of(&parsed))).expect("export");
    assert_eq!(written.lost, vec![]);
    assert_eq!(terms_of(&parse(Format::GalTransl, &written.bytes)), terms_of(&parsed));
}

/// Read, write, read, write, read: the last two reads agree (what `fuzz_import` checks).
fn settles(format: Format, bytes: &[u8]) -> Result<(), TestCaseError> {
    let Ok(first) = read(format, bytes, &languages("ja")) else { return Ok(()) };
    let written = write(format, &export_input(terms_of(&first))).expect("export");
    let second = parse(format, &written.bytes);
    let again = write(format, &export_input(terms_of(&second))).expect("export");
    let third = parse(format, &again.bytes);
    prop_assert_eq!(terms_of(&third), terms_of(&second), "{}", format);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn whatever_a_reader_accepts_settles_after_one_export(
        text in "[\u{feff}^1#/>\\- \t\r\n\u{3000}\u{85}\u{2028}炎ダa\"\\[\\]{}:,]{0,48}"
    ) {
        for format in FORMATS {
            settles(format, text.as_bytes())?;
        }
    }
}

#[test]
fn line_exports_leave_out_a_leading_byte_order_mark_of_a_key() {
    // On the first line a reader takes it for the file's byte order mark, so the
    // export would not read back the same (or, for a key of nothing else, not at all).
    let input =
        export_input(vec![Term { aliases: vec![alias("\u{feff}")], ..Term::new("\u{feff}ダリヤ", "Дария") }]);
    let exported = write(Format::GalTransl, &input).expect("export");
    assert_eq!(String::from_utf8(exported.bytes.clone()).expect("UTF-8"), "ダリヤ\tДария\n");
    let mark = Some("starts with U+FEFF, which reads as a byte order mark");
    assert_eq!(
        exported.lost,
        vec![
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(1)), "src", mark),
            lost(At::Record(term_id(1)), "aliases", mark),
            lost(At::Record(term_id(1)), "entry", Some("empty key on one line")),
        ]
    );
    assert_eq!(parse(Format::GalTransl, &exported.bytes).entries, vec![entry(At::Line(1), "ダリヤ", "Дария", None)]);
    let exported = write(Format::SakuraText, &input).expect("export");
    assert_eq!(String::from_utf8(exported.bytes.clone()).expect("UTF-8"), "ダリヤ->Дария\n");
    assert_eq!(
        exported.lost,
        vec![
            lost(At::Record(term_id(1)), "aliases", None),
            lost(At::Record(term_id(1)), "src", mark),
            lost(At::Record(term_id(1)), "aliases", mark),
            lost(At::Record(term_id(1)), "entry", Some("empty key on one line")),
        ]
    );
    assert_eq!(parse(Format::SakuraText, &exported.bytes).entries, vec![entry(At::Line(1), "ダリヤ", "Дария", None)]);
}

#[test]
fn galtransl_a_space_after_a_flag_is_not_part_of_the_key() {
    let parsed = parse(Format::GalTransl, "^^ 王都\tстолица\n".as_bytes());
    assert_eq!(parsed.entries, vec![entry(At::Line(1), "王都", "столица", None)]);
    assert_eq!(parsed.lost, vec![lost(At::Line(1), "flag ^^", None)]);
    assert_eq!(parsed.notices[0], notice(Some(At::Line(1)), TRIMMED));
}
