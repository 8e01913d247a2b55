//! The frozen projection: what an assembly needs of a snapshot, ready to load fast.
//!
//! It is the record table (rkyv, checked access) plus the frozen leftmost-longest
//! automaton over every folded surface of every active term (all windows: the window
//! is filtered at match time). Only this module knows the rkyv layout: assembly reads
//! the table through the typed views ([`TermRef`], [`SurfaceRef`], [`SummaryRef`],
//! [`RuleRef`]) and
//! the [`TermIdx`] handles of [`Frozen`], never through archived types.
//!
//! Layout of the bytes ([`freeze`]):
//!
//! | offset | size | field |
//! | ---: | ---: | --- |
//! | 0 | 4 | magic `LBFP` |
//! | 4 | 2 | format version, [`FROZEN_FORMAT`] (4) |
//! | 6 | 2 | reserved, zero |
//! | 8 | 32 | snapshot ID the projection was frozen from |
//! | 40 | 8 | `table_len`: bytes of the rkyv record table |
//! | 48 | 32 | blake3 `derive_key` ([`PROJECTION_CONTEXT`]) of every byte after the header: table and matcher |
//! | 80 | 32 | id of the normalization profile the keys were folded with |
//! | 112 | `table_len` | rkyv archive of [`FrozenTable`] |
//! | … | rest | the frozen matcher (`matcher::Matcher::to_bytes`, with its own hash) |
//!
//! The cache stores these bytes behind a checksum (see `ledger`); loading checks the
//! snapshot ID, the hash over table and matcher (so a matcher cannot be spliced from
//! another projection), the profile, the rkyv archive with bytecheck, then the
//! matcher's own hash, and fails with an error on anything unexpected, never a panic.
//!
//! Hashes catch damage, not forgery: anyone who can write the cache can recompute them.
//! So loading also checks that the table is consistent in itself and with the matcher
//! ([`Frozen::load`]): every code is one this build knows, every index is in range,
//! terms are sorted by number, the constant list is exactly the constant terms, and the
//! matcher's values name every surface exactly once. Assembly relies on these checks to
//! index without panicking. A projection that fails any of them is refused, and the
//! caller rebuilds it from the log.
//!
//! Equal snapshots freeze to equal bytes: nothing here depends on revision or provenance.

use std::fmt;

use ledger_model::*;
use matcher::{BuildError, FrozenLoadError, Matcher, MatcherBuilder, Profile, ProfileId};
use rkyv::option::ArchivedOption;
use rkyv::rancor;
use rkyv::rend::u32_le;
use rkyv::string::ArchivedString;
use rkyv::tuple::{ArchivedTuple2, ArchivedTuple4};

use crate::snapshot::SnapshotId;
use crate::state::State;

/// Version of the layout above and of [`FrozenTable`]. Format 1 hashed the table
/// alone; format 2 had no rules and no conflict policy; format 3 no cascading
/// activation. Their projections fail to load and are rebuilt from the log.
pub const FROZEN_FORMAT: u16 = 4;
const MAGIC: [u8; 4] = *b"LBFP";
const HEADER_LEN: usize = 112;
/// blake3 `derive_key` context of the hash over the table and the matcher.
pub const PROJECTION_CONTEXT: &str = "lorebank 2026-11-30 frozen projection v2";

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

/// One selector of a rule's scope: (code, text, a, b). Codes: 0 kind (`text`), 1
/// record (`a` the term number), 2 chapters (`a ..= b`, `b` none open-ended), 3
/// dialogue, 4 narration.
pub type FrozenSelector = (u8, String, u32, Option<u32>);

/// One active rule.
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenRule {
    /// Number of the `R-…` id.
    pub number: u32,
    /// The instruction.
    pub text: String,
    /// Where it applies.
    pub applies_to: Vec<FrozenSelector>,
    /// Where it does not.
    pub does_not_apply_to: Vec<FrozenSelector>,
    /// Window (the spoiler gate).
    pub window: (u32, Option<u32>),
    /// Status: 0 approved, 1 auto, 2 draft.
    pub status: u8,
    /// Priority.
    pub priority: i32,
    /// Verdict: 0 none, 1 accept, 2 verify, 3 reject.
    pub verdict: u8,
}

/// The book's cascading activation, frozen only while its depth is above 0.
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenCascade {
    /// Rounds of scanning, 1 to 3.
    pub depth: u8,
    /// The note of every term that has one, by index into [`FrozenTable::terms`], in
    /// index order: what a cascade scans of a record.
    pub notes: Vec<(u32, String)>,
    /// Indexes of the terms whose note brings nothing in, in order.
    pub quiet: Vec<u32>,
    /// Indexes of the terms a cascade never brings, in order.
    pub direct_only: Vec<u32>,
}

/// The record table of a frozen projection.
#[derive(Clone, Debug, PartialEq, Eq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrozenTable {
    /// Assembly config: token budget, sticky chunks, min key chars, render format,
    /// token estimator.
    pub assembly: (u32, u32, u32, u16, u16),
    /// Conflict policy: 0 flag, 1 prefer_specific, 2 prefer_priority, 3 prefer_approved.
    pub policy: u8,
    /// Active rules by id.
    pub rules: Vec<FrozenRule>,
    /// Active terms by id (so by number: a binary search finds a term).
    pub terms: Vec<FrozenTerm>,
    /// Indexes into `terms` of the constant terms.
    pub constant: Vec<u32>,
    /// Surfaces; matcher values index this.
    pub surfaces: Vec<FrozenSurface>,
    /// Active summaries by id.
    pub summaries: Vec<FrozenSummary>,
    /// Cascading activation; `None` while the book does not cascade.
    pub cascade: Option<FrozenCascade>,
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
            gender: gender_code(put.gender),
            decl: put.decl.clone(),
            window: window_pair(active.window),
            status: status_code(put.status),
            priority: put.priority,
            constant: put.constant,
            secondary: put.secondary.as_ref().map(|secondary| (logic_code(secondary.logic), secondary.keys.clone())),
            verdict: verdict_code(active.term.verdict.as_ref().map(|(verdict, _)| *verdict)),
        });
        surfaces.push(FrozenSurface {
            term: term_idx,
            kind: alias_kind_code(None),
            surface: put.src.clone(),
            window: window_pair(active.window),
        });
        for alias in active.term.aliases.values() {
            let kind = alias_kind_code(Some(alias.kind));
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
    let selectors = |selectors: &[Selector]| -> Vec<FrozenSelector> {
        selectors
            .iter()
            .map(|selector| match selector {
                Selector::Kind(kind) => (0, kind.clone(), 0, None),
                Selector::Record(id) => (1, String::new(), id.number(), None),
                Selector::Chapters(window) => (2, String::new(), window.since, window.until),
                Selector::Dialogue => (3, String::new(), 0, None),
                Selector::Narration => (4, String::new(), 0, None),
            })
            .collect()
    };
    let rules = state
        .rules()
        .values()
        .filter(|rule| !rule.retired)
        .map(|rule| FrozenRule {
            number: rule.put.id.number(),
            text: rule.put.text.clone(),
            applies_to: selectors(&rule.put.applies_to),
            does_not_apply_to: selectors(rule.put.does_not_apply_to.as_deref().unwrap_or(&[])),
            window: (rule.put.window.since, rule.put.window.until),
            status: status_code(rule.put.status),
            priority: rule.put.priority,
            verdict: verdict_code(rule.verdict.as_ref().map(|(verdict, _)| *verdict)),
        })
        .collect();
    let constant = terms.iter().enumerate().filter(|(_, term)| term.constant).map(|(idx, _)| idx as u32).collect();
    let cascade = state.cascade_doc().map(|doc| {
        let index_of = |ids: &[RecordId]| -> Vec<u32> {
            ids.iter()
                .filter_map(|id| terms.binary_search_by_key(&id.number(), |term: &FrozenTerm| term.number).ok())
                .map(|idx| idx as u32)
                .collect()
        };
        let notes = terms
            .iter()
            .enumerate()
            .filter_map(|(idx, term)| {
                let id = RecordId::new(RecordKind::Term, term.number)?;
                let note = state.terms.get(&id)?.put.note.as_ref()?;
                Some((idx as u32, note.clone()))
            })
            .collect();
        FrozenCascade { depth: doc.depth, notes, quiet: index_of(&doc.quiet), direct_only: index_of(&doc.direct_only) }
    });
    FrozenTable {
        cascade,
        constant,
        assembly: (
            assembly.token_budget,
            assembly.sticky_chunks,
            assembly.min_key_chars,
            assembly.render_format,
            assembly.token_estimator,
        ),
        policy: policy_code(state.conflict_policy()),
        rules,
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

/// Freezes `state` with `profile`, under its snapshot ID.
pub fn freeze(state: &State, profile: &Profile) -> Result<Vec<u8>, FrozenError> {
    freeze_as(state, state.snapshot_id(), profile)
}

/// Freezes `state` with `profile` under `id`: a party's view of a snapshot is frozen
/// under the view's id ([`crate::release::view_id`]), not under its own snapshot ID.
pub fn freeze_as(state: &State, id: SnapshotId, profile: &Profile) -> Result<Vec<u8>, FrozenError> {
    let table = table(state);
    let matcher = build_matcher(&table, profile)?;
    let archived = archive(&table)?;
    Ok(seal(id, profile.id(), &archived, &matcher.to_bytes()))
}

/// The rkyv archive of `table`: the table section of the frozen bytes.
pub fn archive(table: &FrozenTable) -> Result<Vec<u8>, FrozenError> {
    archive_aligned(table).map(|bytes| bytes.to_vec())
}

fn archive_aligned(table: &FrozenTable) -> Result<rkyv::util::AlignedVec<16>, FrozenError> {
    rkyv::to_bytes::<rancor::Error>(table).map_err(|error| FrozenError::Table(error.to_string()))
}

/// Frozen bytes from their sections: the header (with the hash over both sections),
/// the table section and the matcher section. [`freeze`] is `seal` of a state's
/// sections; tests and fuzzers use it to give [`Frozen::load`] altered sections with
/// valid hashes.
pub fn seal(snapshot: SnapshotId, profile: ProfileId, table: &[u8], matcher: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + table.len() + matcher.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FROZEN_FORMAT.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&snapshot.0 .0);
    out.extend_from_slice(&(table.len() as u64).to_le_bytes());
    out.extend_from_slice(&[0; 32]);
    out.extend_from_slice(&profile.0);
    out.extend_from_slice(table);
    out.extend_from_slice(matcher);
    let hash = blake3::derive_key(PROJECTION_CONTEXT, &out[HEADER_LEN..]);
    out[48..80].copy_from_slice(&hash);
    out
}

/// The table and matcher sections of frozen bytes, unverified (`None` if the header
/// is short or its table length runs past the end).
pub fn sections(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let len: [u8; 8] = bytes.get(40..48)?.try_into().ok()?;
    let table_len = usize::try_from(u64::from_le_bytes(len)).ok()?;
    let rest = bytes.get(HEADER_LEN..)?;
    (table_len <= rest.len()).then(|| rest.split_at(table_len))
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

impl Table {
    /// The archive in `aligned`, validated by rkyv (its layout, not yet the table's
    /// own consistency: [`check_table`]).
    fn validated(aligned: rkyv::util::AlignedVec<16>) -> Result<Table, FrozenError> {
        Table::try_new(aligned, |aligned| {
            rkyv::access::<ArchivedFrozenTable, rancor::Error>(aligned)
                .map_err(|error| FrozenError::Table(error.to_string()))
        })
    }
}

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
    /// Bytes the loaded projection holds on the heap: its record table and its
    /// matcher (not the profile, which the book shares). An estimate for a cache's
    /// budget.
    pub fn heap_bytes(&self) -> usize {
        self.table.borrow_owner().len() + self.matcher.heap_bytes()
    }
}

impl Frozen {
    /// Freezes `state` with `profile` under `id` and keeps the result loaded, without
    /// the bytes: what [`Frozen::load`] of [`freeze_as`]'s bytes gives, without hashing,
    /// copying and parsing again what was just built. [`Frozen::to_bytes`] gives the
    /// bytes later (for the book's cache).
    pub fn build(state: &State, id: SnapshotId, profile: &Profile) -> Result<Frozen, FrozenError> {
        let table = table(state);
        let matcher = build_matcher(&table, profile)?;
        let archived = archive_aligned(&table)?;
        let table = Table::validated(archived)?;
        // The checks a load runs, so that assembly only ever sees a checked table.
        check_table(table.borrow_dependent(), &matcher)?;
        Ok(Frozen { table, matcher, snapshot: id })
    }

    /// The frozen bytes of this projection: exactly [`freeze_as`]'s bytes for the
    /// state, id and profile it was built or loaded from.
    pub fn to_bytes(&self) -> Vec<u8> {
        seal(self.snapshot, self.matcher.profile().id(), self.table.borrow_owner(), &self.matcher.to_bytes())
    }

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
        if blake3::derive_key(PROJECTION_CONTEXT, rest)[..] != header[48..80] {
            return Err(FrozenError::Header("hash mismatch over table and matcher".into()));
        }
        let (table_bytes, matcher_bytes) = rest.split_at(table_len);
        if header[80..112] != profile.id().0 {
            return Err(FrozenError::WrongProfile);
        }
        let mut aligned = rkyv::util::AlignedVec::<16>::with_capacity(table_len);
        aligned.extend_from_slice(table_bytes);
        let table = Table::validated(aligned)?;
        let matcher = Matcher::from_bytes(matcher_bytes, profile).map_err(FrozenError::Matcher)?;
        check_table(table.borrow_dependent(), &matcher)?;
        Ok(Frozen { table, matcher, snapshot: expected })
    }

    /// The validated record table, zero-copy: for tests and tools. Assembly uses the
    /// typed accessors below, which keep the archived layout inside this module.
    pub fn table(&self) -> &ArchivedFrozenTable {
        self.table.borrow_dependent()
    }

    /// The assembly config the projection was frozen with.
    pub fn assembly(&self) -> AssemblyConfig {
        let assembly = &self.table().assembly;
        AssemblyConfig {
            token_budget: assembly.0.to_native(),
            sticky_chunks: assembly.1.to_native(),
            min_key_chars: assembly.2.to_native(),
            render_format: assembly.3.to_native(),
            token_estimator: assembly.4.to_native(),
        }
    }

    /// The conflict policy the projection was frozen with.
    pub fn conflict_policy(&self) -> ConflictPolicy {
        policy_of(self.table().policy).unwrap_or(ConflictPolicy::Flag)
    }

    /// How many rounds the book's cascading activation scans (0: it does not cascade).
    pub fn cascade_depth(&self) -> u8 {
        self.table().cascade.as_ref().map_or(0, |cascade| cascade.depth)
    }

    /// The note a cascade scans of term `idx` (`None`: it has none, or the book does
    /// not cascade).
    pub fn note(&self, idx: TermIdx) -> Option<&str> {
        let notes = &self.table().cascade.as_ref()?.notes;
        let at = notes.binary_search_by_key(&idx.0, |note| note.0.to_native()).ok()?;
        Some(notes[at].1.as_str())
    }

    /// Whether term `idx`'s note brings nothing in (it opted out of triggering).
    pub fn is_quiet(&self, idx: TermIdx) -> bool {
        self.table()
            .cascade
            .as_ref()
            .is_some_and(|cascade| cascade.quiet.binary_search_by_key(&idx.0, |term| term.to_native()).is_ok())
    }

    /// Whether term `idx` comes in only by a hit of its own (a cascade never brings it).
    pub fn is_direct_only(&self, idx: TermIdx) -> bool {
        self.table()
            .cascade
            .as_ref()
            .is_some_and(|cascade| cascade.direct_only.binary_search_by_key(&idx.0, |term| term.to_native()).is_ok())
    }

    /// The active rules, in id order.
    pub fn rules(&self) -> impl ExactSizeIterator<Item = RuleRef<'_>> + '_ {
        self.table().rules.iter().map(RuleRef)
    }

    /// Number of active terms.
    pub fn n_terms(&self) -> usize {
        self.table().terms.len()
    }

    /// The term at `idx`.
    ///
    /// # Panics
    ///
    /// If `idx` comes from another projection with fewer terms.
    pub fn term(&self, idx: TermIdx) -> TermRef<'_> {
        // In range: a `TermIdx` comes only from this projection's checked table.
        TermRef(&self.table().terms[idx.0 as usize])
    }

    /// Every active term with its index, in id order.
    pub fn terms(&self) -> impl ExactSizeIterator<Item = (TermIdx, TermRef<'_>)> + '_ {
        self.table().terms.iter().enumerate().map(|(idx, term)| (TermIdx(idx as u32), TermRef(term)))
    }

    /// The index of the active term `T-<number>`, if there is one.
    pub fn term_index(&self, number: u32) -> Option<TermIdx> {
        let idx = self.table().terms.binary_search_by_key(&number, |term| term.number.to_native()).ok()?;
        Some(TermIdx(idx as u32))
    }

    /// The constant terms, in id order.
    pub fn constant(&self) -> impl ExactSizeIterator<Item = TermIdx> + '_ {
        self.table().constant.iter().map(|idx| TermIdx(idx.to_native()))
    }

    /// The surface a matcher value names (`None` if it names none).
    pub fn surface(&self, value: u32) -> Option<SurfaceRef<'_>> {
        self.table().surfaces.get(value as usize).map(SurfaceRef)
    }

    /// The active summaries, in id order.
    pub fn summaries(&self) -> impl ExactSizeIterator<Item = SummaryRef<'_>> + '_ {
        self.table().summaries.iter().map(SummaryRef)
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

/// An index into the terms of one loaded [`Frozen`]. Only `Frozen` makes them, from
/// its checked table, so [`Frozen::term`] never indexes out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TermIdx(u32);

fn window_of(window: &ArchivedOption<ArchivedTuple2<u32_le, ArchivedOption<u32_le>>>) -> Option<Window> {
    window
        .as_ref()
        .map(|window| Window { since: window.0.to_native(), until: window.1.as_ref().map(|u| u.to_native()) })
}

fn window_contains(window: &ArchivedOption<ArchivedTuple2<u32_le, ArchivedOption<u32_le>>>, chapter: u32) -> bool {
    window.as_ref().is_some_and(|window| {
        window.0.to_native() <= chapter && window.1.as_ref().is_none_or(|until| chapter <= until.to_native())
    })
}

/// One active term of a loaded projection.
#[derive(Clone, Copy)]
pub struct TermRef<'a>(&'a ArchivedFrozenTerm);

impl<'a> TermRef<'a> {
    /// Number of its id (`T-412` is 412).
    pub fn number(self) -> u32 {
        self.0.number.to_native()
    }

    /// Source surface.
    pub fn src(self) -> &'a str {
        self.0.src.as_str()
    }

    /// Sense.
    pub fn sense(self) -> Option<&'a str> {
        self.0.sense.as_ref().map(|sense| sense.as_str())
    }

    /// Rendering.
    pub fn dst(self) -> &'a str {
        self.0.dst.as_str()
    }

    /// Category tag.
    pub fn kind(self) -> Option<&'a str> {
        self.0.kind.as_ref().map(|kind| kind.as_str())
    }

    /// Grammatical gender.
    pub fn gender(self) -> Option<Gender> {
        gender_of(self.0.gender)
    }

    /// Declension forms.
    pub fn decl(self) -> impl ExactSizeIterator<Item = &'a str> + Clone + 'a {
        self.0.decl.iter().map(|form| form.as_str())
    }

    /// Story-time window after supersession; `None` if superseded entirely.
    pub fn window(self) -> Option<Window> {
        window_of(&self.0.window)
    }

    /// Whether its window contains `chapter` (false if it has no window).
    pub fn in_window(self, chapter: u32) -> bool {
        window_contains(&self.0.window, chapter)
    }

    /// Review status.
    pub fn status(self) -> Status {
        status_of(self.0.status).unwrap_or(Status::Draft)
    }

    /// Priority.
    pub fn priority(self) -> i32 {
        self.0.priority.to_native()
    }

    /// Injected everywhere inside its window.
    pub fn constant(self) -> bool {
        self.0.constant
    }

    /// Secondary keys: how they combine, and the keys.
    pub fn secondary(self) -> Option<(KeyLogic, impl ExactSizeIterator<Item = &'a str> + Clone + 'a)> {
        let secondary = self.0.secondary.as_ref()?;
        let logic = logic_of(secondary.0).unwrap_or(KeyLogic::NotAll);
        Some((logic, secondary.1.iter().map(|key| key.as_str())))
    }

    /// The editorial verdict in force: accept, verify or reject (a withdrawn verdict
    /// is none).
    pub fn verdict(self) -> Option<Verdict> {
        verdict_of(self.0.verdict).flatten()
    }
}

impl fmt::Debug for TermRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TermRef").field("number", &self.number()).field("src", &self.src()).finish()
    }
}

/// One surface the automaton finds (a matcher value names one).
#[derive(Clone, Copy)]
pub struct SurfaceRef<'a>(&'a ArchivedFrozenSurface);

impl<'a> SurfaceRef<'a> {
    /// The term it names.
    pub fn term(self) -> TermIdx {
        TermIdx(self.0.term.to_native())
    }

    /// `None` for the term's source surface, else the kind of alias.
    pub fn alias_kind(self) -> Option<AliasKind> {
        alias_kind_of(self.0.kind).flatten()
    }

    /// The surface as written.
    pub fn surface(self) -> &'a str {
        self.0.surface.as_str()
    }

    /// Where this surface applies; `None` if nowhere.
    pub fn window(self) -> Option<Window> {
        window_of(&self.0.window)
    }

    /// Whether its window contains `chapter` (false if it has no window).
    pub fn in_window(self, chapter: u32) -> bool {
        window_contains(&self.0.window, chapter)
    }
}

impl fmt::Debug for SurfaceRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SurfaceRef").field("term", &self.term()).field("surface", &self.surface()).finish()
    }
}

/// One active summary.
#[derive(Clone, Copy)]
pub struct SummaryRef<'a>(&'a ArchivedFrozenSummary);

impl<'a> SummaryRef<'a> {
    /// Number of its `S-…` id.
    pub fn number(self) -> u32 {
        self.0.number.to_native()
    }

    /// What it summarizes.
    pub fn scope(self) -> Scope {
        let (from, to) = (self.0.scope.1.to_native(), self.0.scope.2.to_native());
        match self.0.scope.0 {
            0 => Scope::Chapter(from),
            1 => Scope::Arc { from, to },
            _ => Scope::Book,
        }
    }

    /// Text.
    pub fn text(self) -> &'a str {
        self.0.text.as_str()
    }

    /// First chapter it may be shown at.
    pub fn visible_from(self) -> u32 {
        self.0.visible_from.to_native()
    }
}

impl fmt::Debug for SummaryRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SummaryRef").field("number", &self.number()).field("scope", &self.scope()).finish()
    }
}

/// One active rule of a loaded projection.
#[derive(Clone, Copy)]
pub struct RuleRef<'a>(&'a ArchivedFrozenRule);

impl<'a> RuleRef<'a> {
    /// Number of its id (`R-3` is 3).
    pub fn number(self) -> u32 {
        self.0.number.to_native()
    }

    /// The instruction.
    pub fn text(self) -> &'a str {
        self.0.text.as_str()
    }

    /// Where it applies.
    pub fn applies_to(self) -> impl ExactSizeIterator<Item = Selector> + 'a {
        self.0.applies_to.iter().map(selector_of)
    }

    /// Where it does not.
    pub fn does_not_apply_to(self) -> impl ExactSizeIterator<Item = Selector> + 'a {
        self.0.does_not_apply_to.iter().map(selector_of)
    }

    /// Its window.
    pub fn window(self) -> Window {
        Window { since: self.0.window.0.to_native(), until: self.0.window.1.as_ref().map(|u| u.to_native()) }
    }

    /// Review status.
    pub fn status(self) -> Status {
        status_of(self.0.status).unwrap_or(Status::Draft)
    }

    /// Priority.
    pub fn priority(self) -> i32 {
        self.0.priority.to_native()
    }

    /// The editorial verdict in force.
    pub fn verdict(self) -> Option<Verdict> {
        verdict_of(self.0.verdict).flatten()
    }
}

impl fmt::Debug for RuleRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleRef").field("number", &self.number()).field("text", &self.text()).finish()
    }
}

/// A selector from its frozen form (checked by [`Frozen::load`]: the code is known and
/// a record number is a valid id).
fn selector_of(selector: &ArchivedTuple4<u8, ArchivedString, u32_le, ArchivedOption<u32_le>>) -> Selector {
    match selector.0 {
        0 => Selector::Kind(selector.1.as_str().to_owned()),
        1 => Selector::Record(
            RecordId::new(RecordKind::Term, selector.2.to_native()).expect("checked when the projection was loaded"),
        ),
        2 => Selector::Chapters(Window {
            since: selector.2.to_native(),
            until: selector.3.as_ref().map(|until| until.to_native()),
        }),
        3 => Selector::Dialogue,
        _ => Selector::Narration,
    }
}

fn policy_code(policy: ConflictPolicy) -> u8 {
    match policy {
        ConflictPolicy::Flag => 0,
        ConflictPolicy::PreferSpecific => 1,
        ConflictPolicy::PreferPriority => 2,
        ConflictPolicy::PreferApproved => 3,
    }
}

fn policy_of(code: u8) -> Option<ConflictPolicy> {
    match code {
        0 => Some(ConflictPolicy::Flag),
        1 => Some(ConflictPolicy::PreferSpecific),
        2 => Some(ConflictPolicy::PreferPriority),
        3 => Some(ConflictPolicy::PreferApproved),
        _ => None,
    }
}

// The codes of the table, both ways. `None` is a code this build does not know; the
// outer `Option` of the decoders is "unknown code", the inner one "no value".

fn gender_code(gender: Option<Gender>) -> u8 {
    match gender {
        None => 0,
        Some(Gender::Masculine) => 1,
        Some(Gender::Feminine) => 2,
        Some(Gender::Neuter) => 3,
        Some(Gender::Plural) => 4,
    }
}

fn gender_of(code: u8) -> Option<Gender> {
    match code {
        1 => Some(Gender::Masculine),
        2 => Some(Gender::Feminine),
        3 => Some(Gender::Neuter),
        4 => Some(Gender::Plural),
        _ => None,
    }
}

fn status_code(status: Status) -> u8 {
    match status {
        Status::Approved => 0,
        Status::Auto => 1,
        Status::Draft => 2,
    }
}

fn status_of(code: u8) -> Option<Status> {
    match code {
        0 => Some(Status::Approved),
        1 => Some(Status::Auto),
        2 => Some(Status::Draft),
        _ => None,
    }
}

fn logic_code(logic: KeyLogic) -> u8 {
    match logic {
        KeyLogic::AndAny => 0,
        KeyLogic::AndAll => 1,
        KeyLogic::NotAny => 2,
        KeyLogic::NotAll => 3,
    }
}

fn logic_of(code: u8) -> Option<KeyLogic> {
    match code {
        0 => Some(KeyLogic::AndAny),
        1 => Some(KeyLogic::AndAll),
        2 => Some(KeyLogic::NotAny),
        3 => Some(KeyLogic::NotAll),
        _ => None,
    }
}

fn verdict_code(verdict: Option<Verdict>) -> u8 {
    match verdict {
        None | Some(Verdict::Withdraw) => 0,
        Some(Verdict::Accept) => 1,
        Some(Verdict::Verify) => 2,
        Some(Verdict::Reject) => 3,
    }
}

fn verdict_of(code: u8) -> Option<Option<Verdict>> {
    match code {
        0 => Some(None),
        1 => Some(Some(Verdict::Accept)),
        2 => Some(Some(Verdict::Verify)),
        3 => Some(Some(Verdict::Reject)),
        _ => None,
    }
}

fn alias_kind_code(kind: Option<AliasKind>) -> u8 {
    match kind {
        None => 0,
        Some(AliasKind::Variant) => 1,
        Some(AliasKind::Nickname) => 2,
        Some(AliasKind::Title) => 3,
        Some(AliasKind::Reading) => 4,
    }
}

fn alias_kind_of(code: u8) -> Option<Option<AliasKind>> {
    match code {
        0 => Some(None),
        1 => Some(Some(AliasKind::Variant)),
        2 => Some(Some(AliasKind::Nickname)),
        3 => Some(Some(AliasKind::Title)),
        4 => Some(Some(AliasKind::Reading)),
        _ => None,
    }
}

/// The consistency checks of [`Frozen::load`] (see the module docs).
fn check_table(table: &ArchivedFrozenTable, matcher: &Matcher) -> Result<(), FrozenError> {
    let bad = |detail: String| Err(FrozenError::Table(detail));
    let n_terms = table.terms.len();
    if u32::try_from(n_terms).is_err() || u32::try_from(table.surfaces.len()).is_err() {
        return bad(format!("{n_terms} terms, {} surfaces", table.surfaces.len()));
    }
    let mut previous: Option<u32> = None;
    for (idx, term) in table.terms.iter().enumerate() {
        let number = term.number.to_native();
        if previous.is_some_and(|previous| previous >= number) {
            return bad(format!("term {idx} (T-{number}) is out of id order"));
        }
        previous = Some(number);
        let code = |field: &str, value: u8| format!("term T-{number}: unknown {field} code {value}");
        if gender_of(term.gender).is_none() && term.gender != 0 {
            return bad(code("gender", term.gender));
        }
        if status_of(term.status).is_none() {
            return bad(code("status", term.status));
        }
        if verdict_of(term.verdict).is_none() {
            return bad(code("verdict", term.verdict));
        }
        if let Some(secondary) = term.secondary.as_ref() {
            if logic_of(secondary.0).is_none() {
                return bad(code("secondary logic", secondary.0));
            }
        }
    }
    let mut constant = table.constant.iter().map(|idx| idx.to_native() as usize);
    let mut expected = table.terms.iter().enumerate().filter(|(_, term)| term.constant).map(|(idx, _)| idx);
    loop {
        match (constant.next(), expected.next()) {
            (None, None) => break,
            (found, expected) if found == expected => {}
            (found, expected) => {
                return bad(format!("constant list names term index {found:?} where {expected:?} was expected"));
            }
        }
    }
    for (idx, surface) in table.surfaces.iter().enumerate() {
        let term = surface.term.to_native() as usize;
        if term >= n_terms {
            return bad(format!("surface {idx} names term index {term} of {n_terms}"));
        }
        if alias_kind_of(surface.kind).is_none() {
            return bad(format!("surface {idx}: unknown kind code {}", surface.kind));
        }
    }
    for (idx, summary) in table.summaries.iter().enumerate() {
        let (scope, from, to) = (summary.scope.0, summary.scope.1.to_native(), summary.scope.2.to_native());
        let fine = match scope {
            0 => from == to,
            1 => from <= to,
            2 => from == 0 && to == 0,
            _ => false,
        };
        if !fine {
            return bad(format!("summary {idx} (S-{}): scope ({scope}, {from}, {to})", summary.number.to_native()));
        }
    }
    if table.summaries.iter().zip(table.summaries.iter().skip(1)).any(|(a, b)| a.number >= b.number) {
        return bad("summaries are out of id order".into());
    }
    if policy_of(table.policy).is_none() {
        return bad(format!("unknown conflict policy code {}", table.policy));
    }
    for (idx, rule) in table.rules.iter().enumerate() {
        let number = rule.number.to_native();
        let code = |field: &str, value: u8| format!("rule R-{number}: unknown {field} code {value}");
        if status_of(rule.status).is_none() {
            return bad(code("status", rule.status));
        }
        if verdict_of(rule.verdict).is_none() {
            return bad(code("verdict", rule.verdict));
        }
        if RecordId::new(RecordKind::Rule, number).is_none() {
            return bad(format!("rule {idx}: number {number} is not an id"));
        }
        for selector in rule.applies_to.iter().chain(rule.does_not_apply_to.iter()) {
            let fine = match selector.0 {
                0 | 3 | 4 => true,
                1 => RecordId::new(RecordKind::Term, selector.2.to_native()).is_some(),
                2 => selector.3.as_ref().is_none_or(|until| selector.2.to_native() <= until.to_native()),
                _ => false,
            };
            if !fine {
                return bad(format!("rule R-{number}: bad selector code {} ({})", selector.0, selector.2.to_native()));
            }
        }
    }
    if table.rules.iter().zip(table.rules.iter().skip(1)).any(|(a, b)| a.number >= b.number) {
        return bad("rules are out of id order".into());
    }
    if let Some(cascade) = table.cascade.as_ref() {
        if !(1..=ledger_model::limits::CASCADE_DEPTH_MAX).contains(&cascade.depth) {
            return bad(format!("cascade depth {}", cascade.depth));
        }
        let increasing = |list: &mut dyn Iterator<Item = u32>| -> bool {
            let mut previous: Option<u32> = None;
            for idx in list {
                if idx as usize >= n_terms || previous.is_some_and(|previous| previous >= idx) {
                    return false;
                }
                previous = Some(idx);
            }
            true
        };
        if !increasing(&mut cascade.notes.iter().map(|note| note.0.to_native())) {
            return bad("cascade notes are out of order or name no term".into());
        }
        if !increasing(&mut cascade.quiet.iter().map(|idx| idx.to_native()))
            || !increasing(&mut cascade.direct_only.iter().map(|idx| idx.to_native()))
        {
            return bad("cascade lists are out of order or name no term".into());
        }
    }
    // The matcher belongs to this table: its values name every surface exactly once
    // (freeze gives each surface one key whose value is its index).
    let mut named = vec![false; table.surfaces.len()];
    for pattern in matcher.pattern_ids() {
        for &value in matcher.values(pattern) {
            match named.get_mut(value as usize) {
                Some(seen @ false) => *seen = true,
                Some(true) => return bad(format!("matcher names surface {value} twice")),
                None => return bad(format!("matcher value {value} names no surface (of {})", named.len())),
            }
        }
    }
    if let Some(missing) = named.iter().position(|seen| !seen) {
        return bad(format!("matcher does not find surface {missing}"));
    }
    Ok(())
}
