//! The text forms people read: one function per answer of the book service, each
//! laying out a typed result on stdout (reports of a file written on stdout's
//! behalf, on stderr). No book call, no rule: what to say was decided by the
//! service. The JSON forms of the same answers are `super::json`.

use std::path::Path;

use book::assemble::Disposition;
use book::check::Checked;
use book::chunks::{Impacted, Replayed, Staleness};
use book::interchange::Grouped;
use book::reads::{Audit, AuditedChunk, Diff, Glossary, Rebuilt, SnapshotInfo};
use book::review::{ReviewItem, Scanned};
use book::{Assembled, Copy, ImportReport, Written};
use ledger::Appended;
use ledger_model::*;
use projections::{Reader, RecordDiff, State};
use serde_json::Value;

use super::json;

/// How many items of each list the text report of an import shows (`--json` lists
/// all).
const SHOWN: usize = 20;

/// `YYYY-MM-DDTHH:MM:SSZ` for unix milliseconds (proleptic Gregorian, UTC).
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (H. Hinnant), shifted so the era starts on 0000-03-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The documented JSON word of a unit enum value (`approved`, `variant`, `m`),
/// never its Rust name.
pub fn word<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(word)) => word,
        Ok(other) => other.to_string(),
        Err(error) => format!("<{error}>"),
    }
}

/// One line describing what a body does.
pub fn describe(body: &Body) -> String {
    match body {
        Body::TermPut(put) => {
            let sense = put.sense.as_deref().map(|sense| format!(" ({sense})")).unwrap_or_default();
            let mut line = format!(
                "term_put {} {}{} -> {} [{}, {}]",
                put.id,
                put.src,
                sense,
                put.dst,
                put.window,
                word(&put.status)
            );
            if let Some(old) = put.supersedes {
                line.push_str(&format!(" supersedes {old}"));
            }
            line
        }
        Body::TermRetired(retired) => format!("term_retired {}", retired.id),
        Body::AliasAdded(alias) => format!("alias_added {} {} ({})", alias.id, alias.surface, word(&alias.kind)),
        Body::AliasRemoved(alias) => format!("alias_removed {} {}", alias.id, alias.surface),
        Body::SummaryPut(put) => {
            let scope = match put.scope {
                Scope::Chapter(chapter) => format!("chapter {chapter}"),
                Scope::Arc { from, to } => format!("arc {from}-{to}"),
                Scope::Book => "book".to_owned(),
            };
            let first_line = put.text.lines().next().unwrap_or_default();
            format!("summary_put {} {scope}: {first_line}", put.id)
        }
        Body::SummaryRetired(retired) => format!("summary_retired {}", retired.id),
        Body::CandidateProposed(candidate) => {
            let mut line =
                format!("candidate_proposed {} {} ({})", candidate.id, candidate.surface, word(&candidate.origin));
            match (candidate.related, candidate.duplicate) {
                (Some(related), Some(duplicate)) => line.push_str(&format!(" {duplicate} same as {related}")),
                (Some(related), None) => line.push_str(&format!(" near {related}")),
                _ => {}
            }
            line
        }
        Body::DispositionSet(disposition) => {
            format!("disposition_set {} {} {}", disposition.target, word(&disposition.verdict), disposition.reason)
        }
        Body::ConfigSet(config) => format!("config_set profile {}", config.profile.name),
        Body::RollbackMarker(marker) => format!("rollback_marker to revision {}", marker.to),
        Body::RulePut(put) => {
            let first_line = put.text.lines().next().unwrap_or_default();
            format!("rule_put {} [{}, {}]: {first_line}", put.id, put.window, word(&put.status))
        }
        Body::RuleRetired(retired) => format!("rule_retired {}", retired.id),
        Body::GovernanceSet(governance) => format!(
            "governance_set policy {}, {} part(ies), {} default(s)",
            word(&governance.conflict_policy),
            governance.parties.len(),
            governance.defaults.len()
        ),
        Body::ConceptExpected(concept) => format!("concept_expected {}", concept.surface),
        Body::ConceptDropped(concept) => format!("concept_dropped {}", concept.surface),
        Body::EmbeddingModelSet(model) => format!("embedding_model_set {} dim {}", model.name, model.dim),
        Body::LanguagesSet(languages) => format!(
            "languages_set source {}, target {}",
            languages.source.as_deref().unwrap_or("(the profile's)"),
            languages.target.as_deref().unwrap_or(ledger_model::language::TARGET_LANG_DEFAULT)
        ),
        Body::SourceSet(source) => match source.text {
            Some(text) => format!(
                "source_set chapter {}{} ({} bytes, {})",
                source.chapter,
                source.title.as_deref().map(|title| format!(" {title:?}")).unwrap_or_default(),
                source.bytes,
                &text.to_hex()[..12]
            ),
            None => format!("source_set chapter {} removed", source.chapter),
        },
        Body::ProxyTemplateSet(set) => match &set.template {
            Some(template) => format!(
                "proxy_template_set ({} chars, {})",
                template.chars().count(),
                &blake3::hash(template.as_bytes()).to_hex()[..12]
            ),
            None => "proxy_template_set cleared (the built-in template)".to_owned(),
        },
        Body::ModelPromptSet(set) => match &set.text {
            Some(text) => format!(
                "model_prompt_set {} ({} chars, {})",
                set.job,
                text.chars().count(),
                &blake3::hash(text.as_bytes()).to_hex()[..12]
            ),
            None => format!("model_prompt_set {} cleared (the built-in prompt)", set.job),
        },
        Body::CascadeSet(set) => {
            let ids =
                |list: &[ledger_model::RecordId]| list.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
            let mut line = match set.depth {
                0 => "cascade_set off".to_owned(),
                depth => format!("cascade_set depth {depth}"),
            };
            if !set.quiet.is_empty() {
                line.push_str(&format!("; quiet {}", ids(&set.quiet)));
            }
            if !set.direct_only.is_empty() {
                line.push_str(&format!("; direct only {}", ids(&set.direct_only)));
            }
            line
        }
        Body::ExamplesSet(set) => {
            let ids =
                |list: &[ledger_model::RecordId]| list.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
            match (set.always.is_empty(), set.never.is_empty()) {
                (true, true) => "examples_set: none named".to_owned(),
                (false, true) => format!("examples_set always {}", ids(&set.always)),
                (true, false) => format!("examples_set never {}", ids(&set.never)),
                (false, false) => format!("examples_set always {}; never {}", ids(&set.always), ids(&set.never)),
            }
        }
        Body::ModelPolicySet(policy) => match policy.decides.as_slice() {
            [] => format!("model_policy_set {} decides nothing", policy.party),
            decides => format!("model_policy_set {} decides {}", policy.party, decides.join(", ")),
        },
    }
}

/// One event as a line of the log.
pub fn event_line(event: &Event) -> String {
    format!(
        "#{:<5} {}  {}  [{}]  {}",
        event.seq,
        utc(event.content.recorded_at_ms),
        event.content.actor,
        event.content.source,
        describe(&event.content.body)
    )
}

/// What an append wrote: its events, the head and the chain hash.
pub fn appended(appended: &Appended) {
    let n_events = appended.last.0 - appended.first.0 + 1;
    outln!(
        "appended {n_events} event(s): {}..={}; head {} (chain {})",
        appended.first,
        appended.last,
        appended.last,
        &appended.hash.to_hex()[..16]
    );
}

/// The outcome of a write: what was appended (or that nothing was), the events
/// skipped as identical, every warning (the use case's, then those of `decide`) on
/// stderr, and the snapshot.
pub fn submitted(written: &Written) {
    let (submitted, labels) = (&written.submitted, &written.labels);
    let dropped: Vec<&str> =
        submitted.decision.dropped.iter().map(|index| labels.get(*index).map_or("", String::as_str)).collect();
    let head = submitted.revision.0;
    match &submitted.appended {
        Some(appended) => self::appended(appended),
        None => outln!("no change: every event was identical to the current version; head {head}"),
    }
    if !submitted.decision.dropped.is_empty() && submitted.appended.is_some() {
        let which = dropped.iter().filter(|label| !label.is_empty()).cloned().collect::<Vec<_>>().join(", ");
        outln!("{} event(s) identical to the current version were skipped {which}", dropped.len());
    }
    for warning in written.all_warnings() {
        errln!("warning: {warning}");
    }
    outln!("snapshot {}", submitted.snapshot);
}

/// A book just created: its file, profile and fold table (the write follows).
pub fn initialized(path: &Path, profile: &str, initialized: &book::Initialized) {
    outln!("created {} with the {profile} profile (fold table {})", path.display(), &initialized.table.to_hex()[..16]);
    outln!("languages: source {}, target {}", initialized.source_lang, initialized.target_lang);
}

/// The glossary a chapter's translator sees (or the whole book's): active terms
/// with their windows, aliases, verdicts and owners, summaries and rules.
pub fn glossary(glossary: &Glossary, reader: &Reader, chapter: Option<u32>) {
    let (state, snapshot) = (&glossary.state, glossary.snapshot);
    let terms = state.active_terms(chapter);
    let summaries = state.visible_summaries(chapter);
    let at = chapter.map(|chapter| format!(", chapter {chapter}")).unwrap_or_default();
    let party = reader.party().map(|party| format!(", as {party}")).unwrap_or_default();
    outln!("revision {}{at}{party}; snapshot {}", state.revision(), &snapshot.to_string()[..16]);
    outln!("languages: source {}, target {}", state.source_lang(), state.target_lang());
    outln!("{} active term(s)", terms.len());
    for active in &terms {
        let put = &active.term.put;
        let sense = put.sense.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
        let mut line =
            format!("  {:<6} {}{} -> {}  [{}", active.id, put.src, sense, put.dst, window_text(active.window));
        if put.status != Status::Approved {
            line.push_str(&format!(", {}", word(&put.status)));
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
}

/// What an import of expected concepts did.
pub fn expect_imported(imported: &book::governance::ExpectImported, dry_run: bool) {
    let verb = if dry_run { "would register" } else { "registered" };
    outln!("{verb} {} expected concept(s); {} already registered", imported.added.len(), imported.unchanged.len());
    for entry in &imported.added {
        outln!("  + {} ({})", entry.concept.surface, entry.at);
    }
    if let Some(written) = &imported.written {
        submitted(written);
    }
}

/// The profile check: each requirement of each level, and what fails it.
pub fn profile_report(report: &book::governance::ProfileReport) {
    outln!("profile level {} at revision {} ({} active record(s))", report.level, report.revision, report.n_records);
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

/// A snapshot ID with its revision and where it was first indexed.
pub fn snapshot(info: &SnapshotInfo) {
    let first = info.first_revision.map(|seq| format!("; first indexed at revision {seq}")).unwrap_or_default();
    outln!("{}  (revision {}{first})", info.snapshot, info.revision);
}

/// What differs between two revisions, record by record and field by field.
pub fn diff(diff: &Diff, from: Seq, to: Seq) {
    let Diff { old, new, records, config } = diff;
    outln!("diff revision {from} -> {to}: {} record(s) differ", records.len());
    for record in records {
        match record {
            RecordDiff::Added(id) => outln!("+ {id}"),
            RecordDiff::Removed(id) => outln!("- {id}"),
            RecordDiff::Changed(id, fields) => {
                outln!("~ {id}");
                for change in fields {
                    let field = change.field;
                    let (old, new) = (json::field(old, *id, field), json::field(new, *id, field));
                    outln!("    {field}: {old} -> {new}");
                }
            }
        }
    }
    let changed = |fields: &[&str]| config.iter().any(|change| fields.contains(&change.field));
    if changed(&["config", "governance"]) {
        let as_json = |state: &State| serde_json::to_value(state.config()).unwrap_or(Value::Null);
        outln!("~ config: {} -> {}", as_json(old), as_json(new));
    }
    if changed(&["languages"]) {
        outln!("~ languages: {} -> {}", json::languages(old), json::languages(new));
    }
    if changed(&["proxy_template"]) {
        let template = |state: &State| state.proxy_template().map(|(template, _)| template.to_owned());
        outln!("~ proxy_template: {:?} -> {:?}", template(old), template(new));
    }
}

/// What a rebuild folded, dropped and wrote.
pub fn rebuilt(rebuilt: &Rebuilt) {
    let (id, n_dropped, n_terms, n_patterns) =
        (rebuilt.snapshot, rebuilt.n_cache_entries_dropped, rebuilt.n_terms, rebuilt.n_patterns);
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

/// A log that verified: its events, head and derived data.
pub fn verified(report: &ledger::VerifyReport) {
    outln!(
        "ok: {} events, chain intact; head {} (chain {})",
        report.n_events,
        report.head.seq,
        &report.head.hash.to_hex()[..16]
    );
    if report.n_checkpoints_dropped > 0 {
        outln!(
            "{} of {} checkpoints do not match the log and are ignored (derived data: the next write or `lorebank rebuild` replaces them)",
            report.n_checkpoints_dropped,
            report.n_checkpoints + report.n_checkpoints_dropped
        );
    } else if report.n_checkpoints > 0 {
        outln!("{} checkpoints match the log", report.n_checkpoints);
    }
    if report.n_derived_dropped > 0 {
        outln!(
            "{} of {} derived entries (vectors) fail their checksum and are ignored (derived data: `lorebank embed refresh` recomputes them)",
            report.n_derived_dropped,
            report.n_derived + report.n_derived_dropped
        );
    }
}

/// Every event about one term, one line each.
pub fn term_history(id: RecordId, versions: &[Event]) {
    outln!("{id}: {} event(s)", versions.len());
    for event in versions {
        outln!("{}", event_line(event));
    }
}

/// An assembled chunk: the context on stdout, the receipt on stderr.
pub fn assembled(assembled: &Assembled, record: bool) {
    out!("{}", assembled.assembly.context);
    let recorded = if record { "receipt" } else { "receipt (not recorded)" };
    errln!("{recorded} {}", assembled.id);
}

/// A replayed receipt: the context on stdout, and on stderr that it matched.
pub fn replayed(replayed: &Replayed) {
    out!("{}", replayed.context);
    if replayed.identical {
        errln!("replay {}: byte-identical to the recorded output", short(&replayed.receipt.id()));
    }
}

/// A chapter's audit: every recorded chunk with what it injected and why, and the
/// cast list's coverage.
pub fn audit(audit: &Audit, chapter: u32) {
    outln!("chapter {chapter}: {} recorded chunk(s); head revision {}", audit.chunks.len(), audit.head);
    for chunk in &audit.chunks {
        audit_chunk(chunk);
    }
    if audit.coverage.n_expected > 0 {
        outln!("");
        coverage(&audit.coverage);
    }
}

/// The recorded chunks that would get a different context under the head.
pub fn impact(impacted: &[Impacted]) {
    outln!("{} recorded chunk(s) would get a different context under the head snapshot", impacted.len());
    for chunk in impacted {
        impacted_line(chunk);
        outln!("    text: {}", excerpt(&chunk.text));
    }
}

/// A recorded chunk to translate again and the terms whose lines change, as `impact`
/// and `impact --with` list it.
fn impacted_line(chunk: &Impacted) {
    let terms: Vec<String> = chunk.terms.iter().map(|t| format!("T-{t}")).collect();
    outln!(
        "  chapter {} chunk {:?} (receipt {}): {}",
        chunk.chapter,
        chunk.chunk_key,
        short(&chunk.receipt),
        terms.join(", ")
    );
}

/// `names lint`: each deviating term with the standard's form and the syllable that
/// differs, then the exceptions and what could not be checked.
pub fn name_lint(lint: &book::standard::NameLint) {
    outln!(
        "{} of {} character and place term(s) differ from the standard ({}); {} marked as exceptions",
        lint.deviations.len(),
        lint.n_checked,
        if lint.language.starts_with("ja") { "Polivanov" } else { "Palladius" },
        lint.exceptions.len()
    );
    for deviation in &lint.deviations {
        let syllable = match &deviation.syllable {
            Some(syllable) => {
                format!(" (it writes {} for {}, read {})", syllable.russian, syllable.source, syllable.reading)
            }
            None => " (every syllable is there; the spacing, joining or an added word differs)".to_owned(),
        };
        outln!(
            "  {}  {} -> {}: the standard gives {}{syllable}",
            deviation.id,
            deviation.src,
            deviation.dst,
            deviation.expected
        );
    }
    for (id, why) in &lint.unchecked {
        outln!("  {id}  not checked: {why}");
    }
}

/// What a batch would do (`impact --with`): nothing is written.
pub fn what_if(what_if: &book::chunks::WhatIf) {
    let submitted = &what_if.written.submitted;
    outln!(
        "nothing written: the batch would append {} event(s) ({} identical to the current version), head {} -> {}",
        submitted.decision.events.len(),
        submitted.decision.dropped.len(),
        submitted.revision.0 - submitted.decision.events.len() as u64,
        submitted.revision.0
    );
    for warning in what_if.written.all_warnings() {
        errln!("warning: {warning}");
    }
    outln!("snapshot {} (now {})", submitted.snapshot, what_if.head_snapshot);
    reopened(&what_if.chunks);
}

/// Recorded chunks a batch would re-open, as `impact --with` and an import's dry run
/// list them: each chunk, then the lines it would lose (`-`) and gain (`+`).
fn reopened(chunks: &[book::chunks::Reopened]) {
    outln!("{} recorded chunk(s) would get a different context", chunks.len());
    for reopened in chunks {
        impacted_line(&reopened.chunk);
        for line in &reopened.removed {
            outln!("    - {line}");
        }
        for line in &reopened.added {
            outln!("    + {line}");
        }
    }
}

/// The first line of a chunk's text, cut at 40 chars (`…` when anything is left out):
/// enough to find it in the tool's files; `--json` has the whole text.
fn excerpt(text: &str) -> String {
    let line = text.trim_start().lines().next().unwrap_or("");
    let cut: String = line.chars().take(40).collect();
    if cut.len() < text.trim().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// One line naming the copy written (`what`: backup, restored, archive, imported),
/// its events, head, snapshot ID and size.
pub fn copied(what: &str, copy: &Copy) {
    outln!(
        "{what} {}: {} events, head {} (chain {}), snapshot {}, {} blobs, {} documents, {} bytes; verified",
        copy.path.display(),
        copy.n_events,
        copy.head.seq,
        &copy.head.hash.to_hex()[..16],
        copy.snapshot,
        copy.n_blobs,
        copy.n_documents,
        copy.n_bytes
    );
}

/// The review queue, one line an item.
pub fn review_list(items: &[ReviewItem]) {
    outln!("{} item(s) to review", items.len());
    for item in items {
        outln!("  {}", item_line(item));
    }
}

/// One review item, with a candidate's evidence.
pub fn review_item(item: &ReviewItem) {
    outln!("{}", item_line(item));
    if let ReviewItem::Candidate { proposed, .. } = item {
        for line in proposed.evidence.as_deref().unwrap_or("").lines() {
            outln!("  {line}");
        }
    }
}

/// The report of an export, on stderr (stdout may be the file itself).
pub fn exported(export: &book::Export) {
    let gate = export.chapter.map_or_else(|| "every chapter".to_owned(), |chapter| format!("chapter {chapter}"));
    errln!(
        "exported {} term(s) and {} summary(ies) as {} for {gate} at revision {} (snapshot {})",
        export.n_terms,
        export.n_summaries,
        export.format,
        export.revision,
        export.snapshot
    );
    if !export.rejected.is_empty() {
        let ids: Vec<String> = export.rejected.iter().map(ToString::to_string).collect();
        errln!("  withheld  {} (rejected by an editor)", ids.join(", "));
    }
    for group in &export.lost {
        let places: Vec<String> = group.at.iter().take(5).map(ToString::to_string).collect();
        let extra = if group.at.len() > 5 { format!(" and {} more", group.at.len() - 5) } else { String::new() };
        errln!(
            "  lost      {} ×{} ({}{extra}): {} cannot hold it",
            group.what,
            group.at.len(),
            places.join(", "),
            export.format
        );
    }
}

/// The report of an export in the profile form, on stderr.
pub fn exported_profile(export: &book::governance::ProfileExport) {
    errln!(
        "exported {} record(s) in the profile form at revision {} (snapshot {})",
        export.n_records,
        export.revision,
        export.snapshot
    );
}

/// The report of a translation-memory export, on stderr.
pub fn exported_tmx(export: &book::TmxExport) {
    let chapters = export.chapter.map_or_else(|| "every chapter".to_owned(), |chapter| format!("chapter {chapter}"));
    errln!(
        "exported {} chunk(s) of {chapters} as {} TMX unit(s) ({} chunk(s) by sentence), {} to {}, at revision {} \
         (snapshot {})",
        export.n_chunks,
        export.n_units,
        export.n_sentence_chunks,
        export.source_lang,
        export.target_lang,
        export.revision,
        export.snapshot
    );
    let chunk = |chunk: &book::tmx::ChunkRef| {
        format!("chapter {} chunk {:?} (receipt {})", chunk.chapter, chunk.chunk_key, &chunk.receipt.to_hex()[..16])
    };
    let more =
        |count: usize, shown: usize| if count > shown { format!(" and {} more", count - shown) } else { String::new() };
    for (word, why, listed) in [
        ("unchecked", "no check of its latest receipt", &export.unchecked),
        ("withheld", "its receipt names what the head no longer releases to the party", &export.withheld),
    ] {
        for item in &listed.first {
            errln!("  {word:<9} {}: {why}", chunk(item));
        }
        if listed.count > listed.first.len() {
            errln!("  {word:<9}{}", more(listed.count, listed.first.len()));
        }
    }
    for item in &export.refused.first {
        errln!(
            "  refused   {}: its {} holds U+{:04X}, which XML 1.0 cannot hold",
            chunk(&item.chunk),
            item.side.name(),
            item.character as u32
        );
    }
    if export.refused.count > export.refused.first.len() {
        errln!("  refused  {}", more(export.refused.count, export.refused.first.len()));
    }
}

/// The book's embedding model after `embed set-model`, and what it replaced.
pub fn model_set(set: &suggest::ModelSet, status: &suggest::VectorStatus) {
    outln!("embedding model {} (id {})", suggest::identity_of(&set.set), &set.id.to_string()[..16]);
    match (&set.written, &set.replaced) {
        (None, _) => outln!("no change: the book already has this model"),
        (Some(written), replaced) => {
            if let Some(replaced) = replaced {
                outln!(
                    "replaces {}: its {} vector entries are stale; `lorebank embed refresh` recomputes them",
                    replaced.name,
                    status.n_stale
                );
            }
            submitted(written);
        }
    }
}

/// What `embed refresh` embedded, kept and dropped.
pub fn refreshed(refreshed: &suggest::Refreshed) {
    outln!(
        "refreshed {} terms: {} embedded ({} texts), {} kept; {} stale vector entries dropped",
        refreshed.n_terms,
        refreshed.n_embedded,
        refreshed.n_texts,
        refreshed.n_kept,
        refreshed.n_dropped
    );
    for skipped in &refreshed.skipped {
        outln!("  {} {}: no vector ({})", skipped.id, skipped.role.as_str(), skipped.reason);
    }
}

/// The book's embedding model and how fresh its vectors are.
pub fn vector_status(status: &suggest::VectorStatus) {
    match (&status.model, &status.model_id) {
        (Some(set), Some(id)) => {
            outln!("embedding model {} (id {})", suggest::identity_of(set), &id.to_string()[..16]);
            outln!(
                "{} active terms: {} with fresh vectors, {} without; {} stale vector entries",
                status.n_terms,
                status.n_fresh,
                status.n_missing,
                status.n_stale
            );
        }
        _ => outln!("no embedding model: set one with `lorebank embed set-model`"),
    }
    outln!("vector set: {} entries, {} bytes", status.n_entries, status.n_bytes);
}

/// What `suggest` found in a chunk (and with `phrases`, the phrases near a term).
pub fn suggested(suggested: &suggest::Suggested, phrases: bool, dry_run: bool) {
    outln!("{} name-like span(s) no term covers", suggested.spans.len());
    for span in &suggested.spans {
        let sighting = &span.sighting;
        let near = match &span.nearest {
            Some((id, role, text, value)) => format!("near {id} {text} ({}) {}", role.as_str(), score(*value)),
            None => "no term of the chapter to compare with".to_owned(),
        };
        let to = match span.candidate {
            Some(candidate) => format!(": {candidate}"),
            None => format!(", below {}", score(suggested.min_score)),
        };
        outln!("  {} at chars {}..{}: {near}{to}", sighting.surface, sighting.chars.0, sighting.chars.1);
    }
    if phrases {
        outln!(
            "{} phrase(s) of {} near a term the chunk does not name, at {} or more",
            suggested.phrases.len(),
            suggested.n_phrases,
            score(suggested.min_score)
        );
        for phrase in &suggested.phrases {
            let (id, role, text, value) = &phrase.nearest;
            let to = phrase.candidate.map(|candidate| format!(": {candidate}")).unwrap_or_default();
            outln!(
                "  {} at chars {}..{}: near {id} {text} ({}) {}{to}",
                phrase.surface,
                phrase.chars.0,
                phrase.chars.1,
                role.as_str(),
                score(*value)
            );
        }
    }
    finish(suggested.proposed.len(), suggested.written.as_ref(), dry_run);
}

/// The pairs of terms `dedupe` found alike.
pub fn deduped(deduped: &suggest::Deduped, dry_run: bool) {
    outln!(
        "{} pair(s) of {} active terms at {} or more{}",
        deduped.pairs.len(),
        deduped.n_terms,
        score(deduped.min_score),
        if deduped.n_over_limit > 0 {
            format!(" ({} more over the limit left out)", deduped.n_over_limit)
        } else {
            String::new()
        }
    );
    for pair in &deduped.pairs {
        outln!(
            "  {} {} ~ {} {} {} ({} ~ {}){}",
            pair.first,
            pair.first_text.1,
            pair.second,
            pair.second_text.1,
            score(pair.score),
            pair.first_text.0.as_str(),
            pair.second_text.0.as_str(),
            pair.candidate.map(|candidate| format!(": {candidate}")).unwrap_or_default()
        );
    }
    finish(deduped.proposed.len(), deduped.written.as_ref(), dry_run);
}

fn window_text(window: Option<Window>) -> String {
    window.map_or_else(|| "never (superseded)".to_owned(), |w| w.to_string())
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

/// The coverage report: expected concepts no record covers, occurrences nothing
/// was injected for.
pub fn coverage(coverage: &book::governance::Coverage) {
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

fn short(id: &Hash32) -> String {
    id.to_hex()[..16].to_owned()
}

fn audit_chunk(chunk: &AuditedChunk) {
    let (id, receipt) = (chunk.id, &chunk.receipt);
    let party = receipt.party.as_deref().map(|party| format!("  for {party}")).unwrap_or_default();
    outln!(
        "\nchunk {:?}  receipt {}  revision {}  snapshot {}{party}",
        receipt.chunk_key,
        short(&id),
        receipt.revision,
        short(&receipt.snapshot)
    );
    outln!("  text: {}", excerpt(&chunk.text));
    for audited in &chunk.injected {
        let entry = &audited.entry;
        let stale_text = match audited.stale {
            Staleness::Current => "current".to_owned(),
            Staleness::Revised(seq) => format!("STALE: revised at revision {seq}"),
            Staleness::Retired => "STALE: retired".to_owned(),
        };
        let via = match receipt.cascade.iter().find(|found| found.term == entry.term) {
            Some(found) if entry.via == book::assemble::Via::Cascade => {
                format!("cascade from {}, depth {}", found.by, found.depth)
            }
            _ => word(&entry.via),
        };
        let unverified = if entry.unverified { " [unverified]" } else { "" };
        let owner = audited.owner.as_deref().map(|owner| format!("; ask {owner}")).unwrap_or_default();
        outln!(
            "  + T-{:<4} {} -> {}{unverified}  ({via}; event {} by {} from {} at {}{owner})  {stale_text}",
            entry.term,
            audited.src,
            audited.dst,
            audited.put_by.seq,
            audited.put_by.actor,
            audited.put_by.source,
            utc(audited.put_by.recorded_at_ms)
        );
    }
    for audited in &chunk.rules {
        let decision = word(&audited.rule.disposition);
        let reason = audited.rule.reason.map(|reason| format!(", {}", word(&reason))).unwrap_or_default();
        outln!(
            "  {} R-{:<4} {}  ({decision}{reason}; event {} by {} from {})",
            if audited.rule.disposition == Disposition::Rejected { "-" } else { "+" },
            audited.rule.rule,
            audited.text.split_whitespace().collect::<Vec<_>>().join(" "),
            audited.put_by.seq,
            audited.put_by.actor,
            audited.put_by.source
        );
    }
    for hit in &chunk.rejected {
        // The reason code as in JSON and docs/assembly.md (`spoiler_window`).
        let reason = word(&hit.reason);
        outln!("  - T-{:<4} {:?} at chars {}..{}: rejected, {reason}", hit.term, hit.text, hit.chars.0, hit.chars.1);
    }
    for term in &receipt.evicted {
        outln!("  - T-{term:<4} evicted by the token budget");
    }
    for example in &receipt.examples {
        outln!(
            "  = T-{:<4} example from chapter {} (receipt {}, check {}): {} -> {}",
            example.term,
            example.chapter,
            short(&example.receipt),
            short(&example.check),
            example.source,
            example.target
        );
    }
    for (id, stored) in &chunk.checks {
        let items: Vec<String> = stored
            .check
            .items
            .iter()
            .map(|item| {
                let gender = if item.agreement.is_empty() { "" } else { ", gender flag" };
                format!("T-{} {} {}/{}{gender}", item.term, word(&item.verdict), item.found_count, item.source_count)
            })
            .collect();
        outln!(
            "  check {} of translation {}: {}",
            short(id),
            short(&stored.translation_hash),
            if items.is_empty() { "no terms to check".to_owned() } else { items.join("; ") }
        );
    }
}

/// A post-check of a translation, term by term.
pub fn checked(checked: &Checked, stored: bool) {
    let check = &checked.stored.check;
    outln!(
        "check {} of receipt {} (rules {}): {}",
        &checked.id.to_hex()[..16],
        &checked.stored.receipt.to_hex()[..16],
        check.rules_version,
        if checked.failed() { "problems found" } else { "every term rendered" }
    );
    for item in &check.items {
        let (src, dst) = checked
            .surfaces
            .iter()
            .find(|(term, ..)| *term == item.term)
            .map(|(_, src, dst)| (src.as_str(), dst.as_str()))
            .unwrap_or(("?", "?"));
        let verdict = word(&item.verdict);
        let review = if item.review { " [review]" } else { "" };
        outln!(
            "  T-{} {src} → {dst}: {verdict}, {} of {} in the translation{review}",
            item.term,
            item.found_count,
            item.source_count
        );
        for found in &item.found {
            let how = if found.declared { "declared" } else { "generated" };
            outln!("      found {:?} at bytes {}..{} ({how})", found.form, found.bytes.0, found.bytes.1);
        }
        for wrong in &item.wrong {
            outln!("      T-{}'s rendering at bytes {}..{}", wrong.term, wrong.bytes.0, wrong.bytes.1);
        }
        for flag in &item.agreement {
            outln!(
                "      gender: {:?} at bytes {}..{} agrees with {}, the rendering is {}",
                flag.word,
                flag.bytes.0,
                flag.bytes.1,
                word(&flag.found),
                word(&flag.expected)
            );
        }
    }
    if stored {
        outln!("stored beside the receipt (translation {})", &checked.stored.translation_hash.to_hex()[..16]);
    }
    if let Some(written) = &checked.proposed {
        submitted(written);
    }
}

fn item_line(item: &ReviewItem) -> String {
    match item {
        ReviewItem::Candidate { proposed, sightings } => {
            // Low trust is said on every line it is on, with the score and the term.
            let low = match (proposed.trust, proposed.score) {
                (Trust::Low, Some(score)) => format!(", low trust, score {}", embed::Score::from_millionths(score)),
                (Trust::Low, None) => ", low trust".to_owned(),
                // The book-wide alarm's ranking score (`scan --chapters`).
                (Trust::Normal, Some(score)) => format!(", ranked {score}"),
                (Trust::Normal, None) => String::new(),
            };
            let related = match (proposed.related, proposed.duplicate) {
                (Some(related), Some(duplicate)) => format!("; {duplicate} same as {related}?"),
                (Some(related), None) => format!("; alias of {related}?"),
                _ => String::new(),
            };
            format!(
                "{} {} (candidate, {}{low}, seen {sightings}×){}{related}",
                proposed.id,
                proposed.surface,
                word(&proposed.origin),
                proposed.suggested_dst.as_ref().map(|dst| format!(" → {dst}")).unwrap_or_default()
            )
        }
        ReviewItem::Flagged { put, why, owner, owner_role } => {
            format!("{} {} → {} ({why}){}", put.id, put.src, put.dst, ask(owner, owner_role))
        }
        ReviewItem::FlaggedRule { put, why, owner, owner_role } => format!(
            "{} rule: {} ({why}){}",
            put.id,
            put.text.split_whitespace().collect::<Vec<_>>().join(" "),
            ask(owner, owner_role)
        ),
    }
}

/// `; ask OWNER (ROLE)`, or nothing without an owner.
fn ask(owner: &Option<String>, role: &Option<String>) -> String {
    match (owner, role) {
        (Some(owner), Some(role)) => format!("; ask {owner} ({role})"),
        (Some(owner), None) => format!("; ask {owner}"),
        _ => String::new(),
    }
}

/// The name-like spans a scan found, and the candidates it proposed.
pub fn scanned(scanned: &Scanned, dry_run: bool) {
    outln!("{} name-like span(s) no record covers", scanned.sightings.len());
    for (sighting, candidate) in &scanned.sightings {
        let reading = sighting.reading.as_ref().map(|reading| format!(" ({reading})")).unwrap_or_default();
        outln!(
            "  {}{reading} at chars {}..{} ({}): {candidate}",
            sighting.surface,
            sighting.chars.0,
            sighting.chars.1,
            format!("{:?}", sighting.cue).to_lowercase()
        );
    }
    match (&scanned.written, dry_run) {
        (_, true) => outln!("dry run: {} candidate(s) would be proposed or updated", scanned.proposed.len()),
        (Some(written), false) => submitted(written),
        (None, false) => outln!("no change: every sighting is already in the candidates' evidence"),
    }
}

/// `lorebank scan --chapters`: the ranked surfaces, best first.
pub fn scanned_ranked(scanned: &book::alarm::RankedScan, dry_run: bool) {
    outln!(
        "{} chunk(s) read; {} likely name(s), best first ({} under the minimum score left out)",
        scanned.chunks,
        scanned.ranked.len(),
        scanned.below
    );
    for (ranked, candidate) in &scanned.ranked {
        outln!(
            "  {} score {}: {} time(s) in {} chunk(s), {} chapter(s): {candidate}",
            ranked.surface,
            ranked.score,
            ranked.count,
            ranked.chunks,
            ranked.chapters
        );
    }
    match (&scanned.written, dry_run) {
        (_, true) => outln!("dry run: {} candidate(s) would be proposed or updated", scanned.proposed.len()),
        (Some(written), false) => submitted(written),
        (None, false) => outln!("no change: every likely name is already in the candidates' evidence"),
    }
}

/// `lorebank extract`: the requests, then each name the model proposed and its fate.
pub fn extracted(extracted: &book::extract::Extracted, dry_run: bool) {
    use book::extract::NameOutcome;
    let stored = extracted.parts.iter().filter(|part| part.stored).count();
    outln!(
        "{} request(s) to {} (prompt {}), {stored} answered from the book's store",
        extracted.parts.len(),
        extracted.model,
        extracted.prompt
    );
    for name in &extracted.names {
        let fate = match name.outcome {
            NameOutcome::Proposed => "proposed",
            NameOutcome::Evidence => "added to the evidence of",
            NameOutcome::Unchanged => "already in the evidence of",
            NameOutcome::Known => "known to the book",
            NameOutcome::NotInText => "dropped: not in the chapter's text",
            NameOutcome::NotAName => "dropped: no letter in it",
        };
        let candidate = name.candidate.map(|id| format!(" {id}")).unwrap_or_default();
        outln!("  ch{} {}: {fate}{candidate}", name.chapter, name.name.surface);
    }
    outln!(
        "{} proposed, {} with new evidence, {} known, {} not in the text",
        extracted.count(NameOutcome::Proposed),
        extracted.count(NameOutcome::Evidence),
        extracted.count(NameOutcome::Known),
        extracted.count(NameOutcome::NotInText)
    );
    match (&extracted.written, dry_run) {
        (_, true) => outln!("dry run: {} candidate(s) would be proposed or updated", extracted.proposed.len()),
        (Some(written), false) => submitted(written),
        (None, false) => outln!("no change to the log"),
    }
}

/// `lorebank exchange`: who asked what with which prompt, each message of the request,
/// and the answer's message text (or its body, when it has none).
pub fn exchange(id: ledger_model::Hash32, exchange: &book::exchange::StoredExchange) {
    outln!(
        "exchange {} ({} job, prompt {}) asked by {} at {} ms",
        id.to_hex(),
        exchange.job,
        exchange.prompt,
        exchange.actor,
        exchange.recorded_at_ms
    );
    let request: serde_json::Value = serde_json::from_str(&exchange.request).unwrap_or_default();
    outln!("model: {}", request["model"].as_str().unwrap_or("?"));
    for message in request["messages"].as_array().into_iter().flatten() {
        outln!("--- {} ---", message["role"].as_str().unwrap_or("?"));
        outln!("{}", message["content"].as_str().unwrap_or(""));
    }
    outln!("--- answer ---");
    let answer: serde_json::Value = serde_json::from_str(&exchange.answer).unwrap_or_default();
    match answer.pointer("/choices/0/message/content").and_then(serde_json::Value::as_str) {
        Some(text) => outln!("{text}"),
        None => outln!("{}", exchange.answer),
    }
}

/// `lorebank adjudicate`: each chapter's conflicts and the model's verdicts.
pub fn adjudicated(adjudicated: &book::adjudicate::Adjudicated, dry_run: bool) {
    for chapter in &adjudicated.chapters {
        let left = if chapter.left > 0 { format!(" ({} more not sent)", chapter.left) } else { String::new() };
        let from = match chapter.asked {
            Some((_, _, true)) => ", answered from the book's store",
            Some((_, _, false)) => "",
            None => ", nothing asked",
        };
        outln!("chapter {}: {} conflict(s){left}{from}", chapter.chapter, chapter.conflicts.len());
        for conflict in &chapter.conflicts {
            let terms: Vec<&str> = conflict.terms.iter().map(|term| term.id.as_str()).collect();
            outln!("  {} {} {}: {}", conflict.conflict, conflict.kind.name(), conflict.surface, terms.join(", "));
            if let Some(verdict) = chapter.verdicts.iter().find(|verdict| verdict.conflict == conflict.conflict) {
                outln!("    {} ({}): {}", verdict.term, adjudicated.model, verdict.finding.trim());
            }
        }
    }
    for (term, field, from, to) in &adjudicated.decided {
        outln!("decided under the book's policy: {term} {field} {from} → {to}");
    }
    if !adjudicated.already.is_empty() {
        let ids: Vec<String> = adjudicated.already.iter().map(ToString::to_string).collect();
        outln!("already flagged by an adjudication: {}", ids.join(", "));
    }
    match (&adjudicated.written, dry_run) {
        (_, true) => outln!(
            "dry run: {} verify verdict(s) and {} decided change(s) would be written",
            adjudicated.proposed.len(),
            adjudicated.applied.len()
        ),
        (Some(written), false) => submitted(written),
        (None, false) => outln!("no change to the log"),
    }
}

/// The report of an import: what was placed where, skipped, lost and noted.
pub fn import_report(report: &ImportReport, dry_run: bool) {
    let how = if report.detected { "detected" } else { "--format" };
    outln!(
        "{} ({}, {how}) as {}: {} imported, {} updated, {} unchanged, {} skipped, {} shared key(s), {} field(s) lost",
        report.file,
        report.format,
        report.actor,
        report.imported.len(),
        report.updated.len(),
        report.unchanged.len(),
        report.skipped.len(),
        report.collisions.len(),
        report.n_lost()
    );
    for placed in report.imported.iter().take(SHOWN) {
        outln!("  new       {} {} ({})", placed.id, placed.src, placed.at);
    }
    more(report.imported.len());
    for placed in report.updated.iter().take(SHOWN) {
        outln!("  updated   {} {} ({}): {}", placed.id, placed.src, placed.at, placed.fields.join(", "));
    }
    more(report.updated.len());
    for skipped in report.skipped.iter().take(SHOWN) {
        outln!("  skipped   {}: {}", skipped.at, skipped.reason);
    }
    more(report.skipped.len());
    for collision in report.collisions.iter().take(SHOWN) {
        outln!("  shared    {}: {collision}", collision.at);
    }
    more(report.collisions.len());
    lost_text(&report.lost);
    for notice in &report.notices {
        match notice.at.first() {
            Some(first) if notice.at.len() > 1 => {
                outln!("  note      {} ({first} and {} more)", notice.what, notice.at.len() - 1)
            }
            Some(first) => outln!("  note      {} ({first})", notice.what),
            None => outln!("  note      {}", notice.what),
        }
    }
    let snapshot = report.snapshot;
    if dry_run {
        reopened(&report.reopened);
    }
    match (report.written, dry_run) {
        (_, true) => outln!("dry run: {} event(s) would be appended; snapshot would be {snapshot}", report.n_events),
        (true, false) => outln!("appended {} event(s); head {}; snapshot {snapshot}", report.n_events, report.revision),
        (false, false) => outln!("no change: every entry is already in the book; head {}", report.revision),
    }
}

fn more(n: usize) {
    if n > SHOWN {
        outln!("            … and {} more (--json lists all)", n - SHOWN);
    }
}

fn lost_text(lost: &[Grouped]) {
    for group in lost {
        let places: Vec<String> = group.at.iter().take(5).map(ToString::to_string).collect();
        let extra = if group.at.len() > 5 { format!(" and {} more", group.at.len() - 5) } else { String::new() };
        let values =
            if group.values.is_empty() { String::new() } else { format!("; e.g. {}", group.values.join(", ")) };
        outln!("  lost      {} ×{} ({}{extra}){values}", group.what, group.at.len(), places.join(", "));
    }
}

fn score(millionths: i32) -> String {
    embed::Score::from_millionths(millionths).to_string()
}

fn finish(n_proposed: usize, written: Option<&book::Written>, dry_run: bool) {
    match (written, dry_run) {
        (_, true) => outln!("dry run: {n_proposed} candidate(s) would be proposed or updated"),
        (Some(written), false) => submitted(written),
        (None, false) => outln!("no change: every finding is already a candidate"),
    }
}

/// What `source add` or `source import` did: a line per chapter.
pub fn source_written(written: &book::SourceWritten) {
    for put in &written.chapters {
        let from = if put.file.is_empty() { String::new() } else { format!(" from {}", put.file) };
        let what = if put.changed { "set" } else { "unchanged" };
        outln!(
            "chapter {}{from}: {what}, {} bytes, {} characters, text {}",
            put.chapter,
            put.bytes,
            put.chars,
            put.text
        );
    }
    if let Some(written) = &written.written {
        submitted(written);
    }
}

/// The chapters with source text, one line each.
pub fn source_list(chapters: &[book::SourceChapter]) {
    if chapters.is_empty() {
        outln!("no chapter has source text");
    }
    for chapter in chapters {
        let title = chapter.title.as_deref().map(|title| format!(" {title}")).unwrap_or_default();
        outln!(
            "chapter {}{title}: {} bytes, {} characters, text {} (event {})",
            chapter.chapter,
            chapter.bytes,
            chapter.chars,
            chapter.text,
            chapter.seq
        );
    }
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_764_000_000_999), "2025-11-24T16:00:00Z");
        assert_eq!(utc(4_102_444_799_000), "2099-12-31T23:59:59Z");
    }
}
