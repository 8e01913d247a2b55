//! Glossary files of other tools in tests: the fixtures of the `formats` crate, the
//! real files of the tools (`tests/data/formats/real/`), the values its readers
//! return and its writers take, and (feature `strategies`) the proptest strategies of
//! terms a format carries.

use std::borrow::Borrow;

use formats::{
    Alias, At, Entry, ExportInput, ExportTerm, Exported, Format, Languages, Lost, Parsed, ReadError, Skipped, Term,
};
use ledger_model::{AliasKind, SummaryPut};

use crate::records::term_id;

/// The bytes of a fixture of the `formats` crate, by its path under
/// `formats/tests/fixtures/`.
pub fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/../../formats/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|error| panic!("{full}: {error}"))
}

/// The bytes of a real file of a tool, by its path under `tests/data/formats/real/`
/// (each folder's README.md gives its provenance and licence).
pub fn real_file(path: &str) -> Vec<u8> {
    let full = format!("{}/../data/formats/real/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|error| panic!("{full}: {error}"))
}

/// Sources in `source`, renderings in Russian.
pub fn languages(source: &str) -> Languages {
    Languages { source: source.into(), target: "ru".into() }
}

/// `bytes` read as `format` of a book in `source`; a refusal fails the test.
pub fn read_as(source: &str, format: Format, bytes: &[u8]) -> Parsed {
    formats::read(format, bytes, &languages(source)).unwrap_or_else(|error| panic!("{format}: {error}"))
}

/// `bytes` read as `format` of a Japanese book; a refusal fails the test.
pub fn parse(format: Format, bytes: &[u8]) -> Parsed {
    read_as("ja", format, bytes)
}

/// An entry at `at` rendering `src` as `dst`, with `note`.
pub fn entry(at: At, src: &str, dst: &str, note: Option<&str>) -> Entry {
    Entry { at, term: Term { note: note.map(str::to_owned), ..Term::new(src, dst) } }
}

/// An entry a reader left out at `at`, and why.
pub fn skipped(at: At, reason: &str) -> Skipped {
    Skipped { at, reason: reason.into() }
}

/// The field `field` at `at` that a reader or writer could not carry, with its value
/// when it had one (`"value"`, `Some("value")` or `None`).
pub fn lost(at: impl Borrow<At>, field: &str, value: impl LostValue) -> Lost {
    Lost { at: at.borrow().clone(), field: field.into(), value: value.into_value() }
}

/// The value of a [`Lost`] field as tests write it: text, or maybe text.
pub trait LostValue {
    /// The value, if any.
    fn into_value(self) -> Option<String>;
}

impl LostValue for &str {
    fn into_value(self) -> Option<String> {
        Some(self.to_owned())
    }
}

impl LostValue for &String {
    fn into_value(self) -> Option<String> {
        Some(self.clone())
    }
}

impl LostValue for Option<&str> {
    fn into_value(self) -> Option<String> {
        self.map(str::to_owned)
    }
}

/// A refusal of a file, at `at` and `field` when it has them, saying `message`.
pub fn error(at: Option<At>, field: Option<&str>, message: &str) -> ReadError {
    ReadError { at, field: field.map(str::to_owned), message: message.into(), limit: None }
}

/// The place of an entry named by its uid (or id).
pub fn uid(uid: &str) -> At {
    At::Uid(uid.into())
}

/// `surface` as a variant of a term, in every chapter.
pub fn alias(surface: &str) -> Alias {
    Alias { surface: surface.into(), kind: AliasKind::Variant, window: None }
}

/// `terms` numbered T-1, T-2, … in order.
pub fn numbered(terms: impl IntoIterator<Item = Term>) -> Vec<ExportTerm> {
    (1..).zip(terms).map(|(number, term)| ExportTerm { id: term_id(number), term }).collect()
}

/// `terms` as an export of a Japanese book, numbered from T-1 in order.
pub fn export_input(terms: Vec<Term>) -> ExportInput {
    ExportInput {
        source_lang: "ja".into(),
        target_lang: "ru".into(),
        chapter: None,
        terms: numbered(terms),
        summaries: Vec::new(),
    }
}

/// What a book in `source` that imported `parsed` into an empty book exports: its
/// entries numbered from T-1 in file order, its summaries as they are.
pub fn as_export(parsed: &Parsed, source: &str) -> ExportInput {
    ExportInput {
        source_lang: source.into(),
        target_lang: "ru".into(),
        chapter: None,
        terms: numbered(terms_of(parsed)),
        summaries: parsed.summaries.iter().map(|summary| summary.put.clone()).collect(),
    }
}

/// The terms of what a reader returned, in file order.
pub fn terms_of(parsed: &Parsed) -> Vec<Term> {
    parsed.entries.iter().map(|entry| entry.term.clone()).collect()
}

/// The terms and summaries of what a reader returned, without where they were.
pub fn content_of(parsed: &Parsed) -> (Vec<Term>, Vec<SummaryPut>) {
    (terms_of(parsed), parsed.summaries.iter().map(|summary| summary.put.clone()).collect())
}

/// Read, write, read of `bytes` (the file `name`) as `format` of a book in `source` is
/// a fixed point: the second read has the first one's terms and summaries, and nothing
/// skipped or lost; writing it again gives the same bytes. Returns the first write,
/// for checks of what it lost.
pub fn assert_read_write_read(name: &str, source: &str, format: Format, bytes: &[u8]) -> Exported {
    let first = read_as(source, format, bytes);
    let written = formats::write(format, &as_export(&first, source)).unwrap_or_else(|error| panic!("{name}: {error}"));
    let second = read_as(source, format, &written.bytes);
    assert_eq!(content_of(&second), content_of(&first), "{name} as {format}: read, write, read changed the content");
    assert_eq!(
        (&second.skipped, &second.lost),
        (&vec![], &vec![]),
        "{name} as {format}: an export of what was read did not read back whole"
    );
    let again = formats::write(format, &as_export(&second, source)).unwrap_or_else(|error| panic!("{name}: {error}"));
    assert!(again.bytes == written.bytes, "{name} as {format}: the second export differs from the first");
    written
}

/// Write then read of `input` (an export of a book in `source`) as `format`: nothing
/// lost either way, nothing skipped, and the same terms in the same order and the same
/// summaries. Returns the write and the read, for further checks.
pub fn assert_write_read(source: &str, format: Format, input: &ExportInput) -> (Exported, Parsed) {
    let exported = formats::write(format, input).unwrap_or_else(|error| panic!("{format}: {error}"));
    assert_eq!(exported.lost, vec![], "{format}: the export lost something");
    let parsed = read_as(source, format, &exported.bytes);
    let terms: Vec<Term> = input.terms.iter().map(|export| export.term.clone()).collect();
    assert_eq!(content_of(&parsed), (terms, input.summaries.clone()), "{format}: write, read changed the content");
    assert_eq!((&parsed.skipped, &parsed.lost), (&vec![], &vec![]), "{format}: its own export did not read back whole");
    (exported, parsed)
}

/// Proptest strategies of what the glossary formats carry.
#[cfg(feature = "strategies")]
pub mod strategies {
    use formats::{ExportInput, Term};
    use proptest::prelude::*;

    use super::export_input;

    /// A CJK source of one to six Han, hiragana or katakana characters.
    pub fn cjk_src() -> impl Strategy<Value = String> {
        "[\u{4e00}-\u{4e40}\u{3041}-\u{3096}\u{30a1}-\u{30fa}]{1,6}"
    }

    /// A term of a line format: a CJK source, a Cyrillic rendering of up to three
    /// words, and maybe a note of CJK and then words of `note_word` characters (a
    /// regex class, such as `[a-zA-Z0-9]`).
    pub fn line_term(note_word: &str) -> impl Strategy<Value = Term> {
        let note = format!("[\u{4e00}-\u{4e40}\u{3041}-\u{3096}]{{1,6}}( {note_word}{{1,5}}){{0,2}}");
        let note = proptest::string::string_regex(&note).unwrap();
        (cjk_src(), "[а-яёА-ЯЁ]{1,8}( [а-яё]{1,8}){0,2}", proptest::option::of(note))
            .prop_map(|(src, dst, note)| Term { note, ..Term::new(src, dst) })
    }

    /// Up to 11 [`line_term`]s with distinct sources, as an export of a Japanese book.
    pub fn line_export(note_word: &str) -> impl Strategy<Value = ExportInput> {
        proptest::collection::vec(line_term(note_word), 0..12).prop_map(|terms| {
            let mut seen = std::collections::BTreeSet::new();
            export_input(terms.into_iter().filter(|term| seen.insert(term.src.clone())).collect())
        })
    }
}

/// What translate-toolkit (the reader of Weblate, Pootle and Virtaal) makes of a
/// file: one unit, as its store gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolkitUnit {
    /// `getid()`: a TBX `termEntry@id`, or the source.
    pub id: Option<String>,
    /// `source`.
    pub source: Option<String>,
    /// `target`.
    pub target: Option<String>,
    /// `getnotes()`, `None` when empty.
    pub notes: Option<String>,
}

/// The store of translate-toolkit a file is read with.
#[derive(Clone, Copy, Debug)]
pub enum ToolkitStore<'a> {
    /// `translate.storage.tbx.tbxfile`, with the source and target languages to pick
    /// (`None`: the first `langSet` is the source and the second the target).
    Tbx(Option<(&'a str, &'a str)>),
    /// `translate.storage.omegat.OmegaTFile`, the store of `.utf8` glossaries.
    OmegaT,
}

/// Reads `bytes` with translate-toolkit (`scripts/setup.sh` installs it, pinned) and
/// returns its units in order; fails, never skips, when python3 or translate-toolkit
/// is missing, and when the store refuses the file (with Python's message).
pub fn translate_toolkit(store: ToolkitStore<'_>, bytes: &[u8]) -> Vec<ToolkitUnit> {
    try_translate_toolkit(store, bytes)
        .unwrap_or_else(|error| panic!("translate-toolkit refused the file ({store:?}): {error}"))
}

/// [`translate_toolkit`], with a refusal of the file as the last line Python printed
/// to stderr (`AssertionError`, `ValueError: …`).
pub fn try_translate_toolkit(store: ToolkitStore<'_>, bytes: &[u8]) -> Result<Vec<ToolkitUnit>, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let probe = Command::new("python3").args(["-c", "import translate.storage.tbx, translate.storage.omegat"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "this test reads exports with the Python package translate-toolkit: run scripts/setup.sh ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => {
            panic!("python3 is needed to read exports with translate-toolkit ({error}): run scripts/setup.sh")
        }
    }
    // Each field as `=` and its UTF-8 in hex, or `-` for None: no quoting to get wrong.
    let script = "import io, sys\n\
                  from translate.storage import omegat, tbx\n\
                  data = io.BytesIO(sys.stdin.buffer.read())\n\
                  if sys.argv[1] == 'tbx':\n\
                  \x20   languages = sys.argv[2:4] if len(sys.argv) > 3 else (None, None)\n\
                  \x20   store = tbx.tbxfile(data, sourcelanguage=languages[0], targetlanguage=languages[1])\n\
                  else:\n\
                  \x20   store = omegat.OmegaTFile(data)\n\
                  def field(text):\n\
                  \x20   return '-' if text is None else '=' + text.encode('utf-8').hex()\n\
                  for unit in store.units:\n\
                  \x20   print(field(unit.getid()), field(unit.source), field(unit.target), field(unit.getnotes() or None))\n";
    let mut command = Command::new("python3");
    command.args(["-c", script]);
    match store {
        ToolkitStore::Tbx(languages) => {
            command.arg("tbx");
            if let Some((source, target)) = languages {
                command.args([source, target]);
            }
        }
        ToolkitStore::OmegaT => {
            command.arg("omegat");
        }
    }
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run python3");
    child.stdin.take().expect("stdin").write_all(bytes).expect("write to python3");
    let output = child.wait_with_output().expect("python3");
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(stderr.lines().last().unwrap_or("").to_owned());
    }
    let field = |text: &str| -> Option<String> {
        let hex = text.strip_prefix('=')?;
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex from the script"))
            .collect();
        Some(String::from_utf8(bytes).expect("UTF-8 from the script"))
    };
    Ok(String::from_utf8(output.stdout)
        .expect("ASCII from the script")
        .lines()
        .map(|line| {
            let fields: Vec<Option<String>> = line.split(' ').map(field).collect();
            let [id, source, target, notes] = <[Option<String>; 4]>::try_from(fields).expect("four fields a unit");
            ToolkitUnit { id, source, target, notes }
        })
        .collect())
}

/// Runs `formats/tests/fixtures/tmx/check_tmx.py` on `files` (TMX documents whose
/// sources are in `source_lang` and translations in `target_lang`): each validated
/// against the TMX 1.4b DTD with lxml and read with translate-toolkit's `tmxfile`.
/// Its output is one JSON line per file (see the script). Fails, never skips, when
/// python3, lxml or translate-toolkit is missing.
pub fn check_tmx(source_lang: &str, target_lang: &str, files: &[std::path::PathBuf]) -> std::process::Output {
    use std::process::Command;
    let probe = Command::new("python3").args(["-c", "import lxml.etree, translate.storage.tmx"]).output();
    match probe {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "checking TMX exports needs the Python packages lxml and translate-toolkit: run scripts/setup.sh ({})",
            String::from_utf8_lossy(&output.stderr).trim()
        ),
        Err(error) => panic!("python3 is needed to check TMX exports ({error}): run scripts/setup.sh"),
    }
    let script = format!("{}/../../formats/tests/fixtures/tmx/check_tmx.py", env!("CARGO_MANIFEST_DIR"));
    Command::new("python3").arg(script).arg(source_lang).arg(target_lang).args(files).output().expect("run python3")
}
