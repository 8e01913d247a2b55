//! What needs processes of its own: without the ONNX Runtime library, loading a model
//! fails with `RuntimeMissing` (or `RuntimeLoad` for a file that is not a library) and
//! a message that says how to install it, while everything else in the crate still
//! works; and two processes give the same vectors bit for bit.
//!
//! ONNX Runtime loads one library per process, so each case runs in a child: this
//! binary re-runs itself with `LOREBANK_EMBED_CHILD` set and `ORT_DYLIB_PATH` /
//! `XDG_CACHE_HOME` pointing at files that are or are not there. The child prints
//! what happened; the parent checks it.

use std::path::{Path, PathBuf};
use std::process::Command;

use embed::{EmbedError, EmbedOptions, Embedder, Matrix, Pooling};
use test_support::harness;
use test_support::tiny_model::testdata;

/// In the child: try to load the tiny model with the runtime found by the usual rules,
/// then use the parts that need no runtime.
fn child() {
    if std::env::var_os("LOREBANK_EMBED_CHILD").is_some_and(|mode| mode == "vectors") {
        let options = EmbedOptions::new("tiny", Pooling::Mean, true).output("last_hidden_state");
        let mut embedder =
            Embedder::load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options).unwrap();
        for vector in embedder.embed(&["雾川灯录", "萧炎", "кот"]).unwrap() {
            let hex: String = vector.to_le_bytes().iter().map(|byte| format!("{byte:02x}")).collect();
            println!("{hex}");
        }
        return;
    }
    let options = EmbedOptions::new("tiny", Pooling::Mean, true).output("last_hidden_state");
    let outcome = match Embedder::load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), options) {
        Ok(_) => "loaded".to_owned(),
        Err(error @ EmbedError::RuntimeMissing { .. }) => format!("runtime-missing\n{error}"),
        Err(error @ EmbedError::RuntimeLoad { .. }) => format!("runtime-load\n{error}"),
        Err(error) => format!("other\n{error}"),
    };
    // Search needs no runtime.
    let matrix = Matrix::from_rows(2, [&[1.0f32, 0.0][..], &[0.0, 1.0][..]]).unwrap();
    let neighbours = matrix.search_one(&[0.9, 0.1], 1).unwrap();
    println!("search-ok {}", neighbours[0].index);
    println!("{outcome}");
}

fn run_child(envs: &[(&str, &Path)], removes: &[&str]) -> String {
    run_child_in_mode("probe", envs, removes)
}

fn run_child_in_mode(mode: &str, envs: &[(&str, &Path)], removes: &[&str]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env("LOREBANK_EMBED_CHILD", mode);
    for name in removes {
        command.env_remove(name);
    }
    for (name, value) in envs {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "child failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn main() {
    if std::env::var_os("LOREBANK_EMBED_CHILD").is_some() {
        child();
        return;
    }
    harness::run(&[
        ("ort_dylib_path_to_a_missing_file", ort_dylib_path_to_a_missing_file),
        ("default_location_without_the_library", default_location_without_the_library),
        ("ort_dylib_path_to_a_file_that_is_not_a_library", ort_dylib_path_to_a_file_that_is_not_a_library),
        ("ort_dylib_path_to_the_installed_library", ort_dylib_path_to_the_installed_library),
        ("two_processes_give_the_same_vectors", two_processes_give_the_same_vectors),
    ]);
}

fn ort_dylib_path_to_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere").join("libonnxruntime.so.1.31.1");
    let output = run_child(&[("ORT_DYLIB_PATH", &missing)], &[]);
    assert!(
        output.starts_with("search-ok 0\nruntime-missing\n")
            && output.contains(&format!("no file {} (from ORT_DYLIB_PATH)", missing.display()))
            && output.contains("install it with ./scripts/setup.sh")
            && output.contains("pip download --no-deps onnxruntime==1.31.1"),
        "the child printed:\n{output}"
    );
}

fn default_location_without_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let empty_cache = dir.path().join("cache");
    std::fs::create_dir(&empty_cache).unwrap();
    let output = run_child(&[("XDG_CACHE_HOME", &empty_cache)], &["ORT_DYLIB_PATH"]);
    let expected = empty_cache.join("lorebank/onnxruntime/libonnxruntime.so.1.31.1");
    assert!(
        output.starts_with("search-ok 0\nruntime-missing\n")
            && output
                .contains(&format!("no file {} (from the default location of scripts/setup.sh)", expected.display()))
            && output.contains("set ORT_DYLIB_PATH to a libonnxruntime.so of version 1.31 or newer"),
        "the child printed:\n{output}"
    );
}

fn ort_dylib_path_to_a_file_that_is_not_a_library() {
    let not_a_library = testdata("tiny-tokenizer.json");
    let output = run_child(&[("ORT_DYLIB_PATH", &not_a_library)], &[]);
    assert!(
        output.starts_with("search-ok 0\nruntime-load\n")
            && output.contains("tiny-tokenizer.json could not be loaded")
            && output.contains("install it with ./scripts/setup.sh"),
        "the child printed:\n{output}"
    );
}

/// The library `scripts/setup.sh` installs; the checks above can fail because, with
/// it, the child loads the model.
fn installed() -> PathBuf {
    embed::default_runtime_path()
        .filter(|path| path.is_file())
        .expect("no ONNX Runtime library at the default location; run ./scripts/setup.sh")
}

fn ort_dylib_path_to_the_installed_library() {
    let output = run_child(&[("ORT_DYLIB_PATH", &installed())], &[]);
    assert!(output.ends_with("loaded\n"), "the child printed:\n{output}");
}

fn two_processes_give_the_same_vectors() {
    let first = run_child_in_mode("vectors", &[("ORT_DYLIB_PATH", &installed())], &[]);
    let second = run_child_in_mode("vectors", &[("ORT_DYLIB_PATH", &installed())], &[]);
    assert!(
        first == second && first.lines().count() == 3 && first.lines().all(|line| line.len() == 32 * 8),
        "the children printed:\n{first}---\n{second}"
    );
}
