//! The stable JSON forms of every result: what `--json` prints and what the HTTP
//! API answers, built in one place so the two never drift apart (docs/cli.md and
//! docs/http.md describe them).

pub mod assembled;
pub mod embed;

use book::assemble::Assembly;
use book::chunks::{Impacted, Replayed, Staleness};
use book::reads::{Audit, AuditedChunk, Glossary, Rebuilt, SnapshotInfo};
use book::{Assembled, Written};
use ledger_model::*;
use projections::{FieldChange, RecordDiff, State};
use serde_json::{json, Value};

/// Record numbers as ids (`T-3`, `S-1`).
fn ids(kind: &str, numbers: &[u32]) -> Vec<String> {
    numbers.iter().map(|number| format!("{kind}-{number}")).collect()
}

pub fn window(window: Option<Window>) -> Value {
    match window {
        Some(window) => json!({ "since": window.since, "until": window.until }),
        None => Value::Null,
    }
}

/// A verdict as `verdict:reason`.
pub fn verdict_text(verdict: &Option<(Verdict, String)>) -> Option<String> {
    verdict.as_ref().map(|(verdict, reason)| format!("{}:{reason}", crate::render::text::word(verdict)))
}

/// The outcome of a write, with every warning of it (the use case's, then those of
/// `decide`).
pub fn submitted(written: &Written) -> Value {
    let submitted = &written.submitted;
    let appended = submitted.appended.as_ref();
    json!({
        "first": appended.map(|a| a.first.0),
        "last": appended.map(|a| a.last.0),
        "head": submitted.revision.0,
        "hash": appended.map(|a| a.hash.to_hex()),
        "snapshot": submitted.snapshot.to_string(),
        "n_dropped": submitted.decision.dropped.len(),
        "warnings": written.all_warnings(),
    })
}

/// A book just created (`init`, `PUT /v1/books/{book}`): the write of its first
/// event, the book's name, its profile and the id of its fold table.
pub fn initialized(book: &str, initialized: &book::Initialized) -> Value {
    let mut value = submitted(&initialized.written);
    value["book"] = json!(book);
    value["profile"] = json!(initialized.profile);
    value["table"] = json!(initialized.table.to_hex());
    value["source_lang"] = json!(initialized.source_lang);
    value["target_lang"] = json!(initialized.target_lang);
    value
}

/// The active glossary at a revision and chapter.
pub fn glossary(glossary: &Glossary) -> Value {
    let (state, snapshot, chapter) = (&glossary.state, glossary.snapshot, glossary.chapter);
    let terms: Vec<Value> = state
        .active_terms(chapter)
        .iter()
        .map(|active| {
            let put = &active.term.put;
            let aliases: Vec<Value> = active
                .aliases(chapter)
                .into_iter()
                .map(|(alias, at)| json!({ "surface": alias.surface, "kind": alias.kind, "window": window(at) }))
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
                "window": window(active.window),
                "superseded_by": active.superseded_by.map(|id| id.to_string()),
                "aliases": aliases,
                "verdict": verdict_text(&active.term.verdict),
                "version_seq": active.term.put_by.seq.0,
                "owner": state.governed(active.id).owner,
                "owner_role": state.governed(active.id).owner_role,
                "release_to": state.governed(active.id).release_to,
                "note_release_to": put.note_release_to,
            })
        })
        .collect();
    let summaries: Vec<Value> = state
        .visible_summaries(chapter)
        .iter()
        .map(|summary| {
            json!({
                "id": summary.put.id.to_string(),
                "scope": summary.put.scope,
                "text": summary.put.text,
                "visible_from": projections::read::visible_from(&summary.put),
                "owner": state.governed(summary.put.id).owner,
                "release_to": state.governed(summary.put.id).release_to,
            })
        })
        .collect();
    let rules: Vec<Value> = state
        .active_rules(chapter)
        .iter()
        .map(|rule| {
            json!({
                "id": rule.put.id.to_string(),
                "text": rule.put.text,
                "applies_to": rule.put.applies_to,
                "does_not_apply_to": rule.put.does_not_apply_to,
                "window": window(Some(rule.put.window)),
                "status": rule.put.status,
                "priority": rule.put.priority,
                "verdict": verdict_text(&rule.verdict),
                "version_seq": rule.put_by.seq.0,
                "owner": state.governed(rule.put.id).owner,
                "owner_role": state.governed(rule.put.id).owner_role,
                "release_to": state.governed(rule.put.id).release_to,
            })
        })
        .collect();
    json!({
        "revision": state.revision().0,
        "chapter": chapter,
        "snapshot": snapshot.to_string(),
        "party": glossary.reader.party(),
        "conflict_policy": state.conflict_policy(),
        "source_lang": state.source_lang(),
        "target_lang": state.target_lang(),
        "terms": terms,
        "summaries": summaries,
        "rules": rules,
    })
}

pub fn snapshot(info: &SnapshotInfo) -> Value {
    json!({
        "snapshot": info.snapshot.to_string(),
        "revision": info.revision.0,
        "first_revision": info.first_revision.map(|seq| seq.0),
    })
}

fn aliases(term: &projections::state::Term) -> Value {
    term.aliases
        .values()
        .map(|alias| json!({ "surface": alias.surface, "kind": alias.kind, "window": window(alias.window) }))
        .collect()
}

/// The documented JSON form ([events.md](../docs/events.md)) of one field of record
/// `id` in `state`: the field of its `term_put` or `summary_put`, its aliases, or its
/// verdict. `null` when the record or field is absent.
pub fn field(state: &State, id: RecordId, field: &str) -> Value {
    if let Some(term) = state.terms().get(&id) {
        return match field {
            "aliases" => aliases(term),
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

/// What differs from `old` to `new`.
pub fn diff(old: &State, new: &State, records: &[RecordDiff], config: &[FieldChange]) -> Value {
    let mut added = Vec::new();
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    for record in records {
        match record {
            RecordDiff::Added(id) => added.push(id.to_string()),
            RecordDiff::Removed(id) => removed.push(id.to_string()),
            RecordDiff::Changed(id, fields) => {
                let fields: Vec<Value> = fields
                    .iter()
                    .map(|change| {
                        json!({
                            "field": change.field,
                            "old": field(old, *id, change.field),
                            "new": field(new, *id, change.field),
                        })
                    })
                    .collect();
                changed.push(json!({ "id": id.to_string(), "fields": fields }));
            }
        }
    }
    let as_json = |state: &State| serde_json::to_value(state.config()).unwrap_or(Value::Null);
    let any_of = |fields: &[&str]| config.iter().any(|change| fields.contains(&change.field));
    let mut config = Vec::new();
    if any_of(&["config", "governance"]) {
        config.push(json!({ "field": "config", "old": as_json(old), "new": as_json(new) }));
    }
    if any_of(&["languages"]) {
        config.push(json!({ "field": "languages", "old": languages(old), "new": languages(new) }));
    }
    if any_of(&["proxy_template"]) {
        let template = |state: &State| state.proxy_template().map(|(template, _)| template.to_owned());
        config.push(json!({ "field": "proxy_template", "old": template(old), "new": template(new) }));
    }
    json!({
        "from": old.revision().0,
        "to": new.revision().0,
        "added": added,
        "removed": removed,
        "changed": changed,
        "config": config,
    })
}

/// The languages in force in `state`, declared or by default: `{"source", "target"}`.
pub fn languages(state: &State) -> Value {
    json!({ "source": state.source_lang(), "target": state.target_lang() })
}

pub fn rebuilt(rebuilt: &Rebuilt) -> Value {
    json!({
        "snapshot": rebuilt.snapshot.to_string(),
        "revision": rebuilt.revision.0,
        "n_cache_entries_dropped": rebuilt.n_cache_entries_dropped,
        "n_checkpoints_dropped": rebuilt.n_checkpoints_dropped,
        "n_checkpoints": rebuilt.n_checkpoints,
        "n_terms": rebuilt.n_terms,
        "n_patterns": rebuilt.n_patterns,
        "n_derived": rebuilt.n_derived,
        "n_derived_dropped": rebuilt.n_derived_dropped,
    })
}

pub fn assembly(assembly: &Assembly) -> Value {
    value_of(&assembled::AssemblyAnswer::of(assembly, true))
}

/// An assembled chunk with its receipt.
pub fn assembled(assembled: &Assembled, recorded: bool) -> Value {
    value_of(&assembled::AssembledAnswer::of(assembled, recorded, true))
}

/// The `Value` of a typed answer (for `--json`, which prints values): these
/// serialize without fail, having no map keys but strings.
fn value_of(answer: &impl serde::Serialize) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

pub fn replayed(replayed: &Replayed) -> Value {
    json!({
        "receipt": replayed.receipt.id().to_hex(),
        "identical": replayed.identical,
        "first_difference": replayed.first_difference,
        "snapshot": replayed.receipt.snapshot.to_hex(),
        "revision": replayed.receipt.revision.0,
        "party": replayed.receipt.party,
        "context": replayed.context,
    })
}

pub fn provenance(provenance: &projections::Provenance) -> Value {
    json!({
        "seq": provenance.seq.0,
        "actor": provenance.actor,
        "source": provenance.source,
        "recorded_at_ms": provenance.recorded_at_ms,
    })
}

pub fn audit(audit: &Audit) -> Value {
    let chunks: Vec<Value> = audit.chunks.iter().map(audited_chunk).collect();
    json!({ "chapter": audit.chapter, "head": audit.head.0, "chunks": chunks, "coverage": coverage(&audit.coverage) })
}

/// The coverage report of the register of expected concepts.
pub fn coverage(coverage: &book::governance::Coverage) -> Value {
    json!({
        "revision": coverage.revision.0,
        "n_expected": coverage.n_expected,
        "n_chunks": coverage.n_chunks,
        "missing": coverage.missing.iter().map(|missing| json!({
            "surface": missing.concept.surface,
            "kind": missing.concept.kind,
            "note": missing.concept.note,
            "registered": provenance(&missing.put_by),
        })).collect::<Vec<_>>(),
        "uncovered": coverage.uncovered.iter().map(|uncovered| json!({
            "chapter": uncovered.chapter,
            "chunk": uncovered.chunk_key,
            "receipt": uncovered.receipt.to_hex(),
            "surface": uncovered.surface,
            "text": uncovered.text,
            "chars": [uncovered.chars.0, uncovered.chars.1],
            "covered_by": uncovered.covered_by.map(|id| id.to_string()),
        })).collect::<Vec<_>>(),
    })
}

/// The profile check.
pub fn profile_report(report: &book::governance::ProfileReport) -> Value {
    json!({
        "revision": report.revision.0,
        "level": report.level,
        "n_records": report.n_records,
        "requirements": report.requirements.iter().map(|requirement| json!({
            "field": requirement.field,
            "level": requirement.level,
            "need": match requirement.need {
                book::governance::Need::Must => "must",
                book::governance::Need::Should => "should",
            },
            "asks": requirement.asks,
            "holds": requirement.holds(),
            "n_checked": requirement.n_checked,
            "failing": requirement.failing.iter().map(|id| id.to_string()).collect::<Vec<_>>(),
            "failed_book": requirement.failed_book,
        })).collect::<Vec<_>>(),
    })
}

/// What an import of expected concepts did.
pub fn expect_imported(imported: &book::governance::ExpectImported, dry_run: bool) -> Value {
    let entry = |entry: &book::governance::CastEntry| json!({ "at": entry.at, "surface": entry.concept.surface, "kind": entry.concept.kind });
    json!({
        "dry_run": dry_run,
        "added": imported.added.iter().map(entry).collect::<Vec<_>>(),
        "unchanged": imported.unchanged.iter().map(entry).collect::<Vec<_>>(),
        "written": imported.written.as_ref().map(submitted),
    })
}

fn audited_chunk(chunk: &AuditedChunk) -> Value {
    let (id, receipt) = (chunk.id, &chunk.receipt);
    let injected: Vec<Value> = chunk
        .injected
        .iter()
        .map(|audited| {
            let entry = &audited.entry;
            // An entry a cascade brought says by which record, at what depth.
            let brought = receipt
                .cascade
                .iter()
                .find(|found| found.term == entry.term && entry.via == book::assemble::Via::Cascade)
                .map(|found| json!({ "by": found.by.to_string(), "depth": found.depth }));
            let mut value = json!({
                "term": format!("T-{}", entry.term),
                "src": audited.src,
                "dst": audited.dst,
                "via": entry.via,
                "unverified": entry.unverified,
                "version": provenance(&audited.put_by),
                "owner": audited.owner,
                "owner_role": audited.owner_role,
                "stale": match audited.stale {
                    Staleness::Current => Value::Null,
                    Staleness::Revised(seq) => json!({ "revised_at": seq }),
                    Staleness::Retired => json!("retired"),
                },
            });
            if let Some(brought) = brought {
                value["cascade"] = brought;
            }
            value
        })
        .collect();
    let mut value = json!({
        "chunk": receipt.chunk_key,
        "receipt": id.to_hex(),
        "text": chunk.text,
        "revision": receipt.revision.0,
        "snapshot": receipt.snapshot.to_hex(),
        "injected": injected,
        "rejected": chunk.rejected.iter().map(|hit| json!({
            "term": format!("T-{}", hit.term), "text": hit.text, "chars": [hit.chars.0, hit.chars.1], "reason": hit.reason,
        })).collect::<Vec<_>>(),
        "evicted": ids("T", &receipt.evicted),
        "party": receipt.party,
        "rules": chunk.rules.iter().map(|audited| json!({
            "rule": format!("R-{}", audited.rule.rule),
            "text": audited.text,
            "disposition": audited.rule.disposition,
            "reason": audited.rule.reason,
            "version": provenance(&audited.put_by),
            "owner": audited.owner,
        })).collect::<Vec<_>>(),
        "retrieval_state": receipt.retrieval,
        "checks": chunk.checks.iter().map(|(id, stored)| json!({
            "check": id.to_hex(),
            "translation_hash": stored.translation_hash.to_hex(),
            "rules_version": stored.check.rules_version,
            "items": stored.check.items.iter().map(|item| json!({
                "term": format!("T-{}", item.term),
                "verdict": crate::render::text::word(&item.verdict),
                "source_count": item.source_count,
                "found_count": item.found_count,
                "agreement": item.agreement.len(),
                "review": item.review,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    // Only a chunk given demonstrations has the member (a receipt of format 4).
    if !receipt.examples.is_empty() {
        value["examples"] = examples(&receipt.examples);
    }
    value
}

pub fn impact(impacted: &[Impacted]) -> Value {
    let chunks: Vec<Value> = impacted.iter().map(impacted_chunk).collect();
    json!({ "n_chunks": impacted.len(), "chunks": chunks })
}

/// A recorded chunk to translate again, as `impact` and `impact --with` list it.
fn impacted_chunk(chunk: &Impacted) -> Value {
    json!({
        "chapter": chunk.chapter,
        "chunk": chunk.chunk_key,
        "receipt": chunk.receipt.to_hex(),
        "text": chunk.text,
        "terms": ids("T", &chunk.terms),
    })
}

/// What a batch would do (`impact --with`): its dry decision, the snapshot it would
/// make beside the head's, and the chunks it would re-open with their lines.
pub fn what_if(what_if: &book::chunks::WhatIf) -> Value {
    let chunks = reopened(&what_if.chunks);
    let mut decision = submitted(&what_if.written);
    decision["n_events"] = json!(what_if.written.submitted.decision.events.len());
    json!({
        "decision": decision,
        "head_snapshot": what_if.head_snapshot.to_string(),
        "snapshot": what_if.written.submitted.snapshot.to_string(),
        "n_chunks": chunks.len(),
        "chunks": chunks,
    })
}

/// Recorded chunks a batch would re-open, as `impact --with` and an import's dry run
/// list them: each chunk with the lines it would lose and gain.
fn reopened(chunks: &[book::chunks::Reopened]) -> Vec<Value> {
    chunks
        .iter()
        .map(|reopened| {
            let mut chunk = impacted_chunk(&reopened.chunk);
            chunk["removed"] = json!(reopened.removed);
            chunk["added"] = json!(reopened.added);
            chunk
        })
        .collect()
}

/// `names lint`: the terms whose rendering differs from the standard's form.
/// A rendering that differs from the standard's form, and the first syllable it
/// writes otherwise.
fn deviation(deviation: &book::standard::Deviation) -> Value {
    json!({
        "term": deviation.id.to_string(),
        "src": deviation.src,
        "dst": deviation.dst,
        "expected": deviation.expected,
        "syllable": deviation.syllable.as_ref().map(|syllable| json!({
            "source": syllable.source,
            "reading": syllable.reading,
            "expected": syllable.russian,
        })),
    })
}

/// One term against the standard, as its page shows it: `status` `standard`,
/// `deviates` or `exception` (with the deviation) or `unchecked` (with why).
fn name_check(check: &book::standard::NameCheck) -> Value {
    use book::standard::NameCheck;
    match check {
        NameCheck::Standard => json!({ "status": "standard" }),
        NameCheck::Deviates(found) => json!({ "status": "deviates", "deviation": deviation(found) }),
        NameCheck::Exception(found) => json!({ "status": "exception", "deviation": deviation(found) }),
        NameCheck::Unchecked(why) => json!({ "status": "unchecked", "why": why }),
    }
}

pub fn name_lint(lint: &book::standard::NameLint) -> Value {
    json!({
        "revision": lint.revision.0,
        "language": lint.language,
        "n_checked": lint.n_checked,
        "deviations": lint.deviations.iter().map(deviation).collect::<Vec<_>>(),
        "exceptions": lint.exceptions.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "unchecked": lint.unchecked.iter().map(|(id, why)| json!({ "term": id.to_string(), "why": why })).collect::<Vec<_>>(),
    })
}

pub fn event(event: &Event) -> Value {
    json!({
        "seq": event.seq.0,
        "hash": event.hash.to_hex(),
        "prev": event.prev.to_hex(),
        "schema": event.schema,
        "recorded_at_ms": event.content.recorded_at_ms,
        "actor": event.content.actor,
        "source": event.content.source,
        "body": event.content.body,
    })
}

/// A term's history: every event about it.
pub fn term_history(id: RecordId, events: &[Event]) -> Value {
    let versions: Vec<Value> = events.iter().map(event).collect();
    json!({ "id": id.to_string(), "versions": versions })
}

pub fn verified(report: &ledger::VerifyReport) -> Value {
    json!({
        "ok": true,
        "n_events": report.n_events,
        "head": report.head.seq.0,
        "hash": report.head.hash.to_hex(),
        "n_checkpoints": report.n_checkpoints,
        "n_checkpoints_ignored": report.n_checkpoints_dropped,
        "n_derived": report.n_derived,
        "n_derived_ignored": report.n_derived_dropped,
    })
}

/// The answer of a verify that found the book damaged: `ok: false`, the first bad
/// event's seq or the damaged object, and the book's message; `None` when the
/// failure is no damage (the storage failed), which is an error instead.
pub fn verify_failed(error: &book::BookError) -> Option<Value> {
    let (seq, object) = match error {
        book::BookError::Verify(ledger::VerifyError::Corrupted { seq, .. }) => (Some(seq.0), None),
        book::BookError::Verify(ledger::VerifyError::Damaged { object, .. }) => (None, Some(object.clone())),
        _ => (None, None),
    };
    (error.class() == book::ErrorClass::Corrupt)
        .then(|| json!({ "ok": false, "seq": seq, "object": object, "message": error.to_string() }))
}

/// A stored receipt with the texts it names.
pub fn receipt(id: Hash32, receipt: &book::receipt::Receipt, input: &str, output: &str) -> Value {
    let mut value = json!({
        "receipt": id.to_hex(),
        "format": receipt.format,
        "snapshot": receipt.snapshot.to_hex(),
        "revision": receipt.revision.0,
        "chapter": receipt.chapter,
        "chunk": receipt.chunk_key,
        "prev": receipt.prev.map(|prev| prev.to_hex()),
        "sticky_in": ids("T", &receipt.sticky_in),
        "hits": receipt.hits.iter().map(|hit| {
            // A hit as an assembly shows it, and its version.
            let mut value = value_of(&assembled::Hit::new(hit.term, &hit.text, hit.bytes, hit.chars, hit.disposition, hit.reason));
            value["version"] = json!(hit.version);
            value
        }).collect::<Vec<_>>(),
        "injected": receipt.injected.iter().map(|entry| json!({
            "term": format!("T-{}", entry.term),
            "version": entry.version,
            "via": entry.via,
            "unverified": entry.unverified,
        })).collect::<Vec<_>>(),
        "evicted": ids("T", &receipt.evicted),
        "summaries": ids("S", &receipt.summaries),
        "retrieval_state": receipt.retrieval,
        "render_format": receipt.render_format,
        "party": receipt.party,
        "rules": receipt.rules.iter().map(|rule| json!({
            "rule": format!("R-{}", rule.rule),
            "version": rule.version,
            "disposition": rule.disposition,
            "reason": rule.reason,
        })).collect::<Vec<_>>(),
        "input_id": receipt.input.to_hex(),
        "output_id": receipt.output.to_hex(),
        "input": input,
        "output": output,
    });
    // Only a receipt whose cascade found something has the member (format 3).
    if !receipt.cascade.is_empty() {
        value["cascade"] = json!(receipt
            .cascade
            .iter()
            .map(|found| {
                let mut value = value_of(&assembled::Cascaded::new(
                    found.term,
                    found.by,
                    found.depth,
                    found.disposition,
                    found.reason,
                ));
                value["version"] = json!(found.version);
                value
            })
            .collect::<Vec<_>>());
    }
    // Only a receipt that showed a demonstration has the member (format 4).
    if !receipt.examples.is_empty() {
        value["examples"] = examples(&receipt.examples);
    }
    value
}

/// The demonstrations a receipt records, with where each comes from.
fn examples(examples: &[book::assemble::Example]) -> Value {
    json!(examples
        .iter()
        .map(|example| json!({
            "term": format!("T-{}", example.term),
            "source": example.source,
            "target": example.target,
            "chapter": example.chapter,
            "receipt": example.receipt.to_hex(),
            "check": example.check.to_hex(),
        }))
        .collect::<Vec<_>>())
}

/// Places in an imported file, as words (`line 3`, `uid 7`).
fn places(at: &[formats::At]) -> Vec<String> {
    at.iter().map(ToString::to_string).collect()
}

fn grouped_lost(groups: &[book::interchange::Grouped]) -> Vec<Value> {
    groups
        .iter()
        .map(|group| json!({ "field": group.what, "count": group.at.len(), "at": places(&group.at), "values": group.values }))
        .collect()
}

/// What an import did (or, with `written` false, would do).
pub fn import_report(report: &book::ImportReport, dry_run: bool) -> Value {
    let placed = |list: &[book::interchange::Placed]| -> Vec<Value> {
        list.iter()
            .map(|placed| {
                let mut value = json!({ "at": placed.at.to_string(), "id": placed.id.to_string(), "src": placed.src });
                if !placed.fields.is_empty() {
                    value["fields"] = json!(placed.fields);
                }
                value
            })
            .collect()
    };
    let skipped: Vec<Value> =
        report.skipped.iter().map(|skip| json!({ "at": skip.at.to_string(), "reason": skip.reason })).collect();
    let notices: Vec<Value> =
        report.notices.iter().map(|notice| json!({ "message": notice.what, "at": places(&notice.at) })).collect();
    let collisions: Vec<Value> = report.collisions.iter().map(collision).collect();
    let mut value = json!({
        "file": report.file,
        "format": report.format.name(),
        "detected": report.detected,
        "actor": report.actor,
        "dry_run": dry_run,
        "written": report.written,
        "n_events": report.n_events,
        "head": report.revision.0,
        "snapshot": report.snapshot.to_string(),
        "counts": {
            "imported": report.imported.len(),
            "updated": report.updated.len(),
            "unchanged": report.unchanged.len(),
            "skipped": report.skipped.len(),
            "collisions": report.collisions.len(),
            "lost": report.n_lost(),
        },
        "imported": placed(&report.imported),
        "updated": placed(&report.updated),
        "unchanged": placed(&report.unchanged),
        "skipped": skipped,
        "collisions": collisions,
        "lost": grouped_lost(&report.lost),
        "notices": notices,
    });
    // A dry run also says which recorded chunks the import would re-open.
    if dry_run {
        value["reopened"] = json!(reopened(&report.reopened));
    }
    value
}

/// A key two entries of an imported file share, and what was done: `sense` names the
/// later entry's sense, `window` the chapters it keeps the key in.
fn collision(collision: &book::interchange::Collision) -> Value {
    let mut value = json!({
        "key": collision.key,
        "at": collision.at.to_string(),
        "as": collision.role.name(),
        "with": collision.first.to_string(),
        "with_as": collision.first_role.name(),
        "outcome": collision.outcome.name(),
    });
    match &collision.outcome {
        book::interchange::Outcome::Sense(sense) => value["sense"] = json!(sense),
        book::interchange::Outcome::Window(at) => value["window"] = window(Some(*at)),
        book::interchange::Outcome::Dropped => {}
    }
    value
}

/// What an export wrote (without its bytes).
pub fn export(export: &book::Export, output: Option<&str>) -> Value {
    json!({
        "format": export.format.name(),
        "output": output,
        "bytes": export.bytes.len(),
        "revision": export.revision.0,
        "snapshot": export.snapshot.to_string(),
        "chapter": export.chapter,
        "n_terms": export.n_terms,
        "n_summaries": export.n_summaries,
        "rejected": export.rejected.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "lost": grouped_lost(&export.lost),
    })
}

/// The report of a translation-memory export (`export --format tmx --json`).
pub fn exported_tmx(export: &book::TmxExport, output: Option<&str>) -> Value {
    let chunk = |chunk: &book::tmx::ChunkRef| json!({ "chapter": chunk.chapter, "chunk": chunk.chunk_key, "receipt": chunk.receipt.to_hex() });
    let listed = |listed: &book::tmx::Listed<book::tmx::ChunkRef>| json!({ "count": listed.count, "chunks": listed.first.iter().map(chunk).collect::<Vec<_>>() });
    let refused: Vec<Value> = export
        .refused
        .first
        .iter()
        .map(|item| {
            let mut value = chunk(&item.chunk);
            value["side"] = json!(item.side.name());
            value["character"] = json!(format!("U+{:04X}", item.character as u32));
            value
        })
        .collect();
    json!({
        "format": "tmx",
        "output": output,
        "bytes": export.bytes.len(),
        "revision": export.revision.0,
        "snapshot": export.snapshot.to_string(),
        "chapter": export.chapter,
        "source_lang": export.source_lang,
        "target_lang": export.target_lang,
        "n_chunks": export.n_chunks,
        "n_sentence_chunks": export.n_sentence_chunks,
        "n_units": export.n_units,
        "unchecked": listed(&export.unchecked),
        "withheld": listed(&export.withheld),
        "refused": { "count": export.refused.count, "chunks": refused },
    })
}

fn span(bytes: (u32, u32)) -> Value {
    json!([bytes.0, bytes.1])
}

/// A post-check of a translation.
pub fn checked(checked: &book::check::Checked, stored: bool) -> Value {
    let check = &checked.stored.check;
    let items: Vec<Value> = check
        .items
        .iter()
        .map(|item| {
            let (src, dst) = checked
                .surfaces
                .iter()
                .find(|(term, ..)| *term == item.term)
                .map(|(_, src, dst)| (src.clone(), dst.clone()))
                .unwrap_or_default();
            json!({
                "term": format!("T-{}", item.term),
                "src": src,
                "dst": dst,
                "verdict": crate::render::text::word(&item.verdict),
                "source_count": item.source_count,
                "found_count": item.found_count,
                "review": item.review,
                "found": item.found.iter().map(|found| json!({ "form": found.form, "bytes": span(found.bytes), "declared": found.declared })).collect::<Vec<_>>(),
                "wrong": item.wrong.iter().map(|wrong| json!({ "term": format!("T-{}", wrong.term), "bytes": span(wrong.bytes) })).collect::<Vec<_>>(),
                "agreement": item.agreement.iter().map(|flag| json!({
                    "word": flag.word,
                    "bytes": span(flag.bytes),
                    "expected": crate::render::text::word(&flag.expected),
                    "found": crate::render::text::word(&flag.found),
                })).collect::<Vec<_>>(),
                "generated": { "rule": item.generated.rule, "forms": item.generated.forms },
            })
        })
        .collect();
    json!({
        "check": checked.id.to_hex(),
        "receipt": checked.stored.receipt.to_hex(),
        "translation_hash": checked.stored.translation_hash.to_hex(),
        "rules_version": check.rules_version,
        "stored": stored,
        "failed": checked.failed(),
        "items": items,
        "proposed": checked.proposed.as_ref().map(submitted),
    })
}

/// One item of the review queue.
/// A proposed candidate: what the embedding tier answers of each, and the first
/// members of a candidate in the review queue.
pub fn candidate(candidate: &CandidateProposed) -> Value {
    json!({
        "id": candidate.id.to_string(),
        "surface": candidate.surface,
        "origin": candidate.origin,
        "trust": candidate.trust,
        "score": candidate.score,
        "related": candidate.related.map(|id| id.to_string()),
        "duplicate": candidate.duplicate.map(|id| id.to_string()),
        "evidence": candidate.evidence,
    })
}

pub fn review_item(item: &book::review::ReviewItem) -> Value {
    match item {
        book::review::ReviewItem::Candidate { proposed, sightings } => {
            let mut value = candidate(proposed);
            value["type"] = json!("candidate");
            value["suggested_dst"] = json!(proposed.suggested_dst);
            value["sightings"] = json!(sightings);
            value
        }
        book::review::ReviewItem::Flagged { put, why, owner, owner_role } => json!({
            "id": put.id.to_string(),
            "type": "record",
            "surface": put.src,
            "dst": put.dst,
            "status": put.status,
            "why": why,
            "owner": owner,
            "owner_role": owner_role,
        }),
        book::review::ReviewItem::FlaggedRule { put, why, owner, owner_role } => json!({
            "id": put.id.to_string(),
            "type": "rule",
            "text": put.text,
            "status": put.status,
            "why": why,
            "owner": owner,
            "owner_role": owner_role,
        }),
    }
}

/// The review queue.
pub fn review_list(items: &[book::review::ReviewItem]) -> Value {
    json!({ "items": items.iter().map(review_item).collect::<Vec<_>>() })
}

/// What a scan for unknown names found and proposed.
pub fn scanned(scanned: &book::review::Scanned, dry_run: bool) -> Value {
    let sightings: Vec<Value> = scanned
        .sightings
        .iter()
        .map(|(sighting, candidate)| {
            json!({
                "surface": sighting.surface,
                "bytes": span(sighting.bytes),
                "chars": span(sighting.chars),
                "cue": format!("{:?}", sighting.cue).to_lowercase(),
                "reading": sighting.reading,
                "candidate": candidate.to_string(),
            })
        })
        .collect();
    json!({
        "dry_run": dry_run,
        "sightings": sightings,
        "proposed": scanned.proposed.iter().map(|proposed| proposed.id.to_string()).collect::<Vec<_>>(),
        "written": scanned.written.as_ref().map(submitted),
    })
}

/// `lorebank scan --chapters`: each ranked surface with its score, counts, cues and
/// candidate, best first; how many were under the minimum; the write.
pub fn scanned_ranked(scanned: &book::alarm::RankedScan, dry_run: bool) -> Value {
    let ranked: Vec<Value> = scanned
        .ranked
        .iter()
        .map(|(ranked, candidate)| {
            let cues: serde_json::Map<String, Value> =
                ranked.cues.iter().map(|(cue, n)| (format!("{cue:?}").to_lowercase(), json!(n))).collect();
            json!({
                "surface": ranked.surface,
                "score": ranked.score,
                "count": ranked.count,
                "chunks": ranked.chunks,
                "chapters": ranked.chapters,
                "cues": cues,
                "candidate": candidate.to_string(),
            })
        })
        .collect();
    json!({
        "dry_run": dry_run,
        "chunks": scanned.chunks,
        "ranked": ranked,
        "below": scanned.below,
        "proposed": scanned.proposed.iter().map(|proposed| proposed.id.to_string()).collect::<Vec<_>>(),
        "written": scanned.written.as_ref().map(submitted),
    })
}

/// `lorebank extract`: each request (stored or asked), each name and its fate, the
/// candidates proposed or given evidence, the write.
pub fn extracted(extracted: &book::extract::Extracted, dry_run: bool) -> Value {
    let parts: Vec<Value> = extracted
        .parts
        .iter()
        .map(|part| {
            json!({
                "chapter": part.chapter,
                "part": part.part,
                "request": part.request.to_hex(),
                "exchange": part.exchange.to_hex(),
                "stored": part.stored,
                "names": part.names,
            })
        })
        .collect();
    let names: Vec<Value> = extracted
        .names
        .iter()
        .map(|name| {
            json!({
                "chapter": name.chapter,
                "surface": name.name.surface,
                "kind": name.name.kind,
                "gender": name.name.gender,
                "reading": name.name.reading,
                "evidence": name.name.evidence,
                "outcome": name.outcome,
                "candidate": name.candidate.map(|id| id.to_string()),
            })
        })
        .collect();
    json!({
        "dry_run": dry_run,
        "model": extracted.model,
        "prompt": extracted.prompt,
        "parts": parts,
        "names": names,
        "proposed": extracted.proposed.iter().map(|proposed| proposed.id.to_string()).collect::<Vec<_>>(),
        "written": extracted.written.as_ref().map(submitted),
    })
}

/// `lorebank exchange`: a stored exchange, its request and answer as JSON when they
/// parse as JSON (as text otherwise).
pub fn exchange(id: ledger_model::Hash32, exchange: &book::exchange::StoredExchange) -> Value {
    let parsed = |text: &str| serde_json::from_str::<Value>(text).unwrap_or_else(|_| json!(text));
    json!({
        "exchange": id.to_hex(),
        "job": exchange.job,
        "prompt": exchange.prompt,
        "recorded_at_ms": exchange.recorded_at_ms,
        "actor": exchange.actor,
        "request": parsed(&exchange.request),
        "answer": parsed(&exchange.answer),
    })
}

/// `lorebank adjudicate`: each chapter's conflicts, request and verdicts, the
/// dispositions proposed, the terms already flagged, the write.
pub fn adjudicated(adjudicated: &book::adjudicate::Adjudicated, dry_run: bool) -> Value {
    let chapters: Vec<Value> = adjudicated
        .chapters
        .iter()
        .map(|chapter| {
            let asked = chapter.asked.map(|(request, exchange, stored)| {
                json!({ "request": request.to_hex(), "exchange": exchange.to_hex(), "stored": stored })
            });
            json!({
                "chapter": chapter.chapter,
                "conflicts": chapter.conflicts,
                "left": chapter.left,
                "asked": asked,
                "verdicts": chapter.verdicts,
            })
        })
        .collect();
    json!({
        "dry_run": dry_run,
        "model": adjudicated.model,
        "prompt": adjudicated.prompt,
        "chapters": chapters,
        "proposed": adjudicated.proposed,
        "already": adjudicated.already.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "decided": adjudicated
            .decided
            .iter()
            .map(|(term, field, from, to)| json!({ "term": term.to_string(), "field": field, "from": from, "to": to }))
            .collect::<Vec<_>>(),
        "written": adjudicated.written.as_ref().map(submitted),
    })
}

// ----- the audit page's reads (the JSON twins of its pages, docs/ui.md) -----

fn staleness(stale: &Staleness) -> Value {
    match stale {
        Staleness::Current => Value::Null,
        Staleness::Revised(seq) => json!({ "revised_at": seq }),
        Staleness::Retired => json!("retired"),
    }
}

fn verify_outcome(verify: &Result<ledger::VerifyReport, ledger::VerifyError>) -> Value {
    match verify {
        Ok(report) => verified(report),
        Err(error) => {
            let (seq, object) = match error {
                ledger::VerifyError::Corrupted { seq, .. } => (Some(seq.0), None),
                ledger::VerifyError::Damaged { object, .. } => (None, Some(object.clone())),
                _ => (None, None),
            };
            json!({ "ok": false, "seq": seq, "object": object, "message": error.to_string() })
        }
    }
}

/// A book at a glance: head, snapshot, counts, chapters, recent events, verify.
pub fn overview(book: &str, overview: &book::overview::Overview) -> Value {
    let state = &overview.state;
    let counts = &overview.counts;
    let terms: Vec<Value> = state
        .terms()
        .values()
        .map(|term| {
            json!({
                "id": term.put.id.to_string(),
                "src": term.put.src,
                "dst": term.put.dst,
                "status": term.put.status,
                "window": window(Some(term.put.window)),
                "retired": term.retired,
                "verdict": verdict_text(&term.verdict),
                "version_seq": term.put_by.seq.0,
            })
        })
        .collect();
    json!({
        "book": book,
        "head": overview.head.seq.0,
        "hash": overview.head.hash.to_hex(),
        "snapshot": overview.snapshot.to_string(),
        "counts": {
            "terms": counts.terms,
            "terms_retired": counts.terms_retired,
            "aliases": counts.aliases,
            "summaries": counts.summaries,
            "candidates_open": counts.candidates_open,
            "chapters": counts.chapters,
            "chunks": counts.chunks,
            "receipts": counts.receipts,
        },
        "chapters": overview.chapters.iter().map(|(chapter, chunks, receipts)| json!({
            "chapter": chapter, "chunks": chunks, "receipts": receipts,
        })).collect::<Vec<_>>(),
        "terms": terms,
        "recent": overview.recent.iter().map(event).collect::<Vec<_>>(),
        "verify": verify_outcome(&overview.verify),
    })
}

/// A chapter explained: every recorded chunk with its texts, hits, versions,
/// staleness, replay status and post-checks.
pub fn chapter_audit(audit: &book::explain::ChapterAudit) -> Value {
    let chunks: Vec<Value> = audit
        .chunks
        .iter()
        .map(|chunk| {
            let mut value = audited_chunk(&chunk.audited);
            value["input"] = json!(chunk.input);
            value["output"] = json!(chunk.output);
            value["replay"] = json!({
                "identical": chunk.replay.identical,
                "first_difference": chunk.replay.first_difference,
            });
            value["hits"] = chunk
                .hits
                .iter()
                .map(|hit| {
                    json!({
                        "term": format!("T-{}", hit.hit.term),
                        "text": hit.hit.text,
                        "bytes": span(hit.hit.bytes),
                        "chars": span(hit.hit.chars),
                        "disposition": hit.hit.disposition,
                        "reason": hit.hit.reason,
                        "injected": hit.injected,
                        "evicted": hit.evicted,
                        "version": hit.version.as_ref().map(|version| json!({
                            "src": version.put.src,
                            "dst": version.put.dst,
                            "event": provenance(&version.by),
                        })),
                        "stale": staleness(&hit.stale),
                    })
                })
                .collect();
            value
        })
        .collect();
    json!({
        "chapter": audit.chapter,
        "head": audit.head.0,
        "snapshot": audit.snapshot.to_string(),
        "chapters": audit.chapters,
        "chunks": chunks,
    })
}

/// A term's bi-temporal history.
pub fn timeline(timeline: &book::timeline::Timeline) -> Value {
    let versions: Vec<Value> = timeline
        .versions
        .iter()
        .map(|version| {
            json!({
                "seq": version.by.seq.0,
                "put": version.put,
                "event": provenance(&version.by),
                "changed": version.changed,
                "until": version.until.map(|seq| seq.0),
            })
        })
        .collect();
    let stretches: Vec<Value> = timeline
        .stretches
        .iter()
        .map(|stretch| {
            json!({
                "from": stretch.from.0,
                "until": stretch.until.map(|seq| seq.0),
                "version": stretch.version.0,
                "declared": window(Some(stretch.declared)),
                "effective": window(stretch.effective),
                "superseded_by": stretch.superseded_by.map(|id| id.to_string()),
                "retired": stretch.retired,
                "verdict": verdict_text(&stretch.verdict),
            })
        })
        .collect();
    let aliases: Vec<Value> = timeline
        .aliases
        .iter()
        .map(|alias| {
            json!({
                "surface": alias.alias.surface,
                "kind": alias.alias.kind,
                "window": window(alias.alias.window),
                "added": provenance(&alias.added),
                "removed": alias.removed.as_ref().map(provenance),
            })
        })
        .collect();
    let verdicts: Vec<Value> = timeline
        .verdicts
        .iter()
        .map(|(verdict, by)| {
            json!({ "verdict": verdict.verdict, "reason": verdict.reason, "note": verdict.note, "event": provenance(by) })
        })
        .collect();
    let marks: Vec<Value> = timeline
        .marks
        .iter()
        .map(|mark| {
            json!({
                "receipt": mark.receipt.to_hex(),
                "chapter": mark.chapter,
                "chunk": mark.chunk_key,
                "revision": mark.revision.0,
                "version": mark.version,
                "disposition": mark.hit.map(|(disposition, _)| disposition),
                "reason": mark.hit.and_then(|(_, reason)| reason),
                "injected": mark.injected,
                "latest": mark.latest,
            })
        })
        .collect();
    json!({
        "id": timeline.id.to_string(),
        "head": timeline.head.0,
        "versions": versions,
        "stretches": stretches,
        "aliases": aliases,
        "verdicts": verdicts,
        "marks": marks,
        "events": timeline.events.iter().map(event).collect::<Vec<_>>(),
        "standard": timeline.standard.as_ref().map(name_check),
    })
}

/// A rollback previewed: the events it would append and what they change.
pub fn rollback_preview(preview: &book::preview::RollbackPreview) -> Value {
    let diff = &preview.diff;
    json!({
        "to": preview.plan.to.0,
        "head": preview.plan.head.0,
        "snapshot_head": preview.snapshot_head.to_string(),
        "snapshot_target": preview.snapshot_target.to_string(),
        "snapshot_after": preview.snapshot_after.to_string(),
        "events": preview.plan.bodies,
        "diff": self::diff(&diff.old, &diff.new, &diff.records, &diff.config),
        "reopened": reopened(&preview.reopened),
    })
}

/// One page of the editor's glossary listing.
pub fn records(page: &book::records::RecordsPage) -> Value {
    let query = &page.query;
    json!({
        "revision": page.revision.0,
        "n_terms": page.n_terms,
        "n_matching": page.n_matching,
        "page": query.page,
        "per_page": query.per_page,
        "n_pages": page.n_pages(),
        "sort": query.sort.name(),
        "order": if query.descending { "desc" } else { "asc" },
        "records": page.rows.iter().map(|row| json!({
            "id": row.id.to_string(),
            "src": row.src,
            "sense": row.sense,
            "dst": row.dst,
            "kind": row.kind,
            "aliases": row.aliases,
            "window": window(row.window),
            "status": row.status,
            "verdict": row.verdict,
            "owner": row.owner,
            "n_injected": row.n_injected,
            "flagged": row.flagged,
        })).collect::<Vec<_>>(),
    })
}

/// The review queue with every item's evidence in context.
pub fn review_queue(queue: &book::queue::ReviewQueue) -> Value {
    let items: Vec<Value> = queue
        .entries
        .iter()
        .map(|entry| {
            let mut value = review_item(&entry.item);
            value["evidence"] = entry
                .evidence
                .iter()
                .map(|evidence| {
                    json!({
                        "line": evidence.line,
                        "chapter": evidence.chapter,
                        "chunk": evidence.chunk_key,
                        "chars": span(evidence.chars),
                        "cue": evidence.cue,
                        "context": evidence.context.as_ref().map(|context| json!({
                            "receipt": context.receipt.to_hex(),
                            "before": context.before,
                            "span": context.span,
                            "after": context.after,
                        })),
                    })
                })
                .collect();
            value
        })
        .collect();
    json!({ "head": queue.head.0, "items": items })
}

/// A copy of a book written (backup, restore, archive export or import).
pub fn copied(copy: &book::Copy) -> Value {
    json!({
        "ok": true,
        "path": copy.path.display().to_string(),
        "n_events": copy.n_events,
        "head": copy.head.seq.0,
        "hash": copy.head.hash.to_hex(),
        "snapshot": copy.snapshot.to_string(),
        "n_blobs": copy.n_blobs,
        "n_documents": copy.n_documents,
        "n_bytes": copy.n_bytes,
    })
}

/// The report of an export in the profile form (`output`: the file it went to).
pub fn exported_profile(export: &book::governance::ProfileExport, output: Option<&str>) -> Value {
    json!({
        "format": "profile",
        "output": output,
        "revision": export.revision.0,
        "snapshot": export.snapshot.to_string(),
        "n_records": export.n_records,
    })
}

/// A chapter's source text as the book holds it (`source list`, `source show`).
pub fn source_chapter(chapter: &book::SourceChapter) -> Value {
    json!({
        "chapter": chapter.chapter,
        "title": chapter.title,
        "text": chapter.text.to_hex(),
        "bytes": chapter.bytes,
        "chars": chapter.chars,
        "seq": chapter.seq.0,
    })
}

/// What `source add` or `source import` did.
pub fn source_written(written: &book::SourceWritten) -> Value {
    let chapters: Vec<Value> = written
        .chapters
        .iter()
        .map(|put| {
            json!({
                "file": if put.file.is_empty() { None } else { Some(&put.file) },
                "chapter": put.chapter,
                "title": put.title,
                "text": put.text.to_hex(),
                "bytes": put.bytes,
                "chars": put.chars,
                "changed": put.changed,
            })
        })
        .collect();
    json!({ "chapters": chapters, "written": written.written.as_ref().map(submitted) })
}

/// The chapters with source text (`source list`).
pub fn source_list(chapters: &[book::SourceChapter]) -> Value {
    json!({ "chapters": chapters.iter().map(source_chapter).collect::<Vec<_>>() })
}

/// One chapter's text with what the list says of it (`source show --json`).
pub fn source_shown(chapter: &book::SourceChapter, text: &str) -> Value {
    let mut value = source_chapter(chapter);
    value["content"] = json!(text);
    value
}
