//! Commands about chunks: assemble, replay, audit and impact, as text for people and
//! as stable JSON.

use ledger_model::*;
use projections::SnapshotId;
use replay::assemble::Assembly;
use replay::chunks::Staleness;
use replay::reads::AuditedChunk;
use replay::Book;
use serde_json::{json, Value};

use crate::failure::Failure;
use crate::output::utc;

fn short(id: &Hash32) -> String {
    id.to_hex()[..16].to_owned()
}

fn assembly_json(assembly: &Assembly) -> Value {
    json!({
        "context": assembly.context,
        "hits": assembly.hits.iter().map(|hit| json!({
            "term": format!("T-{}", hit.term),
            "text": hit.text,
            "bytes": [hit.bytes.0, hit.bytes.1],
            "chars": [hit.chars.0, hit.chars.1],
            "disposition": hit.disposition,
            "reason": hit.reason,
        })).collect::<Vec<_>>(),
        "injected": assembly.injected.iter().map(|entry| json!({
            "term": format!("T-{}", entry.term),
            "via": entry.via,
            "unverified": entry.unverified,
            "tokens": entry.tokens,
            "line": entry.line,
        })).collect::<Vec<_>>(),
        "evicted": assembly.evicted.iter().map(|term| format!("T-{term}")).collect::<Vec<_>>(),
        "sticky_in": assembly.sticky_in.iter().map(|term| format!("T-{term}")).collect::<Vec<_>>(),
        "summaries": assembly.summaries.iter().map(|number| format!("S-{number}")).collect::<Vec<_>>(),
        "retrieval_state": assembly.retrieval,
    })
}

pub fn assemble(
    book: &mut Book,
    chapter: u32,
    chunk: &str,
    text: &str,
    prev: Option<&str>,
    record: bool,
    json: bool,
) -> Result<(), Failure> {
    let prev = prev.map(|prev| book.receipt(prev).map(|(id, _)| id)).transpose()?;
    let assembled = book.assemble_chunk(chapter, chunk, text, prev, record)?;
    if json {
        let mut value = assembly_json(&assembled.assembly);
        value["receipt"] = json!(assembled.id.to_hex());
        value["recorded"] = json!(record);
        value["snapshot"] = json!(assembled.receipt.snapshot.to_hex());
        value["revision"] = json!(assembled.receipt.revision.0);
        outln!("{value}");
    } else {
        out!("{}", assembled.assembly.context);
        let recorded = if record { "receipt" } else { "receipt (not recorded)" };
        errln!("{recorded} {}", assembled.id);
    }
    Ok(())
}

pub fn replay(book: &mut Book, receipt: &str, json: bool) -> Result<(), Failure> {
    let replayed = book.replay(receipt)?;
    let id = replayed.receipt.id();
    if json {
        outln!(
            "{}",
            json!({
                "receipt": id.to_hex(),
                "identical": replayed.identical,
                "first_difference": replayed.first_difference,
                "snapshot": replayed.receipt.snapshot.to_hex(),
                "revision": replayed.receipt.revision.0,
                "context": replayed.context,
            })
        );
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
        Err(replay::BookError::Mismatch { receipt: id, first_difference }.into())
    }
}

pub fn replay_snapshot(book: &mut Book, snapshot: &str, chapter: u32, text: &str, json: bool) -> Result<(), Failure> {
    let snapshot = Hash32::from_hex(snapshot)
        .map(SnapshotId)
        .ok_or_else(|| Failure::invalid(format!("--snapshot {snapshot:?}: expected 64 hex digits")))?;
    let assembly = book.assemble_at_snapshot(snapshot, chapter, text)?;
    if json {
        let mut value = assembly_json(&assembly);
        value["snapshot"] = json!(snapshot.to_string());
        outln!("{value}");
    } else {
        out!("{}", assembly.context);
    }
    Ok(())
}

fn provenance_json(provenance: &projections::Provenance) -> Value {
    json!({
        "seq": provenance.seq.0,
        "actor": provenance.actor,
        "source": provenance.source,
        "recorded_at_ms": provenance.recorded_at_ms,
    })
}

pub fn audit(book: &mut Book, chapter: u32, json: bool) -> Result<(), Failure> {
    let audit = book.audit(chapter)?;
    if !json {
        outln!("chapter {chapter}: {} recorded chunk(s); head revision {}", audit.chunks.len(), audit.head);
    }
    let chunks: Vec<Value> = audit.chunks.iter().map(|chunk| audit_chunk(chunk, json)).collect();
    if json {
        outln!("{}", json!({ "chapter": chapter, "head": audit.head.0, "chunks": chunks }));
    }
    Ok(())
}

fn audit_chunk(chunk: &AuditedChunk, json: bool) -> Value {
    let (id, receipt) = (chunk.id, &chunk.receipt);
    let mut injected = Vec::new();
    if !json {
        outln!(
            "\nchunk {:?}  receipt {}  revision {}  snapshot {}",
            receipt.chunk_key,
            short(&id),
            receipt.revision,
            short(&receipt.snapshot)
        );
    }
    for audited in &chunk.injected {
        let entry = &audited.entry;
        let stale_text = match audited.stale {
            Staleness::Current => "current".to_owned(),
            Staleness::Revised(seq) => format!("STALE: revised at revision {seq}"),
            Staleness::Retired => "STALE: retired".to_owned(),
        };
        if json {
            injected.push(json!({
                "term": format!("T-{}", entry.term),
                "src": audited.src,
                "dst": audited.dst,
                "via": entry.via,
                "unverified": entry.unverified,
                "version": provenance_json(&audited.put_by),
                "stale": match audited.stale { Staleness::Current => Value::Null, Staleness::Revised(seq) => json!({"revised_at": seq}), Staleness::Retired => json!("retired") },
            }));
        } else {
            let via = crate::output::word(&entry.via);
            let unverified = if entry.unverified { " [unverified]" } else { "" };
            outln!(
                "  + T-{:<4} {} -> {}{unverified}  ({via}; event {} by {} from {} at {})  {stale_text}",
                entry.term,
                audited.src,
                audited.dst,
                audited.put_by.seq,
                audited.put_by.actor,
                audited.put_by.source,
                utc(audited.put_by.recorded_at_ms)
            );
        }
    }
    let rejected = &chunk.rejected;
    if !json {
        for hit in rejected {
            // The reason code as in JSON and docs/assembly.md (`spoiler_window`).
            let reason = crate::output::word(&hit.reason);
            outln!(
                "  - T-{:<4} {:?} at chars {}..{}: rejected, {reason}",
                hit.term,
                hit.text,
                hit.chars.0,
                hit.chars.1
            );
        }
        for term in &receipt.evicted {
            outln!("  - T-{term:<4} evicted by the token budget");
        }
    }
    json!({
        "chunk": receipt.chunk_key,
        "receipt": id.to_hex(),
        "revision": receipt.revision.0,
        "snapshot": receipt.snapshot.to_hex(),
        "injected": injected,
        "rejected": rejected.iter().map(|hit| json!({
            "term": format!("T-{}", hit.term), "text": hit.text, "chars": [hit.chars.0, hit.chars.1], "reason": hit.reason,
        })).collect::<Vec<_>>(),
        "evicted": receipt.evicted.iter().map(|term| format!("T-{term}")).collect::<Vec<_>>(),
        "retrieval_state": receipt.retrieval,
    })
}

pub fn impact(book: &mut Book, since: Option<Seq>, term: Option<RecordId>, json: bool) -> Result<(), Failure> {
    let impacted = book.impact(since, term)?;
    if json {
        let chunks: Vec<Value> = impacted
            .iter()
            .map(|chunk| {
                json!({
                    "chapter": chunk.chapter,
                    "chunk": chunk.chunk_key,
                    "receipt": chunk.receipt.to_hex(),
                    "terms": chunk.terms.iter().map(|t| format!("T-{t}")).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!("{}", json!({ "n_chunks": impacted.len(), "chunks": chunks }));
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
