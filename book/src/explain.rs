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
