//! GalTransl GPT dictionary (`项目GPT字典.txt`): one entry per line, `src⇥dst⇥note`.
//!
//! Read as GalTransl's `CGptDict.load_dic` reads it: UTF-8; every run of four spaces
//! is a tab; a line containing `->` has `->` and every `#` turned into tabs (the
//! SakuraLLM form `src->dst #note`); fewer than two columns is not an entry; columns
//! past the third are ignored. Where lorebank differs it says so: the byte order
//! mark GalTransl keeps in the first key is dropped, fields are trimmed, the `^^` and
//! `1^` flags are reported and removed, and a line repeating an earlier one is
//! skipped.

use std::collections::BTreeMap;

use crate::formats::text::{non_empty, surface_lines, trimmed, utf8};
use crate::{At, Entry, ExportInput, Exported, Fields, Lost, Notice, Parsed, ReadError, Skipped, Term, WriteError};

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

const ACTIVATION: &str = "GalTransl injects an entry whenever its src occurs in the text (a case-sensitive \
    substring, longest keys first); lorebank matches keys leftmost-longest on folded text, inside their windows";

pub(super) fn read(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let text = utf8(bytes)?;
    let mut parsed = Parsed::default();
    // Lines seen, by (src, dst, note), for GalTransl's rule that drops a repeated line.
    let mut seen: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for (index, raw) in text.split('\n').enumerate() {
        let number = index as u64 + 1;
        let at = At::Line(number);
        let mut line = raw.trim_end_matches(['\r', '\n']).replace("    ", "\t");
        if index == 0 && line.starts_with('\u{feff}') {
            // Every mark, so that what an export writes first reads back the same.
            line = line.trim_start_matches('\u{feff}').to_owned();
            if line.contains('\t') || line.contains("->") {
                parsed.notices.push(Notice {
                    at: Some(at.clone()),
                    message: "byte order mark dropped from the first key (GalTransl keeps it as part of the key)"
                        .into(),
                });
            }
        }
        // A line of nothing but spaces and tabs is blank (GalTransl would read its empty
        // columns as an entry without a key, which lorebank refuses).
        if line.trim().is_empty() {
            continue;
        }
        if line.contains("->") {
            line = line.replace("->", "\t").replace('#', "\t");
        }
        let columns: Vec<&str> = line.split('\t').collect();
        if columns.len() < 2 {
            let content = line.trim();
            if !content.is_empty() && !content.starts_with("//") {
                parsed.skipped.push(Skipped { at, reason: "no tab, four spaces or `->`: not an entry".into() });
            }
            continue;
        }
        let (mut src, src_trimmed) = trimmed(columns[0]);
        let (dst, dst_trimmed) = trimmed(columns[1]);
        let (note, note_trimmed) = trimmed(columns.get(2).copied().unwrap_or(""));
        if src_trimmed || dst_trimmed || note_trimmed {
            parsed.notices.push(Notice {
                at: Some(at.clone()),
                message: "whitespace around a field trimmed (GalTransl keeps it)".into(),
            });
        }
        for (column, extra) in columns.iter().enumerate().skip(3) {
            if !extra.trim().is_empty() {
                parsed.lost.push(Lost {
                    at: at.clone(),
                    field: format!("column {}", column + 1),
                    value: Some(short(extra)),
                });
            }
        }
        // Every leading flag, so that the key an export writes reads back the same.
        while let Some(flag) = ["^^", "1^"].into_iter().find(|flag| src.starts_with(flag)) {
            parsed.lost.push(Lost { at: at.clone(), field: format!("flag {flag}"), value: None });
            src = &src[flag.len()..];
        }
        // `^^ 王都`: the space after a flag is not part of a lorebank key.
        if src.len() != src.trim_start().len() {
            src = src.trim_start();
            parsed.notices.push(Notice {
                at: Some(at.clone()),
                message: "whitespace around a field trimmed (GalTransl keeps it)".into(),
            });
        }
        if src.is_empty() {
            return Err(ReadError::at(at, "src", "empty source term"));
        }
        if src.starts_with("//") {
            parsed.notices.push(Notice {
                at: Some(at.clone()),
                message: "a `//` line with a tab is an entry, in GalTransl too (a comment line has no tab)".into(),
            });
        }
        if dst.is_empty() {
            parsed.skipped.push(Skipped { at, reason: "no dst".into() });
            continue;
        }
        let note = non_empty(note);
        if let Some(note) = &note {
            let key = (src.to_owned(), dst.to_owned(), note.clone());
            if let Some(first) = seen.get(&key) {
                parsed.skipped.push(Skipped { at, reason: format!("repeats line {first}") });
                continue;
            }
            seen.insert(key, number);
        }
        parsed.entries.push(Entry { at, term: Term { note, ..Term::new(src, dst) } });
    }
    if !parsed.entries.is_empty() {
        parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
    }
    if parsed.entries.iter().any(|entry| entry.term.dst.contains('/')) {
        parsed.notices.push(Notice {
            at: None,
            message: "a dst with `/` lists alternative renderings in GalTransl; lorebank keeps it as one rendering"
                .into(),
        });
    }
    Ok(parsed)
}

/// The value of a lost column, at most 40 characters.
fn short(text: &str) -> String {
    let mut short: String = text.chars().take(40).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// One line per surface: the term's src, then each alias on a line of its own with
/// the term's dst and note (GalTransl has one key per line).
pub(super) fn write(input: &ExportInput) -> Result<Exported, WriteError> {
    let mut out = String::new();
    // `->` would make GalTransl read the line as the Sakura form, and four spaces are
    // a tab (removed until none are left: seven spaces would leave four).
    let clean = |line: &str| {
        let mut cleaned = line.replace("->", "→");
        while cleaned.contains("    ") {
            cleaned = cleaned.replace("    ", " ");
        }
        cleaned
    };
    let lost = surface_lines(input, clean, "tab, line break or `->`", &["^^", "1^"], &[], |key, dst, note| {
        out.push_str(key);
        out.push('\t');
        out.push_str(dst);
        if let Some(note) = note {
            out.push('\t');
            out.push_str(note);
        }
        out.push('\n');
    });
    Ok(Exported { bytes: out.into_bytes(), lost })
}
