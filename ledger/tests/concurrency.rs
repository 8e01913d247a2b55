//! Eight threads append batches with expected heads to one ledger at once. Every
//! conflict must be reported with the actual head; after retries every batch is in
//! the log exactly once, contiguous, and the chain verifies.

mod support;

use std::collections::BTreeMap;

use ledger::{AppendError, Ledger};
use ledger_model::Seq;
use support::term;

const THREADS: u32 = 8;
const BATCHES_PER_THREAD: u32 = 40;

#[test]
fn concurrent_appenders_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::create(&dir.path().join("book.lorebank")).unwrap();
    let n_conflicts: u32 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread_idx| {
                let ledger = &ledger;
                scope.spawn(move || {
                    let mut n_conflicts = 0;
                    for batch_idx in 0..BATCHES_PER_THREAD {
                        let size = 1 + (thread_idx + batch_idx) % 3;
                        let batch: Vec<_> = (0..size)
                            .map(|event_idx| {
                                let number = 1 + thread_idx * 10_000 + batch_idx * 10 + event_idx;
                                term(number, &format!("t{thread_idx}-b{batch_idx}"))
                            })
                            .collect();
                        loop {
                            let head = ledger.head().unwrap().seq;
                            match ledger.append(&batch, Some(head)) {
                                Ok(appended) => {
                                    assert_eq!(appended.first, head.next());
                                    assert_eq!(appended.last.0 - appended.first.0 + 1, u64::from(size));
                                    break;
                                }
                                Err(AppendError::Conflict { expected, actual }) => {
                                    assert_eq!(expected, head);
                                    assert!(actual > expected, "conflict names head {actual}, expected {expected}");
                                    n_conflicts += 1;
                                }
                                Err(other) => panic!("append failed: {other}"),
                            }
                        }
                    }
                    n_conflicts
                })
            })
            .collect();
        workers.into_iter().map(|worker| worker.join().unwrap()).sum()
    });
    let report = ledger.verify().unwrap();
    let events = ledger.events(Seq(1), report.head.seq).unwrap();
    let expected_events: u32 = (0..THREADS).flat_map(|t| (0..BATCHES_PER_THREAD).map(move |b| 1 + (t + b) % 3)).sum();
    assert_eq!(events.len() as u32, expected_events);
    // Each batch appears once, its events contiguous and in order.
    let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for event in &events {
        seen.entry(event.content.source.clone()).or_default().push(event.seq.0);
    }
    assert_eq!(seen.len() as u32, THREADS * BATCHES_PER_THREAD);
    for (batch, seqs) in &seen {
        assert!(seqs.windows(2).all(|pair| pair[1] == pair[0] + 1), "batch {batch} is split: {seqs:?}");
    }
    eprintln!("{n_conflicts} conflicts reported and retried");
}
