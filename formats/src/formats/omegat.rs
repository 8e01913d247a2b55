//! OmegaT glossaries: tab-separated (`.txt`, `.utf8`, `.tab`, `.tsv`) and
//! comma-separated (`.csv`), read as OmegaT's `GlossaryReaderTSV` and
//! `GlossaryReaderCSV` read them.
//!
//! A line starting with `#` is a comment; the columns are source, target and comment
//! (the note), each trimmed; further columns are reported lost; a line with fewer
//! than two columns or an empty source is not an entry (OmegaT skips it silently,
//! lorebank reports it). OmegaT NFC-normalises every field and lorebank does the
//! same, with a notice where that changes a field. Several lines with one source are
//! alternative translations in OmegaT; a record has one rendering, so the first is
//! kept and the later ones are skipped. The encoding is decided in
//! [`omegat_encoding`](super::omegat_encoding). docs/formats.md maps it all.

use unicode_normalization::UnicodeNormalization;

use crate::formats::text::{non_empty, one_line};
use crate::{
    At, Entry, ExportInput, Exported, Fields, Format, Lost, Notice, Parsed, ReadError, Skipped, Term, WriteError,
};

#[path = "omegat_encoding.rs"]
mod omegat_encoding;

pub(super) const FIELDS: Fields = Fields(Fields::DST.0 | Fields::NOTE.0);

const ACTIVATION: &str = "OmegaT shows a glossary entry when the tokens of its source (lower-cased, stemmed; an \
    all-caps term only in all-caps text) occur among the tokens of the segment, or, for a CJK term in a language \
    written without spaces, when the term occurs in the segment as a substring; lorebank matches keys \
    leftmost-longest on folded text, inside their windows";

pub(super) fn read_tsv(bytes: &[u8]) -> Result<Parsed, ReadError> {
    let (text, notice) = omegat_encoding::decode(bytes, true)?;
    let mut rows = Rows::new(Separator::Tab, notice);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for (index, line) in lines(text).enumerate() {
        if line.starts_with('#') {
            continue;
        }
        let columns: Vec<&str> = line.split('\t').collect();
        rows.row(index as u64 + 1, &columns);
    }
    Ok(rows.finish())
}

pub(super) fn read_csv(bytes: &[u8]) -> Result<Parsed, ReadError> {
    // OmegaT reads no coding comment in a CSV file: it detects the encoding.
    let (text, notice) = omegat_encoding::decode(bytes, false)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    // The CSV reader's positions leave comment lines out: they are blanked instead.
    let text = &uncommented(text)?;
    let mut rows = Rows::new(Separator::Comma, notice);
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut lines_before = LineCounter { text: text.as_bytes(), counted_to: 0, line: 1 };
    for record in reader.records() {
        let record = record.map_err(|error| ReadError {
            limit: None,
            at: error.position().map(|position| At::Line(line_at(text.as_bytes(), position.byte()))),
            field: None,
            message: format!("malformed CSV: {error}"),
        })?;
        let line = lines_before.line_at(record.position().map_or(0, |position| position.byte()));
        let columns: Vec<&str> = record.iter().collect();
        if columns.iter().any(|column| column.contains(['\n', '\r'])) {
            rows.parsed.notices.push(Notice {
                at: Some(At::Line(line)),
                message: "a quoted field holds a line break, kept; OmegaT reads a CSV file line by line and splits \
                          this entry there"
                    .into(),
            });
        }
        rows.row(line, &columns);
    }
    Ok(rows.finish())
}

/// [`line_at`] for offsets that only grow (the records of one reader): counts each
/// byte once instead of from the start of the text for every record.
struct LineCounter<'t> {
    text: &'t [u8],
    counted_to: usize,
    line: u64,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: u64) -> u64 {
        let bytes = self.text;
        let mut end = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
        while end < bytes.len() && matches!(bytes[end], b'\n' | b'\r') {
            end += 1;
        }
        if end < self.counted_to {
            return line_at(self.text, offset);
        }
        self.line += bytes[self.counted_to..end].iter().filter(|&&byte| byte == b'\n').count() as u64;
        self.counted_to = end;
        self.line
    }
}

/// The line (from 1, counting `\n` as the CSV reader does) of the record the CSV
/// reader places at byte `offset` of `text`: its position is the end of the record
/// before, so the blank lines after that are skipped.
fn line_at(bytes: &[u8], offset: u64) -> u64 {
    let mut end = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
    while end < bytes.len() && matches!(bytes[end], b'\n' | b'\r') {
        end += 1;
    }
    bytes[..end].iter().filter(|&&byte| byte == b'\n').count() as u64 + 1
}

/// The lines of `text`, ended by `\n`, `\r\n` or a lone `\r` (as OmegaT's line
/// reader ends them); no empty last line after a final line break.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = if rest[end..].starts_with("\r\n") { 2 } else { usize::from(end < rest.len()) };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// `text` with every comment line (a `#` where a record starts) emptied, its line
/// break kept. Refuses what a CSV reader would have to guess at: a quote inside an
/// unquoted field, text after a closing quote, a quoted field never closed. The line
/// numbers count `\n` as the CSV reader does.
fn uncommented(text: &str) -> Result<String, ReadError> {
    let mut kept = String::with_capacity(text.len());
    #[derive(Clone, Copy)]
    enum State {
        RecordStart,
        Comment,
        FieldStart,
        Unquoted,
        /// Inside a quoted field opened on this line.
        Quoted(u64),
        /// After a quote inside a quoted field: its end, or the first of two.
        AfterQuote(u64),
    }
    let mut state = State::RecordStart;
    let mut line = 1;
    for c in text.chars() {
        let end = c == '\n' || c == '\r';
        state = match (state, c) {
            (State::RecordStart, '#') => State::Comment,
            (State::Comment, _) if !end => State::Comment,
            (State::RecordStart | State::FieldStart, '"') => State::Quoted(line),
            (State::Quoted(opened), '"') => State::AfterQuote(opened),
            (State::Quoted(opened), _) | (State::AfterQuote(opened), '"') => State::Quoted(opened),
            (State::Unquoted, '"') => {
                return Err(ReadError::at(
                    At::Line(line),
                    "quote",
                    "a quote inside an unquoted field; quote the whole field and double the quotes in it",
                ))
            }
            (State::AfterQuote(_), c) if c != ',' && !end => {
                return Err(ReadError::at(
                    At::Line(line),
                    "quote",
                    "text after the closing quote of a field; a quote inside a quoted field is written twice",
                ))
            }
            (_, ',') => State::FieldStart,
            (_, _) if end => State::RecordStart,
            _ => State::Unquoted,
        };
        if !matches!(state, State::Comment) {
            kept.push(c);
        }
        if c == '\n' {
            line += 1;
        }
    }
    match state {
        State::Quoted(opened) => {
            Err(ReadError::at(At::Line(opened), "quote", "a quoted field is not closed before the end of the file"))
        }
        _ => Ok(kept),
    }
}

#[derive(Clone, Copy)]
enum Separator {
    Tab,
    Comma,
}

/// The rows of a file, turned into entries, skipped lines, lost columns and notices.
struct Rows {
    separator: Separator,
    parsed: Parsed,
    /// Every entry kept so far: its source, rendering, note and line.
    kept: std::collections::BTreeMap<String, (String, Option<String>, u64)>,
}

impl Rows {
    fn new(separator: Separator, notice: Option<Notice>) -> Rows {
        let parsed = Parsed { notices: notice.into_iter().collect(), ..Parsed::default() };
        Rows { separator, parsed, kept: std::collections::BTreeMap::new() }
    }

    /// One line (for CSV, one record starting on `line`), already split.
    fn row(&mut self, line: u64, columns: &[&str]) {
        let at = At::Line(line);
        if columns.iter().all(|column| trim(column).is_empty()) {
            return;
        }
        if columns.len() < 2 {
            let reason = match self.separator {
                Separator::Tab => "no tab: fewer than 2 columns",
                Separator::Comma => "no comma: fewer than 2 columns",
            };
            self.parsed.skipped.push(Skipped { at, reason: reason.into() });
            return;
        }
        let field = |index: usize| columns.get(index).map_or("", |column| trim(column));
        let (src, dst, note): (String, String, String) =
            (field(0).nfc().collect(), field(1).nfc().collect(), field(2).nfc().collect());
        if src.is_empty() {
            self.parsed.skipped.push(Skipped { at, reason: "empty source term".into() });
            return;
        }
        if dst.is_empty() {
            self.parsed.skipped.push(Skipped { at, reason: "no dst".into() });
            return;
        }
        let note = non_empty(&note);
        if let Some((first_dst, first_note, first)) = self.kept.get(&src) {
            let reason = if *first_dst == dst && *first_note == note {
                format!("repeats line {first}")
            } else {
                format!("alternative translation of line {first}")
            };
            self.parsed.skipped.push(Skipped { at, reason });
            return;
        }
        // OmegaT's trim removes only ASCII controls and spaces; lorebank also trims
        // Unicode whitespace (an ideographic space too).
        let java_trim = |text: &str| text.trim_matches(|c: char| c <= ' ').len();
        if columns.iter().take(3).any(|column| java_trim(column) != trim(column).len()) {
            self.parsed.notices.push(Notice {
                at: Some(at.clone()),
                message: "Unicode whitespace around a field trimmed (OmegaT keeps it)".into(),
            });
        }
        if (0..3).any(|index| field(index).nfc().ne(field(index).chars())) {
            self.parsed.notices.push(Notice {
                at: Some(at.clone()),
                message: "a field normalized to NFC, as OmegaT normalizes it".into(),
            });
        }
        for (index, extra) in columns.iter().enumerate().skip(3) {
            if !trim(extra).is_empty() {
                self.parsed.lost.push(Lost {
                    at: at.clone(),
                    field: format!("column {}", index + 1),
                    value: Some(short(trim(extra))),
                });
            }
        }
        self.kept.insert(src.clone(), (dst.clone(), note.clone(), line));
        self.parsed.entries.push(Entry { at, term: Term { note, ..Term::new(src, dst) } });
    }

    fn finish(mut self) -> Parsed {
        if !self.parsed.entries.is_empty() {
            self.parsed.notices.push(Notice { at: None, message: ACTIVATION.into() });
        }
        self.parsed
    }
}

/// `text` without the ASCII controls and spaces OmegaT trims, nor Unicode whitespace.
fn trim(text: &str) -> &str {
    text.trim_matches(|c: char| c <= ' ' || c.is_whitespace())
}

/// The value of a lost column, at most 40 characters.
fn short(text: &str) -> String {
    let mut short: String = text.chars().take(40).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// A field as OmegaT will read it back: without the characters that end its line
/// (and for a tab-separated file, without tabs and control characters), trimmed, NFC.
/// Reports each change as lost.
fn written(lost: &mut Vec<Lost>, at: &At, name: &str, text: &str, separator: Separator) -> String {
    let mut report =
        |value: &str| lost.push(Lost { at: at.clone(), field: name.to_owned(), value: Some(value.into()) });
    let cleaned = match separator {
        Separator::Tab => {
            let (line, changed) = one_line(text);
            if changed {
                report("tab, line break or control character");
            }
            line
        }
        Separator::Comma => {
            let line = text.replace("\r\n", " ").replace(['\r', '\n'], " ");
            if line != text {
                report("line break (OmegaT reads a CSV file line by line)");
            }
            line
        }
    };
    let trimmed = trim(&cleaned);
    if trimmed.len() != cleaned.len() {
        report("surrounding whitespace (OmegaT trims it)");
    }
    let normalized: String = trimmed.nfc().collect();
    if normalized != trimmed {
        report("not NFC (written normalized, as OmegaT reads it)");
    }
    normalized
}

/// The rows of an export: one per surface (the term's src, then each alias with the
/// term's dst and note), as `[key, dst, note]` or `[key, dst]`.
fn export_rows(input: &ExportInput, separator: Separator) -> (Vec<Vec<String>>, Vec<Lost>) {
    let mut rows = Vec::new();
    let mut lost = Vec::new();
    for export in &input.terms {
        let term = &export.term;
        let at = At::Record(export.id);
        let dst = written(&mut lost, &at, "dst", &term.dst, separator);
        let note = term.note.as_deref().map(|note| written(&mut lost, &at, "note", note, separator));
        let mut keys = vec![("src", written(&mut lost, &at, "src", &term.src, separator))];
        keys.extend(
            term.aliases.iter().map(|alias| ("aliases", written(&mut lost, &at, "aliases", &alias.surface, separator))),
        );
        for (name, mut key) in keys {
            // A tab-separated export has no header line, so a key may start the file,
            // where OmegaT and lorebank read a U+FEFF as its byte order mark (and
            // translate-toolkit keeps it): left out of every key, and reported.
            if matches!(separator, Separator::Tab) && key.starts_with('\u{feff}') {
                lost.push(Lost {
                    at: at.clone(),
                    field: name.to_owned(),
                    value: Some("starts with U+FEFF, which reads as a byte order mark".into()),
                });
                key = trim(key.trim_start_matches('\u{feff}')).to_owned();
                if key.is_empty() {
                    continue;
                }
            }
            let mut row = vec![key, dst.clone()];
            row.extend(note.iter().filter(|note| !note.is_empty()).cloned());
            rows.push(row);
        }
    }
    (rows, lost)
}

/// UTF-8 without a byte order mark or a header line, `src⇥dst[⇥note]` lines ended
/// by `\n`: what OmegaT reads from a `.utf8` file (UTF-8 whatever it holds) and
/// translate-toolkit's `OmegaTFile` reads line for line (it takes OmegaT's header
/// line for an entry). A key starting with `#` (which would make a comment) is written
/// after a space, which OmegaT and lorebank trim.
pub(super) fn write_tsv(input: &ExportInput) -> Result<Exported, WriteError> {
    let (rows, lost) = export_rows(input, Separator::Tab);
    let mut out = String::new();
    for row in rows {
        if row[0].starts_with('#') {
            out.push(' ');
        }
        out.push_str(&row.join("\t"));
        out.push('\n');
    }
    Ok(Exported { bytes: out.into_bytes(), lost })
}

/// UTF-8 with a byte order mark (OmegaT detects the encoding of a CSV file, and the
/// mark makes the detection certain), no header, `src,dst[,note]` records quoted
/// where needed (a field with `,`, `"` or `#`), ended by `\n`. Line breaks become
/// spaces: OmegaT reads a CSV file line by line.
pub(super) fn write_csv(input: &ExportInput) -> Result<Exported, WriteError> {
    let (rows, lost) = export_rows(input, Separator::Comma);
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .from_writer(b"\xEF\xBB\xBF".to_vec());
    let failed = |error: &dyn std::fmt::Display| WriteError { format: Format::OmegaTCsv, message: error.to_string() };
    for row in rows {
        writer.write_record(&row).map_err(|error| failed(&error))?;
    }
    let bytes = writer.into_inner().map_err(|error| failed(&error))?;
    Ok(Exported { bytes, lost })
}
