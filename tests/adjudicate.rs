//! `lorebank adjudicate` against the stand-in judge (tests/common/upstream.py): a
//! chapter's three kinds of conflict found in its recorded receipt and check, put to
//! the model in one request, each verdict filed as a `verify` for a reviewer, the
//! answer replayed from the book; a verdict naming a term outside its conflict
//! refused with nothing written.

mod common;
#[path = "common/serve.rs"]
mod serve;
#[path = "common/upstream.rs"]
mod upstream;

use common::Book;
use serde_json::Value;
use upstream::Upstream;

const CHUNK: &str = "白衣先生看着沈照。阿照低头，白衣上落了雪。";

/// A book whose chapter 1 has a sense collision (白衣, two senses), a shared
/// rendering (沈照 and 阿照, one rendering) and a gender flag (沈照, masculine,
/// followed by a feminine verb in the checked translation).
fn book() -> (Book, tempfile::TempDir) {
    let book = Book::new();
    for args in [
        &["--id", "T-1", "--src", "白衣", "--dst", "Господин в белом", "--sense", "title", "--gender", "m"][..],
        &["--id", "T-2", "--src", "白衣", "--dst", "белые одежды", "--sense", "clothes"],
        &["--id", "T-3", "--src", "沈照", "--dst", "Шэнь Чжао", "--gender", "m"],
        &["--id", "T-4", "--src", "阿照", "--dst", "Шэнь Чжао", "--gender", "m"],
    ] {
        book.ok(&[&["term", "put"][..], args].concat());
    }
    let dir = tempfile::tempdir().unwrap();
    let chunk = common::write_file(dir.path(), "chunk.txt", CHUNK);
    let assembled = book.json(&["assemble", "--chapter", "1", "--chunk", "1", "--text", &chunk]);
    let receipt = assembled["receipt"].as_str().unwrap().to_owned();
    let translation = common::write_file(dir.path(), "ru.txt", "Господин в белом смотрел, как Шэнь Чжао пришла.");
    book.ok(&["check", "--receipt", &receipt, "--translation", &translation]);
    (book, dir)
}

fn adjudicate(book: &Book, upstream: Option<&Upstream>, model: &str) -> std::process::Output {
    let url = upstream.map(Upstream::url);
    let mut args = vec!["--json", "adjudicate", "--model", model];
    if let Some(url) = &url {
        args.extend(["--model-url", url.as_str()]);
    }
    book.run(&args)
}

#[test]
fn conflicts_are_put_to_the_model_and_its_verdicts_become_verify_items() {
    let upstream = Upstream::start();
    let (book, _dir) = book();
    let head = book.head();
    let output = adjudicate(&book, Some(&upstream), "judge");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    let chapter = &answer["chapters"][0];
    let kinds: Vec<(&str, Vec<&str>)> = chapter["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["kind"].as_str().unwrap(),
                c["terms"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("sense_collision", vec!["T-1", "T-2"]),
            ("shared_rendering", vec!["T-3", "T-4"]),
            ("gender", vec!["T-3"]),
            ("gender", vec!["T-4"]),
        ],
        "{answer}"
    );
    assert_eq!(upstream.requests().len(), 1, "one request a chapter");
    // T-1, T-3 and T-4 get a verify; the second verdict on T-3 is not written twice.
    let proposed: Vec<&str> =
        answer["proposed"].as_array().unwrap().iter().map(|p| p["target"].as_str().unwrap()).collect();
    assert_eq!(proposed, ["T-1", "T-3", "T-4"]);
    assert_eq!(answer["already"], serde_json::json!(["T-3"]));
    let log = book.log();
    assert_eq!(log.len() as u64, head + 3);
    let second = &log[log.len() - 2]["body"]["disposition_set"];
    assert_eq!((second["verdict"].as_str(), second["reason"].as_str()), (Some("verify"), Some("llm_adjudication")));
    assert!(second["note"]
        .as_str()
        .unwrap()
        .starts_with("judge prompt v1, ch1 c2 shared_rendering: the stand-in judged"));
    let queue = book.json(&["review", "list"]);
    let why: Vec<(&str, &str)> = queue["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["id"].as_str().unwrap(), i["why"].as_str().unwrap()))
        .collect();
    assert!(why.contains(&("T-1", "verify:llm_adjudication")), "{queue}");

    // Again: the conflicts are the same request, answered from the store; both terms
    // are flagged already, so nothing is written.
    let again = adjudicate(&book, None, "judge");
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["chapters"][0]["asked"]["stored"], true, "{again}");
    assert_eq!((again["proposed"].as_array().unwrap().len(), again["written"].clone()), (0, Value::Null));
    assert_eq!(upstream.requests().len(), 1);
    assert_eq!(book.log().len() as u64, head + 3);
}

#[test]
fn a_verdict_outside_its_conflict_is_refused_and_nothing_written() {
    let upstream = Upstream::start();
    let (book, _dir) = book();
    let head = book.head();
    let output = adjudicate(&book, Some(&upstream), "judge-stranger");
    assert_eq!(output.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("verdicts[0].term: \"T-999\" is not a term of c1"), "{message}");
    assert!(message.ends_with("nothing was written to the log"), "{message}");
    assert_eq!(book.head(), head);
    // A chapter without a recorded chunk has no conflict and asks nothing.
    let quiet = book.json(&["adjudicate", "--chapter", "2", "--model", "judge", "--model-url", &upstream.url()]);
    assert_eq!(quiet["chapters"][0]["asked"], Value::Null);
    assert_eq!(upstream.requests().len(), 1);
}

#[test]
fn a_model_party_the_policy_lets_decide_changes_the_term_itself() {
    let upstream = Upstream::start();
    let (book, dir) = book();
    let url = upstream.url();
    let run = |actor: &str| {
        let args = ["--json", "adjudicate", "--model", "judge-decides", "--model-url", url.as_str(), "--actor", actor];
        let output = book.run(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let dry_run = || {
        book.json(&["adjudicate", "--model", "judge-decides", "--model-url", &url, "--actor", "llm:judge", "--dry-run"])
    };
    // A policy for a party the governance does not declare decides nothing.
    let policy = r#"{"model_policy_set":{"party":"llm:judge","decides":["gender","shared_rendering"]}}"#;
    book.ok(&["apply", &common::write_file(dir.path(), "policy.jsonl", &format!("{policy}\n"))]);
    let undeclared = dry_run();
    assert_eq!(undeclared["decided"], serde_json::json!([]), "{undeclared}");
    // Declared, it decides the gender and the shared rendering; a sense collision
    // still goes to a reviewer.
    let governance = r#"{"governance_set":{"conflict_policy":"flag","parties":["llm:judge"]}}"#;
    book.ok(&["apply", &common::write_file(dir.path(), "governance.jsonl", &format!("{governance}\n"))]);
    let head = book.head();
    let answer = run("llm:judge");
    let decided: Vec<(&str, &str, &str, &str)> = answer["decided"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["term"].as_str().unwrap(),
                d["field"].as_str().unwrap(),
                d["from"].as_str().unwrap(),
                d["to"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [("T-4", "dst", "Шэнь Чжао", "А-Чжао"), ("T-3", "gender", "m", "f"), ("T-4", "gender", "m", "f")]
    );
    let proposed: Vec<&str> =
        answer["proposed"].as_array().unwrap().iter().map(|p| p["target"].as_str().unwrap()).collect();
    assert_eq!(proposed, ["T-1"], "the sense collision waits for a reviewer");
    let log = book.log();
    let written: Vec<&Value> = log[head as usize..].iter().collect();
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(written.iter().all(|event| event["actor"] == "llm:judge"), "{written:?}");
    let t4 = &written[1]["body"]["term_put"];
    assert_eq!(
        (t4["id"].as_str(), t4["dst"].as_str(), t4["gender"].as_str()),
        (Some("T-4"), Some("А-Чжао"), Some("f"))
    );
    // The same party without the class in its policy files a verify instead.
    let narrower = r#"{"model_policy_set":{"party":"llm:judge","decides":["shared_rendering"]}}"#;
    book.ok(&["apply", &common::write_file(dir.path(), "narrower.jsonl", &format!("{narrower}\n"))]);
    let dry = dry_run();
    assert!(dry["decided"].as_array().unwrap().iter().all(|d| d["field"] != "gender"), "{dry}");
}
