//! The bi-temporal history of one term, for the audit page's timeline: every version
//! with the revisions during which it was current (editorial time), the story-time
//! window assembly applied it in at each of those revisions (after supersession,
//! which is derived at read time and so changes when a successor is put or retired),
//! its aliases with their windows, its verdicts, and every recorded chunk that hit
//! or injected it.
//!
//! Windows are never recomputed here: each is read from the state folded to the
//! revision in question ([`projections::State::effective_window`]), so the timeline
//! shows what assembly did, by the same rules.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use ledger_model::*;
use projections::Provenance;

use crate::book::Book;
use crate::error::BookError;
use assembly::assemble::{Disposition, Reason, Via};

/// One version of a term: the content one `term_put` gave it.
#[derive(Clone, Debug)]
pub struct TermVersion {
    /// The put.
    pub put: TermPut,
    /// The event that made it.
    pub by: Provenance,
    /// The fields that differ from the version before (empty for the first).
    pub changed: Vec<&'static str>,
    /// The first revision at which it was no longer the current version (the next
    /// put or the retirement); `None` while it is current.
    pub until: Option<Seq>,
}

/// A stretch of revisions during which nothing about how the term applies changed:
/// one rectangle of the timeline (its window × these revisions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// The first revision of the stretch.
    pub from: Seq,
    /// The first revision after it; `None` when it lasts to the head.
    pub until: Option<Seq>,
    /// The seq of the version in force.
    pub version: Seq,
    /// The window the version declares.
    pub declared: Window,
    /// The window assembly applied it in (after supersession); `None` when a
    /// successor leaves nothing of it.
    pub effective: Option<Window>,
    /// The term whose supersession cuts it, if one does.
    pub superseded_by: Option<RecordId>,
    /// Whether the term was retired.
    pub retired: bool,
    /// The editorial verdict in force, with its reason code.
    pub verdict: Option<(Verdict, String)>,
}

/// One alias of the term, from the event that added it to the one that removed or
/// replaced it.
#[derive(Clone, Debug)]
pub struct AliasSpan {
    /// The alias as added.
    pub alias: AliasAdded,
    /// The event that added it.
    pub added: Provenance,
    /// The event that removed it, or added it again differently.
    pub removed: Option<Provenance>,
}

/// A recorded chunk whose receipt hit or injected the term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkMark {
    /// The receipt.
    pub receipt: Hash32,
    /// Its chapter.
    pub chapter: u32,
    /// Its chunk key.
    pub chunk_key: String,
    /// The revision it was assembled at.
    pub revision: Seq,
    /// The seq of the version of the term it used (0 when the receipt names none).
    pub version: u64,
    /// The decision on the first hit of the term in the chunk, if it was hit.
    pub hit: Option<(Disposition, Option<Reason>)>,
    /// How the term got into the context, if it was injected.
    pub injected: Option<Via>,
    /// Whether this is the latest receipt of its chunk.
    pub latest: bool,
}

/// The history of a term along both of its time axes.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// The term.
    pub id: RecordId,
    /// The head the history was read at.
    pub head: Seq,
    /// Every event about the term and every put that supersedes it, in log order.
    pub events: Vec<Event>,
    /// Its versions, oldest first.
    pub versions: Vec<TermVersion>,
    /// The stretches of revisions, oldest first, from its first put to the head.
    pub stretches: Vec<Stretch>,
    /// Its aliases, in the order they were added.
    pub aliases: Vec<AliasSpan>,
    /// The verdicts written on it, oldest first.
    pub verdicts: Vec<(DispositionSet, Provenance)>,
    /// Every recorded chunk that hit or injected it, by chapter, chunk and revision.
    pub marks: Vec<ChunkMark>,
    /// How its rendering at the head stands against the standard transcription of
    /// names (`names lint`'s check); `None` unless it is an active character or place.
    pub standard: Option<crate::standard::NameCheck>,
}

fn provenance(event: &Event) -> Provenance {
    Provenance {
        seq: event.seq,
        kind: event.content.body.kind_name(),
        actor: event.content.actor.clone(),
        source: event.content.source.clone(),
        recorded_at_ms: event.content.recorded_at_ms,
    }
}

/// The fields of `new` that differ from `old` (the names of the `term_put` form).
pub fn changed_fields(old: &TermPut, new: &TermPut) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let mut check = |name: &'static str, differs: bool| {
        if differs {
            changed.push(name);
        }
    };
    check("src", old.src != new.src);
    check("sense", old.sense != new.sense);
    check("dst", old.dst != new.dst);
    check("kind", old.kind != new.kind);
    check("gender", old.gender != new.gender);
    check("decl", old.decl != new.decl);
    check("speech", old.speech != new.speech);
    check("note", old.note != new.note);
    check("window", old.window != new.window);
    check("status", old.status != new.status);
    check("priority", old.priority != new.priority);
    check("constant", old.constant != new.constant);
    check("secondary", old.secondary != new.secondary);
    check("supersedes", old.supersedes != new.supersedes);
    changed
}

impl Book {
    /// The bi-temporal history of term `id` at the head: its versions, the stretches
    /// of revisions with the window each applied in, its aliases and verdicts, and
    /// the recorded chunks that hit it. A term without events is invalid (`no events
    /// about T-n`).
    ///
    /// Cost: one scan of the log, a fold up to the last event that changed how the
    /// term applies (from the nearest checkpoint or state in memory), and a read of
    /// every stored receipt.
    pub fn term_timeline(&mut self, id: RecordId) -> Result<Timeline, BookError> {
        if id.kind() != RecordKind::Term {
            return Err(BookError::Invalid(format!("{id} is not a term: a timeline is drawn for T- records")));
        }
        let head = self.ledger().head()?.seq;
        // The events about the term, and the revisions at which how it applies may
        // have changed: its own events, and the puts and retirements of every term
        // that ever named it in `supersedes` (a successor is known from its first
        // such put on, so one pass finds them all).
        let mut events = Vec::new();
        let mut turns: BTreeSet<Seq> = BTreeSet::new();
        let mut successors: BTreeSet<RecordId> = BTreeSet::new();
        self.ledger().scan(Seq(1), head, |event| {
            let body = &event.content.body;
            let about = body.record() == Some(id);
            let supersedes = matches!(body, Body::TermPut(put) if put.supersedes == Some(id) && put.id != id);
            if supersedes {
                successors.insert(body.record().expect("a put names its record"));
            }
            let successor_change = matches!(body, Body::TermPut(_) | Body::TermRetired(_))
                && body.record().is_some_and(|record| successors.contains(&record));
            if about || supersedes || successor_change {
                turns.insert(event.seq);
            }
            if about || supersedes {
                events.push(event);
            }
            ControlFlow::Continue(())
        })?;
        if !events.iter().any(|event| event.content.body.record() == Some(id)) {
            return Err(BookError::NotFound { what: format!("events about {id}") });
        }

        let mut versions: Vec<TermVersion> = Vec::new();
        let mut aliases: Vec<AliasSpan> = Vec::new();
        let mut verdicts = Vec::new();
        for event in events.iter().filter(|event| event.content.body.record() == Some(id)) {
            match &event.content.body {
                Body::TermPut(put) => {
                    if let Some(last) = versions.last_mut().filter(|last| last.until.is_none()) {
                        last.until = Some(event.seq);
                    }
                    let changed = versions.last().map_or_else(Vec::new, |last| changed_fields(&last.put, put));
                    versions.push(TermVersion { put: put.clone(), by: provenance(event), changed, until: None });
                }
                Body::TermRetired(_) => {
                    if let Some(last) = versions.last_mut().filter(|last| last.until.is_none()) {
                        last.until = Some(event.seq);
                    }
                }
                Body::AliasAdded(added) => {
                    for open in aliases.iter_mut().filter(|span| span.removed.is_none()) {
                        if open.alias.surface == added.surface {
                            open.removed = Some(provenance(event));
                        }
                    }
                    aliases.push(AliasSpan { alias: added.clone(), added: provenance(event), removed: None });
                }
                Body::AliasRemoved(removed) => {
                    for open in aliases.iter_mut().filter(|span| span.removed.is_none()) {
                        if open.alias.surface == removed.surface {
                            open.removed = Some(provenance(event));
                        }
                    }
                }
                Body::DispositionSet(disposition) => verdicts.push((disposition.clone(), provenance(event))),
                _ => {}
            }
        }

        // How the term applied after each turn, read from the state folded there
        // (ascending, so each fold continues the one before).
        let mut stretches: Vec<Stretch> = Vec::new();
        for &revision in &turns {
            let state = self.state(Some(revision))?;
            let Some(term) = state.terms().get(&id) else { continue };
            let (effective, superseded_by) = state.effective_window(id);
            let stretch = Stretch {
                from: revision,
                until: None,
                version: term.put_by.seq,
                declared: term.put.window,
                effective,
                superseded_by,
                retired: term.retired,
                verdict: term.verdict.clone(),
            };
            match stretches.last_mut() {
                Some(last) if Stretch { from: last.from, until: None, ..stretch.clone() } == *last => {}
                Some(last) => {
                    last.until = Some(revision);
                    stretches.push(stretch);
                }
                None => stretches.push(stretch),
            }
        }

        let marks = self.marks_of(id)?;
        let state = self.state(None)?;
        let standard = match state.terms().get(&id).filter(|term| !term.retired) {
            Some(term) => {
                let readings = self.kanji_readings(&state, std::iter::once(term))?;
                crate::standard::check_name(state.source_lang(), id, term, &readings)
            }
            None => None,
        };
        Ok(Timeline { id, head, events, versions, stretches, aliases, verdicts, marks, standard })
    }

    /// Every stored receipt that hit or injected term `id`.
    fn marks_of(&self, id: RecordId) -> Result<Vec<ChunkMark>, BookError> {
        let filed = self.ledger().filed(None)?;
        let mut latest: BTreeMap<(u32, String), Hash32> = BTreeMap::new();
        for (chapter, key, _, receipt) in &filed {
            latest.insert((*chapter, key.clone()), *receipt);
        }
        let mut seen = BTreeSet::new();
        let mut marks = Vec::new();
        for (_, _, _, receipt_id) in filed {
            if !seen.insert(receipt_id) {
                continue;
            }
            let (_, receipt) = self.receipt(&receipt_id.to_hex())?;
            let hit = receipt.hits.iter().find(|hit| hit.term == id.number());
            let injected = receipt.injected.iter().find(|entry| entry.term == id.number());
            if hit.is_none() && injected.is_none() {
                continue;
            }
            let version = injected.map(|entry| entry.version).or(hit.map(|hit| hit.version)).unwrap_or(0);
            let key = (receipt.chapter, receipt.chunk_key.clone());
            marks.push(ChunkMark {
                receipt: receipt_id,
                chapter: receipt.chapter,
                chunk_key: receipt.chunk_key.clone(),
                revision: receipt.revision,
                version,
                hit: hit.map(|hit| (hit.disposition, hit.reason)),
                injected: injected.map(|entry| entry.via),
                latest: latest.get(&key) == Some(&receipt_id),
            });
        }
        marks.sort_by(|a, b| (a.chapter, &a.chunk_key, a.revision).cmp(&(b.chapter, &b.chunk_key, b.revision)));
        Ok(marks)
    }
}
