//! `decide`: every state-dependent validation of a batch, before it is appended.
//!
//! A batch is judged event by event against the state as the batch has moved it
//! (unknown or retired records, aliases, supersession, rollback targets), then as a
//! whole: UNIQUE(folded surface, sense, window) must hold after the whole batch, so a
//! batch may swap two surfaces between records. A put identical to the current
//! version is dropped, which makes imports idempotent. Two different sources rendered
//! to the same dst in overlapping windows are a warning, not a refusal: one warning
//! per rendering, naming its first terms and counting the rest.
//!
//! Deciding a batch costs what the batch does: the undo journal saves the slot each
//! event changes (never a whole term with its aliases), and no whole-batch rule or
//! warning walks the pairs of a group of surfaces or renderings; groups are swept in
//! O(k log k) (`tests/batch_cost.rs` doubles hostile batches and counts the bytes).
//!
//! What the build and the book can do comes in through an [`Environment`]: the
//! book's fold, the render formats and token estimators this build has, which fold
//! tables the book holds, and the snapshot ID of earlier revisions. So every
//! write-time rule lives here, and the caller only looks things up.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use ledger_model::validate::{validate_event, FieldError};
use ledger_model::*;

use crate::index::{dst_key, dst_key_into, Replaced, SurfaceIndex, TermKeys};
use crate::read::{intersect, visible_from, ActiveTerm};
use crate::snapshot::SnapshotId;
use crate::state::State;
use crate::undo::Journal;

/// Folds a key for comparison: the book's normalization profile.
pub type Fold<'f> = &'f dyn Fn(&str) -> String;

/// Longest folded key the frozen automaton takes, in characters
/// (`matcher::PATTERN_CHARS_MAX`).
pub const FOLDED_KEY_CHARS_MAX: usize = matcher::PATTERN_CHARS_MAX;

/// What `decide` needs to know of the build and the book besides the state.
#[derive(Clone, Copy)]
pub struct Environment<'e> {
    /// The fold of the profile in force after the batch.
    pub fold: Fold<'e>,
    /// Render format versions this build can produce.
    pub render_formats: &'e [u16],
    /// Token estimator versions this build can compute.
    pub token_estimators: &'e [u16],
    /// Whether the book holds (or the batch brings) the fold table with this id.
    pub has_table: &'e dyn Fn(Hash32) -> bool,
    /// The length in bytes of the source text blob with this id, when the book holds
    /// it or the batch brings it (checked as UTF-8 hashing to its id); `None` when
    /// neither.
    pub source_text: &'e dyn Fn(Hash32) -> Option<u64>,
    /// The snapshot ID of the book at an earlier revision, for rollback markers;
    /// `None` when unknown.
    pub snapshot_at: &'e dyn Fn(Seq) -> Option<SnapshotId>,
}

impl fmt::Debug for Environment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Environment")
            .field("render_formats", &self.render_formats)
            .field("token_estimators", &self.token_estimators)
            .finish_non_exhaustive()
    }
}

/// What `decide` accepts.
#[derive(Debug)]
pub struct Decision {
    /// The events to append, in order (no-ops removed).
    pub events: Vec<NewEvent>,
    /// Indexes (in the submitted batch) of events dropped as identical to the
    /// current version.
    pub dropped: Vec<usize>,
    /// Conflicts worth a look that do not refuse the batch.
    pub warnings: Vec<Warning>,
    /// The state after the accepted events.
    pub state: State,
}

/// A warning about an accepted batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// Terms with different sources render to the same dst in overlapping windows:
    /// one warning per rendering, however many terms share it.
    SameDst {
        /// The shared rendering, as the first listed term writes it.
        dst: String,
        /// The first terms of the group (at most
        /// [`limits::SAME_DST_TERMS_LISTED_MAX`]), in id order, each with its source
        /// and its window: every term rendering as `dst` that shares it with a term
        /// of another source in an overlapping window, one of the two written by the
        /// batch.
        terms: Vec<(RecordId, String, Window)>,
        /// How many terms the group has in all.
        n_terms: usize,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::SameDst { dst, terms, n_terms } => {
                write!(f, "{n_terms} terms with different sources render as {dst:?} in overlapping windows: ")?;
                for (term_idx, (id, src, window)) in terms.iter().enumerate() {
                    let sep = if term_idx == 0 { "" } else { ", " };
                    write!(f, "{sep}{id} {src:?} ({window})")?;
                }
                match n_terms.saturating_sub(terms.len()) {
                    0 => Ok(()),
                    more => write!(f, " and {more} more"),
                }
            }
        }
    }
}

/// Why a batch is refused. Nothing of it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// 0-based index of the event in the submitted batch (`None` for whole-batch rules).
    pub index: Option<usize>,
    /// What is wrong.
    pub problem: Problem,
}

/// What is wrong with a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A field is invalid on its own.
    Field(FieldError),
    /// The record does not exist.
    UnknownRecord(RecordId),
    /// The record was retired.
    Retired(RecordId),
    /// The term has no such alias.
    UnknownAlias {
        /// The term.
        id: RecordId,
        /// The surface.
        surface: String,
    },
    /// A rollback names a revision after the head.
    RollbackBeyondHead {
        /// Asked for.
        to: Seq,
        /// The head.
        head: Seq,
    },
    /// A summary would be visible before the chapters it summarizes are over.
    SummaryTooEarly {
        /// The summary.
        id: RecordId,
        /// Its `visible_from`.
        visible_from: u32,
        /// The last chapter of its scope.
        scope_end: u32,
    },
    /// UNIQUE(folded surface, sense, window) would be violated.
    Unique(Box<UniqueConflict>),
    /// A key the matcher cannot use: it folds to nothing, to whitespace or
    /// punctuation only, or to more than the automaton takes.
    UnusableKey {
        /// Dotted path of the key (`term_put.src`, `alias_added.surface`).
        field: String,
        /// The key as written.
        key: String,
        /// What the book's profile folds it to.
        folded: String,
        /// Why it cannot be used.
        why: KeyProblem,
    },
    /// A config asks for a render format this build does not have.
    UnknownRenderFormat {
        /// Asked for.
        version: u16,
        /// What this build has.
        known: Vec<u16>,
    },
    /// A config asks for a token estimator this build does not have.
    UnknownTokenEstimator {
        /// Asked for.
        version: u16,
        /// What this build has.
        known: Vec<u16>,
    },
    /// A config names a profile without the id of its fold table.
    NoFoldTable {
        /// The profile name.
        profile: String,
    },
    /// A config names a fold table the book does not hold and the batch does not bring.
    UnknownFoldTable(Hash32),
    /// A `source_set` names a text the book does not hold and the batch does not bring.
    UnknownSourceText {
        /// The chapter.
        chapter: u32,
        /// The text's id.
        text: Hash32,
    },
    /// A `source_set` says its text has another length than the stored text's.
    SourceBytesMismatch {
        /// The chapter.
        chapter: u32,
        /// What the event says.
        declared: u64,
        /// The stored text's length.
        actual: u64,
    },
    /// A rollback marker is not the last event of its batch.
    RollbackNotLast,
    /// A rollback marker closes a batch that does not bring the book to the snapshot
    /// of its target revision.
    RollbackMismatch {
        /// The revision the marker names.
        to: Seq,
        /// The snapshot of that revision (`None` if unknown).
        expected: Option<SnapshotId>,
        /// The snapshot the batch leads to.
        found: SnapshotId,
    },
    /// A record names a party the book has not declared (or the book declares none).
    UndeclaredParty {
        /// Dotted path of the field (`term_put.release_to[1]`, `T-4 owner`).
        field: String,
        /// The party.
        party: String,
        /// Whether the book declares any parties at all.
        any_declared: bool,
    },
    /// Rules exist (or are put) while the render format in force cannot render them.
    RulesNeedRenderFormat {
        /// The render format in force.
        render_format: u16,
    },
    /// A rule's scope names a term the book does not have.
    UnknownScopeRecord {
        /// Dotted path of the selector.
        field: String,
        /// The term.
        id: RecordId,
    },
    /// A concept to drop is not in the register.
    UnknownConcept(String),
    /// A concept is already registered under a surface that folds the same.
    ConceptTwice {
        /// The surface being registered.
        surface: String,
        /// The registered one.
        registered: String,
    },
    /// Two different events of one batch write the same thing.
    Duplicate {
        /// What both write (`term_put T-1`, `alias_added T-1 "蕭炎"`).
        what: String,
        /// 0-based index of the earlier event in the batch.
        first: usize,
    },
}

/// Why a key cannot be used by the matcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyProblem {
    /// It folds to nothing or to whitespace only.
    Empty,
    /// It folds to punctuation, symbols or marks only: no letter or digit to match.
    NoLetterOrDigit,
    /// It folds to more characters than the automaton takes.
    TooLong,
    /// It folds to fewer characters than `min_key_chars` and has no secondary keys.
    TooShort {
        /// `min_key_chars` in force.
        min: u32,
    },
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyProblem::Empty => write!(f, "nothing is left to match"),
            KeyProblem::NoLetterOrDigit => write!(f, "it has no letter or digit to match"),
            KeyProblem::TooLong => {
                write!(f, "it is longer than the matcher's limit of {FOLDED_KEY_CHARS_MAX} characters")
            }
            KeyProblem::TooShort { min } => {
                write!(f, "it is shorter than min_key_chars {min}; a shorter key needs secondary keys")
            }
        }
    }
}

/// Two surfaces that fold to the same key with the same sense in overlapping windows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniqueConflict {
    /// The folded surface.
    pub key: String,
    /// The sense.
    pub sense: Option<String>,
    /// The record being written: id, which surface (`src "…"`, `alias "…"`), window.
    pub this: (RecordId, String, Window),
    /// The record it collides with.
    pub other: (RecordId, String, Window),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(index) = self.index {
            write!(f, "event {}: ", index + 1)?;
        }
        match &self.problem {
            Problem::Field(error) => write!(f, "{error}"),
            Problem::UnknownRecord(id) => write!(f, "unknown record {id}"),
            Problem::Retired(id) => write!(f, "{id} is retired"),
            Problem::UnknownAlias { id, surface } => write!(f, "{id} has no alias {surface:?}"),
            Problem::RollbackBeyondHead { to, head } => {
                write!(f, "cannot roll back to revision {to}: the head is {head}")
            }
            Problem::SummaryTooEarly { id, visible_from, scope_end } => write!(
                f,
                "{id} would be visible from chapter {visible_from}, before its scope ends at chapter {scope_end}"
            ),
            Problem::UnusableKey { field, key, folded, why } => write!(
                f,
                "field `{field}`: key {key:?} folds to {folded:?} under the book's profile: {why}"
            ),
            Problem::UnknownRenderFormat { version, known } => {
                write!(f, "unsupported render format {version} (this build renders {known:?})")
            }
            Problem::UnknownTokenEstimator { version, known } => {
                write!(f, "unsupported token estimator {version} (this build has {known:?})")
            }
            Problem::NoFoldTable { profile } => {
                write!(f, "config_set names profile {profile:?} without a fold table")
            }
            Problem::UnknownFoldTable(table) => write!(
                f,
                "fold table {table} is not stored in the book (name the profile without a table to build it)"
            ),
            Problem::UnknownSourceText { chapter, text } => write!(
                f,
                "field `source_set.text`: the text {text} of chapter {chapter} is not stored in the book and not brought with the batch"
            ),
            Problem::SourceBytesMismatch { chapter, declared, actual } => write!(
                f,
                "field `source_set.bytes`: chapter {chapter}'s text is {actual} bytes, not {declared}"
            ),
            Problem::RollbackNotLast => write!(f, "a rollback_marker must be the last event of its batch"),
            Problem::RollbackMismatch { to, expected: Some(expected), found } => write!(
                f,
                "rollback_marker to revision {to} does not close a rollback: the batch leads to snapshot {found}, revision {to} had {expected}"
            ),
            Problem::RollbackMismatch { to, expected: None, found } => write!(
                f,
                "rollback_marker to revision {to} cannot be checked: the snapshot of revision {to} is unknown (the batch leads to {found})"
            ),
            Problem::UndeclaredParty { field, party, any_declared: true } => write!(
                f,
                "field `{field}`: party {party:?} is not one of the book's parties (declare it in governance_set.parties)"
            ),
            Problem::UndeclaredParty { field, party, any_declared: false } => write!(
                f,
                "field `{field}`: party {party:?} is not declared: the book declares no parties yet (set them with governance_set first)"
            ),
            Problem::RulesNeedRenderFormat { render_format } => write!(
                f,
                "rules are rendered by render format 2 or later, and the book's config sets render format {render_format}: set `render_format` to 2 in a config_set first"
            ),
            Problem::UnknownScopeRecord { field, id } => {
                write!(f, "field `{field}`: the scope names {id}, which the book does not have")
            }
            Problem::UnknownConcept(surface) => write!(f, "{surface:?} is not an expected concept"),
            Problem::ConceptTwice { surface, registered } => write!(
                f,
                "{surface:?} is already expected as {registered:?}: both fold to the same surface"
            ),
            Problem::Duplicate { what, first } => {
                write!(f, "{what} is also written, differently, by event {} of this batch", first + 1)
            }
            Problem::Unique(conflict) => {
                let UniqueConflict { key, sense, this, other } = conflict.as_ref();
                let sense = sense.as_deref().map(|s| format!(", sense {s:?}")).unwrap_or_default();
                let overlap = intersect(this.2, other.2).map(|w| w.to_string()).unwrap_or_default();
                write!(
                    f,
                    "UNIQUE(src, sense, window) violated: {} {} ({}) and {} {} ({}) both fold to {key:?}{sense} in {overlap}",
                    this.0, this.1, this.2, other.0, other.1, other.2
                )
            }
        }
    }
}

impl std::error::Error for Rejection {}

fn reject(index: usize, problem: Problem) -> Rejection {
    Rejection { index: Some(index), problem }
}

/// Judges `batch` against `state` in `env`. On success returns the events to append
/// (no-ops dropped, left-out config fields filled in), warnings, and the state after
/// them.
pub fn decide(state: &State, env: &Environment<'_>, batch: &[NewEvent]) -> Result<Decision, Rejection> {
    let mut scratch = state.clone();
    let Decided { events, dropped, warnings } = decide_in_place(&mut scratch, env, batch)?;
    Ok(Decision { events, dropped, warnings, state: scratch })
}

/// What [`decide_in_place`] says of an accepted batch; the state it leads to is the
/// one it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The events to append, in order (no-ops removed).
    pub events: Vec<NewEvent>,
    /// Indexes (in the submitted batch) of events dropped as identical to the
    /// current version.
    pub dropped: Vec<usize>,
    /// Conflicts worth a look that do not refuse the batch.
    pub warnings: Vec<Warning>,
}

/// [`decide`] on `state` itself, without copying it: on success `state` is the state
/// after the batch; on a refusal it is put back exactly as it was (every event applied
/// on the way is undone), so the refusal and the state are those of [`decide`].
pub fn decide_in_place(state: &mut State, env: &Environment<'_>, batch: &[NewEvent]) -> Result<Decided, Rejection> {
    let mut journal = Journal::new(state);
    let decided = decide_steps(state, &mut journal, env, batch, None);
    if decided.is_err() {
        journal.undo(state);
    }
    decided.map(|(decided, _)| decided)
}

/// [`decide_in_place`] with the head's [`SurfaceIndex`] (`Some` only when it is the
/// index of `state` under `env.fold`; `None` builds it): UNIQUE and the
/// same-rendering warning then look only at the groups the batch touches, so a
/// write to a large book costs what it changes. The answer and the state are those
/// of [`decide_in_place`]; the index is then that of the state after the batch (of
/// the state as it was, when refused), or `None` when the batch sets a config, whose
/// profile may fold every key anew.
pub fn decide_indexed(
    state: &mut State,
    index: &mut Option<SurfaceIndex>,
    env: &Environment<'_>,
    batch: &[NewEvent],
) -> Result<Decided, Rejection> {
    if sets_config(batch) {
        *index = None;
        return decide_in_place(state, env, batch);
    }
    let index = index.get_or_insert_with(|| {
        let mut index = SurfaceIndex::of(state, env.fold);
        // A book that broke UNIQUE before (under an older build) is checked whole
        // at every write, as without the index.
        let clean = index
            .surface_keys()
            .all(|key| check_group(key, &indexed_group(state, &index, key), &BTreeSet::new()).is_ok());
        index.clean = clean;
        index
    });
    let mut journal = Journal::new(state);
    let decided = decide_steps(state, &mut journal, env, batch, Some(index));
    if decided.is_err() {
        journal.undo(state);
    }
    decided.map(|(decided, _)| decided)
}

/// A dry run of [`decide_indexed`] with the head's index (of [`decide_in_place`]
/// without one, or when the batch sets a config): decides `batch` on `state` itself
/// and, when it is accepted, calls `after` with the state after it; then puts
/// `state`, and `index`, back exactly as they were, accepted or refused. The answer
/// is that of [`decide`], and `after` sees [`Decision::state`]; nothing is copied, so
/// a dry run costs what deciding the write does.
pub fn decide_dry<T>(
    state: &mut State,
    index: Option<&mut SurfaceIndex>,
    env: &Environment<'_>,
    batch: &[NewEvent],
    after: impl FnOnce(&State, &Decided) -> T,
) -> Result<(Decided, T), Rejection> {
    let mut index = index.filter(|_| !sets_config(batch));
    let mut journal = Journal::new(state);
    let decided = decide_steps(state, &mut journal, env, batch, index.as_deref_mut());
    let answer = decided.map(|(decided, replaced)| {
        let seen = after(state, &decided);
        (decided, seen, replaced)
    });
    journal.undo(state);
    let (decided, seen, replaced) = answer?;
    if let (Some(index), Some(replaced)) = (index, replaced) {
        index.put_back(replaced);
    }
    Ok((decided, seen))
}

/// Whether `batch` sets a config, whose profile may fold every key anew: the head's
/// index of keys does not serve it.
fn sets_config(batch: &[NewEvent]) -> bool {
    batch.iter().any(|event| matches!(event.body, Body::ConfigSet(_)))
}

fn decide_steps(
    scratch: &mut State,
    journal: &mut Journal,
    env: &Environment<'_>,
    batch: &[NewEvent],
    index: Option<&mut SurfaceIndex>,
) -> Result<(Decided, Option<Replaced>), Rejection> {
    let fold = env.fold;
    let head = scratch.revision();
    let mut events = Vec::with_capacity(batch.len());
    let mut dropped = Vec::new();
    let mut touched = BTreeSet::new();
    let mut written: BTreeMap<String, (usize, &Body)> = BTreeMap::new();
    let mut config_changed = false;
    let mut governance_changed = false;
    let mut marker = None;
    let mut register: Option<FoldedRegister> = None;
    for (index, event) in batch.iter().enumerate() {
        if let Some(what) = duplicate_key(&event.body) {
            match written.get(&what) {
                Some((_, body)) if **body == event.body => {
                    dropped.push(index);
                    continue;
                }
                Some(&(first, _)) => return Err(reject(index, Problem::Duplicate { what, first })),
                None => {
                    written.insert(what, (index, &event.body));
                }
            }
        }
        let event = match &event.body {
            Body::ConfigSet(config) => {
                NewEvent { body: Body::ConfigSet(config.filled_from(scratch.config())), ..event.clone() }
            }
            _ => event.clone(),
        };
        validate_event(&event, &scratch.validation_rules()).map_err(|error| reject(index, Problem::Field(error)))?;
        let min_chars = scratch.validation_rules().min_key_chars;
        check_keys(&event.body, fold, min_chars).map_err(|problem| reject(index, problem))?;
        if is_noop(scratch, &event.body) {
            dropped.push(index);
            continue;
        }
        check_event(scratch, env, head, index, &event.body)?;
        if let Body::ConceptExpected(concept) = &event.body {
            let register = register.get_or_insert_with(|| FoldedRegister::of(scratch, fold));
            if let Some(registered) = register.other(&concept.surface, fold) {
                let problem =
                    Problem::ConceptTwice { surface: concept.surface.clone(), registered: registered.clone() };
                return Err(reject(index, problem));
            }
        }
        if let Some(register) = &mut register {
            register.take_in(&event.body, fold);
        }
        match &event.body {
            Body::ConfigSet(_) => config_changed = true,
            Body::GovernanceSet(_) => governance_changed = true,
            Body::RollbackMarker(_) if index + 1 != batch.len() => {
                return Err(reject(index, Problem::RollbackNotLast));
            }
            Body::RollbackMarker(rollback) => marker = Some((index, rollback.to)),
            _ => {}
        }
        if let Some(id) = event.body.record() {
            touched.insert(id);
        }
        if let Body::TermPut(TermPut { supersedes: Some(old), .. }) = &event.body {
            touched.insert(*old);
        }
        let sealed = Event {
            seq: scratch.revision().next(),
            prev: Hash32::GENESIS,
            hash: Hash32::GENESIS,
            schema: ledger_model::record::SCHEMA_CURRENT,
            content: event.clone(),
        };
        journal.save(scratch, &sealed.content.body);
        scratch.apply(&sealed);
        events.push(event);
    }
    for (index, event) in batch.iter().enumerate() {
        if let Body::TermPut(TermPut { supersedes: Some(old), .. }) = &event.body {
            if !scratch.terms.contains_key(old) {
                return Err(reject(index, Problem::UnknownRecord(*old)));
            }
        }
    }
    if config_changed {
        // A new profile folds every key anew: each must still be usable.
        check_all_keys(scratch, fold)?;
    }
    if governance_changed {
        // A new governance may drop a party records still name.
        check_all_parties(scratch)?;
    }
    let render_format = scratch.assembly().render_format;
    if render_format < 2 && scratch.rules.values().any(|rule| !rule.retired) {
        return Err(Rejection { index: None, problem: Problem::RulesNeedRenderFormat { render_format } });
    }
    if let Some((index, to)) = marker {
        let found = scratch.snapshot_id();
        let expected = (env.snapshot_at)(to);
        if expected != Some(found) {
            return Err(reject(index, Problem::RollbackMismatch { to, expected, found }));
        }
    }
    let (warnings, replaced) = match index {
        None => {
            // One pass over the book's windows serves both checks.
            let active = scratch.active_terms(None);
            check_unique(&active, fold, &touched)?;
            (same_dst_warnings(&active, fold, &touched), None)
        }
        Some(index) => {
            let terms = touched.iter().copied().filter(|id| id.kind() == RecordKind::Term);
            let replaced = index.refresh(scratch, fold, terms);
            if let Err(rejection) = check_unique_indexed(scratch, index, &replaced, &touched) {
                index.put_back(replaced);
                return Err(rejection);
            }
            (same_dst_indexed(scratch, index, &touched), Some(replaced))
        }
    };
    Ok((Decided { events, dropped, warnings }, replaced))
}

/// The register of expected concepts by the fold of their surfaces, built when a batch
/// first registers a concept and kept up to date through the batch: a batch of n
/// registrations folds the register once, not once per registration.
struct FoldedRegister {
    by_fold: BTreeMap<String, BTreeSet<String>>,
}

impl FoldedRegister {
    fn of(state: &State, fold: Fold<'_>) -> FoldedRegister {
        let mut by_fold: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for surface in state.expected.keys() {
            by_fold.entry(fold(surface)).or_default().insert(surface.clone());
        }
        FoldedRegister { by_fold }
    }

    /// The first registered surface (in surface order) other than `surface` that
    /// folds as it does.
    fn other(&self, surface: &str, fold: Fold<'_>) -> Option<&String> {
        self.by_fold.get(&fold(surface))?.iter().find(|registered| *registered != surface)
    }

    /// Takes in an event about to be applied.
    fn take_in(&mut self, body: &Body, fold: Fold<'_>) {
        match body {
            Body::ConceptExpected(ConceptExpected { surface, .. }) => {
                self.by_fold.entry(fold(surface)).or_default().insert(surface.clone());
            }
            Body::ConceptDropped(ConceptDropped { surface }) => {
                let folded = fold(surface);
                if let Some(surfaces) = self.by_fold.get_mut(&folded) {
                    surfaces.remove(surface);
                    if surfaces.is_empty() {
                        self.by_fold.remove(&folded);
                    }
                }
            }
            _ => {}
        }
    }
}

/// What an event writes, for spotting two different writes of one thing in a batch.
fn duplicate_key(body: &Body) -> Option<String> {
    let kind = body.kind_name();
    match body {
        Body::AliasAdded(AliasAdded { id, surface, .. }) | Body::AliasRemoved(AliasRemoved { id, surface }) => {
            Some(format!("{kind} {id} {surface:?}"))
        }
        Body::ConfigSet(_) | Body::GovernanceSet(_) | Body::EmbeddingModelSet(_) | Body::LanguagesSet(_) => {
            Some(kind.to_owned())
        }
        Body::SourceSet(source) => Some(format!("{kind} chapter {}", source.chapter)),
        Body::ProxyTemplateSet(_) => Some(kind.to_owned()),
        Body::ModelPromptSet(set) => Some(format!("{kind} {}", set.job)),
        Body::ModelPolicySet(policy) => Some(format!("{kind} {}", policy.party)),
        Body::CascadeSet(_) | Body::ExamplesSet(_) => Some(kind.to_owned()),
        Body::ConceptExpected(ConceptExpected { surface, .. }) | Body::ConceptDropped(ConceptDropped { surface }) => {
            Some(format!("{kind} {surface:?}"))
        }
        Body::RollbackMarker(_) => None,
        _ => body.record().map(|id| format!("{kind} {id}")),
    }
}

/// Checks that the matcher can use a folded key; `field` names it in the refusal.
/// With `min_chars`, the folded key must also be at least that long (a key the fold
/// shortens is as short as what it folds to).
pub fn check_key(field: &str, key: &str, fold: Fold<'_>, min_chars: Option<u32>) -> Result<(), Problem> {
    let folded = fold(key);
    let n_chars = folded.chars().count();
    let why = if folded.trim().is_empty() {
        Some(KeyProblem::Empty)
    } else if folded.chars().all(is_mark_or_not_alphanumeric) {
        Some(KeyProblem::NoLetterOrDigit)
    } else if n_chars > FOLDED_KEY_CHARS_MAX {
        Some(KeyProblem::TooLong)
    } else {
        min_chars.filter(|min| (n_chars as u64) < u64::from(*min)).map(|min| KeyProblem::TooShort { min })
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Problem::UnusableKey { field: field.to_owned(), key: key.to_owned(), folded, why }),
    }
}

/// A combining mark (which `char::is_alphanumeric` may count as alphabetic) or any
/// other character that is not a letter or digit.
fn is_mark_or_not_alphanumeric(c: char) -> bool {
    !c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c)
}

/// The keys of an event: src, secondary keys, alias surfaces. The src without
/// secondary keys and aliases must be `min_chars` long once folded, as written.
fn check_keys(body: &Body, fold: Fold<'_>, min_chars: u32) -> Result<(), Problem> {
    match body {
        Body::TermPut(put) => check_term_keys("term_put", put, fold, Some(min_chars)),
        Body::AliasAdded(alias) => check_key("alias_added.surface", &alias.surface, fold, Some(min_chars)),
        _ => Ok(()),
    }
}

fn check_term_keys(root: &str, put: &TermPut, fold: Fold<'_>, min_chars: Option<u32>) -> Result<(), Problem> {
    let min_chars = min_chars.filter(|_| put.secondary.is_none());
    check_key(&format!("{root}.src"), &put.src, fold, min_chars)?;
    for (key_idx, key) in put.secondary.iter().flat_map(|secondary| secondary.keys.iter()).enumerate() {
        check_key(&format!("{root}.secondary.keys[{key_idx}]"), key, fold, None)?;
    }
    Ok(())
}

/// Every key of every active term, after a config change.
fn check_all_keys(state: &State, fold: Fold<'_>) -> Result<(), Rejection> {
    let whole = |problem| Rejection { index: None, problem };
    for (id, term) in state.terms.iter().filter(|(_, term)| !term.retired) {
        // Stored keys are not judged by a newer min_key_chars, only by usability.
        check_term_keys(&format!("{id} term_put"), &term.put, fold, None).map_err(whole)?;
        for alias in term.aliases.values() {
            check_key(&format!("{id} alias_added.surface"), &alias.surface, fold, None).map_err(whole)?;
        }
    }
    Ok(())
}

fn is_noop(state: &State, body: &Body) -> bool {
    match body {
        Body::TermPut(put) => state.terms.get(&put.id).is_some_and(|term| !term.retired && term.put == *put),
        Body::AliasAdded(alias) => state
            .terms
            .get(&alias.id)
            .is_some_and(|term| !term.retired && term.aliases.get(&alias.surface) == Some(alias)),
        Body::SummaryPut(put) => state.summaries.get(&put.id).is_some_and(|s| !s.retired && s.put == *put),
        Body::CandidateProposed(proposed) => {
            state.candidates.get(&proposed.id).is_some_and(|c| c.proposed == *proposed)
        }
        Body::DispositionSet(disposition) => {
            let current = state
                .terms
                .get(&disposition.target)
                .map(|term| &term.verdict)
                .or_else(|| state.candidates.get(&disposition.target).map(|c| &c.verdict));
            match (current, disposition.verdict) {
                (Some(None), Verdict::Withdraw) => true,
                (Some(Some((verdict, reason))), new) => *verdict == new && *reason == disposition.reason,
                _ => false,
            }
        }
        Body::ConfigSet(config) => state.config() == Some(config),
        Body::RulePut(put) => state.rules.get(&put.id).is_some_and(|rule| !rule.retired && rule.put == *put),
        Body::GovernanceSet(governance) => state.governance_set().is_some_and(|(current, _)| current == governance),
        Body::EmbeddingModelSet(model) => state.embedding_model().is_some_and(|(current, _)| current == model),
        // Declaring the defaults in a book that never declared its languages changes
        // nothing either.
        Body::LanguagesSet(languages) => state.languages_declared() == *languages,
        // The same text and title again, or the removal of a text the chapter lacks.
        Body::SourceSet(source) => match (state.source.get(&source.chapter), source.text) {
            (Some((current, _)), Some(_)) => current == source,
            (None, None) => true,
            _ => false,
        },
        // The template in force again (or the built-in one in a book without one).
        Body::ProxyTemplateSet(set) => state.proxy_template().map(|(template, _)| template) == set.template.as_deref(),
        // The job's prompt in force again (or the built-in one of a job without one).
        Body::ModelPromptSet(set) => state.model_prompt(&set.job).map(|(text, _)| text) == set.text.as_deref(),
        // The party's classes in force again (none for a party without a policy).
        Body::ModelPolicySet(policy) => state.model_decides(&policy.party) == policy.decides.as_slice(),
        // The declaration in force again (depth 0 and no lists in a book without one).
        Body::CascadeSet(set) => {
            state.cascade().map(|(current, _)| current) == Some(set)
                || (state.cascade.is_none() && *set == CascadeSet::default())
        }
        // The lists in force again (none in a book that never declared them).
        Body::ExamplesSet(set) => {
            state.examples().map(|(current, _)| current) == Some(set)
                || (state.examples.is_none() && *set == ExamplesSet::default())
        }
        Body::ConceptExpected(concept) => {
            state.expected.get(&concept.surface).is_some_and(|expected| expected.concept == *concept)
        }
        Body::TermRetired(_)
        | Body::AliasRemoved(_)
        | Body::SummaryRetired(_)
        | Body::RollbackMarker(_)
        | Body::RuleRetired(_)
        | Body::ConceptDropped(_) => false,
    }
}

fn active_term(state: &State, index: usize, id: RecordId) -> Result<(), Rejection> {
    match state.terms.get(&id) {
        None => Err(reject(index, Problem::UnknownRecord(id))),
        Some(term) if term.retired => Err(reject(index, Problem::Retired(id))),
        Some(_) => Ok(()),
    }
}

fn active_rule(state: &State, index: usize, id: RecordId) -> Result<(), Rejection> {
    match state.rules.get(&id) {
        None => Err(reject(index, Problem::UnknownRecord(id))),
        Some(rule) if rule.retired => Err(reject(index, Problem::Retired(id))),
        Some(_) => Ok(()),
    }
}

fn check_config(env: &Environment<'_>, config: &ConfigSet) -> Result<(), Problem> {
    let assembly = config.assembly;
    if !env.render_formats.contains(&assembly.render_format) {
        return Err(Problem::UnknownRenderFormat {
            version: assembly.render_format,
            known: env.render_formats.to_vec(),
        });
    }
    if !env.token_estimators.contains(&assembly.token_estimator) {
        return Err(Problem::UnknownTokenEstimator {
            version: assembly.token_estimator,
            known: env.token_estimators.to_vec(),
        });
    }
    match config.profile.table {
        None => Err(Problem::NoFoldTable { profile: config.profile.name.clone() }),
        Some(table) if !(env.has_table)(table) => Err(Problem::UnknownFoldTable(table)),
        Some(_) => Ok(()),
    }
}

/// The parties a body names (but `*`), with the field that names each.
fn parties_named(body: &Body) -> Vec<(String, String)> {
    let root = body.kind_name();
    type Lists<'b> = Vec<(&'static str, &'b Option<Vec<String>>)>;
    let (owner, lists): (&Option<String>, Lists<'_>) = match body {
        Body::TermPut(put) => {
            (&put.owner, vec![("release_to", &put.release_to), ("note_release_to", &put.note_release_to)])
        }
        Body::AliasAdded(alias) => (&None, vec![("release_to", &alias.release_to)]),
        Body::SummaryPut(put) => (&put.owner, vec![("release_to", &put.release_to)]),
        Body::RulePut(put) => (&put.owner, vec![("release_to", &put.release_to)]),
        _ => return Vec::new(),
    };
    let mut named: Vec<(String, String)> = owner.iter().map(|owner| (format!("{root}.owner"), owner.clone())).collect();
    for (field, list) in lists {
        for (party_idx, party) in list.iter().flatten().enumerate() {
            if party != ledger_model::validate::EVERY_PARTY {
                named.push((format!("{root}.{field}[{party_idx}]"), party.clone()));
            }
        }
    }
    named
}

/// Every party `body` names must be one the book declares.
fn check_parties(state: &State, body: &Body) -> Result<(), Problem> {
    let declared: &[String] = state.governance_set().map_or(&[], |(governance, _)| &governance.parties);
    for (field, party) in parties_named(body) {
        if !declared.contains(&party) {
            return Err(Problem::UndeclaredParty { field, party, any_declared: state.governance_set().is_some() });
        }
    }
    Ok(())
}

/// Every party an active record names, after the governance changed.
fn check_all_parties(state: &State) -> Result<(), Rejection> {
    let whole = |problem| Rejection { index: None, problem };
    let mut bodies: Vec<(RecordId, Body)> = Vec::new();
    for (id, term) in state.terms.iter().filter(|(_, term)| !term.retired) {
        bodies.push((*id, Body::TermPut(term.put.clone())));
        bodies.extend(term.aliases.values().map(|alias| (*id, Body::AliasAdded(alias.clone()))));
    }
    for (id, summary) in state.summaries.iter().filter(|(_, s)| !s.retired) {
        bodies.push((*id, Body::SummaryPut(summary.put.clone())));
    }
    for (id, rule) in state.rules.iter().filter(|(_, r)| !r.retired) {
        bodies.push((*id, Body::RulePut(rule.put.clone())));
    }
    for (id, body) in bodies {
        check_parties(state, &body).map_err(|problem| match problem {
            Problem::UndeclaredParty { field, party, any_declared } => {
                whole(Problem::UndeclaredParty { field: format!("{id} {field}"), party, any_declared })
            }
            other => whole(other),
        })?;
    }
    Ok(())
}

fn check_event(state: &State, env: &Environment<'_>, head: Seq, index: usize, body: &Body) -> Result<(), Rejection> {
    check_parties(state, body).map_err(|problem| reject(index, problem))?;
    match body {
        // `supersedes` is checked against the state after the whole batch.
        Body::TermPut(_) => Ok(()),
        Body::TermRetired(retired) => active_term(state, index, retired.id),
        Body::AliasAdded(alias) => active_term(state, index, alias.id),
        Body::AliasRemoved(alias) => {
            active_term(state, index, alias.id)?;
            if state.terms[&alias.id].aliases.contains_key(&alias.surface) {
                Ok(())
            } else {
                Err(reject(index, Problem::UnknownAlias { id: alias.id, surface: alias.surface.clone() }))
            }
        }
        Body::SummaryPut(put) => {
            let scope_end = match put.scope {
                Scope::Chapter(chapter) => Some(chapter),
                Scope::Arc { to, .. } => Some(to),
                Scope::Book => None,
            };
            match (scope_end, put.visible_from) {
                (Some(scope_end), Some(from)) if from <= scope_end => Err(reject(
                    index,
                    Problem::SummaryTooEarly { id: put.id, visible_from: visible_from(put), scope_end },
                )),
                _ => Ok(()),
            }
        }
        Body::SummaryRetired(retired) => match state.summaries.get(&retired.id) {
            None => Err(reject(index, Problem::UnknownRecord(retired.id))),
            Some(summary) if summary.retired => Err(reject(index, Problem::Retired(retired.id))),
            Some(_) => Ok(()),
        },
        // The terms a candidate is close to must exist and be active when it is
        // proposed (what they became later is the reviewer's to see).
        Body::CandidateProposed(candidate) => {
            candidate.related.into_iter().chain(candidate.duplicate).try_for_each(|id| active_term(state, index, id))
        }
        Body::ConfigSet(config) => check_config(env, config).map_err(|problem| reject(index, problem)),
        Body::DispositionSet(disposition) => match disposition.target.kind() {
            RecordKind::Term => active_term(state, index, disposition.target),
            RecordKind::Rule => active_rule(state, index, disposition.target),
            _ if state.candidates.contains_key(&disposition.target) => Ok(()),
            _ => Err(reject(index, Problem::UnknownRecord(disposition.target))),
        },
        Body::RulePut(put) => {
            let scopes = [("applies_to", Some(&put.applies_to)), ("does_not_apply_to", put.does_not_apply_to.as_ref())];
            for (field, selectors) in scopes {
                for (selector_idx, selector) in selectors.into_iter().flatten().enumerate() {
                    if let Selector::Record(id) = selector {
                        if !state.terms.contains_key(id) {
                            let field = format!("rule_put.{field}[{selector_idx}].record");
                            return Err(reject(index, Problem::UnknownScopeRecord { field, id: *id }));
                        }
                    }
                }
            }
            Ok(())
        }
        Body::RuleRetired(retired) => active_rule(state, index, retired.id),
        Body::GovernanceSet(_) => Ok(()),
        // Checked against the register by its fold ([`FoldedRegister`]).
        Body::ConceptExpected(_) => Ok(()),
        Body::ConceptDropped(dropped) if !state.expected.contains_key(&dropped.surface) => {
            Err(reject(index, Problem::UnknownConcept(dropped.surface.clone())))
        }
        Body::ConceptDropped(_) => Ok(()),
        Body::RollbackMarker(marker) if marker.to > head => {
            Err(reject(index, Problem::RollbackBeyondHead { to: marker.to, head }))
        }
        Body::RollbackMarker(_) => Ok(()),
        Body::EmbeddingModelSet(_) | Body::LanguagesSet(_) => Ok(()),
        Body::SourceSet(SourceSet { chapter, text: Some(text), bytes, .. }) => match (env.source_text)(*text) {
            None => Err(reject(index, Problem::UnknownSourceText { chapter: *chapter, text: *text })),
            Some(actual) if actual != *bytes => {
                Err(reject(index, Problem::SourceBytesMismatch { chapter: *chapter, declared: *bytes, actual }))
            }
            Some(_) => Ok(()),
        },
        // Every term it names is one the book has (retired or not: a revived term keeps
        // its place in the lists).
        Body::CascadeSet(set) => {
            match set.quiet.iter().chain(&set.direct_only).find(|id| !state.terms.contains_key(id)) {
                Some(id) => Err(reject(index, Problem::UnknownRecord(*id))),
                None => Ok(()),
            }
        }
        Body::ExamplesSet(set) => match set.always.iter().chain(&set.never).find(|id| !state.terms.contains_key(id)) {
            Some(id) => Err(reject(index, Problem::UnknownRecord(*id))),
            None => Ok(()),
        },
        Body::SourceSet(_) | Body::ProxyTemplateSet(_) | Body::ModelPromptSet(_) | Body::ModelPolicySet(_) => Ok(()),
    }
}

/// One surface of an active term in story time.
#[derive(Clone, Copy)]
struct Surface<'s> {
    id: RecordId,
    label: Label<'s>,
    window: Window,
}

/// Which surface of its term a [`Surface`] is; spelled out only for a conflict.
#[derive(Clone, Copy)]
enum Label<'s> {
    Src(&'s str),
    Alias(&'s str),
}

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Src(src) => write!(f, "src {src:?}"),
            Label::Alias(surface) => write!(f, "alias {surface:?}"),
        }
    }
}

/// Every active surface with its key (folded surface, sense), sorted by key and,
/// within a key, by term id, each term's source before its aliases (in surface
/// order): the groups [`check_unique`] checks, in key order. A sort of one list
/// costs less than a map entry per surface on a large book.
fn surfaces<'s>(active: &[ActiveTerm<'s>], fold: Fold<'_>) -> Vec<((String, Option<String>), Surface<'s>)> {
    let mut keyed = Vec::with_capacity(active.len());
    for active in active {
        let Some(window) = active.window else { continue };
        let sense = &active.term.put.sense;
        let src = &active.term.put.src;
        keyed.push(((fold(src), sense.clone()), Surface { id: active.id, label: Label::Src(src), window }));
        for alias in active.term.aliases.values() {
            if let Some(alias_window) = State::alias_window(alias, active.window) {
                let surface = Surface { id: active.id, label: Label::Alias(&alias.surface), window: alias_window };
                keyed.push(((fold(&alias.surface), sense.clone()), surface));
            }
        }
    }
    // Stable: a key's surfaces stay in the order they were pushed.
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed
}

fn check_unique(active: &[ActiveTerm<'_>], fold: Fold<'_>, touched: &BTreeSet<RecordId>) -> Result<(), Rejection> {
    let keyed = surfaces(active, fold);
    let mut group = Vec::new();
    for same_key in keyed.chunk_by(|a, b| a.0 == b.0) {
        group.clear();
        group.extend(same_key.iter().map(|(_, surface)| *surface));
        check_group(&same_key[0].0, &group, touched)?;
    }
    Ok(())
}

/// [`check_unique`] over the groups of the terms the batch touched and of the terms
/// whose windows it may have widened (those the touched terms superseded before the
/// batch or supersede after it): in a book that held UNIQUE before the batch, any
/// conflict is in one of those groups, and the first of them in key order is the
/// first [`check_unique`] finds.
fn check_unique_indexed(
    state: &State,
    index: &SurfaceIndex,
    replaced: &Replaced,
    touched: &BTreeSet<RecordId>,
) -> Result<(), Rejection> {
    if !index.clean {
        return index.surface_keys().try_for_each(|key| check_group(key, &indexed_group(state, index, key), touched));
    }
    let mut terms: BTreeSet<RecordId> = touched.iter().copied().filter(|id| id.kind() == RecordKind::Term).collect();
    let superseded_before = replaced.old_keys().filter_map(|keys| keys.supersedes);
    let superseded_after = touched.iter().filter_map(|id| index.keys(*id)).filter_map(|keys| keys.supersedes);
    terms.extend(superseded_before.chain(superseded_after).collect::<Vec<_>>());
    let keys: BTreeSet<(String, Option<String>)> =
        terms.iter().filter_map(|id| index.keys(*id)).flat_map(TermKeys::surface_keys).collect();
    keys.iter().try_for_each(|key| check_group(key, &indexed_group(state, index, key), touched))
}

/// The surfaces under one (folded surface, sense) key, as [`surfaces`] groups them:
/// by term id, each term's source before its aliases (in surface order).
fn indexed_group<'s>(state: &'s State, index: &SurfaceIndex, key: &(String, Option<String>)) -> Vec<Surface<'s>> {
    let mut group = Vec::new();
    for id in index.with_surface(key) {
        let (Some(window), Some(term), Some(keys)) = (index.window(state, id), state.terms.get(&id), index.keys(id))
        else {
            continue;
        };
        if keys.src == key.0 {
            group.push(Surface { id, label: Label::Src(&term.put.src), window });
        }
        for (alias, folded) in term.aliases.values().zip(&keys.aliases) {
            if *folded == key.0 {
                if let Some(window) = State::alias_window(alias, Some(window)) {
                    group.push(Surface { id, label: Label::Alias(&alias.surface), window });
                }
            }
        }
    }
    group
}

/// UNIQUE within one group of surfaces under one key.
fn check_group(
    (key, sense): &(String, Option<String>),
    group: &[Surface<'_>],
    touched: &BTreeSet<RecordId>,
) -> Result<(), Rejection> {
    // The first surface (in group order) that another record's surface overlaps,
    // found by a sweep: a group of k surfaces (one term's many aliases that fold
    // alike) costs O(k log k), not its k²/2 pairs. Its partners all come after it
    // (one before it would be a conflicting surface earlier still), so the pair
    // is the first one in group order, and only its partner is searched for.
    let sweep = Sweep::of(group.iter().map(|surface| (surface.window, surface.id)));
    let Some(a_idx) = group.iter().position(|surface| sweep.overlaps_another(surface.id, surface.window)) else {
        return Ok(());
    };
    let a = &group[a_idx];
    let Some(b) = group[a_idx + 1..].iter().find(|b| a.id != b.id && a.window.overlaps(&b.window)) else {
        return Ok(());
    };
    // Every pair counts, not only pairs with a record of this batch: a
    // retirement or a moved supersession widens other records' windows.
    let (this, other) = if touched.contains(&b.id) { (b, a) } else { (a, b) };
    Err(Rejection {
        index: None,
        problem: Problem::Unique(Box::new(UniqueConflict {
            key: key.clone(),
            sense: sense.clone(),
            this: (this.id, this.label.to_string(), this.window),
            other: (other.id, other.label.to_string(), other.window),
        })),
    })
}

fn same_dst_warnings(active: &[ActiveTerm<'_>], fold: Fold<'_>, touched: &BTreeSet<RecordId>) -> Vec<Warning> {
    // A warning needs a record of the batch, so only the renderings of those records
    // are grouped, and only grouped sources are folded.
    let keys: BTreeSet<String> = active
        .iter()
        .filter(|active| active.window.is_some() && touched.contains(&active.id))
        .map(|active| dst_key(&active.term.put.dst))
        .collect();
    let mut by_dst: BTreeMap<String, Vec<DstMember<'_>>> = BTreeMap::new();
    if !keys.is_empty() {
        let mut dst = String::new();
        for active in active {
            let Some(window) = active.window else { continue };
            dst_key_into(&active.term.put.dst, &mut dst);
            if keys.contains(&dst) {
                by_dst.entry(dst.clone()).or_default().push(DstMember {
                    id: active.id,
                    put: &active.term.put,
                    folded: Cow::Owned(fold(&active.term.put.src)),
                    window,
                    touched: touched.contains(&active.id),
                });
            }
        }
    }
    by_dst.values().filter_map(|group| same_dst_warning(group)).collect()
}

/// [`same_dst_warnings`] from the index: the groups of the touched terms' renderings.
fn same_dst_indexed(state: &State, index: &SurfaceIndex, touched: &BTreeSet<RecordId>) -> Vec<Warning> {
    let keys: BTreeSet<&str> = touched
        .iter()
        .filter(|id| index.window(state, **id).is_some())
        .filter_map(|id| index.keys(*id))
        .map(|keys| keys.dst.as_str())
        .collect();
    let member = |id: RecordId| {
        Some(DstMember {
            id,
            put: &state.terms.get(&id)?.put,
            folded: Cow::Borrowed(index.keys(id)?.src.as_str()),
            window: index.window(state, id)?,
            touched: touched.contains(&id),
        })
    };
    keys.into_iter()
        .filter_map(|dst| same_dst_warning(&index.with_dst(dst).filter_map(member).collect::<Vec<_>>()))
        .collect()
}

/// The warning of one group of active terms sharing a rendering, if it needs one.
fn same_dst_warning(group: &[DstMember<'_>]) -> Option<Warning> {
    // A term is in the warning when a term of another source overlaps it, one of the
    // two written by the batch: a touched term may pair with any term, an untouched
    // one only with a touched one. Each asks a sweep of the group (or of its touched
    // terms), so a group costs O(k log k), not its k²/2 pairs.
    let everyone = Sweep::of(group.iter().map(DstMember::keyed));
    let of_batch = Sweep::of(group.iter().filter(|member| member.touched).map(DstMember::keyed));
    let mut terms = Vec::new();
    let mut n_terms = 0;
    for member in group {
        let partners = if member.touched { &everyone } else { &of_batch };
        if partners.overlaps_another(&*member.folded, member.window) {
            n_terms += 1;
            if terms.len() < limits::SAME_DST_TERMS_LISTED_MAX {
                terms.push(member);
            }
        }
    }
    let first = terms.first()?;
    let dst = first.put.dst.clone();
    let terms = terms.iter().map(|member| (member.id, member.put.src.clone(), member.window)).collect();
    Some(Warning::SameDst { dst, terms, n_terms })
}

/// An active term rendering as one dst, for the same-rendering warning.
struct DstMember<'s> {
    id: RecordId,
    put: &'s TermPut,
    folded: Cow<'s, str>,
    window: Window,
    touched: bool,
}

impl DstMember<'_> {
    /// Its window, keyed by its folded source.
    fn keyed(&self) -> (Window, &str) {
        (self.window, &*self.folded)
    }
}

/// The last chapter of a window, an open one at the end of every book.
fn window_end(window: Window) -> u32 {
    window.until.unwrap_or(u32::MAX)
}

/// Windows sorted by their first chapter, each with a key (a folded source, a
/// record), with, for each prefix of them, the latest end of any window and the
/// latest end of a window of another key than that one: enough to tell in O(log k)
/// whether a window of another key overlaps a given one.
struct Sweep<K> {
    starts: Vec<u32>,
    /// Per prefix: the latest end and its key, then the latest end among the
    /// windows of other keys.
    best: Vec<((u32, K), Option<u32>)>,
}

impl<K: Copy + Eq> Sweep<K> {
    fn of(windows: impl Iterator<Item = (Window, K)>) -> Sweep<K> {
        let mut sorted: Vec<(u32, u32, K)> =
            windows.map(|(window, key)| (window.since, window_end(window), key)).collect();
        sorted.sort_by_key(|(since, _, _)| *since);
        let mut best: Vec<((u32, K), Option<u32>)> = Vec::with_capacity(sorted.len());
        for (since_idx, &(_, end, key)) in sorted.iter().enumerate() {
            let next = match since_idx.checked_sub(1).map(|previous| best[previous]) {
                None => ((end, key), None),
                Some(((top, top_key), other)) if top_key == key => ((top.max(end), key), other),
                // The old latest is of another key and ends after every other.
                Some(((top, _), _)) if end > top => ((end, key), Some(top)),
                Some((top, other)) => (top, Some(other.map_or(end, |other| other.max(end)))),
            };
            best.push(next);
        }
        Sweep { starts: sorted.iter().map(|(since, _, _)| *since).collect(), best }
    }

    /// Whether a window of another key than `key` overlaps `window`.
    fn overlaps_another(&self, key: K, window: Window) -> bool {
        // The windows that start by the end of this one; one of them overlaps it when
        // it ends at or after this one's start.
        let n_started = self.starts.partition_point(|since| *since <= window_end(window));
        let Some(&((top, top_key), other)) = n_started.checked_sub(1).map(|last| &self.best[last]) else {
            return false;
        };
        let latest_other = if top_key == key { other } else { Some(top) };
        latest_other.is_some_and(|end| end >= window.since)
    }
}
