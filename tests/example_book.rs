//! Golden contexts of the bundled example book (`examples/wuchuan`): builds its
//! ledger with the CLI, assembles every chunk of chapters 1-5 in order (each chunk's
//! receipt feeding the next), and compares every injected context byte for byte with
//! `tests/golden/wuchuan/<chapter>-<chunk>.txt`, and the snapshot and receipt ids
//! with `tests/golden/wuchuan/ids.txt`. `LOREBANK_BLESS=1` rewrites the files, which
//! is right only for a deliberate change of render format (a new version).
//!
//! The fold table is built from the system's OpenCC (Debian 12's 1.1.6 here and in
//! CI), so the pinned snapshot ids assume that version; the contexts do not.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lorebank(book: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(book)
        .args(args)
        .env("LOREBANK_ACTOR", "import:example")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn chunks(chapter: u32) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(format!("examples/wuchuan/chapters/{chapter:02}.txt"))).unwrap();
    text.split("\n---\n").map(|chunk| format!("{}\n", chunk.trim_matches('\n'))).collect()
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read and bless golden files")]
fn example_contexts_match_the_golden_files() {
    let bless = std::env::var_os("LOREBANK_BLESS").is_some();
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("wuchuan.lorebank");
    lorebank(&book, &["init", "--profile", "zh"]);
    lorebank(&book, &["apply", root().join("examples/wuchuan/glossary.jsonl").to_str().unwrap()]);
    let golden = root().join("tests/golden/wuchuan");
    let mut ids = String::new();
    let snapshot: Value = serde_json::from_str(&lorebank(&book, &["--json", "snapshot"])).unwrap();
    ids.push_str(&format!("snapshot {}\n", snapshot["snapshot"].as_str().unwrap()));
    let mut failures = Vec::new();
    let mut receipts = Vec::new();
    for chapter in 1..=5u32 {
        let mut prev: Option<String> = None;
        for (chunk_idx, text) in chunks(chapter).iter().enumerate() {
            let file = dir.path().join(format!("{chapter}-{}.txt", chunk_idx + 1));
            std::fs::write(&file, text).unwrap();
            let chapter_arg = chapter.to_string();
            let chunk_arg = (chunk_idx + 1).to_string();
            let mut args = vec![
                "--json",
                "assemble",
                "--chapter",
                &chapter_arg,
                "--chunk",
                &chunk_arg,
                "--text",
                file.to_str().unwrap(),
            ];
            if let Some(prev) = &prev {
                args.extend(["--prev", prev.as_str()]);
            }
            let assembled: Value = serde_json::from_str(&lorebank(&book, &args)).unwrap();
            let context = assembled["context"].as_str().unwrap();
            let receipt = assembled["receipt"].as_str().unwrap().to_owned();
            ids.push_str(&format!("receipt {chapter}-{} {receipt}\n", chunk_idx + 1));
            let path = golden.join(format!("{chapter}-{}.txt", chunk_idx + 1));
            if bless {
                std::fs::write(&path, context).unwrap();
            } else {
                let expected =
                    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
                if expected != context {
                    failures.push(format!("{}:\n--- expected\n{expected}--- actual\n{context}", path.display()));
                }
            }
            receipts.push(receipt.clone());
            prev = Some(receipt);
        }
    }
    let ids_path = golden.join("ids.txt");
    if bless {
        std::fs::write(&ids_path, &ids).unwrap();
    } else if std::fs::read_to_string(&ids_path).unwrap() != ids {
        failures.push(format!("{}: ids changed:\n{ids}", ids_path.display()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Golden receipts of format 1: their stored bytes are pinned, and they decode to
    // receipts with the same id, forever.
    {
        let library = replay::Book::open(&book).unwrap();
        for (name, receipt) in [("1-1", &receipts[0]), ("4-2", &receipts[7])] {
            let id = ledger_model::Hash32::from_hex(receipt).unwrap();
            let bytes = library.ledger().receipt(id).unwrap().unwrap();
            let path = golden.join(format!("receipt-{name}.hex"));
            let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
            if bless {
                std::fs::write(&path, format!("{hex}\n")).unwrap();
            }
            let pinned = std::fs::read_to_string(&path).unwrap();
            assert_eq!(pinned.trim(), hex, "{}: receipt bytes changed", path.display());
            let decoded = replay::receipt::Receipt::decode(&bytes).unwrap();
            assert_eq!(decoded.id(), id);
            assert_eq!(decoded.format, 1);
        }
    }
    // Every receipt replays byte for byte.
    for receipt in &receipts {
        lorebank(&book, &["replay", receipt]);
    }
    // The spoiler gate: the Night Sect master's title is never injected before chapter 4.
    for chapter in 1..=3 {
        for chunk in 1..=2 {
            let context = std::fs::read_to_string(golden.join(format!("{chapter}-{chunk}.txt"))).unwrap();
            assert!(
                !context.contains("夜宗宗主") && !context.contains("Глава Ночной секты"),
                "{chapter}-{chunk}: {context}"
            );
        }
    }
    let chapter_4 = std::fs::read_to_string(golden.join("4-1.txt")).unwrap();
    assert!(chapter_4.contains("夜宗宗主 -> Глава Ночной секты"), "{chapter_4}");
}

#[test]
fn the_traditional_letter_and_its_twin_inject_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("wuchuan.lorebank");
    lorebank(&book, &["init", "--profile", "zh"]);
    lorebank(&book, &["apply", root().join("examples/wuchuan/glossary.jsonl").to_str().unwrap()]);
    let letter = dir.path().join("letter.txt");
    std::fs::write(&letter, &chunks(3)[1]).unwrap();
    let twin = root().join("examples/wuchuan/chapters/03-traditional-twin.txt");
    let terms = |file: &Path| -> (Vec<String>, String) {
        let assembled: Value = serde_json::from_str(&lorebank(
            &book,
            &["--json", "assemble", "--chapter", "3", "--chunk", "2", "--dry-run", "--text", file.to_str().unwrap()],
        ))
        .unwrap();
        let injected =
            assembled["injected"].as_array().unwrap().iter().map(|e| e["term"].as_str().unwrap().to_owned()).collect();
        (injected, assembled["context"].as_str().unwrap().to_owned())
    };
    let (traditional, traditional_context) = terms(&letter);
    let (simplified, simplified_context) = terms(&twin);
    assert_eq!(traditional, simplified);
    assert_eq!(traditional_context, simplified_context);
    assert!(traditional.contains(&"T-2".to_owned()) && traditional.contains(&"T-9".to_owned()), "{traditional:?}");
}
