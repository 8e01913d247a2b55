//! `lorebank extract` against the stand-in model server (tests/common/upstream.py) on
//! loopback: names proposed with `origin: llm`, an invented name dropped, a known one
//! left, the exchange stored and replayed without the model, merged with what the
//! name alarm finds; a malformed answer, a 500 and a model that hangs refused with
//! nothing written.

mod common;
#[path = "common/serve.rs"]
mod serve;
#[path = "common/upstream.rs"]
mod upstream;

use std::time::{Duration, Instant};

use common::Book;
use serde_json::Value;
use upstream::Upstream;

/// Chapter 1: three names the stand-in knows (美猴王 is a term of the book) and
/// nothing of its invented one.
const CHAPTER: &str = "\
东胜神洲有一座花果山，山上有一块仙石。\n\
石猴出世，众猴拜他为美猴王。\n\
后来他拜师学艺，得名孙悟空。孙悟空道：“我去也！”\n";

fn book_with_chapter() -> (Book, tempfile::TempDir) {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_file(dir.path(), "001.txt", CHAPTER);
    book.ok(&["source", "add", "--chapter", "1", &file]);
    book.ok(&["term", "put", "--id", "T-1", "--src", "美猴王", "--dst", "Царь обезьян"]);
    (book, dir)
}

fn extract(book: &Book, upstream: Option<&Upstream>, model: &str, more: &[&str]) -> std::process::Output {
    let url = upstream.map(Upstream::url);
    let mut args = vec!["--json", "extract", "--chapter", "1", "--model", model];
    if let Some(url) = &url {
        args.extend(["--model-url", url.as_str()]);
    }
    args.extend(more);
    book.run(&args)
}

fn answer(output: &std::process::Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn outcome<'a>(answer: &'a Value, surface: &str) -> &'a Value {
    let names = answer["names"].as_array().unwrap();
    &names.iter().find(|name| name["surface"] == surface).unwrap_or_else(|| panic!("{surface}: {answer}"))["outcome"]
}

#[test]
fn names_are_proposed_invented_ones_dropped_and_the_answer_replays_from_the_book() {
    let upstream = Upstream::start();
    let (book, _dir) = book_with_chapter();
    let head = book.head();
    let first = answer(&extract(&book, Some(&upstream), "names", &[]));
    assert_eq!(outcome(&first, "孙悟空"), "proposed", "{first}");
    assert_eq!(outcome(&first, "花果山"), "proposed", "{first}");
    assert_eq!(outcome(&first, "美猴王"), "known", "{first}");
    assert_eq!(outcome(&first, "李逍遥"), "not_in_text", "the invented name is dropped: {first}");
    assert_eq!(outcome(&first, "。"), "not_a_name", "a full stop is no name: {first}");
    assert_eq!(first["parts"][0]["stored"], false);
    assert_eq!(upstream.requests().len(), 1);
    // The request: the versioned prompt, the chapter, a JSON answer asked for.
    let request = &upstream.requests()[0]["body"];
    assert_eq!(request["model"], "names");
    assert_eq!(request["response_format"]["type"], "json_object");
    assert!(request["messages"][1]["content"].as_str().unwrap().starts_with("Chapter 1.\n\n东胜神洲"), "{request}");

    // Two candidates of origin llm, whose evidence names the model and the prompt.
    let log = book.log();
    assert_eq!(log.len() as u64, head + 2, "{log:?}");
    let proposed: Vec<&Value> = log.iter().filter_map(|event| event["body"].get("candidate_proposed")).collect();
    assert_eq!(proposed.len(), 2);
    for candidate in &proposed {
        assert_eq!(candidate["origin"], "llm", "{candidate}");
        let evidence = candidate["evidence"].as_str().unwrap();
        assert!(evidence.starts_with("sightings: 1\nch1 llm names prompt v1: "), "{evidence}");
    }
    let wukong = proposed.iter().find(|candidate| candidate["surface"] == "孙悟空").unwrap();
    assert!(wukong["evidence"].as_str().unwrap().contains("person m (Sūn Wùkōng): 后来他拜师学艺，得名孙悟空。"));

    // What the model was asked and answered can be read back, by the exchange's id or
    // by the request's hash.
    let id = first["parts"][0]["exchange"].as_str().unwrap();
    let exchange = book.json(&["exchange", id]);
    assert_eq!((exchange["job"].as_str(), exchange["prompt"].as_str()), (Some("extract"), Some("v1")));
    assert_eq!(exchange["request"]["model"], "names");
    assert!(exchange["answer"]["choices"][0]["message"]["content"].as_str().unwrap().contains("孙悟空"));
    let by_request = book.json(&["exchange", first["parts"][0]["request"].as_str().unwrap()]);
    assert_eq!(by_request, exchange);
    let text = book.ok(&["exchange", id]);
    assert!(text.contains("--- system ---\nYou extract proper names") && text.contains("--- answer ---"), "{text}");
    assert!(book.fails(&["exchange", "zz"], 2).contains("64 hex digits"));
    assert!(book.fails(&["exchange", &"0".repeat(64)], 2).contains("no exchange or request"));

    // The same again: answered from the book, the model is not asked, nothing written.
    let again = answer(&extract(&book, Some(&upstream), "names", &[]));
    assert_eq!((again["parts"][0]["stored"].clone(), again["written"].clone()), (Value::Bool(true), Value::Null));
    assert_eq!(again["parts"][0]["exchange"], first["parts"][0]["exchange"]);
    assert_eq!(outcome(&again, "孙悟空"), "unchanged");
    assert_eq!(upstream.requests().len(), 1, "a stored answer is not asked again");
    // Without a model at all, the stored answer replays the job.
    let offline = answer(&extract(&book, None, "names", &[]));
    assert_eq!(offline["parts"][0]["stored"], true);
    let unchanged: Vec<Value> = first["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| {
            let mut name = name.clone();
            if name["outcome"] == "proposed" {
                name["outcome"] = "unchanged".into();
            }
            name
        })
        .collect();
    assert_eq!(offline["names"], Value::Array(unchanged));
    // --fresh asks again; the same answer changes nothing in the log.
    let fresh = answer(&extract(&book, Some(&upstream), "names", &["--fresh"]));
    assert_eq!(fresh["parts"][0]["stored"], false);
    assert_eq!(upstream.requests().len(), 2);
    assert_eq!(book.log().len() as u64, head + 2);

    // The name alarm's sighting of 孙悟空 joins the model's candidate: one a surface.
    let scanned = book.json(&["scan", "--chapter", "1"]);
    let candidate = wukong["id"].as_str().unwrap();
    let sightings = scanned["sightings"].as_array().unwrap();
    assert!(sightings.iter().any(|s| s["surface"] == "孙悟空" && s["candidate"] == candidate), "{scanned}");
    let queue = book.json(&["review", "show", candidate]);
    let evidence = queue.to_string();
    assert!(evidence.contains("llm names prompt v1") && evidence.contains("source@"), "{queue}");

    // A model's fenced answer is read as the same names; another model's sighting is
    // new evidence for the same candidate (a dry run writes it not).
    let head = book.head();
    let fenced = answer(&extract(&book, Some(&upstream), "names-fenced", &["--dry-run"]));
    assert_eq!(outcome(&fenced, "花果山"), "evidence", "{fenced}");
    assert_eq!(fenced["names"][0]["candidate"], candidate);
    assert_eq!((fenced["written"].clone(), book.head()), (Value::Null, head));
}

#[test]
fn a_malformed_answer_a_failure_and_a_hang_write_nothing() {
    let upstream = Upstream::start();
    let (book, _dir) = book_with_chapter();
    let head = book.head();
    let output = extract(&book, Some(&upstream), "malformed", &[]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("chapter 1 part 1: the answer of malformed is refused: its content is not"),
        "{message}"
    );
    assert!(message.ends_with("nothing was written to the log"), "{message}");
    // Nothing stored either: without the model there is no answer to replay.
    let output = extract(&book, None, "malformed", &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no stored answer of malformed"));

    let output = extract(&book, Some(&upstream), "fail", &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("answered 500"), "{output:?}");

    let output = extract(&book, Some(&upstream), "huge", &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("answer is longer than 1048576 bytes"), "{output:?}");

    let started = Instant::now();
    let output = extract(&book, Some(&upstream), "hang", &["--model-timeout", "1"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the model endpoint 127.0.0.1:") && stderr.contains("did not answer within 1.0 s"),
        "{stderr}"
    );
    assert_eq!(book.head(), head, "nothing was written");
}

#[test]
fn a_run_that_fails_keeps_the_answers_it_accepted_for_the_next() {
    let upstream = Upstream::start();
    let (book, dir) = book_with_chapter();
    let file = common::write_file(dir.path(), "002.txt", "孙悟空又到花果山。\n");
    book.ok(&["source", "add", "--chapter", "2", &file]);
    let head = book.head();
    let url = upstream.url();
    let args = ["--json", "extract", "--chapter", "1-2", "--model", "names-first", "--model-url", url.as_str()];
    let output = book.run(&args);
    assert_eq!(output.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("chapter 2 part 1: the answer of names-first is refused"), "{message}");
    assert!(message.contains("the 1 answer(s) accepted before it are kept"), "{message}");
    assert_eq!(book.head(), head, "no candidate is written");
    // Chapter 1's answer is in the store: asked again without the model, it replays.
    let again = answer(&extract(&book, None, "names-first", &[]));
    assert_eq!(again["parts"][0]["stored"], true);
    assert_eq!(outcome(&again, "孙悟空"), "proposed");
    assert_eq!(upstream.requests().len(), 2);
}

#[test]
fn bad_arguments_exit_2_and_write_nothing() {
    let (book, _dir) = book_with_chapter();
    let head = book.head();
    for (args, says) in [
        (vec!["extract", "--chapter", "2", "--model", "m"], "chapter 2 has no source text"),
        (vec!["extract", "--chapter", "3-1", "--model", "m"], "the range ends before it starts"),
        (vec!["extract", "--chapter", "1-2", "--model", "m", "--text", "-"], "a text is one chapter's"),
        (vec!["extract", "--chapter", "1", "--model", "m", "--model-url", "ftp://h/v1"], "--model-url \"ftp://h/v1\""),
        (vec!["--server", "http://127.0.0.1:9", "extract", "--chapter", "1", "--model", "m"], "without --server"),
    ] {
        let stderr = book.fails(&args, 2);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert_eq!(book.head(), head);
}

#[test]
fn the_books_own_prompt_is_asked_with_and_named_in_what_it_proposes() {
    let upstream = Upstream::start();
    let (book, dir) = book_with_chapter();
    let first = answer(&extract(&book, Some(&upstream), "names", &["--dry-run"]));
    assert_eq!(first["prompt"], "v1");
    let prompt = r#"{"model_prompt_set":{"job":"extract","text":"Names of this {language} chapter, as JSON."}}"#;
    let events = common::write_file(dir.path(), "prompt.jsonl", &format!("{prompt}\n"));
    book.ok(&["apply", &events]);
    let seq = book.head();
    // Set again, it appends nothing; the log names the job.
    book.ok(&["apply", &events]);
    assert_eq!(book.head(), seq);
    let own = answer(&extract(&book, Some(&upstream), "names", &[]));
    assert_eq!(own["prompt"], format!("book@{seq}"));
    assert_eq!(own["parts"][0]["stored"], false, "another prompt is another request");
    let request = &upstream.requests()[1]["body"];
    assert_eq!(request["messages"][0]["content"], "Names of this Chinese chapter, as JSON.");
    let log = book.log();
    let evidence = log.last().unwrap()["body"]["candidate_proposed"]["evidence"].as_str().unwrap().to_owned();
    assert!(evidence.contains(&format!("llm names prompt book@{seq}: ")), "{evidence}");
    // Cleared, the built-in prompt is back, and its answers are asked for anew.
    let clear =
        common::write_file(dir.path(), "clear.jsonl", "{\"model_prompt_set\":{\"job\":\"extract\",\"text\":null}}\n");
    book.ok(&["apply", &clear]);
    let back = answer(&extract(&book, Some(&upstream), "names", &["--dry-run"]));
    assert_eq!(back["prompt"], "v1");
    // A job that does not exist is refused, naming the field.
    let bad = common::write_file(dir.path(), "bad.jsonl", "{\"model_prompt_set\":{\"job\":\"translate\"}}\n");
    let stderr = book.fails(&["apply", &bad], 2);
    assert!(stderr.contains("model_prompt_set.job"), "{stderr}");
}
