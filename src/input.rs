//! Parsing of event bodies as the CLI's `apply` and the HTTP API's append read them:
//! one JSON event body per line, each labelled by its line for errors.

use ledger_model::Body;
use replay::Labelled;

/// Parses JSON Lines `text` (named `name` in errors and default sources) into
/// labelled bodies. Blank lines are skipped, a leading byte order mark too. An error
/// names the line and column.
pub fn event_lines(name: &str, text: &str) -> Result<Vec<Labelled>, String> {
    // A byte order mark is never part of JSON; editors on some systems write one at
    // the start of a file, and it is skipped.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut bodies = Vec::new();
    for (line_idx, line) in text.lines().enumerate() {
        let line_no = line_idx + 1;
        if line.trim().is_empty() {
            continue;
        }
        let body: Body = serde_json::from_str(line)
            .map_err(|error| format!("{name} line {line_no}, column {}: {}", error.column(), message(&error)))?;
        bodies.push(Labelled {
            label: format!("{name} line {line_no}"),
            default_source: format!("{name}:{line_no}"),
            body,
        });
    }
    if bodies.is_empty() {
        return Err(format!("{name}: no events (expected one JSON event body per line)"));
    }
    Ok(bodies)
}

/// A serde_json error without its trailing position (the caller names it).
pub fn message(error: &serde_json::Error) -> String {
    let mut message = error.to_string();
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    message
}
