//! Golden contexts of the bundled example book (`examples/wuchuan`): builds its
//! ledger with the CLI, assembles every chunk of chapters 1-5 in order (each chunk's
//! receipt feeding the next), and compares every injected context byte for byte with
//! `tests/golden/wuchuan/<chapter>-<chunk>.txt`, and the snapshot and receipt ids
//! with `tests/golden/wuchuan/ids.txt`. `LOREBANK_BLESS=1` rewrites the files, which
//! is right only for a deliberate change of render or receipt format (a new version;
//! receipt format 2 changed every receipt id, and the format-1 receipts of two chunks
//! stay pinned as `receipt-<chunk>.hex`).
//!
//! Every golden receipt also replays in a new process with the book's caches cleared,
//! so the projection is refolded from the log, and again after `lorebank rebuild`.
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

/// The example book in `dir`: its glossary applied, every chunk of chapters 1-5
/// assembled in order (each chunk's receipt feeding the next). Returns the book and,
/// per chunk, its name (`<chapter>-<chunk>`), receipt id and context.
#[allow(clippy::disallowed_methods, reason = "tests write chunk files")]
fn build_example(dir: &Path) -> (PathBuf, Vec<(String, String, String)>) {
    let book = dir.join("wuchuan.lorebank");
    lorebank(&book, &["init", "--profile", "zh"]);
    lorebank(&book, &["apply", root().join("examples/wuchuan/glossary.jsonl").to_str().unwrap()]);
    let mut recorded = Vec::new();
    for chapter in 1..=5u32 {
        let mut prev: Option<String> = None;
        for (chunk_idx, text) in chunks(chapter).iter().enumerate() {
            let file = dir.join(format!("{chapter}-{}.txt", chunk_idx + 1));
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
            let context = assembled["context"].as_str().unwrap().to_owned();
            let receipt = assembled["receipt"].as_str().unwrap().to_owned();
            recorded.push((format!("{chapter}-{}", chunk_idx + 1), receipt.clone(), context));
            prev = Some(receipt);
        }
    }
    (book, recorded)
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read and bless golden files")]
fn example_contexts_match_the_golden_files() {
    let bless = std::env::var_os("LOREBANK_BLESS").is_some();
    let dir = tempfile::tempdir().unwrap();
    let (book, recorded) = build_example(dir.path());
    let golden = root().join("tests/golden/wuchuan");
    let mut ids = String::new();
    let snapshot: Value = serde_json::from_str(&lorebank(&book, &["--json", "snapshot"])).unwrap();
    ids.push_str(&format!("snapshot {}\n", snapshot["snapshot"].as_str().unwrap()));
    let mut failures = Vec::new();
    let mut receipts = Vec::new();
    for (name, receipt, context) in &recorded {
        ids.push_str(&format!("receipt {name} {receipt}\n"));
        let path = golden.join(format!("{name}.txt"));
        if bless {
            std::fs::write(&path, context).unwrap();
        } else {
            let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            if &expected != context {
                failures.push(format!("{}:\n--- expected\n{expected}--- actual\n{context}", path.display()));
            }
        }
        receipts.push(receipt.clone());
    }
    let ids_path = golden.join("ids.txt");
    if bless {
        std::fs::write(&ids_path, &ids).unwrap();
    } else if std::fs::read_to_string(&ids_path).unwrap() != ids {
        failures.push(format!("{}: ids changed:\n{ids}", ids_path.display()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Golden receipts of format 1 (recorded before receipt format 2): their bytes are
    // pinned, they decode to receipts with their own id, forever, and they are the
    // receipts recorded now but for the format (same snapshot, hits and output).
    // Golden receipts of format 2: the bytes recorded now are pinned too.
    {
        let library = book::Book::open(&book).unwrap();
        let format_1 = [
            ("1-1", "eb3ebe9319dab9a45afdce02ed0c44b042458d38fa080b48ed80f6a2866c0b1d", &receipts[0]),
            ("4-2", "2c43f8b2b7ec61e04d16c8f44e4240adadefa69b0360813422f9e3cb49186237", &receipts[7]),
        ];
        for (name, old_id, receipt) in format_1 {
            let pinned = std::fs::read_to_string(golden.join(format!("receipt-{name}.hex"))).unwrap();
            let old_bytes = unhex(pinned.trim());
            let old = book::receipt::Receipt::decode(&old_bytes).unwrap();
            assert_eq!((old.format, old.id().to_hex()), (1, old_id.to_owned()), "{name}");
            assert_eq!(old.encode(), old_bytes, "{name}: a format-1 receipt encodes to its own bytes");
            let id = ledger_model::Hash32::from_hex(receipt).unwrap();
            let bytes = library.ledger().document(id).unwrap().unwrap();
            let now = book::receipt::Receipt::decode(&bytes).unwrap();
            assert_eq!((now.format, now.id()), (2, id), "{name}");
            // The previous receipt is named by its id, which the format changed too.
            assert_eq!(old.prev.is_some(), now.prev.is_some(), "{name}");
            assert_eq!(
                book::receipt::Receipt { format: 2, prev: now.prev, ..old },
                now,
                "{name}: format 1 and 2 hold the same"
            );
            let path = golden.join(format!("receipt-format-2-{name}.hex"));
            let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
            if bless && !path.exists() {
                std::fs::write(&path, format!("{hex}\n")).unwrap();
            }
            let pinned = std::fs::read_to_string(&path).unwrap();
            assert_eq!(pinned.trim(), hex, "{}: receipt bytes changed", path.display());
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

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap()).collect()
}

/// The golden ids: the snapshot, then `(name, receipt)` per chunk.
fn golden_ids() -> (String, Vec<(String, String)>) {
    let text = std::fs::read_to_string(root().join("tests/golden/wuchuan/ids.txt")).unwrap();
    let mut snapshot = None;
    let mut receipts = Vec::new();
    for line in text.lines() {
        match line.split(' ').collect::<Vec<_>>()[..] {
            ["snapshot", id] => snapshot = Some(id.to_owned()),
            ["receipt", name, id] => receipts.push((name.to_owned(), id.to_owned())),
            _ => panic!("ids.txt: unexpected line {line:?}"),
        }
    }
    (snapshot.expect("ids.txt names the snapshot"), receipts)
}

/// `lorebank replay` in a new process: the context it printed, which must be
/// identical to the record and to the golden file.
fn replay_golden(book: &Path, name: &str, receipt: &str) {
    let replayed: Value = serde_json::from_str(&lorebank(book, &["--json", "replay", receipt])).unwrap();
    assert_eq!(replayed["identical"], Value::Bool(true), "{name}: {replayed}");
    let golden = std::fs::read_to_string(root().join(format!("tests/golden/wuchuan/{name}.txt"))).unwrap();
    assert_eq!(replayed["context"].as_str().unwrap(), golden, "{name}: replayed context");
}

#[test]
fn golden_receipts_replay_with_a_cold_cache_and_after_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let (book, recorded) = build_example(dir.path());
    let (snapshot, golden) = golden_ids();
    let recorded_ids: Vec<(String, String)> =
        recorded.iter().map(|(name, receipt, _)| (name.clone(), receipt.clone())).collect();
    assert_eq!(recorded_ids, golden, "the example book recorded other receipts than tests/golden/wuchuan/ids.txt");
    let snapshot_hex = snapshot;
    let snapshot = ledger_model::Hash32::from_hex(&snapshot_hex).unwrap();
    assert_eq!(golden.len(), 10);
    for (name, receipt) in &golden {
        // Caches cleared: the replaying process finds no frozen projection in the book
        // and none in memory, so it refolds the log to the receipt's revision.
        {
            let ledger = ledger::Ledger::open(&book).unwrap();
            ledger.cache_clear().unwrap();
            assert_eq!(ledger.cache_get(snapshot).unwrap(), None);
        }
        replay_golden(&book, name, receipt);
        // Replay opens the book read-only: it refolded the log without storing the
        // projection, so the cache is still cold for the next receipt.
        assert_eq!(ledger::Ledger::open(&book).unwrap().cache_get(snapshot).unwrap(), None, "{name}");
    }
    let rebuilt: Value = serde_json::from_str(&lorebank(&book, &["--json", "rebuild"])).unwrap();
    assert_eq!(rebuilt["snapshot"].as_str(), Some(snapshot_hex.as_str()));
    for (name, receipt) in &golden {
        replay_golden(&book, name, receipt);
    }
}
