//! The book's source text, a chapter at a time ([docs/cli.md](../../docs/cli.md#source)):
//! `source_add` (one chapter's text), `source_import` (a folder's files, each
//! chapter numbered by its file name, [`chapter_of_file`]), `source_list` and
//! `source_text`.
//!
//! A chapter's text is a blob named by its blake3 ([`source_text_id`]) and a
//! `source_set` naming it, both in one batch. The text is stored byte for byte as
//! given, but for a UTF-8 byte order mark in front, which is dropped: line ends
//! (CRLF or LF) are kept as they are. It must be UTF-8 and not empty, and at most
//! [`SOURCE_TEXT_BYTES_MAX`] bytes; an import's files together at most
//! [`SOURCE_IMPORT_BYTES_MAX`] and [`SOURCE_IMPORT_FILES_MAX`] files (the bounds of
//! what one call reads, in one place: `ledger_model::limits`).

use std::collections::BTreeMap;

use ledger_model::limits::input::{SOURCE_IMPORT_BYTES_MAX, SOURCE_IMPORT_FILES_MAX};
use ledger_model::limits::SOURCE_TEXT_BYTES_MAX;
use ledger_model::{source_text_id, Body, Hash32, Seq, SourceSet};

use crate::book::Book;
use crate::error::BookError;
use crate::service::{Labelled, WriteOptions, Written};

/// The UTF-8 byte order mark, dropped from the front of a text.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The chunk key a scan of a whole chapter's source text is recorded under
/// ([`Book::scan`] without a text): its sightings read `chN/source@…`.
pub const SOURCE_CHUNK_KEY: &str = "source";

/// The default source of the event `source_add` writes (when the write names none).
pub const SOURCE_ADD_SOURCE: &str = "source add";

/// A chapter's text as the book holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceChapter {
    /// The chapter.
    pub chapter: u32,
    /// Its title, if it has one.
    pub title: Option<String>,
    /// The blake3 of the text, the id of its blob.
    pub text: Hash32,
    /// The text's length in bytes.
    pub bytes: u64,
    /// The text's length in characters (Unicode scalar values).
    pub chars: u64,
    /// The event that set it.
    pub seq: Seq,
}

/// One chapter of a `source_add` or `source_import`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePut {
    /// The file it was read from (`source_import`), empty for `source_add`.
    pub file: String,
    /// The chapter.
    pub chapter: u32,
    /// The title it has now.
    pub title: Option<String>,
    /// The blake3 of the text.
    pub text: Hash32,
    /// The text's length in bytes (after the byte order mark is dropped).
    pub bytes: u64,
    /// The text's length in characters.
    pub chars: u64,
    /// Whether the chapter changed (false: the same text and title were there).
    pub changed: bool,
}

/// What `source_add` or `source_import` did.
#[derive(Debug)]
pub struct SourceWritten {
    /// Each chapter, in chapter order.
    pub chapters: Vec<SourcePut>,
    /// The write, when a chapter changed.
    pub written: Option<Written>,
}

/// The chapter number a file's name gives: the first run of ASCII digits in its
/// stem (the name after the last `/` or `\`, before the last `.` unless it is the
/// first character), read as a decimal number from 1 (`001.txt` → 1,
/// `ch12-title.md` → 12, `第3章.txt` → 3, `3.5.txt` → 3). A stem without an ASCII digit
/// (`第三章.txt`, `第３章.txt`, full-width digits being other characters), a number 0
/// or a number past `u32::MAX` is refused, naming the file.
pub fn chapter_of_file(name: &str) -> Result<u32, BookError> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = match base.rfind('.') {
        Some(dot) if dot > 0 => &base[..dot],
        _ => base,
    };
    let refuse = |why: &str| BookError::Invalid(format!("{name}: {why}"));
    let Some(start) = stem.find(|c: char| c.is_ascii_digit()) else {
        return Err(refuse("no chapter number in the file name (the first run of ASCII digits 0-9 in its stem)"));
    };
    let digits: &str = &stem[start..];
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    let digits = &digits[..end];
    match digits.parse::<u32>() {
        Ok(0) => Err(refuse("chapter number 0 in the file name: chapters are numbered from 1")),
        Ok(chapter) => Ok(chapter),
        Err(_) => Err(refuse(&format!("chapter number {digits} in the file name is past {}", u32::MAX))),
    }
}

/// The text of `bytes`, as stored: a byte order mark dropped, the rest UTF-8 and kept
/// byte for byte, not empty and within [`SOURCE_TEXT_BYTES_MAX`]. `what` names the
/// input in errors (`text`, a file name).
pub fn source_text_of<'b>(what: &str, bytes: &'b [u8]) -> Result<&'b str, BookError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    if bytes.len() as u64 > SOURCE_TEXT_BYTES_MAX {
        return Err(BookError::TooLarge(format!(
            "{what}: the text has {} bytes: over the limit SOURCE_TEXT_BYTES_MAX of {SOURCE_TEXT_BYTES_MAX} bytes",
            bytes.len()
        )));
    }
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let at = error.valid_up_to();
        let line = bytes[..at].iter().filter(|byte| **byte == b'\n').count() + 1;
        BookError::Invalid(format!("{what}: not UTF-8: line {line}, byte {at} is not the start of a UTF-8 character"))
    })?;
    if text.is_empty() {
        return Err(BookError::Invalid(format!("{what}: the text is empty")));
    }
    Ok(text)
}

impl Book {
    /// Sets chapter `chapter`'s text (and title) to `text`, as [`source_text_of`]
    /// reads it, in one batch with its blob; the same text and title again append
    /// nothing.
    pub fn source_add(
        &mut self,
        chapter: u32,
        title: Option<String>,
        text: &[u8],
        write: &WriteOptions,
    ) -> Result<SourceWritten, BookError> {
        if chapter == 0 {
            return Err(BookError::InvalidField {
                field: "chapter",
                message: "chapters are numbered from 1, got 0".into(),
            });
        }
        let text = source_text_of("text", text)?;
        let put = Put { file: String::new(), chapter, title, text };
        self.source_write(vec![put], write, SOURCE_ADD_SOURCE)
    }

    /// Sets the text of a chapter per file, each numbered by its name
    /// ([`chapter_of_file`]), all in one batch or none: a file without a number, two
    /// files of one chapter, a text that is not UTF-8 or too large refuse them all,
    /// naming the file. A chapter keeps the title it has. Each event's source is its
    /// file's name.
    pub fn source_import(
        &mut self,
        files: Vec<(String, Vec<u8>)>,
        write: &WriteOptions,
    ) -> Result<SourceWritten, BookError> {
        if files.is_empty() {
            return Err(BookError::Invalid("no files to import".into()));
        }
        if files.len() > SOURCE_IMPORT_FILES_MAX {
            return Err(BookError::TooLarge(format!(
                "{} files: over the limit SOURCE_IMPORT_FILES_MAX of {SOURCE_IMPORT_FILES_MAX}",
                files.len()
            )));
        }
        let total: u64 = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
        if total > SOURCE_IMPORT_BYTES_MAX {
            return Err(BookError::TooLarge(format!(
                "the files hold {total} bytes: over the limit SOURCE_IMPORT_BYTES_MAX of {SOURCE_IMPORT_BYTES_MAX} bytes"
            )));
        }
        let mut by_chapter: BTreeMap<u32, &str> = BTreeMap::new();
        for (name, _) in &files {
            let chapter = chapter_of_file(name)?;
            if let Some(first) = by_chapter.insert(chapter, name) {
                return Err(BookError::Invalid(format!("{first} and {name} are both chapter {chapter}")));
            }
        }
        let state = self.state(None)?;
        let mut puts = Vec::with_capacity(files.len());
        for (name, bytes) in &files {
            let chapter = chapter_of_file(name)?;
            let text = source_text_of(name, bytes)?;
            let title = state.source_chapter(chapter).and_then(|(source, _)| source.title.clone());
            puts.push(Put { file: name.clone(), chapter, title, text });
        }
        drop(state);
        puts.sort_by_key(|put| put.chapter);
        self.source_write(puts, write, "")
    }

    /// Every chapter that has text, in chapter order (each text read to count its
    /// characters).
    pub fn source_list(&mut self) -> Result<Vec<SourceChapter>, BookError> {
        let state = self.state(None)?;
        let mut chapters = Vec::new();
        for (source, provenance) in state.source_chapters() {
            let text = self.stored_text(source)?;
            chapters.push(chapter_of(source, provenance.seq, &text));
        }
        Ok(chapters)
    }

    /// Chapter `chapter`'s text, as stored, with what the list says of it.
    pub fn source_text(&mut self, chapter: u32) -> Result<(SourceChapter, String), BookError> {
        let state = self.state(None)?;
        let Some((source, provenance)) = state.source_chapter(chapter) else {
            return Err(BookError::NotFound { what: format!("source text of chapter {chapter}") });
        };
        let text = self.stored_text(source)?;
        Ok((chapter_of(source, provenance.seq, &text), text))
    }

    /// The name alarm ([`Book::scan_names`]) over a chunk's `text` under
    /// `chunk_key`, or, without a text, over the whole of chapter `chapter`'s source
    /// text, under `chunk_key` or [`SOURCE_CHUNK_KEY`]: the whole-book scan. A text
    /// without a chunk key, or a chapter without source text, is refused naming the
    /// field (`chunk`, `chapter`).
    pub fn scan(
        &mut self,
        chapter: u32,
        chunk_key: Option<&str>,
        text: Option<&str>,
        dry_run: bool,
        write: &WriteOptions,
    ) -> Result<crate::review::Scanned, BookError> {
        match (text, chunk_key) {
            (Some(text), Some(chunk_key)) => self.scan_names(chapter, chunk_key, text, dry_run, write),
            (Some(_), None) => Err(BookError::InvalidField {
                field: "chunk",
                message: "a chunk's text needs its chunk key; without a text the chapter's source text is scanned"
                    .into(),
            }),
            (None, chunk_key) => {
                let text = match self.source_text(chapter) {
                    Ok((_, text)) => text,
                    Err(BookError::NotFound { .. }) => {
                        return Err(BookError::InvalidField {
                            field: "chapter",
                            message: format!(
                                "chapter {chapter} has no source text to scan: add it (source add) or give the chunk's text"
                            ),
                        })
                    }
                    Err(error) => return Err(error),
                };
                self.scan_names(chapter, chunk_key.unwrap_or(SOURCE_CHUNK_KEY), &text, dry_run, write)
            }
        }
    }

    /// The stored text a `source_set` names, checked against its id.
    pub(crate) fn stored_text(&self, source: &SourceSet) -> Result<String, BookError> {
        let Some(id) = source.text else {
            return Err(BookError::NotFound { what: format!("source text of chapter {}", source.chapter) });
        };
        let corrupted =
            |why: &str| BookError::Corrupted(format!("blob {id} (source text of chapter {}) {why}", source.chapter));
        let bytes = self.ledger().blob(id)?.ok_or_else(|| corrupted("is not stored"))?;
        if source_text_id(&bytes) != id {
            return Err(corrupted("does not hash to its id"));
        }
        String::from_utf8(bytes).map_err(|_| corrupted("is not UTF-8"))
    }

    /// Writes the chapters of `puts` that change, in one batch with their blobs.
    fn source_write(
        &mut self,
        puts: Vec<Put<'_>>,
        write: &WriteOptions,
        default_source: &str,
    ) -> Result<SourceWritten, BookError> {
        let state = self.state(None)?;
        let mut chapters = Vec::with_capacity(puts.len());
        let mut bodies = Vec::new();
        let mut blobs: Vec<(Hash32, Vec<u8>)> = Vec::new();
        for put in puts {
            let id = source_text_id(put.text.as_bytes());
            let body =
                SourceSet { chapter: put.chapter, title: put.title, text: Some(id), bytes: put.text.len() as u64 };
            let changed = state.source_chapter(put.chapter).is_none_or(|(current, _)| *current != body);
            if changed {
                if !blobs.iter().any(|(known, _)| *known == id) {
                    blobs.push((id, put.text.as_bytes().to_vec()));
                }
                let label = if put.file.is_empty() { format!("chapter {}", put.chapter) } else { put.file.clone() };
                let source = if put.file.is_empty() { default_source.to_owned() } else { put.file.clone() };
                bodies.push(Labelled { label, default_source: source, body: Body::SourceSet(body.clone()) });
            }
            chapters.push(SourcePut {
                file: put.file,
                chapter: put.chapter,
                title: body.title,
                text: id,
                bytes: body.bytes,
                chars: put.text.chars().count() as u64,
                changed,
            });
        }
        drop(state);
        let written = if bodies.is_empty() { None } else { Some(self.submit_labelled(write, bodies, blobs)?) };
        Ok(SourceWritten { chapters, written })
    }
}

/// One chapter to write: its text read, its title decided.
struct Put<'t> {
    file: String,
    chapter: u32,
    title: Option<String>,
    text: &'t str,
}

fn chapter_of(source: &SourceSet, seq: Seq, text: &str) -> SourceChapter {
    SourceChapter {
        chapter: source.chapter,
        title: source.title.clone(),
        text: source.text.unwrap_or_default(),
        bytes: source.bytes,
        chars: text.chars().count() as u64,
        seq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chapter_is_the_first_run_of_ascii_digits_of_the_stem() {
        for (name, chapter) in [
            ("001.txt", 1),
            ("ch12-title.md", 12),
            ("第3章.txt", 3),
            ("dir/v2/第10章 风起.txt", 10),
            ("3.5.txt", 3),
            ("12", 12),
            (".7", 7),
        ] {
            assert_eq!(chapter_of_file(name).unwrap(), chapter, "{name}");
        }
        for (name, why) in [
            ("第三章.txt", "no chapter number"),
            ("第３章.txt", "no chapter number"),
            ("v2/notes.txt", "no chapter number"),
            ("000.txt", "chapter number 0"),
            ("99999999999.txt", "past 4294967295"),
        ] {
            let error = chapter_of_file(name).unwrap_err().to_string();
            assert!(error.starts_with(&format!("{name}: ")) && error.contains(why), "{name}: {error}");
        }
    }

    #[test]
    fn a_text_loses_its_bom_keeps_its_line_ends_and_must_be_utf8() {
        assert_eq!(source_text_of("t", b"\xEF\xBB\xBF\xE7\xAB\xA0\r\n").unwrap(), "章\r\n");
        let error = source_text_of("ch1.txt", b"ok\nok\n\xFFbad").unwrap_err().to_string();
        assert_eq!(error, "ch1.txt: not UTF-8: line 3, byte 6 is not the start of a UTF-8 character");
        assert!(source_text_of("t", b"\xEF\xBB\xBF").unwrap_err().to_string().contains("empty"));
    }
}
