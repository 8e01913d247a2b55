//! The review queue with its evidence shown in context, for the audit page: each
//! item of [`Book::review_list`] with the spans that raised it, cut out of the
//! recorded chunk they were seen in.
//!
//! A candidate's evidence is the sighting lines the name alarm wrote
//! (`ch6/1@12-14 surname`, see `review.rs`); a flagged record's is where recorded
//! chunks hit it. A span is shown in context only when the latest recorded text of
//! its chunk still has the surface at those characters (a chunk recorded again with
//! other text, or never recorded, shows the line alone).

use std::collections::BTreeMap;

use ledger_model::*;

use crate::book::Book;
use crate::error::BookError;
use crate::review::ReviewItem;

/// Characters of context shown on each side of a span.
pub const CONTEXT_CHARS: usize = 24;
/// The most spans shown for a flagged record.
pub const RECORD_SPANS_MAX: usize = 3;

/// A span of a recorded chunk with the text around it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InContext {
    /// The receipt whose input text it was cut from.
    pub receipt: Hash32,
    /// Up to [`CONTEXT_CHARS`] characters before the span.
    pub before: String,
    /// The span.
    pub span: String,
    /// Up to [`CONTEXT_CHARS`] characters after it.
    pub after: String,
}

/// One piece of evidence for an item of the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The evidence line as the candidate records it (`None` for a record's hit).
    pub line: Option<String>,
    /// The chapter it was seen in.
    pub chapter: u32,
    /// The chunk key.
    pub chunk_key: String,
    /// The character span in the chunk.
    pub chars: (u32, u32),
    /// What raised it: the name alarm's cue, or the hit's decision.
    pub cue: String,
    /// The span in its recorded chunk, when the chunk is recorded with that text.
    pub context: Option<InContext>,
}

/// An item of the review queue and its evidence.
#[derive(Clone, Debug)]
pub struct QueueEntry {
    /// The item.
    pub item: ReviewItem,
    /// Its evidence, in the order it was recorded.
    pub evidence: Vec<Evidence>,
}

/// The review queue at the head, with evidence.
#[derive(Clone, Debug)]
pub struct ReviewQueue {
    /// The head.
    pub head: Seq,
    /// The items, in [`Book::review_list`] order.
    pub entries: Vec<QueueEntry>,
}

/// Parses one sighting line of a candidate's evidence:
/// `ch{chapter}/{chunk key}@{start}-{end} {cue}[ ({reading})]`. `None` for any other
/// line (the `sightings: N` header, or text written by hand).
pub fn parse_sighting(line: &str) -> Option<(u32, String, (u32, u32), String)> {
    let rest = line.strip_prefix("ch")?;
    let (chapter, rest) = rest.split_once('/')?;
    let chapter: u32 = chapter.parse().ok()?;
    // The chunk key may hold `@` itself: the span is after the last one.
    let (key, rest) = rest.rsplit_once('@')?;
    let (span, cue) = rest.split_once(' ').unwrap_or((rest, ""));
    let (start, end) = span.split_once('-')?;
    let (start, end): (u32, u32) = (start.parse().ok()?, end.parse().ok()?);
    if start >= end {
        return None;
    }
    Some((chapter, key.to_owned(), (start, end), cue.to_owned()))
}

/// `text`'s characters `chars`, with context, if `text` has `surface` there.
fn cut(text: &str, chars: (u32, u32), surface: &str) -> Option<(String, String, String)> {
    let (start, end) = (chars.0 as usize, chars.1 as usize);
    let all: Vec<char> = text.chars().collect();
    if end > all.len() || start >= end {
        return None;
    }
    let span: String = all[start..end].iter().collect();
    if span != surface {
        return None;
    }
    let before: String = all[start.saturating_sub(CONTEXT_CHARS)..start].iter().collect();
    let after: String = all[end..(end + CONTEXT_CHARS).min(all.len())].iter().collect();
    Some((before, span, after))
}

/// The latest recorded chunks, looked up by (chapter, chunk key), with their texts
/// read once.
struct Recorded<'b> {
    book: &'b Book,
    latest: BTreeMap<(u32, String), Hash32>,
    texts: BTreeMap<Hash32, String>,
}

impl Recorded<'_> {
    fn context(
        &mut self,
        chapter: u32,
        key: &str,
        chars: (u32, u32),
        surface: &str,
    ) -> Result<Option<InContext>, BookError> {
        let Some(&receipt) = self.latest.get(&(chapter, key.to_owned())) else { return Ok(None) };
        if !self.texts.contains_key(&receipt) {
            let (_, stored) = self.book.receipt(&receipt.to_hex())?;
            let (input, _) = self.book.receipt_texts(&stored)?;
            self.texts.insert(receipt, input);
        }
        Ok(cut(&self.texts[&receipt], chars, surface).map(|(before, span, after)| InContext {
            receipt,
            before,
            span,
            after,
        }))
    }
}

impl Book {
    /// The review queue at the head ([`Book::review_list`]) with the evidence of
    /// every item in context. Reads the latest receipt of every recorded chunk.
    pub fn review_queue(&mut self) -> Result<ReviewQueue, BookError> {
        let head = self.state(None)?.revision();
        let items = self.review_list(None)?;
        let mut latest = BTreeMap::new();
        for (chapter, key, _, receipt) in self.ledger().filed(None)? {
            latest.insert((chapter, key), receipt);
        }
        // The hits of each flagged record in the latest receipts, in chapter order.
        let flagged: Vec<u32> = items
            .iter()
            .filter_map(|item| match item {
                ReviewItem::Flagged { put, .. } => Some(put.id.number()),
                ReviewItem::Candidate { .. } | ReviewItem::FlaggedRule { .. } => None,
            })
            .collect();
        // Each piece of evidence with the surface it must show in its chunk.
        let mut record_hits: BTreeMap<u32, Vec<(Evidence, String)>> = BTreeMap::new();
        if !flagged.is_empty() {
            for (_, receipt) in self.latest_receipts(None)? {
                for hit in receipt.hits.iter().filter(|hit| flagged.contains(&hit.term)) {
                    let spans = record_hits.entry(hit.term).or_default();
                    if spans.len() < RECORD_SPANS_MAX {
                        let evidence = Evidence {
                            line: None,
                            chapter: receipt.chapter,
                            chunk_key: receipt.chunk_key.clone(),
                            chars: hit.chars,
                            cue: disposition_word(hit),
                            context: None,
                        };
                        spans.push((evidence, hit.text.clone()));
                    }
                }
            }
        }
        let mut recorded = Recorded { book: self, latest, texts: BTreeMap::new() };
        let mut entries = Vec::with_capacity(items.len());
        for item in items {
            let found: Vec<(Evidence, String)> = match &item {
                ReviewItem::Candidate { proposed, .. } => proposed
                    .evidence
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .filter_map(|line| {
                        let (chapter, chunk_key, chars, cue) = parse_sighting(line)?;
                        let evidence =
                            Evidence { line: Some(line.to_owned()), chapter, chunk_key, chars, cue, context: None };
                        Some((evidence, proposed.surface.clone()))
                    })
                    .collect(),
                ReviewItem::Flagged { put, .. } => record_hits.remove(&put.id.number()).unwrap_or_default(),
                // A rule is not found in text: it has no spans to show.
                ReviewItem::FlaggedRule { .. } => Vec::new(),
            };
            let mut evidence = Vec::with_capacity(found.len());
            for (mut one, surface) in found {
                one.context = recorded.context(one.chapter, &one.chunk_key, one.chars, &surface)?;
                evidence.push(one);
            }
            entries.push(QueueEntry { item, evidence });
        }
        Ok(ReviewQueue { head, entries })
    }
}

/// A hit's decision in the words of the docs (`confirmed`, `ambiguous: unreviewed`).
fn disposition_word(hit: &assembly::receipt::ReceiptHit) -> String {
    let disposition = match hit.disposition {
        assembly::assemble::Disposition::Confirmed => "confirmed",
        assembly::assemble::Disposition::Ambiguous => "ambiguous",
        assembly::assemble::Disposition::Rejected => "rejected",
    };
    match hit.reason {
        Some(reason) => format!("{disposition}: {}", reason_word(reason)),
        None => disposition.to_owned(),
    }
}

/// A reason code as the receipts' JSON spells it.
pub fn reason_word(reason: assembly::assemble::Reason) -> &'static str {
    use assembly::assemble::Reason;
    match reason {
        Reason::SpoilerWindow => "spoiler_window",
        Reason::OutOfWindow => "out_of_window",
        Reason::SenseCollision => "sense_collision",
        Reason::Unreviewed => "unreviewed",
        Reason::FlaggedForVerification => "flagged_for_verification",
        Reason::BlockedByDisposition => "blocked_by_disposition",
        Reason::SecondaryKeys => "secondary_keys",
        Reason::Budget => "budget",
        Reason::PolicyPreferSpecific => "policy_prefer_specific",
        Reason::PolicyPreferPriority => "policy_prefer_priority",
        Reason::PolicyPreferApproved => "policy_prefer_approved",
    }
}
