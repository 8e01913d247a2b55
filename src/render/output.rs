//! Terminal and JSON renderings of events and results. Only the application knows
//! these forms; `docs/cli.md` documents the JSON ones, which are stable.

use std::io::Write;
use std::sync::Mutex;

use ledger::Appended;
use ledger_model::{Body, Event, Scope};
use serde_json::{json, Value};

/// The state of stdout: open, closed by the reader (a broken pipe: stop printing,
/// and the command still succeeds), or failed with another error (reported by
/// [`finish`] as an I/O failure).
enum Stdout {
    Open,
    Closed,
    Failed(std::io::Error),
}

static STDOUT: Mutex<Stdout> = Mutex::new(Stdout::Open);

/// Prints one line on stdout. Every line the application prints goes through here,
/// so a reader that stops reading (`| head -1`) never turns a committed write into a
/// failure: after a broken pipe nothing more is printed and nothing panics.
pub fn write_line(line: std::fmt::Arguments) {
    write_text(line, true);
}

/// Prints `text` on stdout as it is (a context ends with its own newline); like
/// [`write_line`], a closed stdout ends printing quietly.
pub fn write_text(text: std::fmt::Arguments, newline: bool) {
    let mut state = STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !matches!(*state, Stdout::Open) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(text).and_then(|()| if newline { stdout.write_all(b"\n") } else { Ok(()) });
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => *state = Stdout::Closed,
        Err(error) => *state = Stdout::Failed(error),
    }
}

/// Writes `bytes` on stdout as they are (an exported file); like [`write_line`], a
/// closed stdout ends printing quietly.
pub fn write_bytes(bytes: &[u8]) {
    let mut state = STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !matches!(*state, Stdout::Open) {
        return;
    }
    match std::io::stdout().lock().write_all(bytes) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => *state = Stdout::Closed,
        Err(error) => *state = Stdout::Failed(error),
    }
}

/// Whether stdout still takes lines (false once the reader has gone).
pub fn stdout_open() -> bool {
    matches!(*STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner), Stdout::Open)
}

/// Flushes stdout at the end of a command. A broken pipe is success; any other
/// write error is an I/O failure.
pub fn finish() -> Result<(), crate::failure::Failure> {
    let mut state = STDOUT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if matches!(*state, Stdout::Open) {
        if let Err(error) = std::io::stdout().flush() {
            if error.kind() != std::io::ErrorKind::BrokenPipe {
                *state = Stdout::Failed(error);
            }
        }
    }
    match &*state {
        Stdout::Failed(error) => Err(crate::failure::Failure::io(format!("cannot write to stdout: {error}"))),
        _ => Ok(()),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for unix milliseconds (proleptic Gregorian, UTC).
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (H. Hinnant), shifted so the era starts on 0000-03-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The documented JSON word of a unit enum value (`approved`, `variant`, `m`),
/// never its Rust name.
pub fn word<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(word)) => word,
        Ok(other) => other.to_string(),
        Err(error) => format!("<{error}>"),
    }
}

/// One line describing what a body does.
pub fn describe(body: &Body) -> String {
    match body {
        Body::TermPut(put) => {
            let sense = put.sense.as_deref().map(|sense| format!(" ({sense})")).unwrap_or_default();
            let mut line = format!(
                "term_put {} {}{} -> {} [{}, {}]",
                put.id,
                put.src,
                sense,
                put.dst,
                put.window,
                word(&put.status)
            );
            if let Some(old) = put.supersedes {
                line.push_str(&format!(" supersedes {old}"));
            }
            line
        }
        Body::TermRetired(retired) => format!("term_retired {}", retired.id),
        Body::AliasAdded(alias) => format!("alias_added {} {} ({})", alias.id, alias.surface, word(&alias.kind)),
        Body::AliasRemoved(alias) => format!("alias_removed {} {}", alias.id, alias.surface),
        Body::SummaryPut(put) => {
            let scope = match put.scope {
                Scope::Chapter(chapter) => format!("chapter {chapter}"),
                Scope::Arc { from, to } => format!("arc {from}-{to}"),
                Scope::Book => "book".to_owned(),
            };
            let first_line = put.text.lines().next().unwrap_or_default();
            format!("summary_put {} {scope}: {first_line}", put.id)
        }
        Body::SummaryRetired(retired) => format!("summary_retired {}", retired.id),
        Body::CandidateProposed(candidate) => {
            let mut line =
                format!("candidate_proposed {} {} ({})", candidate.id, candidate.surface, word(&candidate.origin));
            match (candidate.related, candidate.duplicate) {
                (Some(related), Some(duplicate)) => line.push_str(&format!(" {duplicate} same as {related}")),
                (Some(related), None) => line.push_str(&format!(" near {related}")),
                _ => {}
            }
            line
        }
        Body::DispositionSet(disposition) => {
            format!("disposition_set {} {} {}", disposition.target, word(&disposition.verdict), disposition.reason)
        }
        Body::ConfigSet(config) => format!("config_set profile {}", config.profile.name),
        Body::RollbackMarker(marker) => format!("rollback_marker to revision {}", marker.to),
        Body::RulePut(put) => {
            let first_line = put.text.lines().next().unwrap_or_default();
            format!("rule_put {} [{}, {}]: {first_line}", put.id, put.window, word(&put.status))
        }
        Body::RuleRetired(retired) => format!("rule_retired {}", retired.id),
        Body::GovernanceSet(governance) => format!(
            "governance_set policy {}, {} part(ies), {} default(s)",
            word(&governance.conflict_policy),
            governance.parties.len(),
            governance.defaults.len()
        ),
        Body::ConceptExpected(concept) => format!("concept_expected {}", concept.surface),
        Body::ConceptDropped(concept) => format!("concept_dropped {}", concept.surface),
        Body::EmbeddingModelSet(model) => format!("embedding_model_set {} dim {}", model.name, model.dim),
    }
}

pub fn event_line(event: &Event) -> String {
    format!(
        "#{:<5} {}  {}  [{}]  {}",
        event.seq,
        utc(event.content.recorded_at_ms),
        event.content.actor,
        event.content.source,
        describe(&event.content.body)
    )
}

pub fn appended(appended: &Appended, json: bool) {
    if json {
        outln!(
            "{}",
            json!({ "first": appended.first.0, "last": appended.last.0, "head": appended.last.0, "hash": appended.hash.to_hex() })
        );
    } else {
        let n_events = appended.last.0 - appended.first.0 + 1;
        outln!(
            "appended {n_events} event(s): {}..={}; head {} (chain {})",
            appended.first,
            appended.last,
            appended.last,
            &appended.hash.to_hex()[..16]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_764_000_000_999), "2025-11-24T16:00:00Z");
        assert_eq!(utc(4_102_444_799_000), "2099-12-31T23:59:59Z");
    }
}
