//! A book: the ledger plus the projections folded from it. Every write goes through
//! [`Book::submit`]: fold the state at the head, `decide`, then append with that head
//! as the expected head, so the check and the append see the same head (a conflict
//! means another writer moved it; the caller decides whether to retry).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use ledger::{Appended, Attachments, Ledger, VerifyError, VerifyReport};
use ledger_model::*;
use matcher::Profile;
use projections::frozen::{profile_of, Frozen};
use projections::release::view_id;
use projections::{
    checkpoint, decide_dry, decide_in_place, decide_indexed, plan_rollback, Decided, Environment, Reader, Rejection,
    SnapshotId, SnapshotTracker, State, SurfaceIndex, Touched, Touches, Warning,
};

use crate::error::BookError;

/// blake3 `derive_key` context of the id a party's view of a past snapshot is
/// frozen under when the head releases less to the party than that snapshot did.
pub const CUT_VIEW_CONTEXT: &str = "lorebank 2026-12-02 party view cut by the head v1";

/// What a reader may read at one revision ([`Book::read_at`]).
#[derive(Clone, Debug)]
pub struct ReadAt {
    /// The book's full state at the revision, shared with the book.
    pub full: Arc<State>,
    /// The reader's view of it, when it is not the full state.
    view: Option<State>,
    /// Whether the head took away something the revision released to the reader.
    pub cut: bool,
    /// The snapshot ID at the revision (the snapshot's, whoever reads).
    pub snapshot: SnapshotId,
    /// The snapshot ID at the head (for a party; the revision's for the full view).
    head_snapshot: SnapshotId,
}

impl ReadAt {
    /// What the reader sees.
    pub fn view(&self) -> &State {
        self.view.as_ref().unwrap_or(&self.full)
    }

    /// What the reader sees, shared: the book's own state for the full view, the
    /// reader's view (made for this read) otherwise.
    pub fn into_view(self) -> Arc<State> {
        self.view.map_or(self.full, Arc::new)
    }
}

/// When a writer files a checkpoint of the state ([`Book::submit`]): after a write,
/// once `every_events` events have been appended since the newest checkpoint, or
/// `every_ms` have passed since it was written (by the writes' own clock), whichever
/// comes first; at most `keep` are kept. Reads start from the newest checkpoint at or
/// before the revision they need and fold only the events after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointPolicy {
    /// Events appended since the newest checkpoint that make the next one due.
    pub every_events: u64,
    /// Time since the newest checkpoint (unix ms of the writes) that makes the next
    /// one due, if any event came since.
    pub every_ms: u64,
    /// Checkpoints kept (the two newest, and older ones spread over the log).
    pub keep: usize,
}

impl Default for CheckpointPolicy {
    fn default() -> CheckpointPolicy {
        CheckpointPolicy {
            every_events: CHECKPOINT_EVERY_EVENTS,
            every_ms: CHECKPOINT_EVERY_MS,
            keep: CHECKPOINTS_KEPT,
        }
    }
}

/// Default of [`CheckpointPolicy::every_events`]: a read then folds at most this many
/// events past a checkpoint (about 10 ms in a release build).
pub const CHECKPOINT_EVERY_EVENTS: u64 = 2_000;
/// Default of [`CheckpointPolicy::every_ms`]: ten minutes.
pub const CHECKPOINT_EVERY_MS: u64 = 10 * 60 * 1000;
/// What an open ledger of a small book holds in memory before anything is folded
/// (redb's pages read so far, the writer thread, the handles), as measured with
/// 10,000 books on one node (docs/benchmarks.md): the base of
/// [`Book::resident_bytes`].
pub const OPEN_LEDGER_BYTES: u64 = 288 * 1024;

/// Default of [`CheckpointPolicy::keep`].
pub const CHECKPOINTS_KEPT: usize = 6;

/// How often [`Book::verify_with_progress`] reports: every this many events or
/// receipts.
pub const VERIFY_PROGRESS_EVERY: u64 = 256;

/// The phase a verify is in ([`Book::verify_with_progress`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyPhase {
    /// The stored objects: the event chain, blobs, documents, caches, checkpoints.
    Objects,
    /// Folding every event.
    Events {
        /// Events folded.
        done: u64,
        /// Events of the log.
        total: u64,
    },
    /// Every recorded receipt and its texts.
    Receipts {
        /// Receipts checked.
        done: usize,
        /// Receipts filed.
        total: usize,
    },
}

/// A book file opened for reading and writing.
pub struct Book {
    ledger: Arc<Ledger>,
    /// The state at the head as last seen, kept so writes need not refold the log.
    /// Reads share it ([`Book::state`]); a write decides on it in place, copying it
    /// first only while a reader still holds it ([`Book::submit`]).
    head: Option<Arc<State>>,
    /// The last state computed below the head, so a command asking for ascending
    /// revisions (audit, diff) folds each event once.
    recent: Option<Arc<State>>,
    /// When checkpoints are written.
    policy: CheckpointPolicy,
    /// The checkpoint being written in the background, if any.
    checkpointing: Option<JoinHandle<()>>,
    /// Snapshot ID by revision (the log is append-only, so these never change).
    snapshot_ids: BTreeMap<Seq, SnapshotId>,
    /// The encoded records of the head state at this revision, so a write hashes the
    /// snapshot document without encoding every record again.
    tracker: Option<(Seq, SnapshotTracker)>,
    /// The head's index of folded surfaces, renderings and supersessions at this
    /// revision, so a write checks UNIQUE and the same-rendering warning over the
    /// groups it touches instead of folding every surface again.
    surface_index: Option<(Seq, SurfaceIndex)>,
    /// Frozen projections held in memory by snapshot (or view) ID, each with when it
    /// was last used: at most [`FROZEN_HELD_MAX`], the least recently used let go
    /// first ([`Book::hold_frozen`]).
    ///
    /// [`FROZEN_HELD_MAX`]: ledger_model::limits::FROZEN_HELD_MAX
    frozen: BTreeMap<SnapshotId, (Arc<Frozen>, u64)>,
    /// Uses of `frozen` so far: the clock of its least-recently-used order.
    frozen_uses: u64,
    /// The projections of `frozen` the book built and has not filed in its cache yet,
    /// newest last, at most [`CACHE_PUTS_QUEUED_MAX`]: filed when the book closes
    /// ([`Book::file_projections`]), so that no write waits for their megabytes to be
    /// written.
    ///
    /// [`CACHE_PUTS_QUEUED_MAX`]: ledger_model::limits::CACHE_PUTS_QUEUED_MAX
    unfiled: Vec<SnapshotId>,
    /// Loaded normalization profiles by table id.
    profiles: BTreeMap<Hash32, Arc<Profile>>,
    /// The head as shared by [`Book::assembler_for`], by reader, while it is the head.
    assemblers: BTreeMap<Reader, crate::chunks::Assembler>,
    /// What the demonstrations' pool read of each receipt, shared by the assemblers.
    examples: crate::examples::SharedExtracts,
    /// The encoded sizes of the head and recent states, by the revisions they are at
    /// ([`Book::resident_bytes`]).
    state_bytes: Option<((Seq, Seq), (u64, u64))>,
    /// The idempotency claim whose marker the next appended batch carries
    /// ([`Book::claimed`]).
    claim: Option<crate::idempotency::Claim>,
    /// The translation proxy's index of the source text, under the key of what it
    /// was built from: the chapters' text ids and the profile ([`Book::proxy_locate`]).
    pub(crate) proxy_index: Option<(Hash32, Arc<locate::Index>)>,
    /// The terms each recorded chunk's latest receipt injected and its latest check
    /// flagged, by receipt and check id, for the glossary listing ([`Book::records`]).
    pub(crate) tallies: crate::records::Tallies,
}

/// What `decide` said of an accepted batch, without the state it leads to: the book
/// keeps that state as its head rather than copying it for every write.
#[derive(Debug)]
pub struct Accepted {
    /// The events appended (or, in a dry run, that would be), in order.
    pub events: Vec<NewEvent>,
    /// Indexes (in the submitted batch) of events dropped as identical to the
    /// current version.
    pub dropped: Vec<usize>,
    /// Conflicts worth a look that do not refuse the batch.
    pub warnings: Vec<Warning>,
}

/// The outcome of an accepted write.
#[derive(Debug)]
pub struct Submitted {
    /// What `decide` said: events appended, no-ops dropped, warnings.
    pub decision: Accepted,
    /// The revision after the batch: the head it made (in a dry run, would make).
    pub revision: Seq,
    /// Where the batch landed; `None` when every event was a no-op.
    pub appended: Option<Appended>,
    /// The snapshot ID after the batch.
    pub snapshot: SnapshotId,
}

impl Book {
    /// Wraps an open ledger.
    pub fn new(ledger: Ledger) -> Book {
        Book {
            ledger: Arc::new(ledger),
            head: None,
            recent: None,
            policy: CheckpointPolicy::default(),
            checkpointing: None,
            snapshot_ids: BTreeMap::new(),
            tracker: None,
            surface_index: None,
            frozen: BTreeMap::new(),
            frozen_uses: 0,
            unfiled: Vec::new(),
            profiles: BTreeMap::new(),
            assemblers: BTreeMap::new(),
            examples: Default::default(),
            state_bytes: None,
            claim: None,
            proxy_index: None,
            tallies: crate::records::Tallies::default(),
        }
    }

    /// Sets the claim the next appended batch carries ([`Book::claimed`]).
    pub(crate) fn set_claim(&mut self, claim: Option<crate::idempotency::Claim>) {
        self.claim = claim;
    }

    /// An estimate of the memory the open book holds, for a library's budget: an open
    /// ledger's own ([`OPEN_LEDGER_BYTES`]), its frozen projections and fold tables as
    /// they count themselves, twice the encoded size of each state it keeps (a
    /// folded state's maps and strings take about that; `docs/benchmarks.md` compares
    /// the estimate with the process's resident memory), and the head's snapshot
    /// tracker and surface index once a write made them (its records' encodings and
    /// folded keys, as they count themselves), and the glossary listing's tallies of
    /// the recorded chunks once a listing made them. Encoding a state costs a
    /// fold's worth of time once per revision; the result is kept until the states
    /// change.
    pub fn resident_bytes(&mut self) -> u64 {
        let frozen: usize = self.frozen.values().map(|(frozen, _)| frozen.heap_bytes()).sum();
        let profiles: usize = self.profiles.values().map(|profile| profile.heap_bytes()).sum();
        let revision = |state: &Option<Arc<State>>| state.as_ref().map_or(Seq::ZERO, |state| state.revision());
        let key = (revision(&self.head), revision(&self.recent));
        let (head, recent) = match self.state_bytes {
            Some((known, bytes)) if known == key => bytes,
            _ => {
                let encoded = |state: &Option<Arc<State>>| {
                    state
                        .as_ref()
                        .map_or(0, |state| checkpoint::encode(state, SnapshotId(Hash32::GENESIS)).len() as u64)
                };
                let bytes = (encoded(&self.head), encoded(&self.recent));
                self.state_bytes = Some((key, bytes));
                bytes
            }
        };
        // Each assembler shares the frozen projections and the head state.
        let tracker = self.tracker.as_ref().map_or(0, |(_, tracker)| tracker.heap_bytes()) as u64;
        let index = self.surface_index.as_ref().map_or(0, |(_, index)| index.heap_bytes()) as u64;
        let tallies = self.tallies.heap_bytes() as u64;
        OPEN_LEDGER_BYTES + (frozen + profiles) as u64 + 2 * (head + recent) + tracker + index + tallies
    }

    /// Sets when checkpoints are written (tests and benchmarks; the default suits a
    /// book of any size).
    pub fn set_checkpoint_policy(&mut self, policy: CheckpointPolicy) {
        self.policy = policy;
    }

    /// Opens the book at `path`.
    pub fn open(path: &Path) -> Result<Book, BookError> {
        Ok(Book::new(Ledger::open(path)?))
    }

    /// The underlying ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The entries of an append-only index of blobs (a receipt's checks or proxy
    /// records, a request's stored answers): the blob whose id is `entry(n)`, for `n`
    /// from 0 up to the first that is not stored, each with its id. Blobs are never
    /// rewritten, so an index grows by one blob an entry.
    pub(crate) fn index_entries(&self, entry: impl Fn(u32) -> Hash32) -> Result<Vec<(Hash32, Vec<u8>)>, BookError> {
        let mut entries = Vec::new();
        for n in 0.. {
            let id = entry(n);
            let Some(bytes) = self.ledger.blob(id)? else { break };
            entries.push((id, bytes));
        }
        Ok(entries)
    }

    /// The underlying ledger, shared: for reads and receipt filings that need not
    /// wait for the book (the ledger takes its own locks).
    pub fn ledger_handle(&self) -> Arc<Ledger> {
        Arc::clone(&self.ledger)
    }

    /// The demonstrations' per-receipt cache, for an assembler of this book.
    pub(crate) fn example_extracts(&self) -> crate::examples::SharedExtracts {
        Arc::clone(&self.examples)
    }

    pub(crate) fn assembler_cache(&self, reader: &Reader) -> Option<crate::chunks::Assembler> {
        self.assemblers.get(reader).cloned()
    }

    /// Keeps `assembler` for its reader; assemblers of another revision are dropped.
    pub(crate) fn set_assembler_cache(&mut self, reader: Reader, assembler: crate::chunks::Assembler) {
        self.assemblers.retain(|_, kept| kept.revision() == assembler.revision());
        self.assemblers.insert(reader, assembler);
    }

    /// The state as of revision `as_of` (the head when `None`): from memory, or from
    /// the newest checkpoint at or before it, folding only the events after that.
    /// Calls `progress` with (events folded, events to fold) now and then.
    ///
    /// The state is shared with the book, which keeps it for the next read: a read at
    /// a revision the book holds (the head, or the last one below it) copies nothing.
    pub fn state_with_progress(
        &mut self,
        as_of: Option<Seq>,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<Arc<State>, BookError> {
        let head = self.ledger.head()?.seq;
        let to = match as_of {
            Some(revision) if revision > head => return Err(BookError::BeyondHead { revision, head }),
            Some(revision) => revision,
            None => head,
        };
        for known in [&self.head, &self.recent].into_iter().flatten() {
            if known.revision() == to {
                return Ok(Arc::clone(known));
            }
        }
        let mut shared = self.start_for(to)?;
        // The state this fold replaces lets go of it first, so a fold that starts from
        // it (a head another writer moved, the next of ascending revisions) goes on in
        // place; a start something else still holds is copied.
        let replaced = if to == head { &mut self.head } else { &mut self.recent };
        if replaced.as_ref().is_some_and(|old| Arc::ptr_eq(old, &shared)) {
            *replaced = None;
        }
        let state = Arc::make_mut(&mut shared);
        let n_to_fold = to.0 - state.revision().0;
        let mut n_done = 0u64;
        if n_to_fold > 0 {
            self.ledger.scan_pipelined(state.revision().next(), to, |event, _| {
                state.apply_owned(event);
                n_done += 1;
                if n_done % 65_536 == 0 {
                    progress(n_done, n_to_fold);
                }
                ControlFlow::Continue(())
            })?;
        }
        progress(n_done, n_to_fold);
        if to == head {
            self.head = Some(Arc::clone(&shared));
        } else {
            self.recent = Some(Arc::clone(&shared));
        }
        Ok(shared)
    }

    /// Where a fold up to `to` starts: the latest of the states in memory and the
    /// newest usable checkpoint at or before `to`, or the empty book. A checkpoint
    /// that does not decode to a state of its own revision is dropped (on a writable
    /// book) and the next older one tried.
    fn start_for(&mut self, to: Seq) -> Result<Arc<State>, BookError> {
        let in_memory = [&self.head, &self.recent]
            .into_iter()
            .flatten()
            .filter(|known| known.revision() <= to)
            .max_by_key(|known| known.revision());
        let from_memory = in_memory.map_or(Seq::ZERO, |known| known.revision());
        let mut below = to;
        while below > from_memory {
            let Some((info, bytes)) = self.ledger.checkpoint_at_or_before(below)? else { break };
            if info.revision <= from_memory {
                break;
            }
            match checkpoint::decode(&bytes) {
                Ok((state, snapshot)) if state.revision() == info.revision => {
                    self.snapshot_ids.insert(info.revision, snapshot);
                    return Ok(Arc::new(state));
                }
                _ => {
                    if !self.ledger.is_read_only() {
                        self.ledger.drop_checkpoints(&[info.revision.0])?;
                    }
                    below = Seq(info.revision.0 - 1);
                }
            }
        }
        Ok(in_memory.cloned().unwrap_or_default())
    }

    /// Starts writing a checkpoint of `state` (the head after a write at `now_ms`)
    /// in the background if one is due under the policy. The writer's answer does
    /// not wait for it; dropping the book does. A checkpoint that fails to be
    /// written is derived data lost, nothing more: reads fold a longer tail.
    /// The thread shares `state` while it encodes it: a write that comes before the
    /// encoding is done copies the head instead of changing what is being encoded.
    fn checkpoint_if_due(&mut self, state: &Arc<State>, snapshot: SnapshotId, now_ms: u64) {
        if self.ledger.is_read_only() {
            return;
        }
        // The write is done whatever happens here: a failed read skips the checkpoint.
        let Ok(checkpoints) = self.ledger.checkpoints() else { return };
        let newest = checkpoints.last().copied();
        let (since, written_at_ms) = newest.map_or((Seq::ZERO, 0), |info| (info.revision, info.written_at_ms));
        let n_since = state.revision().0.saturating_sub(since.0);
        let due = n_since >= self.policy.every_events
            || (n_since > 0 && now_ms.saturating_sub(written_at_ms) >= self.policy.every_ms);
        if !due {
            return;
        }
        self.wait_for_checkpoint();
        let ledger = Arc::clone(&self.ledger);
        let state = Arc::clone(state);
        let keep = self.policy.keep;
        self.checkpointing = Some(std::thread::spawn(move || {
            let bytes = checkpoint::encode(&state, snapshot);
            let revision = state.revision();
            // Let go of the head before the durable write: a write that comes while
            // the thread still shares it copies the whole state.
            drop(state);
            // Derived data: a failure here loses a shortcut, never an event.
            let _ = ledger.put_checkpoint(revision, now_ms, &bytes, keep);
        }));
    }

    /// Forgets the states kept in memory, so the next read starts from a checkpoint
    /// or event 1.
    pub fn forget_states(&mut self) {
        self.head = None;
        self.recent = None;
        self.assemblers.clear();
        self.snapshot_ids.clear();
    }

    /// Hands the projections the book built and has not filed yet to the ledger's
    /// writer, which makes their bytes and files them in the book's cache
    /// ([`Ledger::cache_put_later`]), newest first: what the next process that opens
    /// the book loads instead of building. Called when the book closes.
    pub fn file_projections(&mut self) {
        for id in std::mem::take(&mut self.unfiled).into_iter().rev() {
            if let Some((frozen, _)) = self.frozen.get(&id) {
                let frozen = Arc::clone(frozen);
                self.ledger.cache_put_later(id.0, move || frozen.to_bytes());
            }
        }
    }

    /// The projection held under `id`, now its most recently used.
    fn held_frozen(&mut self, id: SnapshotId) -> Option<Arc<Frozen>> {
        self.frozen_uses += 1;
        let now = self.frozen_uses;
        let (frozen, used) = self.frozen.get_mut(&id)?;
        *used = now;
        Some(Arc::clone(frozen))
    }

    /// Holds `frozen` under `id`, letting go of the least recently used projections
    /// past [`FROZEN_HELD_MAX`](ledger_model::limits::FROZEN_HELD_MAX) (one the book
    /// built and has not filed is then not filed: it is built again if it is needed).
    /// The head's assemblers keep their own.
    fn hold_frozen(&mut self, id: SnapshotId, frozen: &Arc<Frozen>) {
        self.frozen_uses += 1;
        self.frozen.insert(id, (Arc::clone(frozen), self.frozen_uses));
        while self.frozen.len() > ledger_model::limits::FROZEN_HELD_MAX {
            let Some(oldest) = self.frozen.iter().min_by_key(|(_, (_, used))| *used).map(|(id, _)| *id) else {
                break;
            };
            self.frozen.remove(&oldest);
            self.unfiled.retain(|unfiled| *unfiled != oldest);
        }
    }

    /// How many frozen projections the book holds in memory.
    pub fn n_frozen_held(&self) -> usize {
        self.frozen.len()
    }

    /// Forgets the frozen projections held in memory, built or loaded, so that the
    /// next one is built again (`rebuild`, after it drops the cache).
    pub(crate) fn forget_projections(&mut self) {
        self.frozen.clear();
        self.unfiled.clear();
        self.assemblers.clear();
    }

    /// Waits for the background checkpoint, if one is being written.
    pub fn wait_for_checkpoint(&mut self) {
        if let Some(job) = self.checkpointing.take() {
            let _ = job.join();
        }
    }

    /// Writes a checkpoint of the state at `revision` now, whatever the policy (for
    /// tests and tools; `rebuild` writes its own as it refolds).
    pub fn write_checkpoint(&mut self, revision: Seq, now_ms: u64) -> Result<(), BookError> {
        self.wait_for_checkpoint();
        let state = self.state(Some(revision))?;
        let snapshot = self.snapshot_id(&state);
        let bytes = checkpoint::encode(&state, snapshot);
        self.ledger.put_checkpoint(revision, now_ms, &bytes, self.policy.keep)?;
        Ok(())
    }

    /// The state as of revision `as_of` (the head when `None`), shared with the book
    /// ([`Book::state_with_progress`]).
    pub fn state(&mut self, as_of: Option<Seq>) -> Result<Arc<State>, BookError> {
        self.state_with_progress(as_of, |_, _| {})
    }

    /// The normalization profile the state's config names, loaded from the book and
    /// checked against its content id. `None` before any config.
    pub fn profile(&mut self, state: &State) -> Result<Option<Arc<Profile>>, BookError> {
        let Some(config) = state.config() else { return Ok(None) };
        let Some(table) = config.profile.table else {
            return Err(BookError::Profile(format!("profile {:?} names no fold table", config.profile.name)));
        };
        self.profile_by_id(table).map(Some)
    }

    /// A stored fold table by id, checked against it and kept loaded.
    pub fn profile_by_id(&mut self, table: Hash32) -> Result<Arc<Profile>, BookError> {
        if let Some(profile) = self.profiles.get(&table) {
            return Ok(Arc::clone(profile));
        }
        let bytes = self
            .ledger
            .blob(table)?
            .ok_or_else(|| BookError::Profile(format!("fold table {table} is not stored in the book")))?;
        let profile =
            Profile::from_bytes(&bytes).map_err(|error| BookError::Profile(format!("fold table {table}: {error}")))?;
        if profile.id().0 != table.0 {
            return Err(BookError::Profile(format!("fold table {table} hashes to {}", profile.id())));
        }
        let profile = Arc::new(profile);
        self.profiles.insert(table, Arc::clone(&profile));
        Ok(profile)
    }

    /// The snapshot ID of `state`, remembered by revision.
    pub fn snapshot_id(&mut self, state: &State) -> SnapshotId {
        *self.snapshot_ids.entry(state.revision()).or_insert_with(|| state.snapshot_id())
    }

    /// Decides and appends `batch` (with `blobs` stored alongside). With
    /// `expected_head`, fails with a conflict unless the head is still that.
    pub fn submit(
        &mut self,
        batch: &[NewEvent],
        expected_head: Option<Seq>,
        blobs: Vec<(Hash32, Vec<u8>)>,
    ) -> Result<Submitted, BookError> {
        // The head state itself is decided on, in place, not a copy of it (unless a
        // reader still holds it: copy on write); and the snapshot ID comes from the
        // head's tracker, touched by the batch.
        let mut shared = self.take_head()?;
        let state = Arc::make_mut(&mut shared);
        let head = state.revision();
        // A book that wrote before (it holds the head's tracker) keeps an index of
        // the head's keys, so its writes check only what they touch; a one-shot
        // command writes once and is not made to build it.
        let (kept, mut index) = self.take_kept(head);
        let wrote_before = kept.is_some();
        let mut tracker = kept.unwrap_or_else(|| SnapshotTracker::of(state));
        let decided = match self.decide_against(state, batch, expected_head, &blobs, wrote_before.then_some(&mut index))
        {
            Ok(decided) => decided,
            Err(error) => {
                // A refusal leaves the state, and so its index, as it was.
                self.head = Some(shared);
                self.keep(head, Some(tracker), index);
                return Err(error);
            }
        };
        let Decided { events, dropped, warnings } = decided;
        let revision = state.revision();
        // Each record the batch touched is re-encoded once, against the state after it.
        let mut touches = Touches::default();
        for event in &events {
            touches.add(Touched::of(&event.body));
        }
        tracker.touch_all(state, &mut touches);
        let snapshot = tracker.id(state);
        let accepted = |events| Accepted { events, dropped, warnings };
        if events.is_empty() {
            self.head = Some(shared);
            self.keep(head, Some(tracker), index);
            return Ok(Submitted { decision: accepted(events), revision, appended: None, snapshot });
        }
        let mut blobs = blobs;
        // A pending idempotency claim travels with the batch, in the same commit.
        if let Some(claim) = self.claim.take() {
            blobs.push(claim.blob(Seq(head.0 + 1)));
        }
        let attachments = Attachments { blobs, snapshot: Some(snapshot.0), documents: Vec::new() };
        // Not in the log: the state and tracker after the batch are dropped, and the
        // next read folds the head again.
        let appended = self.ledger.append_with(&events, Some(head), attachments)?;
        assert_eq!(revision, appended.last, "decide and the ledger disagree on the head");
        self.keep(revision, Some(tracker), index);
        self.snapshot_ids.insert(appended.last, snapshot);
        let now_ms = batch.iter().map(|event| event.recorded_at_ms).max().unwrap_or(0);
        self.checkpoint_if_due(&shared, snapshot, now_ms);
        self.head = Some(shared);
        Ok(Submitted { decision: accepted(events), revision, appended: Some(appended), snapshot })
    }

    /// Decides `batch` against the head as [`Book::submit`] would, and writes
    /// nothing: what a dry run reports.
    ///
    /// It decides on the head itself, with the head's index of keys and snapshot
    /// tracker when the book keeps them (a book that wrote before), and puts all
    /// three back as they were ([`decide_dry`]): on an open book it costs what the
    /// write's decision costs, not a copy of the head, a check of every key and an
    /// encoding of every record, as it did when it decided on a copy. (A caller that
    /// still holds the head, such as an assembly under way, makes it a copy, as for a
    /// write.) The head's assemblers are kept.
    pub fn dry_submit(&mut self, batch: &[NewEvent], blobs: &[(Hash32, Vec<u8>)]) -> Result<Submitted, BookError> {
        let mut shared = self.state(None)?;
        let head = shared.revision();
        // The head's assemblers let go of it while it changes, and get it back after,
        // as it was: the next assembly does not build them again.
        let assemblers: Vec<(Reader, crate::chunks::Detached)> = std::mem::take(&mut self.assemblers)
            .into_iter()
            .filter(|(_, assembler)| assembler.revision() == head)
            .map(|(reader, assembler)| (reader, assembler.detach()))
            .collect();
        self.head = None;
        let state = Arc::make_mut(&mut shared);
        let (mut tracker, mut index) = self.take_kept(head);
        let mut again = Touches::default();
        let answer = self.decide_with(state, batch, None, blobs, |state, env| {
            decide_dry(state, index.as_mut(), env, batch, |after, decided| {
                let snapshot = match tracker.as_mut() {
                    Some(tracker) => {
                        for event in &decided.events {
                            again.add(Touched::of(&event.body));
                        }
                        tracker.touch_all(after, &mut again.clone());
                        tracker.id(after)
                    }
                    None => after.snapshot_id(),
                };
                (after.revision(), snapshot)
            })
        });
        // The state is the head again: the tracker re-encodes what it took in of the
        // batch as the head holds it.
        if let Some(tracker) = tracker.as_mut() {
            tracker.touch_all(state, &mut again);
        }
        self.assemblers =
            assemblers.into_iter().map(|(reader, detached)| (reader, detached.attach(Arc::clone(&shared)))).collect();
        self.head = Some(shared);
        self.keep(head, tracker, index);
        let (Decided { events, dropped, warnings }, (revision, snapshot)) = answer?;
        Ok(Submitted { decision: Accepted { events, dropped, warnings }, revision, appended: None, snapshot })
    }

    /// The head's snapshot tracker and index of keys, taken out of the book: each
    /// only when the book keeps it for revision `head` (from its writes).
    fn take_kept(&mut self, head: Seq) -> (Option<SnapshotTracker>, Option<SurfaceIndex>) {
        let tracker = self.tracker.take().filter(|(at, _)| *at == head).map(|(_, tracker)| tracker);
        let index = self.surface_index.take().filter(|(at, _)| *at == head).map(|(_, index)| index);
        (tracker, index)
    }

    /// Keeps `tracker` and `index` as those of revision `at`.
    fn keep(&mut self, at: Seq, tracker: Option<SnapshotTracker>, index: Option<SurfaceIndex>) {
        self.tracker = tracker.map(|tracker| (at, tracker));
        self.surface_index = index.map(|index| (at, index));
    }

    /// The state at the head, taken out of the book (folded first when the book does
    /// not hold it): the caller puts it, or what it became, back. The assemblers kept
    /// for the head let go of it too, so a write that changes it copies it only when a
    /// caller still holds it; they are made again from the kept frozen projections.
    fn take_head(&mut self) -> Result<Arc<State>, BookError> {
        self.assemblers.clear();
        let state = self.state(None)?;
        self.head = None;
        Ok(state)
    }

    /// Everything [`Book::submit`] does before it appends, on `state` (the head, or a
    /// copy of it for a dry run): the lookups `decide` needs, and the decision, made in
    /// place, so `state` is then the state after the batch (unchanged when refused).
    /// With `index` (the head's surface index, `None` inside when it has none yet),
    /// the decision keeps it ([`decide_indexed`]).
    pub(crate) fn decide_against(
        &mut self,
        state: &mut State,
        batch: &[NewEvent],
        expected_head: Option<Seq>,
        blobs: &[(Hash32, Vec<u8>)],
        index: Option<&mut Option<SurfaceIndex>>,
    ) -> Result<Decided, BookError> {
        self.decide_with(state, batch, expected_head, blobs, |state, env| match index {
            Some(index) => decide_indexed(state, index, env, batch),
            None => decide_in_place(state, env, batch),
        })
    }

    /// The lookups `decide` needs for `batch` on `state` (checking the expected head
    /// first), then `decide` itself with them.
    fn decide_with<R>(
        &mut self,
        state: &mut State,
        batch: &[NewEvent],
        expected_head: Option<Seq>,
        blobs: &[(Hash32, Vec<u8>)],
        decide: impl FnOnce(&mut State, &Environment<'_>) -> Result<R, Rejection>,
    ) -> Result<R, BookError> {
        let head = state.revision();
        if let Some(expected) = expected_head {
            if expected != head {
                return Err(ledger::AppendError::Conflict { expected, actual: head }.into());
            }
        }
        // What decide needs to look up: the fold tables the batch names (stored in
        // the book or brought along), and the snapshots rollback markers name.
        // The table in force is stored; a config that leaves out its profile keeps it.
        let mut tables: BTreeSet<Hash32> = state.config().and_then(|config| config.profile.table).into_iter().collect();
        let mut targets = BTreeMap::new();
        for event in batch {
            match &event.body {
                Body::ConfigSet(ConfigSet { profile: ProfileRef { table: Some(table), .. }, .. })
                    if blobs.iter().any(|(id, _)| id == table) || self.ledger.blob(*table)?.is_some() =>
                {
                    tables.insert(*table);
                }
                Body::RollbackMarker(marker) if marker.to <= head => {
                    let target = self.state(Some(marker.to))?;
                    targets.insert(marker.to, self.snapshot_id(&target));
                }
                _ => {}
            }
        }
        // The batch may set a new config; fold with the profile in force after it.
        let mut scratch_profile = None;
        for event in batch {
            let Body::ConfigSet(ConfigSet { profile: ProfileRef { table: Some(table), .. }, .. }) = &event.body else {
                continue;
            };
            if !tables.contains(table) {
                continue;
            }
            scratch_profile = Some(match blobs.iter().find(|(id, _)| id == table) {
                Some((_, bytes)) => {
                    let profile = Profile::from_bytes(bytes)
                        .map_err(|error| BookError::Profile(format!("fold table {table}: {error}")))?;
                    // A table is stored under its content id, never another.
                    if profile.id().0 != table.0 {
                        return Err(BookError::Profile(format!("fold table {table} hashes to {}", profile.id())));
                    }
                    Arc::new(profile)
                }
                None => self.profile_by_id(*table)?,
            });
        }
        let profile = match scratch_profile {
            Some(profile) => Some(profile),
            None => self.profile(state)?,
        };
        let fold = |text: &str| match &profile {
            Some(profile) => profile.fold(text),
            None => text.to_owned(),
        };
        let has_table = |table: Hash32| tables.contains(&table);
        // The source texts the batch names: brought along (checked to be UTF-8 that
        // hashes to its id, never stored under another) or stored in the book.
        let mut texts: BTreeMap<Hash32, u64> = BTreeMap::new();
        for event in batch {
            let Body::SourceSet(SourceSet { chapter, text: Some(text), .. }) = &event.body else { continue };
            if texts.contains_key(text) {
                continue;
            }
            let length = match blobs.iter().find(|(id, _)| id == text) {
                Some((_, bytes)) => {
                    if std::str::from_utf8(bytes).is_err() || source_text_id(bytes) != *text {
                        return Err(BookError::InvalidField {
                            field: "source_set.text",
                            message: format!("the text brought for chapter {chapter} is not UTF-8 hashing to {text}"),
                        });
                    }
                    Some(bytes.len() as u64)
                }
                None => self.ledger.blob(*text)?.map(|bytes| bytes.len() as u64),
            };
            if let Some(length) = length {
                texts.insert(*text, length);
            }
        }
        let source_text = |text: Hash32| texts.get(&text).copied();
        let snapshot_at = |revision: Seq| targets.get(&revision).copied();
        let env = Environment {
            fold: &fold,
            render_formats: assembly::assemble::RENDER_FORMATS,
            token_estimators: assembly::assemble::TOKEN_ESTIMATORS,
            has_table: &has_table,
            source_text: &source_text,
            snapshot_at: &snapshot_at,
        };
        Ok(decide(state, &env)?)
    }

    /// The frozen projection of `state` for the full view ([`Book::frozen_for`]).
    pub fn frozen(&mut self, state: &State) -> Result<(Arc<Frozen>, bool), BookError> {
        self.frozen_for(state, &Reader::Full)
    }

    /// The frozen projection `reader` assembles with at `state` (of its view,
    /// [`State::view_for`], filed under [`view_id`]): from memory or the book's cache
    /// when present and intact, otherwise built, stored and loaded. Returns whether
    /// it was at hand.
    pub fn frozen_for(&mut self, state: &State, reader: &Reader) -> Result<(Arc<Frozen>, bool), BookError> {
        let snapshot = self.snapshot_id(state);
        self.frozen_view(state, snapshot, reader, true)
    }

    /// [`Book::frozen_for`] of a state whose snapshot ID the caller gives: a state of
    /// the log, or one no revision has (a batch decided and not written, whose ID
    /// must not be remembered under the revision it would have). Without `store`
    /// nothing goes to the book's cache, read-only or not.
    pub(crate) fn frozen_view(
        &mut self,
        state: &State,
        snapshot: SnapshotId,
        reader: &Reader,
        store: bool,
    ) -> Result<(Arc<Frozen>, bool), BookError> {
        let id = view_id(snapshot, reader);
        if let Some(frozen) = self.held_frozen(id) {
            return Ok((frozen, true));
        }
        let profile = self
            .profile(state)?
            .ok_or_else(|| BookError::Profile("the book has no config_set yet (run `lorebank init`)".into()))?;
        if let Some(bytes) = self.ledger.cache_get(id.0)? {
            // A damaged or outdated entry is rebuilt, never trusted.
            if let Ok(frozen) = Frozen::load(&bytes, &profile, id) {
                let frozen = Arc::new(frozen);
                self.hold_frozen(id, &frozen);
                return Ok((frozen, true));
            }
        }
        let view = state.view_for(reader);
        let frozen =
            Arc::new(Frozen::build(&view, id, &profile).map_err(|error| BookError::Frozen(error.to_string()))?);
        // Used as built; its bytes are made and filed when the book closes, so that
        // neither this assembly nor the next write waits for them. A book opened
        // read-only (every read command, and `assemble --dry-run`) writes nothing,
        // not even the cache: the projection is kept in memory only.
        if store && !self.ledger.is_read_only() {
            self.unfiled.retain(|unfiled| *unfiled != id);
            if self.unfiled.len() == ledger_model::limits::CACHE_PUTS_QUEUED_MAX {
                self.unfiled.remove(0);
            }
            self.unfiled.push(id);
        }
        self.hold_frozen(id, &frozen);
        Ok((frozen, false))
    }

    /// The frozen projection of `snapshot`, which the book had at `revision`, for the
    /// full view ([`Book::frozen_at_for`]).
    pub fn frozen_at(&mut self, snapshot: SnapshotId, revision: Seq) -> Result<Arc<Frozen>, BookError> {
        self.frozen_at_for(snapshot, revision, &Reader::Full)
    }

    /// The frozen projection `reader` assembles with at `snapshot`, which the book had
    /// at `revision`: from memory, from the book's cache (no refold), or rebuilt from
    /// the log at `revision` (checking that it has that snapshot).
    pub fn frozen_at_for(
        &mut self,
        snapshot: SnapshotId,
        revision: Seq,
        reader: &Reader,
    ) -> Result<Arc<Frozen>, BookError> {
        let id = view_id(snapshot, reader);
        if let Some(frozen) = self.held_frozen(id) {
            return Ok(frozen);
        }
        if let Some(bytes) = self.ledger.cache_get(id.0)? {
            if let Some(table) = profile_of(&bytes) {
                if let Ok(profile) = self.profile_by_id(table) {
                    if let Ok(frozen) = Frozen::load(&bytes, &profile, id) {
                        let frozen = Arc::new(frozen);
                        self.hold_frozen(id, &frozen);
                        return Ok(frozen);
                    }
                }
            }
        }
        let state = self.state(Some(revision))?;
        let found = self.snapshot_id(&state);
        if found != snapshot {
            return Err(BookError::Corrupted(format!("revision {revision} has snapshot {found}, expected {snapshot}")));
        }
        Ok(self.frozen_for(&state, reader)?.0)
    }

    /// What `reader` may read at revision `as_of` (the head when `None`): **the one
    /// decision every read at a revision goes through** (glossary, export, the
    /// profile form, assembly at a past snapshot, and through [`Book::receipt_for`]
    /// every receipt and its replay). A party must be one the head declares
    /// ([`Book::check_reader`] at the head), and at a past revision it reads the state
    /// of that revision less what the head does not release to it
    /// ([`State::view_at`]): going back never lifts a restriction. The full view
    /// reads the state of the revision as it is.
    pub fn read_at(&mut self, reader: &Reader, as_of: Option<Seq>) -> Result<ReadAt, BookError> {
        if *reader == Reader::Full {
            let full = self.state(as_of)?;
            let snapshot = self.snapshot_id(&full);
            // Nothing is cut from the full view, so the head's snapshot is never used.
            return Ok(ReadAt { full, view: None, cut: false, snapshot, head_snapshot: snapshot });
        }
        let head = self.state(None)?;
        self.check_reader(&head, reader)?;
        let head_snapshot = self.snapshot_id(&head);
        // At the head the revision is the head itself, shared.
        let past = match as_of {
            Some(revision) if revision != head.revision() => Some(self.state(Some(revision))?),
            _ => None,
        };
        let at = past.as_ref().unwrap_or(&head);
        let snapshot = self.snapshot_id(at);
        let (view, cut) = match at.view_at(&head, reader) {
            (std::borrow::Cow::Borrowed(_), cut) => (None, cut),
            (std::borrow::Cow::Owned(view), cut) => (Some(view), cut),
        };
        Ok(ReadAt { full: past.unwrap_or(head), view, cut, snapshot, head_snapshot })
    }

    /// The frozen projection `read` assembles with: the reader's view of its snapshot
    /// ([`Book::frozen_at_for`]) when the head took nothing from it, else one built
    /// from the cut view and filed under an id of the view and the head's snapshot
    /// (so no view id ever names two tables).
    pub fn frozen_of(&mut self, read: &ReadAt, reader: &Reader) -> Result<Arc<Frozen>, BookError> {
        if !read.cut {
            return self.frozen_at_for(read.snapshot, read.full.revision(), reader);
        }
        let mut hasher = blake3::Hasher::new_derive_key(CUT_VIEW_CONTEXT);
        hasher.update(&view_id(read.snapshot, reader).0 .0);
        hasher.update(&read.head_snapshot.0 .0);
        let id = SnapshotId(Hash32(*hasher.finalize().as_bytes()));
        if let Some(frozen) = self.held_frozen(id) {
            return Ok(frozen);
        }
        let profile = self
            .profile(&read.full)?
            .ok_or_else(|| BookError::Profile("the book has no config_set yet (run `lorebank init`)".into()))?;
        let frozen =
            Arc::new(Frozen::build(read.view(), id, &profile).map_err(|error| BookError::Frozen(error.to_string()))?);
        self.hold_frozen(id, &frozen);
        Ok(frozen)
    }

    /// Checks that `reader` may read the book at `state`: a party must be one the
    /// book declares (a book that declares none restricts nothing, and any party
    /// reads all of it).
    pub fn check_reader(&self, state: &State, reader: &Reader) -> Result<(), BookError> {
        let (Reader::Party(party), Some((governance, _))) = (reader, state.governance_set()) else { return Ok(()) };
        if governance.parties.contains(party) {
            return Ok(());
        }
        Err(BookError::Invalid(format!(
            "party {party:?} is not one of the book's parties ({})",
            if governance.parties.is_empty() { "it declares none".to_owned() } else { governance.parties.join(", ") }
        )))
    }

    /// Verifies every stored object ([`Ledger::verify`]), then what only the book
    /// knows: every fold table a config names is stored and hashes to its id, every
    /// chapter's source text a `source_set` names is stored, UTF-8 and hashes to its
    /// id (its blake3), every
    /// receipt is stored under its own id with its input and output texts, and every
    /// snapshot index entry names the snapshot the log has at that revision. Names
    /// the damaged object by its role (`blob 241c… (fold table of config at event 1)`).
    /// Every checkpoint must hold exactly the state and snapshot ID the fold has at
    /// its revision; one that does not is derived data gone wrong, dropped (on a
    /// writable book) and counted in `n_checkpoints_dropped`, not damage.
    pub fn verify(&mut self) -> Result<VerifyReport, VerifyError> {
        self.verify_with_progress(|_| {})
    }

    /// [`Book::verify`], calling `progress` with the phase it is in: the stored
    /// objects (the ledger's own checks), then each event folded (now and then), then
    /// each recorded receipt.
    pub fn verify_with_progress(&mut self, mut progress: impl FnMut(VerifyPhase)) -> Result<VerifyReport, VerifyError> {
        self.wait_for_checkpoint();
        progress(VerifyPhase::Objects);
        let mut report = match self.ledger.verify() {
            Ok(report) => report,
            Err(VerifyError::Damaged { object, detail }) => {
                let object = match object.strip_prefix("blob ").and_then(Hash32::from_hex) {
                    Some(id) => format!("{object} ({})", self.blob_role(id)),
                    None => receipt_object(&object),
                };
                return Err(VerifyError::Damaged { object, detail: receipt_detail(&detail) });
            }
            Err(error) => return Err(error),
        };
        let damaged = |object: String, detail: String| VerifyError::Damaged { object, detail };
        // Fold tables named by configs, and the snapshot index, in one fold.
        let index: BTreeMap<Seq, Vec<Hash32>> =
            self.ledger.snapshot_index()?.into_iter().fold(BTreeMap::new(), |mut map, (id, revision)| {
                map.entry(revision).or_default().push(id);
                map
            });
        let mut state = State::new();
        let mut tables = Vec::new();
        let mut texts: BTreeMap<Hash32, (Seq, u32)> = BTreeMap::new();
        let mut pending = index.iter().peekable();
        let mut failure = None;
        let checkpoints: BTreeSet<Seq> = self.ledger.checkpoints()?.iter().map(|info| info.revision).collect();
        let mut wrong_checkpoints = Vec::new();
        let ledger = Arc::clone(&self.ledger);
        let mut tracker = SnapshotTracker::new();
        // Touches wait for the end of their batch (or a revision whose snapshot is
        // needed), so a record is re-encoded once per batch, not once per event.
        let mut touches = Touches::default();
        let n_events = report.head.seq.0;
        progress(VerifyPhase::Events { done: 0, total: n_events });
        ledger.scan_pipelined(Seq(1), Seq(u64::MAX), |event, batch_end| {
            let seq = event.seq;
            if seq.0 % VERIFY_PROGRESS_EVERY == 0 {
                progress(VerifyPhase::Events { done: seq.0, total: n_events });
            }
            if let Body::ConfigSet(config) = &event.content.body {
                if let Some(table) = config.profile.table {
                    tables.push((seq, table));
                }
            }
            if let Body::SourceSet(SourceSet { chapter, text: Some(text), .. }) = &event.content.body {
                texts.entry(*text).or_insert((seq, *chapter));
            }
            touches.add(Touched::of(&event.content.body));
            state.apply_owned(event);
            let needed = checkpoints.contains(&seq) || pending.peek().is_some_and(|(revision, _)| **revision == seq);
            if batch_end != Some(false) || needed {
                tracker.touch_all(&state, &mut touches);
            }
            if checkpoints.contains(&seq) {
                let holds = match ledger.checkpoint_at_or_before(seq) {
                    Ok(Some((info, bytes))) if info.revision == seq => checkpoint::decode(&bytes)
                        .is_ok_and(|(stored, snapshot)| stored == state && snapshot == tracker.id(&state)),
                    _ => false,
                };
                if !holds {
                    wrong_checkpoints.push(seq.0);
                }
            }
            while let Some((revision, ids)) = pending.next_if(|(revision, _)| **revision == seq) {
                let found = tracker.id(&state);
                if let Some(id) = ids.iter().find(|id| **id != found.0) {
                    failure = Some(damaged(
                        format!("snapshot index entry {id}"),
                        format!("revision {revision} has snapshot {found}"),
                    ));
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        })?;
        if let Some(failure) = failure {
            return Err(failure);
        }
        // A read-only book still lists the checkpoints the ledger found bad (it could
        // not drop them), and the fold found them wrong too: count them once.
        report.n_checkpoints = (checkpoints.len() - wrong_checkpoints.len()) as u64;
        if self.ledger.is_read_only() {
            report.n_checkpoints_dropped = wrong_checkpoints.len() as u64;
        } else {
            report.n_checkpoints_dropped += wrong_checkpoints.len() as u64;
            if !wrong_checkpoints.is_empty() {
                self.ledger.drop_checkpoints(&wrong_checkpoints)?;
            }
        }
        for (seq, table) in tables {
            let object = || format!("blob {table} (fold table of config at event {seq})");
            match self.ledger.blob(table)? {
                None => return Err(damaged(object(), "is not stored".into())),
                Some(bytes) => match Profile::from_bytes(&bytes) {
                    Ok(profile) if profile.id().0 == table.0 => {}
                    Ok(profile) => return Err(damaged(object(), format!("hashes to {}", profile.id()))),
                    Err(error) => return Err(damaged(object(), error.to_string())),
                },
            }
        }
        for (text, (seq, chapter)) in texts {
            let object = || format!("blob {text} (source text of chapter {chapter} at event {seq})");
            let bytes = self.ledger.blob(text)?.ok_or_else(|| damaged(object(), "is not stored".into()))?;
            if source_text_id(&bytes) != text {
                return Err(damaged(object(), format!("hashes to {}", source_text_id(&bytes))));
            }
            if std::str::from_utf8(&bytes).is_err() {
                return Err(damaged(object(), "is not UTF-8".into()));
            }
        }
        let filed = self.ledger.filed(None)?;
        let n_receipts = filed.len();
        for (done, (chapter, chunk_key, position, id)) in filed.into_iter().enumerate() {
            if done % VERIFY_PROGRESS_EVERY as usize == 0 {
                progress(VerifyPhase::Receipts { done, total: n_receipts });
            }
            let object = format!("receipt {id}");
            let bytes = self.ledger.document(id)?.ok_or_else(|| damaged(object.clone(), "is not stored".into()))?;
            let receipt =
                assembly::receipt::Receipt::decode(&bytes).map_err(|e| damaged(object.clone(), e.to_string()))?;
            if receipt.id() != id {
                return Err(damaged(object, format!("is stored under another id than its own {}", receipt.id())));
            }
            if (receipt.chapter, receipt.chunk_key.as_str()) != (chapter, chunk_key.as_str()) {
                return Err(damaged(
                    format!("chunk index entry (chapter {chapter}, chunk {chunk_key:?}, position {position})"),
                    format!("its receipt {id} is of chapter {}, chunk {:?}", receipt.chapter, receipt.chunk_key),
                ));
            }
            for (what, text) in [("input", receipt.input), ("output", receipt.output)] {
                let object = || format!("blob {text} ({what} text of receipt {id})");
                let bytes = self.ledger.blob(text)?.ok_or_else(|| damaged(object(), "is not stored".into()))?;
                let valid =
                    std::str::from_utf8(&bytes).is_ok_and(|text_bytes| assembly::receipt::text_id(text_bytes) == text);
                if !valid {
                    return Err(damaged(object(), "does not hash to its id".into()));
                }
            }
        }
        Ok(report)
    }

    /// Rebuilds the snapshot index from the log alone: folds every event and records
    /// the snapshot ID at every batch end the log marks (record format 2), and at the
    /// head. Entries already indexed (books of record format 1 did not mark batch
    /// ends) are kept unless an earlier revision had the snapshot. Returns the number
    /// of batch ends indexed.
    pub fn rebuild_index(&mut self) -> Result<u64, BookError> {
        self.refold(|_, _| {}, false)
    }

    /// [`Book::rebuild_index`], calling `progress` with (events folded, events to
    /// fold), and with `write_checkpoints` also writing checkpoints as it goes: at
    /// batch ends spread over the log (as many as the policy keeps) and at the head,
    /// each stamped with the time of its own event.
    pub(crate) fn refold(
        &mut self,
        mut progress: impl FnMut(u64, u64),
        write_checkpoints: bool,
    ) -> Result<u64, BookError> {
        self.wait_for_checkpoint();
        let head = self.ledger.head()?.seq;
        let spacing = self.policy.every_events.max(head.0 / self.policy.keep.max(1) as u64).max(1);
        let mut next_checkpoint = spacing;
        let mut state = State::new();
        let mut first: BTreeMap<SnapshotId, Seq> = BTreeMap::new();
        let mut n_ends = 0u64;
        let mut last_time = 0u64;
        let mut failure = None;
        let ledger = Arc::clone(&self.ledger);
        let keep = self.policy.keep;
        let mut tracker = SnapshotTracker::new();
        let mut touches = Touches::default();
        ledger.scan_pipelined(Seq(1), Seq(u64::MAX), |event, batch_end| {
            let revision = event.seq;
            last_time = event.content.recorded_at_ms;
            // A record is re-encoded once per batch, at its end, not once per event.
            touches.add(Touched::of(&event.content.body));
            state.apply_owned(event);
            if batch_end != Some(false) {
                tracker.touch_all(&state, &mut touches);
            }
            if revision.0 % 65_536 == 0 {
                progress(revision.0, head.0);
            }
            if batch_end == Some(true) {
                n_ends += 1;
                let snapshot = tracker.id(&state);
                first.entry(snapshot).or_insert(revision);
                if write_checkpoints && revision.0 >= next_checkpoint && revision < head {
                    next_checkpoint = revision.0 + spacing;
                    let bytes = checkpoint::encode(&state, snapshot);
                    if let Err(error) = ledger.put_checkpoint(revision, last_time, &bytes, keep) {
                        failure = Some(error);
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        })?;
        if let Some(error) = failure {
            return Err(error.into());
        }
        progress(state.revision().0, head.0);
        tracker.touch_all(&state, &mut touches);
        if state.revision() > Seq::ZERO {
            let snapshot = tracker.id(&state);
            first.entry(snapshot).or_insert(state.revision());
            self.snapshot_ids.insert(state.revision(), snapshot);
            if write_checkpoints {
                let bytes = checkpoint::encode(&state, snapshot);
                self.ledger.put_checkpoint(state.revision(), last_time, &bytes, keep)?;
            }
        }
        let entries: Vec<(Hash32, Seq)> = first.into_iter().map(|(id, revision)| (id.0, revision)).collect();
        self.ledger.index_snapshots(&entries)?;
        self.head = Some(Arc::new(state));
        self.recent = None;
        Ok(n_ends)
    }

    /// What a blob is, for error messages: the first config or receipt naming it.
    fn blob_role(&self, id: Hash32) -> String {
        let mut role = None;
        let _ = self.ledger.scan(Seq(1), Seq(u64::MAX), |event| {
            if let Body::ConfigSet(config) = &event.content.body {
                if config.profile.table == Some(id) {
                    role = Some(format!("fold table of config at event {}", event.seq));
                    return ControlFlow::Break(());
                }
            }
            if let Body::SourceSet(SourceSet { chapter, text: Some(text), .. }) = &event.content.body {
                if *text == id {
                    role = Some(format!("source text of chapter {chapter} at event {}", event.seq));
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        if let Some(role) = role {
            return role;
        }
        for (_, _, _, receipt_id) in self.ledger.filed(None).unwrap_or_default() {
            let Ok(Some(bytes)) = self.ledger.document(receipt_id) else { continue };
            let Ok(receipt) = assembly::receipt::Receipt::decode(&bytes) else { continue };
            if receipt.input == id {
                return format!("input text of receipt {receipt_id}");
            }
            if receipt.output == id {
                return format!("output text of receipt {receipt_id}");
            }
        }
        "referred to by nothing".into()
    }

    /// The compensating batch that brings the head back to revision `to`'s snapshot,
    /// ending with a rollback marker; not yet appended.
    pub fn plan_rollback(&mut self, to: Seq, reason: Option<String>) -> Result<Vec<Body>, BookError> {
        let head = self.state(None)?;
        let target = self.state(Some(to))?;
        Ok(plan_rollback(&head, &target, reason)?)
    }
}

impl Drop for Book {
    fn drop(&mut self) {
        self.file_projections();
        self.wait_for_checkpoint();
    }
}

/// A damaged ledger object named in the book's terms: the ledger's documents are
/// receipts, its document log the receipt log, and its shelves (group, key) the
/// chunk index (chapter, chunk key).
pub(crate) fn receipt_object(object: &str) -> String {
    if let Some(rest) = object.strip_prefix("shelf entry (group ") {
        return format!("chunk index entry (chapter {}", rest.replacen(", key ", ", chunk ", 1));
    }
    match object {
        "the shelves" => "the chunk index".into(),
        "the document log" => "the receipt log".into(),
        _ => match object.strip_prefix("document ") {
            Some(rest) => format!("receipt {rest}"),
            None => object.to_owned(),
        },
    }
}

/// The detail of a damaged ledger object in the book's terms (see [`receipt_object`]).
fn receipt_detail(detail: &str) -> String {
    detail.replace("filed on shelves", "indexed by chunk").replace("document", "receipt")
}

#[cfg(test)]
mod tests {
    use super::{receipt_detail, receipt_object};

    #[test]
    fn ledger_damage_is_named_in_receipt_terms() {
        assert_eq!(receipt_object("document 3f2a"), "receipt 3f2a");
        assert_eq!(receipt_object("document log position 4"), "receipt log position 4");
        assert_eq!(receipt_object("the document log"), "the receipt log");
        assert_eq!(receipt_object("the shelves"), "the chunk index");
        assert_eq!(
            receipt_object("shelf entry (group 1, key \"a, key b\", position 18)"),
            "chunk index entry (chapter 1, chunk \"a, key b\", position 18)"
        );
        assert_eq!(receipt_object("snapshot index entry 9a"), "snapshot index entry 9a");
        assert_eq!(receipt_detail("2 documents stored, 1 filed on shelves"), "2 receipts stored, 1 indexed by chunk");
        assert_eq!(receipt_detail("names document 3f, not stored"), "names receipt 3f, not stored");
    }
}
