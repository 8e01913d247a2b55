//! Renderings of projections: the active glossary, snapshots, diffs, rebuilds and
//! the outcome of a write, as text for people and as stable JSON.

use std::io::IsTerminal;

use book::{Book, Submitted};
use ledger_model::*;
use projections::{RecordDiff, State};
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
    let head = submitted.revision.0;
    if json {
        outln!("{}", crate::render::json::submitted(submitted, notes));
        return;
    }
    match &submitted.appended {
        Some(appended) => crate::render::output::appended(appended, false),
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

pub fn show(
    book: &mut Book,
    reader: &projections::Reader,
    as_of: Option<Seq>,
    chapter: Option<u32>,
    json: bool,
) -> Result<(), Failure> {
    let glossary = book.glossary(reader, as_of, chapter)?;
    let (state, snapshot) = (&glossary.state, glossary.snapshot);
    let terms = state.active_terms(chapter);
    let summaries = state.visible_summaries(chapter);
    if json {
        outln!("{}", crate::render::json::glossary(&glossary));
        return Ok(());
    }
    let at = chapter.map(|chapter| format!(", chapter {chapter}")).unwrap_or_default();
    let party = reader.party().map(|party| format!(", as {party}")).unwrap_or_default();
    outln!("revision {}{at}{party}; snapshot {}", state.revision(), &snapshot.to_string()[..16]);
    outln!("{} active term(s)", terms.len());
    for active in &terms {
        let put = &active.term.put;
        let sense = put.sense.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
        let mut line =
            format!("  {:<6} {}{} -> {}  [{}", active.id, put.src, sense, put.dst, window_text(active.window));
        if put.status != Status::Approved {
            line.push_str(&format!(", {}", crate::render::output::word(&put.status)));
        }
        if let Some(by) = active.superseded_by {
            line.push_str(&format!(", superseded by {by}"));
        }
        line.push(']');
        let aliases: Vec<&str> = active.aliases(chapter).iter().map(|(alias, _)| alias.surface.as_str()).collect();
        if !aliases.is_empty() {
            line.push_str(&format!("  aliases: {}", aliases.join(", ")));
        }
        if let Some(verdict) = crate::render::json::verdict_text(&active.term.verdict) {
            line.push_str(&format!("  verdict: {verdict}"));
        }
        let governed = state.governed(active.id);
        if let Some(owner) = governed.owner {
            let role = governed.owner_role.map(|role| format!(" ({role})")).unwrap_or_default();
            line.push_str(&format!("  owner: {owner}{role}"));
        }
        outln!("{line}");
        if let Some(note) = &put.note {
            outln!("         note: {}", note.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    if !summaries.is_empty() {
        outln!("{} visible summar(ies)", summaries.len());
        for summary in &summaries {
            outln!("  {:<6} {}", summary.put.id, summary.put.text.lines().next().unwrap_or_default());
        }
    }
    let rules = state.active_rules(chapter);
    if !rules.is_empty() {
        outln!("{} active rule(s)", rules.len());
        for rule in &rules {
            let scope: Vec<String> = rule.put.applies_to.iter().map(selector_text).collect();
            let excluded: Vec<String> = rule.put.does_not_apply_to.iter().flatten().map(selector_text).collect();
            let excluded = if excluded.is_empty() { String::new() } else { format!("; not {}", excluded.join(", ")) };
            outln!(
                "  {:<6} {}  [{}{excluded}; {}]",
                rule.put.id,
                rule.put.text.split_whitespace().collect::<Vec<_>>().join(" "),
                scope.join(", "),
                window_text(Some(rule.put.window))
            );
        }
    }
    Ok(())
}

/// A rule's selector as a word: `dialogue`, `kind:character`, `T-3`, `chapters 1-20`.
fn selector_text(selector: &Selector) -> String {
    match selector {
        Selector::Kind(kind) => format!("kind:{kind}"),
        Selector::Record(id) => id.to_string(),
        Selector::Chapters(window) => format!("chapters {}", window_text(Some(*window))),
        Selector::Dialogue => "dialogue".into(),
        Selector::Narration => "narration".into(),
    }
}

/// Prints what an import of expected concepts did.
pub fn expect_imported(imported: &book::governance::ExpectImported, dry_run: bool, json: bool) {
    if json {
        outln!("{}", crate::render::json::expect_imported(imported, dry_run));
        return;
    }
    let verb = if dry_run { "would register" } else { "registered" };
    outln!("{verb} {} expected concept(s); {} already registered", imported.added.len(), imported.unchanged.len());
    for entry in &imported.added {
        outln!("  + {} ({})", entry.concept.surface, entry.at);
    }
    if let Some(written) = &imported.written {
        submitted(&written.submitted, &written.labels, &[], false);
    }
}

/// Prints the coverage report.
pub fn coverage(book: &mut Book, chapter: Option<u32>, json: bool) -> Result<(), Failure> {
    let coverage = book.coverage(chapter)?;
    if json {
        outln!("{}", crate::render::json::coverage(&coverage));
        return Ok(());
    }
    print_coverage(&coverage);
    Ok(())
}

/// The lines of a coverage report.
pub fn print_coverage(coverage: &book::governance::Coverage) {
    outln!(
        "{} expected concept(s), {} with no record; {} recorded chunk(s) looked at, {} occurrence(s) with nothing injected",
        coverage.n_expected,
        coverage.missing.len(),
        coverage.n_chunks,
        coverage.uncovered.len()
    );
    for missing in &coverage.missing {
        let kind = missing.concept.kind.as_deref().map(|kind| format!(" ({kind})")).unwrap_or_default();
        outln!(
            "  missing   {}{kind}: no record covers it (expected by {} from {})",
            missing.concept.surface,
            missing.put_by.actor,
            missing.put_by.source
        );
    }
    for uncovered in &coverage.uncovered {
        let why = match uncovered.covered_by {
            Some(id) => format!("{id} covers it but was not injected"),
            None => "no record covers it".to_owned(),
        };
        outln!(
            "  uncovered chapter {} chunk {:?} chars {}..{}: {:?}, {why}",
            uncovered.chapter,
            uncovered.chunk_key,
            uncovered.chars.0,
            uncovered.chars.1,
            uncovered.text
        );
    }
}

/// Prints the profile check; below the `require`d level it fails (exit 2), so it can
/// gate a build.
pub fn profile_check(book: &mut Book, require: u8, json: bool) -> Result<(), Failure> {
    let report = book.profile_check()?;
    if json {
        outln!("{}", crate::render::json::profile_report(&report));
    } else {
        outln!(
            "profile level {} at revision {} ({} active record(s))",
            report.level,
            report.revision,
            report.n_records
        );
        for requirement in &report.requirements {
            let need = match requirement.need {
                book::governance::Need::Must => "MUST",
                book::governance::Need::Should => "SHOULD",
            };
            let state = if requirement.holds() { "ok" } else { "FAILS" };
            outln!(
                "  level {} {need:<6} {:<18} {state}  ({} checked) {}",
                requirement.level,
                requirement.field,
                requirement.n_checked,
                requirement.asks
            );
            if !requirement.failing.is_empty() {
                let ids: Vec<String> = requirement.failing.iter().take(20).map(ToString::to_string).collect();
                let more = requirement.failing.len().saturating_sub(20);
                let more = if more > 0 { format!(" and {more} more") } else { String::new() };
                outln!("      failing: {}{more}", ids.join(", "));
            }
            if requirement.failed_book {
                outln!("      failing: the book");
            }
        }
    }
    Ok(book::governance::require_level(u64::from(report.level), require)?)
}

pub fn snapshot(book: &mut Book, as_of: Option<Seq>, json: bool) -> Result<(), Failure> {
    let info = book.snapshot_info(as_of)?;
    let (id, first) = (info.snapshot, info.first_revision);
    if json {
        outln!("{}", crate::render::json::snapshot(&info));
    } else {
        let first = first.map(|seq| format!("; first indexed at revision {seq}")).unwrap_or_default();
        outln!("{id}  (revision {}{first})", info.revision);
    }
    Ok(())
}

pub fn diff(book: &mut Book, from: Seq, to: Seq, json: bool) -> Result<(), Failure> {
    let book::reads::Diff { old, new, records, config } = book.diff(from, to)?;
    let changed_fields = |id: RecordId, fields: &[projections::FieldChange]| -> Vec<(&'static str, Value, Value)> {
        fields
            .iter()
            .map(|change| {
                (
                    change.field,
                    crate::render::json::field(&old, id, change.field),
                    crate::render::json::field(&new, id, change.field),
                )
            })
            .collect()
    };
    let config_change = (!config.is_empty()).then(|| {
        let as_json = |state: &State| serde_json::to_value(state.config()).unwrap_or(Value::Null);
        (as_json(&old), as_json(&new))
    });
    if json {
        outln!("{}", crate::render::json::diff(&old, &new, &records, &config));
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
        outln!("{}", crate::render::json::rebuilt(&rebuilt));
    } else {
        outln!("rebuilt {} events; snapshot {id} (dropped {n_dropped} cache entries)", rebuilt.revision);
        outln!("frozen projection: {n_terms} active terms, {n_patterns} patterns");
        outln!("checkpoints: dropped {}, wrote {}", rebuilt.n_checkpoints_dropped, rebuilt.n_checkpoints);
        if rebuilt.n_derived + rebuilt.n_derived_dropped > 0 {
            outln!(
                "derived entries (vectors): {} kept, {} damaged and dropped (`lorebank embed refresh` recomputes them)",
                rebuilt.n_derived,
                rebuilt.n_derived_dropped
            );
        }
    }
    Ok(())
}
