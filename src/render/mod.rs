//! What every adapter says: the JSON forms of the book service's answers (`json`,
//! which the CLI's `--json`, `--server` mode and the HTTP API print alike), the
//! text forms people read (`text`), the evaluation's report (`report`: Markdown, JSON,
//! SVG charts), and the one writer of standard output
//! (`output`). Renderings only lay out what the service decided: no book call, no
//! rule.

pub mod json;
pub mod output;
pub mod report;
pub mod text;

use serde_json::Value;

/// Prints an answer: its JSON form (one line) with `--json`, else its text form.
pub fn print(json: bool, as_json: impl FnOnce() -> Value, as_text: impl FnOnce()) {
    if json {
        outln!("{}", as_json());
    } else {
        as_text();
    }
}

/// Prints the outcome of a write with every warning of it.
pub fn submitted(written: &book::Written, json: bool) {
    print(json, || json::submitted(written), || text::submitted(written));
}
