//! Renderings of projections: the active glossary, snapshots, diffs, rebuilds and
//! the outcome of a write, as text for people and as stable JSON.

use std::io::IsTerminal;

use ledger_model::*;
use projections::{RecordDiff, State};
use replay::{Book, Submitted};
use serde_json::Value;

use crate::failure::Failure;

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
        outln!("{}", crate::json::submitted(submitted, notes));
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

pub fn show(book: &mut Book, as_of: Option<Seq>, chapter: Option<u32>, json: bool) -> Result<(), Failure> {
    let glossary = book.glossary(as_of, chapter)?;
    let (state, snapshot) = (&glossary.state, glossary.snapshot);
    let terms = state.active_terms(chapter);
    let summaries = state.visible_summaries(chapter);
    if json {
        outln!("{}", crate::json::glossary(&glossary));
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
        if let Some(verdict) = crate::json::verdict_text(&active.term.verdict) {
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
        outln!("{}", crate::json::snapshot(&info));
    } else {
        let first = first.map(|seq| format!("; first indexed at revision {seq}")).unwrap_or_default();
        outln!("{id}  (revision {}{first})", info.revision);
    }
    Ok(())
}

pub fn diff(book: &mut Book, from: Seq, to: Seq, json: bool) -> Result<(), Failure> {
    let replay::reads::Diff { old, new, records, config } = book.diff(from, to)?;
    let changed_fields = |id: RecordId, fields: &[projections::FieldChange]| -> Vec<(&'static str, Value, Value)> {
        fields
            .iter()
            .map(|change| {
                (change.field, crate::json::field(&old, id, change.field), crate::json::field(&new, id, change.field))
            })
            .collect()
    };
    let config_change = (!config.is_empty()).then(|| {
        let as_json = |state: &State| serde_json::to_value(state.config()).unwrap_or(Value::Null);
        (as_json(&old), as_json(&new))
    });
    if json {
        outln!("{}", crate::json::diff(&old, &new, &records, &config));
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
        outln!("{}", crate::json::rebuilt(&rebuilt));
    } else {
        outln!("rebuilt {} events; snapshot {id} (dropped {n_dropped} cache entries)", rebuilt.revision);
        outln!("frozen projection: {n_terms} active terms, {n_patterns} patterns");
        outln!("checkpoints: dropped {}, wrote {}", rebuilt.n_checkpoints_dropped, rebuilt.n_checkpoints);
    }
    Ok(())
}
