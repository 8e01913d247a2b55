//! Loading and running the committed tiny model (`testdata/`) through ONNX Runtime:
//! the identity it is given (golden fields and id), vectors against an oracle built
//! from the formula the model was written from, determinism across loads and batch
//! sizes, the graph-pooled and in-graph-tokenizer variants, and a clear error (never
//! a panic) for every bad file, option and text.
//!
//! Needs the ONNX Runtime library `scripts/setup.sh` installs (or `ORT_DYLIB_PATH`);
//! without it every test here fails with the install hint.

mod common;

use std::path::Path;

use common::{cosine, load_tiny, max_difference, tiny_options};
use embed::{
    Dtype, EmbedError, EmbedOptions, Embedder, ModelIdentity, Pooling, RuntimeLocation, TokenizerId, RUNTIME_VERSION,
};
use test_support::tiny_model::{oracle_ids, oracle_row, oracle_vector, testdata};

/// The id of the tiny model's identity with the runtime `scripts/setup.sh` installs.
const TINY_IDENTITY_ID: &str = "aacbf3f58c704f2e5855d79ea95210e45651ef8a566c5bc5ed6f65bb6c35bc43";

fn blake3_file(path: &Path) -> [u8; 32] {
    *blake3::hash(&std::fs::read(path).unwrap()).as_bytes()
}

fn load(model: &Path, tokenizer: Option<&Path>, options: EmbedOptions) -> Result<Embedder, EmbedError> {
    Embedder::load(model, tokenizer, options)
}

fn in_graph_options() -> EmbedOptions {
    EmbedOptions::new("lorebank-tiny-in-graph-32", Pooling::InGraph, true)
}

fn error_of(result: Result<Embedder, EmbedError>) -> EmbedError {
    match result {
        Ok(embedder) => panic!("loaded {embedder:?}"),
        Err(error) => error,
    }
}

#[test]
fn the_tiny_model_has_the_identity_of_its_files() {
    let embedder = load_tiny();
    let identity = embedder.identity();
    let expected = ModelIdentity {
        name: "lorebank-tiny-char-mean-32".to_owned(),
        model_blake3: blake3_file(&testdata("tiny.onnx")),
        tokenizer: TokenizerId::File(blake3_file(&testdata("tiny-tokenizer.json"))),
        dim: 32,
        dtype: Dtype::F32,
        pooling: Pooling::Mean,
        normalized: true,
        runtime_version: RUNTIME_VERSION.to_owned(),
        operator_libraries: Vec::new(),
    };
    assert_eq!(
        *identity, expected,
        "run with the ONNX Runtime {RUNTIME_VERSION} library scripts/setup.sh installs (ORT_DYLIB_PATH unset)"
    );
    assert_eq!(identity.id().to_string(), TINY_IDENTITY_ID);
    assert_eq!(
        identity.to_string(),
        "lorebank-tiny-char-mean-32 model=fd16e45590b6e8768955f3ea251cef987a55e1cdb0f9cf0ebaec5badf31bfed0 \
         tokenizer=fdf65a175b2899c88eaa2eef2cefe35c446caca7d32fdeced88642635d932407 dim=32 dtype=f32 \
         pooling=mean normalized=true runtime=1.31.1"
    );
    assert_eq!(embedder.dim(), 32);
    assert!(embedder.runtime_path().is_file());
    assert_eq!(embed::loaded_runtime_path().as_deref(), Some(embedder.runtime_path()));
}

#[test]
fn identity_follows_the_bytes_of_the_model_and_the_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let base = load_tiny().identity().clone();

    // One low mantissa bit of a weight in the middle of the table: still a valid graph.
    let mut model = std::fs::read(testdata("tiny.onnx")).unwrap();
    let middle = model.len() / 2;
    model[middle] ^= 1;
    let changed_model = dir.path().join("changed.onnx");
    std::fs::write(&changed_model, &model).unwrap();
    let other = load(&changed_model, Some(&testdata("tiny-tokenizer.json")), tiny_options()).unwrap();
    assert_ne!(other.identity().model_blake3, base.model_blake3);
    assert_eq!(other.identity().tokenizer, base.tokenizer);
    assert_ne!(other.identity().id(), base.id());

    // The same tokenizer, written compactly: other bytes, so another identity.
    let json: String = std::fs::read_to_string(testdata("tiny-tokenizer.json")).unwrap();
    let compact = tokenizers::Tokenizer::from_bytes(json.as_bytes()).unwrap().to_string(false).unwrap();
    assert_ne!(compact, json);
    let changed_tokenizer = dir.path().join("tokenizer.json");
    std::fs::write(&changed_tokenizer, compact).unwrap();
    let mut other = load(&testdata("tiny.onnx"), Some(&changed_tokenizer), tiny_options()).unwrap();
    assert_eq!(other.identity().model_blake3, base.model_blake3);
    assert_ne!(other.identity().tokenizer, base.tokenizer);
    assert_ne!(other.identity().id(), base.id());
    // ... which tokenizes the same, so the vectors are the same.
    assert_eq!(other.embed(&["雾川灯录"]).unwrap(), load_tiny().embed(&["雾川灯录"]).unwrap());

    // Name, pooling and normalization are part of it too.
    for options in [
        EmbedOptions::new("another-name", Pooling::Mean, true).output("last_hidden_state"),
        EmbedOptions::new("lorebank-tiny-char-mean-32", Pooling::Cls, true).output("last_hidden_state"),
        EmbedOptions::new("lorebank-tiny-char-mean-32", Pooling::Mean, false).output("last_hidden_state"),
    ] {
        let other = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
        assert_ne!(other.identity().id(), base.id(), "{}", other.identity());
    }
    // The batch size and the token limit are not.
    let options = tiny_options().batch_size(16).tokens_max(64);
    let other = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
    assert_eq!(other.identity().id(), base.id());
}

#[test]
fn vectors_are_the_normalized_mean_of_the_rows_of_the_characters() {
    let mut embedder = load_tiny();
    let texts = ["雾川灯录", "萧炎", "Кот и ПЁС", "ab 12", "あいう", "☃雪"];
    let vectors = embedder.embed(&texts).unwrap();
    for (text, vector) in texts.iter().zip(&vectors) {
        assert_eq!(vector.dim(), 32);
        let difference = max_difference(vector.as_slice(), &oracle_vector(text, true));
        assert!(difference < 1e-6, "{text}: {difference}");
        let norm: f64 = vector.as_slice().iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6, "{text}: norm {norm}");
    }
}

#[test]
fn texts_sharing_characters_score_higher() {
    let mut embedder = load_tiny();
    let query = "雾川灯录";
    // Sharing 3, 2, 1 and 0 of the query's characters.
    let candidates = ["雾川灯", "雾川山水", "灯火风云", "春夏秋冬"];
    let vectors = embedder.embed(&[&[query][..], &candidates[..]].concat()).unwrap();
    let scores: Vec<f64> = vectors[1..].iter().map(|vector| cosine(vectors[0].as_slice(), vector.as_slice())).collect();
    for pair in scores.windows(2) {
        assert!(pair[0] > pair[1], "{scores:?}");
    }
    // The oracle agrees on every score.
    for (candidate, score) in candidates.iter().zip(&scores) {
        let expected =
            oracle_vector(query, true).iter().zip(oracle_vector(candidate, true)).map(|(a, b)| a * b).sum::<f64>();
        assert!((score - expected).abs() < 1e-5, "{candidate}: {score} vs {expected}");
    }
    // Case and width fold in the tokenizer: the same vector.
    assert_eq!(embedder.embed_one("КОТ").unwrap(), embedder.embed_one("кот").unwrap());
    assert_eq!(embedder.embed_one("ＡＢ").unwrap(), embedder.embed_one("ab").unwrap());
}

#[test]
fn two_loads_give_the_same_vectors_bit_for_bit() {
    let texts = ["雾川灯录", "萧炎与药老", "кот", "a b c", "☃"];
    let first = load_tiny().embed(&texts).unwrap();
    let second = load_tiny().embed(&texts).unwrap();
    let bits = |vectors: &[embed::Vector]| -> Vec<Vec<u8>> { vectors.iter().map(embed::Vector::to_le_bytes).collect() };
    assert_eq!(bits(&first), bits(&second));
}

#[test]
fn batches_give_the_vectors_of_texts_embedded_one_by_one() {
    let texts: Vec<String> =
        (0..21).map(|i| "雾川灯录萧炎薰儿药老林动山水".chars().cycle().skip(i).take(1 + i % 9).collect()).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut one_by_one = load_tiny();
    let singles: Vec<_> = texts.iter().map(|text| one_by_one.embed_one(text).unwrap()).collect();
    for batch_size in [1, 2, 8, 64] {
        let options = tiny_options().batch_size(batch_size);
        let mut embedder = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
        assert_eq!(embedder.embed(&texts).unwrap(), singles, "batch size {batch_size}");
    }
    assert!(one_by_one.embed(&[]).unwrap().is_empty());
}

#[test]
fn the_graph_pooled_output_and_the_in_graph_tokenizer_agree_with_rust_pooling() {
    let texts = ["雾川灯录", "萧炎", "кот пёс", "☃雪"];
    let rust_pooled = load_tiny().embed(&texts).unwrap();

    let options =
        EmbedOptions::new("lorebank-tiny-graph-pooled-32", Pooling::InGraph, true).output("sentence_embedding");
    let mut graph_pooled = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
    assert_eq!(graph_pooled.identity().pooling, Pooling::InGraph);
    for (text, vector) in texts.iter().zip(graph_pooled.embed(&texts).unwrap()) {
        assert!(max_difference(vector.as_slice(), &oracle_vector(text, true)) < 1e-6, "{text}");
    }

    // The in-graph tokenizer splits on whitespace: one character per piece here.
    let spaced: Vec<String> = texts
        .iter()
        .map(|text| text.chars().filter(|c| !c.is_whitespace()).map(String::from).collect::<Vec<_>>().join(" "))
        .collect();
    let spaced: Vec<&str> = spaced.iter().map(String::as_str).collect();
    let mut in_graph = load(&testdata("tiny-in-graph.onnx"), None, in_graph_options().batch_size(3)).unwrap();
    let identity = in_graph.identity().clone();
    assert_eq!(identity.tokenizer, TokenizerId::InGraph);
    assert_eq!(identity.tokenizer.to_string(), "in-graph");
    assert_eq!(identity.model_blake3, blake3_file(&testdata("tiny-in-graph.onnx")));
    assert_eq!((identity.dim, identity.pooling), (32, Pooling::InGraph));
    let vectors = in_graph.embed(&spaced).unwrap();
    for ((text, vector), rust) in texts.iter().zip(&vectors).zip(&rust_pooled) {
        assert!(max_difference(vector.as_slice(), &oracle_vector(text, true)) < 1e-6, "{text}");
        assert!(max_difference(rust.as_slice(), &oracle_vector(text, true)) < 1e-6, "{text}");
    }
}

#[test]
fn cls_pooling_takes_the_first_token_and_normalization_is_optional() {
    let options = EmbedOptions::new("tiny-cls", Pooling::Cls, false).output("last_hidden_state");
    let mut cls = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
    let vector = cls.embed_one("萧炎").unwrap();
    assert!(max_difference(vector.as_slice(), &oracle_row(oracle_ids("萧")[0])) < 1e-9);

    let options = EmbedOptions::new("tiny-mean-raw", Pooling::Mean, false).output("last_hidden_state");
    let mut raw = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
    let vector = raw.embed_one("雾川灯录").unwrap();
    assert!(max_difference(vector.as_slice(), &oracle_vector("雾川灯录", false)) < 1e-6);
}

#[test]
fn texts_without_tokens_or_with_too_many_are_errors() {
    let mut embedder = load_tiny();
    match embedder.embed(&["雾", "   "]) {
        Err(EmbedError::NoTokens { index: 1 }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(embedder.embed(&[""]), Err(EmbedError::NoTokens { index: 0 })));
    let options = tiny_options().tokens_max(3);
    let mut short = load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
    assert_eq!(short.embed(&["雾川灯"]).unwrap().len(), 1);
    let error = short.embed(&["雾", "雾川灯录"]).unwrap_err();
    assert!(matches!(error, EmbedError::TooManyTokens { index: 1, n_tokens: 4, tokens_max: 3 }), "{error:?}");
    assert_eq!(error.to_string(), "text 1 gives 4 tokens, more than the limit of 3");
}

#[test]
fn bad_model_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let tokenizer = testdata("tiny-tokenizer.json");
    let model = std::fs::read(testdata("tiny.onnx")).unwrap();
    let mut noise = Vec::new();
    let mut state: u32 = 0x1234_5678;
    for _ in 0..4096 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        noise.push(state as u8);
    }
    let cases: [(&str, &[u8]); 4] = [
        ("empty.onnx", b""),
        ("truncated.onnx", &model[..model.len() / 3]),
        ("noise.onnx", &noise),
        ("text.onnx", b"not a model\n"),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let error = error_of(load(&path, Some(&tokenizer), tiny_options()));
        assert!(matches!(error, EmbedError::Model { .. }), "{name}: {error:?}");
        let message = error.to_string();
        assert!(message.starts_with("the model ") && message.contains(name), "{message}");
    }
    let missing = dir.path().join("missing.onnx");
    let error = error_of(load(&missing, Some(&tokenizer), tiny_options()));
    assert!(matches!(error, EmbedError::Read { .. }) && error.to_string().contains("missing.onnx"), "{error}");
}

#[test]
fn bad_tokenizer_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in
        [("empty.json", &b""[..]), ("broken.json", b"{\"model\": {\"type\": \"WordLevel\""), ("array.json", b"[1, 2]")]
    {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let error = error_of(load(&testdata("tiny.onnx"), Some(&path), tiny_options()));
        assert!(matches!(error, EmbedError::Tokenizer { .. }), "{name}: {error:?}");
        assert!(error.to_string().contains(name), "{error}");
    }
    let error = error_of(load(&testdata("tiny.onnx"), Some(&dir.path().join("none.json")), tiny_options()));
    assert!(matches!(error, EmbedError::Read { .. }), "{error:?}");
}

#[test]
fn options_that_do_not_fit_the_graph_are_clear_errors() {
    let model = testdata("tiny.onnx");
    let tokenizer = testdata("tiny-tokenizer.json");
    let message = |result| error_of(result).to_string();

    assert_eq!(
        message(load(&model, None, tiny_options())),
        "invalid embed options: the model takes token ids, so it needs a tokenizer.json"
    );
    assert_eq!(
        message(load(&testdata("tiny-in-graph.onnx"), Some(&tokenizer), in_graph_options())),
        "invalid embed options: the model tokenizes in its graph (string input text); pass no tokenizer"
    );
    let no_such_output = message(load(&model, Some(&tokenizer), tiny_options().output("pooled")));
    assert!(
        no_such_output.ends_with("has no output pooled; its outputs are last_hidden_state, sentence_embedding"),
        "{no_such_output}"
    );
    // The first output is the default.
    let default_output = EmbedOptions::new("tiny", Pooling::Mean, true);
    assert!(load(&model, Some(&tokenizer), default_output).is_ok());
    let pooled_with_mean = message(load(&model, Some(&tokenizer), tiny_options().output("sentence_embedding")));
    assert!(pooled_with_mean.contains("already pooled: use pooling in-graph"), "{pooled_with_mean}");
    let tokens_in_graph = EmbedOptions::new("tiny", Pooling::InGraph, true).output("last_hidden_state");
    assert!(message(load(&model, Some(&tokenizer), tokens_in_graph)).contains("pooling in-graph needs [batch, dim]"));
    assert_eq!(
        message(load(&model, Some(&tokenizer), tiny_options().dim(16))),
        "invalid embed options: dim 16 was given, but output last_hidden_state declares 32"
    );
    assert!(load(&model, Some(&tokenizer), tiny_options().dim(32)).is_ok());
    for (options, expected) in [
        (tiny_options().batch_size(0), "batch size 0 is not in 1..=256"),
        (tiny_options().batch_size(257), "batch size 257 is not in 1..=256"),
        (tiny_options().tokens_max(0), "tokens_max 0 is not in 1..=8192"),
        (EmbedOptions::new("", Pooling::Mean, true), "the model name must be 1 to 256 bytes, not 0"),
    ] {
        assert_eq!(message(load(&model, Some(&tokenizer), options)), format!("invalid embed options: {expected}"));
    }
}

#[test]
fn bad_operator_libraries_are_clear_errors() {
    let model = testdata("tiny.onnx");
    let tokenizer = testdata("tiny-tokenizer.json");
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("libmissing.so");
    let error = error_of(load(&model, Some(&tokenizer), tiny_options().operator_library(&missing)));
    assert!(matches!(&error, EmbedError::Read { path, .. } if *path == missing), "{error:?}");
    // A file that is not a library, and a library that registers no operators (the
    // ONNX Runtime library itself has no RegisterCustomOps).
    let runtime = load_tiny().runtime_path().to_owned();
    for library in [tokenizer.clone(), runtime] {
        let error = error_of(load(&model, Some(&tokenizer), tiny_options().operator_library(&library)));
        match &error {
            EmbedError::OperatorLibrary { path, .. } if *path == library => {}
            other => panic!("{}: {other:?}", library.display()),
        }
        let message = error.to_string();
        assert!(message.starts_with(&format!("the operator library {} cannot be registered: ", library.display())));
    }
    let mut too_many = tiny_options();
    for _ in 0..=embed::OPERATOR_LIBRARIES_MAX {
        too_many = too_many.operator_library(&missing);
    }
    assert_eq!(
        error_of(load(&model, Some(&tokenizer), too_many)).to_string(),
        "invalid embed options: 9 operator libraries, more than the limit of 8"
    );
}

#[test]
fn a_second_runtime_library_in_one_process_is_refused() {
    let loaded = load_tiny().runtime_path().to_owned();
    // Any other file that exists: the check comes before ort is asked.
    let other = testdata("tiny-tokenizer.json");
    let options = tiny_options().runtime(RuntimeLocation::Path(other.clone()));
    match error_of(load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options)) {
        EmbedError::RuntimeConflict { loaded: in_use, requested } => {
            assert_eq!(in_use, loaded);
            assert_eq!(requested, std::fs::canonicalize(&other).unwrap());
        }
        other => panic!("{other:?}"),
    }
    // The loaded library named explicitly is fine.
    let options = tiny_options().runtime(RuntimeLocation::Path(loaded));
    assert!(load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).is_ok());
}

#[test]
fn a_missing_library_named_explicitly_is_runtime_missing_with_the_install_hint() {
    // In-process, whether or not another test loaded the runtime already: the file is
    // looked for before ort is asked.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("libonnxruntime.so.1.31.1");
    let options = tiny_options().runtime(RuntimeLocation::Path(missing.clone()));
    let error = error_of(load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options));
    assert!(matches!(&error, EmbedError::RuntimeMissing { path, .. } if *path == missing), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with("the ONNX Runtime library is missing: no file "), "{message}");
    assert!(message.contains("(from the path given)"), "{message}");
    assert!(message.contains("./scripts/setup.sh") && message.contains("onnxruntime==1.31.1"), "{message}");
    assert!(message.contains("ORT_DYLIB_PATH"), "{message}");
}

#[test]
fn texts_the_in_graph_tokenizer_cannot_take_are_errors() {
    let mut in_graph = load(&testdata("tiny-in-graph.onnx"), None, in_graph_options()).unwrap();
    // No pieces: the graph's mean is zero, which cannot be normalized.
    let error = in_graph.embed(&["雾", ""]).unwrap_err();
    assert!(matches!(error, EmbedError::BadVector { index: 1, what: "zero and cannot be normalized" }), "{error:?}");
    let error = in_graph.embed(&["雾", "雾\0川"]).unwrap_err();
    assert!(matches!(error, EmbedError::Tokenize { index: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("NUL"), "{error}");
    // The token path takes the same text.
    assert_eq!(load_tiny().embed(&["雾\0川"]).unwrap().len(), 1);
}

#[test]
fn an_embedder_can_move_to_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let embedder = load_tiny();
    assert_send(&embedder);
    let vector = std::thread::spawn(move || {
        let mut embedder = embedder;
        embedder.embed_one("雾川").unwrap()
    })
    .join()
    .unwrap();
    assert!(max_difference(vector.as_slice(), &oracle_vector("雾川", true)) < 1e-6);
}
