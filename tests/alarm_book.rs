//! `lorebank scan --chapters A-B`: the name alarm over every chunk of the chapters at
//! once, ranked (the `names` crate's `Scanner::rank`), on 西游记
//! (tests/data/corpora/xiyouji-head.txt as three chapters): likely names proposed best
//! first with their score, the review queue in that order, nothing proposed twice, a
//! known name never, and the minimum score honoured.

mod common;

use common::Book;
use serde_json::Value;

const SLICE: &str = include_str!("data/corpora/xiyouji-head.txt");

fn book() -> (Book, tempfile::TempDir) {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    book.add_source_in_chapters(dir.path(), SLICE, 3);
    (book, dir)
}

fn surfaces(scanned: &Value) -> Vec<&str> {
    scanned["ranked"].as_array().unwrap().iter().map(|r| r["surface"].as_str().unwrap()).collect()
}

#[test]
fn the_book_wide_alarm_proposes_likely_names_best_first() {
    let (book, _dir) = book();
    let scanned = book.json(&["scan", "--chapters", "1-3"]);
    let ranked = scanned["ranked"].as_array().unwrap();
    assert!(scanned["chunks"].as_u64().unwrap() >= 30, "{}", scanned["chunks"]);
    let scores: Vec<u64> = ranked.iter().map(|r| r["score"].as_u64().unwrap()).collect();
    assert!(scores.windows(2).all(|pair| pair[0] >= pair[1]), "best first: {scores:?}");
    assert!(scores.iter().all(|score| *score >= 16), "the default minimum is the ranking's cut-off");
    for name in ["悟空", "美猴王", "花果山", "玉帝"] {
        assert!(surfaces(&scanned).contains(&name), "{name} among {:?}", surfaces(&scanned));
    }
    // Every proposal is a candidate of the alarm with the ranking's score, and the
    // queue shows them best first.
    let log = book.log();
    let proposed: Vec<&Value> = log.iter().filter_map(|event| event["body"].get("candidate_proposed")).collect();
    assert_eq!(proposed.len(), ranked.len());
    assert!(proposed.iter().all(|c| c["origin"] == "extractor" && c["score"].is_u64()), "{proposed:?}");
    let queue = book.json(&["review", "list"]);
    let top = &queue["items"][0];
    assert_eq!(top["surface"], ranked[0]["surface"], "{queue}");
    let text = book.ok(&["review", "list"]);
    let first = text.lines().nth(1).unwrap();
    assert!(
        first.contains("(candidate, extractor, ranked ") && first.contains(ranked[0]["surface"].as_str().unwrap()),
        "{first}"
    );
    // Again: the same evidence, nothing written.
    let head = book.head();
    let again = book.json(&["scan", "--chapters", "1-3"]);
    assert_eq!(again["written"], Value::Null, "{}", again["written"]);
    assert_eq!(book.head(), head);
    // A name the book knows is not proposed; a lower minimum proposes more.
    let dir = tempfile::tempdir().unwrap();
    let term = common::write_file(
        dir.path(),
        "t.jsonl",
        "{\"term_put\":{\"id\":\"T-1\",\"src\":\"悟空\",\"dst\":\"Укун\"}}\n",
    );
    book.ok(&["apply", &term]);
    let known = book.json(&["scan", "--chapters", "1-3", "--dry-run"]);
    assert!(!surfaces(&known).contains(&"悟空"), "{:?}", surfaces(&known));
    let all = book.json(&["scan", "--chapters", "1-3", "--dry-run", "--min-score", "0"]);
    assert!(all["ranked"].as_array().unwrap().len() > known["ranked"].as_array().unwrap().len());
    assert_eq!(all["below"], 0);
}

#[test]
fn bad_ranges_and_flags_exit_2() {
    let (book, _dir) = book();
    for (args, says) in [
        (vec!["scan", "--chapters", "1-4"], "chapter 4 has no source text"),
        (vec!["scan", "--chapters", "2-1"], "the range ends before it starts"),
        (vec!["scan", "--chapters", "1", "--chapter", "1"], "cannot be used with"),
        (vec!["scan", "--chapter", "1", "--min-score", "3"], "--chapters"),
        (vec!["scan"], "--chapter"),
        (vec!["--server", "http://127.0.0.1:9", "scan", "--chapters", "1"], "without --server"),
    ] {
        let stderr = book.fails(&args, 2);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
