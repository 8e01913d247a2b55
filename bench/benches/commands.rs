//! Fresh-process latency of the `lorebank` binary on books of 10k, 100k and 1M events
//! with the same final state (issue 9): `assemble`, `term put`, `show`, `snapshot`,
//! each run as a new process the way a pipeline or a person runs it, with its wall
//! time (median of the runs) and its peak memory (`/usr/bin/time`'s max RSS). The
//! baseline in the same run is the 10k-event book: the goal is a flat line.
//!
//! The books are written through `Book::submit` in batches of 1,000 events, the way
//! writers write them (so writers' checkpoints are there): 8,000 terms (jieba
//! words), then pairs of edits that change a term's rendering and change it back, so
//! every book ends with the same snapshot ID.
//!
//! Then, on the 1M-event book: a full `rebuild` in a fresh process, and 32 writer
//! processes with 10 `term put`s each, all at once (every write must succeed and the
//! chain must verify).
//!
//! Run: `cargo build --release && cd bench && cargo bench --bench commands`
//! (after `scripts/setup.sh`). `LOREBANK_BIN` overrides the binary;
//! `LOREBANK_BENCH_SIZES=10000,100000` picks the books.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use book::Book;
use ledger_model::*;
use lorebank_bench::{binary, corpus, event, init_book, jieba_words};

const N_TERMS: u32 = 8_000;
const N_RUNS: usize = 7;

/// T-`number`, rendered one way or, with `alternative`, the other.
fn term(number: u32, src: &str, alternative: bool) -> Body {
    let dst =
        if alternative { format!("Термин {number} (иначе)") } else { format!("Термин {number}") };
    Body::TermPut(lorebank_bench::term(number, src, dst))
}

/// A book of `n_events` events whose final state is the same for every size.
fn write_book(path: &Path, words: &[String], n_events: u64) {
    let mut book = init_book(path);
    let mut events: Vec<NewEvent> = Vec::with_capacity(1_000);
    let flush = |events: &mut Vec<NewEvent>, book: &mut Book| {
        if !events.is_empty() {
            let submitted = book.submit(events, None, Vec::new()).unwrap();
            assert!(submitted.decision.dropped.is_empty());
            events.clear();
        }
    };
    for number in 1..=N_TERMS {
        events.push(event(term(number, &words[number as usize - 1], false)));
        if events.len() == 1_000 {
            flush(&mut events, &mut book);
        }
    }
    flush(&mut events, &mut book);
    // Edits there and back again: a batch renders up to 500 terms otherwise, the
    // next batch restores them (a batch holds one put per record).
    let mut head = u64::from(N_TERMS) + 1;
    let mut first = 1u32;
    while head + 2 <= n_events {
        let n_pair = ((n_events - head) / 2).min(500) as u32;
        let numbers: Vec<u32> = (0..n_pair).map(|offset| (first - 1 + offset) % N_TERMS + 1).collect();
        for alternative in [true, false] {
            let batch: Vec<NewEvent> =
                numbers.iter().map(|&number| event(term(number, &words[number as usize - 1], alternative))).collect();
            let submitted = book.submit(&batch, None, Vec::new()).unwrap();
            assert!(submitted.decision.dropped.is_empty());
        }
        head += 2 * u64::from(n_pair);
        first = (first - 1 + n_pair) % N_TERMS + 1;
    }
}

/// Runs `lorebank --book BOOK ARGS` in a new process; returns its wall time and
/// peak RSS in KiB. Fails the benchmark on a non-zero exit.
fn run(book: &Path, args: &[&str]) -> (Duration, u64) {
    let rss_file = book.with_extension("rss");
    let started = Instant::now();
    let output = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .arg(binary())
        .arg("--book")
        .arg(book)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(output.status.success(), "lorebank {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    let rss = std::fs::read_to_string(&rss_file).unwrap().trim().parse().unwrap();
    (elapsed, rss)
}

fn median(mut samples: Vec<(Duration, u64)>) -> (Duration, u64) {
    samples.sort();
    let rss = samples.iter().map(|(_, rss)| *rss).max().unwrap();
    (samples[samples.len() / 2].0, rss)
}

/// One book: its events, (median time, peak RSS) per command, file size, write time.
type Measured = (u64, Vec<(Duration, u64)>, u64, Duration);

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn main() {
    assert!(binary().exists(), "{} is missing: run `cargo build --release` first", binary().display());
    let dir = tempfile::Builder::new().prefix("lorebank-bench").tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let words = jieba_words(N_TERMS as usize);
    let sizes: Vec<u64> = std::env::var("LOREBANK_BENCH_SIZES")
        .map(|sizes| sizes.split(',').map(|size| size.parse().unwrap()).collect())
        .unwrap_or_else(|_| vec![10_000, 100_000, 1_000_000]);
    let text: String = std::fs::read_to_string(corpus("xiyouji-head.txt")).unwrap().chars().take(3_000).collect();
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, &text).unwrap();
    let chunk = chunk.to_str().unwrap().to_owned();

    let mut table: Vec<Measured> = Vec::new();
    let mut snapshots = Vec::new();
    for &n_events in &sizes {
        let path = dir.path().join(format!("book-{n_events}.lorebank"));
        let started = Instant::now();
        write_book(&path, &words, n_events);
        let written = started.elapsed();
        let size = std::fs::metadata(&path).unwrap().len();
        let output = Command::new(binary()).arg("--book").arg(&path).arg("snapshot").output().unwrap();
        snapshots.push(String::from_utf8(output.stdout).unwrap().split_whitespace().next().unwrap_or("").to_owned());
        // The first assemble of a snapshot freezes its projection into the cache.
        run(&path, &["assemble", "--chapter", "5", "--chunk", "warm", "--text", &chunk]);
        let mut rows = Vec::new();
        let mut n_put = 0u32;
        for command in ["assemble", "term put", "show", "snapshot"] {
            let samples = (0..N_RUNS)
                .map(|index| {
                    let key = format!("c{index}");
                    match command {
                        "assemble" => run(&path, &["assemble", "--chapter", "5", "--chunk", &key, "--text", &chunk]),
                        "term put" => {
                            n_put += 1;
                            let dst = format!("Термин 1 (правка {n_put})");
                            run(&path, &["term", "put", "--id", "T-1", "--src", &words[0], "--dst", &dst])
                        }
                        "show" => run(&path, &["show", "--chapter", "5"]),
                        _ => run(&path, &["snapshot"]),
                    }
                })
                .collect();
            rows.push(median(samples));
        }
        eprintln!("{n_events} events written in {:.1} s ({} MB)", written.as_secs_f64(), size / 1_000_000);
        table.push((n_events, rows, size, written));
    }
    assert!(snapshots.windows(2).all(|pair| pair[0] == pair[1]), "the books differ: {snapshots:?}");

    println!("| command | {} |", sizes.iter().map(|n| format!("{n} events")).collect::<Vec<_>>().join(" | "));
    println!("| --- |{}", " --- |".repeat(sizes.len()));
    for (index, command) in ["assemble", "term put", "show --chapter 5", "snapshot"].iter().enumerate() {
        let cells: Vec<String> = table
            .iter()
            .map(|(_, rows, _, _)| format!("{:.0} ms, {} MB", ms(rows[index].0), rows[index].1 / 1024))
            .collect();
        let ratio = ms(table.last().unwrap().1[index].0) / ms(table[0].1[index].0);
        println!("| `{command}` | {} | largest / smallest: {ratio:.2}× |", cells.join(" | "));
    }
    let sizes_row: Vec<String> = table.iter().map(|(_, _, size, _)| format!("{} MB", size / 1_000_000)).collect();
    println!("| book file | {} |", sizes_row.join(" | "));

    // The largest book: a full rebuild, then 32 writers at once.
    let (largest, ..) = table.last().unwrap();
    let path = dir.path().join(format!("book-{largest}.lorebank"));
    let (rebuild, rss) = run(&path, &["rebuild"]);
    println!("\nrebuild of {largest} events in a fresh process: {:.0} ms, {} MB", ms(rebuild), rss / 1024);
    let started = Instant::now();
    let writers: Vec<_> = (0..32)
        .map(|writer| {
            let path = path.clone();
            let src = words[writer + 1].clone();
            std::thread::spawn(move || {
                let mut n_ok = 0;
                for write in 0..10 {
                    let dst = format!("Писатель {writer}, правка {write}");
                    let id = format!("T-{}", writer + 2);
                    let status = Command::new(binary())
                        .arg("--book")
                        .arg(&path)
                        .args(["term", "put", "--id", &id, "--src", &src, "--dst", &dst])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status()
                        .unwrap();
                    n_ok += usize::from(status.success());
                }
                n_ok
            })
        })
        .collect();
    let n_ok: usize = writers.into_iter().map(|writer| writer.join().unwrap()).sum();
    let elapsed = started.elapsed();
    let verified =
        Command::new(binary()).arg("--book").arg(&path).arg("verify").stdout(Stdio::null()).status().unwrap().success();
    println!(
        "32 writer processes × 10 `term put` on the {largest}-event book: {n_ok} of 320 succeeded in {:.1} s; verify: {}",
        elapsed.as_secs_f64(),
        if verified { "ok" } else { "FAILED" }
    );
}
