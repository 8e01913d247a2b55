//! Finding the chunk (issue 27): a 3,000-char chunk wrapped in a GalTransl-like prompt
//! located in a 1,000-chapter book, beside a naive baseline in the same run, and the
//! index's build.
//!
//! The book is made from the 西游记 slice in `tests/data/corpora/`, deterministically:
//! chapter `c` is a window of the slice's paragraphs starting at paragraph
//! `c × 7919 mod n` and 3,000 to 6,000 chars long, with every Han char outside the
//! slice's 200 most frequent ones and the glossary's names replaced through a
//! permutation drawn for that chapter (xorshift seeded by `c`). Chapters keep the
//! slice's paragraphs, punctuation, function words and names, so names and stock
//! phrases recur across chapters as in a real book, while its content words make each
//! chapter its own text.
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
use matcher::{Flavour, Profile, ProfileBuilder};

const CHAPTERS: u32 = 1_000;
const CHUNK_CHARS: usize = 3_000;
const SHINGLE: usize = 16;
const NAMES: &[&str] = &[
    "悟空", "孙悟空", "大圣", "齐天大圣", "玉帝", "猴王", "美猴王", "菩萨", "老君", "如来", "观音", "天王", "哪吒", "二郎",
    "花果山", "水帘洞", "太白金星", "祖师", "龙王", "行者",
];

fn corpus() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/corpora/xiyouji-head.txt");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// The 1,000 chapters (number, text, paragraphs without indentation).
fn book() -> Vec<(u32, String, Vec<String>)> {
    let text = corpus();
    let paragraphs: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut counts = std::collections::BTreeMap::<char, usize>::new();
    for c in text.chars().filter(|&c| is_han(c)) {
        *counts.entry(c).or_default() += 1;
    }
    let mut by_count: Vec<(usize, char)> = counts.iter().map(|(&c, &n)| (n, c)).collect();
    by_count.sort_by(|a, b| b.cmp(a));
    let mut fixed: std::collections::BTreeSet<char> = by_count.iter().take(200).map(|&(_, c)| c).collect();
    fixed.extend(NAMES.iter().flat_map(|name| name.chars()));
    let movable: Vec<char> = counts.keys().copied().filter(|c| !fixed.contains(c)).collect();
    (1..=CHAPTERS)
        .map(|number| {
            let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ u64::from(number).wrapping_mul(0x2545_F491_4F6C_DD1D));
            let mut image = movable.clone();
            for i in (1..image.len()).rev() {
                image.swap(i, (rng.next() % (i as u64 + 1)) as usize);
            }
            let map: std::collections::BTreeMap<char, char> = movable.iter().copied().zip(image).collect();
            let target = 3_000 + (number as usize * 37) % 3_000;
            let mut at = (number as usize * 7_919) % paragraphs.len();
            let mut lines = Vec::new();
            let mut n_chars = 0;
            while n_chars < target {
                let line: String = paragraphs[at].chars().map(|c| *map.get(&c).unwrap_or(&c)).collect();
                n_chars += line.chars().count();
                lines.push(line);
                at = (at + 1) % paragraphs.len();
            }
            let mut chapter = format!("第{number}回\r\n\r\n");
            for line in &lines {
                chapter.push_str("    ");
                chapter.push_str(line);
                chapter.push_str("\r\n\r\n");
            }
            (number, chapter, lines)
        })
        .collect()
}

/// The first paragraphs of a chapter up to `CHUNK_CHARS` chars, wrapped in GalTransl's
/// prompt with every name of the glossary, as a GalTransl-like tool sends it.
fn request(lines: &[String]) -> (String, usize) {
    let mut chunk: Vec<&str> = Vec::new();
    let mut n_chars = 0;
    for line in lines {
        if n_chars >= CHUNK_CHARS {
            break;
        }
        n_chars += line.chars().count();
        chunk.push(line);
    }
    let glossary: String = NAMES.iter().map(|name| format!("{name}->Имя {}\n", name.chars().count())).collect();
    let prompt = format!(
        "你是一个视觉小说翻译模型，可以通顺地使用给定的术语表以指定的风格将中文翻译成俄文。\n\
         参考以下术语表（可为空，格式为src->dst #备注）：\n{glossary}\
         根据上述术语表的对应关系和备注，结合历史剧情和上下文，以流畅的风格将下面的文本从中文翻译成俄文：\n{}",
        chunk.join("\n")
    );
    (prompt, chunk.len())
}

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
