//! Finding the chunk (issue 27): a 3,000-char chunk wrapped in a GalTransl-like prompt
//! located in a 1,000-chapter book, beside a naive baseline in the same run, and the
//! index's build.
//!
//! The book is made from the 西游记 slice in `tests/data/corpora/`, deterministically
//! (`lorebank_bench::chapters`, shared with `benches/proxy.rs`): chapter `c` is a
//! window of the slice's paragraphs starting at paragraph `c × 7919 mod n` and 3,000 to
//! 6,000 chars long, with every Han char outside the slice's 200 most frequent ones and
//! the glossary's names replaced through a permutation drawn for that chapter
//! (xorshift seeded by `c`). Chapters keep the slice's paragraphs, punctuation,
//! function words and names, so names and stock phrases recur across chapters as in a
//! real book, while its content words make each chapter its own text.
//!
//! * `locate`: `Index::locate` of the request (fold, anchors, runs, chains, spans).
//! * `naive`: fold the request, cut it into 16-char shingles every 16 chars, count for
//!   every chapter (pre-folded) how many it contains with `str::contains`, and take the
//!   chapter with the most: the loop one writes without an index, which finds the
//!   chapter and no span.
//! * `build`: `Index::build` of the 1,000 chapters.
//!
//! Besides criterion's estimates, the run prints p50 and p99 of `locate` over 100
//! requests (each from another chapter) and checks that every one found its chunk.
//!
//! Run: `cd bench && cargo bench --bench locate` (`-- --quick` for a short run).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use locate::{Index, Outcome};
use lorebank_bench::chapters::{book, request, CHAPTERS};
use matcher::{Flavour, Profile, ProfileBuilder};

const SHINGLE: usize = 16;

/// The chapter holding the most of the request's 16-char shingles (every 16th).
fn naive(profile: &Profile, folded_chapters: &[(u32, String)], request: &str) -> u32 {
    let folded: Vec<char> = profile.fold(request).chars().collect();
    let shingles: Vec<String> = folded.chunks_exact(SHINGLE).map(|s| s.iter().collect()).collect();
    let mut best = (0usize, 0u32);
    for (number, chapter) in folded_chapters {
        let hits = shingles.iter().filter(|s| chapter.contains(s.as_str())).count();
        if hits > best.0 {
            best = (hits, *number);
        }
    }
    best.1
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn bench(c: &mut Criterion) {
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let book = book();
    let n_chars: usize = book.iter().map(|(_, text, _)| text.chars().count()).sum();
    let started = Instant::now();
    let index = Index::build(&profile, book.iter().map(|(n, text, _)| (*n, text.as_str()))).unwrap();
    let build = started.elapsed();
    let folded: Vec<(u32, String)> = book.iter().map(|(n, text, _)| (*n, profile.fold(text))).collect();

    // p50 and p99 over 100 requests, each from another chapter; each must be found,
    // from its first paragraph to its last.
    let requests: Vec<(u32, String, usize)> = (0..100u32)
        .map(|i| {
            let number = 5 + i * 10;
            let (text, n_lines) = request(&book[number as usize - 1].2);
            (number, text, n_lines)
        })
        .collect();
    let mut samples = Vec::new();
    for round in 0..5 {
        for (number, text, n_lines) in &requests {
            let started = Instant::now();
            let outcome = index.locate(text).unwrap();
            let elapsed = started.elapsed();
            let Outcome::Found { chunk, .. } = outcome else { panic!("chapter {number}: {outcome:?}") };
            assert_eq!(chunk.chapter, *number);
            let chapter = index.chapter_text(*number).unwrap();
            let lines = &book[*number as usize - 1].2;
            assert!(chapter[chunk.source.clone()].starts_with(lines[0].as_str()));
            assert!(chapter[chunk.source.clone()].ends_with(lines[n_lines - 1].as_str()));
            if round > 0 {
                samples.push(elapsed);
            }
        }
    }
    let (p50, p99) = (percentile(&mut samples, 0.5), percentile(&mut samples, 0.99));
    let (number, text, _) = &requests[50];
    let started = Instant::now();
    assert_eq!(naive(&profile, &folded, text), *number);
    let naive_once = started.elapsed();
    let bytes = index.heap_bytes();
    println!(
        "locate: {CHAPTERS} chapters, {n_chars} chars; build {:.0} ms, {:.1} MB on the heap ({:.1} bytes a char); \
         locate p50 {:.0} µs, p99 {:.0} µs over {} requests of {} chars; naive once {:.0} ms",
        build.as_secs_f64() * 1e3,
        bytes as f64 / 1e6,
        bytes as f64 / n_chars as f64,
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        samples.len(),
        text.chars().count(),
        naive_once.as_secs_f64() * 1e3,
    );

    let mut group = c.benchmark_group("locate");
    group.bench_function("locate", |b| b.iter(|| black_box(index.locate(black_box(text)).unwrap())));
    group.sample_size(10);
    group.bench_function("naive", |b| b.iter(|| black_box(naive(&profile, &folded, black_box(text)))));
    group.bench_function("build", |b| {
        b.iter(|| black_box(Index::build(&profile, book.iter().map(|(n, text, _)| (*n, text.as_str()))).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
