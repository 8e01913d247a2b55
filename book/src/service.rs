//! The book as an application service: every use case a caller (the CLI, a server)
//! has is one call here, returning plain results and [`BookError`]s that say their
//! own class. Callers parse their input and render the results; they hold no rules.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use ledger::{Ledger, Patience};
use ledger_model::validate::validate_envelope;
use ledger_model::*;
use matcher::{Flavour, ProfileBuilder};

use crate::book::{Book, Submitted};
use crate::error::BookError;

/// Who makes a write, from where, when, and against which head.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// `kind:name` of who makes the change: named for the write, or only the
    /// caller's identity, which a use case with a default actor of its own replaces.
    pub actor: Actor,
    /// Provenance for every event; each body's default source when `None`.
    pub source: Option<String>,
    /// Append only if the head is still this.
    pub expect_head: Option<Seq>,
    /// When, in unix milliseconds (informational only).
    pub recorded_at_ms: u64,
}

/// Who makes a write. A use case with a default actor of its own (a book's first
/// event, [`INIT_ACTOR`]; a cast list, [`CAST_LIST_ACTOR`]; the embedding tier's
/// candidates) records it unless an actor was named for the write; every other
/// write records the caller when none was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// Named for this write (`--actor`, a request's `actor`): recorded as it is.
    Named(String),
    /// Nobody was named: the caller's own identity (the CLI's `human:USER`, the
    /// API's `tool:api`, or what a `--server` client says it is).
    Caller(String),
}

impl Actor {
    /// The actor as `kind:name`, named or the caller's.
    pub fn as_str(&self) -> &str {
        match self {
            Actor::Named(actor) | Actor::Caller(actor) => actor,
        }
    }

    /// The actor named for the write, if any.
    pub fn named(&self) -> Option<&str> {
        match self {
            Actor::Named(actor) => Some(actor),
            Actor::Caller(_) => None,
        }
    }
}

impl From<&str> for Actor {
    fn from(actor: &str) -> Actor {
        Actor::Named(actor.to_owned())
    }
}

impl From<String> for Actor {
    fn from(actor: String) -> Actor {
        Actor::Named(actor)
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl WriteOptions {
    /// These options for a use case whose default actor is `default`: the actor
    /// named for the write, else `default` (never the caller's identity).
    pub fn acting_as(&self, default: &str) -> WriteOptions {
        let actor = Actor::Named(self.actor.named().unwrap_or(default).to_owned());
        WriteOptions { actor, ..self.clone() }
    }

    /// These options against `head` (the revision a use case read what it writes
    /// from), unless they already name the head they expect.
    pub fn at_head(&self, head: Seq) -> WriteOptions {
        WriteOptions { expect_head: Some(self.expect_head.unwrap_or(head)), ..self.clone() }
    }
}

/// The actor of a book's first event when none is named.
pub const INIT_ACTOR: &str = "system:init";

/// The actor of an `expect import` when none is named.
pub const CAST_LIST_ACTOR: &str = "import:cast-list";

/// One body of a batch, with the label its errors carry (`events.jsonl line 3`, or
/// empty) and its default source (`events.jsonl:3`).
#[derive(Clone, Debug)]
pub struct Labelled {
    /// Names the body in errors; empty for a lone body.
    pub label: String,
    /// The source when the write names none.
    pub default_source: String,
    /// The body.
    pub body: Body,
}

/// The source of a body a caller wrote ([`Book::append`]: a command's, a request's)
/// when the write names none; an events file's bodies have their place instead
/// (`events.jsonl:3`).
pub const APPEND_SOURCE: &str = "append";

impl Labelled {
    /// Bodies a caller wrote, labelled as [`Labelled::numbered`] labels them, with
    /// the default source [`APPEND_SOURCE`].
    pub fn appended(bodies: Vec<Body>) -> Vec<Labelled> {
        Labelled::numbered(bodies, APPEND_SOURCE)
    }

    /// A body a caller wrote, labelled `label` (`events[2]`), with the default source
    /// [`APPEND_SOURCE`].
    pub fn at(label: String, body: Body) -> Labelled {
        Labelled { label, default_source: APPEND_SOURCE.to_owned(), body }
    }

    /// Labels `bodies` as `event 1`, `event 2`… when there are several, with the
    /// default source `source`.
    pub fn numbered(bodies: Vec<Body>, source: &str) -> Vec<Labelled> {
        let n_bodies = bodies.len();
        bodies
            .into_iter()
            .enumerate()
            .map(|(index, body)| Labelled {
                label: if n_bodies > 1 { format!("event {}", index + 1) } else { String::new() },
                default_source: source.to_owned(),
                body,
            })
            .collect()
    }
}

/// An accepted write, the labels of its bodies (to name what was dropped) and what
/// the use case warns about.
#[derive(Debug)]
pub struct Written {
    /// What `decide` and the ledger did.
    pub submitted: Submitted,
    /// The label of each body, by index in the batch.
    pub labels: Vec<String>,
    /// The use case's warnings, before those of `decide` (`submitted.decision.warnings`):
    /// a whole-term put that drops fields of the term it replaces ([`Book::append`]).
    pub warnings: Vec<String>,
}

impl Written {
    /// Every warning of the write: the use case's, then `decide`'s.
    pub fn all_warnings(&self) -> Vec<String> {
        let decided = self.submitted.decision.warnings.iter().map(ToString::to_string);
        self.warnings.iter().cloned().chain(decided).collect()
    }
}

/// A rollback planned against one head, to be submitted against that same head.
#[derive(Clone, Debug)]
pub struct RollbackPlan {
    /// The revision rolled back to.
    pub to: Seq,
    /// The head the plan was made at; the submit expects it.
    pub head: Seq,
    /// The compensating events and the marker.
    pub bodies: Vec<Body>,
}

/// A book just created by [`Book::init`].
#[derive(Debug)]
pub struct Initialized {
    /// The book file.
    pub path: PathBuf,
    /// The profile name.
    pub profile: String,
    /// The id of its fold table.
    pub table: Hash32,
    /// The language of its source text: the one asked for, else the profile's.
    pub source_lang: String,
    /// The language of its renderings: the one asked for, else `ru`.
    pub target_lang: String,
    /// The write of the first batch: the `config_set`, and a `languages_set` when
    /// a language was asked for.
    pub written: Written,
}

/// A normalization profile a book can be created with: its name, the fold table
/// it builds and what it folds.
#[derive(Clone, Copy, Debug)]
pub struct ProfileName {
    /// The name (`zh`), as `config_set` records it.
    pub name: &'static str,
    /// The fold table's flavour.
    pub flavour: Flavour,
    /// What it folds, in one line.
    pub doc: &'static str,
}

/// Every profile a book can be created with (the CLI's `init --profile` lists them,
/// the API's `PUT /v1/books/{book}` takes them).
pub const PROFILES: &[ProfileName] = &[
    ProfileName {
        name: "zh",
        flavour: Flavour::Zh,
        doc: "Chinese: traditional and regional variants fold to simplified",
    },
    ProfileName {
        name: "ja", flavour: Flavour::Ja, doc: "Japanese: kyūjitai fold to shinjitai, katakana to hiragana"
    },
    ProfileName { name: "plain", flavour: Flavour::Plain, doc: "Unicode folds only (NFKC, width, case, kana)" },
];

/// Builds the fold table a profile name stands for: its id and bytes.
pub fn build_profile(name: &str) -> Result<(Hash32, Vec<u8>), BookError> {
    let Some(flavour) = PROFILES.iter().find(|profile| profile.name == name).map(|profile| profile.flavour) else {
        let names: Vec<&str> = PROFILES.iter().map(|profile| profile.name).collect();
        let (last, rest) = names.split_last().unwrap_or((&"", &[]));
        return Err(BookError::Invalid(format!("unknown profile {name:?}: expected {} or {last}", rest.join(", "))));
    };
    let profile = ProfileBuilder::new(flavour)
        .build()
        .map_err(|error| BookError::Profile(format!("cannot build the {name} fold table: {error}")))?;
    Ok((Hash32(profile.id().0), profile.to_bytes()))
}

/// Fills in the fold table of every `config_set` that names a profile without one,
/// and returns the tables to store with the batch. Every write does this on its way
/// to `decide` ([`Book::submit_labelled`]), so no caller has to.
pub fn fill_profiles(bodies: &mut [Labelled]) -> Result<Vec<(Hash32, Vec<u8>)>, BookError> {
    let mut blobs: Vec<(Hash32, Vec<u8>)> = Vec::new();
    for labelled in bodies.iter_mut() {
        if let Body::ConfigSet(config) = &mut labelled.body {
            // A left-out profile (no name) keeps the book's; decide fills it in.
            if config.profile.table.is_none() && !config.profile.name.is_empty() {
                let (id, bytes) = build_profile(&config.profile.name).map_err(|error| match error {
                    BookError::Invalid(message) => BookError::Invalid(format!("{}: {message}", labelled.label)),
                    other => other,
                })?;
                config.profile.table = Some(id);
                if !blobs.iter().any(|(known, _)| *known == id) {
                    blobs.push((id, bytes));
                }
            }
        }
    }
    Ok(blobs)
}

/// `blobs` and the fold tables `bodies` name without one ([`fill_profiles`]), each once.
pub(crate) fn with_profiles(
    bodies: &mut [Labelled],
    mut blobs: Vec<(Hash32, Vec<u8>)>,
) -> Result<Vec<(Hash32, Vec<u8>)>, BookError> {
    for (id, bytes) in fill_profiles(bodies)? {
        if !blobs.iter().any(|(known, _)| *known == id) {
            blobs.push((id, bytes));
        }
    }
    Ok(blobs)
}

/// A language a caller named for `field` (`source_lang`, `target_lang`), if any: a
/// BCP 47 tag in canonical case ([`ledger_model::language::language_tag`]), refused
/// naming the field otherwise.
pub(crate) fn check_language(field: &'static str, tag: Option<&str>) -> Result<(), BookError> {
    match tag.map(ledger_model::language::language_tag) {
        Some(Err(why)) => Err(BookError::InvalidField { field, message: format!("{field}: {why}") }),
        _ => Ok(()),
    }
}

fn check_envelope(write: &WriteOptions, bodies: &[Labelled]) -> Result<(), BookError> {
    for labelled in bodies {
        let source = write.source.as_deref().unwrap_or(&labelled.default_source);
        validate_envelope(write.actor.as_str(), source).map_err(|error| BookError::Invalid(error.to_string()))?;
    }
    Ok(())
}

impl Book {
    /// Creates a book at `path` whose first event is the `config_set` of `profile`,
    /// in one step: everything is checked first, the book is built in a temporary
    /// file beside `path`, and linked into place only when complete. Refuses when
    /// `path` exists. On failure nothing is left at `path`. The book has the default
    /// languages (see [`Book::init_in`]).
    pub fn init(path: &Path, profile: &str, write: &WriteOptions) -> Result<Initialized, BookError> {
        Book::init_in(path, profile, &LanguagesSet::default(), write)
    }

    /// [`Book::init`] of a book in `languages`: a language named there (a BCP 47
    /// tag in canonical case, refused naming `source_lang` or `target_lang`
    /// otherwise) is declared by a `languages_set` in the first batch, after the
    /// `config_set`; one left out is the default (the profile's source language, the
    /// target `ru`), and a book that names neither has no `languages_set`, as before.
    pub fn init_in(
        path: &Path,
        profile: &str,
        languages: &LanguagesSet,
        write: &WriteOptions,
    ) -> Result<Initialized, BookError> {
        Book::init_with(path, profile, languages, write, None, |temp| Ok(Ledger::create(temp)?))
    }

    /// [`Book::init`], with the ledger of the temporary file made by `create` (a
    /// library whose books are replicated makes a replica with its commit gate set,
    /// so the first `config_set` goes to the library before it is committed). With
    /// `claim`, the first batch carries its idempotency marker ([`Book::claimed`]).
    pub fn init_with(
        path: &Path,
        profile: &str,
        languages: &LanguagesSet,
        write: &WriteOptions,
        claim: Option<crate::idempotency::Claim>,
        create: impl FnOnce(&Path) -> Result<Ledger, BookError>,
    ) -> Result<Initialized, BookError> {
        check_language("source_lang", languages.source.as_deref())?;
        check_language("target_lang", languages.target.as_deref())?;
        if path.exists() {
            return Err(ledger::OpenError::Exists { path: path.display().to_string() }.into());
        }
        let source = write.source.clone().unwrap_or_else(|| "init".to_owned());
        let write = WriteOptions { source: Some(source), expect_head: Some(Seq::ZERO), ..write.acting_as(INIT_ACTOR) };
        let (table, bytes) = build_profile(profile)?;
        let config = Body::ConfigSet(ConfigSet {
            assembly: AssemblyConfig::default(),
            profile: ProfileRef { name: profile.to_owned(), table: Some(table) },
        });
        let mut bodies = vec![Labelled { label: String::new(), default_source: "init".to_owned(), body: config }];
        if *languages != LanguagesSet::default() {
            let body = Body::LanguagesSet(languages.clone());
            bodies.push(Labelled { label: String::new(), default_source: "init".to_owned(), body });
        }
        check_envelope(&write, &bodies)?;
        let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        // Unique per process and call, so concurrent inits never share a temporary file.
        static N_INITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N_INITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = path.with_file_name(format!(".{file_name}.init-{}-{n}", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        let built = (|| {
            let mut book = Book::new(create(&temp)?);
            book.claimed(claim, |book| book.submit_labelled(&write, bodies, vec![(table, bytes)]))
            // The book is dropped here, closing the file before it is linked.
        })();
        let written = match built {
            Ok(written) => written,
            Err(error) => {
                let _ = std::fs::remove_file(&temp);
                return Err(error);
            }
        };
        // A hard link never replaces an existing file, so two racing inits cannot
        // overwrite each other. Where the file system has no hard links, a rename
        // (after checking again that nothing is there) is the fallback.
        let linked = match std::fs::hard_link(&temp, path) {
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists && !path.exists() => {
                std::fs::rename(&temp, path)
            }
            other => other,
        };
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => Ok(Initialized {
                path: path.to_owned(),
                profile: profile.to_owned(),
                table,
                source_lang: languages.source_in(profile).to_owned(),
                target_lang: languages.target().to_owned(),
                written,
            }),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(ledger::OpenError::Exists { path: path.display().to_string() }.into())
            }
            Err(error) => {
                Err(ledger::OpenError::Io { path: path.display().to_string(), detail: error.to_string() }.into())
            }
        }
    }

    /// Submits `bodies` as one atomic batch with `write`'s actor, sources and
    /// expected head. A `config_set` that names a profile without its fold table gets
    /// the table built and stored with the batch ([`fill_profiles`]). A refusal names
    /// the body by its label.
    pub fn submit_labelled(
        &mut self,
        write: &WriteOptions,
        mut bodies: Vec<Labelled>,
        blobs: Vec<(Hash32, Vec<u8>)>,
    ) -> Result<Written, BookError> {
        let blobs = with_profiles(&mut bodies, blobs)?;
        let (events, labels) = labelled_events(write, bodies)?;
        match self.submit(&events, write.expect_head, blobs) {
            Ok(submitted) => Ok(Written { submitted, labels, warnings: Vec::new() }),
            Err(error) => Err(name_refusal(error, &labels)),
        }
    }

    /// Decides `bodies` as [`Book::submit_labelled`] would and writes nothing (a
    /// dry run); the expected head is not checked.
    pub fn check_labelled(
        &mut self,
        write: &WriteOptions,
        mut bodies: Vec<Labelled>,
        blobs: &[(Hash32, Vec<u8>)],
    ) -> Result<Written, BookError> {
        let blobs = with_profiles(&mut bodies, blobs.to_vec())?;
        let (events, labels) = labelled_events(write, bodies)?;
        match self.dry_submit(&events, &blobs) {
            Ok(submitted) => Ok(Written { submitted, labels, warnings: Vec::new() }),
            Err(error) => Err(name_refusal(error, &labels)),
        }
    }

    /// Appends bodies its caller wrote (a command's, the lines of an events file, the
    /// events of a request) as one atomic batch ([`Book::submit_labelled`]). A term
    /// put replaces the whole term: unless `replace` says that is meant, every put
    /// that leaves out fields the current version of its term has set is named in
    /// the answer's warnings, with the fields it drops.
    pub fn append(&mut self, write: &WriteOptions, bodies: Vec<Labelled>, replace: bool) -> Result<Written, BookError> {
        let mut warnings = Vec::new();
        let puts = || {
            bodies.iter().filter_map(|labelled| match &labelled.body {
                Body::TermPut(put) => Some(put),
                _ => None,
            })
        };
        if !replace && puts().next().is_some() {
            let state = self.state(None)?;
            for put in puts() {
                let dropped = match state.terms().get(&put.id) {
                    Some(term) if !term.retired => dropped_fields(&term.put, put),
                    _ => Vec::new(),
                };
                if !dropped.is_empty() {
                    warnings.push(format!(
                        "the put replaces {} entirely and drops its {}; an edit changes single fields, and a put \
                         marked replace says the loss is meant",
                        put.id,
                        dropped.join(", ")
                    ));
                }
            }
        }
        let mut written = self.submit_labelled(write, bodies, Vec::new())?;
        written.warnings = warnings;
        Ok(written)
    }

    /// Plans a rollback to revision `to` against the current head. Rolling back to
    /// the head itself is refused: it would change nothing.
    pub fn plan_rollback_at_head(&mut self, to: Seq, reason: Option<String>) -> Result<RollbackPlan, BookError> {
        let head = self.state(None)?.revision();
        if to == head {
            return Err(BookError::Invalid(format!(
                "revision {to} is the head: a rollback to it would change nothing"
            )));
        }
        let bodies = self.plan_rollback(to, reason)?;
        Ok(RollbackPlan { to, head, bodies })
    }

    /// Submits a planned rollback against the head it was planned at: if another
    /// writer appended since, this is a conflict and nothing is written.
    pub fn submit_rollback(&mut self, plan: RollbackPlan, write: &WriteOptions) -> Result<Written, BookError> {
        if let Some(expected) = write.expect_head {
            if expected != plan.head {
                return Err(ledger::AppendError::Conflict { expected, actual: plan.head }.into());
            }
        }
        let write = WriteOptions { expect_head: Some(plan.head), ..write.clone() };
        let source = format!("rollback to {}", plan.to);
        let bodies = plan
            .bodies
            .into_iter()
            .map(|body| Labelled { label: String::new(), default_source: source.clone(), body })
            .collect();
        self.submit_labelled(&write, bodies, Vec::new())
    }

    /// Rolls the head back to revision `to`'s snapshot: plans and submits against
    /// one head.
    pub fn rollback(&mut self, to: Seq, reason: Option<String>, write: &WriteOptions) -> Result<Written, BookError> {
        let plan = self.plan_rollback_at_head(to, reason)?;
        self.submit_rollback(plan, write)
    }

    /// Every event about record `id` up to `as_of` (the head when `None`; a revision
    /// after the head is [`BookError::BeyondHead`]): its puts, aliases, retirement,
    /// verdicts, and puts that supersede it.
    pub fn term_history(&self, id: RecordId, as_of: Option<Seq>) -> Result<Vec<Event>, BookError> {
        let head = self.ledger().head()?.seq;
        if let Some(revision) = as_of.filter(|revision| *revision > head) {
            return Err(BookError::BeyondHead { revision, head });
        }
        let mut versions = Vec::new();
        self.ledger().scan(Seq(1), as_of.unwrap_or(head), |event| {
            let touches = event.content.body.record() == Some(id)
                || matches!(&event.content.body, Body::TermPut(put) if put.supersedes == Some(id));
            if touches {
                versions.push(event);
            }
            ControlFlow::Continue(())
        })?;
        if versions.is_empty() {
            return Err(BookError::NotFound { what: format!("events about {id}") });
        }
        Ok(versions)
    }

    /// The range of the log from `from` (revision 0 is read as 1) to `to` (the head
    /// when `None`), checked as every read checks a revision: one after the head is
    /// [`BookError::BeyondHead`], and `from` after `to` is invalid.
    pub fn log_range(&self, from: Seq, to: Option<Seq>) -> Result<(Seq, Seq), BookError> {
        let from = from.max(Seq(1));
        if let Some(to) = to.filter(|to| *to < from) {
            return Err(BookError::InvalidField {
                field: "to",
                message: format!("revision {from} is after revision {to}: no event is in that range"),
            });
        }
        let head = self.ledger().head()?.seq;
        for revision in [Some(from), to].into_iter().flatten() {
            if revision > head {
                return Err(BookError::BeyondHead { revision, head });
            }
        }
        Ok((from, to.unwrap_or(head)))
    }

    /// Calls `each` with every event from `from` to `to` (the head when `None`), in
    /// order, each one checked; `each` returns `false` to stop. The range is checked
    /// by [`Book::log_range`].
    pub fn events(&self, from: Seq, to: Option<Seq>, mut each: impl FnMut(Event) -> bool) -> Result<(), BookError> {
        let (from, to) = self.log_range(from, to)?;
        self.ledger().scan(
            from,
            to,
            |event| {
                if each(event) {
                    ControlFlow::Continue(())
                } else {
                    ControlFlow::Break(())
                }
            },
        )?;
        Ok(())
    }

    /// One event by its seq, with the head it was read at: invalid for 0, not found
    /// past the head (a path names a resource that is not there, where a revision
    /// asked for in a range is out of it).
    pub fn event(&self, seq: Seq) -> Result<(Event, Seq), BookError> {
        if seq == Seq::ZERO {
            return Err(BookError::Invalid("seq: events start at 1".into()));
        }
        let head = self.ledger().head()?.seq;
        let missing = || BookError::NotFound { what: format!("no event {seq}: the head is {head}") };
        if seq > head {
            return Err(missing());
        }
        let mut found = None;
        self.events(seq, Some(seq), |event| {
            found = Some(event);
            false
        })?;
        found.map(|event| (event, head)).ok_or_else(missing)
    }

    /// Opens the book at `path` for writing, after waiting its turn behind the
    /// lorebank processes that have it open or came first (first come, first served;
    /// a writer waits alone). Fails with `OpenError::Busy` when `patience` runs out.
    pub fn open_waiting(path: &Path, patience: &mut Patience) -> Result<Book, BookError> {
        Ok(Book::new(Ledger::open_in_turn(path, patience)?))
    }

    /// Opens the book at `path` read-only, for a command that only reads: nothing is
    /// written, and a read-only file can be read. Waits its turn like [`Book::open_waiting`],
    /// but together with the readers next to it. A book that a crash left unclean needs
    /// a writable open to recover, and gets one (in a new turn, as a writer).
    pub fn open_reader_waiting(path: &Path, patience: &mut Patience) -> Result<Book, BookError> {
        match Ledger::open_read_only_in_turn(path, patience) {
            Err(ledger::OpenError::NeedsRecovery { .. }) => Book::open_waiting(path, patience),
            other => Ok(Book::new(other?)),
        }
    }
}

/// Changes to some fields of a term; a `None` field stays as it is. For an optional
/// field, `Some(None)` clears it. Its JSON form (the body of `PATCH …/terms/{id}`) has
/// one member per field changed, `null` for a field cleared (`decl: []` clears the
/// declension forms); [`TERM_FIELDS`] lists the fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermEdit {
    /// New source surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// New rendering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    /// New sense, or cleared.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub sense: Option<Option<String>>,
    /// New category, or cleared.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub kind: Option<Option<String>>,
    /// New gender, or cleared.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub gender: Option<Option<Gender>>,
    /// New declension forms (empty clears them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decl: Option<Vec<String>>,
    /// New speech note, or cleared.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub speech: Option<Option<String>>,
    /// New translator note, or cleared.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub note: Option<Option<String>>,
    /// New first chapter of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u32>,
    /// New last chapter, or open-ended.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub until: Option<Option<u32>>,
    /// New review status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// New priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Whether the term is constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<bool>,
    /// New secondary keys, or none.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub secondary: Option<Option<SecondaryKeys>>,
    /// New logic for the secondary keys the term already has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary_logic: Option<KeyLogic>,
    /// New superseded record, or none.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub supersedes: Option<Option<RecordId>>,
    /// New owner, or none (the book's default).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub owner: Option<Option<String>>,
    /// New owner role, or none.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub owner_role: Option<Option<String>>,
    /// New release list, or none (the book's default).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub release_to: Option<Option<Vec<String>>>,
    /// New release list of the note, or none (whoever reads the term).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "clearable")]
    pub note_release_to: Option<Option<Vec<String>>>,
}

/// The JSON form of a field an edit can clear: absent, unchanged; `null`, cleared;
/// a value, set.
mod clearable {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(value: &Option<Option<T>>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(inner) => inner.serialize(serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(deserializer).map(Some)
    }
}

/// What a field of a term holds, as an edit takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValue {
    /// A line of text.
    Text,
    /// A list of texts (`a,b` on the command line).
    Texts,
    /// A chapter number.
    Chapter,
    /// A signed number.
    Integer,
    /// `true` or `false`.
    Flag,
    /// A grammatical gender: `m`, `f`, `n` or `pl`.
    Gender,
    /// A review status: `approved`, `auto` or `draft`.
    Status,
    /// Secondary keys with their logic.
    Keys,
    /// How secondary keys combine: `and_any`, `and_all`, `not_any` or `not_all`.
    Logic,
    /// A record id (`T-2`).
    Record,
}

/// Whether and how an edit clears a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clear {
    /// It cannot be cleared.
    No,
    /// `null` clears it (`--clear-NAME`).
    Null,
    /// An empty list clears it (`--clear-NAME`).
    Empty,
}

/// One field of a term an edit can change: its name (the JSON member, and the
/// command line's `--NAME`), whether and how an edit clears it (`--clear-NAME`),
/// what it holds, and what it is.
#[derive(Clone, Copy, Debug)]
pub struct TermField {
    /// The name.
    pub name: &'static str,
    /// How an edit clears it.
    pub clear: Clear,
    /// What it holds.
    pub value: FieldValue,
    /// What it is, in one line.
    pub doc: &'static str,
}

/// Every field of a term an edit can change, in the order of [`TermEdit`]: the one
/// list the API's schema is built from and the command line and the docs are checked
/// against. Adding a field adds it to [`TermEdit`], here and to the docs.
pub const TERM_FIELDS: &[TermField] = &[
    TermField { name: "src", clear: Clear::No, value: FieldValue::Text, doc: "New source surface." },
    TermField { name: "dst", clear: Clear::No, value: FieldValue::Text, doc: "New rendering." },
    TermField { name: "sense", clear: Clear::Null, value: FieldValue::Text, doc: "New sense, or `null` for none." },
    TermField { name: "kind", clear: Clear::Null, value: FieldValue::Text, doc: "New category, or `null` for none." },
    TermField {
        name: "gender",
        clear: Clear::Null,
        value: FieldValue::Gender,
        doc: "New grammatical gender (`m`, `f`, `n`, `pl`), or `null` for none.",
    },
    TermField {
        name: "decl",
        clear: Clear::Empty,
        value: FieldValue::Texts,
        doc: "New declension forms; `[]` removes them all.",
    },
    TermField {
        name: "speech",
        clear: Clear::Null,
        value: FieldValue::Text,
        doc: "New speech note, or `null` for none.",
    },
    TermField {
        name: "note",
        clear: Clear::Null,
        value: FieldValue::Text,
        doc: "New translator note, or `null` for none.",
    },
    TermField { name: "since", clear: Clear::No, value: FieldValue::Chapter, doc: "New first chapter of the window." },
    TermField {
        name: "until",
        clear: Clear::Null,
        value: FieldValue::Chapter,
        doc: "New last chapter of the window, or `null` for an open-ended one.",
    },
    TermField {
        name: "status",
        clear: Clear::No,
        value: FieldValue::Status,
        doc: "New review status (`approved`, `auto`, `draft`).",
    },
    TermField { name: "priority", clear: Clear::No, value: FieldValue::Integer, doc: "New priority." },
    TermField {
        name: "constant",
        clear: Clear::No,
        value: FieldValue::Flag,
        doc: "Whether the term is injected into every chunk inside its window.",
    },
    TermField {
        name: "secondary",
        clear: Clear::Null,
        value: FieldValue::Keys,
        doc: "New secondary keys (`keys` and `logic`), or `null` for none.",
    },
    TermField {
        name: "secondary_logic",
        clear: Clear::No,
        value: FieldValue::Logic,
        doc: "New logic for the secondary keys the term already has.",
    },
    TermField {
        name: "supersedes",
        clear: Clear::Null,
        value: FieldValue::Record,
        doc: "New superseded record, or `null` for none.",
    },
    TermField {
        name: "owner",
        clear: Clear::Null,
        value: FieldValue::Text,
        doc: "New owner (a declared party), or `null` for the book's default.",
    },
    TermField {
        name: "owner_role",
        clear: Clear::Null,
        value: FieldValue::Text,
        doc: "New owner role, or `null` for none.",
    },
    TermField {
        name: "release_to",
        clear: Clear::Null,
        value: FieldValue::Texts,
        doc: "New release list, or `null` for the book's default.",
    },
    TermField {
        name: "note_release_to",
        clear: Clear::Null,
        value: FieldValue::Texts,
        doc: "New release list of the note, or `null`: whoever reads the term.",
    },
];

fn set<T: Clone>(field: &mut T, value: &Option<T>) {
    if let Some(value) = value {
        *field = value.clone();
    }
}

impl TermEdit {
    /// Whether the edit changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == TermEdit::default()
    }

    /// The full put: `current` with the edited fields replaced.
    pub fn apply(&self, current: &TermPut) -> TermPut {
        let mut put = current.clone();
        set(&mut put.src, &self.src);
        set(&mut put.dst, &self.dst);
        set(&mut put.sense, &self.sense);
        set(&mut put.kind, &self.kind);
        set(&mut put.gender, &self.gender);
        set(&mut put.decl, &self.decl);
        set(&mut put.speech, &self.speech);
        set(&mut put.note, &self.note);
        set(&mut put.window.since, &self.since);
        set(&mut put.window.until, &self.until);
        set(&mut put.status, &self.status);
        set(&mut put.priority, &self.priority);
        set(&mut put.constant, &self.constant);
        set(&mut put.secondary, &self.secondary);
        set(&mut put.supersedes, &self.supersedes);
        set(&mut put.owner, &self.owner);
        set(&mut put.owner_role, &self.owner_role);
        set(&mut put.release_to, &self.release_to);
        set(&mut put.note_release_to, &self.note_release_to);
        if let (Some(logic), Some(secondary)) = (self.secondary_logic, put.secondary.as_mut()) {
            secondary.logic = logic;
        }
        put
    }
}

/// The fields `current` has set that `put` leaves unset (or at their default): what
/// a whole-record put over `current` would drop.
pub fn dropped_fields(current: &TermPut, put: &TermPut) -> Vec<&'static str> {
    let mut dropped = Vec::new();
    let mut check = |name: &'static str, had: bool, has: bool| {
        if had && !has {
            dropped.push(name);
        }
    };
    check("sense", current.sense.is_some(), put.sense.is_some());
    check("kind", current.kind.is_some(), put.kind.is_some());
    check("gender", current.gender.is_some(), put.gender.is_some());
    check("decl", !current.decl.is_empty(), !put.decl.is_empty());
    check("speech", current.speech.is_some(), put.speech.is_some());
    check("note", current.note.is_some(), put.note.is_some());
    check("until", current.window.until.is_some(), put.window.until.is_some());
    check("priority", current.priority != 0, put.priority != 0);
    check("constant", current.constant, put.constant);
    check("secondary", current.secondary.is_some(), put.secondary.is_some());
    check("supersedes", current.supersedes.is_some(), put.supersedes.is_some());
    check("owner", current.owner.is_some(), put.owner.is_some());
    check("owner_role", current.owner_role.is_some(), put.owner_role.is_some());
    check("release_to", current.release_to.is_some(), put.release_to.is_some());
    check("note_release_to", current.note_release_to.is_some(), put.note_release_to.is_some());
    dropped
}

/// The source a term edit records when its caller names none (the CLI's `term edit`
/// and the HTTP API's `PATCH …/terms/{id}` alike).
pub const TERM_EDIT_SOURCE: &str = "edit";

impl Book {
    /// The current content of term `id` at the head, and the head it was read at.
    /// An unknown or retired term is invalid.
    pub fn current_term(&mut self, id: RecordId) -> Result<(TermPut, Seq), BookError> {
        let state = self.state(None)?;
        match state.terms().get(&id) {
            Some(term) if term.retired => Err(BookError::Invalid(format!("{id} is retired"))),
            Some(term) => Ok((term.put.clone(), state.revision())),
            None => Err(BookError::Invalid(format!("unknown record {id}"))),
        }
    }

    /// What [`Book::term_edit`] would do, written nowhere: the current version, the
    /// version the edit would put, and the batch's what-if ([`Book::impact_with`]: the
    /// decision with a write's rules and refusals, the recorded chunks it would
    /// re-open, the snapshot it would make). An empty edit is invalid, as for the write.
    pub fn term_edit_what_if(
        &mut self,
        id: RecordId,
        edit: &TermEdit,
        write: &WriteOptions,
    ) -> Result<(TermPut, TermPut, crate::chunks::WhatIf), BookError> {
        let (current, put, head) = self.edited(id, edit)?;
        let write = write.at_head(head);
        let bodies = Labelled::numbered(vec![Body::TermPut(put.clone())], TERM_EDIT_SOURCE);
        let what_if = self.impact_with(&write, bodies)?;
        Ok((current, put, what_if))
    }

    /// A new term as `fields` describe it (every field `term edit` sets, applied to an
    /// empty approved term), numbered `id` or the next free number, and the head it
    /// was read at; an id the book has is invalid (edit that term instead).
    fn created(&mut self, id: Option<RecordId>, fields: &TermEdit) -> Result<(TermPut, Seq), BookError> {
        let state = self.state(None)?;
        let id = match id {
            Some(id) if state.terms().contains_key(&id) => {
                return Err(BookError::Invalid(format!("{id} exists: edit it, or leave the id to the book")))
            }
            Some(id) => id,
            None => state.next_free_id(RecordKind::Term)?,
        };
        Ok((fields.apply(&TermPut::new(id, "", "")), state.revision()))
    }

    /// What [`Book::term_create`] would do, written nowhere: the new term's put and the
    /// batch's what-if ([`Book::impact_with`]).
    pub fn term_create_what_if(
        &mut self,
        id: Option<RecordId>,
        fields: &TermEdit,
        write: &WriteOptions,
    ) -> Result<(TermPut, crate::chunks::WhatIf), BookError> {
        let (put, head) = self.created(id, fields)?;
        let write = write.at_head(head);
        let what_if = self.impact_with(&write, Labelled::numbered(vec![Body::TermPut(put.clone())], "new"))?;
        Ok((put, what_if))
    }

    /// Puts a new term as `fields` describe it ([`Book::term_create_what_if`]), against
    /// the head (or the head `write` expects).
    pub fn term_create(
        &mut self,
        id: Option<RecordId>,
        fields: &TermEdit,
        write: &WriteOptions,
    ) -> Result<Written, BookError> {
        let (put, head) = self.created(id, fields)?;
        let write = write.at_head(head);
        self.submit_labelled(&write, Labelled::numbered(vec![Body::TermPut(put)], "new"), Vec::new())
    }

    /// The events `action` on term `id` appends, read at the head (whose revision
    /// comes back too): a retirement, a revival (the last version put again), an
    /// alias added or removed.
    fn action_bodies(&mut self, id: RecordId, action: &TermAction) -> Result<(Vec<Body>, Seq), BookError> {
        let state = self.state(None)?;
        let term = state.terms().get(&id).ok_or_else(|| BookError::Invalid(format!("unknown record {id}")))?;
        let body = match action {
            TermAction::Retire { reason } if !term.retired => {
                Body::TermRetired(TermRetired { id, reason: reason.clone() })
            }
            TermAction::Retire { .. } => return Err(BookError::Invalid(format!("{id} is retired already"))),
            TermAction::Revive if term.retired => Body::TermPut(term.put.clone()),
            TermAction::Revive => return Err(BookError::Invalid(format!("{id} is not retired"))),
            TermAction::AliasAdd { surface, kind, window } => Body::AliasAdded(AliasAdded {
                id,
                surface: surface.clone(),
                kind: *kind,
                window: *window,
                release_to: None,
            }),
            TermAction::AliasRemove { surface } => Body::AliasRemoved(AliasRemoved { id, surface: surface.clone() }),
        };
        Ok((vec![body], state.revision()))
    }

    /// What [`Book::term_action`] would do, written nowhere ([`Book::impact_with`]).
    pub fn term_action_what_if(
        &mut self,
        id: RecordId,
        action: &TermAction,
        write: &WriteOptions,
    ) -> Result<crate::chunks::WhatIf, BookError> {
        let (bodies, head) = self.action_bodies(id, action)?;
        let write = write.at_head(head);
        self.impact_with(&write, Labelled::numbered(bodies, action.name()))
    }

    /// Retires, revives, or adds or removes an alias of term `id`, as one batch
    /// against the head (or the head `write` expects).
    pub fn term_action(
        &mut self,
        id: RecordId,
        action: &TermAction,
        write: &WriteOptions,
    ) -> Result<Written, BookError> {
        let (bodies, head) = self.action_bodies(id, action)?;
        let write = write.at_head(head);
        self.submit_labelled(&write, Labelled::numbered(bodies, action.name()), Vec::new())
    }

    /// Term `id`'s current version, the version `edit` makes of it and the head it was
    /// read at; an empty edit, or a logic for secondary keys the term does not have,
    /// is invalid.
    fn edited(&mut self, id: RecordId, edit: &TermEdit) -> Result<(TermPut, TermPut, Seq), BookError> {
        if edit.is_empty() {
            return Err(BookError::Invalid(format!("term edit {id}: no field to change")));
        }
        let (current, head) = self.current_term(id)?;
        if edit.secondary_logic.is_some() && current.secondary.is_none() && !matches!(edit.secondary, Some(Some(_))) {
            return Err(BookError::Invalid(format!("{id} has no secondary keys whose logic could change")));
        }
        let put = edit.apply(&current);
        Ok((current, put, head))
    }

    /// Changes some fields of term `id`: appends a full put computed from its
    /// current version, against the head that version was read at (unless `write`
    /// names another expected head).
    pub fn term_edit(&mut self, id: RecordId, edit: &TermEdit, write: &WriteOptions) -> Result<Written, BookError> {
        let (_, put, head) = self.edited(id, edit)?;
        let write = write.at_head(head);
        // The use case names its provenance, whichever adapter called it.
        let bodies = Labelled::numbered(vec![Body::TermPut(put)], TERM_EDIT_SOURCE);
        self.submit_labelled(&write, bodies, Vec::new())
    }
}

/// What an editor does to a term besides editing its fields ([`Book::term_action`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermAction {
    /// It stops existing from this revision on.
    Retire {
        /// Why.
        reason: Option<String>,
    },
    /// A retired term comes back with its last version.
    Revive,
    /// A further surface finds it.
    AliasAdd {
        /// The surface.
        surface: String,
        /// What kind of surface.
        kind: AliasKind,
        /// Where it applies (the term's window when `None`).
        window: Option<Window>,
    },
    /// An alias stops finding it.
    AliasRemove {
        /// The alias's surface.
        surface: String,
    },
}

impl TermAction {
    /// Its name, the default source of its events.
    pub fn name(&self) -> &'static str {
        match self {
            TermAction::Retire { .. } => "retire",
            TermAction::Revive => "revive",
            TermAction::AliasAdd { .. } => "alias-add",
            TermAction::AliasRemove { .. } => "alias-remove",
        }
    }
}

/// What an editor writes of a summary, as `summary put` takes it: what it covers, its
/// text and the first chapter it may be shown at. The put replaces the whole summary,
/// as `summary put`'s does ([`Book::summary_put`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryFields {
    /// What it covers.
    pub scope: Scope,
    /// The text.
    pub text: String,
    /// The first chapter it may be shown at (`None`: after its scope ends).
    pub visible_from: Option<u32>,
}

/// A summary's scope as `summary put --scope` and the editor's form take it:
/// `chapter:N`, `arc:A-B` or `book`; anything else is invalid, naming `scope`.
pub fn parse_scope(text: &str) -> Result<Scope, BookError> {
    let invalid = || BookError::InvalidField {
        field: "scope",
        message: format!("scope {text:?}: expected `chapter:N`, `arc:A-B` or `book`"),
    };
    if text == "book" {
        return Ok(Scope::Book);
    }
    if let Some(chapter) = text.strip_prefix("chapter:") {
        return chapter.parse().map(Scope::Chapter).map_err(|_| invalid());
    }
    if let Some((from, to)) = text.strip_prefix("arc:").and_then(|arc| arc.split_once('-')) {
        return Ok(Scope::Arc { from: from.parse().map_err(|_| invalid())?, to: to.parse().map_err(|_| invalid())? });
    }
    Err(invalid())
}

impl Book {
    /// The put `fields` make of summary `id` (a new summary, numbered the next free
    /// number, when `None`), the summary's current version when it is active, the
    /// head it was read at, and a warning when the put drops the owner, role or
    /// release list the current version has.
    fn summary_of(
        &mut self,
        id: Option<RecordId>,
        fields: &SummaryFields,
    ) -> Result<(Option<SummaryPut>, SummaryPut, Seq, Vec<String>), BookError> {
        let state = self.state(None)?;
        let id = match id {
            Some(id) => id,
            None => state.next_free_id(RecordKind::Summary)?,
        };
        let current = state.summaries().get(&id).filter(|summary| !summary.retired).map(|summary| summary.put.clone());
        let put = SummaryPut {
            id,
            scope: fields.scope,
            text: fields.text.clone(),
            visible_from: fields.visible_from,
            owner: None,
            owner_role: None,
            release_to: None,
        };
        let mut warnings = Vec::new();
        if let Some(current) = &current {
            let had = [
                ("owner", current.owner.is_some()),
                ("owner_role", current.owner_role.is_some()),
                ("release_to", current.release_to.is_some()),
            ];
            let dropped: Vec<&str> = had.iter().filter(|(_, had)| *had).map(|(name, _)| *name).collect();
            if !dropped.is_empty() {
                warnings.push(format!(
                    "the put replaces {id} entirely and drops its {}, as `summary put` does; write them again with \
                     `apply` to keep them",
                    dropped.join(", ")
                ));
            }
        }
        Ok((current, put, state.revision(), warnings))
    }

    /// What [`Book::summary_put`] would do, written nowhere: the summary's current
    /// version (when it is active), the put, and the batch's what-if
    /// ([`Book::impact_with`]: the decision with a write's rules and refusals, the
    /// recorded chunks it would re-open, the snapshot it would make).
    pub fn summary_put_what_if(
        &mut self,
        id: Option<RecordId>,
        fields: &SummaryFields,
        write: &WriteOptions,
    ) -> Result<(Option<SummaryPut>, SummaryPut, crate::chunks::WhatIf), BookError> {
        let (current, put, head, warnings) = self.summary_of(id, fields)?;
        let write = write.at_head(head);
        let mut what_if = self.impact_with(&write, Labelled::appended(vec![Body::SummaryPut(put.clone())]))?;
        what_if.written.warnings = warnings;
        Ok((current, put, what_if))
    }

    /// Puts summary `id` (a new one, numbered the next free number, when `None`) as
    /// `fields` describe it: the `summary_put` event `summary put` appends, with the
    /// same default source ([`APPEND_SOURCE`]), against the head (or the head `write`
    /// expects).
    pub fn summary_put(
        &mut self,
        id: Option<RecordId>,
        fields: &SummaryFields,
        write: &WriteOptions,
    ) -> Result<Written, BookError> {
        let (_, put, head, warnings) = self.summary_of(id, fields)?;
        let write = write.at_head(head);
        let mut written = self.submit_labelled(&write, Labelled::appended(vec![Body::SummaryPut(put)]), Vec::new())?;
        written.warnings = warnings;
        Ok(written)
    }
}

/// A rule's selectors as an editor types them, comma-separated: `kind:NAME`, a
/// record id (`T-12`), `chapters:A-B` (or `chapters:A-` for every chapter from A
/// on), `dialogue`, `narration`; [`selectors_text`] writes them so. A word that is
/// none of these is invalid, naming `field`.
pub fn parse_selectors(text: &str, field: &'static str) -> Result<Vec<Selector>, BookError> {
    let invalid = |word: &str| BookError::InvalidField {
        field,
        message: format!(
            "{field}: {word:?} is not a selector (`kind:NAME`, a record id such as `T-12`, `chapters:A-B`, \
             `chapters:A-`, `dialogue` or `narration`)"
        ),
    };
    let chapter = |word: &str, number: &str| number.trim().parse::<u32>().map_err(|_| invalid(word));
    let mut selectors = Vec::new();
    for word in text.split(',').map(str::trim).filter(|word| !word.is_empty()) {
        let selector = match word {
            "dialogue" => Selector::Dialogue,
            "narration" => Selector::Narration,
            _ => match word.split_once(':') {
                Some(("kind", kind)) => Selector::Kind(kind.trim().to_owned()),
                Some(("chapters", chapters)) => match chapters.split_once('-') {
                    Some((since, "")) => Selector::Chapters(Window { since: chapter(word, since)?, until: None }),
                    Some((since, until)) => {
                        Selector::Chapters(Window { since: chapter(word, since)?, until: Some(chapter(word, until)?) })
                    }
                    None => {
                        let only = chapter(word, chapters)?;
                        Selector::Chapters(Window { since: only, until: Some(only) })
                    }
                },
                _ => Selector::Record(word.parse().map_err(|_| invalid(word))?),
            },
        };
        selectors.push(selector);
    }
    Ok(selectors)
}

/// Selectors as [`parse_selectors`] reads them.
pub fn selectors_text(selectors: &[Selector]) -> String {
    let word = |selector: &Selector| match selector {
        Selector::Kind(kind) => format!("kind:{kind}"),
        Selector::Record(id) => id.to_string(),
        Selector::Chapters(Window { since, until: Some(until) }) => format!("chapters:{since}-{until}"),
        Selector::Chapters(Window { since, until: None }) => format!("chapters:{since}-"),
        Selector::Dialogue => "dialogue".to_owned(),
        Selector::Narration => "narration".to_owned(),
    };
    selectors.iter().map(word).collect::<Vec<_>>().join(", ")
}

/// What an editor writes of a rule: every field but its owner, owner role and
/// release list, which a rule put from these fields keeps from the current version
/// ([`Book::rule_put`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleFields {
    /// The instruction.
    pub text: String,
    /// What it governs.
    pub applies_to: Vec<Selector>,
    /// What it does not govern (`None`: not declared).
    pub does_not_apply_to: Option<Vec<Selector>>,
    /// The chapters it applies to.
    pub window: Window,
    /// Its review status.
    pub status: Status,
    /// Its priority.
    pub priority: i32,
}

impl Book {
    /// The put `fields` make of rule `id` (a new rule, numbered the next free number,
    /// when `None`): the current version's owner, owner role and release list kept;
    /// the current version when the rule is active, and the head it was read at.
    fn rule_of(
        &mut self,
        id: Option<RecordId>,
        fields: &RuleFields,
    ) -> Result<(Option<RulePut>, RulePut, Seq), BookError> {
        let state = self.state(None)?;
        let id = match id {
            Some(id) => id,
            None => state.next_free_id(RecordKind::Rule)?,
        };
        let current = state.rules().get(&id).filter(|rule| !rule.retired).map(|rule| rule.put.clone());
        let kept = state.rules().get(&id).map(|rule| &rule.put);
        let put = RulePut {
            id,
            text: fields.text.clone(),
            applies_to: fields.applies_to.clone(),
            does_not_apply_to: fields.does_not_apply_to.clone(),
            window: fields.window,
            status: fields.status,
            priority: fields.priority,
            owner: kept.and_then(|put| put.owner.clone()),
            owner_role: kept.and_then(|put| put.owner_role.clone()),
            release_to: kept.and_then(|put| put.release_to.clone()),
        };
        Ok((current, put, state.revision()))
    }

    /// What [`Book::rule_put`] would do, written nowhere: the rule's current version
    /// (when it is active), the put, and the batch's what-if ([`Book::impact_with`]).
    pub fn rule_put_what_if(
        &mut self,
        id: Option<RecordId>,
        fields: &RuleFields,
        write: &WriteOptions,
    ) -> Result<(Option<RulePut>, RulePut, crate::chunks::WhatIf), BookError> {
        let (current, put, head) = self.rule_of(id, fields)?;
        let write = write.at_head(head);
        let what_if = self.impact_with(&write, Labelled::appended(vec![Body::RulePut(put.clone())]))?;
        Ok((current, put, what_if))
    }

    /// Puts rule `id` (a new one, numbered the next free number, when `None`) as
    /// `fields` describe it, keeping its owner, owner role and release list: one
    /// `rule_put` (the event `apply` appends from a line of it), with the default
    /// source [`APPEND_SOURCE`], against the head (or the head `write` expects).
    pub fn rule_put(
        &mut self,
        id: Option<RecordId>,
        fields: &RuleFields,
        write: &WriteOptions,
    ) -> Result<Written, BookError> {
        let (_, put, head) = self.rule_of(id, fields)?;
        let write = write.at_head(head);
        self.submit_labelled(&write, Labelled::appended(vec![Body::RulePut(put)]), Vec::new())
    }
}

/// The events of a labelled batch with `write`'s envelope, and their labels.
pub(crate) fn labelled_events(
    write: &WriteOptions,
    bodies: Vec<Labelled>,
) -> Result<(Vec<NewEvent>, Vec<String>), BookError> {
    if bodies.is_empty() {
        return Err(BookError::Invalid("nothing to append".into()));
    }
    let mut labels = Vec::with_capacity(bodies.len());
    let mut events = Vec::with_capacity(bodies.len());
    for labelled in bodies {
        let source = write.source.clone().unwrap_or(labelled.default_source);
        labels.push(labelled.label);
        events.push(NewEvent {
            recorded_at_ms: write.recorded_at_ms,
            actor: write.actor.as_str().to_owned(),
            source,
            body: labelled.body,
        });
    }
    Ok((events, labels))
}

/// A refusal of a labelled batch, naming the body (and, for a double write, both
/// bodies) by label.
pub(crate) fn name_refusal(error: BookError, labels: &[String]) -> BookError {
    let BookError::Rejected(rejection) = error else { return error };
    let label = rejection.index.and_then(|index| labels.get(index)).filter(|label| !label.is_empty());
    // Name both events of a double write by their labels (`e.jsonl line 1`).
    if let (Some(label), projections::Problem::Duplicate { what, first }) = (label, &rejection.problem) {
        if let Some(first) = labels.get(*first).filter(|first| !first.is_empty()) {
            return BookError::Invalid(format!("{label}: {what} is also written, differently, by {first}"));
        }
    }
    match label {
        Some(label) => BookError::RejectedAt { label: label.clone(), rejection: Box::new(rejection) },
        None => BookError::Rejected(rejection),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edit that sets every field.
    fn full() -> TermEdit {
        TermEdit {
            src: Some("萧炎".into()),
            dst: Some("Сяо Янь".into()),
            sense: Some(Some("hero".into())),
            kind: Some(Some("character".into())),
            gender: Some(Some(Gender::Masculine)),
            decl: Some(vec!["Сяо Яня".into()]),
            speech: Some(Some("curt".into())),
            note: Some(Some("the lead".into())),
            since: Some(2),
            until: Some(Some(9)),
            status: Some(Status::Draft),
            priority: Some(3),
            constant: Some(true),
            secondary: Some(Some(SecondaryKeys { logic: KeyLogic::AndAll, keys: vec!["火".into()] })),
            secondary_logic: Some(KeyLogic::NotAny),
            supersedes: Some(Some("T-9".parse().unwrap())),
            owner: Some(Some("human:names-editor".into())),
            owner_role: Some(Some("names editor".into())),
            release_to: Some(Some(vec!["*".into()])),
            note_release_to: Some(Some(vec!["human:editors".into()])),
        }
    }

    fn base() -> TermPut {
        TermPut {
            id: "T-1".parse().unwrap(),
            src: "炎".into(),
            sense: None,
            dst: "Янь".into(),
            kind: None,
            gender: None,
            decl: Vec::new(),
            speech: None,
            note: None,
            window: Window { since: 1, until: None },
            status: Status::Approved,
            priority: 0,
            constant: false,
            secondary: None,
            supersedes: None,
            owner: None,
            owner_role: None,
            release_to: None,
            note_release_to: None,
        }
    }

    #[test]
    fn the_term_field_table_lists_every_field_of_an_edit_and_how_it_clears() {
        let value = serde_json::to_value(full()).unwrap();
        let mut members: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        let mut listed: Vec<&str> = TERM_FIELDS.iter().map(|field| field.name).collect();
        members.sort_unstable();
        listed.sort_unstable();
        assert_eq!(members, listed, "TermEdit and TERM_FIELDS name the same fields");
        assert_eq!(serde_json::from_value::<TermEdit>(value).unwrap(), full(), "the JSON form reads back");
        for field in TERM_FIELDS {
            let cleared = if field.clear == Clear::Empty { "[]" } else { "null" };
            let edit: TermEdit = serde_json::from_str(&format!("{{\"{}\": {cleared}}}", field.name)).unwrap();
            assert_eq!(edit.is_empty(), field.clear == Clear::No, "{}: {edit:?}", field.name);
            if field.clear != Clear::No {
                let cleared = edit.apply(&full().apply(&base()));
                let json = serde_json::to_value(&cleared).unwrap();
                let member = match field.name {
                    "since" | "until" => json["window"][field.name].clone(),
                    name => json[name].clone(),
                };
                assert!(member.is_null() || member == serde_json::json!([]), "{}: {member}", field.name);
            }
        }
        assert!(serde_json::from_str::<TermEdit>(r#"{"dest": "x"}"#).is_err(), "an unknown field is refused");
    }
}
