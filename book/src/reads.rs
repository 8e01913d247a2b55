//! The read use cases of a book as plain results: the glossary at a revision, its
//! snapshot ID, the difference between two revisions, a rebuild of the derived caches,
//! and the audit of a chapter's recorded chunks. Callers render them.

use std::sync::Arc;

use ledger_model::*;
use projections::{diff, FieldChange, Provenance, Reader, RecordDiff, SnapshotId, State};

use crate::book::Book;
use crate::chunks::{staleness, Staleness};
use crate::error::BookError;
use assembly::assemble::Disposition;
use assembly::receipt::{Receipt, ReceiptEntry, ReceiptHit, ReceiptRule};

/// The glossary at a revision, optionally at one chapter, as one reader sees it.
#[derive(Clone, Debug)]
pub struct Glossary {
    /// The state folded to the revision, as the reader sees it
    /// ([`State::view_for`]); the full view shares the book's.
    pub state: Arc<State>,
    /// Who reads it.
    pub reader: Reader,
    /// Its snapshot ID.
    pub snapshot: SnapshotId,
    /// The chapter asked for.
    pub chapter: Option<u32>,
}

/// A snapshot ID and where the book has it.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotInfo {
    /// The snapshot ID.
    pub snapshot: SnapshotId,
    /// The revision asked for.
    pub revision: Seq,
    /// The first batch-end revision the snapshot index has for this ID.
    pub first_revision: Option<Seq>,
}

/// What differs between two revisions.
#[derive(Clone, Debug)]
pub struct Diff {
    /// The state at the first revision, shared with the book.
    pub old: Arc<State>,
    /// The state at the second revision, shared with the book.
    pub new: Arc<State>,
    /// Records added, removed and changed.
    pub records: Vec<RecordDiff>,
    /// The config change, if any.
    pub config: Vec<FieldChange>,
}

/// The outcome of a rebuild.
#[derive(Clone, Copy, Debug)]
pub struct Rebuilt {
    /// The head's snapshot ID.
    pub snapshot: SnapshotId,
    /// The head.
    pub revision: Seq,
    /// Cache entries dropped.
    pub n_cache_entries_dropped: u64,
    /// Checkpoints dropped.
    pub n_checkpoints_dropped: u64,
    /// Checkpoints written.
    pub n_checkpoints: u64,
    /// Active terms in the head's frozen projection.
    pub n_terms: usize,
    /// Patterns in its automaton.
    pub n_patterns: usize,
    /// Derived entries (an embedding model's vectors) whose checksum holds: kept, since
    /// rebuilding them needs what the log does not hold (the model files; `lorebank
    /// embed refresh` recomputes them).
    pub n_derived: u64,
    /// Derived entries failing their checksum: dropped.
    pub n_derived_dropped: u64,
}

/// One injected entry of a recorded chunk, explained.
#[derive(Clone, Debug)]
pub struct AuditedEntry {
    /// The entry as recorded.
    pub entry: ReceiptEntry,
    /// The term's source surface at the receipt's revision.
    pub src: String,
    /// Its rendering at the receipt's revision.
    pub dst: String,
    /// The event that put that version.
    pub put_by: Provenance,
    /// How it stands at the head.
    pub stale: Staleness,
    /// Whom to ask about it: its owner at the head (own or by default).
    pub owner: Option<String>,
    /// The owner's role.
    pub owner_role: Option<String>,
}

/// One rule of a recorded chunk's receipt, explained.
#[derive(Clone, Debug)]
pub struct AuditedRule {
    /// The rule as recorded.
    pub rule: ReceiptRule,
    /// Its text at the receipt's revision.
    pub text: String,
    /// The event that put that version.
    pub put_by: Provenance,
    /// Whom to ask about it.
    pub owner: Option<String>,
}

/// One recorded chunk, explained.
#[derive(Clone, Debug)]
pub struct AuditedChunk {
    /// The receipt id.
    pub id: Hash32,
    /// The receipt.
    pub receipt: Receipt,
    /// The chunk's text, as it was assembled over (the receipt's input).
    pub text: String,
    /// What was injected, and from which event.
    pub injected: Vec<AuditedEntry>,
    /// Hits that were rejected, with their reasons.
    pub rejected: Vec<ReceiptHit>,
    /// Rules in scope, with their decisions.
    pub rules: Vec<AuditedRule>,
    /// The post-checks of translations of this chunk, oldest first.
    pub checks: Vec<(Hash32, crate::check::StoredCheck)>,
}

/// The audit of a chapter.
#[derive(Clone, Debug)]
pub struct Audit {
    /// The chapter.
    pub chapter: u32,
    /// The head it was audited at.
    pub head: Seq,
    /// Its recorded chunks (the latest receipt of each), in chunk-key order.
    pub chunks: Vec<AuditedChunk>,
    /// The coverage of the register of expected concepts in this chapter.
    pub coverage: crate::governance::Coverage,
}

impl Book {
    /// The glossary `reader` sees at revision `as_of` (the head when `None`), at
    /// `chapter`.
    pub fn glossary(
        &mut self,
        reader: &Reader,
        as_of: Option<Seq>,
        chapter: Option<u32>,
    ) -> Result<Glossary, BookError> {
        let read = self.read_at(reader, as_of)?;
        let snapshot = read.snapshot;
        Ok(Glossary { state: read.into_view(), reader: reader.clone(), snapshot, chapter })
    }

    /// The languages of the book at revision `as_of` (the head when `None`): its
    /// source and target language, declared or by default ([`State::source_lang`],
    /// [`State::target_lang`]).
    pub fn languages(&mut self, as_of: Option<Seq>) -> Result<formats::Languages, BookError> {
        let state = self.state(as_of)?;
        Ok(formats::Languages { source: state.source_lang().to_owned(), target: state.target_lang().to_owned() })
    }

    /// The snapshot ID at revision `as_of` (the head when `None`).
    pub fn snapshot_info(&mut self, as_of: Option<Seq>) -> Result<SnapshotInfo, BookError> {
        let state = self.state(as_of)?;
        let snapshot = self.snapshot_id(&state);
        let first_revision = self.ledger().snapshot_revision(snapshot.0)?;
        Ok(SnapshotInfo { snapshot, revision: state.revision(), first_revision })
    }

    /// [`Book::diff`] from revision `from` to `to`, the head when `None`.
    pub fn diff_until(&mut self, from: Seq, to: Option<Seq>) -> Result<Diff, BookError> {
        let to = match to {
            Some(to) => to,
            None => self.ledger().head()?.seq,
        };
        self.diff(from, to)
    }

    /// What differs from revision `from` to revision `to`.
    pub fn diff(&mut self, from: Seq, to: Seq) -> Result<Diff, BookError> {
        // The lower revision first, so the higher one folds on from it.
        let (old, new) = if from <= to {
            let old = self.state(Some(from))?;
            (old, self.state(Some(to))?)
        } else {
            let new = self.state(Some(to))?;
            (self.state(Some(from))?, new)
        };
        let (records, config) = diff(&old, &new);
        Ok(Diff { old, new, records, config })
    }

    /// Drops the derived caches and checkpoints, refolds the log once from event 1
    /// (calling `progress` with events folded and events to fold), rebuilding the
    /// snapshot index and writing new checkpoints as it goes, and stores the head's
    /// frozen projection. Derived sets are checked, not dropped: an entry failing its
    /// checksum goes, one that holds stays (its key names what made it).
    pub fn rebuild(&mut self, progress: impl FnMut(u64, u64)) -> Result<Rebuilt, BookError> {
        self.wait_for_checkpoint();
        let n_cache_entries_dropped = self.ledger().cache_clear()?;
        self.forget_projections();
        let n_checkpoints_dropped = self.ledger().clear_checkpoints()?;
        let (n_derived, n_derived_dropped) = self.ledger().derived_check()?;
        self.forget_states();
        self.refold(progress, true)?;
        let state = self.state(None)?;
        let snapshot = self.snapshot_id(&state);
        let (frozen, _) = self.frozen(&state)?;
        self.file_projections();
        Ok(Rebuilt {
            snapshot,
            revision: state.revision(),
            n_cache_entries_dropped,
            n_checkpoints_dropped,
            n_checkpoints: self.ledger().checkpoints()?.len() as u64,
            n_terms: frozen.table().terms.len(),
            n_patterns: frozen.matcher().n_patterns(),
            n_derived,
            n_derived_dropped,
        })
    }

    /// Explains every recorded chunk of `chapter`: what was injected and the event
    /// that put it, whether it is stale at the head, and what was rejected.
    pub fn audit(&mut self, chapter: u32) -> Result<Audit, BookError> {
        let receipts = self.latest_receipts(Some(chapter))?;
        let head = self.state(None)?;
        // Each distinct revision is folded once, in ascending order, each from the
        // one before (or a closer checkpoint); the chunks keep their key order.
        let mut order: Vec<usize> = (0..receipts.len()).collect();
        order.sort_by_key(|&index| receipts[index].1.revision);
        let mut audited: Vec<Option<AuditedChunk>> = vec![None; receipts.len()];
        let mut then: Option<Arc<State>> = None;
        for index in order {
            let (id, receipt) = &receipts[index];
            if then.as_ref().is_none_or(|then| then.revision() != receipt.revision) {
                // Let go of the revision before, so the book folds on from it in place.
                then.take();
                then = Some(self.state(Some(receipt.revision))?);
            }
            let then = then.as_ref().expect("folded above");
            let injected = receipt
                .injected
                .iter()
                .filter_map(|entry| {
                    let record = RecordId::new(RecordKind::Term, entry.term).and_then(|id| then.terms().get(&id))?;
                    let governed = head.governed(record.put.id);
                    Some(AuditedEntry {
                        entry: entry.clone(),
                        src: record.put.src.clone(),
                        dst: record.put.dst.clone(),
                        put_by: record.put_by.clone(),
                        stale: staleness(&head, entry, Some(&record.put)),
                        owner: governed.owner.map(str::to_owned),
                        owner_role: governed.owner_role.map(str::to_owned),
                    })
                })
                .collect();
            let rules = receipt
                .rules
                .iter()
                .filter_map(|decision| {
                    let id = RecordId::new(RecordKind::Rule, decision.rule)?;
                    let rule = then.rules().get(&id)?;
                    Some(AuditedRule {
                        rule: decision.clone(),
                        text: rule.put.text.clone(),
                        put_by: rule.put_by.clone(),
                        owner: head.governed(id).owner.map(str::to_owned),
                    })
                })
                .collect();
            let rejected =
                receipt.hits.iter().filter(|hit| hit.disposition == Disposition::Rejected).cloned().collect();
            let checks = self.checks_of(*id)?;
            let text = self.text(receipt.input, "input")?;
            audited[index] =
                Some(AuditedChunk { id: *id, receipt: receipt.clone(), text, injected, rejected, rules, checks });
        }
        let chunks = audited.into_iter().flatten().collect();
        let coverage = self.coverage(Some(chapter))?;
        Ok(Audit { chapter, head: head.revision(), chunks, coverage })
    }
}
