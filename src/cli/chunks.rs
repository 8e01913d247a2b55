//! Commands about chunks: assemble, replay, audit and impact, as text for people and
//! as stable JSON.

use book::chunks::Staleness;
use book::reads::AuditedChunk;
use book::Book;
use ledger_model::*;
use projections::{Reader, SnapshotId};
use serde_json::json;

use crate::failure::Failure;
use crate::render::output::utc;

fn short(id: &Hash32) -> String {
    id.to_hex()[..16].to_owned()
}

#[allow(clippy::too_many_arguments, reason = "the arguments of the command")]
pub fn assemble(
    book: &mut Book,
    reader: &Reader,
    chapter: u32,
    chunk: &str,
    text: &str,
    prev: Option<&str>,
    record: bool,
    json: bool,
) -> Result<(), Failure> {
    let prev = prev.map(|prev| book.receipt_for(reader, prev).map(|(id, _)| id)).transpose()?;
    let assembled = book.assemble_chunk(reader, chapter, chunk, text, prev, record)?;
    if json {
        outln!("{}", crate::render::json::assembled(&assembled, record));
    } else {
        out!("{}", assembled.assembly.context);
        let recorded = if record { "receipt" } else { "receipt (not recorded)" };
        errln!("{recorded} {}", assembled.id);
    }
    Ok(())
}

pub fn replay(book: &mut Book, reader: &Reader, receipt: &str, json: bool) -> Result<(), Failure> {
    let replayed = book.replay(reader, receipt)?;
    let id = replayed.receipt.id();
    if json {
        outln!("{}", crate::render::json::replayed(&replayed));
    } else {
        out!("{}", replayed.context);
    }
    if replayed.identical {
        if !json {
            errln!("replay {}: byte-identical to the recorded output", short(&id));
        }
        Ok(())
    } else {
        let first_difference = replayed.first_difference.unwrap_or(replayed.context.len());
        Err(book::BookError::Mismatch { receipt: id, first_difference }.into())
    }
}

pub fn replay_snapshot(
    book: &mut Book,
    reader: &Reader,
    snapshot: &str,
    chapter: u32,
    text: &str,
    json: bool,
) -> Result<(), Failure> {
    let snapshot = Hash32::from_hex(snapshot)
        .map(SnapshotId)
        .ok_or_else(|| Failure::invalid(format!("--snapshot {snapshot:?}: expected 64 hex digits")))?;
    let assembly = book.assemble_at_snapshot(reader, snapshot, chapter, text)?;
    if json {
        let mut value = crate::render::json::assembly(&assembly);
        value["snapshot"] = json!(snapshot.to_string());
        outln!("{value}");
    } else {
        out!("{}", assembly.context);
    }
    Ok(())
}

pub fn audit(book: &mut Book, chapter: u32, json: bool) -> Result<(), Failure> {
    let audit = book.audit(chapter)?;
    if json {
        outln!("{}", crate::render::json::audit(&audit));
        return Ok(());
    }
    outln!("chapter {chapter}: {} recorded chunk(s); head revision {}", audit.chunks.len(), audit.head);
    for chunk in &audit.chunks {
        audit_chunk(chunk);
    }
    if audit.coverage.n_expected > 0 {
        outln!("");
        crate::cli::glossary::print_coverage(&audit.coverage);
    }
    Ok(())
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
    for audited in &chunk.injected {
        let entry = &audited.entry;
        let stale_text = match audited.stale {
            Staleness::Current => "current".to_owned(),
            Staleness::Revised(seq) => format!("STALE: revised at revision {seq}"),
            Staleness::Retired => "STALE: retired".to_owned(),
        };
        let via = crate::render::output::word(&entry.via);
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
        let decision = crate::render::output::word(&audited.rule.disposition);
        let reason =
            audited.rule.reason.map(|reason| format!(", {}", crate::render::output::word(&reason))).unwrap_or_default();
        outln!(
            "  {} R-{:<4} {}  ({decision}{reason}; event {} by {} from {})",
            if audited.rule.disposition == assembly_rejected() { "-" } else { "+" },
            audited.rule.rule,
            audited.text.split_whitespace().collect::<Vec<_>>().join(" "),
            audited.put_by.seq,
            audited.put_by.actor,
            audited.put_by.source
        );
    }
    for hit in &chunk.rejected {
        // The reason code as in JSON and docs/assembly.md (`spoiler_window`).
        let reason = crate::render::output::word(&hit.reason);
        outln!("  - T-{:<4} {:?} at chars {}..{}: rejected, {reason}", hit.term, hit.text, hit.chars.0, hit.chars.1);
    }
    for term in &receipt.evicted {
        outln!("  - T-{term:<4} evicted by the token budget");
    }
    for (id, stored) in &chunk.checks {
        let items: Vec<String> = stored
            .check
            .items
            .iter()
            .map(|item| {
                let gender = if item.agreement.is_empty() { "" } else { ", gender flag" };
                format!(
                    "T-{} {} {}/{}{gender}",
                    item.term,
                    crate::render::output::word(&item.verdict),
                    item.found_count,
                    item.source_count
                )
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

fn assembly_rejected() -> book::assemble::Disposition {
    book::assemble::Disposition::Rejected
}

pub fn impact(book: &mut Book, since: Option<Seq>, term: Option<RecordId>, json: bool) -> Result<(), Failure> {
    let impacted = book.impact(since, term)?;
    if json {
        outln!("{}", crate::render::json::impact(&impacted));
    } else {
        outln!("{} recorded chunk(s) would get a different context under the head snapshot", impacted.len());
        for chunk in &impacted {
            let terms: Vec<String> = chunk.terms.iter().map(|t| format!("T-{t}")).collect();
            outln!(
                "  chapter {} chunk {:?} (receipt {}): {}",
                chunk.chapter,
                chunk.chunk_key,
                short(&chunk.receipt),
                terms.join(", ")
            );
        }
    }
    Ok(())
}
