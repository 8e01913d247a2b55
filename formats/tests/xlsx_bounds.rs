//! The bounds of a workbook (`ledger_model::limits::input`, docs/operations.md
//! "Limits"): every one is read at its limit and refused one past it, naming the
//! limit, before the XLSX reader inflates anything; a cell reference past the last
//! column or row of a sheet is refused naming the sheet and the cell, the same in a
//! debug and a release build.

use std::io::Write;

use formats::{detect, read, Format, ReadError};
use ledger_model::limits::input::{
    GLOSSARY_FILE_BYTES_MAX, XLSX_CELLS_MAX, XLSX_CELL_BYTES_MAX, XLSX_INFLATED_BYTES_MAX, XLSX_PARTS_MAX,
    XLSX_ROWS_MAX, XLSX_SHARED_STRINGS_MAX,
};
use test_support::interchange::*;

const SHEET: &str = "术语表";

/// A workbook of one sheet named [`SHEET`] whose `<sheetData>` is `rows`, with the
/// shared strings `shared` (the `<sst>` element's content and attributes) when
/// given, and `extra` parts besides.
fn workbook(rows: &str, shared: Option<(&str, &str)>, extra: &[(String, Vec<u8>)]) -> Vec<u8> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let relationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let mut parts: Vec<(String, Vec<u8>)> = vec![
        (
            "[Content_Types].xml".into(),
            br#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_vec(),
        ),
        (
            "_rels/.rels".into(),
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{relationships}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#).into_bytes(),
        ),
        (
            "xl/workbook.xml".into(),
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" xmlns:r="{relationships}"><sheets><sheet name="{SHEET}" sheetId="1" r:id="rId1"/></sheets></workbook>"#).into_bytes(),
        ),
        (
            "xl/_rels/workbook.xml.rels".into(),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{relationships}/worksheet" Target="worksheets/sheet1.xml"/>{}</Relationships>"#,
                if shared.is_some() { format!(r#"<Relationship Id="rId2" Type="{relationships}/sharedStrings" Target="sharedStrings.xml"/>"#) } else { String::new() }
            )
            .into_bytes(),
        ),
        (
            "xl/worksheets/sheet1.xml".into(),
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main}"><sheetData>{rows}</sheetData></worksheet>"#).into_bytes(),
        ),
    ];
    if let Some((attributes, strings)) = shared {
        parts.push((
            "xl/sharedStrings.xml".into(),
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{main}" {attributes}>{strings}</sst>"#)
                .into_bytes(),
        ));
    }
    parts.extend(extra.iter().cloned());
    zipped(&parts)
}

fn zipped(parts: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(false);
    for (name, content) in parts {
        out.start_file(name.as_str(), options).expect("start part");
        out.write_all(content).expect("write part");
    }
    out.finish().expect("zip").into_inner()
}

/// A row of two inline-string cells: a Chinese term and its Russian rendering.
fn term_row(row: usize) -> String {
    format!(
        r#"<row r="{row}"><c r="A{row}" t="inlineStr"><is><t>林动{row}</t></is></c><c r="B{row}" t="inlineStr"><is><t>Линь Дун</t></is></c></row>"#
    )
}

fn xlsx(bytes: &[u8]) -> Result<formats::Parsed, ReadError> {
    read(Format::LinguaGachaXlsx, bytes, &languages("ja"))
}

/// `bytes` is read without an over-limit error (another error is not the bound's).
fn within(what: &str, bytes: &[u8]) {
    if let Err(error) = xlsx(bytes) {
        assert_eq!(error.limit, None, "{what}: refused at the limit: {error}");
    }
}

/// `bytes` is refused, over `limit`, naming it; detection refuses it the same way.
fn over(what: &str, bytes: &[u8], limit: &str) -> String {
    let error = xlsx(bytes).expect_err(what);
    assert_eq!(error.limit, Some(limit), "{what}: {error}");
    assert!(error.to_string().contains(limit), "{what}: the error names {limit}: {error}");
    let detected = detect("glossary.xlsx", bytes).expect_err(what);
    assert_eq!(detected.limit, Some(limit), "{what}: detect: {detected}");
    error.to_string()
}

#[test]
fn a_workbook_of_terms_reads() {
    let rows: String = (1..=3).map(term_row).collect();
    let parsed = xlsx(&workbook(&rows, None, &[])).expect("a small workbook");
    assert_eq!(parsed.entries.len(), 3);
    assert_eq!(parsed.entries[2].term.src, "林动3");
}

/// Cell and shared-string texts of `len` bytes: Chinese (three bytes a character)
/// padded to the length.
fn text_of(len: usize) -> String {
    let mut text = "长明".repeat(len / 6);
    text.push_str(&"x".repeat(len - text.len()));
    assert_eq!(text.len(), len);
    text
}

#[test]
fn a_cell_text_is_read_at_its_limit_and_refused_one_byte_past_it() {
    for (len, refused) in [(XLSX_CELL_BYTES_MAX, false), (XLSX_CELL_BYTES_MAX + 1, true)] {
        let text = text_of(len);
        let inline = format!(
            r#"{}<row r="2"><c r="A2" t="inlineStr"><is><t>长明</t></is></c><c r="B2" t="inlineStr"><is><t>Чан Мин</t></is></c><c r="C2" t="inlineStr"><is><t>{text}</t></is></c></row>"#,
            term_row(1)
        );
        let shared = format!(
            r#"{}<row r="2"><c r="A2" t="inlineStr"><is><t>长明</t></is></c><c r="B2" t="inlineStr"><is><t>Чан Мин</t></is></c><c r="C2" t="s"><v>1</v></c></row>"#,
            term_row(1)
        );
        let shared_strings = format!("<si><t>剑</t></si><si><t>{text}</t></si>");
        let books = [
            ("inline", workbook(&inline, None, &[])),
            ("shared", workbook(&shared, Some((r#"count="2" uniqueCount="2""#, &shared_strings)), &[])),
            // Rich text: the runs of one string count together.
            (
                "runs",
                workbook(
                    &shared,
                    Some((
                        "",
                        &format!("<si><t>剑</t></si><si><r><t>{}</t></r><r><t>{}</t></r></si>", &text[..6], &text[6..]),
                    )),
                    &[],
                ),
            ),
        ];
        for (what, bytes) in books {
            if refused {
                let message = over(what, &bytes, "XLSX_CELL_BYTES_MAX");
                let place = if what == "inline" { "sheet `术语表`: cell C2" } else { "shared string 2" };
                assert!(message.contains(place), "{what}: {message}");
            } else {
                let parsed = xlsx(&bytes).unwrap_or_else(|error| panic!("{what}: {error}"));
                assert_eq!(parsed.entries[1].term.note.as_deref().map(str::len), Some(len), "{what}");
            }
        }
    }
}

#[test]
fn one_huge_cell_is_refused_before_it_is_inflated() {
    // 64 MB of one cell in a workbook of a few tens of kilobytes.
    let rows = format!(r#"<row r="1"><c r="A1" t="inlineStr"><is><t>{}</t></is></c></row>"#, "林".repeat(22 << 20));
    let bytes = workbook(&rows, None, &[]);
    assert!(bytes.len() < 1 << 20, "{}", bytes.len());
    let message = over("huge cell", &bytes, "XLSX_INFLATED_BYTES_MAX");
    assert!(message.contains("declare"), "{message}");
    // Its declared sizes lie: the zip reader inflates a part no further than its
    // declared size, so the workbook is damaged, not large.
    let lying = understated(&bytes, "xl/worksheets/sheet1.xml");
    let error = xlsx(&lying).expect_err("a lying workbook");
    assert_eq!(error.limit, None, "{error}");
    assert!(error.message.contains("larger than its declared uncompressed size"), "{error}");
}

/// `bytes` with the uncompressed size that the central directory and the local
/// header declare for the part `name` set to 100 bytes.
fn understated(bytes: &[u8], name: &str) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut at = 0;
    while let Some(found) = find(&out[at..], name.as_bytes()) {
        let name_at = at + found;
        // Local header: the name starts 30 bytes in, its uncompressed size at 22.
        if name_at >= 30 && out[name_at - 30..name_at - 26] == *b"PK\x03\x04" {
            out[name_at - 8..name_at - 4].copy_from_slice(&100u32.to_le_bytes());
        }
        // Central directory header: the name starts 46 bytes in, the size at 24.
        if name_at >= 46 && out[name_at - 46..name_at - 42] == *b"PK\x01\x02" {
            out[name_at - 22..name_at - 18].copy_from_slice(&100u32.to_le_bytes());
        }
        at = name_at + 1;
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[test]
fn rows_are_read_at_their_limit_and_refused_one_past_it() {
    for (rows, refused) in [(XLSX_ROWS_MAX, false), (XLSX_ROWS_MAX + 1, true)] {
        // Empty rows: every row counts, whatever it holds.
        let data: String =
            std::iter::once(term_row(1)).chain((2..=rows).map(|row| format!(r#"<row r="{row}"/>"#))).collect();
        let bytes = workbook(&data, None, &[]);
        if refused {
            over("rows", &bytes, "XLSX_ROWS_MAX");
        } else {
            assert_eq!(xlsx(&bytes).expect("rows at the limit").entries.len(), 1);
        }
    }
}

#[test]
fn cells_are_read_at_their_limit_and_refused_one_past_it() {
    for (cells, refused) in [(XLSX_CELLS_MAX, false), (XLSX_CELLS_MAX + 1, true)] {
        // Two cells of the first row, then empty cells, a thousand to a row.
        let mut data = term_row(1);
        let mut left = cells - 2;
        let mut row = 2;
        while left > 0 {
            let here = left.min(1000);
            data.push_str(&format!("<row r=\"{row}\">{}</row>", "<c/>".repeat(here)));
            left -= here;
            row += 1;
        }
        let bytes = workbook(&data, None, &[]);
        if refused {
            over("cells", &bytes, "XLSX_CELLS_MAX");
        } else {
            assert_eq!(xlsx(&bytes).expect("cells at the limit").entries.len(), 1);
        }
    }
}

#[test]
fn shared_strings_are_read_at_their_limit_and_refused_one_past_it() {
    for (strings, refused) in [(XLSX_SHARED_STRINGS_MAX, false), (XLSX_SHARED_STRINGS_MAX + 1, true)] {
        let table = "<si><t>剑</t></si>".repeat(strings);
        let bytes = workbook(&term_row(1), Some(("", &table)), &[]);
        if refused {
            let message = over("shared strings", &bytes, "XLSX_SHARED_STRINGS_MAX");
            assert!(message.contains("shared strings"), "{message}");
        } else {
            within("shared strings", &bytes);
        }
        // A table that declares more strings than the limit is refused before the
        // reader reserves room for them.
        let declared =
            workbook(&term_row(1), Some((&format!(r#"uniqueCount="{strings}""#), "<si><t>剑</t></si>")), &[]);
        if refused {
            let message = over("declared strings", &declared, "XLSX_SHARED_STRINGS_MAX");
            assert!(message.contains(&format!("declares {strings} strings")), "{message}");
        } else {
            within("declared strings", &declared);
        }
    }
}

#[test]
fn parts_are_inflated_to_their_limit_and_refused_one_byte_past_it() {
    let base = workbook(&term_row(1), None, &[]);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&base[..])).expect("zip");
    let used: u64 = (0..archive.len()).map(|index| archive.by_index(index).expect("part").size()).sum();
    for (total, refused) in [(XLSX_INFLATED_BYTES_MAX, false), (XLSX_INFLATED_BYTES_MAX + 1, true)] {
        let pad = vec![0u8; (total - used) as usize];
        let bytes = workbook(&term_row(1), None, &[("xl/media/pad.bin".to_owned(), pad)]);
        if refused {
            over("inflated", &bytes, "XLSX_INFLATED_BYTES_MAX");
        } else {
            assert_eq!(xlsx(&bytes).expect("inflated to the limit").entries.len(), 1);
        }
    }
}

#[test]
fn members_are_read_at_their_limit_and_refused_one_past_it() {
    let mut parts = Vec::new();
    for (count, refused) in [(XLSX_PARTS_MAX, false), (XLSX_PARTS_MAX + 1, true)] {
        // The workbook's own five parts, and empty ones besides.
        while parts.len() < count - 5 {
            parts.push((format!("xl/media/empty{}.bin", parts.len()), Vec::new()));
        }
        let bytes = workbook(&term_row(1), None, &parts);
        if refused {
            over("parts", &bytes, "XLSX_PARTS_MAX");
        } else {
            assert_eq!(xlsx(&bytes).expect("parts at the limit").entries.len(), 1);
        }
    }
}

#[test]
fn cell_references_past_the_sheet_are_refused_naming_the_sheet_and_the_cell() {
    // (what to put in the sheet, the reference named in the error, or None when it
    // reads)
    let cases: &[(&str, Option<&str>)] = &[
        (r#"<row r="2"><c r="XFD1048576" t="inlineStr"><is><t>远</t></is></c></row>"#, None),
        (r#"<row r="2"><c r="xfd2" t="inlineStr"><is><t>远</t></is></c></row>"#, None),
        (
            r#"<row r="2"><c r="ZZZZZZZZZZZZ99999999999999" t="inlineStr"><is><t>远</t></is></c></row>"#,
            Some("cell `ZZZZZZZZZZZZ99999999999999`"),
        ),
        (r#"<row r="2"><c r="XFE2" t="inlineStr"><is><t>远</t></is></c></row>"#, Some("cell `XFE2`")),
        (r#"<row r="2"><c r="xfe2" t="inlineStr"><is><t>远</t></is></c></row>"#, Some("cell `xfe2`")),
        (r#"<row r="2"><c r="A1048577" t="inlineStr"><is><t>远</t></is></c></row>"#, Some("cell `A1048577`")),
        (r#"<row r="2"><c r="A99999999999" t="inlineStr"><is><t>远</t></is></c></row>"#, Some("cell `A99999999999`")),
        (r#"<row r="1048577"/>"#, Some("row `1048577`")),
        (r#"<row r="99999999999999"/>"#, Some("row `99999999999999`")),
    ];
    for (cells, refused) in cases {
        let bytes = workbook(&format!("{}{cells}", term_row(1)), None, &[]);
        match refused {
            None => {
                xlsx(&bytes).unwrap_or_else(|error| panic!("{cells}: {error}"));
            }
            Some(reference) => {
                let error = xlsx(&bytes).expect_err(cells);
                assert_eq!(error.limit, None, "{error}");
                assert!(
                    error.to_string().contains(&format!("sheet `{SHEET}`: {reference} is out of range")),
                    "{cells}: {error}"
                );
            }
        }
    }
    // A dimension past the sheet.
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let bytes = workbook(&term_row(1), None, &[]);
    let dimension = zipped(
        &parts_of(&bytes)
            .into_iter()
            .map(|(name, content)| {
                if name == "xl/worksheets/sheet1.xml" {
                    let sheet = format!(r#"<worksheet xmlns="{main}"><dimension ref="A1:ZZZZZZZZ1"/><sheetData>{}</sheetData></worksheet>"#, term_row(1));
                    (name, sheet.into_bytes())
                } else {
                    (name, content)
                }
            })
            .collect::<Vec<_>>(),
    );
    let error = xlsx(&dimension).expect_err("a dimension past the sheet");
    assert!(error.to_string().contains("sheet `术语表`: dimension `A1:ZZZZZZZZ1` is out of range"), "{error}");
}

fn parts_of(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    (0..archive.len())
        .map(|index| {
            let mut part = archive.by_index(index).expect("part");
            let mut content = Vec::new();
            part.read_to_end(&mut content).expect("inflate");
            (part.name().expect("name").into_owned(), content)
        })
        .collect()
}

#[test]
fn a_glossary_file_is_read_at_its_limit_and_refused_one_byte_past_it() {
    // A GalTransl text file: one term, padded with spaces to the length.
    for (len, refused) in [(GLOSSARY_FILE_BYTES_MAX, false), (GLOSSARY_FILE_BYTES_MAX + 1, true)] {
        let mut bytes = "林动\tЛинь Дун\n".as_bytes().to_vec();
        bytes.resize(len, b' ');
        let result = read(Format::GalTransl, &bytes, &languages("ja"));
        let detected = detect("glossary.txt", &bytes);
        if refused {
            for error in [result.expect_err("read"), detected.expect_err("detect")] {
                assert_eq!(error.limit, Some("GLOSSARY_FILE_BYTES_MAX"), "{error}");
                assert!(error.to_string().contains(&format!("the file has {len} bytes")), "{error}");
            }
        } else {
            assert_eq!(result.expect("at the limit").entries.len(), 1);
            detected.expect("at the limit");
        }
    }
}
