//! The real embedding model (issue 15): the quantized Universal Sentence Encoder
//! Multilingual v3 that `scripts/setup.sh --real-model` installs, on one thread (one
//! intra-op and one inter-op thread, batch size 1, as the embedding tier runs it),
//! beside the embed crate's tiny model and the name alarm in the same process. A plain
//! `harness = false` binary that prints a Markdown table and asserts what it counts.
//!
//! Per 3,000-char chunk of 西游记 (the slice in `tests/data/corpora/`, 6 chunks):
//!
//! * the chunk as one text;
//! * its sentences (split after `。！？；` and line ends), one vector each;
//! * its distinct phrases of 3 to 6 characters (`suggest::phrases_of`, what
//!   `lorebank suggest --phrases` embeds), on the first chunk only;
//! * the name alarm's scan of the chunk (`names::Scanner`), which embeds nothing.
//!
//! Run: `cd bench && cargo bench --bench embed_real` after `./scripts/setup.sh
//! --real-model`. Without the model it prints that it skipped and exits 0.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use embed::{EmbedOptions, Embedder, Pooling};
use lorebank_bench::corpus;
use names::{Lang, Scanner};
use test_support::tiny_model::testdata;

const REPS: usize = 10;

fn model_dir() -> Option<PathBuf> {
    let cache = match std::env::var_os("XDG_CACHE_HOME").filter(|value| !value.is_empty()) {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(std::env::var_os("HOME").filter(|value| !value.is_empty())?).join(".cache"),
    };
    Some(cache.join("lorebank/models/use-multilingual-v3"))
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The median and the largest of `REPS` runs of `f`.
fn time(mut f: impl FnMut()) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..REPS)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    samples.sort_unstable();
    (samples[REPS / 2], samples[REPS - 1])
}

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c != '\n' && c != '\r' {
            current.push(c);
        }
        if matches!(c, '。' | '！' | '？' | '；' | '\n') {
            if !current.trim().is_empty() {
                out.push(std::mem::take(&mut current));
            }
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

fn main() {
    let Some(dir) = model_dir().filter(|dir| dir.join("model.onnx").is_file()) else {
        println!(
            "embed_real: skipped: the real model is not installed (no {}); install it with ./scripts/setup.sh --real-model",
            model_dir().map_or_else(|| "model cache".to_owned(), |dir| dir.join("model.onnx").display().to_string())
        );
        return;
    };
    let real_options = EmbedOptions::new("use-multilingual-v3", Pooling::InGraph, true)
        .operator_library(dir.join("libortextensions.so.0.15.2"));
    let mut real =
        Embedder::load(&dir.join("model.onnx"), None, real_options).unwrap_or_else(|error| panic!("{error}"));
    // A 3,000-char chunk is about 3,000 of the tiny model's tokens.
    let tiny_options = EmbedOptions::new("lorebank-tiny-char-mean-32", Pooling::Mean, true)
        .output("last_hidden_state")
        .tokens_max(8_192);
    let mut tiny = Embedder::load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), tiny_options)
        .unwrap_or_else(|error| panic!("{error}"));
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).expect("tests/data/corpora/xiyouji-head.txt");
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<String> = chars.chunks(3_000).take(6).map(|chunk| chunk.iter().collect()).collect();
    assert_eq!(chunks.len(), 6);
    assert!(chunks.iter().all(|chunk| chunk.chars().count() == 3_000));

    println!("| per 3,000-char chunk (6 chunks, p50 of {REPS} runs each; max) | real model, dim 512 | tiny model, dim 32 | name alarm |");
    println!("| --- | --- | --- | --- |");
    let (mut real_whole, mut tiny_whole, mut real_sent, mut tiny_sent, mut scan) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut n_sentences = 0;
    for chunk in &chunks {
        assert_eq!(real.embed_one(chunk).unwrap().as_slice().len(), 512);
        assert_eq!(tiny.embed_one(chunk).unwrap().as_slice().len(), 32);
        real_whole.push(time(|| drop(real.embed_one(chunk).unwrap())));
        tiny_whole.push(time(|| drop(tiny.embed_one(chunk).unwrap())));
        let parts = sentences(chunk);
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        n_sentences += parts.len();
        assert_eq!(real.embed(&parts).unwrap().len(), parts.len());
        real_sent.push(time(|| drop(real.embed(&parts).unwrap())));
        tiny_sent.push(time(|| drop(tiny.embed(&parts).unwrap())));
        let scanner = Scanner::new(Lang::Zh);
        assert!(!scanner.scan(chunk, &[], &|_| false).is_empty());
        scan.push(time(|| drop(scanner.scan(chunk, &[], &|_| false))));
    }
    let summary = |samples: &[(Duration, Duration)]| {
        let mut p50: Vec<Duration> = samples.iter().map(|(p50, _)| *p50).collect();
        p50.sort_unstable();
        let max = samples.iter().map(|(_, max)| *max).max().unwrap();
        format!("{:.1}–{:.1} ms ({:.1})", ms(p50[0]), ms(p50[p50.len() - 1]), ms(max))
    };
    println!("| the chunk as one text | {} | {} | |", summary(&real_whole), summary(&tiny_whole));
    println!(
        "| its sentences ({:.0} a chunk), one vector each | {} | {} | |",
        n_sentences as f64 / chunks.len() as f64,
        summary(&real_sent),
        summary(&tiny_sent)
    );
    println!("| the name alarm's scan (embeds nothing) | | | {} |", summary(&scan));

    // The phrases of the first chunk, once each model (seconds with the real one).
    let all = suggest::phrases_of(&chunks[0], Lang::Zh, &[], &|_| false);
    let mut distinct: Vec<&str> = all.iter().map(|phrase| phrase.surface.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 5_000, "{} phrases", distinct.len());
    let started = Instant::now();
    assert_eq!(real.embed(&distinct).unwrap().len(), distinct.len());
    let real_phrases = started.elapsed();
    let started = Instant::now();
    assert_eq!(tiny.embed(&distinct).unwrap().len(), distinct.len());
    let tiny_phrases = started.elapsed();
    println!(
        "| the first chunk's {} distinct phrases (`suggest --phrases`), one run | {:.0} ms ({:.0} µs a phrase) | {:.0} ms ({:.0} µs a phrase) | |",
        distinct.len(),
        ms(real_phrases),
        real_phrases.as_secs_f64() * 1e6 / distinct.len() as f64,
        ms(tiny_phrases),
        tiny_phrases.as_secs_f64() * 1e6 / distinct.len() as f64
    );
}
