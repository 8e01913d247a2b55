//! Rollback planning: the compensating bodies that bring the head back to the
//! snapshot of an earlier revision. History is never rewritten: the plan is appended
//! as one batch, closed by a `rollback_marker`.
//!
//! The plan restores everything a snapshot covers (active terms with content,
//! aliases and verdicts; active summaries; active rules with their verdicts; the
//! governance; config), and the book's languages, which no snapshot covers but which
//! say how the glossary of that revision is read and written (a book rolled back to
//! before its first `languages_set` gets one that declares none: the defaults), and
//! the source text of every chapter as it stood then (a `source_set` naming the text
//! then, already stored, or one removing a text the chapter did not have). The
//! proxy template is in the snapshot and is restored too (a `proxy_template_set` of
//! the template then, or of none: the built-in one). So is the cascading activation
//! (a `cascade_set` of the declaration then, or of depth 0 with no lists). The
//! terms always or never offered a demonstration are restored too, though no part of
//! a snapshot (an `examples_set` of the lists then, or of none). The review queue
//! (candidates and their verdicts), the register of expected concepts, the embedding
//! model and the prompts of the model jobs are not part of a snapshot
//! and are left as they are: vectors are named by the model's identity and the
//! texts they embed, so a rollback that brings back an older record finds its vectors
//! again, and no suggestion ever reaches an assembly. A governance goes first, so the records after it may name its parties; a
//! book rolled back to before its first governance gets an empty one (policy `flag`,
//! no parties), which is what a book without one does.

use std::collections::BTreeSet;
use std::fmt;

use ledger_model::*;

use crate::state::State;

/// Reason code written on verdicts restored by a rollback.
pub const ROLLBACK_REASON: &str = "rollback";

/// Why no plan can be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// The target is after the head.
    BeyondHead {
        /// Asked for.
        to: Seq,
        /// The head.
        head: Seq,
    },
    /// The target has no config but the head does, and a config cannot be unset.
    BeforeFirstConfig {
        /// Asked for.
        to: Seq,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::BeyondHead { to, head } => write!(f, "cannot roll back to revision {to}: the head is {head}"),
            PlanError::BeforeFirstConfig { to } => {
                write!(f, "cannot roll back to revision {to}: it is before the book's first config_set")
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// The disposition that gives record `id` back the verdict it `was` given when the one
/// it has `now` is another (withdrawn when it had none), in a rollback to `to`.
fn verdict_back(
    id: RecordId,
    now: Option<&(Verdict, String)>,
    was: Option<&(Verdict, String)>,
    to: Seq,
) -> Option<Body> {
    if now.map(|(verdict, _)| *verdict) == was.map(|(verdict, _)| *verdict) {
        return None;
    }
    let (verdict, reason) = match was {
        Some((verdict, reason)) => (*verdict, reason.clone()),
        None => (Verdict::Withdraw, ROLLBACK_REASON.to_owned()),
    };
    Some(Body::DispositionSet(DispositionSet { target: id, verdict, reason, note: Some(format!("rollback to {to}")) }))
}

/// The bodies that turn `head` into a state with `target`'s snapshot, ending with a
/// `rollback_marker` to `target.revision()`.
pub fn plan_rollback(head: &State, target: &State, reason: Option<String>) -> Result<Vec<Body>, PlanError> {
    let to = target.revision();
    if to > head.revision() {
        return Err(PlanError::BeyondHead { to, head: head.revision() });
    }
    if target.config().is_none() && head.config().is_some() {
        return Err(PlanError::BeforeFirstConfig { to });
    }
    let mut puts = Vec::new();
    let mut alias_removals = Vec::new();
    let mut alias_adds = Vec::new();
    let mut verdicts = Vec::new();
    let mut retirements = Vec::new();
    let ids: BTreeSet<RecordId> = head.terms.keys().chain(target.terms.keys()).copied().collect();
    for id in ids {
        let now = head.terms.get(&id);
        let was = target.terms.get(&id).filter(|term| !term.retired);
        let now_active = now.filter(|term| !term.retired);
        match (now, was) {
            (_, None) => {
                if now_active.is_some() {
                    retirements.push(Body::TermRetired(TermRetired { id, reason: Some(format!("rollback to {to}")) }));
                }
            }
            (now, Some(was)) => {
                if now_active.map(|term| &term.put) != Some(&was.put) {
                    puts.push(Body::TermPut(was.put.clone()));
                }
                let current = now.map(|term| term.aliases.clone()).unwrap_or_default();
                for (surface, alias) in &current {
                    if was.aliases.get(surface) != Some(alias) {
                        alias_removals.push(Body::AliasRemoved(AliasRemoved { id, surface: surface.clone() }));
                    }
                }
                for (surface, alias) in &was.aliases {
                    if current.get(surface) != Some(alias) {
                        alias_adds.push(Body::AliasAdded(alias.clone()));
                    }
                }
                verdicts.extend(verdict_back(id, now.and_then(|term| term.verdict.as_ref()), was.verdict.as_ref(), to));
            }
        }
    }
    let mut summaries = Vec::new();
    let ids: BTreeSet<RecordId> = head.summaries.keys().chain(target.summaries.keys()).copied().collect();
    for id in ids {
        let now = head.summaries.get(&id).filter(|s| !s.retired);
        let was = target.summaries.get(&id).filter(|s| !s.retired);
        match (now, was) {
            (Some(_), None) => {
                summaries.push(Body::SummaryRetired(SummaryRetired { id, reason: Some(format!("rollback to {to}")) }))
            }
            (now, Some(was)) if now.map(|s| &s.put) != Some(&was.put) => {
                summaries.push(Body::SummaryPut(was.put.clone()))
            }
            _ => {}
        }
    }
    let mut rules = Vec::new();
    let mut rule_verdicts = Vec::new();
    let ids: BTreeSet<RecordId> = head.rules.keys().chain(target.rules.keys()).copied().collect();
    for id in ids {
        let now = head.rules.get(&id).filter(|r| !r.retired);
        let was = target.rules.get(&id).filter(|r| !r.retired);
        match (now, was) {
            (Some(_), None) => {
                rules.push(Body::RuleRetired(RuleRetired { id, reason: Some(format!("rollback to {to}")) }))
            }
            (now, Some(was)) => {
                if now.map(|r| &r.put) != Some(&was.put) {
                    rules.push(Body::RulePut(was.put.clone()));
                }
                rule_verdicts.extend(verdict_back(id, now.and_then(|r| r.verdict.as_ref()), was.verdict.as_ref(), to));
            }
            (None, None) => {}
        }
    }
    let mut plan = Vec::new();
    let governance_then = target.governance_set().map(|(governance, _)| governance.clone());
    let governance_now = head.governance_set().map(|(governance, _)| governance.clone());
    if governance_now.is_some() && governance_then != governance_now {
        plan.push(Body::GovernanceSet(governance_then.unwrap_or(GovernanceSet {
            conflict_policy: ConflictPolicy::Flag,
            parties: Vec::new(),
            defaults: Vec::new(),
        })));
    }
    plan.extend(puts);
    plan.extend(alias_removals);
    plan.extend(alias_adds);
    plan.extend(verdicts);
    plan.extend(retirements);
    plan.extend(summaries);
    plan.extend(rules);
    plan.extend(rule_verdicts);
    if let Some(config) = target.config() {
        if head.config() != Some(config) {
            plan.push(Body::ConfigSet(config.clone()));
        }
    }
    let languages_then = target.languages_declared();
    if head.languages_declared() != languages_then {
        plan.push(Body::LanguagesSet(languages_then));
    }
    let chapters: BTreeSet<u32> = head.source.keys().chain(target.source.keys()).copied().collect();
    for chapter in chapters {
        match (head.source_chapter(chapter), target.source_chapter(chapter)) {
            (Some((now, _)), Some((then, _))) if now == then => {}
            (_, Some((then, _))) => plan.push(Body::SourceSet(then.clone())),
            (Some(_), None) => plan.push(Body::SourceSet(SourceSet { chapter, ..SourceSet::default() })),
            (None, None) => {}
        }
    }
    let template_then = target.proxy_template().map(|(template, _)| template);
    if head.proxy_template().map(|(template, _)| template) != template_then {
        plan.push(Body::ProxyTemplateSet(ProxyTemplateSet { template: template_then.map(str::to_owned) }));
    }
    let cascade = |state: &State| state.cascade().map(|(set, _)| set.clone()).unwrap_or_default();
    let cascade_then = cascade(target);
    if cascade(head) != cascade_then {
        plan.push(Body::CascadeSet(cascade_then));
    }
    let examples = |state: &State| state.examples().map(|(set, _)| set.clone()).unwrap_or_default();
    let examples_then = examples(target);
    if examples(head) != examples_then {
        plan.push(Body::ExamplesSet(examples_then));
    }
    plan.push(Body::RollbackMarker(RollbackMarker { to, reason }));
    Ok(plan)
}
