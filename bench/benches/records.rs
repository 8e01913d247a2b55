//! The glossary page at 50,000 records (issue 31): `Book::records`, the Book call of
//! `/ui/books/{book}/glossary` and `GET /v1/books/{book}/records`, on a book of
//! 50,000 terms (jieba words, every fifth a character, every seventh with an alias)
//! with 1,000 recorded chunks (200 3,000-char chunks of 西游记 in each of chapters 1
//! to 5, each assembled and its receipt filed, as `assemble --record` does; no
//! checks filed), timed
//! for one page each of: the first page, a search, a sort by rendering descending,
//! and the last page. Beside them, in the same run, the baseline: the head state's
//! active terms copied out and sorted naively by rendering, one page cut (what a page
//! costs without search, the receipts' counts or the checks' flags), and the read of
//! the latest receipts alone (what every page reads to count injections).
//!
//! A plain `harness = false` binary that prints a Markdown table; it asserts the
//! counts it measures, so a broken run cannot report a number.
//!
//! Run: `cd bench && cargo bench --bench records` (after `scripts/setup.sh`, for
//! jieba's dictionary). `LOREBANK_BENCH_RECORDS_RUNS=N` times each case N times
//! (default 9) after a warm-up, and reports the median and the slowest;
//! `LOREBANK_BENCH_RECORDS_CHAPTERS=N` records 200 chunks in each of N chapters
//! (default 5).

use std::time::{Duration, Instant};

use book::records::{RecordsQuery, RecordsSort};
use book::Book;
use ledger::Ledger;
use ledger_model::*;
use lorebank_bench::{corpus, event, jieba_words, ranked_term};
use matcher::{Flavour, ProfileBuilder};

const N_TERMS: usize = 50_000;
const CHUNKS_PER_CHAPTER: usize = 200;

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The first run of `work`, then the median and slowest of `runs` more.
fn time<T>(runs: usize, mut work: impl FnMut() -> T, mut check: impl FnMut(&T)) -> (Duration, Duration, Duration) {
    let started = Instant::now();
    let first = work();
    let first_took = started.elapsed();
    check(&first);
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let out = work();
            let took = started.elapsed();
            check(&out);
            took
        })
        .collect();
    samples.sort_unstable();
    (first_took, samples[samples.len() / 2], samples[samples.len() - 1])
}

fn main() {
    let runs: usize =
        std::env::var("LOREBANK_BENCH_RECORDS_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(9).max(1);
    let chapters: u32 =
        std::env::var("LOREBANK_BENCH_RECORDS_CHAPTERS").ok().and_then(|n| n.parse().ok()).unwrap_or(5).max(1);
    let dir = tempfile::Builder::new().prefix("lorebank-bench").tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let table_id = Hash32(profile.id().0);
    let words = jieba_words(N_TERMS);
    assert_eq!(words.len(), N_TERMS, "jieba gave {} words", words.len());

    // The book: its config and profile, 50,000 terms, aliases.
    let path = dir.path().join("records.lorebank");
    {
        let mut events = vec![event(Body::ConfigSet(ConfigSet {
            assembly: AssemblyConfig { token_budget: 1_000, ..AssemblyConfig::default() },
            profile: ProfileRef { name: "zh".into(), table: Some(table_id) },
        }))];
        for (idx, word) in words.iter().enumerate() {
            let number = idx as u32 + 1;
            let mut put = ranked_term(number, word.as_str(), format!("Термин {number}"));
            if number.is_multiple_of(5) {
                put.kind = Some("character".into());
            }
            events.push(event(Body::TermPut(put)));
            if number.is_multiple_of(7) {
                events.push(event(Body::AliasAdded(AliasAdded {
                    id: RecordId::new(RecordKind::Term, number).unwrap(),
                    surface: format!("{word}甲"),
                    kind: AliasKind::Variant,
                    window: None,
                    release_to: None,
                })));
            }
        }
        let ledger = Ledger::create(&path).unwrap();
        for batch in events.chunks(10_000) {
            ledger.append(batch, None).unwrap();
        }
        ledger.file_documents(Vec::new(), vec![(table_id, profile.to_bytes())]).unwrap();
    }
    let mut book = Book::open(&path).unwrap();

    // 1,000 recorded chunks.
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).expect("tests/data/corpora/xiyouji-head.txt");
    let chars: Vec<char> = text.chars().collect();
    let started = Instant::now();
    let mut n_injected = 0usize;
    for chapter in 1..=chapters {
        for idx in 0..CHUNKS_PER_CHAPTER {
            let at = (idx * 240) % (chars.len() - 3_000);
            let chunk: String = chars[at..at + 3_000].iter().collect();
            let assembled =
                book.assemble_chunk(&book::Reader::Full, chapter, &format!("c{idx}"), &chunk, None, true).unwrap();
            n_injected += assembled.receipt.injected.len();
        }
    }
    let recording = started.elapsed();
    let n_chunks = chapters as usize * CHUNKS_PER_CHAPTER;
    assert!(n_injected > n_chunks, "chunks inject terms");
    eprintln!("records: {n_chunks} chunks recorded in {:.1} s", recording.as_secs_f64());

    let per_page = 100;
    let n_pages = N_TERMS.div_ceil(per_page);
    // A search that finds a few hundred terms: the first character of a word, with the
    // renderings and aliases searched too.
    let needle: String = words[12_345].chars().take(1).collect();
    let cases: Vec<(String, RecordsQuery)> = vec![
        ("first page (by id)".into(), RecordsQuery::default()),
        (
            format!("search {needle:?} (source, aliases, rendering)"),
            RecordsQuery { text: Some(needle.clone()), ..RecordsQuery::default() },
        ),
        (
            "sorted by rendering, descending".into(),
            RecordsQuery { sort: RecordsSort::Dst, descending: true, ..RecordsQuery::default() },
        ),
        (format!("last page ({n_pages})"), RecordsQuery { page: n_pages, ..RecordsQuery::default() }),
    ];
    let mut rows = Vec::new();
    for (label, query) in cases {
        let searched = query.text.is_some();
        let (first, median, slowest) = time(
            runs,
            || book.records(query.clone()).unwrap(),
            |page| {
                assert_eq!(page.n_terms, N_TERMS);
                assert!(!page.rows.is_empty());
                if searched {
                    assert!(page.n_matching > 1 && page.n_matching < N_TERMS, "{}", page.n_matching);
                } else {
                    assert_eq!(page.n_matching, N_TERMS);
                }
            },
        );
        let matching = book.records(query.clone()).unwrap().n_matching;
        rows.push(format!(
            "| `Book::records`, {label}: {matching} matching, {per_page} a page | {:.1} ms | {:.1} ms | {:.1} ms |",
            millis(first),
            millis(median),
            millis(slowest)
        ));
    }

    // The baselines.
    let (first, median, slowest) = time(
        runs,
        || {
            let state = book.state(None).unwrap();
            let mut terms: Vec<(RecordId, String, String)> = state
                .active_terms(None)
                .into_iter()
                .map(|active| (active.id, active.term.put.src.clone(), active.term.put.dst.clone()))
                .collect();
            terms.sort_by(|a, b| b.2.to_lowercase().cmp(&a.2.to_lowercase()).then(a.0.cmp(&b.0)));
            terms.truncate(per_page);
            terms
        },
        |page| assert_eq!(page.len(), per_page),
    );
    rows.push(format!(
        "| baseline: the head state's active terms copied out, sorted by rendering, one page cut | {:.1} ms | {:.1} ms | {:.1} ms |",
        millis(first),
        millis(median),
        millis(slowest)
    ));
    let (first, median, slowest) =
        time(runs, || book.latest_receipts(None).unwrap(), |latest| assert_eq!(latest.len(), n_chunks));
    rows.push(format!(
        "| the latest receipts of the {n_chunks} recorded chunks read and decoded (`Book::latest_receipts`), alone | {:.1} ms | {:.1} ms | {:.1} ms |",
        millis(first),
        millis(median),
        millis(slowest)
    ));

    println!("| case (50,000 terms, {n_chunks} recorded chunks) | first call | median of {runs} more | slowest |");
    println!("| --- | ---: | ---: | ---: |");
    for row in rows {
        println!("{row}");
    }
}
