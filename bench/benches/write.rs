//! One write to a large book: `Book::submit` of a single `term_put` on books of 5,000
//! and 50,000 terms, held open the way the server holds a book, p50 and p90 over 200
//! writes of each of three kinds (each appends one event):
//!
//! * "longer, at the front": terms 1 to 200 each get a longer rendering, so every
//!   byte of the snapshot document after them moves;
//! * "new term": 200 terms added after the last one;
//! * "same length, spread": 200 terms spread over the book each get a rendering as
//!   long as the one they had;
//!
//! and the first write after the book is opened again (what a one-shot command pays
//! on top of folding the head); and 200 dry runs (`Book::dry_submit`, which writes
//! nothing) of a new term each, on the book held open.
//!
//! Beside it, in the same run: the two whole-state costs a write paid before it
//! decided on the head in place and hashed the snapshot from the head's kept
//! encodings (a copy of the head state, a snapshot ID computed from scratch; a write
//! paid two copies, their drops and one ID), and the durable commit alone (a
//! one-event append to a bare ledger, the floor of any write). After the table, each
//! size's background checkpoint: the encoding of the head and its durable write; and
//! a rebuild of the book's snapshot index (`Book::rebuild_index`, what `lorebank
//! rebuild` does), which folds the whole log and takes the snapshot ID at each of its
//! batch ends (the 1,000-term batches that wrote the book, then every write above);
//! and, after each of twenty more writes, the head's assembler (`Book::assembler`: the
//! frozen projection of the new snapshot built, and filed in the book's cache), what
//! the first assembly after a write waits for, with the write after each such
//! assembly (which may wait for the ledger's writer to file the projection), and
//! the book's estimate of its memory after them (`Book::resident_bytes`).
//!
//! Run: `cd bench && cargo bench --bench write` (`LOREBANK_BENCH_TERMS=5000,50000`
//! picks the sizes).

use std::time::Instant;

use ledger_model::*;
use lorebank_bench::{event, init_book};

const N_WRITES: usize = 200;
/// Writes each followed by the head's first assembly.
const ASSEMBLY_ROUNDS: u32 = 20;

/// T-`number` (source 词NNNNNN), rendered one way or, with `alternative`, the other.
fn term(number: u32, alternative: bool) -> Body {
    let dst =
        if alternative { format!("Термин {number} (иначе)") } else { format!("Термин {number}") };
    Body::TermPut(lorebank_bench::term(number, format!("词{number:06}"), dst))
}

/// T-`number` rendered as long as [`term`] renders it the first way.
fn same_length(number: u32) -> Body {
    Body::TermPut(lorebank_bench::term(number, format!("词{number:06}"), format!("Дермин {number}")))
}

/// p50 and p90 of `book.submit` of each body, one event a write, or with `dry` of
/// `book.dry_submit`.
fn timed_writes(book: &mut book::Book, bodies: impl Iterator<Item = Body>, dry: bool) -> (f64, f64) {
    let mut submit_ms = Vec::with_capacity(N_WRITES);
    for body in bodies {
        let batch = [event(body)];
        let started = Instant::now();
        let submitted =
            if dry { book.dry_submit(&batch, &[]).unwrap() } else { book.submit(&batch, None, Vec::new()).unwrap() };
        submit_ms.push(started.elapsed().as_secs_f64() * 1e3);
        assert_eq!(submitted.decision.events.len(), 1);
    }
    percentiles(submit_ms)
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 9 / 10])
}

fn main() {
    let sizes: Vec<u32> = std::env::var("LOREBANK_BENCH_TERMS")
        .unwrap_or_else(|_| "5000,50000".into())
        .split(',')
        .map(|size| size.trim().parse().expect("LOREBANK_BENCH_TERMS: numbers separated by commas"))
        .collect();
    println!("| terms | submit p50 / p90: longer, at the front | new term | same length, spread | dry run of a new term | first write after opening | state copy | snapshot ID from scratch | durable one-event append |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut checkpoints = Vec::new();
    for n_terms in sizes {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.lorebank");
        let mut book = init_book(&path);
        let numbers: Vec<u32> = (1..=n_terms).collect();
        for chunk in numbers.chunks(1_000) {
            let batch: Vec<NewEvent> = chunk.iter().map(|&number| event(term(number, false))).collect();
            book.submit(&batch, None, Vec::new()).unwrap();
        }
        // Warm: the first write after opening encodes every record once and indexes
        // every term's keys; timed on the book opened again, its state folded.
        drop(book);
        let mut book = book::Book::open(&path).unwrap();
        book.state(None).unwrap();
        let started = Instant::now();
        book.submit(&[event(term(n_terms, true))], None, Vec::new()).unwrap();
        let first_ms = started.elapsed().as_secs_f64() * 1e3;
        let writes = 0..N_WRITES as u32;
        let front = timed_writes(&mut book, writes.clone().map(|index| term(1 + index % n_terms, true)), false);
        let added = timed_writes(&mut book, writes.clone().map(|index| term(n_terms + 1 + index, false)), false);
        // Past the terms the first kind changed, so each keeps its length.
        let step = (n_terms.saturating_sub(N_WRITES as u32) / N_WRITES as u32).max(1);
        let spread = writes.clone().map(|index| same_length(N_WRITES as u32 + 1 + index * step));
        let spread = timed_writes(&mut book, spread, false);
        let new_terms = writes.clone().map(|index| term(n_terms + N_WRITES as u32 + 1 + index, false));
        let dry = timed_writes(&mut book, new_terms, true);
        let state = book.state(None).unwrap();
        assert_eq!(book.snapshot_info(None).unwrap().snapshot, state.snapshot_id());
        let (mut copy_ms, mut id_ms) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            let started = Instant::now();
            let copy = projections::State::clone(&state);
            copy_ms.push(started.elapsed().as_secs_f64() * 1e3);
            drop(copy);
            let started = Instant::now();
            std::hint::black_box(state.snapshot_id());
            id_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        // A background checkpoint shares the head while it encodes it: a write in
        // that window copies the head (the state copy above). Its durable write comes
        // after, without the head.
        let (mut encode_ms, mut put_ms) = (Vec::new(), Vec::new());
        let snapshot = state.snapshot_id();
        for round in 0..5u64 {
            let started = Instant::now();
            let bytes = projections::checkpoint::encode(&state, snapshot);
            encode_ms.push(started.elapsed().as_secs_f64() * 1e3);
            let started = Instant::now();
            book.ledger().put_checkpoint(state.revision(), round, &bytes, 2).unwrap();
            put_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let started = Instant::now();
        let ends = book.rebuild_index().unwrap();
        let rebuild_ms = started.elapsed().as_secs_f64() * 1e3;
        // What the first assembly after a write waits for: the head's assembler, whose
        // frozen projection of the new snapshot is built (and filed in the book's
        // cache); and the write right after such an assembly, which may wait for the
        // ledger's writer to finish filing it.
        let (mut assembler_ms, mut write_after_ms) = (Vec::new(), Vec::new());
        for index in 0..ASSEMBLY_ROUNDS {
            let started = Instant::now();
            // A rendering of the same length, past the terms the writes above changed.
            book.submit(&[event(same_length(N_WRITES as u32 + 2 + index * step))], None, Vec::new()).unwrap();
            if index > 0 {
                write_after_ms.push(started.elapsed().as_secs_f64() * 1e3);
            }
            let started = Instant::now();
            book.assembler().unwrap();
            assembler_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        // What the book holds after them (its frozen projections are most of it).
        let resident_mb = book.resident_bytes() as f64 / 1e6;
        let max = |ms: &[f64]| ms.iter().copied().fold(0.0, f64::max);
        let (assembler_max, write_after_max) = (max(&assembler_ms), max(&write_after_ms));
        let (assembler_p50, write_after_p50) = (percentiles(assembler_ms).0, percentiles(write_after_ms).0);
        checkpoints.push(format!(
            "{n_terms} terms: checkpoint encode {:.1} ms, its durable write {:.1} ms; rebuild of the snapshot index ({} events, {ends} batch ends) {rebuild_ms:.0} ms; the head's assembler after a write p50 {assembler_p50:.0} ms (max {assembler_max:.0}), the write right after it p50 {write_after_p50:.1} ms (max {write_after_max:.1}); the book's memory estimate after them {resident_mb:.0} MB",
            percentiles(encode_ms).0,
            percentiles(put_ms).0,
            state.revision().0,
        ));
        let ledger = ledger::Ledger::create(&dir.path().join("bare.lorebank")).unwrap();
        let mut append_ms = Vec::with_capacity(N_WRITES);
        for index in 0..N_WRITES as u32 {
            let batch = [event(term(1 + index, true))];
            let started = Instant::now();
            ledger.append(&batch, None).unwrap();
            append_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let [front, added, spread, dry] =
            [front, added, spread, dry].map(|(p50, p90)| format!("{p50:.2} / {p90:.2} ms"));
        println!(
            "| {n_terms} | {front} | {added} | {spread} | {dry} | {first_ms:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms |",
            percentiles(copy_ms).0,
            percentiles(id_ms).0,
            percentiles(append_ms).0
        );
    }
    println!();
    checkpoints.iter().for_each(|line| println!("{line}"));
}
