//! Commands about chunks: assemble, replay, audit and impact: one book call each,
//! rendered by `crate::render`.

use book::Book;
use ledger_model::*;
use projections::{Reader, SnapshotId};
use serde_json::json;

use crate::failure::Failure;
use crate::render::{json, print, text};

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
    print(json, || json::assembled(&assembled, record), || text::assembled(&assembled, record));
    Ok(())
}

pub fn replay(book: &mut Book, reader: &Reader, receipt: &str, json: bool) -> Result<(), Failure> {
    let replayed = book.replay(reader, receipt)?;
    print(json, || json::replayed(&replayed), || text::replayed(&replayed));
    if replayed.identical {
        Ok(())
    } else {
        let first_difference = replayed.first_difference.unwrap_or(replayed.context.len());
        Err(book::BookError::Mismatch { receipt: replayed.receipt.id(), first_difference }.into())
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
    let as_json = || {
        let mut value = json::assembly(&assembly);
        value["snapshot"] = json!(snapshot.to_string());
        value
    };
    print(json, as_json, || out!("{}", assembly.context));
    Ok(())
}

pub fn audit(book: &mut Book, chapter: u32, json: bool) -> Result<(), Failure> {
    let audit = book.audit(chapter)?;
    print(json, || json::audit(&audit), || text::audit(&audit, chapter));
    Ok(())
}

pub fn impact(book: &mut Book, since: Option<Seq>, term: Option<RecordId>, json: bool) -> Result<(), Failure> {
    let impacted = book.impact(since, term)?;
    print(json, || json::impact(&impacted), || text::impact(&impacted));
    Ok(())
}
