//! The book's proxy template through the CLI: `proxy_template_set` written with
//! `apply`, shown by `log` and `diff`, in the snapshot (a template changes the ID and
//! clearing it brings the ID back), restored by `rollback`, and a bad template refused
//! naming `proxy_template_set.template`, exit 2, with nothing written.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::path::Path;

use common::write_file;
use serde_json::{json, Value};
use serve::{cli, cli_ok};

fn json_of(book: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&cli_ok(book, &[&["--json"], args].concat())).unwrap()
}

fn log(book: &Path) -> Vec<Value> {
    cli_ok(book, &["--json", "log"]).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn snapshot(book: &Path) -> Value {
    json_of(book, &["snapshot"])["snapshot"].clone()
}

#[test]
fn the_template_goes_through_apply_log_diff_snapshot_and_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("b.lorebank");
    cli_ok(&book, &["init", "--profile", "zh"]);
    let before = snapshot(&book);
    let set = write_file(
        dir.path(),
        "template.jsonl",
        "{\"proxy_template_set\":{\"template\":\"Глоссарий:\\n\\n{context}\"}}\n",
    );
    cli_ok(&book, &["apply", &set]);
    let last = log(&book).pop().unwrap();
    assert_eq!(last["body"], json!({"proxy_template_set": {"template": "Глоссарий:\n\n{context}"}}));
    assert!(cli_ok(&book, &["log"]).contains("proxy_template_set (21 chars, "));
    let with = snapshot(&book);
    assert_ne!(with, before, "the template is in the snapshot");
    // The same template again appends nothing.
    cli_ok(&book, &["apply", &set]);
    assert_eq!(log(&book).len(), 2);
    let diff = json_of(&book, &["diff", "1", "2"]);
    assert_eq!(diff["config"], json!([{"field": "proxy_template", "old": null, "new": "Глоссарий:\n\n{context}"}]));
    assert!(cli_ok(&book, &["diff", "1", "2"]).contains("~ proxy_template: None -> Some("));

    // A rollback to revision 1 clears it, and the ID of before is back.
    cli_ok(&book, &["rollback", "--to", "1"]);
    assert_eq!(log(&book)[2]["body"], json!({"proxy_template_set": {"template": null}}));
    assert_eq!(snapshot(&book), before);
    // Cleared by hand after setting it again: the same.
    cli_ok(&book, &["apply", &set]);
    assert_eq!(snapshot(&book), with);
    let clear = write_file(dir.path(), "clear.jsonl", "{\"proxy_template_set\":{}}\n");
    cli_ok(&book, &["apply", &clear]);
    assert_eq!(snapshot(&book), before);
}

#[test]
fn a_bad_template_exits_2_naming_the_field_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("b.lorebank");
    cli_ok(&book, &["init", "--profile", "zh"]);
    for line in [
        "{\"proxy_template_set\":{\"template\":\"no place for the context\"}}",
        "{\"proxy_template_set\":{\"template\":\"{context} {context}\"}}",
        "{\"proxy_template_set\":{\"template\":\"\\u0007{context}\"}}",
    ] {
        let events = write_file(dir.path(), "bad.jsonl", &format!("{line}\n"));
        let output = cli(&book, &["--json", "apply", &events]);
        assert_eq!(output.status.code(), Some(2), "{line}: {}", String::from_utf8_lossy(&output.stderr));
        let error: Value = serde_json::from_slice(&output.stderr).unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("proxy_template_set.template"), "{message}");
    }
    assert_eq!(log(&book).len(), 1);
}
