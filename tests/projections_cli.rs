//! End-to-end tests of the projection commands as a translator would use them:
//! history with provenance, `show` at past revisions and chapters, the uniqueness
//! rule, `diff`, `rollback` landing on the old snapshot ID, and `rebuild`.

mod common;

use common::Book;

#[test]
fn a_term_revised_twice_shows_three_versions_with_provenance() {
    let book = Book::with_actor("human:anna");
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Ян", "--source", "ch1#p3"]);
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-1",
        "--src",
        "萧炎",
        "--dst",
        "Сяо Янь",
        "--actor",
        "human:boris",
        "--source",
        "review-7",
    ]);
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-1",
        "--src",
        "萧炎",
        "--dst",
        "Сяо Янь",
        "--gender",
        "m",
        "--actor",
        "llm:extractor",
    ]);
    let history = book.json(&["term", "show", "T-1"]);
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 3);
    let provenance: Vec<(u64, &str, &str)> = versions
        .iter()
        .map(|v| (v["seq"].as_u64().unwrap(), v["actor"].as_str().unwrap(), v["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        provenance,
        [(2, "human:anna", "ch1#p3"), (3, "human:boris", "review-7"), (4, "llm:extractor", "append")]
    );
    assert!(versions.iter().all(|v| v["recorded_at_ms"].as_u64().unwrap() > 1_700_000_000_000));
    // Old revisions show the old rendering.
    let at_2 = book.json(&["show", "--as-of", "2"]);
    assert_eq!(at_2["terms"][0]["dst"], "Сяо Ян");
    assert_eq!(book.json(&["show"])["terms"][0]["dst"], "Сяо Янь");
    // Diff names the changed fields.
    let diff = book.json(&["diff", "2", "4"]);
    let fields: Vec<&str> =
        diff["changed"][0]["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["dst", "gender"]);
}

#[test]
fn the_chapter_window_hides_a_later_record_and_supersession_ends_the_old_one() {
    let book = Book::with_actor("human:anna");
    book.ok(&["term", "put", "--id", "T-2", "--src", "顾寒川", "--dst", "Гу Ханьчуань"]);
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-4",
        "--src",
        "顾寒川",
        "--dst",
        "Гу Ханьчуань, глава Ночной секты",
        "--since",
        "121",
        "--supersedes",
        "T-2",
    ]);
    book.ok(&["term", "put", "--id", "T-5", "--src", "夜宗宗主", "--dst", "Глава Ночной секты", "--since", "121"]);
    assert_eq!(book.ids(&["--chapter", "5"]), ["T-2"]);
    assert_eq!(book.ids(&["--chapter", "121"]), ["T-4", "T-5"]);
    let shown = book.json(&["show", "--chapter", "5"]);
    assert_eq!(shown["terms"][0]["window"]["until"], 120);
    assert_eq!(shown["terms"][0]["superseded_by"], "T-4");
    assert_eq!(book.ids(&[]), ["T-2", "T-4", "T-5"]);
}

#[test]
fn a_conflicting_put_exits_2_naming_the_other_record() {
    let book = Book::with_actor("human:anna");
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь"]);
    // 蕭炎 is the traditional spelling: it folds to the same key.
    let output = book.run(&["term", "put", "--id", "T-9", "--src", "蕭炎", "--dst", "Сяо Янь второй"]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("T-1") && error.contains("UNIQUE"), "{error}");
    // A different sense, or a disjoint window, is fine.
    book.ok(&["term", "put", "--id", "T-9", "--src", "蕭炎", "--dst", "огонь Сяо", "--sense", "fire"]);
    assert_eq!(book.json(&["snapshot"])["revision"], 3);
}

#[test]
fn rollback_lands_on_the_snapshot_of_the_old_revision() {
    let book = Book::with_actor("human:anna");
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--alias", "炎子"]);
    book.ok(&["summary", "put", "--id", "S-1", "--scope", "book", "--text", "Сяо Янь теряет силу."]);
    let at_4 = book.json(&["snapshot", "--as-of", "4"]);
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Ян"]);
    book.ok(&["alias", "remove", "T-1", "炎子"]);
    book.ok(&["term", "put", "--id", "T-2", "--src", "药老", "--dst", "Яо Лао"]);
    book.ok(&["summary", "retire", "S-1"]);
    assert_ne!(book.json(&["snapshot"])["snapshot"], at_4["snapshot"]);
    let rolled = book.json(&["rollback", "--to", "4", "--reason", "bad import"]);
    assert_eq!(rolled["snapshot"], at_4["snapshot"]);
    let head = book.json(&["snapshot"]);
    assert_eq!(head["snapshot"], at_4["snapshot"]);
    // The index remembers the first revision that had the snapshot.
    assert_eq!(head["first_revision"], 4);
    // History is untouched: the rollback appended, and the log still has every event.
    let log = book.ok(&["log"]);
    assert!(log.contains("rollback_marker to revision 4"), "{log}");
    assert!(log.contains("term_put T-2 药老"), "{log}");
    assert_eq!(book.json(&["diff", "4", &head["revision"].to_string()])["changed"], serde_json::json!([]));
    // A rollback past the head is refused.
    assert_eq!(book.run(&["rollback", "--to", "999"]).status.code(), Some(2));
}

#[test]
fn rebuild_refolds_and_prints_the_head_snapshot() {
    let book = Book::with_actor("human:anna");
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь"]);
    let rebuilt = book.json(&["rebuild"]);
    assert_eq!(rebuilt["snapshot"], book.json(&["snapshot"])["snapshot"]);
    assert_eq!(rebuilt["revision"], 2);
    assert_eq!((rebuilt["n_terms"].as_u64(), rebuilt["n_patterns"].as_u64()), (Some(1), Some(1)));
    // A second rebuild drops the frozen projection the first one stored.
    assert_eq!(book.json(&["rebuild"])["n_cache_entries_dropped"], 1);
}
