//! AiNiee glossary (术语表, `prompt_dictionary`): a JSON list of `{src, dst, info}`
//! (the legacy key `srt` for `src`) or a `{src: dst}` object, or an XLSX workbook
//! whose active sheet has a header row and the columns 原文, 译文, 描述.
//!
//! AiNiee treats a `src` as a regular expression whenever Python's `regex` module
//! parses it to anything but plain characters (a bracketed run of ASCII letters such
//! as `[mc]` excepted): such an entry cannot be a lorebank key and is skipped, saying
//! so. A `src` whose only syntax is backslash-escaped punctuation (`Dr\. Who`, as
//! lorebank's writer escapes a key) matches exactly its literal text in AiNiee and is
//! imported as that text. Read as AiNiee's `TableHelper` reads, except that an entry
//! without `src` or with a value of the wrong type is an error (AiNiee drops or
//! stringifies it).

use serde::Serialize;

use crate::formats::linguagacha_json::{object_dst, parse, pretty, shown, Document, Item, Json};
use crate::formats::text::non_empty;
use crate::formats::xlsx::{self, Book, Cell, Row, Sheet};
use crate::{
    At, Entry, ExportInput, Exported, Fields, Format, Lost, Notice, Parsed, ReadError, Skipped, Term, WriteError,
};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

const ACTIVATION: &str = "AiNiee matches a literal src case-insensitively by default (one switch for the \
    whole glossary, with an optional whole-word switch) and a src that parses as a regular expression as one, \
    row by row, injecting every entry that matches, in glossary order; lorebank matches literal keys \
    leftmost-longest on folded text, inside their windows";

/// The header row AiNiee writes (its columns, in Chinese).
const HEADER: [&str; 3] = ["原文", "译文", "描述"];

/// The keys of a JSON entry AiNiee reads.
const KEYS: [&str; 3] = ["src", "dst", "info"];

/// What AiNiee makes of a `src`.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    /// Plain characters: matched as written.
    Literal,
    /// Plain characters and backslash-escaped punctuation: a regular expression that
    /// matches exactly this text (case-sensitively).
    Escaped(String),
    /// Any other syntax, or a pattern that does not compile.
    Pattern,
}

/// The characters that make a regular expression outside a character class in
/// Python's `regex` module (`{` only when it opens a quantifier or fuzzy constraint,
/// handled apart; `]` and `}` alone are plain).
const SPECIAL: &[char] = &['\\', '.', '^', '$', '*', '+', '?', '[', '(', ')', '|'];

/// What AiNiee's `GlossaryHelper.get_source_state` makes of `src`, as near as can be
/// told without Python's `regex` parser.
fn source(src: &str) -> Source {
    if is_bracketed_letters(src) {
        return Source::Literal;
    }
    let chars: Vec<char> = src.chars().collect();
    let mut literal = String::new();
    let mut escaped = false;
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        if c == '\\' {
            match chars.get(index + 1) {
                Some(&next) if next.is_ascii_punctuation() => {
                    literal.push(next);
                    escaped = true;
                    index += 2;
                    continue;
                }
                _ => return Source::Pattern,
            }
        }
        if SPECIAL.contains(&c) || (c == '{' && opens_braces(&chars[index + 1..])) {
            return Source::Pattern;
        }
        literal.push(c);
        index += 1;
    }
    if escaped {
        Source::Escaped(literal)
    } else {
        Source::Literal
    }
}

/// `[` + ASCII letters + `]`, which AiNiee reads literally (its issue #1066).
fn is_bracketed_letters(src: &str) -> bool {
    src.strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|letters| !letters.is_empty() && letters.bytes().all(|byte| byte.is_ascii_alphabetic()))
}

/// Whether what follows a `{` makes it a quantifier (`{2}`, `{1,}`, `{,3}`) or a fuzzy
/// constraint (`{e<=1}`) rather than a plain brace.
fn opens_braces(rest: &[char]) -> bool {
    let Some(close) = rest.iter().position(|&c| c == '}') else {
        return false;
    };
    let inside: String = rest[..close].iter().collect();
    let quantifier = match inside.split_once(',') {
        Some((low, high)) => [low, high].iter().all(|part| part.bytes().all(|byte| byte.is_ascii_digit())),
        None => !inside.is_empty() && inside.bytes().all(|byte| byte.is_ascii_digit()),
    };
    let fuzzy = inside.trim_start().starts_with(['d', 'e', 'i', 's'])
        && inside.chars().all(|c| "deis0123456789<=>+-*,: ".contains(c));
    quantifier || fuzzy
}

/// `src` written so that AiNiee matches exactly its text: unchanged when AiNiee reads
/// it literally, otherwise every regex metacharacter escaped with a backslash.
fn escape(src: &str) -> Option<String> {
    if source(src) == Source::Literal {
        return None;
    }
    let mut escaped = String::with_capacity(src.len() + 8);
    for c in src.chars() {
        if SPECIAL.contains(&c) || matches!(c, '{' | '}' | ']') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    Some(escaped)
}

/// One row as read, before it becomes an entry.
struct Row3 {
    at: At,
    src: String,
    dst: String,
    info: String,
    /// Foreign fields of the row lorebank does not hold.
    lost: Vec<Lost>,
    /// A spreadsheet row with content only past the format's columns: no entry.
    blank: bool,
}

pub(super) fn read_json(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let shape = "an AiNiee glossary is a JSON list of {src, dst, info} objects or a {src: dst} object";
    let mut parsed = Parsed::default();
    let mut rows = Vec::new();
    match parse(bytes, shape)? {
        Document::List(items) => {
            let any_src = items
                .iter()
                .any(|item| matches!(item, Json::Object(pairs) if pairs.iter().any(|(key, _)| key == "src")));
            for (index, item) in items.iter().enumerate() {
                let item = Item::new(At::Entry(index as u64 + 1), item)?;
                let key = if item.get("src").is_none() && item.get("srt").is_some() { "srt" } else { "src" };
                if key == "srt" && any_src {
                    parsed.notices.push(Notice {
                        at: Some(item.at.clone()),
                        message: "AiNiee reads the legacy key `srt` only in a file where no entry has `src`: it \
                            ignores this entry"
                            .into(),
                    });
                }
                // `src_state` is derived: AiNiee recomputes it from src on load.
                let lost = item
                    .pairs
                    .iter()
                    .filter(|(name, _)| name != key && !KEYS.contains(&name.as_str()) && name != "src_state")
                    .map(|(name, value)| Lost { at: item.at.clone(), field: name.clone(), value: Some(shown(value)) })
                    .collect();
                rows.push(Row3 {
                    src: item.text(key)?.unwrap_or("").to_owned(),
                    dst: item.text("dst")?.unwrap_or("").to_owned(),
                    info: item.text("info")?.unwrap_or("").to_owned(),
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
                rows.push(Row3 {
                    at,
                    src: src.trim().to_owned(),
                    dst,
                    info: String::new(),
                    lost: Vec::new(),
                    blank: false,
                });
            }
        }
    }
    finish(rows, parsed)
}

pub(super) fn read_xlsx(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut book = Book::open(bytes)?;
    let mut parsed = Parsed::default();
    let mut rows = Vec::new();
    let Some(sheet) = book.sheet(Sheet::Active)? else {
        return Ok(parsed);
    };
    for xlsx::SheetRow { number: row, cells, extra } in sheet.rows(HEADER.len() as u32) {
        if row == 1 {
            // AiNiee skips row 1 whatever it holds; say so when it is not a header.
            let first = match &cells[0] {
                calamine::Data::String(text) => text.trim().to_owned(),
                other => other.to_string(),
            };
            if !first.is_empty() && first != HEADER[0] && first != "src" {
                parsed
                    .skipped
                    .push(Skipped { at: At::Row(1), reason: "row 1 is the header row (AiNiee skips it)".into() });
            }
            continue;
        }
        rows.push(Row3 {
            lost: xlsx::lost_columns(row, extra).collect(),
            blank: cells.iter().all(xlsx::is_blank),
            at: At::Row(row),
            src: xlsx::text(&cells[0], row, "src")?,
            dst: xlsx::text(&cells[1], row, "dst")?,
            info: xlsx::text(&cells[2], row, "info")?,
        });
    }
    finish(rows, parsed)
}

/// The entries of `rows`: an empty src is an error, an empty dst skipped, a src
/// AiNiee reads as a regular expression skipped.
fn finish(rows: Vec<Row3>, mut parsed: Parsed) -> Result<Parsed, ReadError> {
    for mut row in rows {
        if row.blank {
            parsed.lost.append(&mut row.lost);
            continue;
        }
        if row.src.is_empty() {
            return Err(ReadError::at(row.at, "src", "missing or empty source term"));
        }
        parsed.lost.append(&mut row.lost);
        let src = match source(&row.src) {
            Source::Literal => row.src,
            Source::Escaped(literal) => {
                parsed.notices.push(Notice {
                    at: Some(row.at.clone()),
                    message: format!(
                        "src `{}` is a regular expression of escaped characters that AiNiee matches \
                         case-sensitively; imported as the key `{literal}`",
                        row.src
                    ),
                });
                literal
            }
            Source::Pattern => {
                parsed.skipped.push(Skipped {
                    at: row.at,
                    reason: format!(
                        "src `{}` is a regular expression to AiNiee (or one it cannot compile and never \
                         injects); lorebank keys are literal text",
                        xlsx::short(&row.src)
                    ),
                });
                continue;
            }
        };
        if row.dst.is_empty() {
            parsed.skipped.push(Skipped { at: row.at, reason: "no dst".into() });
            continue;
        }
        parsed.entries.push(Entry { at: row.at, term: Term { note: non_empty(&row.info), ..Term::new(src, row.dst) } });
    }
    if !parsed.entries.is_empty() {
        parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
    }
    Ok(parsed)
}

/// One row as AiNiee writes it.
#[derive(Serialize)]
struct Written {
    src: String,
    dst: String,
    info: String,
}

/// One row per surface: the term's src, then each alias with the term's dst and info
/// (AiNiee has one key per row). A surface AiNiee would read as a regular expression
/// is written escaped, and reported: AiNiee then matches it case-sensitively.
fn written(input: &ExportInput) -> (Vec<(At, Written)>, Vec<Lost>) {
    let mut rows = Vec::new();
    let mut lost = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        let at = At::Record(export.id);
        let info = term.note.clone().unwrap_or_default();
        let surfaces =
            std::iter::once(("src", &term.src)).chain(term.aliases.iter().map(|alias| ("aliases", &alias.surface)));
        for (field, surface) in surfaces {
            let src = match escape(surface) {
                None => surface.clone(),
                Some(escaped) => {
                    lost.push(Lost {
                        at: at.clone(),
                        field: field.into(),
                        value: Some(format!(
                            "escaped as the regular expression `{}`: AiNiee matches it case-sensitively",
                            xlsx::short(&escaped)
                        )),
                    });
                    escaped
                }
            };
            rows.push((at.clone(), Written { src, dst: term.dst.clone(), info: info.clone() }));
        }
    }
    (rows, lost)
}

/// The JSON AiNiee exports: a list of `{src, dst, info}`, 4-space indent.
pub(super) fn write_json(input: &ExportInput) -> Result<Exported, WriteError> {
    let (rows, lost) = written(input);
    let rows: Vec<Written> = rows.into_iter().map(|(_, row)| row).collect();
    Ok(Exported { bytes: pretty(&rows), lost })
}

/// The workbook AiNiee exports: one sheet, the header 原文/译文/描述, then one row per
/// surface.
pub(super) fn write_xlsx(input: &ExportInput) -> Result<Exported, WriteError> {
    let (rows, lost) = written(input);
    let rows: Vec<Row> = rows
        .into_iter()
        .map(|(at, row)| Row {
            record: Some(at),
            cells: vec![Cell::Text(row.src), Cell::Text(row.dst), Cell::Text(row.info)],
        })
        .collect();
    let bytes = xlsx::write(Format::AiNieeXlsx, "Sheet1", &HEADER, 24.0, &rows)?;
    Ok(Exported { bytes, lost })
}

#[cfg(test)]
mod tests {
    use super::{escape, source, Source};

    #[test]
    fn sources_as_ainiee_parses_them() {
        for literal in ["ダリヤ", "炎の魔女", "[mc]", "{name}", "a}", "a]", "Ace face", "#1", "{e", "{}"] {
            assert_eq!(source(literal), Source::Literal, "{literal}");
        }
        for pattern in [
            "Dr.", "^炎", "魔法$", "a*", "a+", "a?", "[mc]x", "[a-z]", "(笑)", "a|b", "a{2}", "a{1,}", "a{,3}",
            "x{e<=1}", "\\d", "a\\", "(", "*",
        ] {
            assert_eq!(source(pattern), Source::Pattern, "{pattern}");
        }
        assert_eq!(source("Dr\\. Who"), Source::Escaped("Dr. Who".into()));
        assert_eq!(source("\\(笑\\)"), Source::Escaped("(笑)".into()));
    }

    #[test]
    fn escaping_gives_back_the_text() {
        for text in ["Dr. Who", "(笑)", "a{2}", "C:\\d", "[mc]x", "a|b^$*+?", "x{e<=1}"] {
            let escaped = escape(text).unwrap_or_else(|| panic!("{text} needs escaping"));
            assert_eq!(source(&escaped), Source::Escaped(text.to_owned()), "{text} → {escaped}");
        }
        for text in ["ダリヤ", "[mc]", "{name}"] {
            assert_eq!(escape(text), None, "{text}");
        }
    }
}
