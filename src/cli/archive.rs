//! `lorebank backup`, `restore`, `export-archive` and `import-archive`: the report
//! of what was written (text for people, JSON with `--json`).

use book::Copy;

use crate::render::{json, print, text};

/// One line (or one JSON object) naming the file written, its events, head,
/// snapshot ID and size.
pub fn copied(what: &str, copy: &Copy, json: bool) {
    print(json, || json::copied(copy), || text::copied(what, copy));
}
