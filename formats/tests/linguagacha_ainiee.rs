//! LinguaGacha and AiNiee glossaries, JSON and XLSX (docs/formats.md).
//!
//! * Fixtures written from the spec (`tests/fixtures/linguagacha`, `tests/fixtures/ainiee`):
//!   exactly what each reads to (entries with their place, skipped, lost, notices).
//! * A bad-input table: each bad file and its exact error, never a panic; arbitrary and
//!   truncated bytes never panic.
//! * Detection by extension and by content.
//! * Exports: the exact JSON layout, one row per surface, AiNiee's escaping of keys it
//!   would read as regular expressions, XLSX bytes that depend only on the glossary,
//!   and every exported workbook opened by openpyxl (the parser AiNiee reads XLSX with).
//! * Round trips (proptest): write then read gives the terms back; read, write, read
//!   is a fixed point for every fixture.

use std::io::{Read, Write};
use std::process::Command;

use formats::{detect, read, write, At, ExportInput, Format, Lost, Notice, Parsed, ReadError, Skipped, Term};
use proptest::prelude::*;
use test_support::interchange::strategies::line_export;
use test_support::interchange::*;
use test_support::records::term_id;

const FORMATS: [Format; 4] = [Format::LinguaGacha, Format::LinguaGachaXlsx, Format::AiNiee, Format::AiNieeXlsx];

fn regex_skip(at: At, src: &str) -> Skipped {
    skipped(
        at,
        &format!(
            "src `{src}` is a regular expression to AiNiee (or one it cannot compile and never injects); \
             lorebank keys are literal text"
        ),
    )
}

/// The one activation notice of a file, and every other notice as it is.
fn split_notices(parsed: &Parsed, tool: &str) -> Vec<Notice> {
    let general: Vec<&Notice> = parsed.notices.iter().filter(|notice| notice.at.is_none()).collect();
    assert_eq!(general.len(), 1, "one activation notice: {:?}", parsed.notices);
    let message = &general[0].message;
    assert!(message.starts_with(tool), "{message}");
    assert!(
        message.contains("lorebank matches keys leftmost-longest")
            || message.contains("lorebank matches literal keys leftmost-longest"),
        "{message}"
    );
    parsed.notices.iter().filter(|notice| notice.at.is_some()).cloned().collect()
}

// ---------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------

#[test]
fn linguagacha_json_list_reads_every_field() {
    let parsed = parse(Format::LinguaGacha, &fixture("linguagacha/glossary.json"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Entry(1), "ダリヤ", "Дария", Some("女性的名字")),
            entry(At::Entry(2), "魔導具師", "мастер магических инструментов", None),
            entry(At::Entry(3), "Orlando", "Орландо", None),
            entry(At::Entry(4), "炎の魔女", "Огненная ведьма", Some("称号")),
            entry(At::Entry(6), "黑塔", "Чёрная башня", None),
            entry(At::Entry(7), "ダリヤ・ロセッティ", "Дария Розетти", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![skipped(At::Entry(5), "no dst")]);
    assert_eq!(
        parsed.lost,
        vec![
            lost(At::Entry(3), "case_sensitive", "true"),
            lost(At::Entry(4), "regex", "true"),
            lost(At::Entry(6), "comment", "\"第二卷\""),
        ]
    );
    assert_eq!(split_notices(&parsed, "LinguaGacha"), vec![]);
    assert!(parsed.notices[0].message.contains("NFKC"), "{:?}", parsed.notices);
}

#[test]
fn linguagacha_json_object_reads_src_dst_pairs_in_file_order() {
    let parsed = parse(Format::LinguaGacha, &fixture("linguagacha/object.json"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Entry(1), "ダリヤ", "Дария", None),
            entry(At::Entry(3), "黑塔", "Чёрная башня", None),
            entry(At::Entry(4), "スカルファロット", "Скальфаротто", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![skipped(At::Entry(2), "no dst"), skipped(At::Entry(5), "no dst")]);
    assert_eq!(parsed.lost, vec![]);
    assert_eq!(split_notices(&parsed, "LinguaGacha"), vec![]);
}

#[test]
fn a_repeated_key_of_a_src_dst_object_is_kept_for_the_book_to_refuse() {
    // A JSON object read into a map would keep the last of two equal keys and drop
    // the other silently; both entries reach the book, which names both places.
    let bytes = "\u{feff}{\"ダリヤ\": \"Дария\", \"ダリヤ\": \"Дарья\"}";
    for format in [Format::LinguaGacha, Format::AiNiee] {
        let parsed = parse(format, bytes.as_bytes());
        assert_eq!(
            parsed.entries,
            vec![entry(At::Entry(1), "ダリヤ", "Дария", None), entry(At::Entry(2), "ダリヤ", "Дарья", None)],
            "{format}"
        );
    }
}

#[test]
fn linguagacha_xlsx_reads_the_first_sheet_with_header_flags_and_empty_rows() {
    let parsed = parse(Format::LinguaGachaXlsx, &fixture("linguagacha/glossary.xlsx"));
    // Row 1 and row 8 are headers (`src`, `dst`), rows 3 and 9 empty (one holds only
    // spaces); the second sheet is not read.
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Row(2), "ダリヤ", "Дария", Some("女性的名字")),
            entry(At::Row(4), "炎の魔女", "Огненная ведьма", Some("称号")),
            entry(At::Row(5), "Orlando", "Орландо", None),
            entry(At::Row(7), "黑塔", "Чёрная башня", None),
            entry(At::Row(10), "スカルファロット", "Скальфаротто", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![skipped(At::Row(6), "no dst")]);
    // `TRUE` text and a boolean cell are true, ` True ` too (trimmed, lower-cased);
    // `false` and `yes` are not.
    assert_eq!(
        parsed.lost,
        vec![
            lost(At::Row(4), "regex", "true"),
            lost(At::Row(5), "case_sensitive", "true"),
            lost(At::Row(7), "column F", "第二卷"),
            lost(At::Row(10), "regex", "true"),
        ]
    );
    assert_eq!(split_notices(&parsed, "LinguaGacha"), vec![]);
}

#[test]
fn ainiee_json_skips_what_it_reads_as_regular_expressions() {
    let parsed = parse(Format::AiNiee, &fixture("ainiee/glossary.json"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Entry(1), "ダリヤ", "Дария", Some("女性的名字")),
            // `[mc]` is a bracketed run of ASCII letters: literal to AiNiee (#1066).
            entry(At::Entry(2), "[mc]", "[ГГ]", Some("Ren'Py 标签")),
            entry(At::Entry(4), "Dr. Who", "Доктор Кто", None),
            entry(At::Entry(7), "黑塔", "Чёрная башня", Some("地名")),
            // A brace that opens no quantifier is a plain character.
            entry(At::Entry(8), "{name}さん", "{name}-сан", None),
        ]
    );
    assert_eq!(
        parsed.skipped,
        vec![regex_skip(At::Entry(3), "炎.+"), regex_skip(At::Entry(5), "(笑"), skipped(At::Entry(6), "no dst")]
    );
    // `src_state` is derived by AiNiee from src: not a loss.
    assert_eq!(parsed.lost, vec![lost(At::Entry(7), "remark", "\"第二卷\"")]);
    assert_eq!(
        split_notices(&parsed, "AiNiee"),
        vec![Notice {
            at: Some(At::Entry(4)),
            message: "src `Dr\\. Who` is a regular expression of escaped characters that AiNiee matches \
                      case-sensitively; imported as the key `Dr. Who`"
                .into(),
        }]
    );
    assert!(parsed.notices.iter().any(|notice| notice.message.contains("case-insensitively by default")));
}

#[test]
fn ainiee_json_reads_the_legacy_srt_key() {
    let parsed = parse(Format::AiNiee, &fixture("ainiee/legacy.json"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Entry(1), "ダリヤ", "达莉雅", Some("女性的名字")),
            entry(At::Entry(2), "魔導具師", "魔导具师", None),
        ]
    );
    assert_eq!((parsed.skipped, parsed.lost), (vec![], vec![]));
}

#[test]
fn ainiee_json_says_when_it_would_ignore_an_srt_entry() {
    let bytes = r#"[{"src": "ダリヤ", "dst": "达莉雅"}, {"srt": "王都", "dst": "王都"}]"#;
    let parsed = parse(Format::AiNiee, bytes.as_bytes());
    assert_eq!(parsed.entries.len(), 2);
    assert_eq!(
        split_notices(&parsed, "AiNiee"),
        vec![Notice {
            at: Some(At::Entry(2)),
            message: "AiNiee reads the legacy key `srt` only in a file where no entry has `src`: it ignores this \
                      entry"
                .into(),
        }]
    );
}

#[test]
fn ainiee_json_object_reads_src_dst_pairs() {
    let parsed = parse(Format::AiNiee, &fixture("ainiee/object.json"));
    assert_eq!(
        parsed.entries,
        vec![entry(At::Entry(1), "ダリヤ", "达莉雅", None), entry(At::Entry(3), "王都", "王都", None)]
    );
    assert_eq!(parsed.skipped, vec![regex_skip(At::Entry(2), "(笑)")]);
}

#[test]
fn ainiee_xlsx_reads_the_active_sheet_after_its_header() {
    // The workbook opens on its second sheet; the first (说明) is not read.
    let parsed = parse(Format::AiNieeXlsx, &fixture("ainiee/glossary.xlsx"));
    assert_eq!(
        parsed.entries,
        vec![
            entry(At::Row(2), "ダリヤ", "Дария", Some("女性的名字")),
            entry(At::Row(4), "[mc]", "[ГГ]", None),
            entry(At::Row(7), "黑塔", "Чёрная башня", None),
        ]
    );
    assert_eq!(parsed.skipped, vec![regex_skip(At::Row(5), "炎.+"), skipped(At::Row(6), "no dst")]);
    assert_eq!(parsed.lost, vec![lost(At::Row(7), "column D", "第二卷")]);
    assert_eq!(split_notices(&parsed, "AiNiee"), vec![]);
}

#[test]
fn ainiee_xlsx_skips_row_one_even_when_it_is_not_a_header_and_says_so() {
    let parsed = parse(Format::AiNieeXlsx, &fixture("ainiee/no-header.xlsx"));
    assert_eq!(parsed.entries, vec![entry(At::Row(2), "魔導具師", "мастер", None)]);
    assert_eq!(parsed.skipped, vec![skipped(At::Row(1), "row 1 is the header row (AiNiee skips it)")]);
}

// ---------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------

/// A workbook of one sheet with `rows` (`None` leaves a cell empty).
fn workbook(rows: &[Vec<Cell>]) -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    for (row, cells) in rows.iter().enumerate() {
        for (column, cell) in cells.iter().enumerate() {
            let (row, column) = (row as u32, column as u16);
            match cell {
                Cell::Text(text) => sheet.write_string(row, column, *text).map(|_| ()),
                Cell::Number(number) => sheet.write_number(row, column, *number).map(|_| ()),
                Cell::Bool(value) => sheet.write_boolean(row, column, *value).map(|_| ()),
                Cell::Empty => Ok(()),
            }
            .expect("cell");
        }
    }
    book.save_to_buffer().expect("workbook")
}

enum Cell {
    Text(&'static str),
    Number(f64),
    Bool(bool),
    Empty,
}

#[test]
fn bad_files_are_refused_with_their_place_and_field() {
    use Cell::{Bool, Empty, Number, Text};
    let json = |text: &str| text.as_bytes().to_vec();
    let cases: Vec<(Format, Vec<u8>, ReadError)> = vec![
        (
            Format::LinguaGacha,
            json("[\n    {\"src\": \"ダリヤ\",\n     \"dst\": \"Дария\",}\n]"),
            error(Some(At::Line(3)), None, "malformed JSON: trailing comma at line 3 column 26"),
        ),
        (
            Format::AiNiee,
            json("[\n    {\"src\": \"ダリヤ\"\n     \"dst\": \"Дария\"}\n]"),
            error(Some(At::Line(3)), None, "malformed JSON: expected `,` or `}` at line 3 column 6"),
        ),
        (
            Format::LinguaGacha,
            json(r#"[{"src": 5, "dst": "пять"}]"#),
            error(Some(At::Entry(1)), Some("src"), "must be a string, not the number 5"),
        ),
        (
            Format::AiNiee,
            json(r#"[{"src": "ダリヤ", "dst": "Дария"}, {"dst": "Розетти"}]"#),
            error(Some(At::Entry(2)), Some("src"), "missing or empty source term"),
        ),
        (
            Format::AiNiee,
            json(r#"[{"src": "   ", "dst": "Дария"}]"#),
            error(Some(At::Entry(1)), Some("src"), "missing or empty source term"),
        ),
        (
            Format::AiNiee,
            json(r#"[{"src": "ダリヤ", "dst": "Дария", "info": ["女性"]}]"#),
            error(Some(At::Entry(1)), Some("info"), "must be a string, not a list"),
        ),
        (
            Format::LinguaGacha,
            json(r#"[{"src": "ダリヤ", "dst": "Дария", "regex": "true"}]"#),
            error(Some(At::Entry(1)), Some("regex"), "must be true or false, not the string \"true\""),
        ),
        (
            Format::LinguaGacha,
            json(r#"[{"src": "ダリヤ", "dst": "Дария", "src": "ダリア"}]"#),
            error(Some(At::Entry(1)), Some("src"), "appears twice in the entry"),
        ),
        (
            Format::AiNiee,
            json(r#"["ダリヤ"]"#),
            error(Some(At::Entry(1)), Some("entry"), "must be an object, not the string \"ダリヤ\""),
        ),
        (
            Format::LinguaGacha,
            json(r#"[null, {"id": 1, "name": "ハロルド", "nickname": ""}]"#),
            error(
                Some(At::Entry(1)),
                Some("entry"),
                "must be an object, not null (an RPG Maker Actors.json starts so: lorebank does not import \
                 Actors.json)",
            ),
        ),
        (
            Format::LinguaGacha,
            json(r#"[{"id": 1, "name": "ハロルド", "nickname": ""}]"#),
            error(
                Some(At::Entry(1)),
                Some("src"),
                "missing; an RPG Maker actor (id, name, nickname): lorebank does not import Actors.json",
            ),
        ),
        (
            Format::LinguaGacha,
            json(r#"{"ダリヤ": 5}"#),
            error(Some(At::Entry(1)), Some("dst"), "must be a string, not the number 5"),
        ),
        (
            Format::AiNiee,
            json(r#"{"ダリヤ": "达莉雅", " ": "空"}"#),
            error(Some(At::Entry(2)), Some("src"), "missing or empty source term"),
        ),
        (
            Format::LinguaGacha,
            json(r#""ダリヤ""#),
            error(
                None,
                None,
                "a LinguaGacha glossary is a JSON list of {src, dst, info, regex, case_sensitive} objects or a \
                 {src: dst} object, not the string \"ダリヤ\"",
            ),
        ),
        (
            Format::AiNiee,
            b"[{\"src\": \"\xff\"}]".to_vec(),
            error(Some(At::Line(1)), None, "not UTF-8 (invalid byte at offset 10); save the file as UTF-8"),
        ),
        (
            Format::LinguaGachaXlsx,
            fixture("linguagacha/glossary.json"),
            error(None, None, "not an XLSX workbook: Zip error: invalid Zip archive: Could not find EOCD"),
        ),
        (
            Format::AiNieeXlsx,
            b"PK\x03\x04 not really a zip".to_vec(),
            error(None, None, "not an XLSX workbook: Zip error: invalid Zip archive: Could not find EOCD"),
        ),
        (
            Format::LinguaGachaXlsx,
            fixture("linguagacha/number-src.xlsx"),
            error(Some(At::Row(3)), Some("src"), "must be a text cell, not a number (42); format the column as text"),
        ),
        (
            Format::AiNieeXlsx,
            workbook(&[vec![Text("原文"), Text("译文")], vec![Text("ダリヤ"), Number(7.0)]]),
            error(Some(At::Row(2)), Some("dst"), "must be a text cell, not a number (7); format the column as text"),
        ),
        (
            Format::LinguaGachaXlsx,
            workbook(&[vec![Text("ダリヤ"), Text("Дария"), Bool(true)]]),
            error(
                Some(At::Row(1)),
                Some("info"),
                "must be a text cell, not a boolean (true); format the column as text",
            ),
        ),
        (
            Format::AiNieeXlsx,
            workbook(&[vec![Text("原文")], vec![Empty, Text("Дария")]]),
            error(Some(At::Row(2)), Some("src"), "missing or empty source term"),
        ),
    ];
    for (index, (format, bytes, expected)) in cases.into_iter().enumerate() {
        let got = read(format, &bytes, &languages("ja"));
        assert_eq!(got, Err(expected), "case {index} ({format})");
    }
}

#[test]
fn a_row_with_content_only_past_the_columns_is_no_entry_and_its_cells_are_lost() {
    use Cell::{Empty, Text};
    let bytes =
        workbook(&[vec![Text("ダリヤ"), Text("Дария")], vec![Empty, Empty, Empty, Empty, Empty, Empty, Text("备注")]]);
    let parsed = parse(Format::LinguaGachaXlsx, &bytes);
    assert_eq!(parsed.entries, vec![entry(At::Row(1), "ダリヤ", "Дария", None)]);
    assert_eq!(parsed.lost, vec![lost(At::Row(2), "column G", "备注")]);
    let bytes = workbook(&[
        vec![Text("原文"), Text("译文"), Text("描述")],
        vec![Empty, Empty, Empty, Text("备注")],
        vec![Text("ダリヤ"), Text("Дария")],
    ]);
    let parsed = parse(Format::AiNieeXlsx, &bytes);
    assert_eq!(parsed.entries, vec![entry(At::Row(3), "ダリヤ", "Дария", None)]);
    assert_eq!(parsed.lost, vec![lost(At::Row(2), "column D", "备注")]);
}

/// `bytes` (a workbook) with `xl/workbook.xml` passed through `edit`.
fn with_workbook_xml(bytes: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for index in 0..archive.len() {
        let mut part = archive.by_index(index).expect("part");
        let name = part.name().expect("part name").into_owned();
        let mut content = String::new();
        part.read_to_string(&mut content).expect("read part");
        if name == "xl/workbook.xml" {
            content = edit(&content);
        }
        out.start_file(name, zip::write::SimpleFileOptions::default()).expect("start part");
        out.write_all(content.as_bytes()).expect("write part");
    }
    out.finish().expect("zip").into_inner()
}

#[test]
fn the_active_sheet_is_the_one_the_workbook_view_names() {
    let exported = write(Format::AiNieeXlsx, &export_input(vec![Term::new("ダリヤ", "Дария")])).expect("export");
    let xml = |bytes: &[u8]| {
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
        let mut xml = String::new();
        archive.by_name("xl/workbook.xml").expect("workbook part").read_to_string(&mut xml).expect("read");
        xml
    };
    assert!(xml(&exported.bytes).contains("<workbookView "), "{}", xml(&exported.bytes));
    let beyond =
        with_workbook_xml(&exported.bytes, |xml| xml.replace("<workbookView ", "<workbookView activeTab=\"3\" "));
    assert_eq!(
        read(Format::AiNieeXlsx, &beyond, &languages("ja")),
        Err(error(None, None, "the active sheet is number 4 but the workbook has 1 sheets"))
    );
    let garbled =
        with_workbook_xml(&exported.bytes, |xml| xml.replace("<workbookView ", "<workbookView activeTab=\"x\" "));
    assert_eq!(
        read(Format::AiNieeXlsx, &garbled, &languages("ja")),
        Err(error(None, None, "workbook view has an activeTab that is not a number: `x`"))
    );
    // LinguaGacha reads the first sheet whatever the view says.
    let exported = write(Format::LinguaGachaXlsx, &export_input(vec![Term::new("ダリヤ", "Дария")])).expect("export");
    let beyond =
        with_workbook_xml(&exported.bytes, |xml| xml.replace("<workbookView ", "<workbookView activeTab=\"3\" "));
    assert_eq!(parse(Format::LinguaGachaXlsx, &beyond).entries, vec![entry(At::Row(2), "ダリヤ", "Дария", None)]);
}

#[test]
fn a_value_longer_than_a_cell_holds_fails_the_export_naming_the_record() {
    let long = "长".repeat(32_768);
    let input = export_input(vec![
        Term::new("ダリヤ", "Дария"),
        Term { note: Some(long), ..Term::new("黑塔", "Чёрная башня") },
    ]);
    for format in [Format::LinguaGachaXlsx, Format::AiNieeXlsx] {
        let error = write(format, &input).expect_err("a cell holds at most 32,767 characters");
        assert_eq!(error.format, format);
        assert!(error.message.starts_with("T-2: "), "{}", error.message);
    }
}

#[test]
fn truncated_workbooks_are_errors_not_panics() {
    let input =
        export_input(vec![Term { note: Some("女性的名字".into()), ..Term::new("ダリヤ", "Дария") }]);
    for format in [Format::LinguaGachaXlsx, Format::AiNieeXlsx] {
        let bytes = write(format, &input).expect("export").bytes;
        for cut in (0..bytes.len()).step_by(97) {
            let result = read(format, &bytes[..cut], &languages("ja"));
            assert!(result.is_err(), "{format}: {cut} of {} bytes read as {result:?}", bytes.len());
        }
    }
}

/// One small export of each workbook format, made once.
fn exported_workbooks() -> &'static [(Format, Vec<u8>); 2] {
    static WORKBOOKS: std::sync::OnceLock<[(Format, Vec<u8>); 2]> = std::sync::OnceLock::new();
    WORKBOOKS.get_or_init(|| {
        let input =
            export_input(vec![Term { note: Some("女性的名字".into()), ..Term::new("ダリヤ", "Дария") }]);
        [Format::LinguaGachaXlsx, Format::AiNieeXlsx]
            .map(|format| (format, write(format, &input).expect("export").bytes))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for format in FORMATS {
            if let Err(error) = read(format, &bytes, &languages("ja")) {
                prop_assert!(!error.message.is_empty());
            }
        }
    }

    #[test]
    fn workbooks_with_flipped_bytes_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), 1..=255u8), 1..4)) {
        for (format, bytes) in exported_workbooks() {
            let mut bytes = bytes.clone();
            for (index, mask) in &flips {
                let at = index.index(bytes.len());
                bytes[at] ^= mask;
            }
            if let Err(error) = read(*format, &bytes, &languages("ja")) {
                prop_assert!(!error.message.is_empty());
            }
        }
    }

    #[test]
    fn arbitrary_json_never_panics(text in r#"[\[\]{}",:0-9a-z \n炎ダ\\]{0,64}"#) {
        for format in [Format::LinguaGacha, Format::AiNiee] {
            if let Err(error) = read(format, text.as_bytes(), &languages("ja")) {
                prop_assert!(!error.message.is_empty());
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------

#[test]
fn detect_picks_these_formats_by_extension_and_by_content() {
    let cases = [
        ("linguagacha/glossary.json", Format::LinguaGacha),
        ("linguagacha/object.json", Format::LinguaGacha),
        ("linguagacha/glossary.xlsx", Format::LinguaGachaXlsx),
        ("ainiee/legacy.json", Format::AiNiee),
        ("ainiee/glossary.xlsx", Format::AiNieeXlsx),
    ];
    for (path, format) in cases {
        let bytes = fixture(path);
        let name = path.rsplit('/').next().unwrap_or(path);
        assert_eq!(detect(name, &bytes), Ok(format), "{path} by extension");
        assert_eq!(detect("glossary", &bytes), Ok(format), "{path} by content");
    }
    let exported = write(Format::AiNieeXlsx, &export_input(vec![Term::new("ダリヤ", "Дария")])).expect("export");
    assert_eq!(detect("术语表.xlsx", &exported.bytes), Ok(Format::AiNieeXlsx));
    let exported = write(Format::LinguaGachaXlsx, &export_input(vec![Term::new("ダリヤ", "Дария")])).expect("export");
    assert_eq!(detect("rules.xlsx", &exported.bytes), Ok(Format::LinguaGachaXlsx));
    let exported = write(Format::LinguaGacha, &export_input(vec![Term::new("ダリヤ", "Дария")])).expect("export");
    assert_eq!(detect("rules.json", &exported.bytes), Ok(Format::LinguaGacha));
}

// ---------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------

fn sample() -> ExportInput {
    export_input(vec![
        Term {
            note: Some("女性的名字".into()),
            aliases: vec![alias("ダリヤ嬢"), alias("达莉雅")],
            ..Term::new("ダリヤ", "Дария")
        },
        Term::new("黑塔", "Чёрная башня"),
    ])
}

#[test]
fn linguagacha_json_export_is_the_five_fields_with_a_four_space_indent() {
    let exported = write(Format::LinguaGacha, &sample()).expect("export");
    let expected = r#"[
    {
        "src": "ダリヤ",
        "dst": "Дария",
        "info": "女性的名字",
        "regex": false,
        "case_sensitive": false
    },
    {
        "src": "ダリヤ嬢",
        "dst": "Дария",
        "info": "女性的名字",
        "regex": false,
        "case_sensitive": false
    },
    {
        "src": "达莉雅",
        "dst": "Дария",
        "info": "女性的名字",
        "regex": false,
        "case_sensitive": false
    },
    {
        "src": "黑塔",
        "dst": "Чёрная башня",
        "info": "",
        "regex": false,
        "case_sensitive": false
    }
]
"#;
    assert_eq!(String::from_utf8(exported.bytes).expect("UTF-8"), expected);
    // The aliases are written as rows of their own; their kinds are not.
    assert_eq!(exported.lost, vec![Lost { at: At::Record(term_id(1)), field: "aliases".into(), value: None }]);
}

#[test]
fn ainiee_json_export_is_src_dst_info_with_a_four_space_indent() {
    let exported = write(Format::AiNiee, &export_input(vec![Term::new("黑塔", "Чёрная башня")])).expect("export");
    let expected =
        "[\n    {\n        \"src\": \"黑塔\",\n        \"dst\": \"Чёрная башня\",\n        \"info\": \"\"\n    }\n]\n";
    assert_eq!(String::from_utf8(exported.bytes).expect("UTF-8"), expected);
    assert_eq!(exported.lost, vec![]);
}

#[test]
fn ainiee_export_escapes_keys_it_would_read_as_regular_expressions() {
    let input = export_input(vec![
        Term { aliases: vec![alias("(笑)")], ..Term::new("Dr. Who", "Доктор Кто") },
        Term::new("[mc]", "[ГГ]"),
    ]);
    for format in [Format::AiNiee, Format::AiNieeXlsx] {
        let exported = write(format, &input).expect("export");
        let note = |escaped: &str| {
            format!("escaped as the regular expression `{escaped}`: AiNiee matches it case-sensitively")
        };
        assert_eq!(
            exported.lost,
            vec![
                Lost { at: At::Record(term_id(1)), field: "aliases".into(), value: None },
                lost(At::Record(term_id(1)), "src", &note("Dr\\. Who")),
                lost(At::Record(term_id(1)), "aliases", &note("\\(笑\\)")),
            ],
            "{format}"
        );
        let parsed = parse(format, &exported.bytes);
        let keys: Vec<&str> = parsed.entries.iter().map(|entry| entry.term.src.as_str()).collect();
        assert_eq!(keys, ["Dr. Who", "(笑)", "[mc]"], "{format}");
        assert_eq!(parsed.skipped, vec![], "{format}");
    }
}

/// The `dcterms:created` of an exported workbook.
fn created(bytes: &[u8]) -> String {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut core = String::new();
    archive.by_name("docProps/core.xml").expect("core properties").read_to_string(&mut core).expect("read");
    let start = core.find("<dcterms:created").expect("created");
    let start = start + core[start..].find('>').expect("tag end") + 1;
    let end = start + core[start..].find('<').expect("value end");
    core[start..end].to_owned()
}

#[test]
fn xlsx_exports_depend_only_on_the_glossary() {
    for format in [Format::LinguaGachaXlsx, Format::AiNieeXlsx] {
        let first = write(format, &sample()).expect("export").bytes;
        // The library would record the time of the export; it is fixed instead.
        assert_eq!(created(&first), "2000-01-01T00:00:00Z", "{format}");
        let second = write(format, &sample()).expect("export").bytes;
        assert!(first == second, "{format}: two exports of one glossary differ");
    }
}

/// The rows of the sheet `tool` reads (`first` or `active`), as openpyxl reads them,
/// with the sheet names and the title of the sheet read.
fn openpyxl_rows(bytes: &[u8], sheet: &str) -> serde_json::Value {
    let probe = Command::new("python3").args(["-c", "import openpyxl"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "this test opens exported workbooks with the Python package openpyxl: run scripts/setup.sh ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => {
            panic!("python3 is needed to open exported workbooks with openpyxl ({error}): run scripts/setup.sh")
        }
    }
    let mut file = tempfile::Builder::new().suffix(".xlsx").tempfile().expect("temporary file");
    file.write_all(bytes).expect("write workbook");
    file.flush().expect("flush");
    let script = r#"
import json, sys
import openpyxl
book = openpyxl.load_workbook(sys.argv[1])
sheet = book.worksheets[0] if sys.argv[2] == "first" else book.active
rows = [[cell.value for cell in row] for row in sheet.iter_rows()]
print(json.dumps({"sheets": book.sheetnames, "title": sheet.title, "rows": rows}, ensure_ascii=False))
"#;
    let output =
        Command::new("python3").args(["-c", script]).arg(file.path()).arg(sheet).output().expect("run python3");
    assert!(output.status.success(), "openpyxl failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("openpyxl's JSON")
}

#[test]
fn openpyxl_reads_the_linguagacha_workbook_as_the_spec_says() {
    let exported = write(Format::LinguaGachaXlsx, &sample()).expect("export");
    let got = openpyxl_rows(&exported.bytes, "first");
    let expected = serde_json::json!({
        "sheets": ["rules"],
        "title": "rules",
        "rows": [
            ["src", "dst", "info", "regex", "case_sensitive"],
            ["ダリヤ", "Дария", "女性的名字", false, false],
            ["ダリヤ嬢", "Дария", "女性的名字", false, false],
            ["达莉雅", "Дария", "女性的名字", false, false],
            ["黑塔", "Чёрная башня", null, false, false],
        ],
    });
    assert_eq!(got, expected);
}

#[test]
fn openpyxl_reads_the_ainiee_workbook_as_the_spec_says() {
    let input = export_input(vec![
        Term {
            note: Some("女性的名字\n第一卷".into()),
            aliases: vec![alias("达莉雅")],
            ..Term::new("ダリヤ", "Дария")
        },
        Term::new("Dr. Who", "Доктор Кто"),
        Term { note: Some("_x0041_ stays as written".into()), ..Term::new("黑塔", "Чёрная башня") },
    ]);
    let exported = write(Format::AiNieeXlsx, &input).expect("export");
    let got = openpyxl_rows(&exported.bytes, "active");
    let expected = serde_json::json!({
        "sheets": ["Sheet1"],
        "title": "Sheet1",
        "rows": [
            ["原文", "译文", "描述"],
            ["ダリヤ", "Дария", "女性的名字\n第一卷"],
            ["达莉雅", "Дария", "女性的名字\n第一卷"],
            ["Dr\\. Who", "Доктор Кто", null],
            ["黑塔", "Чёрная башня", "_x0041_ stays as written"],
        ],
    });
    assert_eq!(got, expected);
}

// ---------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------

#[test]
fn read_write_read_is_a_fixed_point_for_every_fixture() {
    let fixtures = [
        (Format::LinguaGacha, "linguagacha/glossary.json"),
        (Format::LinguaGacha, "linguagacha/object.json"),
        (Format::LinguaGachaXlsx, "linguagacha/glossary.xlsx"),
        (Format::AiNiee, "ainiee/glossary.json"),
        (Format::AiNiee, "ainiee/legacy.json"),
        (Format::AiNiee, "ainiee/object.json"),
        (Format::AiNieeXlsx, "ainiee/glossary.xlsx"),
        (Format::AiNieeXlsx, "ainiee/no-header.xlsx"),
    ];
    for (format, path) in fixtures {
        assert_read_write_read(path, "ja", format, &fixture(path));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn write_then_read_gives_the_terms_back(input in line_export("[a-zA-Z0-9]")) {
        for format in FORMATS {
            let (exported, parsed) = assert_write_read("ja", format, &input);
            let again = write(format, &export_input(terms_of(&parsed))).expect("export");
            prop_assert!(again.bytes == exported.bytes, "{}: export, import, export changed the bytes", format);
        }
    }
}

/// `bytes`, an exported workbook, with the XML of its first sheet changed by `edit`.
fn with_sheet(bytes: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).unwrap();
        let name = file.name().unwrap().into_owned();
        let mut content = Vec::new();
        file.read_to_end(&mut content).unwrap();
        if name == "xl/worksheets/sheet1.xml" {
            let edited = edit(std::str::from_utf8(&content).unwrap());
            assert_ne!(edited.as_bytes(), content, "the edit changed nothing");
            content = edited.into_bytes();
        }
        out.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        out.write_all(&content).unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn a_reversed_dimension_is_an_error_or_a_read_never_a_panic() {
    for (format, bytes) in exported_workbooks() {
        let reversed = with_sheet(bytes, |xml| {
            let start = xml.find("<dimension ref=\"").expect("a dimension") + "<dimension ref=\"".len();
            let end = start + xml[start..].find('"').unwrap();
            format!("{}Z9:A1{}", &xml[..start], &xml[end..])
        });
        match read(*format, &reversed, &languages("ja")) {
            Ok(parsed) => assert_eq!(parsed.entries[0].term.src, "ダリヤ", "{format:?}"),
            Err(error) => assert!(error.message.contains("XLSX"), "{format:?}: {error}"),
        }
    }
}

#[test]
fn two_far_apart_cells_are_read_as_two_cells_not_a_sheet_between_them() {
    // A1 and XFD1048576 span 16,384 × 1,048,576 cells: read densely, that is far
    // more memory than any machine has.
    let far = r#"<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>далеко</t></is></c></row></sheetData>"#;
    for (format, bytes) in exported_workbooks() {
        let workbook = with_sheet(bytes, |xml| xml.replace("</sheetData>", far));
        let parsed = read(*format, &workbook, &languages("ja")).unwrap_or_else(|error| panic!("{format:?}: {error}"));
        assert_eq!(parsed.entries[0].term.src, "ダリヤ", "{format:?}");
        let far_row = format!("{parsed:?}");
        assert!(
            far_row.contains("1048576") && far_row.contains("XFD"),
            "{format:?}: the far cell is reported: {far_row}"
        );
    }
}
