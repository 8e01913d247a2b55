//! A book's languages end to end: `init --profile plain --source-lang en
//! --target-lang es` and an English-to-Spanish TBX-Basic termbase imported into it,
//! `import --source-lang/--target-lang` for one file, the `languages_set` event through
//! `apply` JSON, `log`, `show`, `diff` and `rollback`; over HTTP, the create body's
//! fields, the book info and the import's query; and bad tags refused with the field
//! named, exit 2 over the CLI and 400 over HTTP, with nothing written.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::path::Path;

use common::write_file;
use serde_json::{json, Value};
use serve::{cli, cli_ok, Server};

const TERMBASE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/formats/tests/fixtures/tbx/basic-dca-en-es.tbx");

fn json_of(book: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&cli_ok(book, &[&["--json"], args].concat())).unwrap()
}

fn log(book: &Path) -> Vec<Value> {
    cli_ok(book, &["--json", "log"]).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Runs a command that must exit 2 with `--json`; its error object.
fn invalid(book: &Path, args: &[&str]) -> Value {
    let output = cli(book, &[&["--json"], args].concat());
    assert_eq!(output.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    let error: Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(error["error"]["kind"], "invalid", "{error}");
    error
}

#[test]
fn an_english_spanish_termbase_imports_into_a_plain_book_created_in_en_and_es() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("astronomy.lorebank");
    let init = json_of(&book, &["init", "--profile", "plain", "--source-lang", "en", "--target-lang", "es"]);
    assert_eq!((init["source_lang"].as_str(), init["target_lang"].as_str()), (Some("en"), Some("es")), "{init}");
    assert_eq!(init["head"], 2, "the config and the languages, in one batch: {init}");
    let report = json_of(&book, &["import", TERMBASE]);
    assert_eq!(report["counts"]["imported"], 3, "{report}");
    assert_eq!(report["counts"]["skipped"], 1, "{report}");
    assert_eq!(report["skipped"][0]["reason"], "no dst");
    let shown = json_of(&book, &["show"]);
    assert_eq!((shown["source_lang"].as_str(), shown["target_lang"].as_str()), (Some("en"), Some("es")));
    let dsts: Vec<&str> = shown["terms"].as_array().unwrap().iter().map(|term| term["dst"].as_str().unwrap()).collect();
    assert_eq!(dsts, ["planeta", "cinturón de asteroides", "enana roja"]);
    assert!(cli_ok(&book, &["show"]).contains("languages: source en, target es\n"));
    // The export names them; `--target-lang` still names another for one file.
    let export = cli_ok(&book, &["export", "--format", "tbx"]);
    assert!(export.contains("xml:lang=\"en\"") && export.contains("<langSec xml:lang=\"es\">"), "{export}");
    let export = cli_ok(&book, &["export", "--format", "tbx", "--target-lang", "es-419"]);
    assert!(export.contains("<langSec xml:lang=\"es-419\">"), "{export}");

    // A plain book that names no languages skips every concept, unless the import names them.
    let plain = dir.path().join("plain.lorebank");
    let init = json_of(&plain, &["init", "--profile", "plain"]);
    assert_eq!(
        (init["source_lang"].as_str(), init["target_lang"].as_str(), init["head"].as_u64()),
        (Some("und"), Some("ru"), Some(1))
    );
    let report = json_of(&plain, &["import", TERMBASE]);
    assert_eq!((report["counts"]["imported"].as_u64(), report["written"].as_bool()), (Some(0), Some(false)));
    assert_eq!(report["skipped"][0]["reason"], "no term in the source language und");
    let report = json_of(&plain, &["import", "--source-lang", "en", "--target-lang", "es", TERMBASE]);
    assert_eq!(report["counts"]["imported"], 3, "{report}");
    assert_eq!(json_of(&plain, &["show"])["source_lang"], "und");
}

#[test]
fn the_languages_event_goes_through_apply_log_diff_and_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("b.lorebank");
    cli_ok(&book, &["init", "--profile", "zh"]);
    let events =
        write_file(dir.path(), "languages.jsonl", "{\"languages_set\":{\"source\":\"zh-Hant\",\"target\":\"en\"}}\n");
    cli_ok(&book, &["apply", &events]);
    let last = log(&book).pop().unwrap();
    assert_eq!(last["body"], json!({"languages_set": {"source": "zh-Hant", "target": "en"}}));
    assert_eq!(last["source"], "languages.jsonl:1");
    let text = cli_ok(&book, &["log"]);
    assert!(text.contains("languages_set source zh-Hant, target en"), "{text}");
    let diff = json_of(&book, &["diff", "1", "2"]);
    assert_eq!(
        diff["config"],
        json!([{"field": "languages", "old": {"source": "zh", "target": "ru"}, "new": {"source": "zh-Hant", "target": "en"}}])
    );
    assert!(cli_ok(&book, &["diff", "1", "2"]).contains("~ languages: {\"source\":\"zh\",\"target\":\"ru\"} -> "));
    // The snapshot did not move, and a rollback to revision 1 brings the defaults back.
    let at_1 = json_of(&book, &["snapshot", "--as-of", "1"])["snapshot"].clone();
    assert_eq!(json_of(&book, &["snapshot"])["snapshot"], at_1);
    cli_ok(&book, &["rollback", "--to", "1"]);
    let shown = json_of(&book, &["show"]);
    assert_eq!((shown["source_lang"].as_str(), shown["target_lang"].as_str()), (Some("zh"), Some("ru")));
    let kinds: Vec<String> =
        log(&book)[2..].iter().map(|event| event["body"].as_object().unwrap().keys().next().unwrap().clone()).collect();
    assert_eq!(kinds, ["languages_set", "rollback_marker"]);
    assert_eq!(log(&book)[2]["body"], json!({"languages_set": {"source": null, "target": null}}));
}

#[test]
fn bad_tags_exit_2_naming_the_field_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("b.lorebank");
    let error = invalid(&book, &["init", "--profile", "plain", "--source-lang", "en_US"]);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("source_lang: \"en_US\" is not a BCP 47 language tag"), "{message}");
    let error = invalid(&book, &["init", "--target-lang", "ES"]);
    assert_eq!(
        error["error"]["message"],
        "target_lang: \"ES\" is not in the canonical case of BCP 47 tags: write \"es\""
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");

    cli_ok(&book, &["init", "--profile", "plain", "--source-lang", "en", "--target-lang", "es"]);
    let error = invalid(&book, &["import", "--source-lang", "english", "--target-lang", "es-", TERMBASE]);
    assert!(error["error"]["message"].as_str().unwrap().starts_with("target_lang: "), "{error}");
    let error = invalid(&book, &["import", "--source-lang", "EN", TERMBASE]);
    assert!(error["error"]["message"].as_str().unwrap().starts_with("source_lang: "), "{error}");
    invalid(&book, &["export", "--format", "tbx", "--target-lang", "es_ES"]);
    let events = write_file(dir.path(), "bad.jsonl", "{\"languages_set\":{\"source\":\"en-us\"}}\n");
    let error = invalid(&book, &["apply", &events]);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("languages_set.source") && message.contains("write \"en-US\""), "{message}");
    assert_eq!(log(&book).len(), 2);
}

#[test]
fn over_http_the_create_body_names_the_languages_the_book_info_shows_them_and_bad_tags_are_400() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    for (body, field) in [
        (json!({"profile": "plain", "source_lang": "en-"}), "source_lang"),
        (json!({"profile": "plain", "source_lang": "en", "target_lang": "Spanish"}), "target_lang"),
    ] {
        let problem = server.put("/v1/books/bad", &body).problem(400, "invalid");
        assert_eq!(problem["at"], field, "{problem}");
        assert!(problem["detail"].as_str().unwrap().starts_with(&format!("{field}: ")), "{problem}");
    }
    assert_eq!(server.get("/v1/books/bad").status, 404, "a refused create makes no book");

    let created = server.put("/v1/books/astro", &json!({"profile": "plain", "source_lang": "en", "target_lang": "es"}));
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(created.json()["source_lang"], "en");
    let info = server.info("astro");
    assert_eq!((info["source_lang"].as_str(), info["target_lang"].as_str()), (Some("en"), Some("es")), "{info}");
    let bytes = std::fs::read(TERMBASE).unwrap();
    let bad = server.send("POST", "/v1/books/astro/import?file=astro.tbx&target_lang=es_ES", &[], &bytes);
    assert_eq!(bad.problem(400, "invalid")["at"], "target_lang");
    assert_eq!(server.info("astro")["head"], 2);
    let report = server.send("POST", "/v1/books/astro/import?file=astro.tbx", &[], &bytes).ok();
    assert_eq!(report["counts"]["imported"], 3, "{report}");

    // A book created without them has the profile's, and an import may name them.
    server.put("/v1/books/plain", &json!({"profile": "plain"}));
    let info = server.info("plain");
    assert_eq!((info["source_lang"].as_str(), info["target_lang"].as_str()), (Some("und"), Some("ru")));
    let report =
        server.send("POST", "/v1/books/plain/import?file=astro.tbx&source_lang=en&target_lang=es", &[], &bytes).ok();
    assert_eq!(report["counts"]["imported"], 3, "{report}");
}
