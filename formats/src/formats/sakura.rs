//! SakuraLLM `gpt_dict`: a JSON list of `{src, dst, info}`, or text lines
//! `src->dst #info` as `translate_epub.py --gpt_dict_path` reads them (each line
//! stripped, empty lines skipped, a second `->` or `#` refused), with the comment
//! lines (`//`, `\\`) of manga-image-translator, which writes such files, skipped.

use serde_json::Value;

use crate::formats::text::{
    is_comment_line, non_empty, parse_json, surface_lines, trimmed, utf8, without_bom, COMMENT_STARTS,
};
use crate::{At, Entry, ExportInput, Exported, Fields, Lost, Notice, Parsed, ReadError, Skipped, Term, WriteError};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

const ACTIVATION: &str = "Sakura clients inject every entry whose src occurs in the text (a case-sensitive \
    substring, in file order); lorebank matches keys leftmost-longest on folded text, inside their windows";

const COMMENT: &str = "a line starting with `//` or `\\\\` is a comment, skipped as manga-image-translator skips it; \
    SakuraLLM's own reader (translate_epub.py) refuses a `//` line without `->`";

pub(super) fn read_json(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let value: Value = parse_json(bytes)?;
    let Value::Array(items) = value else {
        return Err(ReadError::file("a Sakura gpt_dict is a JSON list of {src, dst, info} objects"));
    };
    let mut parsed = Parsed::default();
    for (index, item) in items.iter().enumerate() {
        let at = At::Entry(index as u64 + 1);
        let Value::Object(object) = item else {
            return Err(ReadError::at(at, "entry", "not an object"));
        };
        let text = |field: &str| -> Result<Option<&str>, ReadError> {
            match object.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.as_str())),
                Some(other) => Err(ReadError::at(at.clone(), field, format!("must be a string, not {other}"))),
            }
        };
        let (src, src_trimmed) = trimmed(text("src")?.unwrap_or(""));
        if src.is_empty() {
            return Err(ReadError::at(at, "src", "missing or empty source term"));
        }
        let (dst, dst_trimmed) = trimmed(text("dst")?.unwrap_or(""));
        let (info, info_trimmed) = trimmed(text("info")?.unwrap_or(""));
        if src_trimmed || dst_trimmed || info_trimmed {
            parsed.notices.push(Notice {
                at: Some(at.clone()),
                message: "whitespace around a field trimmed (Sakura keeps it)".into(),
            });
        }
        for (key, value) in object {
            if !matches!(key.as_str(), "src" | "dst" | "info") {
                parsed.lost.push(Lost { at: at.clone(), field: key.clone(), value: Some(value.to_string()) });
            }
        }
        if dst.is_empty() {
            parsed.skipped.push(Skipped { at, reason: "no dst".into() });
            continue;
        }
        parsed.entries.push(Entry { at, term: Term { note: non_empty(info), ..Term::new(src, dst) } });
    }
    notice_activation(&mut parsed);
    Ok(parsed)
}

pub(super) fn read_text(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let text = utf8(without_bom(bytes))?;
    let mut parsed = Parsed::default();
    for (index, line) in text.lines().enumerate() {
        let at = At::Line(index as u64 + 1);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if is_comment_line(line) {
            parsed.notices.push(Notice { at: Some(at), message: COMMENT.into() });
            continue;
        }
        let parts: Vec<&str> = line.split("->").collect();
        let [src, rest] = parts[..] else {
            return Err(ReadError::at(at, "line", "a gpt_dict line is `src->dst #info` with exactly one `->`"));
        };
        let rest: Vec<&str> = rest.split('#').collect();
        if rest.len() > 2 {
            return Err(ReadError::at(at, "info", "more than one `#` (Sakura's reader refuses the line)"));
        }
        let (src, dst, info) = (src.trim(), rest[0].trim(), rest.get(1).map_or("", |info| info.trim()));
        if src.is_empty() {
            return Err(ReadError::at(at, "src", "empty source term"));
        }
        if dst.is_empty() {
            parsed.skipped.push(Skipped { at, reason: "no dst".into() });
            continue;
        }
        parsed.entries.push(Entry { at, term: Term { note: non_empty(info), ..Term::new(src, dst) } });
    }
    notice_activation(&mut parsed);
    Ok(parsed)
}

fn notice_activation(parsed: &mut Parsed) {
    if !parsed.entries.is_empty() {
        parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
    }
}

/// One `{src, dst, info}` per surface (aliases repeat their term's dst and info),
/// `info` left out when there is no note; 4-space indent as Sakura's tools write.
pub(super) fn write_json(input: &ExportInput) -> Result<Exported, WriteError> {
    let mut rows = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        for key in std::iter::once(&term.src).chain(term.aliases.iter().map(|alias| &alias.surface)) {
            rows.push(Row { src: key, dst: &term.dst, info: term.note.as_deref() });
        }
    }
    Ok(Exported { bytes: pretty(&rows), lost: Vec::new() })
}

/// One row of a gpt_dict, its fields in Sakura's order.
#[derive(serde::Serialize)]
struct Row<'a> {
    src: &'a str,
    dst: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    info: Option<&'a str>,
}

/// JSON with a 4-space indent and a final newline.
fn pretty(value: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    // Serializing rows of strings into memory cannot fail.
    if value.serialize(&mut serializer).is_ok() {
        bytes.push(b'\n');
    }
    bytes
}

/// `src->dst #info` lines. A term whose text contains `->` or `#` (which Sakura's
/// reader refuses) or a line break is written with those replaced, and reported.
pub(super) fn write_text(input: &ExportInput) -> Result<Exported, WriteError> {
    let mut out = String::new();
    let clean = |line: &str| line.replace("->", "→").replace('#', "＃");
    let lost = surface_lines(input, clean, "`->`, `#` or line break", &[], &COMMENT_STARTS, |key, dst, note| {
        out.push_str(key);
        out.push_str("->");
        out.push_str(dst);
        if let Some(note) = note {
            out.push_str(" #");
            out.push_str(note);
        }
        out.push('\n');
    });
    Ok(Exported { bytes: out.into_bytes(), lost })
}
