//! What the format test files share: fixtures, the languages of the test books, and
//! builders of the values `read` returns and `write` takes.

// A test reads its fixtures and runs other tools; the crate itself does no I/O (clippy.toml).
#![allow(clippy::disallowed_methods)]
#![allow(dead_code)]

use formats::{read, Alias, At, Entry, ExportInput, ExportTerm, Format, Languages, Parsed, Skipped, Term};
use ledger_model::{AliasKind, RecordId};

/// A fixture's bytes, by its path under `tests/fixtures/`.
pub fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|error| panic!("{full}: {error}"))
}

/// Japanese sources, Russian renderings.
pub fn languages() -> Languages {
    Languages { source: "ja".into(), target: "ru".into() }
}

/// `bytes` read as `format`; a refusal fails the test.
pub fn parse(format: Format, bytes: &[u8]) -> Parsed {
    read(format, bytes, &languages()).unwrap_or_else(|error| panic!("{format}: {error}"))
}

pub fn entry(at: At, src: &str, dst: &str, note: Option<&str>) -> Entry {
    Entry { at, term: Term { note: note.map(str::to_owned), ..Term::new(src, dst) } }
}

pub fn skipped(at: At, reason: &str) -> Skipped {
    Skipped { at, reason: reason.into() }
}

pub fn id(number: u32) -> RecordId {
    format!("T-{number}").parse().expect("record id")
}

/// `terms` as an export of a Japanese book, numbered from T-1 in order.
pub fn export_input(terms: Vec<Term>) -> ExportInput {
    ExportInput {
        source_lang: "ja".into(),
        target_lang: "ru".into(),
        chapter: None,
        terms: terms
            .into_iter()
            .enumerate()
            .map(|(index, term)| ExportTerm { id: id(index as u32 + 1), term })
            .collect(),
        summaries: Vec::new(),
    }
}

pub fn alias(surface: &str) -> Alias {
    Alias { surface: surface.into(), kind: AliasKind::Variant, window: None }
}

/// The terms of what a reader returned, in file order.
pub fn terms_of(parsed: &Parsed) -> Vec<Term> {
    parsed.entries.iter().map(|entry| entry.term.clone()).collect()
}
