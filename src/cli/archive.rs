//! `lorebank backup`, `restore`, `export-archive` and `import-archive`: the report
//! of what was written (text for people, JSON with `--json`).

use book::Copy;
use serde_json::json;

/// One line (or one JSON object) naming the file written, its events, head,
/// snapshot ID and size.
pub fn copied(what: &str, copy: &Copy, json: bool) {
    if json {
        outln!(
            "{}",
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
        );
    } else {
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
}
