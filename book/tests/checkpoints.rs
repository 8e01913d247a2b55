//! Checkpoints are a shortcut, never a source of truth: a book opened fresh starts
//! from its newest checkpoint and folds only the tail, and the result is exactly the
//! full fold (same state, same snapshot ID, same frozen bytes); a damaged, stale or
//! foreign checkpoint is ignored (and dropped on a writable open), with the result
//! again identical to the full fold; `rebuild` drops and rewrites them; `verify`
//! checks each against the fold.

use std::ops::ControlFlow;
use std::path::Path;

use book::{Book, CheckpointPolicy};
use ledger::{Ledger, STORED_CHECKSUM_CONTEXT};
use ledger_model::*;
use matcher::{Flavour, ProfileBuilder};
use projections::frozen::freeze;
use projections::State;
use proptest::prelude::*;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use test_support::records::{self, event, term_id};

const CHECKPOINTS: TableDefinition<u64, &[u8]> = TableDefinition::new("checkpoints");
const CHECKPOINT_HEADS: TableDefinition<u64, &[u8; 48]> = TableDefinition::new("checkpoint_heads");

const SURFACES: &[&str] = &["沈照", "雾川", "长明灯", "顾寒川", "夜宗", "灯录"];

/// T-`number`, whose source is one of `SURFACES`, rendered as `dst`.
fn term(number: u32, dst: &str) -> Body {
    records::term(number, SURFACES[number as usize % SURFACES.len()], dst)
}

/// A book with a plain fold table, writing a checkpoint every `every` events.
fn new_book(path: &Path, every: u64) -> Book {
    let profile = plain();
    let table = Hash32(profile.id().0);
    let mut book = Book::new(Ledger::create(path).unwrap());
    book.set_checkpoint_policy(CheckpointPolicy { every_events: every, ..CheckpointPolicy::default() });
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "plain".into(), table: Some(table) },
    });
    book.submit(&[event(config)], Some(Seq(0)), vec![(table, profile.to_bytes())]).unwrap();
    book
}

/// Writes `n_batches` batches of edits (1 to 3 events each) over six terms, some
/// retired and aliased, then waits for the last checkpoint.
fn grow(book: &mut Book, n_batches: u32) {
    for index in 0..n_batches {
        let number = 1 + index % SURFACES.len() as u32;
        let mut batch = vec![event(term(number, &format!("Вариант {index}")))];
        if index % 4 == 1 {
            let id = term_id(number);
            let surface = format!("{}{index}", SURFACES[number as usize % SURFACES.len()]);
            batch.push(event(Body::AliasAdded(AliasAdded {
                id,
                surface,
                kind: AliasKind::Variant,
                window: None,
                release_to: None,
            })));
        }
        if index >= 6 && index % 7 == 3 {
            let id = term_id(1 + (number % 6));
            batch.push(event(Body::TermRetired(TermRetired { id, reason: None })));
        }
        book.submit(&batch, None, Vec::new()).unwrap();
    }
    book.wait_for_checkpoint();
}

/// The full fold of the log, from event 1, straight from the ledger.
fn full_fold(path: &Path, to: Seq) -> State {
    let ledger = Ledger::open_read_only(path).unwrap();
    let mut state = State::new();
    ledger
        .scan(Seq(1), to, |event| {
            state.apply_owned(event);
            ControlFlow::Continue(())
        })
        .unwrap();
    state
}

/// Opens the book fresh and reads the state at `as_of`; also returns how many events
/// the read folded (what a checkpoint saves).
fn fresh_read(path: &Path, as_of: Option<Seq>, writable: bool) -> (State, u64) {
    let mut book = if writable { Book::open(path).unwrap() } else { Book::new(Ledger::open_read_only(path).unwrap()) };
    let mut n_folded = 0;
    let state = book.state_with_progress(as_of, |_, total| n_folded = total).unwrap();
    (State::clone(&state), n_folded)
}

fn plain() -> &'static matcher::Profile {
    static PROFILE: std::sync::OnceLock<matcher::Profile> = std::sync::OnceLock::new();
    PROFILE.get_or_init(|| ProfileBuilder::new(Flavour::Plain).build().unwrap())
}

fn frozen_bytes(state: &State) -> Vec<u8> {
    freeze(state, plain()).unwrap()
}

fn assert_same(found: &State, expected: &State) {
    assert_eq!(found, expected);
    assert_eq!(found.snapshot_id(), expected.snapshot_id());
    assert_eq!(frozen_bytes(found), frozen_bytes(expected));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// For random logs and random checkpoint positions, checkpoint + tail = full fold,
    /// at the head and at every revision.
    #[test]
    fn checkpoint_plus_tail_is_the_full_fold(n_batches in 1u32..40, every in 1u64..12) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.lorebank");
        let mut book = new_book(&path, every);
        grow(&mut book, n_batches);
        drop(book);
        let head = Ledger::open_read_only(&path).unwrap().head().unwrap().seq;
        let checkpoints = Ledger::open_read_only(&path).unwrap().checkpoints().unwrap();
        prop_assert_eq!(checkpoints.is_empty(), head.0 < every);
        for revision in 1..=head.0 {
            let (state, n_folded) = fresh_read(&path, Some(Seq(revision)), false);
            assert_same(&state, &full_fold(&path, Seq(revision)));
            // The read started at the newest checkpoint at or before the revision.
            let start = checkpoints.iter().map(|info| info.revision.0).filter(|at| *at <= revision).max().unwrap_or(0);
            prop_assert_eq!(n_folded, revision - start);
        }
    }
}

#[test]
fn a_fresh_open_folds_only_the_events_after_the_newest_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = new_book(&path, 10);
    grow(&mut book, 60);
    drop(book);
    let (state, n_folded) = fresh_read(&path, None, false);
    assert_same(&state, &full_fold(&path, Seq(u64::MAX)));
    assert!(n_folded < 10, "folded {n_folded} events past the checkpoint");
    // Older checkpoints are kept, spread over the log, but never more than the policy says.
    let checkpoints = Ledger::open_read_only(&path).unwrap().checkpoints().unwrap();
    assert!((2..=book::CHECKPOINTS_KEPT).contains(&checkpoints.len()), "{checkpoints:?}");
}

/// Rewrites the checkpoint at `revision` with `edit` applied to its stored value
/// (`checksum ‖ chain ‖ written_at ‖ bytes`) and its header, as damage or a stale
/// copy would leave it.
fn tamper(path: &Path, revision: u64, edit: impl FnOnce(&mut Vec<u8>, &mut [u8; 48])) {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    {
        let mut table = txn.open_table(CHECKPOINTS).unwrap();
        let mut heads = txn.open_table(CHECKPOINT_HEADS).unwrap();
        let mut value = table.get(revision).unwrap().unwrap().value().to_vec();
        let mut head = *heads.get(revision).unwrap().unwrap().value();
        edit(&mut value, &mut head);
        table.insert(revision, value.as_slice()).unwrap();
        heads.insert(revision, &head).unwrap();
    }
    txn.commit().unwrap();
}

/// `checksum ‖ inner` with the checksum recomputed: bytes that pass the checksum.
fn resealed(inner: &[u8]) -> Vec<u8> {
    let mut hasher = blake3::Hasher::new_derive_key(STORED_CHECKSUM_CONTEXT);
    hasher.update(inner);
    let mut out = hasher.finalize().as_bytes().to_vec();
    out.extend_from_slice(inner);
    out
}

/// A book whose newest checkpoint is damaged by `edit` gives exactly the full fold,
/// read-only (ignoring it) and writable (dropping it); verify reports it ignored.
fn check_ignored(name: &str, edit: impl FnOnce(&Path, u64, &mut Vec<u8>, &mut [u8; 48])) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = new_book(&path, 5);
    grow(&mut book, 30);
    drop(book);
    let newest = Ledger::open_read_only(&path).unwrap().checkpoints().unwrap().last().unwrap().revision.0;
    tamper(&path, newest, |value, head| edit(dir.path(), newest, value, head));
    let expected = full_fold(&path, Seq(u64::MAX));

    let mut reader = Book::new(Ledger::open_read_only(&path).unwrap());
    let report = reader.verify().unwrap();
    assert_eq!(report.n_checkpoints_dropped, 1, "{name}: {report:?}");
    drop(reader);
    let (state, n_folded) = fresh_read(&path, None, false);
    assert_same(&state, &expected);
    assert!(n_folded > expected.revision().0 - newest, "{name}: the damaged checkpoint was used");
    let (state, _) = fresh_read(&path, None, true);
    assert_same(&state, &expected);
    let left = Ledger::open_read_only(&path).unwrap().checkpoints().unwrap();
    assert!(left.iter().all(|info| info.revision.0 != newest), "{name}: not dropped: {left:?}");
}

#[test]
fn a_checkpoint_with_a_flipped_byte_is_ignored() {
    check_ignored("flipped byte", |_, _, value, _| {
        let last = value.len() - 1;
        value[last] ^= 0x40;
    });
}

#[test]
fn a_checkpoint_with_another_chain_hash_is_ignored() {
    // Stale: taken on a log that has since been replaced at that revision.
    check_ignored("wrong chain hash", |_, _, value, head| {
        let mut inner = value[32..].to_vec();
        inner[0] ^= 1;
        head[0] ^= 1;
        *value = resealed(&inner);
    });
}

#[test]
fn a_checkpoint_from_another_book_is_ignored() {
    check_ignored("foreign", |dir, revision, value, head| {
        // Another book with the same shape but other content: its checkpoint at the
        // same revision, copied over with its own (valid) checksum and chain.
        let other = dir.join("other.lorebank");
        let mut book = new_book(&other, 1);
        for index in 0..revision {
            book.submit(&[event(term(1 + (index as u32 % 6), &format!("Иное {index}")))], None, Vec::new()).unwrap();
            if book.ledger().head().unwrap().seq.0 == revision {
                break;
            }
        }
        book.write_checkpoint(Seq(revision), 0).unwrap();
        drop(book);
        let db = redb::Database::open(&other).unwrap();
        let txn = db.begin_read().unwrap();
        *value = txn.open_table(CHECKPOINTS).unwrap().get(revision).unwrap().unwrap().value().to_vec();
        *head = *txn.open_table(CHECKPOINT_HEADS).unwrap().get(revision).unwrap().unwrap().value();
    });
}

#[test]
fn a_checkpoint_holding_another_revision_is_ignored() {
    // Passes its checksum and chain hash, but the state inside is of another
    // revision: only decoding can tell.
    check_ignored("other revision", |dir, revision, value, _| {
        let copy = dir.join("copy.lorebank");
        std::fs::copy(dir.join("book.lorebank"), &copy).unwrap();
        let mut book = Book::open(&copy).unwrap();
        book.write_checkpoint(Seq(revision - 1), 0).unwrap();
        drop(book);
        let db = redb::Database::open(&copy).unwrap();
        let txn = db.begin_read().unwrap();
        let earlier = txn.open_table(CHECKPOINTS).unwrap().get(revision - 1).unwrap().unwrap().value().to_vec();
        // Keep this revision's chain and time; take the earlier state's bytes.
        let mut inner = value[32..72].to_vec();
        inner.extend_from_slice(&earlier[72..]);
        *value = resealed(&inner);
    });
}

#[test]
fn rebuild_drops_and_rewrites_the_checkpoints_and_verify_checks_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let mut book = new_book(&path, 4);
    grow(&mut book, 40);
    let report = book.verify().unwrap();
    assert!(report.n_checkpoints >= 2);
    assert_eq!(report.n_checkpoints_dropped, 0);
    let rebuilt = book.rebuild(|_, _| {}).unwrap();
    assert!(rebuilt.n_checkpoints_dropped >= 2);
    let after = book.ledger().checkpoints().unwrap();
    assert_eq!(rebuilt.n_checkpoints, after.len() as u64);
    assert_eq!(after.last().unwrap().revision, book.ledger().head().unwrap().seq);
    drop(book);
    let (state, n_folded) = fresh_read(&path, None, false);
    assert_eq!(n_folded, 0);
    assert_same(&state, &full_fold(&path, Seq(u64::MAX)));
}
