//! The embedding tier across processes (a `harness = false` test that re-runs its own
//! binary): two child processes and this one, each building the same book, setting
//! the tiny model, refreshing and running suggest and dedupe, print the same
//! candidates byte for byte; and a child without the ONNX Runtime library gets
//! `Unavailable` with the install hint from every embedding use case, writes
//! nothing, and still assembles.

#[path = "common/mod.rs"]
mod common;

use std::process::Command;

use book::Reader;
use common::*;
use ledger_model::*;
use suggest::{Model, SuggestError, SuggestOptions};
use test_support::harness;

const CHILD: &str = "LOREBANK_SUGGEST_CHILD";

const CHUNK: &str = "萧炎看着天空。“炎龙”来了。“林月，你好。”萧炎说：“药心”。林月和林月和林月。";

fn bodies() -> Vec<Body> {
    vec![
        term("T-1", "萧炎", "Сяо Янь"),
        term("T-2", "药老", "Яо Лао"),
        term("T-3", "林动", "Линь Дун"),
        term("T-4", "薰儿", "Сюнь Эр"),
        term("T-5", "炎萧", "Сяо Янь"),
    ]
}

/// The candidates of one run, one `Debug` line each.
fn candidates() -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), bodies());
    suggest::set_model(&mut book, &tiny(), &tiny_options(), &write()).unwrap();
    let mut model = Model::for_book(&mut book, &tiny()).unwrap();
    suggest::refresh(&mut book, &mut model, false, |_, _| {}).unwrap();
    let suggested = suggest::suggest(
        &mut book,
        &mut model,
        1,
        "1",
        CHUNK,
        &SuggestOptions { min_score: Some(0), phrases: true, dry_run: false },
        &write(),
    )
    .unwrap();
    let deduped = suggest::dedupe(&mut book, &mut model, Some(0), false, &write()).unwrap();
    let mut out = String::new();
    for candidate in suggested.proposed.iter().chain(&deduped.proposed) {
        out.push_str(&format!("{candidate:?}\n"));
    }
    out
}

/// Every embedding use case without the runtime library: refused as unavailable,
/// with the hint, and nothing written; assembly still works.
fn without_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = zh_book(&dir.path().join("b.lorebank"), bodies());
    let head = book.state(None).unwrap().revision();
    let check = |error: SuggestError| {
        assert!(error.is_unavailable(), "{error}");
        assert!(error.to_string().contains("scripts/setup.sh"), "{error}");
    };
    check(suggest::set_model(&mut book, &tiny(), &tiny_options(), &write()).unwrap_err());
    // A model recorded elsewhere (as `apply` could): loading it is unavailable too.
    let set = EmbeddingModelSet {
        name: "lorebank-tiny-char-mean-32".into(),
        model_blake3: Hash32([1; 32]),
        tokenizer_blake3: Some(Hash32([2; 32])),
        dim: 32,
        dtype: VectorDtype::F32,
        pooling: EmbeddingPooling::Mean,
        normalized: true,
        runtime_version: "1.31.1".into(),
        output: Some("last_hidden_state".into()),
        suggest_min_score: 0,
        dedupe_min_score: 0,
        operator_libraries_blake3: Vec::new(),
    };
    check(Model::load(&tiny(), &set).unwrap_err());
    assert_eq!(book.state(None).unwrap().revision(), head);
    assert!(book.ledger().derived_sets().unwrap().is_empty());
    let assembled = book.assemble_chunk(&Reader::Full, 1, "1", CHUNK, None, true).unwrap();
    assert!(assembled.assembly.context.contains("Сяо Янь"), "{}", assembled.assembly.context);
    assert!(suggest::status(&mut book).unwrap().model.is_none());
}

fn main() {
    match std::env::var(CHILD).as_deref() {
        Ok("candidates") => {
            print!("{}", candidates());
            return;
        }
        Ok("no-runtime") => {
            without_runtime();
            return;
        }
        _ => {}
    }
    harness::run(&[
        (
            "the_same_model_and_chunk_give_the_same_candidates_in_two_processes",
            the_same_model_and_chunk_give_the_same_candidates_in_two_processes,
        ),
        (
            "without_the_runtime_library_every_embedding_use_case_is_unavailable",
            without_the_runtime_library_every_embedding_use_case_is_unavailable,
        ),
    ]);
}

/// This binary in the child mode `mode`, with `runtime` as its ONNX Runtime library
/// when given; its stdout.
fn child(mode: &str, runtime: Option<&str>) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(CHILD, mode);
    if let Some(runtime) = runtime {
        command.env("ORT_DYLIB_PATH", runtime);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "child {mode}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn the_same_model_and_chunk_give_the_same_candidates_in_two_processes() {
    let first = child("candidates", None);
    let second = child("candidates", None);
    let here = candidates();
    assert!(first.lines().count() >= 3, "{first}");
    assert_eq!(first, second, "two processes");
    assert_eq!(first, here, "a child and this process");
}

fn without_the_runtime_library_every_embedding_use_case_is_unavailable() {
    let missing = std::env::temp_dir().join("lorebank-no-such-dir/libonnxruntime.so.1.31.1");
    child("no-runtime", Some(missing.to_str().unwrap()));
}
