//! The review queue and the unknown-name alarm as book use cases.
//!
//! **The queue** is every open candidate (no verdict, or a withdrawn one) and every
//! flagged record (an active term with a `verify` verdict, or unreviewed: status
//! `auto` or `draft` without an `accept`). Candidates come first: those of normal
//! trust the book-wide alarm scored best score first, then the other normal ones most
//! sighted first, then those of low trust (embedding suggestions) best score first. Accepting a candidate for a new term writes its `term_put` and the
//! candidate's `accept` in one batch; accepting a candidate close to a term
//! (`related`) writes its surface as an `alias_added` of that term and the `accept`;
//! accepting a pair of probable duplicates (`related` and `duplicate`) writes the
//! `accept` alone (the reviewer's finding; nothing is merged). Rejecting or verifying
//! writes a `disposition_set`. Candidates never change what is injected (they are not
//! in the snapshot's records) until accepted.
//!
//! **The alarm** scans a chunk with the `names` crate for name-like spans no record,
//! alias or hit covers, and proposes each as a candidate with `origin: extractor`.
//! A surface already proposed (folded alike) gets the new sighting added to its
//! evidence instead of a second candidate; scanning the same chunk again changes
//! nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ledger_model::*;
use matcher::Profile;
use names::{Lang, Scanner, Sighting};

use crate::book::Book;
use crate::chunks::Assembled;
use crate::error::BookError;
use crate::service::{Labelled, WriteOptions, Written};

/// What the book knows of the names in one chunk at the head ([`Book::chunk_names`]),
/// which the name alarm ([`Book::scan_names`]) and the embedding tier's suggestions
/// read the chunk against: every surface of every active term (source and aliases),
/// in any window (a name the book knows is never unknown, spoiler or not), folded by
/// the book's profile, and the chunk assembled for the full view (not recorded),
/// whose hits cover what the book matches lexically.
#[derive(Debug)]
pub struct ChunkNames {
    profile: Option<Arc<Profile>>,
    known: BTreeSet<String>,
    /// The chunk assembled at the head.
    pub assembled: Assembled,
    covered: Vec<(u32, u32)>,
}

impl ChunkNames {
    /// `text` folded by the book's profile (as it is, when the book has none).
    pub fn fold(&self, text: &str) -> String {
        fold_by(self.profile.as_deref(), text)
    }

    /// Whether `surface` folds as a surface the book knows.
    pub fn is_known(&self, surface: &str) -> bool {
        self.known.contains(&self.fold(surface))
    }

    /// The byte spans `[start, end)` of the chunk its hits cover.
    pub fn covered(&self) -> &[(u32, u32)] {
        &self.covered
    }

    /// The name-like spans of the chunk (`text`, in `lang`) that neither a known
    /// surface nor a hit covers, in text order.
    pub fn unknown(&self, lang: Lang, text: &str) -> Vec<Sighting> {
        Scanner::new(lang).scan(text, &self.covered, &|surface: &str| self.is_known(surface))
    }
}

/// `text` folded by `profile`, or as it is without one.
pub(crate) fn fold_by(profile: Option<&Profile>, text: &str) -> String {
    match profile {
        Some(profile) => profile.fold(text),
        None => text.to_owned(),
    }
}

/// The evidence a candidate keeps, at most (a note is at most 2,000 characters).
const EVIDENCE_CHARS_MAX: usize = 1_800;

/// One item of the review queue.
#[derive(Clone, Debug)]
pub enum ReviewItem {
    /// An open candidate and how often it was sighted.
    Candidate {
        /// The candidate.
        proposed: CandidateProposed,
        /// Sightings recorded in its evidence.
        sightings: u64,
    },
    /// A term that needs a reviewer.
    Flagged {
        /// The term's current content.
        put: TermPut,
        /// Why: `verify:<reason>`, or `unreviewed:auto` / `unreviewed:draft`.
        why: String,
        /// Whom to ask: the term's owner and owner role (own or by default).
        owner: Option<String>,
        /// The owner's role.
        owner_role: Option<String>,
    },
    /// A rule that needs a reviewer.
    FlaggedRule {
        /// The rule's current content.
        put: RulePut,
        /// Why, as for a term.
        why: String,
        /// Whom to ask.
        owner: Option<String>,
        /// The owner's role.
        owner_role: Option<String>,
    },
}

impl ReviewItem {
    /// The record or candidate id.
    pub fn id(&self) -> RecordId {
        match self {
            ReviewItem::Candidate { proposed, .. } => proposed.id,
            ReviewItem::Flagged { put, .. } => put.id,
            ReviewItem::FlaggedRule { put, .. } => put.id,
        }
    }

    /// Whom to ask (a candidate has no owner yet).
    pub fn owner(&self) -> Option<&str> {
        match self {
            ReviewItem::Candidate { .. } => None,
            ReviewItem::Flagged { owner, .. } | ReviewItem::FlaggedRule { owner, .. } => owner.as_deref(),
        }
    }
}

/// Why a record with this verdict and status needs a reviewer, if it does.
fn flagged_why(verdict: &Option<(Verdict, String)>, status: Status) -> Option<String> {
    Some(match (verdict, status) {
        (Some((Verdict::Verify, reason)), _) => format!("verify:{reason}"),
        (Some((Verdict::Accept | Verdict::Reject, _)), _) => return None,
        (_, Status::Approved) => return None,
        (_, Status::Auto) => "unreviewed:auto".into(),
        (_, Status::Draft) => "unreviewed:draft".into(),
    })
}

/// What accepting a candidate close to term `related` writes: its surface as an
/// alias of that term, or, for a pair of probable duplicates, the verdict alone.
/// Neither makes a new term, so a rendering, gender, kind or term id is refused.
fn accept_related(
    candidate: &CandidateProposed,
    related: RecordId,
    acceptance: &Acceptance,
) -> Result<Vec<Body>, BookError> {
    let id = candidate.id;
    let given: Vec<&str> = [
        ("a rendering", acceptance.dst.is_some()),
        ("a gender", acceptance.gender.is_some()),
        ("a kind", acceptance.kind.is_some()),
        ("a term id", acceptance.term.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, set)| set.then_some(flag))
    .collect();
    let what = match candidate.duplicate {
        Some(duplicate) => format!("{id} says {duplicate} is probably the same entity as {related}"),
        None => format!("{id} proposes {} as an alias of {related}", candidate.surface),
    };
    if !given.is_empty() {
        return Err(BookError::Invalid(format!(
            "{what}: accepting it makes no new term, so {} cannot be given (reject it and propose a term instead)",
            given.join(", ")
        )));
    }
    let mut bodies = Vec::new();
    let note = match candidate.duplicate {
        Some(duplicate) => {
            let finding = format!("{duplicate} is the same entity as {related}; nothing was merged");
            Some(acceptance.note.as_ref().map_or(finding.clone(), |note| format!("{finding}. {note}")))
        }
        None => {
            bodies.push(Body::AliasAdded(AliasAdded {
                id: related,
                surface: candidate.surface.clone(),
                kind: AliasKind::Variant,
                window: None,
                release_to: None,
            }));
            let done = format!("as alias of {related}");
            Some(acceptance.note.as_ref().map_or(done.clone(), |note| format!("{done}. {note}")))
        }
    };
    let reason = if candidate.duplicate.is_some() { "same_entity" } else { "accepted" };
    bodies.push(Body::DispositionSet(DispositionSet {
        target: id,
        verdict: Verdict::Accept,
        reason: reason.into(),
        note,
    }));
    Ok(bodies)
}

/// How a reviewer accepts.
#[derive(Clone, Debug, Default)]
pub struct Acceptance {
    /// The rendering (a candidate needs one, or its suggested one).
    pub dst: Option<String>,
    /// Grammatical gender of the rendering.
    pub gender: Option<Gender>,
    /// Category.
    pub kind: Option<String>,
    /// Free note.
    pub note: Option<String>,
    /// The id of the new term (default: the next free one).
    pub term: Option<RecordId>,
}

/// What a scan found: each sighting and the candidate it is evidence for.
#[derive(Debug)]
pub struct Scanned {
    /// Sightings in text order, each with its candidate id (new or existing).
    pub sightings: Vec<(Sighting, RecordId)>,
    /// Candidates proposed or given new evidence (written unless a dry run).
    pub proposed: Vec<CandidateProposed>,
    /// The write, if anything was written.
    pub written: Option<Written>,
}

/// Every surface the book knows at the head (each active term's source and aliases,
/// in any window: a name the book knows is never unknown, spoiler or not), folded by
/// `fold`.
pub(crate) fn known_surfaces(state: &projections::State, fold: &dyn Fn(&str) -> String) -> BTreeSet<String> {
    let mut known = BTreeSet::new();
    for active in state.active_terms(None) {
        known.insert(fold(&active.term.put.src));
        known.extend(active.term.aliases.keys().map(|surface| fold(surface)));
    }
    known
}

/// The evidence line of a sighting in chunk `chunk_key` of `chapter`:
/// `ch3/12@40-42 surname (reading)`, chars into the chunk.
pub(crate) fn sighting_line(chapter: u32, chunk_key: &str, sighting: &Sighting) -> String {
    let reading = sighting.reading.as_ref().map(|reading| format!(" ({reading})")).unwrap_or_default();
    let cue = format!("{:?}", sighting.cue).to_lowercase();
    format!("ch{chapter}/{chunk_key}@{}-{} {cue}{reading}", sighting.chars.0, sighting.chars.1)
}

/// The book's candidates by folded surface, the one place the name alarm, the
/// book-wide scan and the model's extraction propose into: a surface already proposed
/// (by any origin, open or judged) is updated, a new one becomes a candidate numbered
/// after the highest candidate id used, and what changed is what they write.
pub(crate) struct Slate {
    by_surface: BTreeMap<String, CandidateProposed>,
    free: projections::FreeIds,
    changed: BTreeMap<RecordId, CandidateProposed>,
}

impl Slate {
    /// The candidates of `state`, by their surfaces folded by `fold`.
    pub(crate) fn of(state: &projections::State, fold: &dyn Fn(&str) -> String) -> Slate {
        let mut by_surface: BTreeMap<String, CandidateProposed> = BTreeMap::new();
        for candidate in state.candidates().values() {
            by_surface.entry(fold(&candidate.proposed.surface)).or_insert_with(|| candidate.proposed.clone());
        }
        Slate { by_surface, free: state.free_ids(RecordKind::Candidate), changed: BTreeMap::new() }
    }

    /// Lets `update` change the candidate of the folded surface `folded` (made for
    /// `surface` with `origin` when none has it), which says whether it changed it;
    /// the candidate's id, whether it is new, and whether this update changed it (a
    /// new candidate always did).
    pub(crate) fn update(
        &mut self,
        folded: String,
        surface: &str,
        origin: Origin,
        update: impl FnOnce(&mut CandidateProposed) -> bool,
    ) -> Result<(RecordId, bool, bool), BookError> {
        let (candidate, new) = match self.by_surface.entry(folded) {
            std::collections::btree_map::Entry::Occupied(found) => (found.into_mut(), false),
            std::collections::btree_map::Entry::Vacant(slot) => {
                (slot.insert(CandidateProposed::new(self.free.take()?, surface, origin)), true)
            }
        };
        let changed = update(candidate) || new;
        if changed {
            self.changed.insert(candidate.id, candidate.clone());
        }
        Ok((candidate.id, new, changed))
    }

    /// The candidates changed or made, by id: what to propose.
    pub(crate) fn proposed(self) -> Vec<CandidateProposed> {
        self.changed.into_values().collect()
    }
}

/// The language of a book's names, by its profile: `what` (the name alarm, the
/// extraction) knows Chinese (zh) and Japanese (ja) books only.
pub(crate) fn names_lang(state: &projections::State, what: &str) -> Result<Lang, BookError> {
    match state.config().map(|config| config.profile.name.as_str()) {
        Some("zh") => Ok(Lang::Zh),
        Some("ja") => Ok(Lang::Ja),
        other => Err(BookError::Invalid(format!(
            "{what} knows Chinese (zh) and Japanese (ja) books, not {}",
            other.unwrap_or("a book without a profile")
        ))),
    }
}

/// Adds the sighting `line` to `candidate`'s evidence (`sightings: N`, then one line a
/// sighting, up to [`EVIDENCE_CHARS_MAX`]; past it a sighting is counted, not listed),
/// unless the evidence lists it already. Whether the evidence changed.
pub(crate) fn add_sighting(candidate: &mut CandidateProposed, line: &str) -> bool {
    let evidence = candidate.evidence.clone().unwrap_or_default();
    if evidence.lines().any(|known| known == line) {
        return false;
    }
    let n = if evidence.is_empty() { 0 } else { sightings_in(Some(&evidence)) };
    let mut lines: Vec<&str> = evidence.lines().filter(|line| !line.starts_with("sightings: ")).collect();
    let kept: usize = lines.iter().map(|line| line.chars().count() + 1).sum();
    if kept + line.chars().count() < EVIDENCE_CHARS_MAX {
        lines.push(line);
    }
    candidate.evidence = Some(format!("sightings: {}\n{}", n + 1, lines.join("\n")));
    true
}

/// The number of sightings an evidence text records (its first line, `sightings: N`).
fn sightings_in(evidence: Option<&str>) -> u64 {
    evidence
        .and_then(|text| text.lines().next())
        .and_then(|line| line.strip_prefix("sightings: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1)
}

impl Book {
    /// One item of the review queue at the head (`review show`): the candidate or
    /// flagged record `id`, or not found when the queue does not hold it.
    pub fn review_item(&mut self, id: RecordId) -> Result<ReviewItem, BookError> {
        self.review_list(None)?
            .into_iter()
            .find(|item| item.id() == id)
            .ok_or_else(|| BookError::NotFound { what: format!("{id} in the review queue") })
    }

    /// The review queue at the head: open candidates (most sighted first, then by
    /// id), then flagged terms and rules by id, each with whom to ask. With `owner`,
    /// only the records that party owns (own or by default).
    pub fn review_list(&mut self, owner: Option<&str>) -> Result<Vec<ReviewItem>, BookError> {
        let state = self.state(None)?;
        let mut candidates: Vec<ReviewItem> = state
            .candidates()
            .values()
            .filter(|candidate| candidate.verdict.is_none())
            .map(|candidate| ReviewItem::Candidate {
                proposed: candidate.proposed.clone(),
                sightings: sightings_in(candidate.proposed.evidence.as_deref()),
            })
            .collect();
        // Normal trust: those the book-wide alarm scored, best score first, then the
        // rest most sighted first; then low trust, best score first; then the id: a
        // total order.
        candidates.sort_by_key(|item| match item {
            ReviewItem::Candidate { proposed, sightings } => {
                let low = proposed.trust == Trust::Low;
                let score = i64::from(proposed.score.unwrap_or(i32::MIN));
                let sighted = i64::try_from(*sightings).unwrap_or(i64::MAX);
                let (first, second) =
                    if low || proposed.score.is_some() { (score, sighted) } else { (i64::MIN, sighted) };
                (low, std::cmp::Reverse(first), std::cmp::Reverse(second), proposed.id)
            }
            other => (true, std::cmp::Reverse(i64::MIN), std::cmp::Reverse(i64::MIN), other.id()),
        });
        let owned = |id: RecordId| {
            let governed = state.governed(id);
            (governed.owner.map(str::to_owned), governed.owner_role.map(str::to_owned))
        };
        let flagged = state.terms().values().filter(|term| !term.retired).filter_map(|term| {
            let why = flagged_why(&term.verdict, term.put.status)?;
            let (owner, owner_role) = owned(term.put.id);
            Some(ReviewItem::Flagged { put: term.put.clone(), why, owner, owner_role })
        });
        candidates.extend(flagged);
        let flagged_rules = state.rules().values().filter(|rule| !rule.retired).filter_map(|rule| {
            let why = flagged_why(&rule.verdict, rule.put.status)?;
            let (owner, owner_role) = owned(rule.put.id);
            Some(ReviewItem::FlaggedRule { put: rule.put.clone(), why, owner, owner_role })
        });
        candidates.extend(flagged_rules);
        if let Some(owner) = owner {
            candidates.retain(|item| item.owner() == Some(owner));
        }
        Ok(candidates)
    }

    /// Accepts candidate or record `id`: a candidate becomes a new approved term
    /// (its surface as `src`) and is marked accepted, in one batch; a candidate close
    /// to a term (`related`) becomes an alias of that term instead, and a pair of
    /// probable duplicates is marked accepted only (nothing is merged); a record gets
    /// the `accept` verdict (and, with a `dst`, the new rendering first).
    pub fn review_accept(
        &mut self,
        id: RecordId,
        acceptance: &Acceptance,
        write: &WriteOptions,
    ) -> Result<Written, BookError> {
        let bodies = self.acceptance_of(id, acceptance)?;
        self.submit_labelled(write, Labelled::numbered(bodies, "review"), Vec::new())
    }

    /// What [`Book::review_accept`] would do, written nowhere: the batch's what-if
    /// ([`Book::impact_with`]: the decision with a write's rules and refusals, the
    /// recorded chunks it would re-open, the snapshot it would make), against the
    /// head the acceptance is read at unless `write` names another.
    pub fn review_accept_what_if(
        &mut self,
        id: RecordId,
        acceptance: &Acceptance,
        write: &WriteOptions,
    ) -> Result<crate::chunks::WhatIf, BookError> {
        let head = self.state(None)?.revision();
        let bodies = self.acceptance_of(id, acceptance)?;
        self.impact_with(&write.at_head(head), Labelled::numbered(bodies, "review"))
    }

    /// What accepting `id` appends ([`Book::review_accept`]), read at the head; the
    /// head is let go of before the write, which then changes it in place.
    fn acceptance_of(&mut self, id: RecordId, acceptance: &Acceptance) -> Result<Vec<Body>, BookError> {
        let state = self.state(None)?;
        let mut bodies = Vec::new();
        match id.kind() {
            RecordKind::Candidate => {
                let candidate = state
                    .candidates()
                    .get(&id)
                    .ok_or_else(|| BookError::Invalid(format!("{id}: no such candidate")))?;
                if let Some(related) = candidate.proposed.related {
                    return accept_related(&candidate.proposed, related, acceptance);
                }
                let surface = &candidate.proposed.surface;
                // A name accepted without a rendering gets the standard's form.
                let dst = match acceptance.dst.clone().or_else(|| candidate.proposed.suggested_dst.clone()) {
                    Some(dst) => dst,
                    None => match acceptance.kind.as_deref() {
                        Some(kind @ ("character" | "place")) => {
                            let surface = surface.clone();
                            self.proposed_name(&state, kind, &surface).map_err(|why| {
                                BookError::Invalid(format!(
                                    "{id} ({surface}) has no suggested rendering and the standard gives none \
                                         ({why}): accepting it needs one"
                                ))
                            })?
                        }
                        _ => {
                            return Err(BookError::Invalid(format!(
                                "{id} ({surface}) has no suggested rendering: accepting it needs one (or the kind \
                                 character or place, for the standard transcription of a name)"
                            )))
                        }
                    },
                };
                let term = match acceptance.term {
                    Some(term) => term,
                    None => state.next_free_id(RecordKind::Term)?,
                };
                let put = TermPut {
                    gender: acceptance.gender,
                    kind: acceptance.kind.clone(),
                    note: acceptance.note.clone(),
                    ..TermPut::new(term, candidate.proposed.surface.clone(), dst)
                };
                bodies.push(Body::TermPut(put));
                bodies.push(Body::DispositionSet(DispositionSet {
                    target: id,
                    verdict: Verdict::Accept,
                    reason: "accepted".into(),
                    note: Some(format!("as {term}")),
                }));
            }
            RecordKind::Term => {
                let (current, _) = self.current_term(id)?;
                let mut put = current.clone();
                if let Some(dst) = &acceptance.dst {
                    put.dst = dst.clone();
                }
                if acceptance.gender.is_some() {
                    put.gender = acceptance.gender;
                }
                if acceptance.kind.is_some() {
                    put.kind = acceptance.kind.clone();
                }
                if acceptance.note.is_some() {
                    put.note = acceptance.note.clone();
                }
                put.status = Status::Approved;
                if put != current {
                    bodies.push(Body::TermPut(put));
                }
                bodies.push(Body::DispositionSet(DispositionSet {
                    target: id,
                    verdict: Verdict::Accept,
                    reason: "reviewed".into(),
                    note: None,
                }));
            }
            RecordKind::Rule => {
                let rule = state
                    .rules()
                    .get(&id)
                    .filter(|rule| !rule.retired)
                    .ok_or_else(|| BookError::Invalid(format!("{id}: no such rule")))?;
                if acceptance.dst.is_some() || acceptance.gender.is_some() || acceptance.kind.is_some() {
                    return Err(BookError::Invalid(format!("{id}: a rule has no rendering, gender or kind to set")));
                }
                if rule.put.status != Status::Approved {
                    bodies.push(Body::RulePut(RulePut { status: Status::Approved, ..rule.put.clone() }));
                }
                bodies.push(Body::DispositionSet(DispositionSet {
                    target: id,
                    verdict: Verdict::Accept,
                    reason: "reviewed".into(),
                    note: acceptance.note.clone(),
                }));
            }
            RecordKind::Summary => return Err(BookError::Invalid(format!("{id}: summaries are not reviewed"))),
        }
        Ok(bodies)
    }

    /// Writes the verdict `verdict` (reject or verify) on candidate or record `id`
    /// with a reason code (callers that take none give [`default_reason`]).
    pub fn review_judge(
        &mut self,
        id: RecordId,
        verdict: Verdict,
        reason: &str,
        note: Option<String>,
        write: &WriteOptions,
    ) -> Result<Written, BookError> {
        let body = Body::DispositionSet(DispositionSet { target: id, verdict, reason: reason.to_owned(), note });
        self.submit_labelled(write, Labelled::numbered(vec![body], "review"), Vec::new())
    }

    /// What the book knows of the names in chunk `chunk_key` of `chapter` (its text
    /// `text`) at the head ([`ChunkNames`]), folded by `profile` (the book's).
    pub fn chunk_names(
        &mut self,
        profile: Option<Arc<Profile>>,
        chapter: u32,
        chunk_key: &str,
        text: &str,
    ) -> Result<ChunkNames, BookError> {
        let state = self.state(None)?;
        let known = known_surfaces(&state, &|text| fold_by(profile.as_deref(), text));
        let assembled = self.assembler()?.assemble_chunk(chapter, chunk_key, text, None, false)?;
        let covered = assembled.receipt.hits.iter().map(|hit| hit.bytes).collect();
        Ok(ChunkNames { profile, known, assembled, covered })
    }

    /// Scans chunk `chunk_key` of `chapter` for name-like spans that no record,
    /// alias or hit covers, and (unless `dry_run`) proposes each as a candidate, or
    /// adds the sighting to the candidate already proposed for its surface.
    pub fn scan_names(
        &mut self,
        chapter: u32,
        chunk_key: &str,
        text: &str,
        dry_run: bool,
        write: &WriteOptions,
    ) -> Result<Scanned, BookError> {
        let state = self.state(None)?;
        let profile = self.profile(&state)?;
        let lang = names_lang(&state, "the name alarm")?;
        let names = self.chunk_names(profile, chapter, chunk_key, text)?;
        let found = names.unknown(lang, text);
        let mut slate = Slate::of(&state, &|text| names.fold(text));
        let mut sightings = Vec::new();
        for sighting in found {
            let line = sighting_line(chapter, chunk_key, &sighting);
            let (id, ..) =
                slate.update(names.fold(&sighting.surface), &sighting.surface, Origin::Extractor, |candidate| {
                    add_sighting(candidate, &line)
                })?;
            sightings.push((sighting, id));
        }
        let proposed = slate.proposed();
        // The write changes the head in place once nothing here holds it.
        drop(state);
        let written = self.propose(write, &proposed, &format!("ch{chapter}/{chunk_key}"), dry_run)?;
        Ok(Scanned { sightings, proposed, written })
    }

    /// Appends the candidates `proposed` in one batch, each event's default source
    /// `source` (`ch3/12` for a chunk's), unless `dry_run` or there are none: the one
    /// write of the name alarm and of the embedding tier's suggest and dedupe. With
    /// nothing to propose a stale `expect_head` still refuses (unless `dry_run`): the
    /// caller asked for a write against a head that has moved.
    pub fn propose(
        &mut self,
        write: &WriteOptions,
        proposed: &[CandidateProposed],
        source: &str,
        dry_run: bool,
    ) -> Result<Option<Written>, BookError> {
        if dry_run {
            return Ok(None);
        }
        if proposed.is_empty() {
            if let Some(expected) = write.expect_head {
                let actual = self.state(None)?.revision();
                if expected != actual {
                    return Err(ledger::AppendError::Conflict { expected, actual }.into());
                }
            }
            return Ok(None);
        }
        let bodies = proposed.iter().cloned().map(Body::CandidateProposed).collect();
        Ok(Some(self.submit_labelled(write, Labelled::numbered(bodies, source), Vec::new())?))
    }
}

/// The reason code of a verdict whose caller names none: `rejected` for a rejection,
/// `verify` for a verification (the CLI's default and the API's alike).
pub fn default_reason(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Reject => REJECTED,
        _ => VERIFY,
    }
}

/// The reason code a reviewer is offered for `verdict` on `item`: a candidate is
/// rejected as [`NOT_A_NAME`] (what the name alarm mostly gets wrong), anything else as
/// [`default_reason`] says.
pub fn offered_reason(item: &ReviewItem, verdict: Verdict) -> &'static str {
    match (item, verdict) {
        (ReviewItem::Candidate { .. }, Verdict::Reject) => NOT_A_NAME,
        _ => default_reason(verdict),
    }
}

/// The default reason code of a rejection.
pub const REJECTED: &str = "rejected";

/// The reason code of a candidate that is no name.
pub const NOT_A_NAME: &str = "not_a_name";

/// The default reason code of a verification.
pub const VERIFY: &str = "verify";
