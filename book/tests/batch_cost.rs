//! A write, a rebuild of the snapshot index and a verify of a book whose one batch
//! added many aliases to one term cost what the batch does: each is run on a book of
//! n and of 2n aliases, and the bytes allocated are compared (a global allocator
//! counts them, one test at a time, so counts, not times). The snapshot ID used to
//! re-encode the term once per event of the batch, with every alias it had so far.

#[path = "../../projections/tests/counting/mod.rs"]
mod counting;

use book::{Book, WriteOptions};
use counting::{allocated, alone, names};
use ledger_model::*;

fn event(body: Body) -> NewEvent {
    NewEvent { recorded_at_ms: 0, actor: "human:test".into(), source: "test".into(), body }
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
