//! What a rollback would do, written nowhere: the compensating events it would
//! append at the current head, what they change (the [`Book::diff`] from the head
//! to the target revision), the snapshot ID the head would then have, decided by a
//! write's rules, and the recorded chunks whose context it would change
//! ([`Book::impact_with`]).

use ledger_model::*;
use projections::SnapshotId;

use crate::book::Book;
use crate::error::BookError;
use crate::reads::Diff;
use crate::service::{Labelled, RollbackPlan, WriteOptions};

/// The actor a preview's decision is made under; nothing it decides is written.
const PREVIEW_ACTOR: &str = "tool:preview";

/// A rollback previewed.
#[derive(Clone, Debug)]
pub struct RollbackPreview {
    /// The plan: the target, the head it was made at, the bodies it would append.
    pub plan: RollbackPlan,
    /// What differs from the head (old) to the target revision (new).
    pub diff: Diff,
    /// The head's snapshot ID.
    pub snapshot_head: SnapshotId,
    /// The target revision's snapshot ID.
    pub snapshot_target: SnapshotId,
    /// The snapshot ID the head would have after the rollback.
    pub snapshot_after: SnapshotId,
    /// The recorded chunks whose context the rollback would change, with the lines
    /// each would lose and gain: what to translate again.
    pub reopened: Vec<crate::chunks::Reopened>,
}

impl Book {
    /// Previews a rollback to revision `to` against the current head: plans it, diffs
    /// the head against `to`, and decides the plan without appending it. Refused as
    /// [`Book::plan_rollback_at_head`] refuses (the head itself, a revision after it).
    pub fn rollback_preview(&mut self, to: Seq) -> Result<RollbackPreview, BookError> {
        let plan = self.plan_rollback_at_head(to, None)?;
        let diff = self.diff(plan.head, to)?;
        let snapshot_head = self.snapshot_id(&diff.old);
        let snapshot_target = self.snapshot_id(&diff.new);
        let write =
            WriteOptions { actor: PREVIEW_ACTOR.into(), source: None, expect_head: Some(plan.head), recorded_at_ms: 0 };
        let source = format!("rollback to {to}");
        let bodies = plan
            .bodies
            .iter()
            .map(|body| Labelled { label: String::new(), default_source: source.clone(), body: body.clone() })
            .collect();
        let what_if = self.impact_with(&write, bodies)?;
        Ok(RollbackPreview {
            plan,
            diff,
            snapshot_head,
            snapshot_target,
            snapshot_after: what_if.written.submitted.snapshot,
            reopened: what_if.chunks,
        })
    }
}
