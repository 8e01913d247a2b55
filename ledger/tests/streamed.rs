//! Long batches are streamed to the writer in parts while the appender is still
//! encoding and checking the rest. They must commit exactly as a batch sent whole
//! would (the same record bytes, batch-end flag on the last event only), and a
//! part that fails its checks, a batch over the byte limit, or a conflict must leave
//! nothing written and the ledger usable.

mod support;

use std::ops::ControlFlow;

use ledger::{AppendError, Ledger};
use ledger_model::limits::{BATCH_BYTES_MAX, BATCH_EVENTS_MAX};
use ledger_model::record::{self, SCHEMA_CURRENT};
use ledger_model::{Body, Hash32, NewEvent, Seq, TermPut};
use support::term;

fn with_note(number: u32, note: String) -> NewEvent {
    let mut event = term(number, "noted");
    if let Body::TermPut(TermPut { note: slot, .. }) = &mut event.body {
        *slot = Some(note);
    }
    event
}

fn ledger() -> (tempfile::TempDir, Ledger) {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&dir.path().join("book.lorebank")).unwrap();
    (dir, ledger)
}

#[test]
fn a_long_batch_commits_the_records_a_whole_batch_would() {
    let (_dir, ledger) = ledger();
    let short: Vec<NewEvent> = (1..=3).map(|n| term(n, &format!("s{n}"))).collect();
    let long: Vec<NewEvent> = (4..=1_003).map(|n| term(n, &format!("l{n}"))).collect();
    ledger.append(&short, Some(Seq(0))).unwrap();
    let appended = ledger.append(&long, Some(Seq(3))).unwrap();
    assert_eq!((appended.first, appended.last), (Seq(4), Seq(1_003)));
    // The chain as `seal_in_batch` builds it, batch by batch.
    let mut prev = Hash32::GENESIS;
    let mut expected = Vec::new();
    for batch in [&short, &long] {
        for (index, event) in batch.iter().enumerate() {
            let seq = Seq(expected.len() as u64 + 1);
            let payload = event.encode().unwrap();
            let (_, hash) = record::seal_in_batch(seq, prev, SCHEMA_CURRENT, &payload, index + 1 == batch.len());
            expected.push((seq, prev, hash, index + 1 == batch.len()));
            prev = hash;
        }
    }
    assert_eq!(appended.hash, prev);
    let mut stored = Vec::new();
    ledger
        .scan_batches(Seq(1), Seq(u64::MAX), |event, end| {
            stored.push((event.seq, event.prev, event.hash, end == Some(true)));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(stored, expected);
    let read: Vec<NewEvent> = ledger.events(Seq(1), Seq(u64::MAX)).unwrap().into_iter().map(|e| e.content).collect();
    assert_eq!(read, [short, long].concat());
    assert_eq!(ledger.verify().unwrap().n_events, 1_003);
}

#[test]
fn a_bad_event_late_in_a_long_batch_leaves_nothing_written() {
    let (_dir, ledger) = ledger();
    ledger.append(&[term(1, "first")], None).unwrap();
    let mut batch: Vec<NewEvent> = (2..=1_001).map(|n| term(n, &format!("e{n}"))).collect();
    batch[700] = with_note(702, "字".repeat(30_000));
    let error = ledger.append(&batch, None).unwrap_err();
    assert!(matches!(error, AppendError::Encode { index: 700, .. }), "{error:?}");
    assert_eq!(ledger.head().unwrap().seq, Seq(1));
    assert_eq!(ledger.verify().unwrap().n_events, 1);
    // The ledger is not poisoned: a refused batch is no damage.
    batch[700] = term(702, "e702");
    assert_eq!(ledger.append(&batch, None).unwrap().last, Seq(1_001));
    assert_eq!(ledger.verify().unwrap().n_events, 1_001);
}

#[test]
fn a_long_batch_over_the_byte_limit_is_refused_with_its_size() {
    let (_dir, ledger) = ledger();
    let note = "x".repeat(60_000);
    let n_events = BATCH_BYTES_MAX / 60_000 + 10;
    assert!((256..BATCH_EVENTS_MAX).contains(&n_events));
    let batch: Vec<NewEvent> = (1..=n_events as u32).map(|n| with_note(n, note.clone())).collect();
    let n_bytes: usize = batch.iter().map(|event| event.encode().unwrap().len()).sum();
    assert!(n_bytes > BATCH_BYTES_MAX);
    let error = ledger.append(&batch, None).unwrap_err();
    let expected =
        AppendError::BatchTooLarge { n_events, n_bytes, events_max: BATCH_EVENTS_MAX, bytes_max: BATCH_BYTES_MAX };
    assert!(matches!(error, AppendError::BatchTooLarge { .. }), "{error:?}");
    assert_eq!(error.to_string(), expected.to_string());
    assert_eq!(ledger.head().unwrap().seq, Seq(0));
    assert_eq!(ledger.append(&[term(1, "after")], None).unwrap().last, Seq(1));
}

#[test]
fn a_long_batch_with_a_stale_head_conflicts_and_writes_nothing() {
    let (_dir, ledger) = ledger();
    ledger.append(&[term(1, "first")], None).unwrap();
    let batch: Vec<NewEvent> = (2..=600).map(|n| term(n, &format!("e{n}"))).collect();
    let error = ledger.append(&batch, Some(Seq(0))).unwrap_err();
    assert!(matches!(error, AppendError::Conflict { expected: Seq(0), actual: Seq(1) }), "{error:?}");
    assert_eq!(ledger.verify().unwrap().n_events, 1);
    assert_eq!(ledger.append(&batch, Some(Seq(1))).unwrap().last, Seq(600));
}

#[test]
fn long_and_short_batches_from_many_threads_all_commit_whole() {
    let (_dir, ledger) = ledger();
    let size = |thread: u32, round: u32| if (thread + round) % 2 == 0 { 300 } else { 3 };
    std::thread::scope(|scope| {
        for thread in 0..4u32 {
            let ledger = &ledger;
            scope.spawn(move || {
                for round in 0..5u32 {
                    let batch: Vec<NewEvent> =
                        (0..size(thread, round)).map(|k| term(k + 1, &format!("t{thread}-r{round}"))).collect();
                    ledger.append(&batch, None).unwrap();
                }
            });
        }
    });
    // (source, events, events flagged as batch ends, whether the last one is flagged)
    let mut batches: Vec<(String, u32, u32, bool)> = Vec::new();
    ledger
        .scan_batches(Seq(1), Seq(u64::MAX), |event, end| {
            let source = event.content.source;
            let end = end == Some(true);
            match batches.last_mut() {
                Some((last, n, n_ends, last_end)) if *last == source && !*last_end => {
                    *n += 1;
                    *n_ends += u32::from(end);
                    *last_end = end;
                }
                _ => batches.push((source, 1, u32::from(end), end)),
            }
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(batches.len(), 20);
    for (source, n, n_ends, last_end) in &batches {
        let (thread, round) = source.strip_prefix('t').unwrap().split_once("-r").unwrap();
        assert_eq!(*n, size(thread.parse().unwrap(), round.parse().unwrap()), "{source}");
        assert_eq!((*n_ends, *last_end), (1, true), "{source}");
    }
    assert_eq!(ledger.verify().unwrap().n_events, 3_030);
}
