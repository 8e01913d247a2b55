//! What demonstrations (render format 3) cost a chunk: the pool the book reads for a
//! chapter (the latest receipt and its latest check of every recorded chunk of the
//! nearest 8 earlier chapters), on its first call and again (what each receipt gave is
//! kept), and one assembled chunk on a format-3 book against the same chunk on its
//! format-2 twin, in the same run.
//!
//! The book: 4,000 jieba words as terms (every window from chapter 1), 10 chapters of
//! 25 chunks of 西游记 (the slice in tests/data/corpora, 1,200 chars a chunk),
//! recorded, each checked against a made-up translation that renders the first half
//! of the chunk's hit terms, each in its own sentence, and leaves out the rest (so
//! both "needs an example" and candidates exist). Chapter 11 is assembled.
//!
//! Run: `cd bench && cargo bench --bench examples`.

use std::time::Instant;

use book::check::CheckOptions;
use book::{Book, Chunk};
use ledger_model::*;
use lorebank_bench::{corpus, event, init_book, jieba_words};

const N_TERMS: usize = 4_000;
const CHAPTERS: u32 = 10;
const CHUNKS: usize = 25;
const CHUNK_CHARS: usize = 1_200;

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

/// A book of the words on render format `format`, with every chapter recorded and checked.
fn book(path: &std::path::Path, words: &[String], chunks: &[String], format: u16) -> Book {
    let mut book = init_book(path);
    let mut config = book.state(None).unwrap().config().expect("init sets a config").clone();
    config.assembly.render_format = format;
    config.assembly.token_budget = 2_000;
    book.submit(&[event(Body::ConfigSet(config))], None, Vec::new()).unwrap();
    let terms: Vec<NewEvent> = words
        .iter()
        .enumerate()
        .map(|(idx, word)| {
            let number = idx as u32 + 1;
            let put = TermPut {
                window: Window { since: 1, until: None },
                ..lorebank_bench::term(number, word.clone(), format!("Термин {number}"))
            };
            event(Body::TermPut(put))
        })
        .collect();
    for batch in terms.chunks(1_000) {
        book.submit(batch, None, Vec::new()).unwrap();
    }
    let assembler = book.assembler().unwrap();
    let mut recorded = Vec::new();
    for chapter in 1..=CHAPTERS {
        let of_chapter: Vec<Chunk> = (0..CHUNKS)
            .map(|idx| Chunk {
                key: format!("{}", idx + 1),
                text: chunks[(chapter as usize * CHUNKS + idx) % chunks.len()].clone(),
            })
            .collect();
        recorded.extend(assembler.assemble_chapter(chapter, &of_chapter, None, true).unwrap());
    }
    let options =
        CheckOptions { record: true, propose: false, actor: "tool:bench".into(), recorded_at_ms: 1_764_000_000_000 };
    for assembled in &recorded {
        let mut hit: Vec<u32> = assembled.assembly.hits.iter().map(|hit| hit.term).collect();
        hit.sort_unstable();
        hit.dedup();
        let translation: String =
            hit.iter().take(hit.len() / 2).map(|number| format!("Здесь стоит Термин {number}. ")).collect();
        book.check(&assembled.id.to_hex(), &translation, &options).unwrap();
    }
    book
}

fn main() {
    let words = jieba_words(N_TERMS);
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).expect("tests/data/corpora/xiyouji-head.txt");
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<String> = chars.chunks(CHUNK_CHARS).map(|chunk| chunk.iter().collect()).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut three = book(&dir.path().join("three.lorebank"), &words, &chunks, 3);
    let mut two = book(&dir.path().join("two.lorebank"), &words, &chunks, 2);
    let chunk = &chunks[7];
    let chapter = CHAPTERS + 1;

    let assembler_three = three.assembler().unwrap();
    let assembler_two = two.assembler().unwrap();
    // The first call reads every receipt and check; later ones what changed.
    let started = Instant::now();
    let pool = assembler_three.examples(chapter).unwrap();
    let cold_ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(!pool.is_empty(), "the bench's book offers examples");
    let shown = assembler_three.assemble_chunk(chapter, "1", chunk, None, false).unwrap();
    assert!(!shown.assembly.examples.is_empty(), "the chunk shows examples");
    let (mut pool_ms, mut three_ms, mut two_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..30 {
        let started = Instant::now();
        std::hint::black_box(assembler_three.examples(chapter).unwrap());
        pool_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        std::hint::black_box(assembler_three.assemble_chunk(chapter, "1", chunk, None, false).unwrap());
        three_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        std::hint::black_box(assembler_two.assemble_chunk(chapter, "1", chunk, None, false).unwrap());
        two_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let (pool, three_ms, two_ms) = (median(pool_ms), median(three_ms), median(two_ms));
    println!("| measurement | median of 30 |");
    println!("| --- | --- |");
    println!(
        "| the pool at chapter {chapter}, first call: {} receipts and their latest checks read ({} examples offered) | {cold_ms:.2} ms (one call) |",
        8 * CHUNKS,
        assembler_three.examples(chapter).unwrap().len(),
    );
    println!("| the pool again (what each receipt gave kept; one probe of each check index) | {pool:.2} ms |");
    println!(
        "| one chunk assembled, format 3 ({} examples shown, {} hits) | {three_ms:.2} ms |",
        shown.assembly.examples.len(),
        shown.assembly.hits.len()
    );
    println!("| the same chunk, format-2 twin (no pool) | {two_ms:.2} ms |");
    println!("| ratio, format 3 / format 2 | {:.1}× |", three_ms / two_ms);
}
