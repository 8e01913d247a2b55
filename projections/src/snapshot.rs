//! Snapshots and their content-addressed IDs.
//!
//! A snapshot covers everything that can change an assembly: active terms with their
//! content, aliases and verdict; active summaries; the assembly config; the
//! normalization profile; and the format versions of everything that turns them into
//! bytes. Not the revision, not timestamps, not provenance, not verdict reasons, not
//! retired records, not past versions, not the review queue (candidates). Equal
//! states therefore share an ID, equal IDs give equal assemblies, and a rollback to
//! revision R lands on R's ID.
//!
//! Format 1 also covers fields no render format injects (a term's sense, speech and
//! note, an alias's kind, `min_key_chars`, the profile's name): they change the ID but
//! no assembly. IDs are stored in receipts and checked on replay, so leaving them out
//! takes a new snapshot format chosen per book (docs/format.md).
//!
//! The ID is the keyed blake3 ([`SNAPSHOT_CONTEXT`]) of the canonical encoding of a
//! [`SnapshotDoc`] (ledger-model's codec: bincode 2.0.1, fixed configuration).

use std::collections::BTreeMap;
use std::fmt;

use ledger_model::codec;
use ledger_model::*;
use serde::Serialize;

use crate::state::State;

/// Version of the snapshot document layout below.
pub const SNAPSHOT_FORMAT: u16 = 1;
/// blake3 `derive_key` context of snapshot IDs.
pub const SNAPSHOT_CONTEXT: &str = "lorebank 2026-11-29 snapshot v1";

/// A snapshot ID: 32 bytes, shown as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SnapshotId(pub Hash32);

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SnapshotId({})", self.0)
    }
}

/// The versions of every format that turns a snapshot into injected bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FormatVersions {
    /// [`SNAPSHOT_FORMAT`].
    pub snapshot: u16,
    /// The matcher's matching semantics.
    pub matcher: u16,
    /// The render format in the assembly config.
    pub render: u16,
    /// The token estimator in the assembly config.
    pub token_estimator: u16,
}

/// One active term as the snapshot sees it.
#[derive(Debug, Serialize)]
pub struct SnapshotTerm<'s> {
    /// The content.
    pub put: &'s TermPut,
    /// Aliases, by surface.
    pub aliases: Vec<&'s AliasAdded>,
    /// The verdict (its reason code does not change assemblies).
    pub verdict: Option<Verdict>,
}

/// The canonical document a snapshot ID hashes.
#[derive(Debug, Serialize)]
pub struct SnapshotDoc<'s> {
    /// Format versions.
    pub formats: FormatVersions,
    /// Profile name and fold table id.
    pub profile: Option<&'s ProfileRef>,
    /// Assembly config in force.
    pub assembly: AssemblyConfig,
    /// Active terms by id.
    pub terms: Vec<SnapshotTerm<'s>>,
    /// Active summaries by id.
    pub summaries: Vec<&'s SummaryPut>,
}

impl State {
    /// The header of the snapshot document: everything before the terms.
    fn snapshot_header(&self) -> (FormatVersions, Option<&ProfileRef>, AssemblyConfig) {
        let assembly = self.assembly();
        let formats = FormatVersions {
            snapshot: SNAPSHOT_FORMAT,
            matcher: crate::MATCHER_SEMANTICS,
            render: assembly.render_format,
            token_estimator: assembly.token_estimator,
        };
        (formats, self.config().map(|config| &config.profile), assembly)
    }

    /// The snapshot form of an active term.
    fn snapshot_term(term: &crate::state::Term) -> SnapshotTerm<'_> {
        SnapshotTerm {
            put: &term.put,
            aliases: term.aliases.values().collect(),
            verdict: term.verdict.as_ref().map(|(verdict, _)| *verdict),
        }
    }

    /// The snapshot document of this state.
    pub fn snapshot_doc(&self) -> SnapshotDoc<'_> {
        let (formats, profile, assembly) = self.snapshot_header();
        SnapshotDoc {
            formats,
            profile,
            assembly,
            terms: self.terms.values().filter(|term| !term.retired).map(State::snapshot_term).collect(),
            summaries: self.summaries.values().filter(|s| !s.retired).map(|s| &s.put).collect(),
        }
    }

    /// The canonical bytes of the snapshot.
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        codec::encode_large(&self.snapshot_doc()).expect("snapshot documents always encode")
    }

    /// The snapshot ID.
    pub fn snapshot_id(&self) -> SnapshotId {
        let mut hasher = blake3::Hasher::new_derive_key(SNAPSHOT_CONTEXT);
        hasher.update(&self.snapshot_bytes());
        SnapshotId(Hash32(*hasher.finalize().as_bytes()))
    }
}

/// The snapshot IDs of one fold's successive states, without re-encoding the whole
/// state each time: it keeps the encoded form of every active term and summary, and
/// [`SnapshotTracker::touch`] re-encodes only the record an event changed. The ID it
/// gives is exactly [`State::snapshot_id`] (a property test holds it to that): the
/// encoding of a struct is its fields in order, and of a list its length then its
/// elements, so the document's bytes are the header, then the kept encodings in id
/// order. Rebuilding the snapshot index, which needs the ID at every batch end of
/// the log, costs a hash of the document per batch end instead of an encoding.
#[derive(Clone, Debug, Default)]
pub struct SnapshotTracker {
    terms: BTreeMap<RecordId, Vec<u8>>,
    summaries: BTreeMap<RecordId, Vec<u8>>,
}

impl SnapshotTracker {
    /// A tracker of the empty book.
    pub fn new() -> SnapshotTracker {
        SnapshotTracker::default()
    }

    /// Takes in the change to `record` (the record of the event just applied to
    /// `state`; `None` for events about no record).
    pub fn touch(&mut self, state: &State, record: Option<RecordId>) {
        let Some(id) = record else { return };
        match id.kind() {
            RecordKind::Term => match state.terms.get(&id).filter(|term| !term.retired) {
                Some(term) => {
                    self.terms.insert(id, encoded(&State::snapshot_term(term)));
                }
                None => {
                    self.terms.remove(&id);
                }
            },
            RecordKind::Summary => match state.summaries.get(&id).filter(|summary| !summary.retired) {
                Some(summary) => {
                    self.summaries.insert(id, encoded(&summary.put));
                }
                None => {
                    self.summaries.remove(&id);
                }
            },
            RecordKind::Candidate => {}
        }
    }

    /// The snapshot ID of `state`, which must be the state every touch was made on.
    pub fn id(&self, state: &State) -> SnapshotId {
        let mut hasher = blake3::Hasher::new_derive_key(SNAPSHOT_CONTEXT);
        hasher.update(&codec::encode_large(&state.snapshot_header()).expect("headers always encode"));
        for records in [&self.terms, &self.summaries] {
            hasher.update(&codec::encode_large(&(records.len() as u64)).expect("lengths always encode"));
            for bytes in records.values() {
                hasher.update(bytes);
            }
        }
        SnapshotId(Hash32(*hasher.finalize().as_bytes()))
    }
}

/// The canonical bytes of one record of a snapshot document.
fn encoded<T: Serialize>(value: &T) -> Vec<u8> {
    codec::encode_large(value).expect("snapshot records always encode")
}
