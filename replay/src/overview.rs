//! A book at a glance, for the audit page's front page: its head, snapshot ID, state
//! (to count and list records), the chapters with recorded chunks, the latest
//! events with who made them and from what source, and the outcome of a full
//! [`Book::verify`].

use std::ops::ControlFlow;

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
    /// The state at the head.
    pub state: State,
    /// Every chapter with recorded chunks: (chapter, recorded chunks, receipts filed).
    pub chapters: Vec<(u32, u64, u64)>,
    /// The latest events, newest first.
    pub recent: Vec<Event>,
    /// What a full verify found: the report, or the damage it names.
    pub verify: Result<VerifyReport, VerifyError>,
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
        Ok(Overview { head, snapshot, state, chapters, recent, verify })
    }
}
