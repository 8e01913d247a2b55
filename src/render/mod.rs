//! What every adapter says: the JSON forms of the book service's answers (`json`,
//! which the CLI's `--json`, `--server` mode and the HTTP API print alike), the
//! text forms people read (`text`), and the one writer of standard output
//! (`output`). Renderings only lay out what the service decided: no book call, no
//! rule.

pub mod json;
pub mod output;
