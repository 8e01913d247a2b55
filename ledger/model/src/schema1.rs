//! The bodies of schema 1, frozen: read forever, never written.
//!
//! Schema 2 added fields to four kinds (owners and `release_to` on terms, aliases
//! and summaries, a score on candidates) and five kinds at the end. A payload stored
//! under schema 1 is decoded strictly with the types below, whose field order is the
//! schema-1 wire format, and upcast to the current [`crate::body`] types: every
//! field schema 2 added is absent (`None`). Nothing here may change: the golden
//! fixtures in `tests/golden/schema-1/` pin these bytes.
//!
//! Kinds that schema 2 did not change are the current types themselves
//! ([`TermRetired`], [`AliasRemoved`], …), so they are not repeated here.

use serde::{Deserialize, Serialize};

use crate::body::{
    self, AliasKind, AliasRemoved, CandidateProposed as CandidateProposed2, ConfigSet, DispositionSet, Gender, Origin,
    RollbackMarker, Scope, SecondaryKeys, Status, SummaryRetired, TermRetired, Trust,
};
use crate::ids::{RecordId, Window};

/// The schema-1 event payload: the envelope and a schema-1 body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewEvent {
    /// Wall-clock time of recording, unix milliseconds.
    pub recorded_at_ms: u64,
    /// Who made the change.
    pub actor: String,
    /// Provenance.
    pub source: String,
    /// The change.
    pub body: Body,
}

/// A schema-1 body: the ten kinds of the first release, in their wire order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs, reason = "the variants are the current kinds of the same names")]
pub enum Body {
    TermPut(TermPut),
    TermRetired(TermRetired),
    AliasAdded(AliasAdded),
    AliasRemoved(AliasRemoved),
    SummaryPut(SummaryPut),
    SummaryRetired(SummaryRetired),
    CandidateProposed(CandidateProposed),
    DispositionSet(DispositionSet),
    ConfigSet(ConfigSet),
    RollbackMarker(RollbackMarker),
}

/// A schema-1 term: the current [`body::TermPut`] without owners and releases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs, reason = "the fields are those of the current type")]
pub struct TermPut {
    pub id: RecordId,
    pub src: String,
    pub sense: Option<String>,
    pub dst: String,
    pub kind: Option<String>,
    pub gender: Option<Gender>,
    pub decl: Vec<String>,
    pub speech: Option<String>,
    pub note: Option<String>,
    pub window: Window,
    pub status: Status,
    pub priority: i32,
    pub constant: bool,
    pub secondary: Option<SecondaryKeys>,
    pub supersedes: Option<RecordId>,
}

/// A schema-1 alias: without `release_to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs, reason = "the fields are those of the current type")]
pub struct AliasAdded {
    pub id: RecordId,
    pub surface: String,
    pub kind: AliasKind,
    pub window: Option<Window>,
}

/// A schema-1 summary: without owners and releases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs, reason = "the fields are those of the current type")]
pub struct SummaryPut {
    pub id: RecordId,
    pub scope: Scope,
    pub text: String,
    pub visible_from: Option<u32>,
}

/// A schema-1 candidate: without a score.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs, reason = "the fields are those of the current type")]
pub struct CandidateProposed {
    pub id: RecordId,
    pub surface: String,
    pub suggested_dst: Option<String>,
    pub evidence: Option<String>,
    pub origin: Origin,
    pub trust: Trust,
}

impl From<NewEvent> for crate::record::NewEvent {
    fn from(event: NewEvent) -> crate::record::NewEvent {
        crate::record::NewEvent {
            recorded_at_ms: event.recorded_at_ms,
            actor: event.actor,
            source: event.source,
            body: event.body.into(),
        }
    }
}

impl From<Body> for body::Body {
    fn from(body: Body) -> body::Body {
        match body {
            Body::TermPut(put) => body::Body::TermPut(put.into()),
            Body::TermRetired(retired) => body::Body::TermRetired(retired),
            Body::AliasAdded(alias) => body::Body::AliasAdded(body::AliasAdded {
                id: alias.id,
                surface: alias.surface,
                kind: alias.kind,
                window: alias.window,
                release_to: None,
            }),
            Body::AliasRemoved(alias) => body::Body::AliasRemoved(alias),
            Body::SummaryPut(put) => body::Body::SummaryPut(body::SummaryPut {
                id: put.id,
                scope: put.scope,
                text: put.text,
                visible_from: put.visible_from,
                owner: None,
                owner_role: None,
                release_to: None,
            }),
            Body::SummaryRetired(retired) => body::Body::SummaryRetired(retired),
            Body::CandidateProposed(candidate) => body::Body::CandidateProposed(CandidateProposed2 {
                id: candidate.id,
                surface: candidate.surface,
                suggested_dst: candidate.suggested_dst,
                evidence: candidate.evidence,
                origin: candidate.origin,
                trust: candidate.trust,
                score: None,
                related: None,
                duplicate: None,
            }),
            Body::DispositionSet(disposition) => body::Body::DispositionSet(disposition),
            Body::ConfigSet(config) => body::Body::ConfigSet(config),
            Body::RollbackMarker(marker) => body::Body::RollbackMarker(marker),
        }
    }
}

impl From<TermPut> for body::TermPut {
    fn from(put: TermPut) -> body::TermPut {
        body::TermPut {
            id: put.id,
            src: put.src,
            sense: put.sense,
            dst: put.dst,
            kind: put.kind,
            gender: put.gender,
            decl: put.decl,
            speech: put.speech,
            note: put.note,
            window: put.window,
            status: put.status,
            priority: put.priority,
            constant: put.constant,
            secondary: put.secondary,
            supersedes: put.supersedes,
            owner: None,
            owner_role: None,
            release_to: None,
            note_release_to: None,
        }
    }
}

impl body::Body {
    /// The schema-1 form of this body, if it has one: a kind schema 1 knew with every
    /// field schema 2 added absent. Tests write schema-1 records through it (the
    /// ledger writes only the current schema).
    pub fn to_schema1(&self) -> Option<Body> {
        Some(match self {
            body::Body::TermPut(put) => {
                if put.owner.is_some()
                    || put.owner_role.is_some()
                    || put.release_to.is_some()
                    || put.note_release_to.is_some()
                {
                    return None;
                }
                Body::TermPut(TermPut {
                    id: put.id,
                    src: put.src.clone(),
                    sense: put.sense.clone(),
                    dst: put.dst.clone(),
                    kind: put.kind.clone(),
                    gender: put.gender,
                    decl: put.decl.clone(),
                    speech: put.speech.clone(),
                    note: put.note.clone(),
                    window: put.window,
                    status: put.status,
                    priority: put.priority,
                    constant: put.constant,
                    secondary: put.secondary.clone(),
                    supersedes: put.supersedes,
                })
            }
            body::Body::TermRetired(retired) => Body::TermRetired(retired.clone()),
            body::Body::AliasAdded(alias) if alias.release_to.is_none() => Body::AliasAdded(AliasAdded {
                id: alias.id,
                surface: alias.surface.clone(),
                kind: alias.kind,
                window: alias.window,
            }),
            body::Body::AliasRemoved(alias) => Body::AliasRemoved(alias.clone()),
            body::Body::SummaryPut(put)
                if put.owner.is_none() && put.owner_role.is_none() && put.release_to.is_none() =>
            {
                Body::SummaryPut(SummaryPut {
                    id: put.id,
                    scope: put.scope,
                    text: put.text.clone(),
                    visible_from: put.visible_from,
                })
            }
            body::Body::SummaryRetired(retired) => Body::SummaryRetired(retired.clone()),
            body::Body::CandidateProposed(candidate)
                if candidate.score.is_none() && candidate.related.is_none() && candidate.duplicate.is_none() =>
            {
                Body::CandidateProposed(CandidateProposed {
                    id: candidate.id,
                    surface: candidate.surface.clone(),
                    suggested_dst: candidate.suggested_dst.clone(),
                    evidence: candidate.evidence.clone(),
                    origin: candidate.origin,
                    trust: candidate.trust,
                })
            }
            body::Body::DispositionSet(disposition) => Body::DispositionSet(disposition.clone()),
            body::Body::ConfigSet(config) => Body::ConfigSet(config.clone()),
            body::Body::RollbackMarker(marker) => Body::RollbackMarker(marker.clone()),
            _ => return None,
        })
    }
}
