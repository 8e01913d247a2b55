//! The glossary formats of the tools translation teams already use (GalTransl,
//! SakuraLLM, LinguaGacha, AiNiee, SillyTavern, NovelAI, OmegaT, TBX), read into
//! lorebank's model and written from it.
//!
//! This crate owns the bytes of foreign files: their grammars, encodings, field
//! mappings, and the account of everything a mapping cannot carry. A reader turns a
//! file into [`Parsed`] entries plus what it skipped ([`Skipped`]), what it could not
//! represent ([`Lost`]) and what will behave differently ([`Notice`]); a writer turns
//! an [`ExportInput`] into bytes plus what the format cannot hold. Nothing is lost
//! silently: every field a mapping drops is reported, counted by the caller.
//!
//! Beside the glossaries, [`tmx`] writes a translation memory (TMX 1.4b) of the
//! source texts and checked translations a book gathers; it is written only, never
//! read.
//!
//! It must not do I/O (bytes in, bytes out), read a clock or draw random numbers, and
//! it knows nothing of books, revisions or the ledger: matching imported entries to
//! records, allocating ids and writing events belong to `book`. Every file format
//! detail lives here and nowhere else. docs/formats.md maps every field.

use std::fmt;

use ledger_model::{AliasKind, Gender, RecordId, SecondaryKeys, Status, SummaryPut, Window};

mod formats;
pub mod tmx;

pub use formats::detect;

/// A glossary format lorebank reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// GalTransl GPT dictionary: `src⇥dst⇥note` lines (also 4 spaces and `src->dst #note`).
    GalTransl,
    /// SakuraLLM `gpt_dict` as JSON: a list of `{src, dst, info}`.
    Sakura,
    /// SakuraLLM `gpt_dict` as text: `src->dst #info` lines.
    SakuraText,
    /// LinguaGacha glossary JSON: a list of `{src, dst, info, regex, case_sensitive}`.
    LinguaGacha,
    /// LinguaGacha glossary XLSX: columns src, dst, info, regex, case_sensitive.
    LinguaGachaXlsx,
    /// AiNiee `prompt_dictionary` JSON: a list of `{src, dst, info}`.
    AiNiee,
    /// AiNiee `prompt_dictionary` XLSX: columns 原文, 译文, 描述.
    AiNieeXlsx,
    /// SillyTavern World Info JSON: `{"entries": {uid: entry}}`.
    SillyTavern,
    /// NovelAI `.lorebook` JSON.
    NovelAi,
    /// OmegaT tab-separated glossary (`.txt`, `.utf8`, `.tab`, `.tsv`); an export is
    /// written for a `.utf8` file.
    OmegaT,
    /// OmegaT comma-separated glossary (`.csv`).
    OmegaTCsv,
    /// TBX: reads TBX 2008 (`martif`) and TBX-Basic 2019 (DCA and DCT); writes
    /// TBX-Basic 2019 DCA.
    Tbx,
    /// TBX 2008: reads what [`Format::Tbx`] reads; writes TBX-Basic 2008 (`martif`),
    /// the generation translate-toolkit, Weblate and OmegaT read.
    Tbx2008,
}

impl Format {
    /// Every format, in the order of the docs.
    pub const ALL: [Format; 13] = [
        Format::GalTransl,
        Format::Sakura,
        Format::SakuraText,
        Format::LinguaGacha,
        Format::LinguaGachaXlsx,
        Format::AiNiee,
        Format::AiNieeXlsx,
        Format::SillyTavern,
        Format::NovelAi,
        Format::OmegaT,
        Format::OmegaTCsv,
        Format::Tbx,
        Format::Tbx2008,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::GalTransl => "galtransl",
            Format::Sakura => "sakura",
            Format::SakuraText => "sakura-text",
            Format::LinguaGacha => "linguagacha",
            Format::LinguaGachaXlsx => "linguagacha-xlsx",
            Format::AiNiee => "ainiee",
            Format::AiNieeXlsx => "ainiee-xlsx",
            Format::SillyTavern => "sillytavern",
            Format::NovelAi => "novelai",
            Format::OmegaT => "omegat",
            Format::OmegaTCsv => "omegat-csv",
            Format::Tbx => "tbx",
            Format::Tbx2008 => "tbx-2008",
        }
    }

    /// The format named `name` (as [`Format::name`] writes it).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.name() == name)
    }

    /// The tool, as the actor of an import names it (`import:galtransl`).
    pub fn tool(self) -> &'static str {
        match self {
            Format::GalTransl => "galtransl",
            Format::Sakura | Format::SakuraText => "sakura",
            Format::LinguaGacha | Format::LinguaGachaXlsx => "linguagacha",
            Format::AiNiee | Format::AiNieeXlsx => "ainiee",
            Format::SillyTavern => "sillytavern",
            Format::NovelAi => "novelai",
            Format::OmegaT | Format::OmegaTCsv => "omegat",
            Format::Tbx | Format::Tbx2008 => "tbx",
        }
    }

    /// The usual file extension of an export, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::GalTransl | Format::SakuraText => "txt",
            // OmegaT reads a `.utf8` glossary as UTF-8 whatever it holds; an export has
            // no coding comment (translate-toolkit would read it as an entry).
            Format::OmegaT => "utf8",
            Format::Sakura | Format::LinguaGacha | Format::AiNiee | Format::SillyTavern => "json",
            Format::LinguaGachaXlsx | Format::AiNieeXlsx => "xlsx",
            Format::NovelAi => "lorebook",
            Format::OmegaTCsv => "csv",
            Format::Tbx | Format::Tbx2008 => "tbx",
        }
    }

    /// The media type of an export.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::GalTransl | Format::SakuraText | Format::OmegaT => "text/plain; charset=utf-8",
            Format::OmegaTCsv => "text/csv; charset=utf-8",
            Format::Sakura | Format::LinguaGacha | Format::AiNiee | Format::SillyTavern | Format::NovelAi => {
                "application/json"
            }
            Format::LinguaGachaXlsx | Format::AiNieeXlsx => {
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            }
            Format::Tbx | Format::Tbx2008 => "application/x-tbx+xml",
        }
    }

    /// The term fields an entry of this format carries. On import these come from the
    /// file (absent means empty); every other field keeps the book's value.
    pub fn fields(self) -> Fields {
        formats::fields(self)
    }

    /// Whether the format holds summaries (as lore entries).
    pub fn has_summaries(self) -> bool {
        matches!(self, Format::SillyTavern | Format::NovelAi)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of term fields, as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fields(pub u16);

impl Fields {
    /// `dst`.
    pub const DST: Fields = Fields(1);
    /// `note`.
    pub const NOTE: Fields = Fields(1 << 1);
    /// `kind`.
    pub const KIND: Fields = Fields(1 << 2);
    /// `gender`.
    pub const GENDER: Fields = Fields(1 << 3);
    /// `decl`.
    pub const DECL: Fields = Fields(1 << 4);
    /// `speech`.
    pub const SPEECH: Fields = Fields(1 << 5);
    /// `window`.
    pub const WINDOW: Fields = Fields(1 << 6);
    /// `status`.
    pub const STATUS: Fields = Fields(1 << 7);
    /// `priority`.
    pub const PRIORITY: Fields = Fields(1 << 8);
    /// `constant`.
    pub const CONSTANT: Fields = Fields(1 << 9);
    /// `secondary`.
    pub const SECONDARY: Fields = Fields(1 << 10);
    /// The aliases (alias surfaces; their kinds and windows only where noted).
    pub const ALIASES: Fields = Fields(1 << 11);
    /// `sense`.
    pub const SENSE: Fields = Fields(1 << 12);

    /// Every field with its name, in the order of `term_put`.
    pub const NAMED: [(Fields, &'static str); 13] = [
        (Fields::SENSE, "sense"),
        (Fields::DST, "dst"),
        (Fields::KIND, "kind"),
        (Fields::GENDER, "gender"),
        (Fields::DECL, "decl"),
        (Fields::SPEECH, "speech"),
        (Fields::NOTE, "note"),
        (Fields::WINDOW, "window"),
        (Fields::STATUS, "status"),
        (Fields::PRIORITY, "priority"),
        (Fields::CONSTANT, "constant"),
        (Fields::SECONDARY, "secondary"),
        (Fields::ALIASES, "aliases"),
    ];

    /// Whether every field of `other` is in this set.
    pub fn contains(self, other: Fields) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Fields {
    type Output = Fields;
    fn bitor(self, other: Fields) -> Fields {
        Fields(self.0 | other.0)
    }
}

/// Where something is in a file: what errors and reports point at, and (with the
/// file name) the `source` of every imported event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum At {
    /// A line of a text file, from 1.
    Line(u64),
    /// A row of a spreadsheet, from 1 (the header is row 1).
    Row(u64),
    /// An entry of a JSON list or XML body, from 1.
    Entry(u64),
    /// An entry by its id in the file: a SillyTavern uid, a NovelAI id, a TBX
    /// `conceptEntry` id.
    Uid(String),
    /// A record of the book (in export reports).
    Record(RecordId),
    /// The file as a whole.
    File,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Line(line) => write!(f, "line {line}"),
            At::Row(row) => write!(f, "row {row}"),
            At::Entry(entry) => write!(f, "entry {entry}"),
            At::Uid(uid) => write!(f, "uid {uid}"),
            At::Record(id) => write!(f, "{id}"),
            At::File => f.write_str("file"),
        }
    }
}

impl At {
    /// The form that follows the file name in an event's `source`: `glossary.txt:12`
    /// for a line, `worlds.json#uid=3` for an entry id, `terms.xlsx#row=4`.
    pub fn source_suffix(&self) -> String {
        match self {
            At::Line(line) => format!(":{line}"),
            At::Row(row) => format!("#row={row}"),
            At::Entry(entry) => format!("#entry={entry}"),
            At::Uid(uid) => format!("#uid={uid}"),
            At::Record(id) => format!("#{id}"),
            At::File => String::new(),
        }
    }
}

/// One alias of an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The surface.
    pub surface: String,
    /// What kind of alias it is (`variant` where the format does not say).
    pub kind: AliasKind,
    /// Its own window, where the format carries one.
    pub window: Option<Window>,
}

/// The content of a term as a format carries it: `term_put` without the id (the
/// book assigns it) and without `supersedes` (no format carries it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// Source surface.
    pub src: String,
    /// Disambiguator.
    pub sense: Option<String>,
    /// Target rendering.
    pub dst: String,
    /// Category tag.
    pub kind: Option<String>,
    /// Grammatical gender.
    pub gender: Option<Gender>,
    /// Declension forms.
    pub decl: Vec<String>,
    /// How the character speaks.
    pub speech: Option<String>,
    /// Free note.
    pub note: Option<String>,
    /// Chapter window.
    pub window: Window,
    /// Review status.
    pub status: Status,
    /// Priority.
    pub priority: i32,
    /// Injected in every chunk of its window.
    pub constant: bool,
    /// Secondary keys.
    pub secondary: Option<SecondaryKeys>,
    /// Further surfaces.
    pub aliases: Vec<Alias>,
}

impl Term {
    /// A term rendering `src` as `dst`, every other field at its default.
    pub fn new(src: impl Into<String>, dst: impl Into<String>) -> Term {
        Term {
            src: src.into(),
            sense: None,
            dst: dst.into(),
            kind: None,
            gender: None,
            decl: Vec::new(),
            speech: None,
            note: None,
            window: Window::default(),
            status: Status::Approved,
            priority: 0,
            constant: false,
            secondary: None,
            aliases: Vec::new(),
        }
    }
}

/// One entry read from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Where it is.
    pub at: At,
    /// What it says.
    pub term: Term,
}

/// A summary read from a lore format (one lorebank wrote: see docs/formats.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedSummary {
    /// Where it is.
    pub at: At,
    /// The summary, with the id it was exported under.
    pub put: SummaryPut,
}

/// An entry the reader left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Where it is.
    pub at: At,
    /// Why, in words (`no dst`, `every key is a regex`).
    pub reason: String,
}

/// A field the format has and lorebank cannot represent (or, on export, a field
/// lorebank has and the format cannot hold), at one place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    /// Where.
    pub at: At,
    /// The field, by the format's name for it (`position`, `contextConfig.budgetPriority`)
    /// or, on export, by lorebank's (`gender`, `window`).
    pub field: String,
    /// The value, shortened, when it helps (`4`, `/炎.+/i`).
    pub value: Option<String>,
}

/// Something that will behave differently in lorebank than in the tool, or that the
/// reader changed (a byte order mark dropped from a key, a rendering trimmed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// Where, when it concerns one place.
    pub at: Option<At>,
    /// What, in a sentence.
    pub message: String,
}

/// What a reader made of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The entries, in file order.
    pub entries: Vec<Entry>,
    /// Summaries (lore formats only).
    pub summaries: Vec<ImportedSummary>,
    /// Entries left out.
    pub skipped: Vec<Skipped>,
    /// Foreign fields not represented.
    pub lost: Vec<Lost>,
    /// Behaviour differences and changes the reader made.
    pub notices: Vec<Notice>,
}

/// A file that cannot be read: nothing of it is imported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}{message}", at.as_ref().map(|at| format!("{at}: ")).unwrap_or_default(), field.as_ref().map(|field| format!("field {field}: ")).unwrap_or_default())]
pub struct ReadError {
    /// Where, when known.
    pub at: Option<At>,
    /// The field, when one is at fault.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The input limit (`ledger_model::limits::input`) the file is over, when that
    /// is what is wrong: the file is too large, not malformed.
    pub limit: Option<&'static str>,
}

impl ReadError {
    /// An error at `at`, in `field`.
    pub fn at(at: At, field: &str, message: impl Into<String>) -> ReadError {
        ReadError { limit: None, at: Some(at), field: Some(field.to_owned()), message: message.into() }
    }

    /// An error about the file as a whole.
    pub fn file(message: impl Into<String>) -> ReadError {
        ReadError { limit: None, at: None, field: None, message: message.into() }
    }

    /// The file, or what it inflates to, is over the input limit named `limit`, whose
    /// value is `max` (in `unit`); `what` says what was counted.
    pub fn over_limit(limit: &'static str, max: u64, unit: &str, what: impl std::fmt::Display) -> ReadError {
        ReadError {
            limit: Some(limit),
            at: None,
            field: None,
            message: format!("{what}: over the limit {limit} of {max} {unit}"),
        }
    }
}

/// A term as exported: its id, its content, and the window it has after
/// supersession (what the spoiler gate used).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportTerm {
    /// The record id.
    pub id: RecordId,
    /// Its content; `term.window` is the story-time window, `term.aliases` the aliases
    /// visible at the exported chapter.
    pub term: Term,
}

/// What an export writes: the terms and summaries a translator of one chapter at one
/// revision may see, already through the spoiler gate, in id order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportInput {
    /// Language of the source text, a BCP 47 tag (`zh`, `ja`, `en`): the book's.
    pub source_lang: String,
    /// Language of the renderings, a BCP 47 tag (`ru`, `es`): the book's, or the one
    /// the export names.
    pub target_lang: String,
    /// The chapter the export is for, if any.
    pub chapter: Option<u32>,
    /// The terms.
    pub terms: Vec<ExportTerm>,
    /// The summaries shown at the chapter (all active ones without a chapter).
    pub summaries: Vec<SummaryPut>,
}

/// An export's bytes and what the format could not hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    /// The file.
    pub bytes: Vec<u8>,
    /// Fields of the book the format cannot hold, per record.
    pub lost: Vec<Lost>,
}

/// The languages of a book: what a format with several languages per entry (TBX)
/// reads as source and as rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Languages {
    /// Language of the source text, a BCP 47 tag (`zh`, `ja`, `en`): the book's.
    pub source: String,
    /// Language of the renderings, a BCP 47 tag (`ru`, `es`): the book's.
    pub target: String,
}

/// Reads `bytes` as `format`, for a book in `languages`.
pub fn read(format: Format, bytes: &[u8], languages: &Languages) -> Result<Parsed, ReadError> {
    formats::read(format, bytes, languages)
}

/// An export that cannot be written (a value the format cannot encode at all).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{format}: {message}")]
pub struct WriteError {
    /// The format.
    pub format: Format,
    /// What went wrong.
    pub message: String,
}

/// Writes `input` as `format`. Besides what the writer reports, every field of a
/// term that the format does not carry ([`Format::fields`]) and holds a value other
/// than its default is reported lost, and so are the summaries of a format without
/// summaries.
pub fn write(format: Format, input: &ExportInput) -> Result<Exported, WriteError> {
    formats::write(format, input)
}
