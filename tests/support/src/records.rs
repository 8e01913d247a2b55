//! Builders of events and of the records they put, as tests write them: the usual
//! start of a value (`TermPut { gender, ..put(1, "萧炎", "Сяо Янь") }`), every field a
//! builder does not name empty or default.

use ledger_model::{
    AliasAdded, AliasKind, Body, DispositionSet, NewEvent, RecordId, RecordKind, Scope, SummaryPut, TermPut, Verdict,
};

/// A record id as tests write it: its number (of the kind the builder makes: `1` is
/// `T-1` to [`put`]) or its text (`"T-1"`), or the id itself.
pub trait Id {
    /// The id, with `kind` for a bare number.
    fn id_of(self, kind: RecordKind) -> RecordId;
}

impl Id for u32 {
    fn id_of(self, kind: RecordKind) -> RecordId {
        RecordId::new(kind, self).unwrap_or_else(|| panic!("no record id {kind:?} {self}"))
    }
}

impl Id for &str {
    fn id_of(self, _: RecordKind) -> RecordId {
        id(self)
    }
}

impl Id for &String {
    fn id_of(self, _: RecordKind) -> RecordId {
        id(self)
    }
}

impl Id for RecordId {
    fn id_of(self, _: RecordKind) -> RecordId {
        self
    }
}

/// The record id written `text` (`"T-1"`, `"S-2"`, `"C-3"`).
pub fn id(text: &str) -> RecordId {
    text.parse().unwrap_or_else(|error| panic!("{text}: {error}"))
}

/// `T-number`.
pub fn term_id(number: u32) -> RecordId {
    number.id_of(RecordKind::Term)
}

/// `S-number`.
pub fn summary_id(number: u32) -> RecordId {
    number.id_of(RecordKind::Summary)
}

/// `C-number`.
pub fn candidate_id(number: u32) -> RecordId {
    number.id_of(RecordKind::Candidate)
}

/// An approved term rendering `src` as `dst` in every chapter ([`TermPut::new`]).
pub fn put(term: impl Id, src: impl Into<String>, dst: impl Into<String>) -> TermPut {
    TermPut::new(term.id_of(RecordKind::Term), src, dst)
}

/// [`put`] as a body.
pub fn term(term: impl Id, src: impl Into<String>, dst: impl Into<String>) -> Body {
    Body::TermPut(put(term, src, dst))
}

/// [`put`] of kind `character`.
pub fn character(term: impl Id, src: impl Into<String>, dst: impl Into<String>) -> TermPut {
    TermPut { kind: Some("character".into()), ..put(term, src, dst) }
}

/// `surface` as an alias of `term`, of the default kind, in every chapter.
pub fn alias(term: impl Id, surface: &str) -> AliasAdded {
    AliasAdded {
        id: term.id_of(RecordKind::Term),
        surface: surface.into(),
        kind: AliasKind::default(),
        window: None,
        release_to: None,
    }
}

/// A summary of `scope`, visible wherever its scope is, owned by nobody.
pub fn summary(summary: impl Id, scope: Scope, text: &str) -> SummaryPut {
    SummaryPut {
        id: summary.id_of(RecordKind::Summary),
        scope,
        text: text.into(),
        visible_from: None,
        owner: None,
        owner_role: None,
        release_to: None,
    }
}

/// An editorial verdict on `target`, without a note.
pub fn verdict(target: impl Id, verdict: Verdict, reason: &str) -> DispositionSet {
    DispositionSet { target: target.id_of(RecordKind::Term), verdict, reason: reason.into(), note: None }
}

/// `body` as an event of `human:test` from the source `test`, recorded at 0 ms
/// (`NewEvent { recorded_at_ms: 1, ..event(body) }` for another).
pub fn event(body: Body) -> NewEvent {
    NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "test".into(), body }
}

/// The state of `events` applied in order from seq 1, outside any ledger: no chain
/// (every hash is the genesis one), schema 1.
#[cfg(feature = "state")]
pub fn applied(events: impl IntoIterator<Item = NewEvent>) -> projections::State {
    use ledger_model::{Event, Hash32, Seq};
    let mut state = projections::State::new();
    for (idx, content) in events.into_iter().enumerate() {
        let seq = Seq(idx as u64 + 1);
        state.apply(&Event { seq, prev: Hash32::GENESIS, hash: Hash32::GENESIS, schema: 1, content });
    }
    state
}
