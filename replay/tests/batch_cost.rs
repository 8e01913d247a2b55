//! A write, a rebuild of the snapshot index and a verify of a book whose one batch
//! added many aliases to one term cost what the batch does: each is run on a book of
//! n and of 2n aliases, and the bytes allocated are compared (a global allocator
//! counts them, one test at a time, so counts, not times). The snapshot ID used to
//! re-encode the term once per event of the batch, with every alias it had so far.

use std::alloc::System;
use std::sync::{Mutex, MutexGuard};

use ledger_model::*;
use replay::{Book, WriteOptions};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One test at a time: the allocator counts every thread of the binary.
static ALONE: Mutex<()> = Mutex::new(());

fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What `work` returns and the bytes allocated while it ran.
fn allocated<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let region = Region::new(GLOBAL);
    let value = work();
    let change = region.change();
    (value, change.bytes_allocated as u64 + change.bytes_reallocated.max(0) as u64)
}

fn event(body: Body) -> NewEvent {
    NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "test".into(), body }
}

/// `n` distinct three-character Chinese names.
fn names(n: usize) -> Vec<String> {
    let first: Vec<char> = "林沈白云叶苏陆顾江秦楚韩柳宁谢温燕唐方姜".chars().collect();
    let rest: Vec<char> = "炎照川衣山天寒风月雪霜星辰海岳河清明远舟".chars().collect();
    (0..n)
        .map(|index| {
            let (a, b, c) = (index / (rest.len() * rest.len()), index / rest.len() % rest.len(), index % rest.len());
            [first[a], rest[b], rest[c]].into_iter().collect()
        })
        .collect()
}

/// A book with T-1 萧炎, and the batch of `n` aliases of it.
fn book(dir: &std::path::Path, n: usize) -> (Book, Vec<NewEvent>) {
    let path = dir.join("book.lorebank");
    let write =
        WriteOptions { actor: "human:test".into(), source: Some("test".into()), expect_head: None, recorded_at_ms: 0 };
    Book::init(&path, "zh", &write).unwrap();
    let mut book = Book::open(&path).unwrap();
    let id: RecordId = "T-1".parse().unwrap();
    book.submit(&[event(Body::TermPut(TermPut::new(id, "萧炎", "Сяо Янь")))], None, vec![]).unwrap();
    let aliases = names(n)
        .into_iter()
        .map(|surface| {
            event(Body::AliasAdded(AliasAdded {
                id,
                surface,
                kind: AliasKind::default(),
                window: None,
                release_to: None,
            }))
        })
        .collect();
    (book, aliases)
}

/// Bytes allocated by a write of n aliases of one term, by a rebuild of the snapshot
/// index after it, and by a verify.
fn costs(n: usize) -> [u64; 3] {
    let dir = tempfile::tempdir().unwrap();
    let (mut book, batch) = book(dir.path(), n);
    let (submitted, submit) = allocated(|| book.submit(&batch, None, vec![]).unwrap());
    assert_eq!(submitted.decision.events.len(), n);
    let (ends, rebuild) = allocated(|| book.rebuild_index().unwrap());
    assert!(ends >= 2);
    let (_, verify) = allocated(|| book.verify().unwrap());
    [submit, rebuild, verify]
}

#[test]
fn a_batch_of_aliases_of_one_term_costs_what_the_batch_does() {
    let _alone = alone();
    // Below the ledger's pipelined scan (4,096 events), so both read on one thread.
    let n = 2_000;
    let single = costs(n);
    let doubled = costs(2 * n);
    for ((what, single), doubled) in ["submit", "rebuild_index", "verify"].iter().zip(single).zip(doubled) {
        let ratio = doubled as f64 / single as f64;
        assert!(
            ratio <= 2.5,
            "{what}: {n} aliases allocated {single} bytes, {} allocated {doubled} ({ratio:.2}x): more than linear",
            2 * n
        );
    }
}
