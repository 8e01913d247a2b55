//! The encoding of an OmegaT glossary file, decided as OmegaT decides it: a
//! `-*- coding: X -*-` magic comment on a first line starting with `#` (tab-separated
//! files only), else a byte order mark, else UTF-8 when the bytes are valid UTF-8,
//! else a guess from the bytes (OmegaT guesses with juniversalchardet, lorebank with
//! chardetng), which the reader reports. A byte that does not decode is an error
//! naming its line, never a replacement character.

use encoding_rs::{DecoderResult, Encoding, REPLACEMENT, UTF_16BE, UTF_16LE, UTF_8};

use crate::{At, Notice, ReadError};

/// The text of `bytes` (without a byte order mark) and, when the encoding was
/// guessed, the notice that says which. `magic` reads the coding comment.
pub(super) fn decode(bytes: &[u8], magic: bool) -> Result<(String, Option<Notice>), ReadError> {
    let utf8_bom = bytes.starts_with(b"\xEF\xBB\xBF");
    if magic {
        // OmegaT reads the comment as ASCII after skipping a UTF-8 byte order mark.
        let after_bom = if utf8_bom { &bytes[3..] } else { bytes };
        if let Some(label) = coding_comment(after_bom) {
            let encoding = declared(&label, utf8_bom)?;
            let offset = if utf8_bom { 3 } else { 0 };
            let text = decode_with(encoding, after_bom, offset)
                .map_err(|malformed| malformed.error(&format!("not valid {} (declared on line 1)", encoding.name())))?;
            return checked(text).map(|text| (text, None));
        }
    }
    for (bom, encoding) in [(&b"\xEF\xBB\xBF"[..], UTF_8), (b"\xFF\xFE", UTF_16LE), (b"\xFE\xFF", UTF_16BE)] {
        if let Some(rest) = bytes.strip_prefix(bom) {
            let text = decode_with(encoding, rest, bom.len()).map_err(|malformed| {
                malformed.error(&format!("not valid {} (the file starts with its byte order mark)", encoding.name()))
            })?;
            return checked(text).map(|text| (text, None));
        }
    }
    let invalid = match std::str::from_utf8(bytes) {
        Ok(text) => return checked(text.to_owned()).map(|text| (text, None)),
        Err(error) => error.valid_up_to(),
    };
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let guess = detector.guess(None, chardetng::Utf8Detection::Deny);
    // OmegaT reads no coding comment in a CSV file: there the advice is UTF-8 alone.
    let (undeclared, advice) = if magic {
        (
            ", no `-*- coding: … -*-` first line,",
            "declare the encoding with `# -*- coding: NAME -*-` on the first line or save the file as UTF-8",
        )
    } else {
        (",", "save the file as UTF-8")
    };
    let undetected = || {
        let line = line_of(&String::from_utf8_lossy(&bytes[..invalid]));
        ReadError {
            limit: None,
            at: Some(At::Line(line)),
            field: None,
            message: format!(
                "not UTF-8 (invalid byte at offset {invalid}){undeclared} and not text in {} (the likeliest guess) \
                 either; {advice}",
                guess.name()
            ),
        }
    };
    let text = decode_with(guess, bytes, 0).map_err(|_| undetected())?;
    if text.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}')) {
        return Err(undetected());
    }
    let to_be_sure = if magic {
        format!("declare it with `# -*- coding: {} -*-` on the first line", guess.name().to_ascii_lowercase())
    } else {
        "save it as UTF-8".to_owned()
    };
    let notice = Notice {
        at: None,
        message: format!(
            "the file is not UTF-8 and declares no encoding: decoded as {}, guessed from its bytes (OmegaT guesses \
             with another detector and may decide otherwise); {to_be_sure} to be sure",
            guess.name(),
        ),
    };
    checked(text).map(|text| (text, Some(notice)))
}

/// The encoding a coding comment names, or the error naming line 1.
fn declared(label: &str, utf8_bom: bool) -> Result<&'static Encoding, ReadError> {
    let unknown = || {
        ReadError::at(At::Line(1), "coding", format!("unknown encoding `{label}` in the `-*- coding: … -*-` comment"))
    };
    let encoding = Encoding::for_label(label.as_bytes()).ok_or_else(unknown)?;
    if encoding == REPLACEMENT {
        return Err(unknown());
    }
    if encoding == UTF_16LE || encoding == UTF_16BE {
        return Err(ReadError::at(
            At::Line(1),
            "coding",
            format!("`{label}` names UTF-16, but the comment line is single-byte text; save a UTF-16 file with a byte order mark"),
        ));
    }
    if utf8_bom && encoding != UTF_8 {
        return Err(ReadError::at(
            At::Line(1),
            "coding",
            format!("the file starts with a UTF-8 byte order mark but the comment declares {}", encoding.name()),
        ));
    }
    Ok(encoding)
}

/// The value of `coding` in a magic comment `-*- key: value; … -*-` on the first
/// line, when that line starts with `#`.
fn coding_comment(bytes: &[u8]) -> Option<String> {
    let end = bytes.iter().position(|&byte| byte == b'\n' || byte == b'\r').unwrap_or(bytes.len());
    let line = String::from_utf8_lossy(&bytes[..end]);
    if !line.starts_with('#') {
        return None;
    }
    let start = line.find("-*- ")? + 4;
    let stop = start + line[start..].find(" -*-")?;
    let mut coding = None;
    for command in line[start..stop].split(';') {
        let Some((key, value)) = command.split_once(':') else { continue };
        if key.trim() == "coding" {
            let value = value.trim_start();
            let end = value.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(value.len());
            coding = Some(value[..end].to_owned());
        }
    }
    coding
}

/// A byte sequence that does not decode.
struct Malformed {
    line: u64,
    offset: usize,
}

impl Malformed {
    fn error(&self, what: &str) -> ReadError {
        ReadError {
            limit: None,
            at: Some(At::Line(self.line)),
            field: None,
            message: format!("{what}: malformed bytes at offset {}", self.offset),
        }
    }
}

/// `bytes` decoded as `encoding` without replacement; `base` is the offset of
/// `bytes` in the file.
fn decode_with(encoding: &'static Encoding, bytes: &[u8], base: usize) -> Result<String, Malformed> {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let room = |decoder: &encoding_rs::Decoder, len: usize| {
        decoder.max_utf8_buffer_length_without_replacement(len).unwrap_or(len.saturating_mul(3)).max(16)
    };
    let mut text = String::with_capacity(room(&decoder, bytes.len()));
    let mut read = 0;
    loop {
        let (result, consumed) = decoder.decode_to_string_without_replacement(&bytes[read..], &mut text, true);
        read += consumed;
        match result {
            DecoderResult::InputEmpty => return Ok(text),
            DecoderResult::OutputFull => {
                let more = room(&decoder, bytes.len() - read);
                text.reserve(more);
            }
            DecoderResult::Malformed(bad, after) => {
                let offset = base + read.saturating_sub(after as usize + bad as usize);
                return Err(Malformed { line: line_of(&text), offset });
            }
        }
    }
}

/// Refuses a NUL character, which no glossary holds and a UTF-16 file without a byte
/// order mark is full of.
fn checked(text: String) -> Result<String, ReadError> {
    match text.find('\0') {
        None => Ok(text),
        Some(at) => Err(ReadError {
            limit: None,
            at: Some(At::Line(line_of(&text[..at]))),
            field: None,
            message: "NUL character: a UTF-16 file needs a byte order mark".into(),
        }),
    }
}

/// The line (from 1) that follows `text`: `\n`, `\r\n` and a lone `\r` end a line, as
/// OmegaT's line reader has it.
pub(super) fn line_of(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let breaks = bytes
        .iter()
        .enumerate()
        .filter(|&(index, &byte)| byte == b'\n' || (byte == b'\r' && bytes.get(index + 1) != Some(&b'\n')))
        .count();
    breaks as u64 + 1
}
