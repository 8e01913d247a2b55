//! End-to-end tests of the application service behind the CLI: closed pipes, atomic
//! `init`, rollback against one head, exit codes, JSON forms and `term edit`.

mod common;

use common::Book;

const XIAO_YAN: &[&str] =
    &["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--gender", "m", "--decl", "Сяо Яня,Сяо Яню"];

#[test]
fn a_closed_stdout_never_fails_a_committed_write_or_a_read() {
    let book = Book::new();
    let (code, stderr) = book.run_closed_stdout(XIAO_YAN);
    assert_eq!(code, Some(0), "term put | true: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(book.head(), 2, "the write was committed");
    let dir = tempfile::tempdir().unwrap();
    let chunk = dir.path().join("chunk.txt");
    std::fs::write(&chunk, "萧炎抬起头。\n").unwrap();
    let chunk = chunk.to_str().unwrap();
    let receipt = book.json(&["assemble", "--chapter", "1", "--chunk", "1", "--text", chunk])["receipt"]
        .as_str()
        .unwrap()
        .to_owned();
    for args in [
        &["show"][..],
        &["log"],
        &["--json", "log"],
        &["audit", "--chapter", "1"],
        &["verify"],
        &["snapshot"],
        &["assemble", "--chapter", "1", "--chunk", "2", "--text", chunk],
        &["replay", &receipt],
        &["term", "retire", "T-1"],
    ] {
        let (code, stderr) = book.run_closed_stdout(args);
        assert_eq!(code, Some(0), "{args:?} | true: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert_eq!(book.head(), 3, "the retire was committed");
}

#[test]
fn log_with_from_after_to_is_invalid() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    let error = book.fails(&["log", "--from", "2", "--to", "1"], 2);
    assert!(error.contains("revision 2 is after revision 1"), "{error}");
    assert_eq!(book.ok(&["log", "--from", "2", "--to", "2"]).lines().count(), 1);
    // Past the head is out of range, as for the server's log and every revision read.
    for range in [&["--from", "9"][..], &["--to", "9"]] {
        let error = book.fails(&[&["log"][..], range].concat(), 2);
        assert!(error.contains("revision 9 is after the head"), "{error}");
    }
}

fn lorebank(args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lorebank")).args(args).env_remove("LOREBANK_BOOK").output().unwrap()
}

/// Every row of the exit-code table of docs/cli.md but 4, which
/// `replay_exits_4_naming_the_first_differing_byte_of_a_forged_receipt` (tests/cli.rs)
/// covers.
#[test]
fn every_row_of_the_exit_code_table() {
    let book = Book::new();
    // 0: success.
    book.ok(XIAO_YAN);
    // 1: storage failure: the book path is a directory.
    let dir = tempfile::tempdir().unwrap();
    let output = lorebank(&["--book".as_ref(), dir.path().as_os_str(), "verify".as_ref()]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    // 2: bad input, including an input file that does not exist.
    let missing = dir.path().join("missing.jsonl");
    let error = book.fails(&["apply", missing.to_str().unwrap()], 2);
    assert!(error.contains("missing.jsonl"), "{error}");
    book.fails(&["term", "put", "--id", "X-1", "--src", "萧炎", "--dst", "x"], 2);
    // 3: a file that is not a redb database is not a lorebank book.
    let not_a_book = dir.path().join("notes.txt");
    std::fs::write(&not_a_book, "just some notes\n").unwrap();
    let output = lorebank(&["--book".as_ref(), not_a_book.as_os_str(), "verify".as_ref()]);
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a lorebank ledger"));
    // 5: another writer moved the head.
    book.fails(&["term", "retire", "T-1", "--expect-head", "1"], 5);
    assert_eq!(book.head(), 2);
}

#[test]
fn argument_errors_follow_json() {
    let book = Book::new();
    let output = book.run(&["--json", "term", "put", "--id", "T-1"]);
    assert_eq!(output.status.code(), Some(2));
    let error: serde_json::Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(error["error"]["kind"], "invalid");
    assert_eq!(error["error"]["exit_code"], 2);
    assert!(error["error"]["message"].as_str().unwrap().contains("--src"), "{error}");
    let text = book.fails(&["term", "put", "--id", "T-1"], 2);
    assert!(text.contains("--src"), "{text}");
}

#[test]
fn apply_skips_a_byte_order_mark() {
    let book = Book::new();
    let line = r#"{"term_retired":{"id":"T-1","reason":null}}"#;
    book.ok(XIAO_YAN);
    let out = book.run_with_stdin(&["apply", "-"], Some(&format!("\u{feff}{line}\n")));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(book.head(), 3);
}

#[test]
fn chapter_zero_is_refused_by_every_command() {
    let book = Book::new();
    for args in [
        &["show", "--chapter", "0"][..],
        &["assemble", "--chapter", "0", "--chunk", "1"],
        &["audit", "--chapter", "0"],
        &["replay", "--snapshot", "00", "--chapter", "0", "--text", "-"],
    ] {
        let error = book.fails(args, 2);
        assert!(error.contains("0"), "{args:?}: {error}");
    }
}

#[test]
fn init_with_a_bad_actor_leaves_no_file_and_a_later_init_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let init = |actor: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(&path)
            .args(["init", "--profile", "plain", "--actor", actor])
            .env_remove("LOREBANK_BOOK")
            .output()
            .unwrap()
    };
    let output = init("robot x");
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("actor"));
    assert!(!path.exists(), "a refused init must leave nothing behind");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no temporary file is left either");
    let output = init("system:setup");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let output = init("system:setup");
    assert_eq!(output.status.code(), Some(2), "init over an existing book refuses");
    let verified = lorebank(&["--book".as_ref(), path.as_os_str(), "verify".as_ref()]);
    assert!(verified.status.success());
}

#[test]
fn rollback_to_the_head_is_refused_as_a_no_op() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    let error = book.fails(&["rollback", "--to", "2"], 2);
    assert!(error.contains("revision 2 is the head"), "{error}");
    assert_eq!(book.head(), 2);
    book.ok(&["rollback", "--to", "1"]);
    assert!(book.ids(&[]).is_empty());
}

#[test]
fn diff_log_and_term_show_use_the_documented_json_words() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-1",
        "--src",
        "萧炎",
        "--dst",
        "Сяо Янь",
        "--sense",
        "character",
        "--gender",
        "f",
    ]);
    book.ok(&["alias", "add", "T-1", "蕭炎", "--kind", "nickname"]);
    let diff = book.json(&["diff", "2", "4"]);
    let fields = diff["changed"][0]["fields"].as_array().unwrap();
    let field = |name: &str| fields.iter().find(|field| field["field"] == name).unwrap_or_else(|| panic!("{diff}"));
    assert_eq!((&field("sense")["old"], &field("sense")["new"]), (&serde_json::Value::Null, &"character".into()));
    assert_eq!((&field("gender")["old"], &field("gender")["new"]), (&"m".into(), &"f".into()));
    assert_eq!(field("decl")["old"], serde_json::json!(["Сяо Яня", "Сяо Яню"]));
    assert_eq!(field("aliases")["new"][0]["kind"], "nickname");
    let text = book.ok(&["diff", "2", "4"]);
    assert!(text.contains(r#"gender: "m" -> "f""#), "{text}");
    for output in [book.ok(&["diff", "2", "4"]), book.ok(&["log"]), book.ok(&["term", "show", "T-1"])] {
        for debug in ["Some(", "Masculine", "Nickname", "Approved"] {
            assert!(!output.contains(debug), "{debug} in {output}");
        }
    }
    assert!(book.ok(&["log"]).contains("alias_added T-1 蕭炎 (nickname)"));
}

#[test]
fn term_edit_changes_one_field_and_keeps_the_others() {
    let book = Book::new();
    book.ok(&[XIAO_YAN, &["--kind", "character", "--note", "герой"]].concat());
    book.ok(&["term", "edit", "T-1", "--dst", "Сяо Ян"]);
    let put = &book.log()[2]["body"]["term_put"];
    assert_eq!(put["dst"], "Сяо Ян");
    assert_eq!((put["kind"].as_str(), put["gender"].as_str()), (Some("character"), Some("m")));
    assert_eq!(put["decl"], serde_json::json!(["Сяо Яня", "Сяо Яню"]));
    assert_eq!(put["note"], "герой");
    book.ok(&["term", "edit", "T-1", "--clear-gender", "--clear-decl", "--until", "9"]);
    let put = &book.log()[3]["body"]["term_put"];
    assert!(put.get("gender").is_none_or(serde_json::Value::is_null), "{put}");
    assert!(put.get("decl").is_none_or(|decl| decl.as_array().is_some_and(Vec::is_empty)), "{put}");
    assert_eq!(put["window"]["until"], 9);
    assert_eq!(put["kind"], "character");
    book.fails(&["term", "edit", "T-1"], 2);
    book.fails(&["term", "edit", "T-9", "--dst", "x"], 2);
    book.fails(&["term", "edit", "T-1", "--gender", "f", "--clear-gender"], 2);
    assert_eq!(book.head(), 4);
}

#[test]
fn term_put_over_an_existing_term_warns_about_every_dropped_field() {
    let book = Book::new();
    book.ok(&[XIAO_YAN, &["--kind", "character"]].concat());
    let output = book.run(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Ян"]);
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("drops its kind, gender, decl"), "{stderr}");
    let replaced = book.json(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Яныч", "--replace"]);
    assert_eq!(replaced["warnings"], serde_json::json!([]));
    let output = book.run(&["term", "put", "--id", "T-2", "--src", "药老", "--dst", "Яо Лао"]);
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn retiring_twice_is_refused_and_a_put_revives_a_retired_term() {
    let book = Book::new();
    book.ok(XIAO_YAN);
    book.ok(&["term", "retire", "T-1"]);
    let error = book.fails(&["term", "retire", "T-1"], 2);
    assert!(error.contains("T-1 is retired"), "{error}");
    book.fails(&["term", "edit", "T-1", "--dst", "x"], 2);
    book.ok(XIAO_YAN);
    assert_eq!(book.ids(&[]), vec!["T-1"]);
}

/// Records chunks 1 and 2 of chapter 1, chunk 2 following chunk 1.
fn record_two_chunks(book: &Book, dir: &tempfile::TempDir, first: &str, second: &str) {
    let (one, two) = (dir.path().join("1.txt"), dir.path().join("2.txt"));
    std::fs::write(&one, first).unwrap();
    std::fs::write(&two, second).unwrap();
    let recorded = book.json(&["assemble", "--chapter", "1", "--chunk", "1", "--text", one.to_str().unwrap()]);
    let prev = recorded["receipt"].as_str().unwrap();
    book.ok(&["assemble", "--chapter", "1", "--chunk", "2", "--text", two.to_str().unwrap(), "--prev", prev]);
}

fn impacted(impact: &serde_json::Value) -> Vec<(String, Vec<String>)> {
    impact["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chunk| {
            let terms = chunk["terms"].as_array().unwrap().iter().map(|term| term.as_str().unwrap().to_owned());
            (chunk["chunk"].as_str().unwrap().to_owned(), terms.collect())
        })
        .collect()
}

#[test]
fn impact_follows_a_new_term_through_sticky_records_into_later_chunks() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    record_two_chunks(&book, &dir, "沈照提着长明灯。\n", "他下山了。\n");
    book.ok(&["term", "put", "--id", "T-9", "--src", "长明灯", "--dst", "негасимая лампада"]);
    let impact = book.json(&["impact"]);
    let chunks = impacted(&impact);
    assert_eq!(chunks.len(), 2, "chunk 2 gets T-9 as a sticky record from chunk 1: {impact}");
    assert_eq!(chunks[1], ("2".to_owned(), vec!["T-9".to_owned()]), "{impact}");
}

#[test]
fn impact_since_compares_with_the_assembly_at_that_revision() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао"]);
    let dir = tempfile::tempdir().unwrap();
    record_two_chunks(&book, &dir, "沈照提着长明灯。\n", "沈照下山了。\n");
    book.ok(&["term", "retire", "T-1"]);
    let since = book.head().to_string();
    book.ok(&["term", "put", "--id", "T-9", "--src", "长明灯", "--dst", "негасимая лампада"]);
    let impact = book.json(&["impact", "--since", &since]);
    // T-1 was already gone at `since`: only T-9 changed since then.
    for (chunk, terms) in impacted(&impact) {
        assert_eq!(terms, vec!["T-9".to_owned()], "chunk {chunk}: {impact}");
    }
    // Against the recorded receipts, T-1's removal counts too.
    let all = impacted(&book.json(&["impact"]));
    assert!(all.iter().all(|(_, terms)| terms.contains(&"T-1".to_owned())), "{all:?}");
}

/// `impact --with`: a batch decided against the head and written nowhere; the chunks
/// it would re-open are the ones `impact` lists once it is applied, and the snapshot
/// it predicts is the one applying it makes.
#[test]
fn impact_with_a_batch_lists_what_applying_it_reopens_and_writes_nothing() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    record_two_chunks(&book, &dir, "沈照提着长明灯。\n", "他下山了。\n");
    let batch = dir.path().join("batch.jsonl");
    std::fs::write(&batch, "{\"term_put\":{\"id\":\"T-9\",\"src\":\"长明灯\",\"dst\":\"негасимая лампада\"}}\n")
        .unwrap();
    let (head, snapshot) = (book.head(), book.json(&["snapshot"])["snapshot"].clone());
    let what_if = book.json(&["impact", "--with", batch.to_str().unwrap()]);
    assert_eq!(
        (book.head(), book.json(&["snapshot"])["snapshot"].clone()),
        (head, snapshot.clone()),
        "nothing written"
    );
    assert_eq!(what_if["head_snapshot"], snapshot, "{what_if}");
    assert_ne!(what_if["snapshot"], snapshot, "{what_if}");
    assert_eq!(what_if["decision"]["n_events"], 1, "{what_if}");
    let reopened = impacted(&what_if);
    assert_eq!(reopened.len(), 2, "chunk 2 gets T-9 as a sticky record from chunk 1: {what_if}");
    for chunk in what_if["chunks"].as_array().unwrap() {
        assert_eq!(chunk["removed"], serde_json::json!([]), "{chunk}");
        let added = chunk["added"].as_array().unwrap();
        assert!(added.iter().any(|line| line.as_str().unwrap().contains("негасимая лампада")), "{chunk}");
    }
    book.ok(&["apply", batch.to_str().unwrap()]);
    assert_eq!(book.json(&["snapshot"])["snapshot"], what_if["snapshot"], "the predicted snapshot");
    assert_eq!(impacted(&book.json(&["impact"])), reopened, "the chunks applying it re-opens");
    // Against the new head the same batch changes nothing.
    let again = book.json(&["impact", "--with", batch.to_str().unwrap()]);
    assert_eq!((again["n_chunks"].as_u64(), again["decision"]["n_dropped"].as_u64()), (Some(0), Some(1)), "{again}");
}

/// A batch `apply` would refuse is refused the same way, naming its line, and a
/// changed rendering is shown as the line it takes out and the line it puts in.
#[test]
fn impact_with_refuses_what_apply_refuses_and_shows_a_changed_line() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао"]);
    let dir = tempfile::tempdir().unwrap();
    record_two_chunks(&book, &dir, "沈照提着长明灯。\n", "他下山了。\n");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"term_put\":{\"id\":\"T-9\",\"src\":\"\",\"dst\":\"X\"}}\n").unwrap();
    let error = book.fails(&["impact", "--with", bad.to_str().unwrap()], 2);
    assert!(error.contains("bad.jsonl line 1") && error.contains("term_put.src"), "{error}");
    let edit = dir.path().join("edit.jsonl");
    std::fs::write(&edit, "{\"term_put\":{\"id\":\"T-1\",\"src\":\"沈照\",\"dst\":\"Шэнь Чжао-младший\"}}\n").unwrap();
    let what_if = book.json(&["impact", "--with", edit.to_str().unwrap()]);
    let chunks = what_if["chunks"].as_array().unwrap();
    // Chunk 1 names 沈照; chunk 2 carries T-1 on as a sticky record.
    let both = vec![("1".to_owned(), vec!["T-1".to_owned()]), ("2".to_owned(), vec!["T-1".to_owned()])];
    assert_eq!(impacted(&what_if), both, "{what_if}");
    for chunk in chunks {
        assert_eq!(chunk["removed"], serde_json::json!(["沈照 -> Шэнь Чжао"]), "{what_if}");
        assert_eq!(chunk["added"], serde_json::json!(["沈照 -> Шэнь Чжао-младший"]), "{what_if}");
    }
}

/// `names lint`: a character whose rendering is the standard's passes; one that
/// differs is named with the standard's form and the syllable it writes otherwise; a
/// place translated by meaning and accepted as a `name_exception` is listed apart; a
/// term of another kind is not looked at.
#[test]
fn names_lint_flags_what_differs_from_palladius_and_keeps_marked_exceptions_apart() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "贾宝玉", "--dst", "Цзя Баоюй", "--kind", "character"]);
    book.ok(&["term", "put", "--id", "T-2", "--src", "王熙凤", "--dst", "Ван Ксифэн", "--kind", "character"]);
    book.ok(&["term", "put", "--id", "T-3", "--src", "雾川", "--dst", "Туманная река", "--kind", "place"]);
    book.ok(&["term", "put", "--id", "T-4", "--src", "长明灯", "--dst", "негасимая лампада", "--kind", "item"]);
    let before = book.json(&["names", "lint"]);
    assert_eq!(before["n_checked"], 3, "{before}");
    let flagged: Vec<&str> =
        before["deviations"].as_array().unwrap().iter().map(|d| d["term"].as_str().unwrap()).collect();
    assert_eq!(flagged, ["T-2", "T-3"], "{before}");
    let wang = &before["deviations"][0];
    assert_eq!(wang["expected"], "Ван Сифэн", "{before}");
    assert_eq!(wang["syllable"], serde_json::json!({"source": "熙", "reading": "xi", "expected": "си"}), "{before}");
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark.jsonl");
    std::fs::write(
        &mark,
        "{\"disposition_set\":{\"target\":\"T-3\",\"verdict\":\"accept\",\"reason\":\"name_exception\"}}\n",
    )
    .unwrap();
    book.ok(&["apply", mark.to_str().unwrap()]);
    let after = book.json(&["names", "lint"]);
    assert_eq!(after["exceptions"], serde_json::json!(["T-3"]), "{after}");
    assert_eq!(after["deviations"].as_array().unwrap().len(), 1, "{after}");
    let text = book.ok(&["names", "lint"]);
    assert!(
        text.contains("T-2  王熙凤 -> Ван Ксифэн: the standard gives Ван Сифэн (it writes си for 熙, read xi)"),
        "{text}"
    );
}

#[test]
fn a_cascade_is_receipted_replayed_audited_and_kept_from_a_party_without_the_note() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let glossary = common::write_file(
        dir.path(),
        "glossary.jsonl",
        concat!(
            r#"{"governance_set":{"conflict_policy":"flag","parties":["human:editors","tool:pipeline"],"defaults":[]}}"#,
            "\n",
            r#"{"term_put":{"id":"T-1","src":"沈照","dst":"Шэнь Чжао","note":"ученик 顾寒川","note_release_to":["human:editors"]}}"#,
            "\n",
            r#"{"term_put":{"id":"T-2","src":"顾寒川","dst":"Гу Ханьчуань"}}"#,
            "\n",
        ),
    );
    book.ok(&["apply", &glossary]);
    let chunk = common::write_file(dir.path(), "chunk.txt", "沈照醒了。\n");
    let assemble = ["assemble", "--chapter", "1", "--chunk", "1", "--text", chunk.as_str()];
    // Off by default: the note brings nothing, and the answer has no `cascade` member.
    let off = book.json(&[&assemble[..], &["--dry-run"]].concat());
    assert!(off.get("cascade").is_none(), "{off}");
    assert!(!off["context"].as_str().unwrap().contains("顾寒川"), "{off}");

    let on = common::write_file(dir.path(), "on.jsonl", "{\"cascade_set\":{\"depth\":1}}\n");
    book.ok(&["apply", &on]);
    let answer = book.json(&assemble);
    assert!(answer["context"].as_str().unwrap().contains("顾寒川 -> Гу Ханьчуань"), "{answer}");
    assert_eq!(answer["cascade"][0]["term"], "T-2", "{answer}");
    assert_eq!(answer["cascade"][0]["by"], "T-1", "{answer}");
    assert_eq!(answer["cascade"][0]["depth"], 1, "{answer}");
    assert_eq!(answer["injected"][1]["via"], "cascade", "{answer}");
    let receipt = answer["receipt"].as_str().unwrap().to_owned();
    // The receipt holds the decision: the audit names the record that brought it.
    let audited = book.json(&["audit", "--chapter", "1"]);
    let entry = &audited["chunks"][0]["injected"][1];
    assert_eq!((&entry["term"], &entry["via"]), (&"T-2".into(), &"cascade".into()), "{audited}");
    assert_eq!(entry["cascade"], serde_json::json!({ "by": "T-1", "depth": 1 }), "{audited}");
    let replayed = book.ok(&["replay", &receipt]);
    assert!(replayed.contains("顾寒川 -> Гу Ханьчуань"), "{replayed}");
    let audit = book.ok(&["audit", "--chapter", "1"]);
    assert!(audit.contains("cascade from T-1, depth 1"), "{audit}");
    // The pipeline may not read T-1's note: in its view the note brings nothing.
    let party = book.json(&[&["--party", "tool:pipeline"][..], &assemble[..], &["--dry-run"]].concat());
    assert!(party.get("cascade").is_none(), "{party}");
    assert!(!party["context"].as_str().unwrap().contains("顾寒川"), "{party}");
    // A bad declaration names its field and writes nothing.
    let head = book.head();
    let deep = common::write_file(dir.path(), "deep.jsonl", "{\"cascade_set\":{\"depth\":4}}\n");
    let error = book.fails(&["apply", &deep], 2);
    assert!(error.contains("cascade_set.depth"), "{error}");
    let unknown =
        common::write_file(dir.path(), "unknown.jsonl", "{\"cascade_set\":{\"depth\":1,\"quiet\":[\"T-9\"]}}\n");
    let error = book.fails(&["apply", &unknown], 2);
    assert!(error.contains("line 1: unknown record T-9"), "{error}");
    assert_eq!(book.head(), head);
}

/// A Japanese name in kanji is read by its declared reading (a reading alias in
/// kana) and checked by Polivanov; one without a reading is not checked, and says so.
#[test]
fn names_lint_reads_a_kanji_name_by_its_reading_alias() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let glossary = common::write_file(
        dir.path(),
        "ja.jsonl",
        concat!(
            r#"{"languages_set":{"source":"ja","target":"ru"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-1","src":"碇シンジ","dst":"Икари Шинджи","kind":"character"}}"#,
            "\n",
            r#"{"alias_added":{"id":"T-1","surface":"いかり しんじ","kind":"reading"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-2","src":"綾波レイ","dst":"Аянами Рэй","kind":"character"}}"#,
            "\n",
            r#"{"alias_added":{"id":"T-2","surface":"あやなみ れい","kind":"reading"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-3","src":"鈴木一郎","dst":"Судзуки Итиро","kind":"character"}}"#,
            "\n",
        ),
    );
    book.ok(&["apply", &glossary]);
    let lint = book.json(&["names", "lint"]);
    assert_eq!(lint["n_checked"], 2, "{lint}");
    assert_eq!(lint["deviations"].as_array().unwrap().len(), 1, "{lint}");
    assert_eq!(lint["deviations"][0]["term"], "T-1", "{lint}");
    assert_eq!(lint["deviations"][0]["expected"], "Икари Синдзи", "{lint}");
    // No reading alias, and the name dictionary (tests/data/enamdict) lacks the name.
    assert_eq!(lint["unchecked"][0]["term"], "T-3", "{lint}");
    let why = lint["unchecked"][0]["why"].as_str().unwrap();
    assert!(why.contains("no reading alias") && why.contains("has none of 鈴木一郎"), "{lint}");
    // Without a dictionary, the lint says where it looked.
    let output = book.run_with_env(&["--json", "names", "lint"], "LOREBANK_ENAMDICT", "/nonexistent/enamdict");
    let lint: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        lint["unchecked"][0]["why"].as_str().unwrap().contains("no name dictionary at /nonexistent/enamdict"),
        "{lint}"
    );
}

/// Each deviation of a names lint answer: the term and the standard's form.
fn deviations(lint: &serde_json::Value) -> Vec<(&str, &str)> {
    lint["deviations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["term"].as_str().unwrap(), d["expected"].as_str().unwrap()))
        .collect()
}

/// A Japanese name in kanji without a reading alias is read by the name dictionary:
/// the reading that gives the rendering is the term's; a rendering no reading gives
/// is flagged against the closest one; a place is read as one word; a reading the
/// book's source text gives in ruby is the only one of what it annotates.
#[test]
fn names_lint_reads_a_kanji_name_by_the_name_dictionary() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let glossary = common::write_file(
        dir.path(),
        "ja.jsonl",
        concat!(
            r#"{"languages_set":{"source":"ja","target":"ru"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-1","src":"宮崎駿","dst":"Миядзаки Хаяо","kind":"character"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-2","src":"碇シンジ","dst":"Икари Шинджи","kind":"character"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-3","src":"川端康成","dst":"Кавабата Ясунари","kind":"character"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-4","src":"京都","dst":"Киото","kind":"place"}}"#,
            "\n",
            r#"{"term_put":{"id":"T-5","src":"夏目漱石","dst":"Нацумэ Сосэки","kind":"character"}}"#,
            "\n",
        ),
    );
    book.ok(&["apply", &glossary]);
    let lint = book.json(&["names", "lint"]);
    assert_eq!(lint["n_checked"], 5, "{lint}");
    assert_eq!(lint["unchecked"].as_array().unwrap().len(), 0, "{lint}");
    // 駿 is read はやお, one of its ten readings, because that gives the rendering;
    // Шинджи is no reading of シンジ; 京都 by the standard is Кёто (Киото is the
    // established exception an editor marks).
    assert_eq!(deviations(&lint), [("T-2", "Икари Синдзи"), ("T-4", "Кёто")], "{lint}");
    // The syllable that differs is read from the dictionary's reading.
    assert_eq!(lint["deviations"][0]["syllable"]["reading"], "し", "{lint}");

    // The book's own text reads 駿 しゅん in ruby (HTML ruby, which every profile reads;
    // a Japanese profile reads Aozora's ｜駿《しゅん》 too): the author's reading wins
    // over the dictionary's ten, so Хаяо is now a deviation from Сюн.
    let chapter = common::write_file(dir.path(), "01.txt", "宮崎<ruby>駿<rt>しゅん</rt></ruby>は京都へ行った。\n");
    book.ok(&["source", "add", &chapter, "--chapter", "1"]);
    let lint = book.json(&["names", "lint"]);
    assert_eq!(deviations(&lint), [("T-1", "Миядзаки Сюн"), ("T-2", "Икари Синдзи"), ("T-4", "Кёто")], "{lint}");
}

/// Demonstrations (render format 3): a term the post-check found missing in an
/// earlier chapter is shown beside its line with a sentence of an earlier chapter in
/// which it was rendered (declined), from the stored check; the receipt holds the
/// pair, so replay is byte-identical; nothing is offered from the chapter itself, a
/// term never found wrong gets none, and a renamed term's old sentence is not offered.
#[test]
fn a_term_the_model_got_wrong_is_shown_with_an_earlier_checked_sentence() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    book.ok(&["term", "put", "--id", "T-1", "--src", "沈照", "--dst", "Шэнь Чжао", "--gender", "f"]);
    book.ok(&["term", "put", "--id", "T-2", "--src", "顾寒川", "--dst", "Гу Ханьчуань", "--gender", "m"]);
    let record = |chapter: &str, chunk: &str, text: &str, translation: &str| {
        let text = common::write_file(dir.path(), &format!("{chapter}-{chunk}.txt"), text);
        let assembled = book.json(&["assemble", "--chapter", chapter, "--chunk", chunk, "--text", &text]);
        let receipt = assembled["receipt"].as_str().unwrap().to_owned();
        let translated = common::write_file(dir.path(), &format!("{chapter}-{chunk}.ru.txt"), translation);
        book.ok(&["check", "--receipt", &receipt, "--translation", &translated]);
        receipt
    };
    // Chapter 1: the name rendered and declined in one chunk, missing in the next.
    let source_receipt = record(
        "1",
        "1",
        "雨停了。沈照看着顾寒川，没有说话。风很冷。\n",
        "Дождь кончился. Шэнь Чжао смотрела на Гу Ханьчуаня и молчала. Было холодно.\n",
    );
    record("1", "2", "顾寒川走了。\n", "Он ушёл.\n");
    let chunk = common::write_file(dir.path(), "2-1.txt", "沈照等顾寒川回来。\n");
    let assemble = ["assemble", "--chapter", "2", "--chunk", "1", "--text", chunk.as_str()];
    // Off by default (render format 1): no block, no member.
    let off = book.json(&[&assemble[..], &["--dry-run"]].concat());
    assert!(off.get("examples").is_none(), "{off}");
    assert!(!off["context"].as_str().unwrap().contains("[examples]"), "{off}");

    let on = common::write_file(dir.path(), "on.jsonl", "{\"config_set\":{\"assembly\":{\"render_format\":3}}}\n");
    book.ok(&["apply", &on]);
    let answer = book.json(&assemble);
    let context = answer["context"].as_str().unwrap();
    assert!(
        context.ends_with("[examples]\n沈照看着顾寒川，没有说话。 -> Шэнь Чжао смотрела на Гу Ханьчуаня и молчала.\n"),
        "{answer}"
    );
    // One example, for the term found missing; T-1 was never wrong.
    assert_eq!(answer["examples"].as_array().unwrap().len(), 1, "{answer}");
    assert_eq!(answer["examples"][0]["term"], "T-2", "{answer}");
    assert_eq!(answer["examples"][0]["chapter"], 1, "{answer}");
    assert_eq!(answer["examples"][0]["receipt"], source_receipt.as_str(), "{answer}");
    let receipt = answer["receipt"].as_str().unwrap().to_owned();
    let replayed = book.json(&["replay", &receipt]);
    assert_eq!(replayed["identical"], true, "{replayed}");
    let audit = book.ok(&["audit", "--chapter", "2"]);
    assert!(audit.contains("T-2    example from chapter 1"), "{audit}");
    let audited = book.json(&["audit", "--chapter", "2"]);
    assert_eq!(audited["chunks"][0]["examples"][0]["receipt"], source_receipt.as_str(), "{audited}");

    // Per term: T-1 was never found wrong, but the book asks for its example always;
    // T-2 never. The lists are the book's word over the post-check's.
    let per_term = |always: &str, never: &str| {
        let file = common::write_file(
            dir.path(),
            "examples.jsonl",
            &format!("{{\"examples_set\":{{\"always\":[{always}],\"never\":[{never}]}}}}\n"),
        );
        book.ok(&["apply", &file]);
    };
    per_term("\"T-1\"", "\"T-2\"");
    let shown = book.json(&[&assemble[..], &["--dry-run"]].concat());
    let terms: Vec<&str> =
        shown["examples"].as_array().unwrap().iter().map(|example| example["term"].as_str().unwrap()).collect();
    assert_eq!(terms, ["T-1"], "{shown}");
    assert_eq!(shown["examples"][0]["target"], "Шэнь Чжао смотрела на Гу Ханьчуаня и молчала.", "{shown}");
    assert!(book.ok(&["log"]).contains("examples_set always T-1; never T-2"));
    // A term the book never had, or one named in both lists, is refused, naming it.
    let head = book.head();
    let unknown = common::write_file(dir.path(), "unknown.jsonl", "{\"examples_set\":{\"always\":[\"T-9\"]}}\n");
    assert!(book.fails(&["apply", &unknown], 2).contains("unknown record T-9"));
    let both =
        common::write_file(dir.path(), "both.jsonl", "{\"examples_set\":{\"always\":[\"T-1\"],\"never\":[\"T-1\"]}}\n");
    let error = book.fails(&["apply", &both], 2);
    assert!(error.contains("examples_set.never[0]") && error.contains("also in always"), "{error}");
    assert_eq!(book.head(), head);
    // Two empty lists leave the post-check's word alone again.
    per_term("", "");
    let back = book.json(&[&assemble[..], &["--dry-run"]].concat());
    assert_eq!(back["examples"][0]["term"], "T-2", "{back}");

    // Never from the chapter being translated (nor a later one).
    let same = book.json(&["assemble", "--chapter", "1", "--chunk", "3", "--text", chunk.as_str(), "--dry-run"]);
    assert!(same.get("examples").is_none(), "{same}");
    // A renamed term's old sentence does not teach the new name.
    book.ok(&["term", "put", "--id", "T-2", "--src", "顾寒川", "--dst", "Гу Ханьчуан", "--gender", "m"]);
    let renamed = book.json(&[&assemble[..], &["--dry-run"]].concat());
    assert!(renamed.get("examples").is_none(), "{renamed}");
    // The recorded receipt still replays byte for byte: its pair is in the receipt.
    let replayed = book.json(&["replay", &receipt]);
    assert_eq!(replayed["identical"], true, "{replayed}");
}
