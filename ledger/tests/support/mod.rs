//! Helpers shared by the ledger's integration tests.
#![allow(dead_code)]

use ledger_model::NewEvent;
use test_support::records::{self, event};

/// A term put whose src carries a marker, so tests can find its bytes in the file.
pub fn term(number: u32, marker: &str) -> NewEvent {
    NewEvent {
        recorded_at_ms: 1_764_000_000_000 + u64::from(number),
        source: marker.to_owned(),
        ..event(records::term(number, format!("萧炎{number}"), format!("Сяо Янь {marker}")))
    }
}
