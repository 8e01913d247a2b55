//! The embedding tier at book level (issue 15), each beside a baseline run in the
//! same process, on a book of 50,000 terms (jieba words, each with a rendering and one
//! in four with a note): a plain `harness = false` binary that prints a Markdown
//! table, asserting the counts it measures so that a broken run reports no number.
//!
//! * refresh: embed every term's texts with the embed crate's tiny model (dim 32) and
//!   file the vectors in the book, beside embedding the same texts alone (no book);
//!   then a refresh that finds every vector fresh (reads and checks them all).
//! * the vector set: its size for 50,000 terms at dim 32 (the tiny model) and at dim
//!   384 (synthetic vectors of a real model's size, filed the same way), and the
//!   growth of the book file.
//! * suggest: a dry run per 3,000-char chunk of 西游记 (the slice in
//!   `tests/data/corpora/`), p50, beside the name alarm alone (`scan --dry-run`) on the
//!   same chunks: what loading the vectors, embedding the spans and searching adds.
//! * dedupe: one dry run over every pair of the 50,000 terms (brute force), beside
//!   the same search done directly on an `embed::Matrix` of the stored vectors.
//!
//! The tiny model is a character-mean toy: its speed says what the book costs around
//! a model, not what a real model costs (see docs/benchmarks.md for what scales).
//! Run: `cd bench && cargo bench --bench embed_book` (after `scripts/setup.sh`, which
//! installs the ONNX Runtime library). `LOREBANK_BENCH_TERMS` sets the terms (default
//! 50,000).

use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

use book::{Book, Labelled, WriteOptions};
use embed::{EmbedOptions, Embedder, Matrix, Pooling};
use ledger::Ledger;
use ledger_model::*;
use lorebank_bench::{corpus, jieba_words};
use matcher::{Flavour, ProfileBuilder};
use suggest::{Model, ModelFiles, ModelOptions, SuggestOptions, VECTORS_SET};
use test_support::tiny_model::testdata;

fn write() -> WriteOptions {
    WriteOptions { actor: "tool:bench".into(), source: None, expect_head: None, recorded_at_ms: 1_764_000_000_000 }
}

fn terms(words: &[String]) -> Vec<Body> {
    words
        .iter()
        .enumerate()
        .map(|(idx, word)| {
            let number = idx as u32 + 1;
            Body::TermPut(TermPut {
                note: number
                    .is_multiple_of(4)
                    .then(|| format!("Примечание к термину {number}: кто это и где встречается.")),
                ..TermPut::new(
                    RecordId::new(RecordKind::Term, number).unwrap(),
                    word.clone(),
                    format!("Термин {number}"),
                )
            })
        })
        .collect()
}

fn book(path: &Path, bodies: Vec<Body>) -> Book {
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let table = Hash32(profile.id().0);
    let mut book = Book::new(Ledger::create(path).unwrap());
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig { token_budget: 1_000, ..AssemblyConfig::default() },
        profile: ProfileRef { name: "zh".into(), table: Some(table) },
    });
    let mut all = vec![config];
    all.extend(bodies);
    book.submit_labelled(&write(), Labelled::numbered(all, "bench"), vec![(table, profile.to_bytes())]).unwrap();
    book
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn main() {
    let n_terms: usize =
        std::env::var("LOREBANK_BENCH_TERMS").ok().and_then(|value| value.parse().ok()).unwrap_or(50_000);
    let dir = tempfile::Builder::new().prefix("lorebank-bench").tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    // Distinct once folded (jieba has traditional twins), as UNIQUE wants.
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let words: Vec<String> = jieba_words(n_terms * 11 / 10)
        .into_iter()
        .filter(|word| seen.insert(profile.fold(word)))
        .take(n_terms)
        .collect();
    assert_eq!(words.len(), n_terms, "jieba gave {} words", words.len());
    let files = ModelFiles {
        model: testdata("tiny.onnx"),
        tokenizer: Some(testdata("tiny-tokenizer.json")),
        ..ModelFiles::default()
    };
    let options = ModelOptions {
        output: Some("last_hidden_state".into()),
        ..ModelOptions::new("lorebank-tiny-char-mean-32", EmbeddingPooling::Mean, true)
    };
    let path = dir.path().join("book.lorebank");
    let mut book = book(&path, terms(&words));
    suggest::set_model(&mut book, &files, &options, &write()).unwrap();
    let mut model = Model::for_book(&mut book, &files).unwrap();
    let mut rows: Vec<String> = Vec::new();

    // --- refresh, and the baseline: the same texts through the embedder alone ---
    let state = book.state(None).unwrap();
    let texts: Vec<String> = state.terms().values().flat_map(suggest::vectors::texts).map(|(_, text)| text).collect();
    let n_texts = texts.len();
    let mut embedder = Embedder::load(
        &files.model,
        files.tokenizer.as_deref(),
        EmbedOptions::new("lorebank-tiny-char-mean-32", Pooling::Mean, true).output("last_hidden_state"),
    )
    .unwrap();
    let started = Instant::now();
    let mut n_embedded = 0;
    for text in &texts {
        n_embedded += embedder.embed(&[text.as_str()]).unwrap().len();
    }
    let alone = started.elapsed();
    assert_eq!(n_embedded, n_texts);
    let size_before = std::fs::metadata(&path).unwrap().len();
    let started = Instant::now();
    let refreshed = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    let refresh = started.elapsed();
    assert_eq!((refreshed.n_embedded, refreshed.n_texts), (n_terms, n_texts));
    drop(book);
    let size_after = std::fs::metadata(&path).unwrap().len();
    let mut book = Book::open(&path).unwrap();
    let started = Instant::now();
    let again = suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    let fresh = started.elapsed();
    assert_eq!((again.n_kept, again.n_embedded), (n_terms, 0));
    rows.push(format!(
        "| refresh {n_terms} terms ({n_texts} texts), tiny model dim 32 | {:.0} ms ({:.0} texts/s) | the same texts through `Embedder::embed` alone: {:.0} ms | {:.2}× |",
        ms(refresh),
        n_texts as f64 / refresh.as_secs_f64(),
        ms(alone),
        refresh.as_secs_f64() / alone.as_secs_f64()
    ));
    rows.push(format!("| refresh again, every vector fresh (read and decoded) | {:.0} ms | | |", ms(fresh)));
    let status = suggest::status(&mut book).unwrap();
    assert_eq!(status.n_fresh, n_terms);
    rows.push(format!(
        "| vector set, {n_terms} terms at dim 32 | {:.1} MB in the set ({} bytes a term); the book file grew {:.1} MB | | |",
        mb(status.n_bytes),
        status.n_bytes / n_terms as u64,
        mb(size_after.saturating_sub(size_before))
    ));

    // --- the vector set at dim 384, synthetic, filed the way refresh files it ---
    {
        let big_path = dir.path().join("dim384.lorebank");
        let ledger = Ledger::create(&big_path).unwrap();
        let model_id = [7; 32];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut n_bytes = 0u64;
        let mut put = Vec::new();
        for (id, term) in book.state(None).unwrap().terms() {
            let texts = suggest::vectors::texts(term);
            let rows: Vec<(u16, Vec<f32>)> = (0..texts.len() as u16)
                .map(|index| {
                    let row = (0..384)
                        .map(|_| {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                        })
                        .collect();
                    (index, row)
                })
                .collect();
            let key = suggest::vectors::key(model_id, &suggest::vectors::version(*id, &texts));
            let bytes = suggest::vectors::encode(&suggest::vectors::TermVectors { id: *id, rows }, 384);
            n_bytes += bytes.len() as u64;
            put.push((key, bytes));
            if put.len() == suggest::REFRESH_TERMS_PER_COMMIT {
                ledger.derived_write(VECTORS_SET, &put, &[]).unwrap();
                put.clear();
            }
        }
        ledger.derived_write(VECTORS_SET, &put, &[]).unwrap();
        let set = ledger.derived_sets().unwrap().into_iter().find(|set| set.name == VECTORS_SET).unwrap();
        assert_eq!(set.n_entries, n_terms as u64);
        drop(ledger);
        rows.push(format!(
            "| vector set, {n_terms} terms at dim 384 (synthetic) | {:.1} MB in the set ({:.1} MB of vectors); the book file is {:.1} MB | | |",
            mb(set.n_bytes),
            mb(n_bytes),
            mb(std::fs::metadata(&big_path).unwrap().len())
        ));
    }

    // --- suggest per chunk, and the baseline: the name alarm alone ---
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).expect("tests/data/corpora/xiyouji-head.txt");
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<String> = chars.chunks(3_000).take(12).map(|chunk| chunk.iter().collect()).collect();
    let mut scan_times = Vec::new();
    let mut suggest_times = Vec::new();
    let mut n_spans = 0;
    for (chunk_idx, chunk) in chunks.iter().enumerate() {
        let key = format!("c{chunk_idx}");
        let started = Instant::now();
        let scanned = book.scan_names(1, &key, chunk, true, &write()).unwrap();
        scan_times.push(started.elapsed());
        let started = Instant::now();
        let suggested = suggest::suggest(
            &mut book,
            &mut model,
            1,
            &key,
            chunk,
            &SuggestOptions { dry_run: true, ..SuggestOptions::default() },
            &write(),
        )
        .unwrap();
        suggest_times.push(started.elapsed());
        assert_eq!(suggested.spans.len(), scanned.sightings.len());
        assert!(suggested.spans.iter().all(|span| span.nearest.is_some()));
        n_spans += suggested.spans.len();
    }
    assert!(n_spans > 0);
    let (scan, suggest) = (median(&mut scan_times), median(&mut suggest_times));
    rows.push(format!(
        "| suggest, dry run, a 3,000-char chunk of 西游记 against {n_terms} terms ({} chunks, {:.1} spans a chunk) | p50 {:.0} ms | the name alarm alone (`scan`, dry run): p50 {:.1} ms | {:.0}× |",
        chunks.len(),
        n_spans as f64 / chunks.len() as f64,
        ms(suggest),
        ms(scan),
        suggest.as_secs_f64() / scan.as_secs_f64()
    ));

    // --- dedupe over every pair, and the baseline: the same search on a matrix ---
    let mut vectors = Vec::new();
    book.ledger()
        .derived_scan(VECTORS_SET, &[], |_, bytes| {
            vectors.push(bytes.to_vec());
            ControlFlow::Continue(())
        })
        .unwrap();
    let mut matrix = Matrix::new(32).unwrap();
    for bytes in &vectors {
        // Source rows only (the first row of each entry): the baseline's share of work.
        let decoded = suggest::vectors::decode(bytes, 32, 4).unwrap();
        matrix.push(&decoded.rows[0].1).unwrap();
    }
    let started = Instant::now();
    let queries: Vec<&[f32]> = (0..matrix.len()).map(|row| matrix.row(row).unwrap()).collect();
    let mut n_results = 0;
    for chunk in queries.chunks(embed::QUERIES_PER_CALL_MAX) {
        n_results += matrix.search(chunk, 8).unwrap().len();
    }
    let direct = started.elapsed();
    assert_eq!(n_results, n_terms);
    let started = Instant::now();
    let deduped = suggest::dedupe(&mut book, &mut model, None, true, &write()).unwrap();
    let dedupe = started.elapsed();
    assert_eq!(deduped.n_terms, n_terms);
    rows.push(format!(
        "| dedupe, dry run, every pair of {n_terms} terms (sources, renderings, notes) | {:.1} s ({} pairs at 0.92 or more) | the sources' search alone on an `embed::Matrix`: {:.1} s | {:.2}× |",
        dedupe.as_secs_f64(),
        deduped.pairs.len() + deduped.n_over_limit,
        direct.as_secs_f64(),
        dedupe.as_secs_f64() / direct.as_secs_f64()
    ));

    println!("| measurement | lorebank | baseline (same process) | ratio |");
    println!("| --- | --- | --- | --- |");
    for row in rows {
        println!("{row}");
    }
}
