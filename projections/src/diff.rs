//! Differences between two states, record by record and field by field.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use ledger_model::*;

use crate::state::State;

/// How one record differs between two states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordDiff {
    /// Active in the second state only.
    Added(RecordId),
    /// Active in the first state only.
    Removed(RecordId),
    /// Active in both, with these fields changed.
    Changed(RecordId, Vec<FieldChange>),
}

/// One changed field, with both values shown as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// Field name (`dst`, `window`, `aliases`, `verdict`, …).
    pub field: &'static str,
    /// Before.
    pub old: String,
    /// After.
    pub new: String,
}

fn field<T: PartialEq + Debug>(out: &mut Vec<FieldChange>, name: &'static str, old: &T, new: &T) {
    if old != new {
        out.push(FieldChange { field: name, old: format!("{old:?}"), new: format!("{new:?}") });
    }
}

fn term_fields(a: &crate::state::Term, b: &crate::state::Term) -> Vec<FieldChange> {
    let (x, y) = (&a.put, &b.put);
    let mut out = Vec::new();
    field(&mut out, "src", &x.src, &y.src);
    field(&mut out, "sense", &x.sense, &y.sense);
    field(&mut out, "dst", &x.dst, &y.dst);
    field(&mut out, "kind", &x.kind, &y.kind);
    field(&mut out, "gender", &x.gender, &y.gender);
    field(&mut out, "decl", &x.decl, &y.decl);
    field(&mut out, "speech", &x.speech, &y.speech);
    field(&mut out, "note", &x.note, &y.note);
    field(&mut out, "window", &x.window, &y.window);
    field(&mut out, "status", &x.status, &y.status);
    field(&mut out, "priority", &x.priority, &y.priority);
    field(&mut out, "constant", &x.constant, &y.constant);
    field(&mut out, "secondary", &x.secondary, &y.secondary);
    field(&mut out, "supersedes", &x.supersedes, &y.supersedes);
    field(&mut out, "owner", &x.owner, &y.owner);
    field(&mut out, "owner_role", &x.owner_role, &y.owner_role);
    field(&mut out, "release_to", &x.release_to, &y.release_to);
    field(&mut out, "note_release_to", &x.note_release_to, &y.note_release_to);
    let aliases = |term: &crate::state::Term| term.aliases.values().cloned().collect::<Vec<_>>();
    field(&mut out, "aliases", &aliases(a), &aliases(b));
    field(&mut out, "verdict", &a.verdict, &b.verdict);
    out
}

fn summary_fields(x: &SummaryPut, y: &SummaryPut) -> Vec<FieldChange> {
    let mut out = Vec::new();
    field(&mut out, "scope", &x.scope, &y.scope);
    field(&mut out, "text", &x.text, &y.text);
    field(&mut out, "visible_from", &x.visible_from, &y.visible_from);
    field(&mut out, "owner", &x.owner, &y.owner);
    field(&mut out, "owner_role", &x.owner_role, &y.owner_role);
    field(&mut out, "release_to", &x.release_to, &y.release_to);
    out
}

fn rule_fields(a: &crate::state::Rule, b: &crate::state::Rule) -> Vec<FieldChange> {
    let (x, y) = (&a.put, &b.put);
    let mut out = Vec::new();
    field(&mut out, "text", &x.text, &y.text);
    field(&mut out, "applies_to", &x.applies_to, &y.applies_to);
    field(&mut out, "does_not_apply_to", &x.does_not_apply_to, &y.does_not_apply_to);
    field(&mut out, "window", &x.window, &y.window);
    field(&mut out, "status", &x.status, &y.status);
    field(&mut out, "priority", &x.priority, &y.priority);
    field(&mut out, "owner", &x.owner, &y.owner);
    field(&mut out, "owner_role", &x.owner_role, &y.owner_role);
    field(&mut out, "release_to", &x.release_to, &y.release_to);
    field(&mut out, "verdict", &a.verdict, &b.verdict);
    out
}

/// Adds to `out` the records of one kind added, removed and changed (their `fields`)
/// from `old` to `new`, counting only those that are `active`, in id order.
fn records<T>(
    out: &mut Vec<RecordDiff>,
    old: &BTreeMap<RecordId, T>,
    new: &BTreeMap<RecordId, T>,
    active: impl Fn(&T) -> bool,
    fields: impl Fn(&T, &T) -> Vec<FieldChange>,
) {
    let ids: BTreeSet<RecordId> = old.keys().chain(new.keys()).copied().collect();
    for id in ids {
        let before = old.get(&id).filter(|record| active(record));
        let after = new.get(&id).filter(|record| active(record));
        match (before, after) {
            (None, Some(_)) => out.push(RecordDiff::Added(id)),
            (Some(_), None) => out.push(RecordDiff::Removed(id)),
            (Some(a), Some(b)) => {
                let changes = fields(a, b);
                if !changes.is_empty() {
                    out.push(RecordDiff::Changed(id, changes));
                }
            }
            (None, None) => {}
        }
    }
}

/// Active records added, removed and changed from `old` to `new`, by id; and the
/// changes of the book's configuration: `config`, `governance`, `languages` (the
/// source and target languages in force, declared or by default), `proxy_template`
/// (the book's proxy template; `None`: the built-in one), `cascade` (the cascading
/// activation; `None`: off, with no lists) and `examples` (the terms always and never
/// offered a demonstration; `None`: none named).
pub fn diff(old: &State, new: &State) -> (Vec<RecordDiff>, Vec<FieldChange>) {
    let mut out = Vec::new();
    records(&mut out, &old.terms, &new.terms, |term| !term.retired, term_fields);
    records(
        &mut out,
        &old.summaries,
        &new.summaries,
        |summary| !summary.retired,
        |a, b| summary_fields(&a.put, &b.put),
    );
    records(&mut out, &old.rules, &new.rules, |rule| !rule.retired, rule_fields);
    out.sort_by_key(|change| match change {
        RecordDiff::Added(id) | RecordDiff::Removed(id) | RecordDiff::Changed(id, _) => *id,
    });
    let mut config = Vec::new();
    field(&mut config, "config", &old.config(), &new.config());
    // A book without a governance acts as one with the policy `flag`, no parties and
    // no defaults (what a rollback to before the first governance writes): no change.
    let governance = |state: &State| {
        state.governance_set().map(|(governance, _)| governance.clone()).filter(|governance| {
            governance.conflict_policy != ConflictPolicy::Flag
                || !governance.parties.is_empty()
                || !governance.defaults.is_empty()
        })
    };
    field(&mut config, "governance", &governance(old), &governance(new));
    let languages = |state: &State| (state.source_lang().to_owned(), state.target_lang().to_owned());
    field(&mut config, "languages", &languages(old), &languages(new));
    let template = |state: &State| state.proxy_template().map(|(template, _)| template.to_owned());
    field(&mut config, "proxy_template", &template(old), &template(new));
    let cascade =
        |state: &State| state.cascade().map(|(set, _)| set.clone()).filter(|set| *set != CascadeSet::default());
    field(&mut config, "cascade", &cascade(old), &cascade(new));
    let examples =
        |state: &State| state.examples().map(|(set, _)| set.clone()).filter(|set| *set != ExamplesSet::default());
    field(&mut config, "examples", &examples(old), &examples(new));
    (out, config)
}
