//! What the text formats share: byte order marks, UTF-8 decoding with a line number
//! in the error, JSON parsing with the position of a syntax error.

use crate::{At, ReadError};

/// `bytes` without a leading UTF-8 byte order mark.
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// `bytes` as UTF-8 (a leading byte order mark kept), or an error naming the line
/// of the first invalid byte.
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, ReadError> {
    std::str::from_utf8(bytes).map_err(|error| {
        let valid = &bytes[..error.valid_up_to()];
        let line = valid.iter().filter(|&&byte| byte == b'\n').count() as u64 + 1;
        ReadError {
            limit: None,
            at: Some(At::Line(line)),
            field: None,
            message: format!("not UTF-8 (invalid byte at offset {}); save the file as UTF-8", error.valid_up_to()),
        }
    })
}

/// Parses `bytes` (UTF-8, a byte order mark allowed) as JSON of type `T`; a syntax
/// or type error names its line and column.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ReadError> {
    let text = utf8(without_bom(bytes))?;
    serde_json::from_str(text).map_err(|error| ReadError {
        limit: None,
        at: Some(At::Line(error.line() as u64)),
        field: None,
        message: format!("malformed JSON: {error}"),
    })
}

/// `text` on one line for a line-based format: every line break, tab or other
/// control character becomes a space. Returns whether anything changed.
pub(crate) fn one_line(text: &str) -> (String, bool) {
    let mut changed = false;
    let line = text
        .chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                changed = true;
                ' '
            } else {
                c
            }
        })
        .collect();
    (line, changed)
}

/// `field` trimmed of surrounding whitespace, and whether it had any.
pub(crate) fn trimmed(field: &str) -> (&str, bool) {
    let trimmed = field.trim();
    (trimmed, trimmed.len() != field.len())
}

/// `None` for empty text.
pub(crate) fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// The lines of a one-key-per-line format: for each term in order, its src and then
/// each alias, with the term's rendering and note, each field on one line
/// ([`one_line`]), then through `clean`, then trimmed; `write` gets (key, dst, note).
/// A field `clean` or [`one_line`] changed is reported lost with `what` as its value;
/// a term whose rendering, or a surface that, is nothing once on one line (control
/// characters only) is left out and reported, since the format's reader would find
/// no rendering or no key there. A key starting with one of `flags` (prefixes the
/// format's reader takes for flags of the key, GalTransl's `^^` and `1^`) is written
/// as it is and reported, and one of nothing but flags is left out and reported; so
/// is a leading U+FEFF of a key, which reads as a byte order mark on the first line.
/// A key starting with one of `comments` (what the format's reader takes for the
/// start of a comment line, Sakura text's `//` and `\\`) is written with its first
/// character full-width (`／`, `＼`, which the book's profiles fold back), and
/// reported.
pub(crate) fn surface_lines(
    input: &crate::ExportInput,
    clean: impl Fn(&str) -> String,
    what: &str,
    flags: &[&str],
    comments: &[&str],
    mut write: impl FnMut(&str, &str, Option<&str>),
) -> Vec<crate::Lost> {
    use crate::{At, Lost};
    let mut lost = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        let at = At::Record(export.id);
        let mut field = |name: &str, text: &str| {
            let (line, changed) = one_line(text);
            let cleaned = clean(&line);
            if changed || cleaned != line {
                lost.push(Lost { at: at.clone(), field: name.to_owned(), value: Some(what.to_owned()) });
            }
            cleaned.trim().to_owned()
        };
        let dst = field("dst", &term.dst);
        let note = term.note.as_deref().map(|note| field("note", note)).filter(|note| !note.is_empty());
        let mut keys = vec![("src", field("src", &term.src))];
        keys.extend(term.aliases.iter().map(|alias| ("aliases", field("aliases", &alias.surface))));
        if dst.is_empty() {
            lost.push(Lost { at: at.clone(), field: "entry".into(), value: Some("empty dst on one line".into()) });
            continue;
        }
        for (name, key) in keys {
            // On the first line a reader takes a leading U+FEFF for the file's byte
            // order mark: left out of every key, and reported.
            let key = match key.strip_prefix('\u{feff}') {
                Some(rest) => {
                    lost.push(Lost {
                        at: at.clone(),
                        field: name.to_owned(),
                        value: Some("starts with U+FEFF, which reads as a byte order mark".into()),
                    });
                    rest.trim_start_matches(|c: char| c == '\u{feff}' || c.is_whitespace()).to_owned()
                }
                None => key,
            };
            if key.is_empty() {
                lost.push(Lost { at: at.clone(), field: "entry".into(), value: Some("empty key on one line".into()) });
                continue;
            }
            let mut unflagged = key.as_str();
            while let Some(flag) = flags.iter().find(|flag| unflagged.starts_with(**flag)) {
                unflagged = &unflagged[flag.len()..];
            }
            if unflagged.trim().is_empty() {
                lost.push(Lost {
                    at: at.clone(),
                    field: "entry".into(),
                    value: Some("key of nothing but flags".into()),
                });
                continue;
            }
            if let Some(flag) = flags.iter().find(|flag| key.starts_with(**flag)) {
                lost.push(Lost {
                    at: at.clone(),
                    field: name.to_owned(),
                    value: Some(format!("starts with `{flag}`, a flag to the format's reader")),
                });
            }
            let key = match comments.iter().find(|comment| key.starts_with(**comment)) {
                Some(comment) => {
                    lost.push(Lost {
                        at: at.clone(),
                        field: name.to_owned(),
                        value: Some(format!("starts with `{comment}`, a comment to the format's reader")),
                    });
                    let mut chars = key.chars();
                    chars.next().map(full_width).into_iter().chain(chars).collect()
                }
                None => key,
            };
            write(&key, &dst, note.as_deref());
        }
    }
    lost
}

/// The full-width form of a printable ASCII character (`/` is `／`), which NFKC
/// folds back; any other character as it is.
fn full_width(c: char) -> char {
    match c {
        '!'..='~' => char::from_u32(c as u32 + 0xFEE0).unwrap_or(c),
        other => other,
    }
}

/// Whether a stripped line of Sakura text is a comment: it starts with `//` or `\\`,
/// as manga-image-translator, which writes such files, reads them.
pub(crate) fn is_comment_line(line: &str) -> bool {
    COMMENT_STARTS.iter().any(|start| line.starts_with(start))
}

/// What starts a comment line of Sakura text.
pub(crate) const COMMENT_STARTS: [&str; 2] = ["//", "\\\\"];
