//! A chapter explained chunk by chunk, for the audit page: the [`Book::audit`] of
//! the chapter plus, for every recorded chunk, its text and the context it was given,
//! every hit with its decision and the event that put the version of its record,
//! whether the chunk's context still replays byte for byte, and how each hit's
//! version stands at the head.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use ledger_model::*;
use projections::{Provenance, SnapshotId};

use crate::book::Book;
use crate::chunks::{staleness, Staleness};
use crate::error::BookError;
use crate::reads::AuditedChunk;
use assembly::receipt::{ReceiptEntry, ReceiptHit};

/// The version of a record a receipt names, read from the event that put it.
#[derive(Clone, Debug)]
pub struct PutVersion {
    /// The content that event gave the term.
    pub put: TermPut,
    /// The event.
    pub by: Provenance,
}

/// One hit of a recorded chunk, explained.
#[derive(Clone, Debug)]
pub struct ExplainedHit {
    /// The hit as recorded (span, surface, decision, reason).
    pub hit: ReceiptHit,
    /// Whether its term was injected into the chunk's context.
    pub injected: bool,
    /// Whether its term was left out by the token budget.
    pub evicted: bool,
    /// The version the receipt used, from the event that put it (`None` when the
    /// receipt names no version).
    pub version: Option<PutVersion>,
    /// How that version stands at the head.
    pub stale: Staleness,
}

/// How a hit fared, as the audit page marks it. A span several records share is
/// marked by its best-faring hit, in the order of [`Outcome::rank`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Injected as an exact match.
    Confirmed,
    /// Injected with a caveat: the hit's reason says which (a sense collision, …).
    Ambiguous,
    /// Matched but left out by the token budget.
    Budget,
    /// Rejected because its window starts later: a spoiler.
    Spoiler,
    /// Rejected for the hit's reason.
    Rejected,
    /// Not injected for no recorded reason.
    NotInjected,
}

impl Outcome {
    /// Best first: confirmed, ambiguous, budget, spoiler, then rejected and not
    /// injected alike (ties keep the order of the hits).
    pub fn rank(self) -> u8 {
        match self {
            Outcome::Confirmed => 0,
            Outcome::Ambiguous => 1,
            Outcome::Budget => 2,
            Outcome::Spoiler => 3,
            Outcome::Rejected | Outcome::NotInjected => 4,
        }
    }
}

impl ExplainedHit {
    /// How this hit fared.
    pub fn outcome(&self) -> Outcome {
        use assembly::assemble::{Disposition, Reason};
        match (self.hit.disposition, self.injected) {
            (Disposition::Rejected, _) if self.hit.reason == Some(Reason::SpoilerWindow) => Outcome::Spoiler,
            (Disposition::Rejected, _) => Outcome::Rejected,
            (_, false) if self.evicted => Outcome::Budget,
            (Disposition::Confirmed, true) => Outcome::Confirmed,
            (Disposition::Ambiguous, true) => Outcome::Ambiguous,
            (_, false) => Outcome::NotInjected,
        }
    }
}

impl ExplainedChunk {
    /// The chunk's hits grouped by span (byte range in the chunk's text), spans in
    /// text order, each span's hits best-faring first ([`Outcome::rank`]). A span
    /// that overlaps the one before it, or does not fit the text, is left out: it
    /// is listed with every hit, but cannot be marked in the text.
    pub fn marked_spans(&self) -> Vec<((usize, usize), Vec<&ExplainedHit>)> {
        marked_spans(&self.input, &self.hits)
    }
}

/// [`ExplainedChunk::marked_spans`] of `hits` in `text`.
fn marked_spans<'a>(text: &str, hits: &'a [ExplainedHit]) -> Vec<((usize, usize), Vec<&'a ExplainedHit>)> {
    let mut spans: Vec<((usize, usize), Vec<&ExplainedHit>)> = Vec::new();
    let mut by_span: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for hit in hits {
        let bytes = (hit.hit.bytes.0 as usize, hit.hit.bytes.1 as usize);
        match by_span.get(&bytes) {
            Some(&at) => spans[at].1.push(hit),
            None => {
                by_span.insert(bytes, spans.len());
                spans.push((bytes, vec![hit]));
            }
        }
    }
    spans.sort_by_key(|(span, _)| *span);
    let mut marked = Vec::with_capacity(spans.len());
    let mut at = 0usize;
    for ((start, end), mut hits) in spans {
        let fits = start >= at
            && end <= text.len()
            && start < end
            && text.is_char_boundary(start)
            && text.is_char_boundary(end);
        if !fits {
            continue;
        }
        hits.sort_by_key(|hit| hit.outcome().rank());
        marked.push(((start, end), hits));
        at = end;
    }
    debug_assert!(marked.windows(2).all(|pair| pair[0].0 .1 <= pair[1].0 .0), "marked spans overlap");
    marked
}

/// How a recorded chunk replays now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayStatus {
    /// Whether the re-assembled context is byte-identical to the recorded one.
    pub identical: bool,
    /// The first byte at which they differ, when they do.
    pub first_difference: Option<usize>,
}

/// One recorded chunk, explained in full.
#[derive(Clone, Debug)]
pub struct ExplainedChunk {
    /// What [`Book::audit`] says about it (injected entries with their events and
    /// staleness, rejected hits, post-checks).
    pub audited: AuditedChunk,
    /// The chunk's text.
    pub input: String,
    /// The context injected for it.
    pub output: String,
    /// Every hit, in text order.
    pub hits: Vec<ExplainedHit>,
    /// Whether the context replays byte for byte.
    pub replay: ReplayStatus,
}

/// A chapter explained: every recorded chunk (the latest receipt of each).
#[derive(Clone, Debug)]
pub struct ChapterAudit {
    /// The chapter.
    pub chapter: u32,
    /// The head it was explained at.
    pub head: Seq,
    /// The head's snapshot ID.
    pub snapshot: SnapshotId,
    /// Its recorded chunks, in chunk-key order.
    pub chunks: Vec<ExplainedChunk>,
    /// Every chapter with recorded chunks, ascending (to move between chapters).
    pub chapters: Vec<u32>,
}

impl Book {
    /// Explains every recorded chunk of `chapter` (see [`ChapterAudit`]): one call
    /// for the audit page. Replays every chunk, so it costs what replaying the
    /// chapter costs.
    pub fn chapter_audit(&mut self, chapter: u32) -> Result<ChapterAudit, BookError> {
        let audit = self.audit(chapter)?;
        let head = self.state(None)?;
        let snapshot = self.snapshot_id(&head);
        let mut versions: BTreeMap<u64, Option<PutVersion>> = BTreeMap::new();
        let mut chunks = Vec::with_capacity(audit.chunks.len());
        for audited in audit.chunks {
            let (input, output) = self.receipt_texts(&audited.receipt)?;
            let replayed = self.replay(&crate::Reader::Full, &audited.id.to_hex())?;
            let receipt = &audited.receipt;
            let mut hits = Vec::with_capacity(receipt.hits.len());
            for hit in &receipt.hits {
                if let std::collections::btree_map::Entry::Vacant(slot) = versions.entry(hit.version) {
                    slot.insert(self.put_version(hit.version)?);
                }
                let as_entry = ReceiptEntry {
                    term: hit.term,
                    version: hit.version,
                    via: assembly::assemble::Via::Hit,
                    unverified: false,
                };
                hits.push(ExplainedHit {
                    hit: hit.clone(),
                    injected: receipt.injected.iter().any(|entry| entry.term == hit.term),
                    evicted: receipt.evicted.contains(&hit.term),
                    version: versions[&hit.version].clone(),
                    stale: staleness(&head, &as_entry, versions[&hit.version].as_ref().map(|version| &version.put)),
                });
            }
            let replay = ReplayStatus { identical: replayed.identical, first_difference: replayed.first_difference };
            chunks.push(ExplainedChunk { audited, input, output, hits, replay });
        }
        let mut chapters: Vec<u32> = self.ledger().filed(None)?.into_iter().map(|(chapter, ..)| chapter).collect();
        chapters.dedup();
        Ok(ChapterAudit { chapter, head: head.revision(), snapshot, chunks, chapters })
    }

    /// The term version put by event `seq`, if that event is a `term_put`.
    fn put_version(&self, seq: u64) -> Result<Option<PutVersion>, BookError> {
        if seq == 0 {
            return Ok(None);
        }
        let mut found = None;
        self.ledger().scan(Seq(seq), Seq(seq), |event| {
            if let Body::TermPut(put) = &event.content.body {
                let by = Provenance {
                    seq: event.seq,
                    kind: event.content.body.kind_name(),
                    actor: event.content.actor.clone(),
                    source: event.content.source.clone(),
                    recorded_at_ms: event.content.recorded_at_ms,
                };
                found = Some(PutVersion { put: put.clone(), by });
            }
            ControlFlow::Break(())
        })?;
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use assembly::assemble::{Disposition, Reason};

    use super::*;

    fn hit(
        term: u32,
        bytes: (u32, u32),
        disposition: Disposition,
        reason: Option<Reason>,
        injected: bool,
    ) -> ExplainedHit {
        ExplainedHit {
            hit: ReceiptHit { term, version: 1, text: String::new(), bytes, chars: bytes, disposition, reason },
            injected,
            evicted: false,
            version: None,
            stale: Staleness::Current,
        }
    }

    #[test]
    fn a_span_is_marked_by_its_best_faring_hit_and_overlaps_are_left_unmarked() {
        // 林动 (0..6) is hit by a spoiler and a confirmed record; 动 (3..6) overlaps it;
        // 大哥 (6..12) is out of the text's 9 bytes.
        let text = "林动来";
        let hits = vec![
            hit(1, (0, 6), Disposition::Rejected, Some(Reason::SpoilerWindow), false),
            hit(2, (0, 6), Disposition::Confirmed, None, true),
            hit(3, (3, 6), Disposition::Confirmed, None, true),
            hit(4, (6, 12), Disposition::Confirmed, None, true),
        ];
        let marked = marked_spans(text, &hits);
        let terms: Vec<((usize, usize), Vec<u32>)> =
            marked.iter().map(|(span, hits)| (*span, hits.iter().map(|hit| hit.hit.term).collect())).collect();
        assert_eq!(terms, vec![((0, 6), vec![2, 1])]);
        assert_eq!(hits[0].outcome(), Outcome::Spoiler);
        assert_eq!(hits[1].outcome(), Outcome::Confirmed);
        let evicted = ExplainedHit { evicted: true, ..hit(5, (6, 9), Disposition::Confirmed, None, false) };
        assert_eq!(evicted.outcome(), Outcome::Budget);
        assert_eq!(hit(6, (6, 9), Disposition::Confirmed, None, false).outcome(), Outcome::NotInjected);
    }
}
