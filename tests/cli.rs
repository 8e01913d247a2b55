//! End-to-end tests of the `lorebank` binary: exit codes, JSON output, atomicity of
//! `apply`, and corruption reported by `verify`. Each test runs the real binary on a
//! book in its own temp dir.

mod common;

use std::path::Path;
use std::process::Command;

use common::Book;
use serde_json::Value;
use test_support::damage::flip_near;

const XIAO_YAN: &[&str] =
    &["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--gender", "m", "--decl", "Сяо Яня,Сяо Яню"];

#[test]
fn a_term_put_shows_in_the_log_with_seq_and_hash() {
    let book = Book::new();
    let appended: Value =
        serde_json::from_str(&book.ok(&[&["--json"], XIAO_YAN, &["--alias", "蕭炎"]].concat())).unwrap();
    assert_eq!((appended["first"].as_u64(), appended["last"].as_u64()), (Some(2), Some(3)));
    let all = book.log();
    assert_eq!(all.len(), 3);
    // Event 1 is the book's config, written by init.
    assert_eq!(all[0]["body"]["config_set"]["profile"]["name"], "zh");
    assert_eq!(all[0]["prev"], "0".repeat(64));
    let log = &all[1..];
    assert_eq!(log[0]["seq"], 2);
    assert_eq!(log[0]["hash"].as_str().unwrap().len(), 64);
    assert_eq!(log[0]["prev"], all[0]["hash"]);
    assert_eq!(log[1]["prev"], log[0]["hash"]);
    assert_eq!(log[1]["hash"], appended["hash"]);
    assert_eq!(log[0]["actor"], "human:test");
    let put = &log[0]["body"]["term_put"];
    assert_eq!(
        (put["src"].as_str(), put["dst"].as_str(), put["gender"].as_str()),
        (Some("萧炎"), Some("Сяо Янь"), Some("m"))
    );
    assert_eq!(put["decl"], serde_json::json!(["Сяо Яня", "Сяо Яню"]));
    assert_eq!(log[1]["body"]["alias_added"]["surface"], "蕭炎");
    let text = book.ok(&["log"]);
    assert!(text.contains("term_put T-1 萧炎 -> Сяо Янь"), "{text}");
}

#[test]
fn a_stale_expect_head_exits_5_and_appends_nothing() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    let error =
        book.fails(&["term", "put", "--id", "T-2", "--src", "药老", "--dst", "Яо Лао", "--expect-head", "1"], 5);
    assert!(error.contains("expected head 1, but the head is 2"), "{error}");
    assert_eq!(book.head(), 2);
    book.ok(&["term", "put", "--id", "T-2", "--src", "药老", "--dst", "Яо Лао", "--expect-head", "2"]);
    assert_eq!(book.head(), 3);
}

#[test]
fn invalid_input_exits_2_names_the_field_and_writes_nothing() {
    let book = Book::new();
    let cases: &[(&[&str], &str)] = &[
        (&["term", "put", "--id", "T-1", "--src", "炎", "--dst", "Янь"], "term_put.src"),
        (&["term", "put", "--id", "S-1", "--src", "萧炎", "--dst", "Янь"], "term_put.id"),
        (&["term", "put", "--id", "T-01", "--src", "萧炎", "--dst", "Янь"], "--id"),
        (&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", " "], "term_put.dst"),
        (
            &["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Янь", "--since", "9", "--until", "3"],
            "term_put.window.until",
        ),
        (&["summary", "put", "--id", "S-1", "--scope", "arc:5", "--text", "x"], "--scope"),
        (&["summary", "put", "--id", "S-1", "--scope", "arc:5-2", "--text", "x"], "summary_put.scope.arc.to"),
        (&["alias", "add", "T-1", "X"], "alias_added.surface"),
        (&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Янь", "--actor", "anna"], "actor"),
    ];
    for (args, field) in cases {
        let error = book.fails(args, 2);
        assert!(error.contains(field), "{args:?}: {error}");
    }
    assert_eq!(book.head(), 1);
}

#[test]
fn apply_is_one_atomic_batch_and_reports_the_bad_line() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    let good = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь"}}"#;
    let bad_json = r#"{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао","dts":"x"}}"#;
    std::fs::write(&file, format!("{good}\n\n{bad_json}\n")).unwrap();
    let error = book.fails(&["apply", file.to_str().unwrap()], 2);
    assert!(error.contains("events.jsonl line 3") && error.contains("unknown field `dts`"), "{error}");
    let bad_window = r#"{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао","window":{"since":0}}}"#;
    std::fs::write(&file, format!("{good}\n{bad_window}\n")).unwrap();
    let error = book.fails(&["apply", file.to_str().unwrap()], 2);
    assert!(error.contains("events.jsonl line 2") && error.contains("term_put.window.since"), "{error}");
    assert_eq!(book.head(), 1);
    std::fs::write(&file, [good.as_bytes(), b"\n\xff\n"].concat()).unwrap();
    let error = book.fails(&["apply", file.to_str().unwrap()], 2);
    assert!(error.contains(&format!("not UTF-8 at byte {}", good.len() + 1)), "{error}");
    assert_eq!(book.head(), 1);
    std::fs::write(&file, format!("{good}\n{}\n", good.replace("T-1", "T-2").replace("萧炎", "药老"))).unwrap();
    book.ok(&["apply", file.to_str().unwrap()]);
    let log = book.log();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2]["source"], "events.jsonl:2");
    // Standard input works the same way.
    let revised = good.replace("Сяо Янь", "Сяо Янь (герой)");
    let output = book.run_with_stdin(&["apply", "-", "--source", "pipe"], Some(&revised));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(book.log()[3]["source"], "pipe");
    // Applying the same file again changes only what differs: imports are idempotent.
    let again = book.ok(&["apply", file.to_str().unwrap()]);
    assert!(again.contains("appended 1 event(s)"), "{again}");
    assert!(book.ok(&["apply", file.to_str().unwrap()]).contains("no change"));
    assert_eq!(book.head(), 5);
}

fn flip_marker(path: &Path, marker: &str) {
    assert!(flip_near(path, marker.as_bytes(), 0, 0x01) > 0, "marker {marker} not in the file");
}

#[test]
fn verify_exits_3_after_a_flipped_byte() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--note", "marker-one"]);
    book.ok(&["term", "put", "--id", "T-2", "--src", "药老", "--dst", "Яо Лао", "--note", "marker-two"]);
    book.ok(&["term", "put", "--id", "T-3", "--src", "纳兰", "--dst", "Налань"]);
    assert!(book.ok(&["verify"]).starts_with("ok: 4 events"));
    flip_marker(&book.path, "marker-two");
    let output = book.run(&["--json", "verify"]);
    assert_eq!(output.status.code(), Some(3));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((report["ok"].as_bool(), report["seq"].as_u64()), (Some(false), Some(3)));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(error["error"]["kind"], "corrupted");
    // Reading across the damage is refused as well, never passed as intact.
    book.fails(&["log"], 3);
}

#[test]
fn commands_without_a_book_or_with_a_missing_book_exit_2() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_lorebank")).args(["log"]).env_remove("LOREBANK_BOOK").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--book"));
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(dir.path().join("none.lorebank"))
        .arg("verify")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let book = Book::new();
    let output = book.run(&["init"]);
    assert_eq!(output.status.code(), Some(2), "init over an existing book must refuse");
}

#[test]
fn replay_exits_4_naming_the_first_differing_byte_of_a_forged_receipt() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    let dir = tempfile::tempdir().unwrap();
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, "蕭炎抬起頭。\n").unwrap();
    let assembled = book.json(&["assemble", "--chapter", "1", "--chunk", "1", "--text", chunk.to_str().unwrap()]);
    let receipt = assembled["receipt"].as_str().unwrap();
    book.ok(&["replay", receipt]);
    // Forge a receipt that claims another output for the same input.
    let forged_id = {
        let library = book::Book::open(&book.path).unwrap();
        let (_, mut forged) = library.receipt(receipt).unwrap();
        let context = assembled["context"].as_str().unwrap();
        let other = context.replacen("Сяо", "Чжао", 1);
        forged.output = book::receipt::text_id(&other);
        let id = forged.id();
        let stored = ledger::Document { id, bytes: forged.encode(), group: 1, key: "forged".into() };
        library.ledger().file_documents(vec![stored], vec![(forged.output, other.into_bytes())]).unwrap();
        id.to_hex()
    };
    let error = book.fails(&["replay", &forged_id], 4);
    // С (D0 A1) and Ч (D0 A7) share their first UTF-8 byte.
    let at = assembled["context"].as_str().unwrap().find("Сяо").unwrap() + 1;
    assert!(error.contains(&format!("at byte {at}")), "{error}");
}

#[test]
fn a_config_naming_an_unknown_fold_table_exits_2() {
    let book = Book::new();
    let output = book.run_with_stdin(
        &["apply", "-"],
        Some(&format!(r#"{{"config_set":{{"profile":{{"name":"zh","table":"{}"}}}}}}"#, "ab".repeat(32))),
    );
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not stored in the book"));
    assert_eq!(book.head(), 1);
    let future = r#"{"config_set":{"assembly":{"token_budget":800,"sticky_chunks":2,"min_key_chars":2,"render_format":9,"token_estimator":1},"profile":{"name":"plain"}}}"#;
    let output = book.run_with_stdin(&["apply", "-"], Some(future));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("render format 9"));
    assert_eq!(book.head(), 1);
}

#[test]
fn audit_names_the_event_behind_each_entry_the_spoilers_and_what_went_stale() {
    let book = Book::new();
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-2",
        "--src",
        "顾寒川",
        "--dst",
        "Гу Ханьчуань",
        "--until",
        "3",
        "--source",
        "ch1#p2",
    ]);
    book.ok(&["term", "put", "--id", "T-4", "--src", "顾寒川", "--dst", "Глава Ночной секты", "--since", "4"]);
    book.ok(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао"]);
    let dir = tempfile::tempdir().unwrap();
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, "顾寒川看着沈照。\n").unwrap();
    book.ok(&["assemble", "--chapter", "2", "--chunk", "1", "--text", chunk.to_str().unwrap()]);
    book.ok(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао (ученик)"]);
    let audit = book.json(&["audit", "--chapter", "2"]);
    let chunk = &audit["chunks"][0];
    let injected = chunk["injected"].as_array().unwrap();
    let by_term = |term: &str| injected.iter().find(|entry| entry["term"] == term).unwrap().clone();
    assert_eq!(by_term("T-2")["version"]["seq"], 2);
    assert_eq!(by_term("T-2")["version"]["source"], "ch1#p2");
    assert_eq!(by_term("T-2")["stale"], Value::Null);
    assert_eq!(by_term("T-1")["stale"]["revised_at"], 5);
    assert_eq!(chunk["rejected"][0]["term"], "T-4");
    assert_eq!(chunk["rejected"][0]["reason"], "spoiler_window");
    assert_eq!(chunk["text"], "顾寒川看着沈照。\n");
    let text = book.ok(&["audit", "--chapter", "2"]);
    assert!(text.contains("rejected, spoiler_window") && text.contains("STALE: revised at revision 5"), "{text}");
    assert!(text.contains("  text: 顾寒川看着沈照。\n"), "{text}");
    // The chunk is on the re-translation list because T-1 changed, with its text.
    let impact = book.json(&["impact"]);
    assert_eq!(impact["n_chunks"], 1);
    assert_eq!(impact["chunks"][0]["terms"], serde_json::json!(["T-1"]));
    assert_eq!(impact["chunks"][0]["text"], "顾寒川看着沈照。\n");
    assert!(book.ok(&["impact"]).contains("    text: 顾寒川看着沈照。\n"));
    assert_eq!(book.json(&["impact", "--term", "T-2"])["n_chunks"], 0);
    assert_eq!(book.json(&["impact", "--term", "T-1"])["n_chunks"], 1);
    // Rolled back to what was injected, T-1 is current again: its content, not the seq
    // of its put, is what the chunk was given.
    book.ok(&["rollback", "--to", "4"]);
    let audit = book.json(&["audit", "--chapter", "2"]);
    let injected = audit["chunks"][0]["injected"].as_array().unwrap().clone();
    let t1 = injected.iter().find(|entry| entry["term"] == "T-1").unwrap();
    assert_eq!(t1["stale"], Value::Null, "{t1}");
    assert_eq!(book.json(&["impact"])["n_chunks"], 0);
}

#[test]
fn impact_of_a_new_term_finds_the_chunks_that_would_now_inject_it() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао"]);
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.txt");
    let without = dir.path().join("without.txt");
    std::fs::write(&with, "沈照提着长明灯。\n").unwrap();
    std::fs::write(&without, "沈照下山了。\n").unwrap();
    book.ok(&["assemble", "--chapter", "1", "--chunk", "1", "--text", with.to_str().unwrap()]);
    book.ok(&["assemble", "--chapter", "1", "--chunk", "2", "--text", without.to_str().unwrap()]);
    book.ok(&["term", "put", "--id", "T-9", "--src", "长明灯", "--dst", "негасимая лампада"]);
    let impact = book.json(&["impact", "--term", "T-9"]);
    assert_eq!(impact["n_chunks"], 1);
    assert_eq!(impact["chunks"][0]["chunk"], "1");
}

#[test]
fn impact_since_revision_0_is_bad_input_not_corruption() {
    let book = Book::new();
    let error = book.fails(&["impact", "--since", "0"], 2);
    assert!(error.contains("revisions start at 1"), "{error}");
}

/// A chunk key that recording would refuse (a tab, ESC, a newline, 129 characters,
/// nothing) is refused by a dry run too, with the same words and exit 2, and nothing
/// is recorded.
#[test]
fn assemble_refuses_a_chunk_key_recording_would_refuse_in_a_dry_run_too() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    let dir = tempfile::tempdir().unwrap();
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, "萧炎笑了。").unwrap();
    let text = chunk.to_str().unwrap();
    let long = "k".repeat(129);
    for key in ["a\tb", "a\u{1b}b", "a\nb", long.as_str(), ""] {
        let recorded = book.fails(&["assemble", "--chapter", "1", "--chunk", key, "--text", text], 2);
        let dry = book.fails(&["assemble", "--chapter", "1", "--chunk", key, "--text", text, "--dry-run"], 2);
        assert!(dry.contains("chunk key"), "{key:?}: {dry}");
        assert_eq!(dry, recorded, "{key:?}");
    }
    // At the limit both are fine.
    book.ok(&["assemble", "--chapter", "1", "--chunk", &"k".repeat(128), "--text", text, "--dry-run"]);
    assert!(book.json(&["audit", "--chapter", "1"])["chunks"].as_array().unwrap().is_empty());
}
