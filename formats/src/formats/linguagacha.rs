//! LinguaGacha glossary (术语表): a JSON list of `{src, dst, info, regex,
//! case_sensitive}` (or a `{src: dst}` object), or an XLSX workbook whose first sheet
//! has those five columns, A to E.
//!
//! Read as LinguaGacha's `quality-rule-file-io.ts` reads it, with these differences:
//! malformed JSON is an error naming its line and column (LinguaGacha repairs it),
//! an entry without `src` or of the wrong type is an error (LinguaGacha drops or
//! stringifies it), and an RPG Maker `Actors.json` is refused. `regex` (which
//! LinguaGacha ignores for glossaries) and `case_sensitive` (lorebank folds case)
//! are reported lost when true.

use calamine::Data;
use serde::Serialize;

use crate::formats::linguagacha_json::{object_dst, parse, pretty, shown, Document, Item, Json};
use crate::formats::text::non_empty;
use crate::formats::xlsx::{self, Book, Cell, Row, Sheet};
use crate::{
    At, Entry, ExportInput, Exported, Fields, Format, Lost, Notice, Parsed, ReadError, Skipped, Term, WriteError,
};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

const ACTIVATION: &str = "LinguaGacha injects every entry whose src occurs in the text after NFKC \
    normalization (literal, overlapping matches: a short key inside a longer one fires too; case-sensitive \
    where the entry says so; in glossary order); lorebank matches keys leftmost-longest on folded text, \
    inside their windows";

/// The columns of the XLSX sheet, in order, as LinguaGacha writes its header row.
const COLUMNS: [&str; 5] = ["src", "dst", "info", "regex", "case_sensitive"];

/// One row as read, before it becomes an entry.
struct Rule {
    at: At,
    src: String,
    dst: String,
    info: String,
    regex: bool,
    case_sensitive: bool,
    /// Foreign fields of the row lorebank does not hold.
    lost: Vec<Lost>,
    /// A spreadsheet row with content only past the format's columns: no entry.
    blank: bool,
}

pub(super) fn read_json(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let shape = "a LinguaGacha glossary is a JSON list of {src, dst, info, regex, case_sensitive} objects \
        or a {src: dst} object";
    let parsed = Parsed::default();
    let mut rules = Vec::new();
    match parse(bytes, shape)? {
        Document::List(items) => {
            for (index, item) in items.iter().enumerate() {
                let at = At::Entry(index as u64 + 1);
                if let Json::Null = item {
                    return Err(ReadError::at(
                        at,
                        "entry",
                        "must be an object, not null (an RPG Maker Actors.json starts so: lorebank does not \
                         import Actors.json)",
                    ));
                }
                let item = Item::new(at, item)?;
                if item.get("src").is_none() && matches!(item.get("id"), Some(Json::Number(_))) {
                    return Err(ReadError::at(
                        item.at,
                        "src",
                        "missing; an RPG Maker actor (id, name, nickname): lorebank does not import Actors.json",
                    ));
                }
                let lost = item
                    .pairs
                    .iter()
                    .filter(|(key, _)| !COLUMNS.contains(&key.as_str()))
                    .map(|(key, value)| Lost { at: item.at.clone(), field: key.clone(), value: Some(shown(value)) })
                    .collect();
                rules.push(Rule {
                    src: item.text("src")?.unwrap_or("").to_owned(),
                    dst: item.text("dst")?.unwrap_or("").to_owned(),
                    info: item.text("info")?.unwrap_or("").to_owned(),
                    regex: item.flag("regex")?,
                    case_sensitive: item.flag("case_sensitive")?,
                    lost,
                    blank: false,
                    at: item.at,
                });
            }
        }
        Document::Object(pairs) => {
            for (index, (src, dst)) in pairs.iter().enumerate() {
                let at = At::Entry(index as u64 + 1);
                let dst = object_dst(&at, dst)?;
                rules.push(Rule {
                    at,
                    src: src.trim().to_owned(),
                    dst,
                    info: String::new(),
                    regex: false,
                    case_sensitive: false,
                    lost: Vec::new(),
                    blank: false,
                });
            }
        }
    }
    finish(rules, parsed)
}

pub(super) fn read_xlsx(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut book = Book::open(bytes)?;
    let parsed = Parsed::default();
    let mut rules = Vec::new();
    let Some(sheet) = book.sheet(Sheet::First)? else {
        return Ok(parsed);
    };
    for xlsx::SheetRow { number: row, cells, extra } in sheet.rows(COLUMNS.len() as u32) {
        let lost = xlsx::lost_columns(row, extra).collect();
        let src = xlsx::text(&cells[0], row, "src")?;
        let dst = xlsx::text(&cells[1], row, "dst")?;
        if src == "src" && dst == "dst" {
            continue;
        }
        rules.push(Rule {
            at: At::Row(row),
            info: xlsx::text(&cells[2], row, "info")?,
            regex: flag(&cells[3]),
            case_sensitive: flag(&cells[4]),
            lost,
            blank: cells.iter().all(xlsx::is_blank),
            src,
            dst,
        });
    }
    finish(rules, parsed)
}

/// A boolean column as LinguaGacha reads it: true iff the cell's text, trimmed and
/// lower-cased, is `true` (a boolean cell's text is `TRUE` or `FALSE`).
fn flag(data: &Data) -> bool {
    match data {
        Data::Bool(value) => *value,
        Data::String(text) => text.trim().to_lowercase() == "true",
        _ => false,
    }
}

/// The entries of `rules`: an empty src is an error, an empty dst skipped, a true
/// `regex` or `case_sensitive` reported lost.
fn finish(rules: Vec<Rule>, mut parsed: Parsed) -> Result<Parsed, ReadError> {
    for mut rule in rules {
        if rule.blank {
            parsed.lost.append(&mut rule.lost);
            continue;
        }
        if rule.src.is_empty() {
            return Err(ReadError::at(rule.at, "src", "missing or empty source term"));
        }
        parsed.lost.append(&mut rule.lost);
        for (field, value) in [("regex", rule.regex), ("case_sensitive", rule.case_sensitive)] {
            if value {
                parsed.lost.push(Lost { at: rule.at.clone(), field: field.into(), value: Some("true".into()) });
            }
        }
        if rule.dst.is_empty() {
            parsed.skipped.push(Skipped { at: rule.at, reason: "no dst".into() });
            continue;
        }
        parsed
            .entries
            .push(Entry { at: rule.at, term: Term { note: non_empty(&rule.info), ..Term::new(rule.src, rule.dst) } });
    }
    if !parsed.entries.is_empty() {
        parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
    }
    Ok(parsed)
}

/// One rule as LinguaGacha writes it.
#[derive(Serialize)]
struct Written<'a> {
    src: &'a str,
    dst: &'a str,
    info: &'a str,
    regex: bool,
    case_sensitive: bool,
}

/// One rule per surface: the term's src, then each alias with the term's dst and info
/// (LinguaGacha has one key per rule); `regex` and `case_sensitive` false.
fn written(input: &ExportInput) -> Vec<(At, Written<'_>)> {
    let mut rules = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        let info = term.note.as_deref().unwrap_or("");
        for key in std::iter::once(&term.src).chain(term.aliases.iter().map(|alias| &alias.surface)) {
            let rule = Written { src: key, dst: &term.dst, info, regex: false, case_sensitive: false };
            rules.push((At::Record(export.id), rule));
        }
    }
    rules
}

/// The JSON LinguaGacha exports: a list of the five fields, 4-space indent.
pub(super) fn write_json(input: &ExportInput) -> Result<Exported, WriteError> {
    let rules: Vec<Written<'_>> = written(input).into_iter().map(|(_, rule)| rule).collect();
    Ok(Exported { bytes: pretty(&rules), lost: Vec::new() })
}

/// The workbook LinguaGacha exports: sheet `rules`, a header row, then one row per
/// rule with the two flags as boolean cells.
pub(super) fn write_xlsx(input: &ExportInput) -> Result<Exported, WriteError> {
    let rows: Vec<Row> = written(input)
        .into_iter()
        .map(|(at, rule)| Row {
            record: Some(at),
            cells: vec![
                Cell::Text(rule.src.to_owned()),
                Cell::Text(rule.dst.to_owned()),
                Cell::Text(rule.info.to_owned()),
                Cell::Bool(rule.regex),
                Cell::Bool(rule.case_sensitive),
            ],
        })
        .collect();
    let bytes = xlsx::write(Format::LinguaGachaXlsx, "rules", &COLUMNS, 24.0, &rows)?;
    Ok(Exported { bytes, lost: Vec::new() })
}

/// The text of cell A1 of the first sheet of an XLSX file, if any.
pub(super) fn xlsx_header(bytes: &[u8]) -> Result<Option<String>, ReadError> {
    xlsx::first_cell(bytes)
}
