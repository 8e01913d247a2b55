//! A book at a glance, for the audit page's front page: its head, snapshot ID, state
//! (to count and list records), the chapters with recorded chunks, the latest
//! events with who made them and from what source, and the outcome of a full
//! [`Book::verify`].

use std::ops::ControlFlow;
use std::sync::Arc;

use ledger::{Head, VerifyError, VerifyReport};
use ledger_model::*;
use projections::{SnapshotId, State};

use crate::book::Book;
use crate::error::BookError;

/// The most events [`Book::overview`] lists.
pub const RECENT_EVENTS_MAX: u64 = 200;

/// A book at a glance.
#[derive(Debug)]
pub struct Overview {
    /// The head and its chain hash.
    pub head: Head,
    /// The head's snapshot ID.
    pub snapshot: SnapshotId,
    /// The state at the head, shared with the book.
    pub state: Arc<State>,
    /// Every chapter with recorded chunks: (chapter, recorded chunks, receipts filed).
    pub chapters: Vec<(u32, u64, u64)>,
    /// The latest events, newest first.
    pub recent: Vec<Event>,
    /// What a full verify found: the report, or the damage it names.
    pub verify: Result<VerifyReport, VerifyError>,
    /// The book's counts, as the overview page and its JSON twin show them.
    pub counts: Counts,
}

/// The counts of a book at its head: the one place the overview's numbers are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Active terms (every chapter).
    pub terms: usize,
    /// Retired terms.
    pub terms_retired: usize,
    /// Aliases of active terms.
    pub aliases: usize,
    /// Summaries shown at some chapter.
    pub summaries: usize,
    /// Candidates without a verdict.
    pub candidates_open: usize,
    /// Chapters with recorded chunks.
    pub chapters: usize,
    /// Recorded chunks.
    pub chunks: u64,
    /// Receipts filed.
    pub receipts: u64,
}

impl Counts {
    /// The counts of `state` with the recorded `chapters` (chapter, chunks, receipts).
    pub fn of(state: &State, chapters: &[(u32, u64, u64)]) -> Counts {
        let active = state.active_terms(None);
        Counts {
            terms: active.len(),
            terms_retired: state.terms().values().filter(|term| term.retired).count(),
            aliases: active.iter().map(|term| term.term.aliases.len()).sum(),
            summaries: state.visible_summaries(None).len(),
            candidates_open: state.candidates().values().filter(|candidate| candidate.verdict.is_none()).count(),
            chapters: chapters.len(),
            chunks: chapters.iter().map(|chapter| chapter.1).sum(),
            receipts: chapters.iter().map(|chapter| chapter.2).sum(),
        }
    }
}

impl Book {
    /// The book at a glance, with its `n_recent` latest events (at most
    /// [`RECENT_EVENTS_MAX`]). Runs a full [`Book::verify`] first, so it costs what
    /// verifying the book costs; a verify that finds damage is reported in
    /// [`Overview::verify`], not as an error, and the reads after it fail only if
    /// they cross the damage themselves.
    pub fn overview(&mut self, n_recent: u64) -> Result<Overview, BookError> {
        if n_recent > RECENT_EVENTS_MAX {
            return Err(BookError::Invalid(format!(
                "{n_recent} recent events asked for; the limit is {RECENT_EVENTS_MAX}"
            )));
        }
        let verify = self.verify();
        let head = self.ledger().head()?;
        let state = self.state(None)?;
        let snapshot = self.snapshot_id(&state);
        let mut chapters: Vec<(u32, u64, u64)> = Vec::new();
        let mut last_chunk: Option<(u32, String)> = None;
        for (chapter, key, _, _) in self.ledger().filed(None)? {
            let new_chunk = last_chunk.as_ref() != Some(&(chapter, key.clone()));
            match chapters.last_mut() {
                Some(last) if last.0 == chapter => {
                    last.1 += u64::from(new_chunk);
                    last.2 += 1;
                }
                _ => chapters.push((chapter, 1, 1)),
            }
            last_chunk = Some((chapter, key));
        }
        let mut recent = Vec::new();
        if n_recent > 0 && head.seq > Seq::ZERO {
            let from = Seq(head.seq.0.saturating_sub(n_recent - 1).max(1));
            self.ledger().scan(from, head.seq, |event| {
                recent.push(event);
                ControlFlow::Continue(())
            })?;
        }
        recent.reverse();
        let counts = Counts::of(&state, &chapters);
        Ok(Overview { head, snapshot, state, chapters, recent, verify, counts })
    }
}
