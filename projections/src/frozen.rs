//! The frozen projection: what an assembly needs of a snapshot, ready to load fast.
//!
//! It is the record table (rkyv, checked access) plus the frozen leftmost-longest
//! automaton over every folded surface of every active term (all windows: the window
//! is filtered at match time). Only this module knows the rkyv layout.
//!
//! Layout of the bytes ([`freeze`]):
//!
//! | offset | size | field |
//! | ---: | ---: | --- |
//! | 0 | 4 | magic `LBFP` |
//! | 4 | 2 | format version, [`FROZEN_FORMAT`] |
//! | 6 | 2 | reserved, zero |
//! | 8 | 32 | snapshot ID the projection was frozen from |
//! | 40 | 8 | `table_len`: bytes of the rkyv record table |
//! | 48 | 32 | keyed blake3 of the table bytes ([`TABLE_CONTEXT`]) |
//! | 80 | 32 | id of the normalization profile the keys were folded with |
//! | 112 | `table_len` | rkyv archive of [`FrozenTable`] |
//! | … | rest | the frozen matcher (`matcher::Matcher::to_bytes`, with its own hash) |
//!
//! The cache stores these bytes behind a checksum (see `ledger`); loading checks the
//! snapshot ID, the table hash, then the rkyv archive with bytecheck, then the
//! matcher's own hash,
//! and fails with an error on anything unexpected, never a panic. Equal snapshots
//! freeze to equal bytes: nothing here depends on revision or provenance.

use std::fmt;

use ledger_model::*;
use matcher::{BuildError, FrozenLoadError, Matcher, MatcherBuilder, Profile};
use rkyv::rancor;

use crate::snapshot::SnapshotId;
use crate::state::State;

/// Version of the layout above and of [`FrozenTable`].
pub const FROZEN_FORMAT: u16 = 1;
const MAGIC: [u8; 4] = *b"LBFP";
const HEADER_LEN: usize = 112;
/// blake3 `derive_key` context of the record-table hash.
pub const TABLE_CONTEXT: &str = "lorebank 2026-11-29 frozen table v1";

/// One active term, as assembly needs it.
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenTerm {
    /// Kind letter and number of the id (`T-412` is 412).
    pub number: u32,
    /// Source surface.
    pub src: String,
    /// Sense.
    pub sense: Option<String>,
    /// Rendering.
    pub dst: String,
    /// Category tag.
    pub kind: Option<String>,
    /// Gender: 0 none, 1 m, 2 f, 3 n, 4 pl.
    pub gender: u8,
    /// Declension forms.
    pub decl: Vec<String>,
    /// Story-time window after supersession; `None` if superseded entirely.
    pub window: Option<(u32, Option<u32>)>,
    /// Status: 0 approved, 1 auto, 2 draft.
    pub status: u8,
    /// Priority.
    pub priority: i32,
    /// Injected everywhere inside the window.
    pub constant: bool,
    /// Secondary keys: logic (0 and_any, 1 and_all, 2 not_any, 3 not_all) and keys.
    pub secondary: Option<(u8, Vec<String>)>,
    /// Verdict: 0 none, 1 accept, 2 verify, 3 reject.
    pub verdict: u8,
}

/// One surface of a term that the automaton finds (a matcher value indexes these).
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenSurface {
    /// Index into [`FrozenTable::terms`].
    pub term: u32,
    /// 0 the src; 1 variant, 2 nickname, 3 title, 4 reading alias.
    pub kind: u8,
    /// The surface as written.
    pub surface: String,
    /// Where this surface applies; `None` if nowhere.
    pub window: Option<(u32, Option<u32>)>,
}

/// One active summary.
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenSummary {
    /// Number of the `S-…` id.
    pub number: u32,
    /// Scope: (0 chapter, 1 arc, 2 book), from, to.
    pub scope: (u8, u32, u32),
    /// Text.
    pub text: String,
    /// First chapter it may be shown at.
    pub visible_from: u32,
}

/// The record table of a frozen projection.
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenTable {
    /// Assembly config: token budget, sticky chunks, min key chars, render format,
    /// token estimator.
    pub assembly: (u32, u32, u32, u16, u16),
    /// Active terms by id (so by number: a binary search finds a term).
    pub terms: Vec<FrozenTerm>,
    /// Indexes into `terms` of the constant terms.
    pub constant: Vec<u32>,
    /// Surfaces; matcher values index this.
    pub surfaces: Vec<FrozenSurface>,
    /// Active summaries by id.
    pub summaries: Vec<FrozenSummary>,
}

/// Why a frozen projection cannot be built or loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum FrozenError {
    /// The automaton could not be built.
    Build(BuildError),
    /// The bytes are not a frozen projection of this format.
    Header(String),
    /// The bytes were frozen from another snapshot.
    WrongSnapshot {
        /// What the caller expected.
        expected: SnapshotId,
        /// What the bytes say.
        found: SnapshotId,
    },
    /// The bytes were folded with another profile.
    WrongProfile,
    /// The rkyv record table failed validation.
    Table(String),
    /// The frozen matcher failed to load.
    Matcher(FrozenLoadError),
}

impl fmt::Display for FrozenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrozenError::Build(error) => write!(f, "cannot build the automaton: {error}"),
            FrozenError::Header(detail) => write!(f, "not a frozen projection: {detail}"),
            FrozenError::WrongSnapshot { expected, found } => {
                write!(f, "frozen projection is of snapshot {found}, expected {expected}")
            }
            FrozenError::Table(detail) => write!(f, "record table: {detail}"),
            FrozenError::WrongProfile => write!(f, "frozen with another normalization profile"),
            FrozenError::Matcher(error) => write!(f, "automaton: {error}"),
        }
    }
}

impl std::error::Error for FrozenError {}

fn window_pair(window: Option<Window>) -> Option<(u32, Option<u32>)> {
    window.map(|window| (window.since, window.until))
}

/// The record table of `state`.
pub fn table(state: &State) -> FrozenTable {
    let assembly = state.assembly();
    let mut terms = Vec::new();
    let mut surfaces = Vec::new();
    for active in state.active_terms(None) {
        let put = &active.term.put;
        let term_idx = u32::try_from(terms.len()).expect("fewer than 2^32 terms");
        terms.push(FrozenTerm {
            number: active.id.number(),
            src: put.src.clone(),
            sense: put.sense.clone(),
            dst: put.dst.clone(),
            kind: put.kind.clone(),
            gender: match put.gender {
                None => 0,
                Some(Gender::Masculine) => 1,
                Some(Gender::Feminine) => 2,
                Some(Gender::Neuter) => 3,
                Some(Gender::Plural) => 4,
            },
            decl: put.decl.clone(),
            window: window_pair(active.window),
            status: match put.status {
                Status::Approved => 0,
                Status::Auto => 1,
                Status::Draft => 2,
            },
            priority: put.priority,
            constant: put.constant,
            secondary: put.secondary.as_ref().map(|secondary| {
                let logic = match secondary.logic {
                    KeyLogic::AndAny => 0,
                    KeyLogic::AndAll => 1,
                    KeyLogic::NotAny => 2,
                    KeyLogic::NotAll => 3,
                };
                (logic, secondary.keys.clone())
            }),
            verdict: match active.term.verdict.as_ref().map(|(verdict, _)| *verdict) {
                None | Some(Verdict::Withdraw) => 0,
                Some(Verdict::Accept) => 1,
                Some(Verdict::Verify) => 2,
                Some(Verdict::Reject) => 3,
            },
        });
        surfaces.push(FrozenSurface {
            term: term_idx,
            kind: 0,
            surface: put.src.clone(),
            window: window_pair(active.window),
        });
        for alias in active.term.aliases.values() {
            let kind = match alias.kind {
                AliasKind::Variant => 1,
                AliasKind::Nickname => 2,
                AliasKind::Title => 3,
                AliasKind::Reading => 4,
            };
            let window = State::alias_window(alias, active.window);
            surfaces.push(FrozenSurface {
                term: term_idx,
                kind,
                surface: alias.surface.clone(),
                window: window_pair(window),
            });
        }
    }
    let summaries = state
        .visible_summaries(None)
        .into_iter()
        .map(|summary| FrozenSummary {
            number: summary.put.id.number(),
            scope: match summary.put.scope {
                Scope::Chapter(chapter) => (0, chapter, chapter),
                Scope::Arc { from, to } => (1, from, to),
                Scope::Book => (2, 0, 0),
            },
            text: summary.put.text.clone(),
            visible_from: crate::read::visible_from(&summary.put),
        })
        .collect();
    assert!(terms.windows(2).all(|pair| pair[0].number < pair[1].number), "terms are sorted by number");
    let constant = terms.iter().enumerate().filter(|(_, term)| term.constant).map(|(idx, _)| idx as u32).collect();
    FrozenTable {
        constant,
        assembly: (
            assembly.token_budget,
            assembly.sticky_chunks,
            assembly.min_key_chars,
            assembly.render_format,
            assembly.token_estimator,
        ),
        terms,
        surfaces,
        summaries,
    }
}

/// Builds the automaton over every surface of `table`, folded with `profile`.
pub fn build_matcher(table: &FrozenTable, profile: &Profile) -> Result<Matcher, FrozenError> {
    let keys = table.surfaces.iter().enumerate().map(|(surface_idx, surface)| {
        (surface.surface.as_str(), u32::try_from(surface_idx).expect("fewer than 2^32 surfaces"))
    });
    MatcherBuilder::new(profile).build(keys).map_err(FrozenError::Build)
}

/// Freezes `state` (whose snapshot ID is `snapshot`) with `profile`.
pub fn freeze(state: &State, profile: &Profile) -> Result<Vec<u8>, FrozenError> {
    let table = table(state);
    let matcher = build_matcher(&table, profile)?;
    let archived = rkyv::to_bytes::<rancor::Error>(&table).map_err(|error| FrozenError::Table(error.to_string()))?;
    let snapshot = state.snapshot_id();
    let mut out = Vec::with_capacity(HEADER_LEN + archived.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FROZEN_FORMAT.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&snapshot.0 .0);
    out.extend_from_slice(&(archived.len() as u64).to_le_bytes());
    out.extend_from_slice(&blake3::derive_key(TABLE_CONTEXT, &archived));
    out.extend_from_slice(&profile.id().0);
    out.extend_from_slice(&archived);
    out.extend_from_slice(&matcher.to_bytes());
    Ok(out)
}

self_cell::self_cell!(
    /// The aligned archive bytes and the validated view into them.
    struct Table {
        owner: rkyv::util::AlignedVec<16>,
        #[covariant]
        dependent: ArchivedRef,
    }
);

type ArchivedRef<'a> = &'a ArchivedFrozenTable;

/// The id of the profile frozen bytes were folded with, read from their header
/// (unverified: [`Frozen::load`] checks it against the profile it is given).
pub fn profile_of(bytes: &[u8]) -> Option<Hash32> {
    let id: [u8; 32] = bytes.get(80..112)?.try_into().ok()?;
    (bytes.get(..4)? == MAGIC).then_some(Hash32(id))
}

/// A loaded frozen projection: the validated record table (zero-copy) and the matcher.
pub struct Frozen {
    table: Table,
    matcher: Matcher,
    snapshot: SnapshotId,
}

impl fmt::Debug for Frozen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frozen")
            .field("snapshot", &self.snapshot)
            .field("table_bytes", &self.table.borrow_owner().len())
            .finish()
    }
}

impl Frozen {
    /// Loads frozen bytes that must be of snapshot `expected`, folded with `profile`.
    pub fn load(bytes: &[u8], profile: &Profile, expected: SnapshotId) -> Result<Frozen, FrozenError> {
        let header = bytes.get(..HEADER_LEN).ok_or_else(|| FrozenError::Header(format!("{} bytes", bytes.len())))?;
        if header[..4] != MAGIC {
            return Err(FrozenError::Header("bad magic".into()));
        }
        let format = u16::from_le_bytes([header[4], header[5]]);
        if format != FROZEN_FORMAT || header[6..8] != [0, 0] {
            return Err(FrozenError::Header(format!("format {format}, this build reads {FROZEN_FORMAT}")));
        }
        let mut found = [0u8; 32];
        found.copy_from_slice(&header[8..40]);
        let found = SnapshotId(Hash32(found));
        if found != expected {
            return Err(FrozenError::WrongSnapshot { expected, found });
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&header[40..48]);
        let table_len =
            usize::try_from(u64::from_le_bytes(len)).map_err(|_| FrozenError::Header("table length".into()))?;
        let rest = &bytes[HEADER_LEN..];
        if table_len > rest.len() {
            return Err(FrozenError::Header(format!("table of {table_len} bytes, {} left", rest.len())));
        }
        let (table_bytes, matcher_bytes) = rest.split_at(table_len);
        if blake3::derive_key(TABLE_CONTEXT, table_bytes)[..] != header[48..80] {
            return Err(FrozenError::Table("hash mismatch".into()));
        }
        if header[80..112] != profile.id().0 {
            return Err(FrozenError::WrongProfile);
        }
        let mut aligned = rkyv::util::AlignedVec::<16>::with_capacity(table_len);
        aligned.extend_from_slice(table_bytes);
        let table = Table::try_new(aligned, |aligned| {
            rkyv::access::<ArchivedFrozenTable, rancor::Error>(aligned)
                .map_err(|error| FrozenError::Table(error.to_string()))
        })?;
        let matcher = Matcher::from_bytes(matcher_bytes, profile).map_err(FrozenError::Matcher)?;
        Ok(Frozen { table, matcher, snapshot: expected })
    }

    /// The validated record table, zero-copy.
    pub fn table(&self) -> &ArchivedFrozenTable {
        self.table.borrow_dependent()
    }

    /// The record table, deserialized.
    pub fn to_table(&self) -> FrozenTable {
        rkyv::deserialize::<FrozenTable, rancor::Error>(self.table()).expect("validated archives deserialize")
    }

    /// The automaton.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// The snapshot it was frozen from.
    pub fn snapshot(&self) -> SnapshotId {
        self.snapshot
    }
}
