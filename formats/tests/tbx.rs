//! TBX: the fixtures read exactly as docs/formats.md maps them, bad files fail
//! with an error naming line, entry and field, exports of both generations read back
//! to what was exported; a `tbx` export passes a RELAX NG schema and the TBX-Basic DCA
//! rules, a `tbx-2008` export the TBX 2008 and TBX-Basic 2008 DTDs and the TBX-Basic
//! XCS (lxml), and translate-toolkit reads a `tbx-2008` export as the exported pairs.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

use formats::{
    detect, read, write, Alias, At, Entry, ExportInput, Format, Lost, Notice, Parsed, ReadError, Skipped, Term,
};
use ledger_model::{AliasKind, Gender, Status, Window};
use proptest::prelude::*;
use test_support::interchange::{
    alias, as_export, error, export_input, languages, lost, terms_of, translate_toolkit, try_translate_toolkit, uid,
    ToolkitStore, ToolkitUnit,
};
use test_support::records::term_id;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tbx");

/// A fixture of this folder.
fn fixture(name: &str) -> Vec<u8> {
    test_support::interchange::fixture(&format!("tbx/{name}"))
}

const DOCTYPE_SKIPPED: &str = "the <!DOCTYPE> was skipped: lorebank fetches no DTD and expands no entity one declares";

#[test]
fn a_tbx_2008_martif_reads_every_field() {
    let parsed = read(Format::Tbx, &fixture("martif-2008-zh.tbx"), &languages("zh")).unwrap();
    let (one, two, five) = (uid("hlm-1"), uid("hlm-2"), uid("hlm-5"));
    let expected = Parsed {
        entries: vec![
            Entry {
                at: one.clone(),
                term: Term {
                    kind: Some("character".into()),
                    gender: Some(Gender::Feminine),
                    decl: vec!["Линь Дайюй".into()],
                    note: Some("Heroine; 黛玉 is how the family calls her.\nIndeclinable in Russian.".into()),
                    aliases: vec![alias("黛玉")],
                    ..Term::new("林黛玉", "Линь Дайюй")
                },
            },
            Entry {
                at: two.clone(),
                term: Term {
                    gender: Some(Gender::Masculine),
                    note: Some("Not Баою.".into()),
                    ..Term::new("贾宝玉", "Цзя Баоюй")
                },
            },
            Entry {
                at: five.clone(),
                term: Term {
                    kind: Some("item & relic".into()),
                    gender: Some(Gender::Neuter),
                    ..Term::new("通灵宝玉", "Камень <Тунлин> & «яшма» \"1\" 'a'")
                },
            },
        ],
        summaries: vec![],
        skipped: vec![
            Skipped { at: At::Entry(3), reason: "no dst".into() },
            Skipped { at: uid("hlm-4"), reason: "no term in the source language zh".into() },
        ],
        lost: vec![
            lost(&one, "termType", "shortForm"),
            lost(&one, "langSet", "en: Lin Daiyu"),
            lost(&two, "definition", "Son of the Jia family, born with a jade in his mouth."),
            lost(&two, "source", "chapter 3"),
            lost(&two, "transactionType", "origination"),
            lost(&two, "transacGrp/date", "2026-11-30"),
            lost(&two, "hi", "Баою"),
            lost(&two, "term", "Баоюй"),
            lost(&five, "partOfSpeech", "properNoun"),
            lost(&five, "geographicalUsage", "ru-RU"),
        ],
        notices: vec![Notice { at: None, message: DOCTYPE_SKIPPED.into() }],
    };
    assert_eq!(parsed, expected);
}

fn basic_ja() -> Parsed {
    let (one, two, four) = (uid("c1"), uid("c2"), uid("c4"));
    Parsed {
        entries: vec![
            Entry {
                at: one.clone(),
                term: Term {
                    kind: Some("character".into()),
                    gender: Some(Gender::Feminine),
                    decl: vec!["Махиру Сиины".into(), "Махиру Сииной".into()],
                    note: Some("Heroine; called the angel at school.".into()),
                    aliases: vec![alias("真昼")],
                    ..Term::new("椎名真昼", "Махиру Сиина")
                },
            },
            Entry {
                at: two.clone(),
                term: Term {
                    kind: Some("title".into()),
                    gender: Some(Gender::Masculine),
                    ..Term::new("天使様", "Ангел")
                },
            },
            Entry { at: four.clone(), term: Term::new("赤澤樹", "Ицуки Акадзава") },
        ],
        summaries: vec![],
        skipped: vec![Skipped { at: uid("c3"), reason: "no dst".into() }],
        lost: vec![
            lost(&one, "termType", "shortForm"),
            lost(&two, "customerSubset", "school arc"),
            lost(&two, "context", "学校では天使様と呼ばれている。"),
            lost(&two, "administrativeStatus", "preferredTerm-admn-sts"),
            lost(&two, "crossReference", "椎名真昼 → c1"),
            lost(&four, "definition", "Amane's friend."),
            lost(&four, "grammaticalGender", "other"),
            lost(&four, "externalCrossReference", "profile → https://example.org/itsuki"),
        ],
        notices: vec![],
    }
}

#[test]
fn a_tbx_basic_dca_file_reads_every_field() {
    let parsed = read(Format::Tbx, &fixture("basic-dca-ja.tbx"), &languages("ja")).unwrap();
    assert_eq!(parsed, basic_ja());
}

#[test]
fn the_same_termbase_in_dct_style_reads_the_same() {
    let parsed = read(Format::Tbx, &fixture("basic-dct-ja.tbx"), &languages("ja")).unwrap();
    assert_eq!(parsed, basic_ja());
}

#[test]
fn languages_choose_the_sections_by_primary_subtag() {
    // The Chinese termbase read as a Japanese book has no source terms at all.
    let parsed = read(Format::Tbx, &fixture("martif-2008-zh.tbx"), &languages("ja")).unwrap();
    assert!(parsed.entries.is_empty());
    assert_eq!(parsed.skipped.len(), 5);
    assert!(parsed.lost.is_empty(), "a skipped concept reports nothing lost: {:?}", parsed.lost);
    // Read from English to Russian, the English section is the source and the Chinese is lost.
    let parsed = read(Format::Tbx, &fixture("martif-2008-zh.tbx"), &languages("en-GB")).unwrap();
    let sources: Vec<&str> = parsed.entries.iter().map(|entry| entry.term.src.as_str()).collect();
    assert_eq!(sources, ["Lin Daiyu", "Grand View Garden"]);
    assert!(parsed.lost.contains(&lost(uid("hlm-1"), "langSet", "zh-CN: 林黛玉; 黛玉")));
}

#[test]
fn empty_notes_and_declension_forms_say_nothing() {
    let doc = format!(
        "{V3}<text><body><conceptEntry id=\"c1\"><note> </note><note>кратко</note>\
         <langSec xml:lang=\"ja\"><termSec><term>真昼</term><note/></termSec><termSec><term>まひる</term><note></note></termSec></langSec>\
         <langSec xml:lang=\"ru\"><termSec><term>Махиру</term><note>decl: </note><note>decl:Махиры</note></termSec></langSec>\
         </conceptEntry></body></text></tbx>"
    );
    let parsed = read(Format::Tbx, doc.as_bytes(), &languages("ja")).unwrap();
    let term = Term {
        note: Some("кратко".into()),
        decl: vec!["Махиры".into()],
        aliases: vec![alias("まひる")],
        ..Term::new("真昼", "Махиру")
    };
    assert_eq!(parsed, Parsed { entries: vec![Entry { at: uid("c1"), term }], ..Parsed::default() });
}

#[test]
fn a_term_wrapped_over_lines_reads_as_one_line_with_a_notice() {
    let doc = format!(
        "{V3}<text><body><conceptEntry id=\"c1\"><descrip type=\"subjectField\">main\tcharacter</descrip>\
         <note>two\nlines</note>\
         <langSec xml:lang=\"ja\"><termSec><term>椎名\n  真昼</term></termSec></langSec>\
         <langSec xml:lang=\"ru\"><termSec><term>\n  Махиру\n  Сиина\n</term><note>decl: Махиру\n Сиины</note></termSec>\
         <termSec><term>Ма\nхиру</term></termSec></langSec>\
         </conceptEntry></body></text></tbx>"
    );
    let parsed = read(Format::Tbx, doc.as_bytes(), &languages("ja")).unwrap();
    let at = uid("c1");
    let term = Term {
        kind: Some("main character".into()),
        note: Some("two\nlines".into()),
        decl: vec!["Махиру Сиины".into()],
        ..Term::new("椎名 真昼", "Махиру Сиина")
    };
    let notice = |element: &str| Notice {
        at: Some(at.clone()),
        message: format!("a line break or tab inside <{element}> read as a space"),
    };
    assert_eq!(
        parsed,
        Parsed {
            entries: vec![Entry { at: at.clone(), term }],
            lost: vec![lost(&at, "term", "Ма\nхиру")],
            notices: vec![notice("descrip"), notice("term"), notice("term"), notice("note")],
            ..Parsed::default()
        }
    );
}

#[test]
fn a_utf16_file_reads_like_its_utf8_twin() {
    let text =
        String::from_utf8(fixture("basic-dca-ja.tbx")).unwrap().replace("encoding=\"UTF-8\"", "encoding=\"UTF-16\"");
    let mut little = vec![0xFF, 0xFE];
    let mut big = vec![0xFE, 0xFF];
    for unit in text.encode_utf16() {
        let [low, high] = unit.to_le_bytes();
        little.extend([low, high]);
        big.extend([high, low]);
    }
    assert_eq!(read(Format::Tbx, &little, &languages("ja")).unwrap(), basic_ja());
    assert_eq!(read(Format::Tbx, &big, &languages("ja")).unwrap(), basic_ja());
}

#[test]
fn a_file_in_the_legacy_encoding_its_declaration_names_reads_like_its_utf8_twin() {
    // A real tool may write TBX in a code page (Okapi's test02 is windows-1254); the
    // XML declaration names it, and every XML reader honours it.
    let text = String::from_utf8(fixture("basic-dca-ja.tbx")).unwrap();
    assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), "{text}");
    let text = text.replacen("encoding=\"UTF-8\"", "encoding='shift_jis'", 1);
    let (bytes, _, unmappable) = encoding_rs::SHIFT_JIS.encode(&text);
    assert!(!unmappable);
    let parsed = read(Format::Tbx, &bytes, &languages("ja")).unwrap();
    let notice = Notice { at: None, message: "decoded as Shift_JIS, the encoding the XML declaration names".into() };
    assert_eq!(parsed, Parsed { notices: vec![notice], ..basic_ja() });
    // A byte order mark decides over the declaration; UTF-8 and unknown labels are UTF-8.
    for declared in ["utf-8", "UTF8", "klingon"] {
        let text = text.replacen("'shift_jis'", &format!("'{declared}'"), 1);
        assert_eq!(read(Format::Tbx, text.as_bytes(), &languages("ja")).unwrap(), basic_ja(), "{declared}");
    }
    let mut with_bom = b"\xEF\xBB\xBF".to_vec();
    with_bom.extend(text.as_bytes());
    assert_eq!(read(Format::Tbx, &with_bom, &languages("ja")).unwrap(), basic_ja());
}

const V3: &str = r#"<tbx type="TBX-Basic" style="dca" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed-2">"#;

#[test]
fn bad_files_fail_naming_line_entry_and_field() {
    let line = |line| Some(At::Line(line));
    let cases: Vec<(&str, Vec<u8>, ReadError)> = vec![
        (
            "mismatched end tag",
            format!("{V3}\n<text><body>\n<conceptEntry id=\"c1\"><langSec xml:lang=\"ja\"><termSec><term>真昼</termSec>").into(),
            error(line(3), None, "invalid XML: column 63: ill-formed document: expected `</term>`, but `</termSec>` was found"),
        ),
        (
            "unclosed element",
            b"<martif>\n<text>\n<body>".to_vec(),
            error(line(3), None, "invalid XML: column 7: the document ends inside <body> (opened on line 3)"),
        ),
        (
            "malformed attribute",
            b"<martif>\n  <text><body><termEntry id=\"a\" <x></martif>".to_vec(),
            error(line(2), None, "invalid XML: column 15: in the tag starting here: attribute key must be directly followed by `=` or space"),
        ),
        (
            "duplicate attribute",
            b"<martif a=\"1\" a=\"2\"/>".to_vec(),
            error(line(1), None, "invalid XML: column 1: in the tag starting here: duplicated attribute, previous declaration at position 7"),
        ),
        (
            "control character",
            b"<martif>\n<text>\x01</text></martif>".to_vec(),
            error(line(2), None, "invalid XML: column 7: character U+0001 is not allowed in XML"),
        ),
        (
            "control character by reference",
            b"<martif><text>&#1;</text></martif>".to_vec(),
            error(line(1), None, "invalid XML: column 15: character reference &#1; is U+0001, which XML does not allow"),
        ),
        (
            "not UTF-8",
            b"<martif>\n\xe9</martif>".to_vec(),
            error(line(2), None, "not UTF-8 (invalid byte at offset 9); save the file as UTF-8"),
        ),
        (
            "broken UTF-16",
            b"\xff\xfe<\x00\x00\xd8".to_vec(),
            error(None, None, "not valid UTF-16LE (it starts with its byte order mark)"),
        ),
        ("empty file", Vec::new(), error(None, None, "invalid XML: no root element")),
        (
            "two roots",
            b"<martif/>\n<martif/>".to_vec(),
            error(line(2), None, "invalid XML: column 1: a second root element <martif>"),
        ),
        (
            "text outside the root",
            b"<martif/>\n  hello".to_vec(),
            error(line(2), None, "invalid XML: column 3: text outside the root element"),
        ),
        (
            "undeclared prefix",
            b"<martif><text><body><x:termEntry/></body></text></martif>".to_vec(),
            error(line(1), None, "invalid XML: column 21: undeclared namespace prefix `x`"),
        ),
        (
            "nested too deep",
            format!("<martif>{}", "<a>".repeat(100)).into(),
            error(line(1), None, "invalid XML: column 198: elements nested deeper than 64"),
        ),
        (
            "undefined entity",
            b"<martif><text><body>\n<termEntry><langSet xml:lang=\"zh\"><tig><term>&foo;</term></tig></langSet></termEntry></body></text></martif>".to_vec(),
            error(line(2), None, "invalid XML: column 46: undefined entity &foo; (lorebank reads no DTD: only &lt; &gt; &amp; &apos; &quot; and character references)"),
        ),
        (
            "entity expansion attack",
            b"<?xml version=\"1.0\"?>\n<!DOCTYPE martif [\n<!ENTITY a \"aaaaaaaaaa\">\n<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n]>\n<martif><text><body><termEntry><langSet xml:lang=\"zh\"><tig><term>&c;</term></tig></langSet></termEntry></body></text></martif>".to_vec(),
            error(line(7), None, "invalid XML: column 66: undefined entity &c; (lorebank reads no DTD: only &lt; &gt; &amp; &apos; &quot; and character references)"),
        ),
        (
            "undefined entity in an attribute",
            b"<martif><text><body><termEntry id=\"&x;\"/></body></text></martif>".to_vec(),
            error(line(1), None, "invalid XML: column 21: at 1..2: unrecognized entity `x`"),
        ),
        (
            "neither martif nor tbx",
            b"<html><body/></html>".to_vec(),
            error(line(1), Some("root"), "the root element <html> is neither <martif> (TBX 2008) nor <tbx> (TBX v3)"),
        ),
        (
            "unknown dialect",
            br#"<tbx type="TBX-Linguist" style="dca" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed-2"/>"#.to_vec(),
            error(line(1), Some("type"), "unknown TBX dialect \"TBX-Linguist\" (lorebank reads TBX-Basic, TBX-Min and TBX-Core)"),
        ),
        (
            "no dialect",
            br#"<tbx style="dca" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed-2"/>"#.to_vec(),
            error(line(1), Some("type"), "<tbx> has no type (the dialect, e.g. TBX-Basic)"),
        ),
        (
            "unknown style",
            br#"<tbx type="TBX-Basic" style="dcx" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed-2"/>"#.to_vec(),
            error(line(1), Some("style"), "unknown TBX style \"dcx\" (dca or dct)"),
        ),
        (
            "no style",
            br#"<tbx type="TBX-Basic" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed-2"/>"#.to_vec(),
            error(line(1), Some("style"), "<tbx> has no style (dca or dct)"),
        ),
        (
            "tbx in another namespace",
            br#"<tbx type="TBX-Basic" style="dca" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed:3.0"/>"#.to_vec(),
            error(line(1), Some("xmlns"), "a TBX v3 <tbx> is in namespace urn:iso:std:iso:30042:ed-2, not urn:iso:std:iso:30042:ed:3.0"),
        ),
        (
            "tbx in no namespace",
            br#"<tbx type="TBX-Basic" style="dca" xml:lang="ja"/>"#.to_vec(),
            error(line(1), Some("xmlns"), "a TBX v3 <tbx> is in namespace urn:iso:std:iso:30042:ed-2, not no namespace"),
        ),
        (
            "martif in a namespace",
            br#"<martif xmlns="urn:iso:std:iso:30042:ed-2"/>"#.to_vec(),
            error(line(1), Some("xmlns"), "a TBX 2008 <martif> is in no namespace, this one is in \"urn:iso:std:iso:30042:ed-2\", the namespace of TBX v3's <tbx>: remove the xmlns attribute to read it as TBX 2008"),
        ),
        (
            "martif in another namespace",
            br#"<martif xmlns="http://example.org/martif"/>"#.to_vec(),
            error(line(1), Some("xmlns"), "a TBX 2008 <martif> is in no namespace, this one is in \"http://example.org/martif\""),
        ),
        (
            "not in the encoding the declaration names",
            b"<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>\n<martif>\x81\x20</martif>".to_vec(),
            error(line(2), None, "not Shift_JIS as the XML declaration says (malformed bytes at offset 51)"),
        ),
        ("no text", b"<martif>\n<martifHeader/></martif>".to_vec(), error(line(1), Some("text"), "<martif> has no <text> element")),
        ("no body", format!("{V3}\n<text/></tbx>").into(), error(line(2), Some("body"), "<text> has no <body> element")),
        (
            "empty term in a conceptEntry",
            format!("{V3}<text><body>\n<conceptEntry id=\"c9\">\n<langSec xml:lang=\"ru\"><termSec><term> </term></termSec></langSec></conceptEntry></body></text></tbx>").into(),
            error(Some(uid("c9")), Some("term"), "empty <term> on line 3"),
        ),
        (
            "empty term in a termEntry without id",
            b"<martif><text><body>\n<termEntry>\n<langSet xml:lang=\"zh\"><tig><term/></tig></langSet></termEntry></body></text></martif>".to_vec(),
            error(Some(At::Entry(1)), Some("term"), "empty <term> on line 3"),
        ),
        (
            "termSec without a term",
            format!("{V3}<text><body>\n<conceptEntry id=\"c2\">\n<langSec xml:lang=\"ja\">\n<termSec><note>x</note></termSec></langSec></conceptEntry></body></text></tbx>").into(),
            error(Some(uid("c2")), Some("term"), "<termSec> on line 4 has no <term>"),
        ),
        (
            "langSec without a language",
            format!("{V3}<text><body>\n<conceptEntry id=\"c2\">\n<langSec><termSec><term>x</term></termSec></langSec></conceptEntry></body></text></tbx>").into(),
            error(Some(uid("c2")), Some("xml:lang"), "<langSec> on line 3 has no xml:lang"),
        ),
    ];
    for (name, bytes, expected) in cases {
        assert_eq!(read(Format::Tbx, &bytes, &languages("ja")), Err(expected), "{name}");
    }
}

#[test]
fn detect_picks_tbx_by_extension_and_by_content() {
    for name in ["martif-2008-zh.tbx", "basic-dca-ja.tbx", "basic-dct-ja.tbx"] {
        let bytes = fixture(name);
        assert_eq!(detect(name, &bytes), Ok(Format::Tbx), "{name}");
        assert_eq!(detect("glossary.XML", &bytes), Ok(Format::Tbx), "{name} as .xml");
        assert_eq!(detect("glossary", &bytes), Ok(Format::Tbx), "{name} by content");
        let mut with_bom = b"\xEF\xBB\xBF\n".to_vec();
        with_bom.extend(&bytes);
        assert_eq!(detect("glossary", &with_bom), Ok(Format::Tbx), "{name} with a byte order mark");
    }
}

/// `terms` as an export of a Japanese book at chapter 12.
fn export(terms: Vec<Term>) -> ExportInput {
    ExportInput { chapter: Some(12), ..export_input(terms) }
}

#[test]
fn an_export_is_tbx_basic_dca_in_the_documented_shape() {
    let term = Term {
        kind: Some("character".into()),
        gender: Some(Gender::Feminine),
        decl: vec!["Махиру Сиины".into()],
        note: Some("<b> & \"q\" 'a'\r\nline".into()),
        aliases: vec![alias("真昼")],
        ..Term::new("椎名真昼", "Махиру & <Сиина>")
    };
    let exported = write(Format::Tbx, &export(vec![term, Term::new("天使様", "Ангел")])).unwrap();
    assert_eq!(exported.lost, vec![]);
    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<?xml-model href="https://raw.githubusercontent.com/LTAC-Global/TBX_Core_RNG/master/TBXcoreStructV03.rng" type="application/xml" schematypens="http://relaxng.org/ns/structure/1.0"?>
<?xml-model href="https://raw.githubusercontent.com/LTAC-Global/TBX-Basic_dialect/master/DCA/TBX-Basic_DCA.sch" type="application/xml" schematypens="http://purl.oclc.org/dsdl/schematron"?>
<tbx type="TBX-Basic" style="dca" xml:lang="ja" xmlns="urn:iso:std:iso:30042:ed-2">
  <tbxHeader>
    <fileDesc>
      <sourceDesc>
        <p>lorebank export for chapter 12</p>
      </sourceDesc>
    </fileDesc>
  </tbxHeader>
  <text>
    <body>
      <conceptEntry id="T-1">
        <descrip type="subjectField">character</descrip>
        <note>&lt;b&gt; &amp; "q" 'a'&#13;
line</note>
        <langSec xml:lang="ja">
          <termSec>
            <term>椎名真昼</term>
            <termNote type="partOfSpeech">noun</termNote>
          </termSec>
          <termSec>
            <term>真昼</term>
            <termNote type="partOfSpeech">noun</termNote>
          </termSec>
        </langSec>
        <langSec xml:lang="ru">
          <termSec>
            <term>Махиру &amp; &lt;Сиина&gt;</term>
            <termNote type="partOfSpeech">noun</termNote>
            <termNote type="grammaticalGender">feminine</termNote>
            <note>decl: Махиру Сиины</note>
          </termSec>
        </langSec>
      </conceptEntry>
      <conceptEntry id="T-2">
        <langSec xml:lang="ja">
          <termSec>
            <term>天使様</term>
            <termNote type="partOfSpeech">noun</termNote>
          </termSec>
        </langSec>
        <langSec xml:lang="ru">
          <termSec>
            <term>Ангел</term>
            <termNote type="partOfSpeech">noun</termNote>
          </termSec>
        </langSec>
      </conceptEntry>
    </body>
  </text>
</tbx>
"#;
    assert_eq!(String::from_utf8(exported.bytes.clone()).unwrap(), expected);
    let back = read(Format::Tbx, &exported.bytes, &languages("ja")).unwrap();
    assert_eq!(back.entries[0].term.note.as_deref(), Some("<b> & \"q\" 'a'\r\nline"));
}

#[test]
fn an_export_reports_what_tbx_cannot_hold() {
    let term = Term {
        gender: Some(Gender::Plural),
        status: Status::Draft,
        window: Window { since: 3, until: Some(9) },
        note: Some("bell\u{7}\n".into()),
        aliases: vec![
            Alias { surface: "まひる".into(), kind: AliasKind::Reading, window: None },
            Alias {
                surface: "天使".into(), kind: AliasKind::Variant, window: Some(Window { since: 5, until: None })
            },
        ],
        ..Term::new("椎名真昼", "Махиру")
    };
    let at = At::Record(term_id(1));
    let field = |field: &str| Lost { at: at.clone(), field: field.into(), value: None };
    for format in [Format::Tbx, Format::Tbx2008] {
        let exported = write(format, &export(vec![term.clone()])).unwrap();
        assert_eq!(
            exported.lost,
            vec![
                field("window"),
                field("status"),
                lost(&at, "note", "character U+0007 dropped: XML cannot hold it"),
                lost(&at, "note", "white space around the note (a reader trims it)"),
                lost(&at, "gender", "pl (TBX-Basic's grammaticalGender has no plural)"),
                lost(&at, "aliases.kind", "まひる: kind reading"),
                lost(&at, "aliases.window", "天使: window 5.."),
            ],
            "{format}"
        );
        let text = String::from_utf8(exported.bytes).unwrap();
        assert!(text.contains("<note>bell\n</note>"), "{text}");
        assert!(!text.contains("grammaticalGender"), "{text}");
    }
}

#[test]
fn an_export_without_terms_is_refused() {
    // TBX requires at least one concept in the body.
    for (format, concept) in [(Format::Tbx, "conceptEntry"), (Format::Tbx2008, "termEntry")] {
        let error = write(format, &export(vec![])).unwrap_err();
        assert_eq!(error.format, format);
        assert_eq!(error.message, format!("a TBX body holds at least one {concept}, and there is no term to export"));
    }
}

const FIXTURES_AND_SOURCES: [(&str, &str); 3] =
    [("martif-2008-zh.tbx", "zh"), ("basic-dca-ja.tbx", "ja"), ("basic-dct-ja.tbx", "ja")];

#[test]
fn read_write_read_is_a_fixed_point_for_every_fixture_in_both_generations() {
    for format in [Format::Tbx, Format::Tbx2008] {
        for (name, source) in FIXTURES_AND_SOURCES {
            let first = read(format, &fixture(name), &languages(source)).unwrap();
            let exported = write(format, &as_export(&first, source)).unwrap();
            assert_eq!(exported.lost, vec![], "{name} as {format}");
            let second = read(format, &exported.bytes, &languages(source)).unwrap();
            assert_eq!(terms_of(&second), terms_of(&first), "{name} as {format}");
            assert_eq!((second.skipped.len(), second.lost.len(), second.notices.len()), (0, 0, 0), "{name}");
            let again = write(format, &as_export(&second, source)).unwrap();
            assert_eq!(again.bytes, exported.bytes, "{name} as {format}");
        }
    }
}

#[test]
fn a_tbx_2008_export_is_tbx_basic_2008_in_the_documented_shape() {
    let term = Term {
        kind: Some("character".into()),
        gender: Some(Gender::Feminine),
        decl: vec!["Махиру Сиины".into()],
        note: Some("<b> & \"q\" 'a'\r\nline".into()),
        aliases: vec![alias("真昼")],
        ..Term::new("椎名真昼", "Махиру & <Сиина>")
    };
    let input = export(vec![term, Term::new("天使様", "Ангел")]);
    let exported = write(Format::Tbx2008, &input).unwrap();
    assert_eq!(exported.lost, vec![]);
    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX-Basic" xml:lang="ja">
  <martifHeader>
    <fileDesc>
      <sourceDesc>
        <p>lorebank export for chapter 12</p>
      </sourceDesc>
    </fileDesc>
    <encodingDesc>
      <p type="XCSURI">TBXBasicXCSV02.xcs</p>
    </encodingDesc>
  </martifHeader>
  <text>
    <body>
      <termEntry id="T-1">
        <descrip type="subjectField">character</descrip>
        <note>&lt;b&gt; &amp; "q" 'a'&#13;
line</note>
        <langSet xml:lang="ja">
          <tig>
            <term>椎名真昼</term>
            <termNote type="partOfSpeech">noun</termNote>
          </tig>
          <tig>
            <term>真昼</term>
            <termNote type="partOfSpeech">noun</termNote>
          </tig>
        </langSet>
        <langSet xml:lang="ru">
          <tig>
            <term>Махиру &amp; &lt;Сиина&gt;</term>
            <termNote type="partOfSpeech">noun</termNote>
            <termNote type="grammaticalGender">feminine</termNote>
            <note>decl: Махиру Сиины</note>
          </tig>
        </langSet>
      </termEntry>
      <termEntry id="T-2">
        <langSet xml:lang="ja">
          <tig>
            <term>天使様</term>
            <termNote type="partOfSpeech">noun</termNote>
          </tig>
        </langSet>
        <langSet xml:lang="ru">
          <tig>
            <term>Ангел</term>
            <termNote type="partOfSpeech">noun</termNote>
          </tig>
        </langSet>
      </termEntry>
    </body>
  </text>
</martif>
"#;
    assert_eq!(String::from_utf8(exported.bytes.clone()).unwrap(), expected);
    // The same concepts as the TBX v3 export: both read back to the same entries.
    let v3 = write(Format::Tbx, &input).unwrap();
    let back = read(Format::Tbx2008, &exported.bytes, &languages("ja")).unwrap();
    assert_eq!(back.entries[0].term.note.as_deref(), Some("<b> & \"q\" 'a'\r\nline"));
    assert_eq!(back, read(Format::Tbx, &v3.bytes, &languages("ja")).unwrap());
}

/// Runs check_tbx.py (RELAX NG with lxml, then the TBX-Basic DCA rules) on `files`;
/// fails, never skips, when python3 or lxml is missing.
fn check_tbx(files: &[PathBuf]) -> std::process::Output {
    run_check("check_tbx.py", files)
}

/// Runs check_tbx2008.py (the TBX 2008 and TBX-Basic 2008 DTDs with lxml, then every
/// data category against the TBX-Basic XCS) on `files`.
fn check_tbx2008(files: &[PathBuf]) -> std::process::Output {
    run_check("check_tbx2008.py", files)
}

/// Runs the checker `script` of this folder on `files`; fails, never skips, when
/// python3 or lxml is missing.
fn run_check(script: &str, files: &[PathBuf]) -> std::process::Output {
    let probe = Command::new("python3").args(["-c", "import lxml.etree"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "checking TBX exports needs the Python package lxml: run scripts/setup.sh ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => panic!("python3 is needed to check TBX exports ({error}): run scripts/setup.sh"),
    }
    Command::new("python3").arg(Path::new(FIXTURES).join(script)).args(files).output().unwrap()
}

#[test]
fn exports_and_dca_fixtures_pass_relax_ng_and_the_dca_rules_in_lxml() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tbx-exports");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = vec![Path::new(FIXTURES).join("basic-dca-ja.tbx")];
    for (name, source) in [("martif-2008-zh.tbx", "zh"), ("basic-dca-ja.tbx", "ja"), ("basic-dct-ja.tbx", "ja")] {
        let parsed = read(Format::Tbx, &fixture(name), &languages(source)).unwrap();
        let path = dir.join(format!("export-of-{name}"));
        std::fs::write(&path, write(Format::Tbx, &as_export(&parsed, source)).unwrap().bytes).unwrap();
        files.push(path);
    }
    let special = Term {
        kind: Some("a<b>&c\"d'e".into()),
        note: Some("]]> & <!-- -->".into()),
        decl: vec!["<&>".into()],
        gender: Some(Gender::Neuter),
        ..Term::new("\"引用\" & <タグ>", "'кавычки' & <теги>")
    };
    let path = dir.join("export-special.tbx");
    std::fs::write(&path, write(Format::Tbx, &export(vec![special])).unwrap().bytes).unwrap();
    files.push(path);
    let output = check_tbx(&files);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("checked 5 files, 0 problems"), "{stdout}");
}

#[test]
fn the_lxml_check_refuses_what_is_not_tbx_basic_dca() {
    // The DCT fixture is valid TBX-Basic, but not in DCA style.
    let mut files = vec![Path::new(FIXTURES).join("basic-dct-ja.tbx")];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tbx-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let export =
        String::from_utf8(write(Format::Tbx, &export(vec![Term::new("真昼", "Махиру")])).unwrap().bytes).unwrap();
    for (name, bad) in [
        (
            "termnote-in-langsec.tbx",
            export.replace(
                "<langSec xml:lang=\"ru\">",
                "<langSec xml:lang=\"ru\"><termNote type=\"partOfSpeech\">noun</termNote>",
            ),
        ),
        ("pos-off-picklist.tbx", export.replace(">noun<", ">plural<")),
        (
            "subject-in-termsec.tbx",
            export.replace(
                "<termNote type=\"partOfSpeech\">noun</termNote>",
                "<descrip type=\"subjectField\">x</descrip>",
            ),
        ),
        ("no-body.tbx", export.replace("<conceptEntry", "<x").replace("</conceptEntry>", "</x>")),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bad).unwrap();
        files.push(path);
    }
    for file in files {
        let output = check_tbx(std::slice::from_ref(&file));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!output.status.success(), "{} passed:\n{stdout}", file.display());
        assert!(!stdout.contains(" 0 problems"), "{stdout}");
    }
}

/// Terms holding every character TBX escapes, in every field the writers carry.
fn special() -> Term {
    Term {
        kind: Some("a<b>&c\"d'e".into()),
        note: Some("]]> & <!-- -->".into()),
        decl: vec!["<&>".into()],
        gender: Some(Gender::Neuter),
        aliases: vec![alias("別名 & <それ>")],
        ..Term::new("\"引用\" & <タグ>", "'кавычки' & <теги>")
    }
}

/// The `tbx-2008` exports of every fixture and of [`special`], written to files.
fn tbx_2008_exports(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut files = Vec::new();
    for (name, source) in FIXTURES_AND_SOURCES {
        let parsed = read(Format::Tbx2008, &fixture(name), &languages(source)).unwrap();
        let path = dir.join(format!("export-of-{name}"));
        std::fs::write(&path, write(Format::Tbx2008, &as_export(&parsed, source)).unwrap().bytes).unwrap();
        files.push(path);
    }
    let path = dir.join("export-special.tbx");
    std::fs::write(&path, write(Format::Tbx2008, &export(vec![special()])).unwrap().bytes).unwrap();
    files.push(path);
    files
}

#[test]
fn tbx_2008_exports_pass_both_dtds_and_the_tbx_basic_xcs_in_lxml() {
    let files = tbx_2008_exports(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("tbx-2008-exports"));
    let output = check_tbx2008(&files);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("checked 4 files, 0 problems"), "{stdout}");
}

#[test]
fn the_tbx_2008_check_refuses_what_is_not_tbx_basic_2008() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tbx-2008-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let export =
        String::from_utf8(write(Format::Tbx2008, &export(vec![Term::new("真昼", "Махиру")])).unwrap().bytes).unwrap();
    // The v3 export and the v3 DCA fixture are not TBX 2008 at all.
    let mut files = vec![Path::new(FIXTURES).join("basic-dca-ja.tbx")];
    for (name, bad) in [
        ("ntig.tbx", export.replace("<tig>", "<ntig><termGrp>").replace("</tig>", "</termGrp></ntig>")),
        (
            "termnote-in-langset.tbx",
            export.replace(
                "<langSet xml:lang=\"ru\">",
                "<langSet xml:lang=\"ru\"><termNote type=\"partOfSpeech\">noun</termNote>",
            ),
        ),
        ("pos-off-picklist.tbx", export.replace(">noun<", ">plural<")),
        (
            "subject-in-tig.tbx",
            export.replace(
                "<termNote type=\"partOfSpeech\">noun</termNote>",
                "<descrip type=\"subjectField\">x</descrip>",
            ),
        ),
        ("not-basic.tbx", export.replace("type=\"TBX-Basic\"", "type=\"TBX\"")),
        ("no-xcs.tbx", export.replace("TBXBasicXCSV02.xcs", "TBXXCSV02.xcs")),
        (
            "note-after-langset.tbx",
            export.replace("</langSet>\n      </termEntry>", "</langSet><note>x</note></termEntry>"),
        ),
        (
            "v3.tbx",
            String::from_utf8(write(Format::Tbx, &export_input(vec![Term::new("a", "b")])).unwrap().bytes).unwrap(),
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bad).unwrap();
        files.push(path);
    }
    for file in files {
        let output = check_tbx2008(std::slice::from_ref(&file));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!output.status.success(), "{} passed:\n{stdout}", file.display());
        assert!(!stdout.contains(" 0 problems"), "{stdout}");
    }
}

/// What translate-toolkit's `tbxfile` should read from an export of `terms`: one unit
/// per term, named by the record id, its source the term's `src` and its target `dst`.
fn exported_pairs(input: &ExportInput) -> Vec<ToolkitUnit> {
    input
        .terms
        .iter()
        .map(|export| ToolkitUnit {
            id: Some(export.id.to_string()),
            source: Some(export.term.src.clone()),
            target: Some(export.term.dst.clone()),
            notes: None,
        })
        .collect()
}

/// translate-toolkit's units without their notes (which hold what lorebank wrote as
/// notes and part of speech, checked apart).
fn without_notes(units: Vec<ToolkitUnit>) -> Vec<ToolkitUnit> {
    units.into_iter().map(|unit| ToolkitUnit { notes: None, ..unit }).collect()
}

#[test]
fn translate_toolkit_reads_a_tbx_2008_export_as_the_exported_pairs() {
    let mut inputs = vec![export(vec![special(), Term::new("天使様", "Ангел")])];
    for (name, source) in FIXTURES_AND_SOURCES {
        inputs.push(as_export(&read(Format::Tbx2008, &fixture(name), &languages(source)).unwrap(), source));
    }
    for input in inputs {
        let bytes = write(Format::Tbx2008, &input).unwrap().bytes;
        let expected = exported_pairs(&input);
        // Without languages, translate-toolkit takes the first langSet as the source and
        // the second as the target; with them, it picks the sections by xml:lang.
        assert_eq!(without_notes(translate_toolkit(ToolkitStore::Tbx(None), &bytes)), expected);
        let languages = Some((input.source_lang.as_str(), input.target_lang.as_str()));
        assert_eq!(without_notes(translate_toolkit(ToolkitStore::Tbx(languages), &bytes)), expected);
    }
    // The notes: the concept's note and the rendering's declension forms.
    let term = Term {
        note: Some("heroine".into()), decl: vec!["Махиру Сиины".into()], ..Term::new("真昼", "Махиру")
    };
    let units = translate_toolkit(ToolkitStore::Tbx(None), &write(Format::Tbx2008, &export(vec![term])).unwrap().bytes);
    assert_eq!(units[0].notes.as_deref(), Some("heroine\ndecl: Махиру Сиины"));
}

#[test]
fn translate_toolkit_refuses_the_tbx_v3_export_which_is_why_tbx_2008_exists() {
    let bytes = write(Format::Tbx, &export(vec![Term::new("真昼", "Махиру")])).unwrap().bytes;
    let error = try_translate_toolkit(ToolkitStore::Tbx(None), &bytes).unwrap_err();
    assert_eq!(error, "AssertionError");
}

/// Whether an error says where: every error but the two about the file as a whole.
fn placed(error: &ReadError) -> bool {
    error.at.is_some()
        || error.message == "invalid XML: no root element"
        || error.message.starts_with("not valid UTF-16")
}

/// Text of `chars`, trimmed, never empty.
fn text(pattern: &'static str) -> impl Strategy<Value = String> {
    pattern.prop_map(|text| text.trim().to_owned()).prop_filter("empty", |text| !text.is_empty())
}

fn term() -> impl Strategy<Value = Term> {
    let cjk = "[一-龥ぁ-ゖァ-ヺ][一-龥ぁ-ゖ<&>\"' ]{0,5}";
    (
        text(cjk),
        prop::collection::vec(text(cjk), 0..3),
        text("[А-Яа-яЁё][а-яё<&>\"' -]{0,10}"),
        prop::option::of(text("[a-z<&>\"'][a-z <&>\"']{0,8}")),
        prop::option::of(prop_oneof![Just(Gender::Masculine), Just(Gender::Feminine), Just(Gender::Neuter)]),
        prop::collection::vec(text("[а-я][а-я <&>\"']{0,8}"), 0..3),
        prop::option::of(text("[一-龥а-яa-z<&>\"'\r\n ]{1,20}")),
    )
        .prop_map(|(src, aliases, dst, kind, gender, decl, note)| Term {
            kind,
            gender,
            decl,
            note,
            aliases: aliases.iter().map(|surface| alias(surface)).collect(),
            ..Term::new(src, dst)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn write_then_read_gives_back_every_carried_field(
        terms in prop::collection::vec(term(), 1..6),
        format in prop_oneof![Just(Format::Tbx), Just(Format::Tbx2008)],
    ) {
        let input = export(terms.clone());
        let exported = write(format, &input).unwrap();
        prop_assert_eq!(&exported.lost, &vec![]);
        let parsed = read(format, &exported.bytes, &languages("ja")).unwrap();
        prop_assert_eq!(parsed.skipped, vec![]);
        prop_assert_eq!(parsed.lost, vec![]);
        prop_assert_eq!(parsed.notices, vec![]);
        let at: Vec<At> = parsed.entries.iter().map(|entry| entry.at.clone()).collect();
        let ids: Vec<At> = input.terms.iter().map(|term| At::Uid(term.id.to_string())).collect();
        prop_assert_eq!(at, ids);
        prop_assert_eq!(parsed.entries.into_iter().map(|entry| entry.term).collect::<Vec<_>>(), terms);
    }

    #[test]
    fn any_bytes_read_or_fail_with_a_place(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        if let Err(error) = read(Format::Tbx, &bytes, &languages("ja")) {
            prop_assert!(placed(&error), "{:?}", error);
        }
    }

    #[test]
    fn a_damaged_export_reads_or_fails_with_a_place(
        cut in 0usize..2000,
        byte in any::<u8>(),
        format in prop_oneof![Just(Format::Tbx), Just(Format::Tbx2008)],
    ) {
        let mut bytes = write(format, &export(vec![Term::new("真昼", "Махиру")])).unwrap().bytes;
        let at = cut % bytes.len();
        bytes[at] = byte;
        if let Err(error) = read(Format::Tbx, &bytes, &languages("ja")) {
            prop_assert!(placed(&error), "{:?}", error);
        }
    }
}
