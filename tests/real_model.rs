//! The embedding tier with a real multilingual model: the quantized Universal
//! Sentence Encoder Multilingual v3 and the onnxruntime-extensions operator library
//! that `scripts/setup.sh --real-model` installs (docs/embeddings.md, "The real
//! model"). It checks that the installed files are the pinned ones, that Chinese,
//! Japanese and Russian paraphrases score above unrelated pairs, that Chinese records
//! of the bundled book are found from their Russian renderings, and, end to end with
//! the `lorebank` binary on a copy of the bundled book, that `suggest --phrases` on a
//! chunk with a descriptive mention (`examples/wuchuan/review/02-3.txt`) proposes the
//! record it describes, and that `review list` shows it.
//!
//! Optional, because the model is a 75 MB download the default setup leaves out: it
//! runs only with `LOREBANK_REAL_MODEL=1`. Without it, it prints that it skipped and
//! why, and reports its tests as ignored (never as passed); with it and the files
//! missing, it fails. A harness = false target, so that it can say so.

use std::path::{Path, PathBuf};
use std::process::Command;

use embed::{EmbedOptions, Embedder, Matrix, Pooling};
use serde_json::Value;
use test_support::harness::Harness;

/// The directory `scripts/setup.sh --real-model` installs to, under the cache.
const MODEL_DIR: &str = "lorebank/models/use-multilingual-v3";
/// blake3 of the model file and of the patched operator library setup.sh installs
/// (setup.sh pins their sha256).
const MODEL_BLAKE3: &str = "bef8d9c29ff582f80f2374b5a7786e112f8713eceb33106d7e3fd2db96dd063d";
const OPERATORS_BLAKE3: &str = "d83478f9ccee3c35e65909f7b09c64a19b66d9f30533a7a107148dfe88aef755";
const NAME: &str = "use-multilingual-v3";

type Test = (&'static str, fn(&Files));

fn main() {
    let tests: &[Test] = &[
        ("the_installed_files_are_the_pinned_ones", the_installed_files_are_the_pinned_ones),
        ("paraphrases_score_above_unrelated_pairs", paraphrases_score_above_unrelated_pairs),
        (
            "chinese_records_are_found_from_their_russian_renderings",
            chinese_records_are_found_from_their_russian_renderings,
        ),
        ("suggest_proposes_the_record_a_phrase_describes_in_the_bundled_book", suggest_proposes_the_described_record),
    ];
    let names: Vec<&'static str> = tests.iter().map(|(name, _)| *name).collect();
    let mut harness = Harness::new(&names);
    if std::env::var("LOREBANK_REAL_MODEL").as_deref() != Ok("1") {
        println!(
            "real_model: skipped: set LOREBANK_REAL_MODEL=1 to run these tests on the model \
             `./scripts/setup.sh --real-model` installs in {}",
            model_dir().map_or_else(|| format!("$HOME/.cache/{MODEL_DIR}"), |dir| dir.display().to_string())
        );
        for (name, _) in tests {
            harness.ignore(name);
        }
        return harness.finish();
    }
    let files = Files::installed();
    for (name, test) in tests {
        harness.run(name, || test(&files));
    }
    harness.finish();
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/lorebank/models/use-multilingual-v3`.
fn model_dir() -> Option<PathBuf> {
    let cache = match std::env::var_os("XDG_CACHE_HOME").filter(|value| !value.is_empty()) {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(std::env::var_os("HOME").filter(|value| !value.is_empty())?).join(".cache"),
    };
    Some(cache.join(MODEL_DIR))
}

struct Files {
    model: PathBuf,
    operators: PathBuf,
}

impl Files {
    fn installed() -> Files {
        let dir = model_dir().expect("HOME or XDG_CACHE_HOME is set");
        let files = Files { model: dir.join("model.onnx"), operators: dir.join("libortextensions.so.0.15.2") };
        for file in [&files.model, &files.operators] {
            assert!(
                file.is_file(),
                "LOREBANK_REAL_MODEL=1 but {} is missing: run ./scripts/setup.sh --real-model",
                file.display()
            );
        }
        files
    }

    fn embedder(&self) -> Embedder {
        let options = EmbedOptions::new(NAME, Pooling::InGraph, true).operator_library(&self.operators);
        match Embedder::load(&self.model, None, options) {
            Ok(embedder) => embedder,
            Err(error) => panic!("{error}"),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // Vectors are normalized: the dot product, summed in f64.
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

fn the_installed_files_are_the_pinned_ones(files: &Files) {
    let embedder = files.embedder();
    let identity = embedder.identity();
    assert_eq!(hex(&identity.model_blake3), MODEL_BLAKE3);
    assert_eq!(identity.operator_libraries.iter().map(|hash| hex(hash)).collect::<Vec<_>>(), [OPERATORS_BLAKE3]);
    assert_eq!((identity.dim, identity.tokenizer.to_string().as_str()), (512, "in-graph"));
    println!("real_model: {identity} (id {})", identity.id());
}

/// Sentences in the book's manner, each in Chinese, Japanese and Russian.
const PARAPHRASES: [[&str; 3]; 4] = [
    [
        "沈照每天天不亮就起床，给塔顶的灯添油。",
        "沈照は毎日夜明け前に起きて、塔の上の灯りに油を足す。",
        "Шэнь Чжао каждый день встаёт до рассвета и подливает масло в лампу на вершине башни.",
    ],
    [
        "雾川上的雾一年到头都不散。",
        "霧の川の霧は一年中晴れることがない。",
        "Туман над рекой не рассеивается круглый год.",
    ],
    ["先生送给他一把素白的长剑。", "先生は彼に真っ白な長剣を贈った。", "Учитель подарил ему белоснежный длинный меч."],
    [
        "渔船在雾里失了踪，岸边的村子也空了一半。",
        "漁船は霧の中で姿を消し、岸辺の村も半分が空になった。",
        "Рыбацкие лодки пропали в тумане, а прибрежная деревня наполовину опустела.",
    ],
];

fn paraphrases_score_above_unrelated_pairs(files: &Files) {
    let mut embedder = files.embedder();
    let vectors: Vec<Vec<Vec<f32>>> = PARAPHRASES
        .iter()
        .map(|row| embedder.embed(row).unwrap().into_iter().map(|vector| vector.as_slice().to_vec()).collect())
        .collect();
    let (mut same, mut other) = (Vec::new(), Vec::new());
    for (i, row) in vectors.iter().enumerate() {
        for (j, other_row) in vectors.iter().enumerate() {
            // zh against ja and ru of the same sentence, and of every other one.
            for lang in [1, 2] {
                let score = cosine(&row[0], &other_row[lang]);
                if i == j {
                    same.push((score, i, lang));
                } else {
                    other.push((score, i, j, lang));
                }
            }
        }
    }
    let lang = |lang: usize| ["zh", "ja", "ru"][lang];
    for (score, i, l) in &same {
        println!("real_model: paraphrase zh~{} of sentence {i}: {score:.3}", lang(*l));
    }
    let lowest = same.iter().map(|(score, ..)| *score).fold(f64::INFINITY, f64::min);
    let highest = other.iter().map(|(score, ..)| *score).fold(f64::NEG_INFINITY, f64::max);
    println!("real_model: lowest paraphrase {lowest:.3}, highest unrelated pair {highest:.3} ({} pairs)", other.len());
    assert!(lowest > highest, "a paraphrase scores {lowest:.3}, an unrelated pair {highest:.3}: {other:?}");
}

/// The bundled book's glossary: (term, source surfaces, rendering) of each term.
fn glossary() -> Vec<(String, Vec<String>, String)> {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/wuchuan/glossary.jsonl")).unwrap();
    let mut terms: Vec<(String, Vec<String>, String)> = Vec::new();
    for line in text.lines() {
        let body: Value = serde_json::from_str(line).unwrap();
        if let Some(put) = body.get("term_put") {
            let id = put["id"].as_str().unwrap().to_owned();
            terms.push((id, vec![put["src"].as_str().unwrap().to_owned()], put["dst"].as_str().unwrap().to_owned()));
        } else if let Some(alias) = body.get("alias_added") {
            let id = alias["id"].as_str().unwrap();
            let term = terms.iter_mut().find(|term| term.0 == id).unwrap();
            term.1.push(alias["surface"].as_str().unwrap().to_owned());
        }
    }
    terms
}

/// Renderings that translate their source; the rest transliterate a name (Шэнь Чжао
/// for 沈照 shares a sound with it, no meaning).
const TRANSLATED: [&str; 6] = ["T-3", "T-5", "T-6", "T-7", "T-9", "T-10"];

fn chinese_records_are_found_from_their_russian_renderings(files: &Files) {
    let mut embedder = files.embedder();
    let terms = glossary();
    // Search over the glossary's source rows, one per surface; the nearest row decides.
    let rows: Vec<(&str, &str)> = terms
        .iter()
        .flat_map(|(id, surfaces, _)| surfaces.iter().map(move |surface| (id.as_str(), surface.as_str())))
        .collect();
    let vectors = embedder.embed(&rows.iter().map(|(_, surface)| *surface).collect::<Vec<_>>()).unwrap();
    let matrix = Matrix::from_rows(512, vectors.iter().map(|vector| vector.as_slice())).unwrap();
    let mut found = Vec::new();
    for (id, _, dst) in &terms {
        let query = embedder.embed_one(dst).unwrap();
        let neighbours = matrix.search_one(query.as_slice(), rows.len()).unwrap();
        let rank = neighbours.iter().position(|neighbour| rows[neighbour.index as usize].0 == id).unwrap() + 1;
        let best = &neighbours[0];
        println!(
            "real_model: {dst} ({id}): nearest {} {} {}; {id} at rank {rank}",
            rows[best.index as usize].0, rows[best.index as usize].1, best.score
        );
        found.push((id.as_str(), rank));
    }
    // Measured: T-3, T-5, T-7 and T-9 are the nearest; 夜宗 (T-6) comes second,
    // behind 夜宗宗主, the master of the sect it names, and 灯宗 (T-10) third. A name
    // is found by its sound at best (顾寒川 from Гу Ханьчуань, 沈照 at rank 10).
    let translated: Vec<&(&str, usize)> = found.iter().filter(|(id, _)| TRANSLATED.contains(id)).collect();
    assert!(translated.iter().all(|(_, rank)| *rank <= 3), "a translated rendering is not in the 3 nearest: {found:?}");
    let first = translated.iter().filter(|(_, rank)| *rank == 1).count();
    assert!(first >= 4, "{first} of {} translated renderings find their record first: {found:?}", translated.len());
}

fn suggest_proposes_the_described_record(files: &Files) {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("wuchuan.lorebank");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(&book)
            .args(args)
            .env_remove("LOREBANK_BOOK")
            .env_remove("LOREBANK_EMBED_MODEL")
            .env_remove("LOREBANK_EMBED_TOKENIZER")
            .env_remove("LOREBANK_EMBED_OPERATOR_LIBRARY")
            .env("LOREBANK_ACTOR", "human:test")
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let model = files.model.to_str().unwrap();
    let operators = files.operators.to_str().unwrap();
    let model_files = ["--model", model, "--operator-library", operators];
    // The bundled book, as scripts/demo.sh builds it.
    run(&["init", "--profile", "zh"]);
    run(&["apply", root.join("examples/wuchuan/glossary.jsonl").to_str().unwrap()]);
    let snapshot: Value = serde_json::from_str(&run(&["--json", "snapshot"])).unwrap();
    let set = run(&[&["embed", "set-model", "--name", NAME, "--pooling", "in-graph"], &model_files[..]].concat());
    assert!(set.contains(&format!("operators={OPERATORS_BLAKE3}")), "{set}");
    let refreshed: Value =
        serde_json::from_str(&run(&[&["--json", "embed", "refresh"], &model_files[..]].concat())).unwrap();
    assert_eq!(refreshed["n_embedded"], 10, "{refreshed}");
    // Chapter 2, a third chunk: 白衣先生 (T-3) is described (那位总穿一身白衣的先生),
    // never named; the book's own minimum score (0.80).
    let chunk = root.join("examples/wuchuan/review/02-3.txt");
    let args = ["--json", "suggest", "--chapter", "2", "--chunk", "3", "--text", chunk.to_str().unwrap(), "--phrases"];
    let suggested: Value = serde_json::from_str(&run(&[&args[..], &model_files[..]].concat())).unwrap();
    println!(
        "real_model: suggest --phrases on 02-3.txt: {} distinct phrases; kept {}",
        suggested["n_phrases"], suggested["phrases"]
    );
    let proposed = suggested["proposed"].as_array().unwrap();
    let described = proposed
        .iter()
        .find(|candidate| candidate["related"] == "T-3")
        .unwrap_or_else(|| panic!("no candidate near T-3: {suggested}"));
    let surface = described["surface"].as_str().unwrap();
    assert!(surface.contains("白衣") && !surface.contains("白衣先生"), "{described}");
    assert_eq!((described["trust"].as_str(), described["origin"].as_str()), (Some("low"), Some("embedding")));
    assert!(described["score"].as_i64().unwrap() >= 800_000, "{described}");
    // Only terms of chapter 2 the chunk does not name: not 沈照 (T-1, named), not the
    // master of chapter 4 (T-4, T-5).
    for candidate in proposed {
        let related = candidate["related"].as_str().unwrap();
        assert!(!["T-1", "T-4", "T-5"].contains(&related), "{candidate}");
    }
    let id = described["id"].as_str().unwrap();
    let queue = run(&["review", "list"]);
    assert!(queue.contains(&format!("{id} {surface} (candidate, embedding, low trust, score")), "{queue}");
    assert!(queue.contains("alias of T-3?"), "{queue}");
    let after: Value = serde_json::from_str(&run(&["--json", "snapshot"])).unwrap();
    assert_eq!(after["snapshot"], snapshot["snapshot"], "a candidate changes no snapshot");
}
