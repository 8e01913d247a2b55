//! The committed test data is what its generators write: `tiny-tokenizer.json` is
//! rebuilt here with the tokenizers crate and compared byte for byte, and the two
//! ONNX graphs written by `testdata/make_tiny_model.py` have the blake3 pinned below.
//! A regeneration that drifts (another tokenizers or onnx version, an edited
//! formula) fails here first.
//!
//! `LOREBANK_BLESS=1 cargo test -p embed --test testdata` rewrites the tokenizer;
//! then run `python3 embed/testdata/make_tiny_model.py` and update the hashes, and
//! say why in the commit.

mod common;

use common::tiny_tokenizer_json;
use test_support::tiny_model::testdata;

/// blake3 of `testdata/tiny-tokenizer.json`.
const TOKENIZER_BLAKE3: &str = "fdf65a175b2899c88eaa2eef2cefe35c446caca7d32fdeced88642635d932407";
/// blake3 of `testdata/tiny.onnx`.
const MODEL_BLAKE3: &str = "fd16e45590b6e8768955f3ea251cef987a55e1cdb0f9cf0ebaec5badf31bfed0";
/// blake3 of `testdata/tiny-in-graph.onnx`.
const IN_GRAPH_MODEL_BLAKE3: &str = "f6f56b2596886fe3e7d49d3654a5392d835c0155509c8a25f6fbe6c34edb8a24";

fn blake3_of(name: &str) -> String {
    let bytes = std::fs::read(testdata(name)).unwrap_or_else(|error| panic!("read testdata/{name}: {error}"));
    blake3::hash(&bytes).to_hex().to_string()
}

#[test]
fn tokenizer_json_is_what_the_builder_writes() {
    let built = tiny_tokenizer_json();
    let path = testdata("tiny-tokenizer.json");
    if std::env::var_os("LOREBANK_BLESS").is_some() {
        std::fs::write(&path, &built).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(committed == built, "testdata/tiny-tokenizer.json differs from what tests/common/mod.rs builds");
    assert_eq!(blake3_of("tiny-tokenizer.json"), TOKENIZER_BLAKE3);
}

#[test]
fn models_have_the_committed_hashes() {
    assert_eq!(blake3_of("tiny.onnx"), MODEL_BLAKE3, "testdata/tiny.onnx");
    assert_eq!(blake3_of("tiny-in-graph.onnx"), IN_GRAPH_MODEL_BLAKE3, "testdata/tiny-in-graph.onnx");
}

#[test]
fn setup_installs_the_runtime_version_the_crate_looks_for() {
    let setup = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/setup.sh")).unwrap();
    let line = format!("ORT_VERSION={}\n", embed::RUNTIME_VERSION);
    assert!(setup.contains(&line), "scripts/setup.sh has no line {line:?}");
    let default = embed::default_runtime_path().expect("HOME is set");
    assert!(default.ends_with(format!("lorebank/onnxruntime/libonnxruntime.so.{}", embed::RUNTIME_VERSION)));
}
