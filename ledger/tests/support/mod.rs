//! Helpers shared by the ledger's integration tests.
#![allow(dead_code)]

use ledger_model::{Body, NewEvent, RecordId, TermPut};

/// A term put whose src carries a marker, so tests can find its bytes in the file.
pub fn term(number: u32, marker: &str) -> NewEvent {
    NewEvent {
        recorded_at_ms: 1_764_000_000_000 + u64::from(number),
        actor: "human:test".into(),
        source: marker.to_owned(),
        body: Body::TermPut(TermPut {
            id: RecordId::new(ledger_model::RecordKind::Term, number).unwrap(),
            src: format!("萧炎{number}"),
            sense: None,
            dst: format!("Сяо Янь {marker}"),
            kind: None,
            gender: None,
            decl: Vec::new(),
            speech: None,
            note: None,
            window: Default::default(),
            status: Default::default(),
            priority: 0,
            constant: false,
            secondary: None,
            supersedes: None,
            owner: None,
            owner_role: None,
            release_to: None,
            note_release_to: None,
        }),
    }
}
