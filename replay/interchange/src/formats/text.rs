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
