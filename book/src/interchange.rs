//! Import and export of the glossary formats other tools use, as book use cases.
//! `formats` reads and writes the files; this module decides what an imported
//! entry means for the book (which record it is, what changes) and what an export
//! may contain (the spoiler gate).
//!
//! **Identity rule.** An imported entry is the record whose `src`, folded by the
//! book's profile, and `sense` are the entry's: a re-import of an edited file
//! updates that record (only the fields the format carries; every other field keeps
//! the book's value) instead of adding a second one. An entry whose surface is an
//! alias of a record is that record. A new surface gets the next free `T-` number,
//! in file order; a summary keeps the id it was exported under. So importing the
//! same file twice appends nothing, and a book exported in id order and imported
//! into an empty book gets its ids back when they were dense.
//!
//! **Shared keys.** Entries of one file may share keys (every entry a key hits is
//! activated in the lore tools); `collisions` settles which record each entry is and
//! what the book keeps of each shared key, and the report names every decision with
//! both places. No file is refused for it.

mod collisions;

use std::collections::BTreeMap;
use std::sync::Arc;

use formats::{At, ExportInput, ExportTerm, Fields, Format, Languages, Lost, Notice, Skipped, Term};
use ledger_model::*;
use matcher::Profile;
use projections::{Reader, SnapshotId, State};

use crate::book::Book;
use crate::error::BookError;
use crate::service::{Labelled, WriteOptions};
use collisions::Identity;

/// The language of the renderings of a book that declares none (a `languages_set`
/// declares a book's languages; [`State::target_lang`] is the one in force).
pub const TARGET_LANG: &str = ledger_model::language::TARGET_LANG_DEFAULT;

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The format; detected from the file name and content when `None`.
    pub format: Option<Format>,
    /// Refuse the whole import if anything would be skipped or lost.
    pub strict: bool,
    /// Decide and report, write nothing.
    pub dry_run: bool,
    /// Who imports; `import:<tool>` when `None`.
    pub actor: Option<String>,
    /// Append only if the head is still this.
    pub expect_head: Option<Seq>,
    /// When, in unix milliseconds (informational only).
    pub recorded_at_ms: u64,
    /// Language of the source text in this file (TBX language sections); the
    /// book's ([`State::source_lang`]) when `None`.
    pub source_lang: Option<String>,
    /// Language of the renderings in this file (TBX language sections); the book's
    /// ([`State::target_lang`]) when `None`.
    pub target_lang: Option<String>,
}

/// A record an import touched, and where in the file it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Where in the file.
    pub at: At,
    /// The record.
    pub id: RecordId,
    /// Its source surface (a summary: its scope), for the report.
    pub src: String,
    /// The fields that changed (updates only), by their `term_put` names.
    pub fields: Vec<&'static str>,
}

/// Places that share one lost field or one notice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouped {
    /// The field, or the notice's sentence.
    pub what: String,
    /// Every place, in file order (empty for a notice about the whole file).
    pub at: Vec<At>,
    /// The first values seen (at most [`VALUES_SHOWN`]).
    pub values: Vec<String>,
}

/// How many distinct values a lost field lists.
pub const VALUES_SHOWN: usize = 5;

pub use collisions::SENSE_BASE_CHARS_MAX;

/// What a key is to an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRole {
    /// Its `src`: the surface its record is found by.
    Src,
    /// One of its aliases.
    Alias,
}

impl KeyRole {
    /// The word the report uses: `src` or `alias`.
    pub fn name(self) -> &'static str {
        match self {
            KeyRole::Src => "src",
            KeyRole::Alias => "alias",
        }
    }
}

/// What an import did with a key that an earlier entry of the file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The later entry is a record of its own under this sense (its rendering), with
    /// all its keys.
    Sense(String),
    /// The alias is left out of the later entry's record.
    Dropped,
    /// Both entries are records of the book whose windows share no chapter, so both
    /// keep the key; the later one holds it in this window.
    Window(Window),
}

impl Outcome {
    /// The word the report uses: `sense`, `dropped` or `window`.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Sense(_) => "sense",
            Outcome::Dropped => "dropped",
            Outcome::Window(_) => "window",
        }
    }
}

/// A key two entries of one file share (their surfaces fold alike), and what the
/// import did about it (docs/formats.md, "Entries that share keys").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collision {
    /// The key, as the later entry writes it.
    pub key: String,
    /// Where the later entry is.
    pub at: At,
    /// What the key is to the later entry.
    pub role: KeyRole,
    /// Where the earlier entry is, which keeps the key as it is.
    pub first: At,
    /// What the key is to the earlier entry.
    pub first_role: KeyRole,
    /// What the import did with the later entry.
    pub outcome: Outcome,
}

impl std::fmt::Display for Collision {
    /// `Vera (src) is the src of entry 1: sense "Hugo Lockwood"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}) is the {} of {}: ", self.key, self.role.name(), self.first_role.name(), self.first)?;
        match &self.outcome {
            Outcome::Sense(sense) => write!(f, "a record of its own with the sense {sense:?}"),
            Outcome::Dropped => write!(f, "left out of this entry"),
            Outcome::Window(window) => write!(f, "both keep it, this entry in {window}"),
        }
    }
}

/// The phase an import is in ([`Book::import_with_progress`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportPhase {
    /// Folding the book's state at the head.
    Folding {
        /// Events folded.
        done: u64,
        /// Events to fold.
        total: u64,
    },
    /// Reading the file.
    Reading {
        /// Its size.
        bytes: usize,
    },
    /// Deciding what each entry and summary the file holds does.
    Deciding {
        /// Entries read.
        entries: usize,
        /// Summaries read.
        summaries: usize,
    },
    /// Writing one batch (in a dry run: finding the recorded chunks it would
    /// re-open).
    Writing {
        /// Its events.
        events: usize,
    },
}

/// What an import did, or would do (dry run), entry by entry.
#[derive(Clone, Debug)]
pub struct ImportReport {
    /// The file name as given.
    pub file: String,
    /// The format read.
    pub format: Format,
    /// Whether the format was detected (not named by the caller).
    pub detected: bool,
    /// The actor of the events.
    pub actor: String,
    /// Records the import creates.
    pub imported: Vec<Placed>,
    /// Records it changes, with the fields.
    pub updated: Vec<Placed>,
    /// Records it leaves as they are.
    pub unchanged: Vec<Placed>,
    /// Entries it leaves out, and why.
    pub skipped: Vec<Skipped>,
    /// Keys an entry shares with an earlier entry, and what was done, in the order of
    /// the later entry.
    pub collisions: Vec<Collision>,
    /// Foreign fields lorebank cannot represent, by field.
    pub lost: Vec<Grouped>,
    /// What behaves differently, or what the reader changed.
    pub notices: Vec<Grouped>,
    /// Events appended (or, in a dry run, that would be).
    pub n_events: usize,
    /// Whether anything was written.
    pub written: bool,
    /// The head after the import (before it, when nothing was written).
    pub revision: Seq,
    /// The snapshot ID after the import (or that it would have).
    pub snapshot: SnapshotId,
    /// In a dry run, the recorded chunks whose context the import would change, with
    /// the lines each would lose and gain (as `impact --with`); empty otherwise.
    pub reopened: Vec<crate::chunks::Reopened>,
}

impl ImportReport {
    /// Places lost fields occur at, over every field.
    pub fn n_lost(&self) -> usize {
        self.lost.iter().map(|group| group.at.len()).sum()
    }
}

/// The form an export writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportForm {
    /// Another tool's glossary format.
    Tool(Format),
    /// The compact one-line-per-record form of the additive memory profile
    /// ([`Book::export_profile`]).
    Profile,
    /// A translation memory (TMX 1.4b) of the checked translations of the recorded
    /// chunks ([`Book::export_tmx`]).
    Tmx,
}

impl ExportForm {
    /// The name of the form: a format's name, or `profile`.
    pub fn name(self) -> &'static str {
        match self {
            ExportForm::Tool(format) => format.name(),
            ExportForm::Profile => "profile",
            ExportForm::Tmx => "tmx",
        }
    }

    /// The form called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<ExportForm> {
        match name {
            "profile" => Some(ExportForm::Profile),
            "tmx" => Some(ExportForm::Tmx),
            name => Format::from_name(name).map(ExportForm::Tool),
        }
    }
}

/// What [`Book::export_as`] wrote.
#[derive(Debug)]
pub enum Exported {
    /// A tool's glossary file.
    Tool(Export),
    /// The profile's compact form.
    Profile(crate::governance::ProfileExport),
    /// The translation memory.
    Tmx(crate::tmx::TmxExport),
}

/// An export: the bytes and what they leave out.
#[derive(Clone, Debug)]
pub struct Export {
    /// The format written.
    pub format: Format,
    /// The file.
    pub bytes: Vec<u8>,
    /// The revision exported.
    pub revision: Seq,
    /// Its snapshot ID.
    pub snapshot: SnapshotId,
    /// The chapter the spoiler gate was applied at, if any.
    pub chapter: Option<u32>,
    /// Terms written.
    pub n_terms: usize,
    /// Summaries in the export input (written only by formats with summaries).
    pub n_summaries: usize,
    /// Terms withheld because an editor rejected them (never shown to a translator).
    pub rejected: Vec<RecordId>,
    /// Fields of the book the format cannot hold, by field.
    pub lost: Vec<Grouped>,
}

impl Book {
    /// Imports the glossary file `file` (its name, for detection, errors and
    /// sources; its content `bytes`) as one atomic batch. Bad files, and with
    /// `strict` any skipped entry, collision or lost field, are refused with nothing
    /// written; without `strict`, entries that share keys are settled and reported,
    /// never refused.
    /// A format with language sections reads the book's languages, or those the
    /// options name for this file (BCP 47 tags in canonical case, refused naming
    /// `source_lang` or `target_lang` otherwise).
    pub fn import(&mut self, file: &str, bytes: &[u8], options: &ImportOptions) -> Result<ImportReport, BookError> {
        self.import_with_progress(file, bytes, options, |_| {})
    }

    /// [`Book::import`], calling `progress` with the phase it enters: folding the
    /// book's state (events folded of events to fold, now and then), reading the
    /// file, deciding what its entries do, writing (or, in a dry run, finding the
    /// chunks the write would re-open).
    pub fn import_with_progress(
        &mut self,
        file: &str,
        bytes: &[u8],
        options: &ImportOptions,
        mut progress: impl FnMut(ImportPhase),
    ) -> Result<ImportReport, BookError> {
        crate::service::check_language("source_lang", options.source_lang.as_deref())?;
        crate::service::check_language("target_lang", options.target_lang.as_deref())?;
        let name = file_label(file);
        let invalid = |error: formats::ReadError| BookError::of_file(&name, error);
        let (format, detected) = match options.format {
            Some(format) => (format, false),
            None => (formats::detect(file, bytes).map_err(invalid)?, true),
        };
        let state = self.state_with_progress(None, |done, total| progress(ImportPhase::Folding { done, total }))?;
        let profile = self.profile(&state)?;
        progress(ImportPhase::Reading { bytes: bytes.len() });
        let languages = Languages {
            source: options.source_lang.clone().unwrap_or_else(|| state.source_lang().to_owned()),
            target: options.target_lang.clone().unwrap_or_else(|| state.target_lang().to_owned()),
        };
        let parsed = formats::read(format, bytes, &languages).map_err(invalid)?;
        let actor = options.actor.clone().unwrap_or_else(|| format!("import:{}", format.tool()));
        progress(ImportPhase::Deciding { entries: parsed.entries.len(), summaries: parsed.summaries.len() });
        let plan = plan(&state, profile.as_ref(), format, &name, parsed)?;
        let lost = group_lost(&plan.lost);
        let notices = group_notices(&plan.notices);
        if options.strict && (!plan.skipped.is_empty() || !plan.collisions.is_empty() || !lost.is_empty()) {
            let n_lost: usize = lost.iter().map(|group| group.at.len()).sum();
            let mut what = Vec::new();
            if let Some(skipped) = plan.skipped.first() {
                what.push(format!(
                    "{} skipped (first: {name} {}: {})",
                    count(plan.skipped.len(), "entry", "entries"),
                    skipped.at,
                    skipped.reason
                ));
            }
            if let Some(collision) = plan.collisions.first() {
                what.push(format!(
                    "{} (first: {name} {}: {collision})",
                    count(plan.collisions.len(), "key shared", "keys shared"),
                    collision.at,
                ));
            }
            if let Some(group) = lost.first() {
                what.push(format!(
                    "{} lost (first: {} at {name} {})",
                    count(n_lost, "field", "fields"),
                    group.what,
                    group.at[0]
                ));
            }
            return Err(BookError::Invalid(format!(
                "a strict import refuses any loss: {}; nothing written",
                what.join(", ")
            )));
        }
        if plan.bodies.len() > limits::BATCH_EVENTS_MAX {
            return Err(BookError::Invalid(format!(
                "{name}: {} entries make {} events, over the {} one atomic batch may hold; split the file and \
                 import the parts one after another (a re-import of a part appends nothing)",
                plan.imported.len() + plan.updated.len(),
                plan.bodies.len(),
                limits::BATCH_EVENTS_MAX
            )));
        }
        let write = WriteOptions {
            actor: actor.clone().into(),
            source: None,
            expect_head: options.expect_head,
            recorded_at_ms: options.recorded_at_ms,
        };
        let n_events = plan.bodies.len();
        progress(ImportPhase::Writing { events: n_events });
        let head = state.revision();
        let (written, revision, snapshot, reopened) = if plan.bodies.is_empty() {
            (false, head, self.snapshot_id(&state), Vec::new())
        } else if options.dry_run {
            // Decided as the write would be, and the recorded chunks it would re-open.
            let what_if = self.impact_with(&write, plan.bodies)?;
            (false, head, what_if.written.submitted.snapshot, what_if.chunks)
        } else {
            // The write changes the head in place once nothing here holds it.
            drop(state);
            let done = self.submit_labelled(&write, plan.bodies, Vec::new())?;
            let revision = done.submitted.revision;
            (done.submitted.appended.is_some(), revision, done.submitted.snapshot, Vec::new())
        };
        Ok(ImportReport {
            file: file.to_owned(),
            format,
            detected,
            actor,
            imported: plan.imported,
            updated: plan.updated,
            unchanged: plan.unchanged,
            skipped: plan.skipped,
            collisions: plan.collisions,
            lost,
            notices,
            n_events,
            written,
            revision,
            snapshot,
            reopened,
        })
    }

    /// Exports the glossary a translator of `chapter` sees at revision `as_of` (the
    /// head when `None`) in `form`: in a tool's format, terms, aliases and summaries
    /// through the same window rules assembly injects by, rejected terms left out,
    /// and without a chapter every active record; the profile form lists every
    /// active record with its own window, so a chapter is invalid there. Exports what
    /// `reader` sees ([`State::view_for`]): a party's export holds no record, alias
    /// or note not released to it. The translation memory holds the chunks of
    /// `chapter` (all without one) and their checks, which have no revision, so
    /// `as_of` is invalid there.
    /// A format with language sections writes the book's languages at `as_of`, the
    /// target language `target_lang` when given (a BCP 47 tag in canonical case,
    /// refused naming `target_lang` otherwise).
    pub fn export_as(
        &mut self,
        reader: &Reader,
        form: ExportForm,
        chapter: Option<u32>,
        as_of: Option<Seq>,
        target_lang: Option<&str>,
    ) -> Result<Exported, BookError> {
        match form {
            ExportForm::Tool(format) => Ok(Exported::Tool(self.export(reader, format, chapter, as_of, target_lang)?)),
            ExportForm::Profile if chapter.is_some() => Err(BookError::InvalidField {
                field: "chapter",
                message: "chapter: the profile form lists every active record with its own window; export it \
                          without a chapter"
                    .into(),
            }),
            ExportForm::Profile => Ok(Exported::Profile(self.export_profile(reader, as_of)?)),
            ExportForm::Tmx if as_of.is_some() => Err(BookError::InvalidField {
                field: "as_of",
                message: "as_of: a translation memory holds the recorded chunks and their checks, which are filed \
                          beside the log, not in it, and have no revision; export it without one"
                    .into(),
            }),
            ExportForm::Tmx => {
                let options = crate::tmx::TmxOptions::new(chapter, target_lang.map(str::to_owned));
                Ok(Exported::Tmx(self.export_tmx(reader, &options)?))
            }
        }
    }

    /// [`Book::export_as`] in another tool's `format`: the glossary a translator of
    /// `chapter` sees at `as_of`.
    pub fn export(
        &mut self,
        reader: &Reader,
        format: Format,
        chapter: Option<u32>,
        as_of: Option<Seq>,
        target_lang: Option<&str>,
    ) -> Result<Export, BookError> {
        crate::service::check_language("target_lang", target_lang)?;
        let read = self.read_at(reader, as_of)?;
        let snapshot = read.snapshot;
        let state = read.view();
        let mut terms = Vec::new();
        let mut rejected = Vec::new();
        for active in state.active_terms(chapter) {
            if matches!(active.term.verdict, Some((Verdict::Reject, _))) {
                rejected.push(active.id);
                continue;
            }
            let put = &active.term.put;
            let aliases = active
                .aliases(chapter)
                .into_iter()
                .map(|(alias, _)| formats::Alias {
                    surface: alias.surface.clone(),
                    kind: alias.kind,
                    window: alias.window,
                })
                .collect();
            terms.push(ExportTerm { id: active.id, term: term_of(put, aliases) });
        }
        let summaries: Vec<SummaryPut> =
            state.visible_summaries(chapter).into_iter().map(|summary| summary.put.clone()).collect();
        let input = ExportInput {
            source_lang: state.source_lang().to_owned(),
            target_lang: target_lang.unwrap_or(state.target_lang()).to_owned(),
            chapter,
            terms,
            summaries,
        };
        let exported =
            formats::write(format, &input).map_err(|error| BookError::Invalid(format!("export: {error}")))?;
        Ok(Export {
            format,
            bytes: exported.bytes,
            revision: state.revision(),
            snapshot,
            chapter,
            n_terms: input.terms.len(),
            n_summaries: input.summaries.len(),
            rejected,
            lost: group_lost(&exported.lost),
        })
    }
}

/// The file name an import's errors and sources name: the last path component,
/// shortened so a source stays a label.
fn file_label(file: &str) -> String {
    let name = file.rsplit(['/', '\\']).next().filter(|name| !name.is_empty()).unwrap_or("import");
    let name: String = name.chars().filter(|c| !c.is_control()).collect();
    if name.chars().count() > 80 {
        name.chars().take(80).collect()
    } else {
        name
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The interchange form of a stored term.
fn term_of(put: &TermPut, aliases: Vec<formats::Alias>) -> Term {
    Term {
        src: put.src.clone(),
        sense: put.sense.clone(),
        dst: put.dst.clone(),
        kind: put.kind.clone(),
        gender: put.gender,
        decl: put.decl.clone(),
        speech: put.speech.clone(),
        note: put.note.clone(),
        window: put.window,
        status: put.status,
        priority: put.priority,
        constant: put.constant,
        secondary: put.secondary.clone(),
        aliases,
    }
}

/// What an import will write and report.
struct Plan {
    bodies: Vec<Labelled>,
    imported: Vec<Placed>,
    updated: Vec<Placed>,
    unchanged: Vec<Placed>,
    skipped: Vec<Skipped>,
    collisions: Vec<Collision>,
    lost: Vec<Lost>,
    notices: Vec<Notice>,
}

/// Matches every parsed entry to a record by the identity rule and turns the
/// differences into labelled events.
fn plan(
    state: &State,
    profile: Option<&Arc<Profile>>,
    format: Format,
    name: &str,
    parsed: formats::Parsed,
) -> Result<Plan, BookError> {
    let fold = |text: &str| match profile {
        Some(profile) => profile.fold(text),
        None => text.to_owned(),
    };
    let index = collisions::Index::of(state, &fold);
    let settlement = collisions::settle(parsed.entries, &index, &fold);
    let plan = Plan {
        bodies: Vec::new(),
        imported: Vec::new(),
        updated: Vec::new(),
        unchanged: Vec::new(),
        skipped: parsed.skipped,
        collisions: settlement.collisions,
        lost: parsed.lost,
        notices: parsed.notices,
    };
    let mut planner = Planner::new(state, &fold, format.fields(), name, plan);
    for settled in settlement.entries {
        planner.entry(settled)?;
    }
    for summary in parsed.summaries {
        planner.summary(summary);
    }
    Ok(planner.plan)
}

/// An import being planned ([`plan`]): the entries settled against the book and
/// each other ([`collisions::settle`]), and the plan so far.
struct Planner<'a> {
    state: &'a State,
    fold: &'a dyn Fn(&str) -> String,
    /// The fields the format carries.
    carried: Fields,
    /// The file's name, for labels and sources.
    name: &'a str,
    free_terms: projections::FreeIds,
    plan: Plan,
}

impl<'a> Planner<'a> {
    fn new(
        state: &'a State,
        fold: &'a dyn Fn(&str) -> String,
        carried: Fields,
        name: &'a str,
        plan: Plan,
    ) -> Planner<'a> {
        let free_terms = state.free_ids(RecordKind::Term);
        Planner { state, fold, carried, name, free_terms, plan }
    }

    /// Plans one settled entry: an update of the record it is, nothing for an alias
    /// of a record that says the same (else skipped), a new record, or skipped.
    fn entry(&mut self, settled: collisions::Settled) -> Result<(), BookError> {
        let collisions::Settled { at, term, identity } = settled;
        let label = format!("{} {at}", self.name);
        let source = format!("{}{}", self.name, at.source_suffix());
        let place = (at, label, source);
        match identity {
            Identity::Skip(reason) => self.plan.skipped.push(Skipped { at: place.0, reason }),
            Identity::Record(id) => self.update(id, place, term),
            Identity::AliasOf(id) => self.alias_entry(id, place.0, term),
            Identity::New => self.new_term(place, term)?,
        }
        Ok(())
    }

    /// Adds `body` to the plan, labelled and sourced by its entry's place.
    fn push(&mut self, (_, label, source): &(At, String, String), body: Body) {
        self.plan.bodies.push(Labelled { label: label.clone(), default_source: source.clone(), body });
    }

    /// An entry that matches record `id`: the put and alias changes that carry its
    /// fields over, or nothing when it says what the record says.
    fn update(&mut self, id: RecordId, place: (At, String, String), term: Term) {
        let current = &self.state.terms()[&id];
        let (put, fields) = merged(&current.put, &term, self.carried);
        let alias_bodies = alias_changes(id, current, &term, self.carried, self.fold);
        let at = place.0.clone();
        if fields.is_empty() && alias_bodies.is_empty() {
            self.plan.unchanged.push(Placed { at, id, src: term.src, fields });
            return;
        }
        let mut fields = fields;
        if !alias_bodies.is_empty() && !fields.contains(&"aliases") {
            fields.push("aliases");
        }
        if put != current.put {
            self.push(&place, Body::TermPut(put));
        }
        for body in alias_bodies {
            self.push(&place, body);
        }
        self.plan.updated.push(Placed { at, id, src: term.src, fields });
    }

    /// An entry without a sense whose source is an alias of record `id`: unchanged
    /// when it says what the record says, else skipped (a record has one rendering).
    fn alias_entry(&mut self, id: RecordId, at: At, term: Term) {
        let current = &self.state.terms()[&id];
        let (_, fields) = merged(&current.put, &Term { src: current.put.src.clone(), ..term.clone() }, self.carried);
        if fields.is_empty() {
            self.plan.unchanged.push(Placed { at, id, src: term.src, fields });
        } else {
            self.plan.skipped.push(Skipped {
                at,
                reason: format!(
                    "{} is an alias of {id} ({}), whose {} differ; a record has one rendering: edit {id} in \
                     lorebank",
                    term.src,
                    current.put.src,
                    fields.join(", ")
                ),
            });
        }
    }

    /// An entry that matches no record: a new term under the next free id, with its
    /// aliases.
    fn new_term(&mut self, place: (At, String, String), term: Term) -> Result<(), BookError> {
        let id = self.free_terms.take().map_err(|error| BookError::Invalid(format!("{}: {error}", place.1)))?;
        let put = TermPut {
            id,
            src: term.src.clone(),
            sense: term.sense.clone(),
            dst: term.dst.clone(),
            kind: term.kind.clone(),
            gender: term.gender,
            decl: term.decl.clone(),
            speech: term.speech.clone(),
            note: term.note.clone(),
            window: term.window,
            status: term.status,
            priority: term.priority,
            constant: term.constant,
            secondary: term.secondary.clone(),
            ..TermPut::new(id, term.src.clone(), term.dst.clone())
        };
        self.push(&place, Body::TermPut(put));
        for alias in &term.aliases {
            let alias = AliasAdded {
                id,
                surface: alias.surface.clone(),
                kind: alias.kind,
                window: alias.window,
                release_to: None,
            };
            self.push(&place, Body::AliasAdded(alias));
        }
        self.plan.imported.push(Placed { at: place.0, id, src: term.src, fields: Vec::new() });
        Ok(())
    }

    /// A summary of a lore format: put under its own id unless the book has it as
    /// it is.
    fn summary(&mut self, summary: formats::ImportedSummary) {
        let label = format!("{} {}", self.name, summary.at);
        let source = format!("{}{}", self.name, summary.at.source_suffix());
        let id = summary.put.id;
        let scope = scope_label(summary.put.scope);
        match self.state.summaries().get(&id) {
            Some(current) if !current.retired && current.put == summary.put => {
                self.plan.unchanged.push(Placed { at: summary.at, id, src: scope, fields: Vec::new() });
            }
            current => {
                let fields = match current {
                    Some(current) if !current.retired => summary_fields(&current.put, &summary.put),
                    _ => Vec::new(),
                };
                let placed = Placed { at: summary.at, id, src: scope, fields };
                if placed.fields.is_empty() {
                    self.plan.imported.push(placed);
                } else {
                    self.plan.updated.push(placed);
                }
                self.plan.bodies.push(Labelled { label, default_source: source, body: Body::SummaryPut(summary.put) });
            }
        }
    }
}

fn scope_label(scope: Scope) -> String {
    match scope {
        Scope::Book => "book".into(),
        Scope::Chapter(chapter) => format!("chapter {chapter}"),
        Scope::Arc { from, to } => format!("chapters {from}-{to}"),
    }
}

fn summary_fields(old: &SummaryPut, new: &SummaryPut) -> Vec<&'static str> {
    let mut fields = Vec::new();
    if old.scope != new.scope {
        fields.push("scope");
    }
    if old.text != new.text {
        fields.push("text");
    }
    if old.visible_from != new.visible_from {
        fields.push("visible_from");
    }
    fields
}

/// `current` with the fields `carried` taken from `term`, and the names of the
/// fields that changed; a new rendering clears the old one's declension forms when
/// the format carries none.
fn merged(current: &TermPut, term: &Term, carried: Fields) -> (TermPut, Vec<&'static str>) {
    let mut put = current.clone();
    let mut fields = Vec::new();
    macro_rules! take {
        ($flag:expr, $name:literal, $field:ident) => {
            if carried.contains($flag) && put.$field != term.$field {
                put.$field = term.$field.clone();
                fields.push($name);
            }
        };
    }
    take!(Fields::SENSE, "sense", sense);
    take!(Fields::DST, "dst", dst);
    take!(Fields::KIND, "kind", kind);
    take!(Fields::GENDER, "gender", gender);
    take!(Fields::DECL, "decl", decl);
    take!(Fields::SPEECH, "speech", speech);
    take!(Fields::NOTE, "note", note);
    take!(Fields::WINDOW, "window", window);
    take!(Fields::STATUS, "status", status);
    take!(Fields::PRIORITY, "priority", priority);
    take!(Fields::CONSTANT, "constant", constant);
    take!(Fields::SECONDARY, "secondary", secondary);
    // Declension forms are forms of the rendering: a new rendering from a format that
    // carries none leaves no forms of the old one behind.
    if fields.contains(&"dst") && !carried.contains(Fields::DECL) && !put.decl.is_empty() {
        put.decl.clear();
        fields.push("decl");
    }
    (put, fields)
}

/// The alias events that make record `id`'s aliases the entry's (when the format
/// carries aliases): removals first, then additions, each in surface order.
fn alias_changes(
    id: RecordId,
    current: &projections::Term,
    term: &Term,
    carried: Fields,
    fold: &dyn Fn(&str) -> String,
) -> Vec<Body> {
    if !carried.contains(Fields::ALIASES) {
        return Vec::new();
    }
    let wanted: BTreeMap<String, &formats::Alias> =
        term.aliases.iter().map(|alias| (fold(&alias.surface), alias)).collect();
    let mut bodies = Vec::new();
    for (surface, alias) in &current.aliases {
        if !wanted.contains_key(&fold(surface)) {
            bodies.push(Body::AliasRemoved(AliasRemoved { id, surface: alias.surface.clone() }));
        }
    }
    let had: BTreeMap<String, &AliasAdded> =
        current.aliases.values().map(|alias| (fold(&alias.surface), alias)).collect();
    for (folded, alias) in wanted {
        let same = had
            .get(&folded)
            .is_some_and(|old| old.surface == alias.surface && old.kind == alias.kind && old.window == alias.window);
        if !same {
            // A surface the book already has keeps who may find the term by it.
            let release_to = had.get(&folded).and_then(|old| old.release_to.clone());
            bodies.push(Body::AliasAdded(AliasAdded {
                id,
                surface: alias.surface.clone(),
                kind: alias.kind,
                window: alias.window,
                release_to,
            }));
        }
    }
    bodies
}

/// The group of `what` in `groups`, added at the end when there is none yet.
fn group_of<'a>(groups: &'a mut Vec<Grouped>, what: &str) -> &'a mut Grouped {
    let index = match groups.iter().position(|group| group.what == what) {
        Some(index) => index,
        None => {
            groups.push(Grouped { what: what.to_owned(), at: Vec::new(), values: Vec::new() });
            groups.len() - 1
        }
    };
    &mut groups[index]
}

/// Lost fields grouped by field, in order of first appearance.
fn group_lost(lost: &[Lost]) -> Vec<Grouped> {
    let mut groups: Vec<Grouped> = Vec::new();
    for item in lost {
        let group = group_of(&mut groups, &item.field);
        group.at.push(item.at.clone());
        if let Some(value) = &item.value {
            if group.values.len() < VALUES_SHOWN && !group.values.contains(value) {
                group.values.push(value.clone());
            }
        }
    }
    groups
}

/// Notices grouped by sentence, in order of first appearance.
fn group_notices(notices: &[Notice]) -> Vec<Grouped> {
    let mut groups: Vec<Grouped> = Vec::new();
    for notice in notices {
        let group = group_of(&mut groups, &notice.message);
        if let Some(at) = &notice.at {
            group.at.push(at.clone());
        }
    }
    groups
}
