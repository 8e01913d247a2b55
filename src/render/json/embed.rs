//! The JSON forms of the embedding tier's answers (`embed`, `suggest`, `dedupe`),
//! which the CLI's `--json` and the server print alike.

use ledger_model::*;
use serde_json::{json, Value};
use suggest::{Deduped, ModelSet, Refreshed, Suggested, VectorStatus};

/// An `embedding_model_set` with its id.
pub fn model(set: &EmbeddingModelSet) -> Value {
    let mut value = serde_json::to_value(set).unwrap_or(Value::Null);
    value["id"] = json!(suggest::model_id(set).to_string());
    value
}

pub fn status(status: &VectorStatus) -> Value {
    json!({
        "model": status.model.as_ref().map(model),
        "n_terms": status.n_terms,
        "n_fresh": status.n_fresh,
        "n_missing": status.n_missing,
        "n_stale": status.n_stale,
        "n_entries": status.n_entries,
        "n_bytes": status.n_bytes,
    })
}

pub fn set_model(set: &ModelSet, vectors: &VectorStatus) -> Value {
    json!({
        "model": model(&set.set),
        "replaced": set.replaced.as_ref().map(model),
        "written": set.written.as_ref().map(super::submitted),
        "status": status(vectors),
    })
}

pub fn refreshed(model_id: &str, refreshed: &Refreshed) -> Value {
    json!({
        "model_id": model_id,
        "n_terms": refreshed.n_terms,
        "n_kept": refreshed.n_kept,
        "n_embedded": refreshed.n_embedded,
        "n_texts": refreshed.n_texts,
        "n_dropped": refreshed.n_dropped,
        "skipped": refreshed.skipped.iter().map(|skipped| json!({
            "id": skipped.id.to_string(),
            "role": skipped.role.as_str(),
            "reason": skipped.reason,
        })).collect::<Vec<_>>(),
    })
}

pub fn suggested(suggested: &Suggested, dry_run: bool) -> Value {
    let spans: Vec<Value> = suggested
        .spans
        .iter()
        .map(|span| {
            let sighting = &span.sighting;
            json!({
                "surface": sighting.surface,
                "bytes": [sighting.bytes.0, sighting.bytes.1],
                "chars": [sighting.chars.0, sighting.chars.1],
                "cue": format!("{:?}", sighting.cue).to_lowercase(),
                "nearest": span.nearest.as_ref().map(|(id, role, text, score)| json!({
                    "term": id.to_string(), "role": role.as_str(), "text": text, "score": score,
                })),
                "candidate": span.candidate.map(|id| id.to_string()),
            })
        })
        .collect();
    let phrases: Vec<Value> = suggested
        .phrases
        .iter()
        .map(|phrase| {
            let (id, role, text, score) = &phrase.nearest;
            json!({
                "surface": phrase.surface,
                "bytes": [phrase.bytes.0, phrase.bytes.1],
                "chars": [phrase.chars.0, phrase.chars.1],
                "nearest": { "term": id.to_string(), "role": role.as_str(), "text": text, "score": score },
                "candidate": phrase.candidate.map(|id| id.to_string()),
            })
        })
        .collect();
    json!({
        "dry_run": dry_run,
        "min_score": suggested.min_score,
        "spans": spans,
        "phrases": phrases,
        "n_phrases": suggested.n_phrases,
        "proposed": suggested.proposed.iter().map(super::candidate).collect::<Vec<_>>(),
        "written": suggested.written.as_ref().map(super::submitted),
    })
}

pub fn deduped(deduped: &Deduped, dry_run: bool) -> Value {
    let text = |(role, text): &(suggest::Role, String)| json!({ "role": role.as_str(), "text": text });
    json!({
        "dry_run": dry_run,
        "min_score": deduped.min_score,
        "n_terms": deduped.n_terms,
        "pairs": deduped.pairs.iter().map(|pair| json!({
            "first": pair.first.to_string(),
            "second": pair.second.to_string(),
            "score": pair.score,
            "first_text": text(&pair.first_text),
            "second_text": text(&pair.second_text),
            "candidate": pair.candidate.map(|id| id.to_string()),
        })).collect::<Vec<_>>(),
        "n_over_limit": deduped.n_over_limit,
        "proposed": deduped.proposed.iter().map(super::candidate).collect::<Vec<_>>(),
        "written": deduped.written.as_ref().map(super::submitted),
    })
}
