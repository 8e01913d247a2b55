//! Matcher benchmarks (issue 3): per 3,000-char chunk of 西游记 and 吾輩は猫である with
//! 1k / 10k / 50k keys, fold + match beside a naive per-entry substring loop (what
//! GalTransl and SakuraLLM do per chunk) and aho-corasick leftmost-longest; fold
//! throughput; automaton build and frozen load at 50k keys.
//!
//! Keys: Chinese from jieba 0.42.1 `dict.txt` (PyPI; `LOREBANK_JIEBA_DICT` or found via
//! `python3 -c 'import jieba'`), every k-th word; Japanese names from Debian `enamdict`
//! (EUC-JP, `/usr/share/edict/enamdict` or `LOREBANK_ENAMDICT`), every k-th name of
//! at least two chars. A key set that cannot be read (enamdict is not installed by
//! `scripts/setup.sh`) skips its cases and says what is missing. Text: the corpus slices in `tests/data/corpora/` (about 50k chars
//! of each book).
//!
//! Run: `cd bench && CARGO_TARGET_DIR=/work/target-bench cargo bench --bench matcher`

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use matcher::{Flavour, Matcher, MatcherBuilder, Profile, ProfileBuilder};

const CHUNK_CHARS: usize = 3_000;
const N_CHUNKS: usize = 16;
const KEY_COUNTS: [usize; 3] = [1_000, 10_000, 50_000];

fn corpus(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/corpora/").to_string() + name;
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The words of jieba's `dict.txt` (installed by `scripts/setup.sh`), or what is
/// missing.
fn jieba_words() -> Result<Vec<String>, String> {
    let path = match std::env::var("LOREBANK_JIEBA_DICT") {
        Ok(path) => path,
        Err(_) => {
            let out = Command::new("python3")
                .args(["-c", "import jieba,os;print(os.path.dirname(jieba.__file__))"])
                .output()
                .map_err(|e| format!("python3: {e} (scripts/setup.sh installs python3 and jieba)"))?;
            if !out.status.success() {
                return Err("python3 cannot import jieba (scripts/setup.sh installs it)".into());
            }
            format!("{}/dict.txt", String::from_utf8_lossy(&out.stdout).trim())
        }
    };
    let dict = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(dict.lines().filter_map(|l| l.split(' ').next()).map(str::to_string).collect())
}

/// Japanese names of at least two chars from Debian's `enamdict`, or what is missing.
/// `scripts/setup.sh` does not install it (Debian ships it outside the packages CI
/// needs): the Japanese cases are then skipped, saying so.
fn enamdict_names() -> Result<Vec<String>, String> {
    let path = std::env::var("LOREBANK_ENAMDICT").unwrap_or_else(|_| "/usr/share/edict/enamdict".into());
    let bytes = std::fs::read(&path)
        .map_err(|e| format!("{path}: {e} (apt-get install enamdict, or set LOREBANK_ENAMDICT to a copy)"))?;
    let (text, _, had_errors) = encoding_rs::EUC_JP.decode(&bytes);
    if had_errors {
        return Err(format!("{path}: not valid EUC-JP"));
    }
    let mut names: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(' ').next())
        .filter(|n| n.chars().count() >= 2)
        .map(str::to_string)
        .collect();
    names.dedup();
    Ok(names)
}

/// Every k-th entry so that about `n` keys remain.
fn stride(all: &[String], n: usize) -> Vec<String> {
    let step = (all.len() / n).max(1);
    all.iter().step_by(step).take(n).cloned().collect()
}

fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n_total = chars.len() / CHUNK_CHARS;
    (0..N_CHUNKS)
        .map(|i| {
            let at = (i * n_total / N_CHUNKS) * CHUNK_CHARS;
            chars[at..at + CHUNK_CHARS].iter().collect()
        })
        .collect()
}

struct Setup {
    label: &'static str,
    profile: Profile,
    chunks: Vec<String>,
    folded_chunks: Vec<String>,
    keys: Vec<String>,
}

fn setups() -> Vec<Setup> {
    let zh = ProfileBuilder::new(Flavour::Zh).build().expect("zh profile");
    let ja = ProfileBuilder::new(Flavour::Ja).build().expect("ja profile");
    let zh_chunks = chunks(&corpus("xiyouji-head.txt"));
    let ja_chunks = chunks(&(corpus("wagahai-kushami.txt") + &corpus("wagahai-violin.txt")));
    let fold_all = |p: &Profile, cs: &[String]| -> Vec<String> {
        cs.iter().map(|c| p.normalize(c).expect("normalize").as_str().to_string()).collect()
    };
    // A key set that cannot be read skips its cases, saying what is missing.
    let mut setups = Vec::new();
    match jieba_words() {
        Ok(keys) => setups.push(Setup {
            label: "xiyouji",
            folded_chunks: fold_all(&zh, &zh_chunks),
            profile: zh,
            chunks: zh_chunks,
            keys,
        }),
        Err(missing) => eprintln!("matcher bench: skipping the Chinese cases: {missing}"),
    }
    match enamdict_names() {
        Ok(keys) => setups.push(Setup {
            label: "wagahai",
            folded_chunks: fold_all(&ja, &ja_chunks),
            profile: ja,
            chunks: ja_chunks,
            keys,
        }),
        Err(missing) => eprintln!("matcher bench: skipping the Japanese cases: {missing}"),
    }
    setups
}

fn bench_matcher(c: &mut Criterion) {
    let setups = setups();
    for setup in &setups {
        let mut group = c.benchmark_group(format!("fold/{}", setup.label));
        let n_bytes: usize = setup.chunks.iter().map(String::len).sum::<usize>() / setup.chunks.len();
        group.throughput(Throughput::Bytes(n_bytes as u64));
        let mut i = 0usize;
        group.bench_function("normalize", |b| {
            b.iter(|| {
                i += 1;
                black_box(setup.profile.normalize(&setup.chunks[i % N_CHUNKS]).expect("normalize"))
            })
        });
        group.finish();

        for &n_keys in &KEY_COUNTS {
            let keys = stride(&setup.keys, n_keys);
            let matcher = MatcherBuilder::new(&setup.profile)
                .word_boundaries(true)
                .build(keys.iter().enumerate().map(|(i, k)| (k.as_str(), i as u32)))
                .expect("build");
            let patterns: Vec<&str> = matcher.pattern_ids().map(|id| matcher.pattern(id)).collect();
            let aho = aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(&patterns)
                .expect("aho-corasick");
            // Expected counts: raw leftmost-longest daachorse and aho-corasick agree on
            // every folded chunk, and the full matcher finds something.
            let raw_count = |folded: &str| {
                let (mut n, mut pos) = (0usize, 0usize);
                while let Some((_, _, end)) = matcher::LeftmostLongest::find_from(&matcher, folded, pos) {
                    n += 1;
                    pos = end;
                }
                n
            };
            let mut n_hits = 0usize;
            for (chunk, folded) in setup.chunks.iter().zip(&setup.folded_chunks) {
                assert_eq!(raw_count(folded), aho.find_iter(folded.as_str()).count(), "engines disagree");
                n_hits += matcher.find(&setup.profile.normalize(chunk).expect("normalize")).len();
            }
            assert!(n_hits > 0, "{} with {n_keys} keys: no hits", setup.label);
            eprintln!(
                "{} {n_keys} keys: {} patterns, {:.1} hits/chunk",
                setup.label,
                matcher.n_patterns(),
                n_hits as f64 / N_CHUNKS as f64
            );

            let mut group = c.benchmark_group(format!("chunk/{}/{n_keys}", setup.label));
            group.warm_up_time(Duration::from_millis(700));
            group.measurement_time(Duration::from_secs(2));
            let mut i = 0usize;
            group.bench_function("lorebank_fold_match", |b| {
                b.iter(|| {
                    i += 1;
                    let normalized = setup.profile.normalize(&setup.chunks[i % N_CHUNKS]).expect("normalize");
                    black_box(matcher.find(&normalized).len())
                })
            });
            group.bench_function("match_only_daachorse", |b| {
                b.iter(|| {
                    i += 1;
                    black_box(raw_count(&setup.folded_chunks[i % N_CHUNKS]))
                })
            });
            group.bench_function("match_only_aho_corasick", |b| {
                b.iter(|| {
                    i += 1;
                    black_box(aho.find_iter(setup.folded_chunks[i % N_CHUNKS].as_str()).count())
                })
            });
            group.bench_function("fold_then_aho_corasick", |b| {
                b.iter(|| {
                    i += 1;
                    let normalized = setup.profile.normalize(&setup.chunks[i % N_CHUNKS]).expect("normalize");
                    black_box(aho.find_iter(normalized.as_str()).count())
                })
            });
            group.sample_size(10);
            group.warm_up_time(Duration::from_millis(300));
            group.bench_function("naive_substring_loop", |b| {
                b.iter(|| {
                    i += 1;
                    let folded = &setup.folded_chunks[i % N_CHUNKS];
                    black_box(patterns.iter().filter(|p| folded.contains(**p)).count())
                })
            });
            group.finish();

            if n_keys == 50_000 {
                let mut group = c.benchmark_group(format!("automaton/{}/50000", setup.label));
                group.sample_size(10);
                group.bench_function("build", |b| {
                    b.iter(|| {
                        black_box(
                            MatcherBuilder::new(&setup.profile)
                                .build(keys.iter().enumerate().map(|(i, k)| (k.as_str(), i as u32)))
                                .expect("build"),
                        )
                    })
                });
                let frozen = matcher.to_bytes();
                eprintln!("{} 50k keys: frozen {} bytes", setup.label, frozen.len());
                group.bench_function("frozen_load", |b| {
                    b.iter_batched(
                        || (),
                        |()| black_box(Matcher::from_bytes(&frozen, &setup.profile).expect("load")),
                        BatchSize::SmallInput,
                    )
                });
                group.finish();
            }
        }
    }
}

criterion_group!(benches, bench_matcher);
criterion_main!(benches);
