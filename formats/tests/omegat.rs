//! OmegaT glossaries, tab- and comma-separated: every fixture read exactly, every
//! bad file refused with its line and field, detection, exports byte for byte, the
//! tab-separated export read by translate-toolkit's `OmegaTFile` and the CSV export by
//! Python's csv module, round trips and fixed points.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::process::Command;

use formats::{
    detect, read, write, At, Entry, ExportInput, ExportTerm, Format, Lost, Notice, Parsed, ReadError, Skipped, Term,
};
use proptest::prelude::*;
use test_support::interchange::{
    self, alias, as_export, fixture, languages, lost, numbered, terms_of, translate_toolkit, ToolkitStore, ToolkitUnit,
};
use test_support::records::term_id;

const ACTIVATION: &str = "OmegaT shows a glossary entry when the tokens of its source (lower-cased, stemmed; an \
    all-caps term only in all-caps text) occur among the tokens of the segment, or, for a CJK term in a language \
    written without spaces, when the term occurs in the segment as a substring; lorebank matches keys \
    leftmost-longest on folded text, inside their windows";

/// `bytes` read as `format` of a Chinese book.
fn parse(format: Format, bytes: &[u8]) -> Result<Parsed, ReadError> {
    read(format, bytes, &languages("zh"))
}

fn entry(line: u64, src: &str, dst: &str, note: Option<&str>) -> Entry {
    interchange::entry(At::Line(line), src, dst, note)
}

fn skipped(line: u64, reason: &str) -> Skipped {
    interchange::skipped(At::Line(line), reason)
}

fn notice(line: u64, message: &str) -> Notice {
    Notice { at: Some(At::Line(line)), message: message.into() }
}

fn activation() -> Notice {
    Notice { at: None, message: ACTIVATION.into() }
}

#[test]
fn the_tab_separated_fixture_reads_every_rule_of_omegats_reader() {
    let parsed = parse(Format::OmegaT, &fixture("omegat/glossary.txt")).unwrap();
    assert_eq!(
        parsed.entries,
        vec![
            entry(3, "罗峰", "Ло Фэн", Some("main character")),
            entry(4, "巴巴塔", "Бабата", None),
            entry(5, "星辰塔", "Звёздная башня", Some("artifact")),
            entry(11, "地球", "Земля", None),
            entry(12, "宇宙", "Вселенная", None),
            entry(13, "#标签", "Метка", None),
            // The fixture spells it with U+0438 U+0306; OmegaT reads it as NFC.
            entry(14, "英雄", "Герой", None),
            entry(17, "東京", "Токио", None),
        ]
    );
    assert_eq!(
        parsed.skipped,
        vec![
            skipped(6, "alternative translation of line 3"),
            skipped(7, "repeats line 3"),
            skipped(8, "no tab: fewer than 2 columns"),
            skipped(9, "empty source term"),
            skipped(10, "no dst"),
        ]
    );
    assert_eq!(
        parsed.lost,
        vec![lost(At::Line(5), "column 4", "extra column"), lost(At::Line(5), "column 5", "second extra")]
    );
    assert_eq!(
        parsed.notices,
        vec![
            notice(12, "Unicode whitespace around a field trimmed (OmegaT keeps it)"),
            notice(14, "a field normalized to NFC, as OmegaT normalizes it"),
            activation(),
        ]
    );
    assert!(parsed.summaries.is_empty());
}

#[test]
fn a_utf8_byte_order_mark_is_skipped_and_japanese_reads() {
    let parsed = parse(Format::OmegaT, &fixture("omegat/japanese-bom.utf8")).unwrap();
    assert_eq!(
        parsed,
        Parsed {
            entries: vec![
                entry(1, "東京", "Токио", Some("首都")),
                entry(2, "ルフィ", "Луффи", Some("主人公")),
                entry(3, "海賊王", "Король пиратов", None),
            ],
            notices: vec![activation()],
            ..Parsed::default()
        }
    );
}

#[test]
fn utf16_with_a_byte_order_mark_reads_in_either_byte_order() {
    let expected = Parsed {
        entries: vec![
            entry(2, "罗峰", "Ло Фэн", Some("主角")),
            entry(3, "東京", "Токио", None),
            entry(4, "𠀋", "редкий иероглиф", Some("U+2000B, a surrogate pair in UTF-16")),
        ],
        notices: vec![activation()],
        ..Parsed::default()
    };
    let little = fixture("omegat/utf16le.tsv");
    let big = fixture("omegat/utf16be.tab");
    assert_eq!(&little[..2], b"\xFF\xFE");
    assert_eq!(&big[..2], b"\xFE\xFF");
    assert_eq!(parse(Format::OmegaT, &little).unwrap(), expected);
    assert_eq!(parse(Format::OmegaT, &big).unwrap(), expected);
}

#[test]
fn a_coding_comment_names_the_encoding() {
    let bytes = fixture("omegat/gb18030.txt");
    assert!(std::str::from_utf8(&bytes).is_err(), "the fixture is GB18030, not UTF-8");
    let parsed = parse(Format::OmegaT, &bytes).unwrap();
    assert_eq!(
        parsed,
        Parsed {
            entries: vec![
                entry(2, "罗峰", "Ло Фэн", Some("主角，地球人")),
                entry(3, "巴巴塔", "Бабата", Some("智能生命")),
                entry(4, "𠀋", "редкий иероглиф", Some("four bytes in GB18030")),
            ],
            notices: vec![activation()],
            ..Parsed::default()
        }
    );
}

#[test]
fn an_undeclared_legacy_encoding_is_detected_and_reported() {
    let bytes = fixture("omegat/shift_jis.txt");
    assert!(std::str::from_utf8(&bytes).is_err(), "the fixture is Shift_JIS, not UTF-8");
    let parsed = parse(Format::OmegaT, &bytes).unwrap();
    assert_eq!(
        parsed.entries,
        vec![
            entry(1, "東京", "Токио", Some("日本の首都です")),
            entry(2, "ルフィ", "Луффи", Some("麦わらの一味の船長です")),
            entry(3, "海賊王", "Король пиратов", Some("ひとつなぎの大秘宝を手に入れた者")),
            entry(4, "魔法少女", "Волшебница", Some("アニメのジャンルです")),
        ]
    );
    assert_eq!(
        parsed.notices,
        vec![
            Notice {
                at: None,
                message: "the file is not UTF-8 and declares no encoding: decoded as Shift_JIS, guessed from its \
                          bytes (OmegaT guesses with another detector and may decide otherwise); declare it with \
                          `# -*- coding: shift_jis -*-` on the first line to be sure"
                    .into(),
            },
            activation(),
        ]
    );
}

#[test]
fn a_coding_comment_after_a_utf8_byte_order_mark_counts_and_comment_lines_are_skipped() {
    let bytes = "\u{feff}# -*- mode: text; coding: utf-8 -*-\n# 注释\t不是条目\n罗峰\tЛо Фэн\n".as_bytes();
    let parsed = parse(Format::OmegaT, bytes).unwrap();
    assert_eq!(parsed.entries, vec![entry(3, "罗峰", "Ло Фэн", None)]);
    assert!(parsed.skipped.is_empty());
}

#[test]
fn windows_and_old_mac_line_ends_count_as_omegat_counts_them() {
    let parsed = parse(Format::OmegaT, "a\tА\r\nb\tБ\rc\tВ\n\nd\tГ".as_bytes()).unwrap();
    assert_eq!(
        parsed.entries,
        vec![entry(1, "a", "А", None), entry(2, "b", "Б", None), entry(3, "c", "В", None), entry(5, "d", "Г", None)]
    );
}

#[test]
fn the_csv_fixture_reads_quotes_commas_and_line_breaks() {
    let parsed = parse(Format::OmegaTCsv, &fixture("omegat/glossary.csv")).unwrap();
    assert_eq!(
        parsed.entries,
        vec![
            entry(2, "罗峰", "Ло Фэн", Some("main character")),
            entry(3, "星辰塔, 第一层", "Звёздная башня, первый ярус", Some("the \"tower\", floor one")),
            entry(4, "東京", "Токио", Some("a note\r\non two lines")),
            entry(6, "巴巴塔", "Бабата", None),
            entry(11, "ルフィ", "Луффи", Some("主人公, 海賊")),
        ]
    );
    assert_eq!(
        parsed.skipped,
        vec![
            skipped(7, "no comma: fewer than 2 columns"),
            skipped(8, "empty source term"),
            skipped(9, "no dst"),
            skipped(10, "alternative translation of line 2"),
        ]
    );
    assert_eq!(parsed.lost, vec![lost(At::Line(6), "column 4", "extra")]);
    assert_eq!(
        parsed.notices,
        vec![
            notice(
                4,
                "a quoted field holds a line break, kept; OmegaT reads a CSV file line by line and splits this \
                 entry there"
            ),
            activation(),
        ]
    );
}

#[test]
fn a_csv_comment_line_may_hold_quotes_and_commas() {
    let parsed = parse(Format::OmegaTCsv, "# \"unclosed, comment\n\n罗峰,\"Ло Фэн\"\n".as_bytes()).unwrap();
    assert_eq!(parsed.entries, vec![entry(3, "罗峰", "Ло Фэн", None)]);
}

#[test]
fn a_file_without_entries_reads_empty_without_the_activation_notice() {
    for format in [Format::OmegaT, Format::OmegaTCsv] {
        assert_eq!(parse(format, b"").unwrap(), Parsed::default());
        assert_eq!(parse(format, b"# only a comment\n").unwrap(), Parsed::default());
    }
}

fn error(line: u64, field: Option<&str>, message: &str) -> ReadError {
    interchange::error(Some(At::Line(line)), field, message)
}

fn utf16le(text: &str) -> Vec<u8> {
    let mut bytes = b"\xFF\xFE".to_vec();
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    bytes
}

#[test]
fn bad_files_are_refused_with_their_line_and_field() {
    let mut odd = utf16le("罗峰\tЛо Фэн\n東京\tТокио\n");
    odd.push(b'x');
    let mut lone_surrogate = utf16le("a\tА\n");
    lone_surrogate.extend([0x00, 0xD8, b'b', 0x00]);
    let no_bom: Vec<u8> = "a\tА\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let cases: Vec<(&str, Format, Vec<u8>, ReadError)> = vec![
        (
            "undeclared garbage",
            Format::OmegaT,
            b"src\tdst\n\x80\x01\x02\tx\n".to_vec(),
            error(
                2,
                None,
                "not UTF-8 (invalid byte at offset 8), no `-*- coding: … -*-` first line, and not text in \
                 windows-1252 (the likeliest guess) either; declare the encoding with `# -*- coding: NAME -*-` \
                 on the first line or save the file as UTF-8",
            ),
        ),
        (
            "unknown coding name",
            Format::OmegaT,
            b"# -*- coding: klingon -*-\nsrc\tdst\n".to_vec(),
            error(1, Some("coding"), "unknown encoding `klingon` in the `-*- coding: … -*-` comment"),
        ),
        (
            "a coding name WHATWG maps to the replacement encoding",
            Format::OmegaT,
            b"# Glossary -*- coding: iso-2022-kr -*-\nsrc\tdst\n".to_vec(),
            error(1, Some("coding"), "unknown encoding `iso-2022-kr` in the `-*- coding: … -*-` comment"),
        ),
        (
            "UTF-16 declared on a single-byte line",
            Format::OmegaT,
            b"# -*- coding: utf-16 -*-\nsrc\tdst\n".to_vec(),
            error(
                1,
                Some("coding"),
                "`utf-16` names UTF-16, but the comment line is single-byte text; save a UTF-16 file with a byte \
                 order mark",
            ),
        ),
        (
            "a UTF-8 byte order mark and another coding",
            Format::OmegaT,
            b"\xEF\xBB\xBF# -*- coding: gbk -*-\nsrc\tdst\n".to_vec(),
            error(1, Some("coding"), "the file starts with a UTF-8 byte order mark but the comment declares GBK"),
        ),
        (
            "malformed bytes in the declared encoding",
            Format::OmegaT,
            b"# -*- coding: shift_jis -*-\nsrc\tdst\n\x81\x20\tx\n".to_vec(),
            error(3, None, "not valid Shift_JIS (declared on line 1): malformed bytes at offset 36"),
        ),
        (
            "malformed bytes after a UTF-8 byte order mark",
            Format::OmegaT,
            b"\xEF\xBB\xBFsrc\tdst\n\xC3\x28\tx\n".to_vec(),
            error(2, None, "not valid UTF-8 (the file starts with its byte order mark): malformed bytes at offset 11"),
        ),
        (
            "UTF-16 with an odd number of bytes",
            Format::OmegaT,
            odd,
            error(
                3,
                None,
                "not valid UTF-16LE (the file starts with its byte order mark): malformed bytes at offset 40",
            ),
        ),
        (
            "UTF-16 with a lone surrogate",
            Format::OmegaT,
            lone_surrogate,
            error(
                2,
                None,
                "not valid UTF-16LE (the file starts with its byte order mark): malformed bytes at offset 10",
            ),
        ),
        (
            "UTF-16 without a byte order mark",
            Format::OmegaT,
            no_bom,
            error(1, None, "NUL character: a UTF-16 file needs a byte order mark"),
        ),
        (
            "an unclosed quoted field",
            Format::OmegaTCsv,
            b"a,b\nc,\"d\ne,f\n".to_vec(),
            error(2, Some("quote"), "a quoted field is not closed before the end of the file"),
        ),
        (
            "text after a closing quote",
            Format::OmegaTCsv,
            b"a,b\n\"c\"d,e\n".to_vec(),
            error(
                2,
                Some("quote"),
                "text after the closing quote of a field; a quote inside a quoted field is written twice",
            ),
        ),
        (
            "a quote inside an unquoted field",
            Format::OmegaTCsv,
            "a,b\n\n罗峰,Ло \"Фэн\"\n".as_bytes().to_vec(),
            error(
                3,
                Some("quote"),
                "a quote inside an unquoted field; quote the whole field and double the quotes in it",
            ),
        ),
        (
            "a space before an opening quote",
            Format::OmegaTCsv,
            b"a, \"b, c\"\n".to_vec(),
            error(
                1,
                Some("quote"),
                "a quote inside an unquoted field; quote the whole field and double the quotes in it",
            ),
        ),
        (
            "undeclared garbage in a CSV file",
            Format::OmegaTCsv,
            b"a,b\n\x00\xff\xfe,c\n".to_vec(),
            error(
                2,
                None,
                "not UTF-8 (invalid byte at offset 5), and not text in windows-1254 (the likeliest guess) either; \
                 save the file as UTF-8",
            ),
        ),
    ];
    for (name, format, bytes, expected) in cases {
        assert_eq!(parse(format, &bytes), Err(expected), "{name}");
    }
}

#[test]
fn a_csv_file_has_no_coding_comment_as_in_omegat() {
    // OmegaT detects the encoding of a CSV file and reads no magic comment: the
    // comment is a comment, the UTF-8 text is UTF-8.
    let parsed = parse(Format::OmegaTCsv, "# -*- coding: klingon -*-\n罗峰,Ло Фэн\n".as_bytes()).unwrap();
    assert_eq!(parsed.entries, vec![entry(2, "罗峰", "Ло Фэн", None)]);
}

#[test]
fn detect_picks_omegat_by_extension_and_by_its_header_line() {
    let cases = [
        ("glossary.txt", fixture("omegat/glossary.txt"), Format::OmegaT),
        ("glossary", fixture("omegat/glossary.txt"), Format::OmegaT),
        ("japanese-bom.utf8", fixture("omegat/japanese-bom.utf8"), Format::OmegaT),
        ("utf16le.tsv", fixture("omegat/utf16le.tsv"), Format::OmegaT),
        ("utf16be.tab", fixture("omegat/utf16be.tab"), Format::OmegaT),
        // A UTF-16 file by its byte order mark, whatever its name says.
        ("glossary-utf16.txt", fixture("omegat/utf16le.tsv"), Format::OmegaT),
        ("glossary-utf16", fixture("omegat/utf16be.tab"), Format::OmegaT),
        ("GB18030.TXT", fixture("omegat/gb18030.txt"), Format::OmegaT),
        ("glossary.csv", fixture("omegat/glossary.csv"), Format::OmegaTCsv),
        ("Glossary.CSV", fixture("omegat/glossary.csv"), Format::OmegaTCsv),
    ];
    for (name, bytes, format) in cases {
        assert_eq!(detect(name, &bytes), Ok(format), "{name}");
    }
}

fn term(number: u32, term: Term) -> ExportTerm {
    ExportTerm { id: term_id(number), term }
}

/// Terms with every pitfall of the two writers.
fn pitfalls() -> ExportInput {
    ExportInput {
        source_lang: "zh".into(),
        target_lang: "ru".into(),
        chapter: Some(3),
        terms: vec![
            term(
                1,
                Term {
                    note: Some("main character".into()),
                    aliases: vec![alias("罗先生"), alias("#峰")],
                    ..Term::new("罗峰", "Ло Фэн")
                },
            ),
            term(
                2,
                Term {
                    note: Some("a \"tower\", floor one\nsecond line".into()), ..Term::new("星辰塔", "Башня")
                },
            ),
            term(3, Term::new("#标签", "Мет\tка")),
            term(4, Term { note: Some("Герои\u{306}".into()), ..Term::new("英雄", "Герой") }),
        ],
        summaries: Vec::new(),
    }
}

#[test]
fn the_tab_separated_export_is_omegats_file_with_one_line_per_surface() {
    let exported = write(Format::OmegaT, &pitfalls()).unwrap();
    // No header line: translate-toolkit would read OmegaT's as an entry.
    assert_eq!(
        String::from_utf8(exported.bytes.clone()).unwrap(),
        "罗峰\tЛо Фэн\tmain character\n\
         罗先生\tЛо Фэн\tmain character\n\
         \u{20}#峰\tЛо Фэн\tmain character\n\
         星辰塔\tБашня\ta \"tower\", floor one second line\n\
         \u{20}#标签\tМет ка\n\
         英雄\tГерой\tГерой\n"
    );
    assert_eq!(exported.lost, pitfall_losses("tab, line break or control character"));
    // Saved as `.utf8` (OmegaT reads it as UTF-8 whatever it holds), it is detected.
    assert_eq!(Format::OmegaT.extension(), "utf8");
    assert_eq!(detect("glossary.utf8", &exported.bytes), Ok(Format::OmegaT));
}

/// What translate-toolkit should read from a tab-separated export: the entries
/// lorebank reads from it, except that a key starting with `#` keeps the space the
/// writer puts before it (OmegaT and lorebank trim it; translate-toolkit trims
/// nothing).
fn toolkit_entries(parsed: &Parsed) -> Vec<ToolkitUnit> {
    parsed
        .entries
        .iter()
        .map(|entry| {
            let term = &entry.term;
            let source = if term.src.starts_with('#') { format!(" {}", term.src) } else { term.src.clone() };
            ToolkitUnit {
                id: Some(source.clone()),
                source: Some(source),
                target: Some(term.dst.clone()),
                notes: term.note.clone(),
            }
        })
        .collect()
}

#[test]
fn translate_toolkit_reads_the_tab_separated_export_entry_for_entry() {
    let mut inputs = vec![pitfalls()];
    for name in ["glossary.txt", "japanese-bom.utf8", "utf16le.tsv", "gb18030.txt", "shift_jis.txt"] {
        inputs.push(as_export(&parse(Format::OmegaT, &fixture(&format!("omegat/{name}"))).unwrap(), "zh"));
    }
    for input in inputs {
        let exported = write(Format::OmegaT, &input).unwrap();
        let parsed = parse(Format::OmegaT, &exported.bytes).unwrap();
        assert!(parsed.skipped.is_empty() && parsed.lost.is_empty(), "{parsed:?}");
        let units = translate_toolkit(ToolkitStore::OmegaT, &exported.bytes);
        assert_eq!(units, toolkit_entries(&parsed));
        // One unit per line the export wrote: nothing more (no header line) and
        // nothing less.
        assert_eq!(units.len(), exported.bytes.iter().filter(|&&byte| byte == b'\n').count());
    }
}

#[test]
fn a_key_starting_with_a_byte_order_mark_is_written_without_it() {
    // Without a header line the first key starts the file, where OmegaT and lorebank
    // take a U+FEFF for the byte order mark and translate-toolkit keeps it.
    let input = ExportInput {
        terms: vec![term(1, Term { aliases: vec![alias("\u{feff}罗先生")], ..Term::new("\u{feff}罗峰", "Ло Фэн") })],
        ..ExportInput::default()
    };
    let exported = write(Format::OmegaT, &input).unwrap();
    assert_eq!(String::from_utf8(exported.bytes.clone()).unwrap(), "罗峰\tЛо Фэн\n罗先生\tЛо Фэн\n");
    let at = At::Record(term_id(1));
    let value = "starts with U+FEFF, which reads as a byte order mark";
    assert_eq!(
        exported.lost,
        vec![
            Lost { at: at.clone(), field: "aliases".into(), value: None },
            lost(&at, "src", value),
            lost(&at, "aliases", value)
        ]
    );
    let units = translate_toolkit(ToolkitStore::OmegaT, &exported.bytes);
    assert_eq!(units, toolkit_entries(&parse(Format::OmegaT, &exported.bytes).unwrap()));
}

/// What an export of [`pitfalls`] reports: the aliases (written as lines of their
/// own, read back as terms of their own), and each value the writer had to change.
fn pitfall_losses(line_break: &str) -> Vec<Lost> {
    let mut losses = vec![
        Lost { at: At::Record(term_id(1)), field: "aliases".into(), value: None },
        lost(At::Record(term_id(2)), "note", line_break),
    ];
    if line_break.starts_with("tab") {
        losses.push(lost(At::Record(term_id(3)), "dst", line_break));
    }
    losses.push(lost(At::Record(term_id(4)), "note", "not NFC (written normalized, as OmegaT reads it)"));
    losses
}

#[test]
fn the_csv_export_quotes_what_it_must_and_replaces_line_breaks() {
    let exported = write(Format::OmegaTCsv, &pitfalls()).unwrap();
    assert_eq!(
        String::from_utf8(exported.bytes).unwrap(),
        "\u{feff}罗峰,Ло Фэн,main character\n\
         罗先生,Ло Фэн,main character\n\
         \"#峰\",Ло Фэн,main character\n\
         星辰塔,Башня,\"a \"\"tower\"\", floor one second line\"\n\
         \"#标签\",Мет\tка\n\
         英雄,Герой,Герой\n"
    );
    assert_eq!(exported.lost, pitfall_losses("line break (OmegaT reads a CSV file line by line)"));
}

#[test]
fn an_export_trims_fields_and_reports_it() {
    let input = ExportInput {
        terms: vec![term(1, Term { note: Some("note ".into()), ..Term::new("罗峰", "Ло Фэн") })],
        ..ExportInput::default()
    };
    for format in [Format::OmegaT, Format::OmegaTCsv] {
        let exported = write(format, &input).unwrap();
        assert_eq!(
            exported.lost,
            vec![lost(At::Record(term_id(1)), "note", "surrounding whitespace (OmegaT trims it)")],
            "{format}"
        );
        // Written as OmegaT reads it, so a second export is the first.
        let text = String::from_utf8(exported.bytes).unwrap();
        assert!(text.ends_with("罗峰\tЛо Фэн\tnote\n") || text.ends_with("罗峰,Ло Фэн,note\n"), "{text:?}");
    }
}

/// Rows of a CSV file as Python's csv module reads them (the file decoded as UTF-8
/// with its byte order mark skipped), one JSON list per row.
fn python_csv_rows(bytes: &[u8]) -> Vec<Vec<String>> {
    let script = "import csv, io, json, sys\n\
                  text = sys.stdin.buffer.read().decode('utf-8-sig')\n\
                  print(json.dumps(list(csv.reader(io.StringIO(text, newline='')))))\n";
    let mut child = match Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => panic!("python3 is needed to open the CSV export ({error}): run scripts/setup.sh"),
    };
    use std::io::Write;
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "python3 failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn pythons_csv_module_reads_the_csv_export_field_for_field() {
    let exported = write(Format::OmegaTCsv, &pitfalls()).unwrap();
    let rows = python_csv_rows(&exported.bytes);
    let expected: Vec<Vec<&str>> = vec![
        vec!["罗峰", "Ло Фэн", "main character"],
        vec!["罗先生", "Ло Фэн", "main character"],
        vec!["#峰", "Ло Фэн", "main character"],
        vec!["星辰塔", "Башня", "a \"tower\", floor one second line"],
        vec!["#标签", "Мет\tка"],
        vec!["英雄", "Герой", "Герой"],
    ];
    assert_eq!(rows, expected);
}

#[test]
fn import_export_import_is_a_fixed_point_for_every_fixture() {
    let files = [
        ("glossary.txt", Format::OmegaT),
        ("japanese-bom.utf8", Format::OmegaT),
        ("utf16le.tsv", Format::OmegaT),
        ("utf16be.tab", Format::OmegaT),
        ("gb18030.txt", Format::OmegaT),
        ("shift_jis.txt", Format::OmegaT),
        ("glossary.csv", Format::OmegaTCsv),
        ("glossary.txt", Format::OmegaTCsv),
    ];
    for (name, format) in files {
        // A tab-separated file read as CSV has no entries: every line lacks a comma
        // or is refused for its quotes; only a UTF-8 fixture reads that far.
        let Ok(first) = parse(format, &fixture(&format!("omegat/{name}"))) else { continue };
        let exported = write(format, &as_export(&first, "zh")).unwrap();
        let second = parse(format, &exported.bytes).unwrap();
        let again = write(format, &as_export(&second, "zh")).unwrap();
        assert_eq!(again.bytes, exported.bytes, "{name} as {format}: the second export differs");
        assert_eq!(terms_of(&parse(format, &again.bytes).unwrap()), terms_of(&second), "{name} as {format}");
        assert!(again.lost.is_empty(), "{name} as {format}: {:?}", again.lost);
        assert!(second.skipped.is_empty() && second.lost.is_empty(), "{name} as {format}: {second:?}");
        if name == "glossary.csv" {
            // The quoted line break is the one thing the export changes.
            assert_eq!(
                exported.lost,
                vec![lost(At::Record(term_id(3)), "note", "line break (OmegaT reads a CSV file line by line)")]
            );
            let mut expected = terms_of(&first);
            expected[2].note = Some("a note on two lines".into());
            assert_eq!(terms_of(&second), expected);
        } else {
            assert!(exported.lost.is_empty(), "{name} as {format}: {:?}", exported.lost);
            assert_eq!(terms_of(&second), terms_of(&first), "{name} as {format}");
        }
    }
}

fn note() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[a-z ,\"#'а-яё\u{4e00}-\u{4e20}]{1,16}")
        .prop_map(|note| note.map(|note| note.trim().to_owned()).filter(|note| !note.is_empty()))
}

/// Terms a glossary of either format carries: CJK sources (some starting with `#`),
/// Cyrillic renderings with a comma or quote now and then, optional notes.
fn carried_terms() -> impl Strategy<Value = Vec<Term>> {
    let term =
        ("#?[\u{4e00}-\u{4e60}\u{3041}-\u{3096}\u{30a1}-\u{30fa}]{1,6}", "[а-яё]{1,8}([ ,\"][а-яё]{1,8})?", note())
            .prop_map(|(src, dst, note)| Term { note, ..Term::new(src, dst) });
    proptest::collection::vec(term, 0..12).prop_map(|mut terms| {
        // One rendering per source: a later line with the same source is an
        // alternative translation, which the reader skips.
        let mut seen = std::collections::BTreeSet::new();
        terms.retain(|term| seen.insert(term.src.clone()));
        terms
    })
}

proptest! {
    #[test]
    fn write_then_read_gives_back_the_terms(terms in carried_terms(), csv in any::<bool>()) {
        let format = if csv { Format::OmegaTCsv } else { Format::OmegaT };
        let input = ExportInput {
            source_lang: "ja".into(),
            target_lang: "ru".into(),
            chapter: None,
            terms: numbered(terms.clone()),
            summaries: Vec::new(),
        };
        let exported = write(format, &input).unwrap();
        prop_assert!(exported.lost.is_empty(), "{:?}", exported.lost);
        let parsed = parse(format, &exported.bytes).unwrap();
        prop_assert!(parsed.skipped.is_empty() && parsed.lost.is_empty(), "{:?}", parsed);
        prop_assert_eq!(terms_of(&parsed), terms);
    }

    #[test]
    fn from_the_first_import_on_export_and_import_are_a_fixed_point(
        raw in proptest::collection::vec(("[#罗峰 \t\n\r\u{3000}]{1,5}", "[ие\u{306}\u{301} \t\n,\"]{0,5}", proptest::option::of("[a \t\n\r,\"#\u{306}]{0,6}")), 0..8),
        csv in any::<bool>(),
    ) {
        let format = if csv { Format::OmegaTCsv } else { Format::OmegaT };
        let input = ExportInput {
            terms: (1..).zip(raw).map(|(number, (src, dst, note))| term(number, Term { note, ..Term::new(src, dst) })).collect(),
            ..ExportInput::default()
        };
        let first = parse(format, &write(format, &input).unwrap().bytes).unwrap();
        let exported = write(format, &as_export(&first, "zh")).unwrap();
        prop_assert!(exported.lost.is_empty(), "{:?}", exported.lost);
        let second = parse(format, &exported.bytes).unwrap();
        prop_assert_eq!(terms_of(&second), terms_of(&first));
        prop_assert_eq!(write(format, &as_export(&second, "zh")).unwrap().bytes, exported.bytes);
    }

    #[test]
    fn no_input_makes_a_reader_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        for format in [Format::OmegaT, Format::OmegaTCsv] {
            let _ = parse(format, &bytes);
        }
    }

    #[test]
    fn no_text_of_separators_quotes_and_marks_makes_a_reader_panic(
        text in "[\"',\t\r\n# a罗\u{feff}\u{3000}\u{306}-]{0,80}",
        bom in proptest::option::of(prop_oneof![Just(&b"\xFF\xFE"[..]), Just(&b"\xFE\xFF"[..]), Just(&b"\xEF\xBB\xBF"[..])]),
    ) {
        let mut bytes = bom.unwrap_or_default().to_vec();
        bytes.extend_from_slice(text.as_bytes());
        for format in [Format::OmegaT, Format::OmegaTCsv] {
            if let Ok(parsed) = parse(format, &bytes) {
                // Whatever reads, every entry has a source and a rendering.
                prop_assert!(parsed.entries.iter().all(|entry| !entry.term.src.is_empty() && !entry.term.dst.is_empty()));
            }
        }
    }
}

#[test]
fn a_guessed_encoding_of_a_csv_file_is_reported_with_advice_for_csv() {
    let text = "東京,Токио,日本の首都です\nルフィ,Луффи,麦わらの一味の船長です\n海賊王,Король пиратов,ひとつなぎの大秘宝を手に入れた者\n";
    let (bytes, _, unmappable) = encoding_rs::SHIFT_JIS.encode(text);
    assert!(!unmappable);
    let parsed = parse(Format::OmegaTCsv, &bytes).unwrap();
    assert_eq!(parsed.entries.len(), 3);
    assert_eq!(parsed.entries[2], entry(3, "海賊王", "Король пиратов", Some("ひとつなぎの大秘宝を手に入れた者")));
    assert_eq!(
        parsed.notices[0].message,
        "the file is not UTF-8 and declares no encoding: decoded as Shift_JIS, guessed from its bytes (OmegaT \
         guesses with another detector and may decide otherwise); save it as UTF-8 to be sure"
    );
}
