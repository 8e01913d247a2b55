//! Book-level benchmarks (issues 4 and 5), each beside a baseline run in the same
//! process. A plain `harness = false` binary that prints a Markdown table; it asserts
//! the counts it measures, so a broken run cannot report a number.
//!
//! * rebuild: fold 1M ledger events (a realistic mix) from the redb file, strict decode
//!   and chain checks included (`Book::state`, which reads on one thread and folds on
//!   the other), beside a naive decode of the same payloads into a BTreeMap; then
//!   each stage alone on one thread (read and check, fold, clone of the state).
//! * frozen load: load the frozen projection of a 50k-term snapshot, beside a full
//!   rebuild of the same state (decode 50k events, fold, freeze the table, build the
//!   automaton).
//! * hot path: assemble 200 overlapping 3,000-char chunks of 西游记 (the slice in
//!   `tests/data/corpora/`) against the 50k-term glossary
//!   (jieba words), p50/p99, beside the naive per-entry substring loop.
//! * receipts: recorded through group commit, 8 threads, receipts/s.
//! * replay: a receipt with a warm in-memory projection, p50/p99.
//!
//! Run: `cd bench && cargo bench --bench book` (after `scripts/setup.sh`).
//! `LOREBANK_BENCH_SKIP_REBUILD=1` leaves the rebuild case out;
//! `LOREBANK_BENCH_ONLY_REBUILD=1` runs only it (`LOREBANK_BENCH_REBUILD_REPEAT=N`
//! rebuilds N more times before, for a profiler); `LOREBANK_BENCH_HOT_ROUNDS=N` times the
//! hot path N - 1 times per chunk after a warm-up round (default 3, for a profiler more);
//! `LOREBANK_BENCH_HOT_CHUNKS=1` prints each chunk's fastest run, slowest first;
//! `LOREBANK_BENCH_HOT_ONLY=N` times chunk N in every slot; `LOREBANK_BENCH_HOT_COLD=1`
//! evicts the caches before each run.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use book::assemble::assemble;
use book::Book;
use ledger::{Document, Ledger};
use ledger_model::codec::CONFIG;
use ledger_model::*;
use lorebank_bench::{corpus, event, jieba_words, ranked_term};
use matcher::{Flavour, ProfileBuilder};
use projections::frozen::{freeze, Frozen};
use projections::State;

/// Revision `revision` of the rendering of T-`number`.
fn term(number: u32, src: &str, revision: u32) -> Body {
    Body::TermPut(ranked_term(number, src, format!("Термин {number} v{revision}")))
}

fn config_event(table: Hash32) -> NewEvent {
    event(Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig { token_budget: 1_000, ..AssemblyConfig::default() },
        profile: ProfileRef { name: "zh".into(), table: Some(table) },
    }))
}

/// A realistic mix: puts, revisions, aliases added and removed, retirements and
/// re-puts, summaries.
fn event_mix(words: &[String], n_events: usize) -> Vec<NewEvent> {
    let n_terms = words.len() as u32;
    let mut out = Vec::with_capacity(n_events);
    for (idx, word) in words.iter().enumerate() {
        out.push(event(term(idx as u32 + 1, word, 0)));
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut revision = 1u32;
    while out.len() < n_events {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let number = 1 + (state % u64::from(n_terms)) as u32;
        let id = RecordId::new(RecordKind::Term, number).unwrap();
        let body = match state % 10 {
            0..=4 => term(number, &words[number as usize - 1], revision),
            5 | 6 => Body::AliasAdded(AliasAdded {
                id,
                surface: format!("{}甲", words[number as usize - 1]),
                kind: AliasKind::Variant,
                window: None,
                release_to: None,
            }),
            7 => Body::AliasRemoved(AliasRemoved { id, surface: format!("{}甲", words[number as usize - 1]) }),
            8 => Body::TermRetired(TermRetired { id, reason: None }),
            _ => Body::SummaryPut(SummaryPut {
                id: RecordId::new(RecordKind::Summary, 1 + number % 500).unwrap(),
                scope: Scope::Chapter(1 + number % 300),
                text: format!("Краткое содержание главы {number}, версия {revision}."),
                visible_from: None,
                owner: None,
                owner_role: None,
                release_to: None,
            }),
        };
        revision += 1;
        out.push(event(body));
    }
    out
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let dir = tempfile::Builder::new().prefix("lorebank-bench").tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let table_id = Hash32(profile.id().0);
    let words = jieba_words(50_000);
    assert_eq!(words.len(), 50_000, "jieba gave {} words", words.len());
    let mut rows: Vec<String> = Vec::new();

    // --- rebuild: 1M events (LOREBANK_BENCH_SKIP_REBUILD=1 skips it while iterating) ---
    let n_events = 1_000_000;
    if std::env::var_os("LOREBANK_BENCH_SKIP_REBUILD").is_none() {
        let events = event_mix(&words, n_events - 1);
        let path = dir.path().join("million.lorebank");
        {
            let ledger = Ledger::create(&path).unwrap();
            let mut all = vec![config_event(table_id)];
            all.extend(events.iter().cloned());
            for batch in all.chunks(10_000) {
                ledger.append(batch, None).unwrap();
            }
            ledger.file_documents(Vec::new(), vec![(table_id, profile.to_bytes())]).unwrap();
        }
        // LOREBANK_BENCH_REBUILD_REPEAT=N rebuilds N times more first, for a profiler.
        let repeat: usize =
            std::env::var("LOREBANK_BENCH_REBUILD_REPEAT").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
        for _ in 0..repeat {
            let (started, cpu) = (Instant::now(), cpu_ticks());
            let state = Book::open(&path).unwrap().state(None).unwrap();
            let wall = started.elapsed().as_secs_f64() * 1e3;
            // Ticks of 10 ms (CLK_TCK is 100 on Linux).
            eprintln!("rebuild: {wall:.0} ms, CPU {} ms (both threads)", (cpu_ticks() - cpu) * 10);
            assert_eq!(state.revision(), Seq(n_events as u64));
        }
        let started = Instant::now();
        let mut book = Book::open(&path).unwrap();
        let state = book.state(None).unwrap();
        let rebuild = started.elapsed();
        assert_eq!(state.revision(), Seq(n_events as u64));
        let payloads: Vec<Vec<u8>> = {
            let ledger = book.ledger();
            let mut payloads = Vec::with_capacity(n_events);
            ledger
                .scan(Seq(1), Seq(u64::MAX), |event| {
                    payloads.push(event.content.encode().unwrap());
                    ControlFlow::Continue(())
                })
                .unwrap();
            payloads
        };
        let started = Instant::now();
        let mut naive: BTreeMap<Option<RecordId>, Body> = BTreeMap::new();
        for payload in &payloads {
            let (event, _): (NewEvent, usize) = bincode::serde::decode_from_slice(payload, CONFIG).unwrap();
            naive.insert(event.body.record(), event.body);
        }
        let naive_time = started.elapsed();
        assert!(naive.len() > 50_000);
        // Where the time goes: each stage alone, after the naive baseline (which is
        // measured right after the rebuild, as it always was).
        drop((payloads, naive));
        let started = Instant::now();
        let mut n_read = 0u64;
        book.ledger()
            .scan(Seq(1), Seq(u64::MAX), |_| {
                n_read += 1;
                ControlFlow::Continue(())
            })
            .unwrap();
        let read_alone = started.elapsed();
        assert_eq!(n_read, n_events as u64);
        let decoded = book.ledger().events(Seq(1), Seq(u64::MAX)).unwrap();
        let started = Instant::now();
        let mut folded = State::new();
        for event in decoded {
            folded.apply_owned(event);
        }
        let fold_alone = started.elapsed();
        let started = Instant::now();
        let copy = folded.clone();
        let clone_time = started.elapsed();
        assert_eq!(copy.snapshot_id(), state.snapshot_id());
        drop((copy, folded));
        let ratio = rebuild.as_secs_f64() / naive_time.as_secs_f64();
        let met = rebuild.as_secs_f64() <= 1.0 || ratio <= 1.3;
        rows.push(format!(
        "| rebuild 1M events (open + pipelined scan: hashes and chain checks on one thread, strict decode and fold on the other; state cached) | {:.0} ms | {:.2} M events/s | naive decode into BTreeMap (payloads in memory, no checks): {:.0} ms | {ratio:.2}× the naive time; goal ≤ 1 s or ≤ 1.3×: {} |",
        rebuild.as_secs_f64() * 1e3,
        n_events as f64 / rebuild.as_secs_f64() / 1e6,
        naive_time.as_secs_f64() * 1e3,
        if met { "MET" } else { "NOT MET" }
    ));
        rows.push(format!(
            "| rebuild stages alone, one thread each: read + strict decode + checks / fold of decoded events / clone of the folded state | {:.0} ms / {:.0} ms / {:.0} ms | | | |",
            read_alone.as_secs_f64() * 1e3,
            fold_alone.as_secs_f64() * 1e3,
            clone_time.as_secs_f64() * 1e3,
        ));
        drop((book, state));
        if std::env::var_os("LOREBANK_BENCH_ONLY_REBUILD").is_some() {
            rows.iter().for_each(|row| println!("{row}"));
            return;
        }
    }

    // --- a 50k-term book for the hot path ---
    let path = dir.path().join("glossary.lorebank");
    let glossary: Vec<NewEvent> = std::iter::once(config_event(table_id))
        .chain(words.iter().enumerate().map(|(idx, word)| event(term(idx as u32 + 1, word, 0))))
        .collect();
    {
        let ledger = Ledger::create(&path).unwrap();
        ledger.append(&glossary, None).unwrap();
        ledger.file_documents(Vec::new(), vec![(table_id, profile.to_bytes())]).unwrap();
    }
    let mut book = Book::open(&path).unwrap();
    let state = book.state(None).unwrap();
    let snapshot = state.snapshot_id();
    let frozen_bytes = freeze(&state, &profile).unwrap();

    // --- frozen load vs full rebuild of the same state ---
    let payloads: Vec<Vec<u8>> = glossary.iter().map(|event| event.encode().unwrap()).collect();
    let mut loads = Vec::new();
    let mut rebuilds = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let frozen = Frozen::load(&frozen_bytes, &profile, snapshot).unwrap();
        loads.push(started.elapsed());
        assert_eq!(frozen.table().terms.len(), 50_000);
        let started = Instant::now();
        let mut rebuilt = State::new();
        for (idx, payload) in payloads.iter().enumerate() {
            let content: NewEvent = codec::decode_strict(payload).unwrap();
            rebuilt.apply(&Event {
                seq: Seq(idx as u64 + 1),
                prev: Hash32::GENESIS,
                hash: Hash32::GENESIS,
                schema: 1,
                content,
            });
        }
        let table = projections::frozen::table(&rebuilt);
        let matcher = projections::frozen::build_matcher(&table, &profile).unwrap();
        rebuilds.push(started.elapsed());
        assert_eq!(matcher.n_patterns(), frozen.matcher().n_patterns());
    }
    let load = percentile(&mut loads, 0.5);
    let full = percentile(&mut rebuilds, 0.5);
    rows.push(format!(
        "| frozen projection load, 50k terms ({:.1} MB) | {:.1} ms (median of 5) | | full rebuild of the same state (decode, fold, table, automaton): {:.1} ms | {:.1}× faster |",
        frozen_bytes.len() as f64 / 1e6,
        load.as_secs_f64() * 1e3,
        full.as_secs_f64() * 1e3,
        full.as_secs_f64() / load.as_secs_f64()
    ));

    // --- hot path ---
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).expect("tests/data/corpora/xiyouji-head.txt");
    let chars: Vec<char> = text.chars().collect();
    // 200 chunks of 3,000 chars, starting every 240 chars of the 51,791-char slice.
    let chunks: Vec<String> = (0..200)
        .map(|idx| {
            let at = (idx * 240) % (chars.len() - 3_000);
            chars[at..at + 3_000].iter().collect()
        })
        .collect();
    // Each chunk shares 92% of its text with the one before, so its records are warm
    // in the caches; chunk 0 follows chunk 199 and shares nothing with it.
    // `LOREBANK_BENCH_HOT_ONLY=N` times chunk N in every slot instead (warm even for
    // chunk 0), and `LOREBANK_BENCH_HOT_COLD=1` writes over 64 MB before each run, so
    // every chunk starts with caches cold (a bound that no real chunk reaches).
    let chunks: Vec<String> = match std::env::var("LOREBANK_BENCH_HOT_ONLY").ok().and_then(|n| n.parse::<usize>().ok())
    {
        Some(only) => vec![chunks[only % chunks.len()].clone(); chunks.len()],
        None => chunks,
    };
    let mut evict = vec![0u8; if std::env::var_os("LOREBANK_BENCH_HOT_COLD").is_some() { 64 << 20 } else { 0 }];
    let frozen = Frozen::load(&frozen_bytes, &profile, snapshot).unwrap();
    let mut samples = Vec::new();
    let mut n_injected = 0usize;
    // More rounds (`LOREBANK_BENCH_HOT_ROUNDS`) give a profiler enough samples of the hot path.
    let rounds: usize =
        std::env::var("LOREBANK_BENCH_HOT_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3).max(2);
    for round in 0..rounds {
        for (idx, chunk) in chunks.iter().enumerate() {
            evict.iter_mut().for_each(|byte| *byte = byte.wrapping_add(1));
            std::hint::black_box(&evict);
            let started = Instant::now();
            let assembly = assemble(&frozen, 10 + (idx as u32 % 5), chunk, None).unwrap();
            let elapsed = started.elapsed();
            if round > 0 {
                samples.push(elapsed);
            }
            n_injected += assembly.injected.len();
        }
    }
    assert!(n_injected > 0);
    // Whether the tail is the text or the machine: each chunk's fastest run, slowest
    // first (`LOREBANK_BENCH_HOT_CHUNKS=1`). Close fastest runs and a far p99 mean the
    // tail is the machine's.
    if std::env::var_os("LOREBANK_BENCH_HOT_CHUNKS").is_some() {
        let fastest = |chunk: usize| samples.iter().skip(chunk).step_by(chunks.len()).min().copied();
        let mut by_chunk: Vec<(Duration, usize)> =
            (0..chunks.len()).filter_map(|chunk| Some((fastest(chunk)?, chunk))).collect();
        by_chunk.sort();
        for (took, chunk) in by_chunk.iter().rev().take(5) {
            eprintln!("chunk {chunk}: fastest run {:.0} µs", micros(*took));
        }
        eprintln!("the median chunk's fastest run: {:.0} µs", micros(by_chunk[by_chunk.len() / 2].0));
    }
    let p50 = percentile(&mut samples, 0.5);
    let p99 = percentile(&mut samples, 0.99);
    // Fold and match alone, the floor under the hot path.
    let mut fold_match = Vec::new();
    let mut n_hits = 0usize;
    for chunk in &chunks {
        let started = Instant::now();
        let normalized = frozen.matcher().profile().normalize(chunk).unwrap();
        let hits = frozen.matcher().find(&normalized);
        fold_match.push(started.elapsed());
        n_hits += hits.len();
    }
    let fold_match_p50 = percentile(&mut fold_match, 0.5);
    let mut naive_samples = Vec::new();
    let mut n_naive = 0usize;
    for chunk in chunks.iter().take(10) {
        let started = Instant::now();
        for word in &words {
            if chunk.contains(word.as_str()) {
                n_naive += 1;
            }
        }
        naive_samples.push(started.elapsed());
    }
    assert!(n_naive > 0);
    let naive_p50 = percentile(&mut naive_samples, 0.5);
    rows.push(format!(
        "| hot path: assemble a 3,000-char chunk, 50k terms ({} chunks × {}; {} hits per chunk; fold + match alone p50 {:.0} µs) | p50 {:.0} µs, p99 {:.0} µs | | naive per-entry `contains` loop (no fold, no render): p50 {:.0} µs | {:.0}× faster |",
        chunks.len(),
        rounds - 1,
        n_hits / chunks.len(),
        micros(fold_match_p50),
        micros(p50),
        micros(p99),
        micros(naive_p50),
        naive_p50.as_secs_f64() / p50.as_secs_f64()
    ));

    // --- receipts through group commit ---
    let mut assembled = Vec::new();
    for (idx, chunk) in chunks.iter().take(50).enumerate() {
        assembled.push(book.assemble_chunk(&book::Reader::Full, 1, &format!("c{idx}"), chunk, None, true).unwrap());
    }
    let ledger = book.ledger();
    // Each writer records `per_call` receipts per call (a pipeline recording a
    // chapter's chunks together), from `n_threads` threads at once.
    let receipts_rate = |chapter: u32, n_threads: usize, per_thread: usize, per_call: usize| -> f64 {
        let started = Instant::now();
        std::thread::scope(|scope| {
            for thread_idx in 0..n_threads {
                let assembled = &assembled;
                scope.spawn(move || {
                    let mut pending = Vec::new();
                    for receipt_idx in 0..per_thread {
                        let mut receipt = assembled[receipt_idx % assembled.len()].receipt.clone();
                        receipt.chunk_key = format!("t{thread_idx}-{receipt_idx}");
                        receipt.chapter = chapter;
                        let id = receipt.id();
                        pending.push(Document {
                            id,
                            bytes: receipt.encode(),
                            group: chapter,
                            key: receipt.chunk_key.clone(),
                        });
                        if pending.len() == per_call {
                            ledger.file_documents(std::mem::take(&mut pending), Vec::new()).unwrap();
                        }
                    }
                    if !pending.is_empty() {
                        ledger.file_documents(pending, Vec::new()).unwrap();
                    }
                });
            }
        });
        let elapsed = started.elapsed();
        assert_eq!(ledger.filed(Some(chapter)).unwrap().len(), n_threads * per_thread);
        (n_threads * per_thread) as f64 / elapsed.as_secs_f64()
    };
    let n_threads = 8;
    let rate_8 = receipts_rate(2, n_threads, 1_250, 1);
    let rate_64 = receipts_rate(4, 64, 200, 1);
    let rate_batched = receipts_rate(5, n_threads, 1_250, 25);
    let started = Instant::now();
    for receipt_idx in 0..500 {
        let mut receipt = assembled[receipt_idx % assembled.len()].receipt.clone();
        receipt.chunk_key = format!("seq-{receipt_idx}");
        let id = receipt.id();
        ledger
            .file_documents(
                vec![Document { id, bytes: receipt.encode(), group: 3, key: receipt.chunk_key.clone() }],
                Vec::new(),
            )
            .unwrap();
    }
    let sequential = started.elapsed();
    let sequential_rate = 500.0 / sequential.as_secs_f64();
    let receipt_bytes = assembled.iter().map(|a| a.receipt.encode().len()).sum::<usize>() / assembled.len();
    for (label, rate) in [
        (format!("{n_threads} threads, one receipt per call"), rate_8),
        ("64 threads, one receipt per call".to_owned(), rate_64),
        (format!("{n_threads} threads, 25 receipts per call"), rate_batched),
    ] {
        rows.push(format!(
                        "| receipts through group commit, {label} (mean receipt {receipt_bytes} B) | {rate:.0} receipts/s | | one thread, one durable commit per receipt: {sequential_rate:.0} receipts/s | {:.1}× |",
            rate / sequential_rate
        ));
    }

    // --- replay, warm ---
    let target = assembled[7].id.to_hex();
    assert!(book.replay(&book::Reader::Full, &target).unwrap().identical);
    let mut replays = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let replayed = book.replay(&book::Reader::Full, &target).unwrap();
        replays.push(started.elapsed());
        assert!(replayed.identical);
    }
    let p50 = percentile(&mut replays, 0.5);
    let p99 = percentile(&mut replays, 0.99);
    rows.push(format!(
        "| replay a receipt, warm projection (read receipt and input, assemble, compare) | p50 {:.0} µs, p99 {:.0} µs | | | |",
        micros(p50),
        micros(p99)
    ));

    println!("| measurement | lorebank | rate | baseline (same process) | ratio |");
    println!("| --- | --- | --- | --- | --- |");
    for row in rows {
        println!("{row}");
    }
}

/// User + system ticks of this process so far (all threads).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after.split_whitespace().skip(11).take(2).filter_map(|field| field.parse::<u64>().ok()).sum()
}
