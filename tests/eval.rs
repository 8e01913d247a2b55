//! `lorebank eval` against the stand-in translator (tests/common/upstream.py), which
//! follows the injected glossary with a planted probability and mis-genders with
//! another: the harness recovers both rates within a stated tolerance on three
//! chapters of 西游记 (tests/data/corpora/xiyouji-head.txt), the random arm scores
//! near zero, a report re-renders from the store without the model, requirements
//! set the exit code, and a failing model writes nothing but what it answered before.

mod common;
#[path = "common/serve.rs"]
mod serve;
#[path = "common/upstream.rs"]
mod upstream;

use common::Book;
use serde_json::Value;
use upstream::Upstream;

const SLICE: &str = include_str!("data/corpora/xiyouji-head.txt");
/// The planted rates.
const FOLLOW: f64 = 0.8;
const MISGENDER: f64 = 0.25;
/// How far a measured rate may be from the planted one: over the ~150 items of the
/// run, about three and a half standard deviations of a binomial rate near 0.8
/// (0.032 each).
const TOLERANCE: f64 = 0.11;
const MODEL: &str = "translator:follow=0.8:misgender=0.25:seed=7";

/// Terms of the slice, each said often; all but the mountain masculine.
const GLOSSARY: &[(&str, &str, Option<&str>)] = &[
    ("悟空", "Укун", Some("m")),
    ("猴王", "Царь обезьян", Some("m")),
    ("大圣", "Великий мудрец", Some("m")),
    ("玉帝", "Нефритовый император", Some("m")),
    ("花果山", "гора Цветов и плодов", None),
    ("龙王", "Царь драконов", Some("m")),
    ("菩萨", "бодхисаттва", Some("m")),
    ("祖师", "Патриарх", Some("m")),
    ("老君", "Лао-цзюнь", Some("m")),
    ("哪吒", "Нэчжа", Some("m")),
];

/// The book: the glossary, and the slice as three chapters of about equal lines.
fn book() -> (Book, tempfile::TempDir) {
    let book = Book::new();
    for (n, (src, dst, gender)) in GLOSSARY.iter().enumerate() {
        let id = format!("T-{}", n + 1);
        let mut args = vec!["term", "put", "--id", id.as_str(), "--src", src, "--dst", dst, "--kind", "character"];
        if let Some(gender) = gender {
            args.extend(["--gender", gender]);
        }
        book.ok(&args);
    }
    let dir = tempfile::tempdir().unwrap();
    book.add_source_in_chapters(dir.path(), SLICE, 3);
    (book, dir)
}

fn eval(book: &Book, upstream: Option<&Upstream>, more: &[&str]) -> std::process::Output {
    let url = upstream.map(Upstream::url);
    let mut args = vec!["--json", "eval", "--chapters", "1-3", "--model", MODEL];
    if let Some(url) = &url {
        args.extend(["--model-url", url.as_str()]);
    }
    args.extend(more);
    book.run(&args)
}

fn report(output: &std::process::Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn arm<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["arms"].as_array().unwrap().iter().find(|arm| arm["arm"] == name).unwrap()
}

#[test]
fn the_harness_recovers_the_planted_rates_and_rerenders_from_the_store() {
    let upstream = Upstream::start();
    let (book, dir) = book();
    let head = book.head();
    let out = dir.path().join("report");
    let first = report(&eval(&book, Some(&upstream), &["--out", out.to_str().unwrap()]));
    let glossary = arm(&first, "glossary");
    let items = glossary["total"]["rendered"].as_u64().unwrap()
        + glossary["total"]["missing"].as_u64().unwrap()
        + glossary["total"]["wrong"].as_u64().unwrap();
    assert!(items >= 150, "enough items for the tolerance: {items}");
    let adherence = glossary["metrics"]["adherence"].as_f64().unwrap();
    assert!((adherence - FOLLOW).abs() <= TOLERANCE, "glossary adherence {adherence}, planted {FOLLOW}");
    // The gender flags over the rendered items of a gendered term.
    let (mut gendered, mut flags) = (0, 0);
    for run in first["runs"].as_array().unwrap().iter().filter(|run| run["arm"] == "glossary") {
        gendered += run["verdicts"].as_array().unwrap().iter().filter(|v| v[1] == "rendered" && v[0] != "T-5").count();
        flags += run["gender_flags"].as_u64().unwrap();
    }
    let misgendered = flags as f64 / gendered as f64;
    assert!((misgendered - MISGENDER).abs() <= TOLERANCE, "mis-gendered {misgendered}, planted {MISGENDER}");
    // Without the glossary the stand-in renders nothing; with a random one, other names.
    for name in ["none", "random"] {
        let adherence = arm(&first, name)["metrics"]["adherence"].as_f64().unwrap();
        assert!(adherence <= 0.05, "{name} adherence {adherence}");
    }
    let random_runs: Vec<&Value> =
        first["runs"].as_array().unwrap().iter().filter(|run| run["arm"] == "random").collect();
    assert!(random_runs
        .iter()
        .all(|run| run["swapped"].as_u64().unwrap() > 0 || run["verdicts"].as_array().unwrap().is_empty()));
    // Every translation was asked once; the glossary arm's receipts are recorded.
    let asked = upstream.requests().len();
    assert_eq!(asked, first["runs"].as_array().unwrap().len());
    assert!(first["runs"].as_array().unwrap().iter().all(|run| run["stored"] == false));
    let receipt = first["runs"][0]["receipt"].as_str().unwrap();
    book.ok(&["replay", receipt]);
    assert_eq!(book.head(), head, "the evaluation appends no event");
    // The files: the Markdown table, the JSON, an SVG chart per metric.
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(markdown.contains("| glossary | all |"), "{markdown}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json, first);
    for metric in ["adherence", "missing", "wrong", "gender_flags", "omissions", "flags", "consistency", "tokens"] {
        let svg = std::fs::read_to_string(out.join(format!("{metric}.svg"))).unwrap();
        assert!(svg.starts_with("<svg ") && svg.contains("<rect") && svg.trim_end().ends_with("</svg>"), "{metric}");
    }

    // Again without the model: every answer from the store, the same numbers.
    let again = report(&eval(&book, None, &[]));
    assert_eq!(upstream.requests().len(), asked, "the model is not asked again");
    assert!(again["runs"].as_array().unwrap().iter().all(|run| run["stored"] == true));
    for name in ["none", "glossary", "random"] {
        assert_eq!(arm(&again, name)["total"], arm(&first, name)["total"], "{name}");
    }
    // Requirements stated before the run set the exit code, after the report.
    let met = eval(&book, None, &["--require", "glossary.adherence>=0.6", "--require", "random.adherence<=0.3"]);
    assert!(report(&met)["requirements"].as_array().unwrap().iter().all(|r| r["met"] == true));
    let unmet = eval(&book, None, &["--require", "glossary.adherence>=0.99"]);
    assert_eq!(unmet.status.code(), Some(2));
    let shown: Value = serde_json::from_slice(&unmet.stdout).unwrap();
    assert_eq!(shown["requirements"][0]["met"], false);
    assert!(String::from_utf8_lossy(&unmet.stderr).contains("requirement(s) not met: glossary.adherence>=0.99"));
    // --fresh asks again.
    let fresh = report(&eval(&book, Some(&upstream), &["--modes", "glossary", "--fresh"]));
    assert_eq!(upstream.requests().len(), asked + fresh["runs"].as_array().unwrap().len());
}

#[test]
fn a_failing_model_or_bad_arguments_write_no_event() {
    let upstream = Upstream::start();
    let (book, _dir) = book();
    let head = book.head();
    let output = book.run(&["eval", "--chapters", "1", "--model", "fail", "--model-url", &upstream.url()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("answered 500"), "{output:?}");
    // A model that never answers times out cleanly.
    let started = std::time::Instant::now();
    let output = book.run(&[
        "eval",
        "--chapters",
        "1",
        "--model",
        "hang",
        "--model-url",
        &upstream.url(),
        "--model-timeout",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(String::from_utf8_lossy(&output.stderr).contains("did not answer within 1.0 s"), "{output:?}");
    for (args, says) in [
        (vec!["eval", "--chapters", "4", "--model", MODEL], "chapter 4 has no source text"),
        (vec!["eval", "--chapters", "1", "--model", MODEL, "--modes", "all"], "invalid value 'all'"),
        (vec!["eval", "--chapters", "1", "--model", MODEL, "--require", "glossary.speed>=1"], "the metric is one of"),
        (vec!["eval", "--chapters", "1", "--model", MODEL], "no stored answer"),
    ] {
        let output = book.run(&args);
        assert_ne!(output.status.code(), Some(0), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains(says), "{args:?}: {output:?}");
    }
    assert_eq!(book.head(), head);
}
