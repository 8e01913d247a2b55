//! Renderings of projections: the active glossary, snapshots, diffs, rebuilds and
//! the outcome of a write, as text for people and as stable JSON.

use std::io::IsTerminal;

use ledger_model::*;
use projections::{RecordDiff, State};
use replay::{Book, Submitted};
use serde_json::{json, Value};

use crate::failure::Failure;

fn window_json(window: Option<Window>) -> Value {
    match window {
        Some(window) => json!({ "since": window.since, "until": window.until }),
        None => Value::Null,
    }
}

fn window_text(window: Option<Window>) -> String {
    window.map_or_else(|| "never (superseded)".to_owned(), |w| w.to_string())
}

/// Prints the outcome of a write; `notes` are the caller's warnings, shown with the
/// ones from `decide`.
pub fn submitted(submitted: &Submitted, labels: &[String], notes: &[String], json: bool) {
    let dropped: Vec<&str> =
        submitted.decision.dropped.iter().map(|index| labels.get(*index).map_or("", String::as_str)).collect();
    let warnings: Vec<String> =
        notes.iter().cloned().chain(submitted.decision.warnings.iter().map(ToString::to_string)).collect();
    let head = submitted.decision.state.revision().0;
    if json {
        let appended = submitted.appended.as_ref();
        outln!(
            "{}",
            json!({
                "first": appended.map(|a| a.first.0),
                "last": appended.map(|a| a.last.0),
                "head": head,
                "hash": appended.map(|a| a.hash.to_hex()),
                "snapshot": submitted.snapshot.to_string(),
                "n_dropped": submitted.decision.dropped.len(),
                "warnings": warnings,
            })
        );
        return;
    }
    match &submitted.appended {
        Some(appended) => crate::output::appended(appended, false),
        None => outln!("no change: every event was identical to the current version; head {head}"),
    }
    if !submitted.decision.dropped.is_empty() && submitted.appended.is_some() {
        let which = dropped.iter().filter(|label| !label.is_empty()).cloned().collect::<Vec<_>>().join(", ");
        outln!("{} event(s) identical to the current version were skipped {which}", dropped.len());
    }
    for warning in &warnings {
        errln!("warning: {warning}");
    }
    outln!("snapshot {}", submitted.snapshot);
}

fn verdict_text(verdict: &Option<(Verdict, String)>) -> Option<String> {
    verdict.as_ref().map(|(verdict, reason)| format!("{}:{reason}", crate::output::word(verdict)))
}

pub fn show(book: &mut Book, as_of: Option<Seq>, chapter: Option<u32>, json: bool) -> Result<(), Failure> {
    let glossary = book.glossary(as_of, chapter)?;
    let (state, snapshot) = (&glossary.state, glossary.snapshot);
    let terms = state.active_terms(chapter);
    let summaries = state.visible_summaries(chapter);
    if json {
        let terms: Vec<Value> = terms
            .iter()
            .map(|active| {
                let put = &active.term.put;
                let aliases: Vec<Value> = active
                    .aliases(chapter)
                    .into_iter()
                    .map(|(alias, window)| {
                        json!({ "surface": alias.surface, "kind": alias.kind, "window": window_json(window) })
                    })
                    .collect();
                json!({
                    "id": active.id.to_string(),
                    "src": put.src,
                    "sense": put.sense,
                    "dst": put.dst,
                    "kind": put.kind,
                    "gender": put.gender,
                    "decl": put.decl,
                    "note": put.note,
                    "status": put.status,
                    "priority": put.priority,
                    "constant": put.constant,
                    "window": window_json(active.window),
                    "superseded_by": active.superseded_by.map(|id| id.to_string()),
                    "aliases": aliases,
                    "verdict": verdict_text(&active.term.verdict),
                    "version_seq": active.term.put_by.seq.0,
                })
            })
            .collect();
        let summaries: Vec<Value> = summaries
            .iter()
            .map(|summary| {
                json!({
                    "id": summary.put.id.to_string(),
                    "scope": summary.put.scope,
                    "text": summary.put.text,
                    "visible_from": projections::read::visible_from(&summary.put),
                })
            })
            .collect();
        outln!(
            "{}",
            json!({
                "revision": state.revision().0,
                "chapter": chapter,
                "snapshot": snapshot.to_string(),
                "terms": terms,
                "summaries": summaries,
            })
        );
        return Ok(());
    }
    let at = chapter.map(|chapter| format!(", chapter {chapter}")).unwrap_or_default();
    outln!("revision {}{at}; snapshot {}", state.revision(), &snapshot.to_string()[..16]);
    outln!("{} active term(s)", terms.len());
    for active in &terms {
        let put = &active.term.put;
        let sense = put.sense.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
        let mut line =
            format!("  {:<6} {}{} -> {}  [{}", active.id, put.src, sense, put.dst, window_text(active.window));
        if put.status != Status::Approved {
            line.push_str(&format!(", {}", crate::output::word(&put.status)));
        }
        if let Some(by) = active.superseded_by {
            line.push_str(&format!(", superseded by {by}"));
        }
        line.push(']');
        let aliases: Vec<&str> = active.aliases(chapter).iter().map(|(alias, _)| alias.surface.as_str()).collect();
        if !aliases.is_empty() {
            line.push_str(&format!("  aliases: {}", aliases.join(", ")));
        }
        if let Some(verdict) = verdict_text(&active.term.verdict) {
            line.push_str(&format!("  verdict: {verdict}"));
        }
        outln!("{line}");
    }
    if !summaries.is_empty() {
        outln!("{} visible summar(ies)", summaries.len());
        for summary in &summaries {
            outln!("  {:<6} {}", summary.put.id, summary.put.text.lines().next().unwrap_or_default());
        }
    }
    Ok(())
}

pub fn snapshot(book: &mut Book, as_of: Option<Seq>, json: bool) -> Result<(), Failure> {
    let info = book.snapshot_info(as_of)?;
    let (id, first) = (info.snapshot, info.first_revision);
    if json {
        outln!(
            "{}",
            json!({ "snapshot": id.to_string(), "revision": info.revision.0, "first_revision": first.map(|seq| seq.0) })
        );
    } else {
        let first = first.map(|seq| format!("; first indexed at revision {seq}")).unwrap_or_default();
        outln!("{id}  (revision {}{first})", info.revision);
    }
    Ok(())
}

fn aliases_json(term: &projections::state::Term) -> Value {
    term.aliases
        .values()
        .map(|alias| json!({ "surface": alias.surface, "kind": alias.kind, "window": window_json(alias.window) }))
        .collect()
}

/// The documented JSON form ([events.md](../docs/events.md)) of one field of record
/// `id` in `state`: the field of its `term_put` or `summary_put`, its aliases, or its
/// verdict. `null` when the record or field is absent.
fn field_json(state: &State, id: RecordId, field: &str) -> Value {
    if let Some(term) = state.terms().get(&id) {
        return match field {
            "aliases" => aliases_json(term),
            "verdict" => match &term.verdict {
                Some((verdict, reason)) => json!({ "verdict": verdict, "reason": reason }),
                None => Value::Null,
            },
            field => {
                serde_json::to_value(&term.put).ok().and_then(|put| put.get(field).cloned()).unwrap_or(Value::Null)
            }
        };
    }
    if let Some(summary) = state.summaries().get(&id) {
        return serde_json::to_value(&summary.put).ok().and_then(|put| put.get(field).cloned()).unwrap_or(Value::Null);
    }
    Value::Null
}

pub fn diff(book: &mut Book, from: Seq, to: Seq, json: bool) -> Result<(), Failure> {
    let replay::reads::Diff { old, new, records, config } = book.diff(from, to)?;
    let changed_fields = |id: RecordId, fields: &[projections::FieldChange]| -> Vec<(&'static str, Value, Value)> {
        fields
            .iter()
            .map(|change| (change.field, field_json(&old, id, change.field), field_json(&new, id, change.field)))
            .collect()
    };
    let config_change = (!config.is_empty()).then(|| {
        let as_json = |state: &State| serde_json::to_value(state.config()).unwrap_or(Value::Null);
        (as_json(&old), as_json(&new))
    });
    if json {
        let mut added = Vec::new();
        let mut removed = Vec::new();
        let mut changed = Vec::new();
        for record in &records {
            match record {
                RecordDiff::Added(id) => added.push(id.to_string()),
                RecordDiff::Removed(id) => removed.push(id.to_string()),
                RecordDiff::Changed(id, fields) => {
                    let fields: Vec<Value> = changed_fields(*id, fields)
                        .into_iter()
                        .map(|(field, old, new)| json!({ "field": field, "old": old, "new": new }))
                        .collect();
                    changed.push(json!({ "id": id.to_string(), "fields": fields }));
                }
            }
        }
        let config: Vec<Value> =
            config_change.iter().map(|(old, new)| json!({ "field": "config", "old": old, "new": new })).collect();
        outln!(
            "{}",
            json!({ "from": from.0, "to": to.0, "added": added, "removed": removed, "changed": changed, "config": config })
        );
        return Ok(());
    }
    outln!("diff revision {from} -> {to}: {} record(s) differ", records.len());
    for record in &records {
        match record {
            RecordDiff::Added(id) => outln!("+ {id}"),
            RecordDiff::Removed(id) => outln!("- {id}"),
            RecordDiff::Changed(id, fields) => {
                outln!("~ {id}");
                for (field, old, new) in changed_fields(*id, fields) {
                    outln!("    {field}: {old} -> {new}");
                }
            }
        }
    }
    if let Some((old, new)) = &config_change {
        outln!("~ config: {old} -> {new}");
    }
    Ok(())
}

pub fn rebuild(book: &mut Book, json: bool) -> Result<(), Failure> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("folding {bar:40} {pos}/{len} events ({per_sec}, eta {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let rebuilt = book.rebuild(|done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let (id, n_dropped, n_terms, n_patterns) =
        (rebuilt.snapshot, rebuilt.n_cache_entries_dropped, rebuilt.n_terms, rebuilt.n_patterns);
    if json {
        outln!(
            "{}",
            json!({
                "snapshot": id.to_string(),
                "revision": rebuilt.revision.0,
                "n_cache_entries_dropped": n_dropped,
                "n_checkpoints_dropped": rebuilt.n_checkpoints_dropped,
                "n_checkpoints": rebuilt.n_checkpoints,
                "n_terms": n_terms,
                "n_patterns": n_patterns,
            })
        );
    } else {
        outln!("rebuilt {} events; snapshot {id} (dropped {n_dropped} cache entries)", rebuilt.revision);
        outln!("frozen projection: {n_terms} active terms, {n_patterns} patterns");
        outln!("checkpoints: dropped {}, wrote {}", rebuilt.n_checkpoints_dropped, rebuilt.n_checkpoints);
    }
    Ok(())
}
