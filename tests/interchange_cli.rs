//! `lorebank import` and `lorebank export` end to end: the report, the exit codes,
//! provenance in the log, nothing written on refusal, exports to a file or stdout,
//! and the same over HTTP and with `--server`.

mod common;
#[path = "common/serve.rs"]
mod serve;

use common::{write_file, Book};
use serde_json::Value;

const GLOSSARY: &str = "萧炎\tСяо Янь\t主角\n药老\tЯо Лао\n纳兰嫣然->Налань Яньжань #未婚妻\n";

#[test]
fn import_reports_and_every_event_names_its_line() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), "项目GPT字典.txt", GLOSSARY);
    let out = book.ok(&["import", &file]);
    assert!(
        out.contains("项目GPT字典.txt (galtransl, detected) as import:galtransl: 3 imported, 0 updated, 0 unchanged"),
        "{out}"
    );
    assert!(out.contains("  new       T-2 药老 (line 2)\n"), "{out}");
    let log = book.log();
    let sources: Vec<(&str, &str)> =
        log[1..].iter().map(|event| (event["actor"].as_str().unwrap(), event["source"].as_str().unwrap())).collect();
    assert_eq!(
        sources,
        [
            ("import:galtransl", "项目GPT字典.txt:1"),
            ("import:galtransl", "项目GPT字典.txt:2"),
            ("import:galtransl", "项目GPT字典.txt:3")
        ]
    );
    // Again: nothing appended.
    let again = book.json(&["import", &file]);
    assert_eq!(again["written"], false);
    assert_eq!(again["counts"]["unchanged"], 3);
    assert_eq!(book.head(), 4);
}

#[test]
fn a_refused_import_exits_2_and_writes_nothing() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let lossy = write_file(dir.path(), "g.txt", "萧炎\tСяо Янь\t\t第四列\n药老\t\n");
    let error = book.fails(&["import", "--strict", &lossy], 2);
    assert!(
        error.contains("a strict import refuses any loss: 1 entry skipped (first: g.txt line 2: no dst)"),
        "{error}"
    );
    let bad = write_file(dir.path(), "d.json", "[{\"src\": \"萧炎\", \"dst\": [1]}]");
    let error = book.fails(&["import", &bad], 2);
    assert!(error.contains("d.json: entry 1: field dst: must be a string"), "{error}");
    let error = book.fails(&["import", "--format", "nosuch", &bad], 2);
    assert!(error.contains("unknown format \"nosuch\""), "{error}");
    let error = book.fails(&["import", &dir.path().join("missing.txt").display().to_string()], 2);
    assert!(error.contains("cannot read"), "{error}");
    assert_eq!(book.head(), 1);
    // --dry-run reports and writes nothing.
    let report = book.json(&["import", "--dry-run", &lossy]);
    assert_eq!((report["dry_run"].clone(), report["written"].clone()), (Value::Bool(true), Value::Bool(false)));
    assert_eq!(report["counts"]["lost"], 1);
    assert_eq!(report["lost"][0]["field"], "column 4");
    assert_eq!(report["skipped"][0]["reason"], "no dst");
    assert_eq!(book.head(), 1);
}

#[test]
fn entries_that_share_keys_import_and_each_shared_key_is_reported_with_both_places() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let world = r#"{"entries": {
        "1": {"uid": 1, "key": ["敌人", "战斗", "遭遇"], "comment": "敌人索引"},
        "2": {"uid": 2, "key": ["战斗系统", "遭遇"], "comment": "Система боя"},
        "6": {"uid": 6, "key": ["敌人", "战斗", "遭遇"], "comment": "<敌人>"}}}"#;
    let file = write_file(dir.path(), "world.json", world);
    let strict = book.fails(&["import", "--strict", &file], 2);
    assert!(
        strict.contains(
            "a strict import refuses any loss: 2 keys shared (first: world.json uid 2: 遭遇 (alias) is the alias of uid \
             1: left out of this entry); nothing written"
        ),
        "{strict}"
    );
    assert_eq!(book.head(), 1);
    let out = book.ok(&["import", &file]);
    assert!(out.contains("3 imported, 0 updated, 0 unchanged, 0 skipped, 2 shared key(s), 0 field(s) lost"), "{out}");
    assert!(
        out.contains(
            "  shared    uid 6: 敌人 (src) is the src of uid 1: a record of its own with the sense \"<敌人>\"\n"
        ),
        "{out}"
    );
    let again = book.json(&["import", &file]);
    assert_eq!((again["written"].clone(), again["counts"]["collisions"].clone()), (Value::Bool(false), Value::from(2)));
    assert_eq!(
        again["collisions"],
        serde_json::json!([
            {"key": "遭遇", "at": "uid 2", "as": "alias", "with": "uid 1", "with_as": "alias", "outcome": "dropped"},
            {"key": "敌人", "at": "uid 6", "as": "src", "with": "uid 1", "with_as": "src", "outcome": "sense",
             "sense": "<敌人>"}
        ])
    );
    let terms = book.json(&["show"]);
    let senses: Vec<Value> = terms["terms"].as_array().unwrap().iter().map(|term| term["sense"].clone()).collect();
    assert_eq!(senses, [Value::Null, Value::Null, Value::from("<敌人>")]);
}

#[test]
fn import_from_stdin_needs_a_format() {
    let book = Book::new();
    let output = book.run_with_stdin(&["import", "-"], Some(GLOSSARY));
    assert_eq!(output.status.code(), Some(2));
    let output = book.run_with_stdin(&["import", "--format", "galtransl", "-"], Some(GLOSSARY));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(book.log()[1]["source"], "stdin:1");
}

#[test]
fn export_writes_a_file_or_stdout_and_reports_what_it_cannot_hold() {
    let book = Book::new();
    book.ok(&["term", "put", "--id", "T-1", "--src", "萧炎", "--dst", "Сяо Янь", "--gender", "m", "--note", "主角"]);
    book.ok(&["term", "put", "--id", "T-2", "--src", "魂天帝", "--dst", "Хунь Тяньди", "--since", "41"]);
    let output = book.run(&["export", "--format", "sakura-text", "--chapter", "40"]);
    assert!(output.status.success());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "萧炎->Сяо Янь #主角\n");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("exported 1 term(s) and 0 summary(ies) as sakura-text for chapter 40"), "{stderr}");
    assert!(stderr.contains("lost      gender ×1 (T-1): sakura-text cannot hold it"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpt_dict.json");
    let report = book.json(&["export", "--format", "sakura", "-o", file.to_str().unwrap()]);
    assert_eq!(report["n_terms"], 2);
    assert_eq!(report["lost"][0]["field"], "gender");
    let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(written[1]["src"], "魂天帝");
    // Nothing but the file is left in its directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let error = book.fails(&["export", "--format", "sakura", "--json"], 2);
    assert!(error.contains("needs -o FILE"), "{error}");
}

#[test]
fn import_and_export_over_http_and_with_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve::Server::start(dir.path(), &[]);
    server.create("wuchuan");
    let reply = server.send(
        "POST",
        "/v1/books/wuchuan/import?file=g.txt",
        &[("Content-Type", "application/octet-stream")],
        GLOSSARY.as_bytes(),
    );
    let report = reply.ok();
    assert_eq!((report["format"].as_str(), report["counts"]["imported"].as_u64()), (Some("galtransl"), Some(3)));
    assert_eq!(server.log("wuchuan")[2]["source"], "g.txt:2");
    let bad = server.send("POST", "/v1/books/wuchuan/import?format=sakura", &[], b"{\"src\":1}");
    let problem = bad.problem(400, "invalid");
    assert!(problem["detail"].as_str().unwrap().contains("a Sakura gpt_dict is a JSON list"), "{problem}");
    server.send("POST", "/v1/books/wuchuan/import?format=nosuch", &[], b"").problem(400, "invalid");
    let head = server.info("wuchuan")["head"].as_u64().unwrap();
    let stale = format!("/v1/books/wuchuan/import?file=g.txt&expected_head={}", head - 1);
    server.send("POST", &stale, &[], "孤岛\tОстров\n".as_bytes()).problem(409, "conflict");

    let export = server.get("/v1/books/wuchuan/export?format=sakura-text&chapter=1");
    assert_eq!(export.status, 200, "{}", export.text());
    assert_eq!(export.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(export.text(), "萧炎->Сяо Янь #主角\n药老->Яо Лао\n纳兰嫣然->Налань Яньжань #未婚妻\n");
    assert_eq!(export.header("lorebank-revision"), Some(head.to_string().as_str()));
    server.get("/v1/books/wuchuan/export").problem(400, "invalid");
    server.get("/v1/books/nobook/export?format=tbx").problem(404, "not-found");

    // The CLI with --server: the same import (nothing new) and export.
    let url = format!("http://{}", server.addr);
    let file = write_file(dir.path(), "g.txt", GLOSSARY);
    let output = std::process::Command::new(serve::BIN)
        .args(["--server", &url, "--book", "wuchuan", "import", &file])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["counts"]["unchanged"], 3);
    let output = std::process::Command::new(serve::BIN)
        .args(["--server", &url, "--book", "wuchuan", "export", "--format", "galtransl"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "萧炎\tСяо Янь\t主角\n药老\tЯо Лао\n纳兰嫣然\tНалань Яньжань\t未婚妻\n"
    );
}

#[test]
fn tbx_2008_and_omegat_exports_are_the_same_from_the_cli_and_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve::Server::start(dir.path(), &[]);
    server.create("wuchuan");
    server.send("POST", "/v1/books/wuchuan/import?file=g.txt", &[], GLOSSARY.as_bytes()).ok();
    let url = format!("http://{}", server.addr);
    for (format, media_type, file_name, starts) in [
        (
            "tbx-2008",
            "application/x-tbx+xml",
            "glossary.tbx",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<martif type=\"TBX-Basic\" xml:lang=\"zh\">\n",
        ),
        ("omegat", "text/plain; charset=utf-8", "glossary.utf8", "萧炎\tСяо Янь\t主角\n"),
    ] {
        let export = server.get(&format!("/v1/books/wuchuan/export?format={format}"));
        assert_eq!(export.status, 200, "{}", export.text());
        assert_eq!(export.header("content-type"), Some(media_type), "{format}");
        let disposition = format!("attachment; filename=\"{file_name}\"");
        assert_eq!(export.header("content-disposition"), Some(disposition.as_str()), "{format}");
        assert!(export.text().starts_with(starts), "{format}: {}", export.text());
        let output = std::process::Command::new(serve::BIN)
            .args(["--server", &url, "--book", "wuchuan", "export", "--format", format])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8(output.stdout).unwrap(), export.text(), "{format}");
        // Saved under the name the server gives it, it imports into a new book whole.
        let book = Book::new();
        let file = write_file(dir.path(), file_name, &export.text());
        let report = book.json(&["import", &file]);
        let expected = if format == "omegat" { "omegat" } else { "tbx" };
        assert_eq!((report["format"].as_str(), report["detected"].as_bool()), (Some(expected), Some(true)));
        assert_eq!((report["counts"]["imported"].as_u64(), report["counts"]["lost"].as_u64()), (Some(3), Some(0)));
    }
}

#[test]
fn a_translation_memory_on_the_cli_over_http_and_with_server() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("memory.lorebank");
    serve::cli_ok(&book, &["init"]);
    let glossary = write_file(dir.path(), "g.txt", GLOSSARY);
    serve::cli_ok(&book, &["import", &glossary]);
    let first = write_file(dir.path(), "1.txt", "萧炎来了。药老说：“走吧！”");
    let second = write_file(dir.path(), "2.txt", "纳兰嫣然笑了。");
    let translation = write_file(dir.path(), "1.ru.txt", "Сяо Янь пришёл. Яо Лао сказал: «Идём!»");
    let assembled: Value = serde_json::from_str(&serve::cli_ok(
        &book,
        &["--json", "assemble", "--chapter", "1", "--chunk", "1", "--text", &first],
    ))
    .unwrap();
    let receipt = assembled["receipt"].as_str().unwrap().to_owned();
    serve::cli_ok(&book, &["assemble", "--chapter", "1", "--chunk", "2", "--text", &second]);
    serve::cli_ok(&book, &["check", "--receipt", &receipt, "--translation", &translation]);

    // To stdout, with the report on stderr; to a file, with the report as JSON.
    let output = serve::cli(&book, &["export", "--format", "tmx"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let memory = output.stdout;
    let text = String::from_utf8(memory.clone()).unwrap();
    assert!(
        text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE tmx SYSTEM \"tmx14.dtd\">"),
        "{text}"
    );
    assert!(text.contains("<seg>Яо Лао сказал: «Идём!»</seg>") && text.contains("creationid=\"human:test\""), "{text}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("exported 1 chunk(s) of every chapter as 2 TMX unit(s) (1 chunk(s) by sentence), zh to ru"),
        "{stderr}"
    );
    assert!(stderr.contains("unchecked chapter 1 chunk \"2\""), "{stderr}");
    let file = dir.path().join("out.tmx");
    let report: Value = serde_json::from_str(&serve::cli_ok(
        &book,
        &["--json", "export", "--format", "tmx", "-o", file.to_str().unwrap()],
    ))
    .unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), memory);
    assert_eq!((report["format"].as_str(), report["n_units"].as_u64()), (Some("tmx"), Some(2)));
    assert_eq!(report["unchecked"]["count"], 1);
    assert_eq!(report["unchecked"]["chunks"][0]["chunk"], "2");
    let error = String::from_utf8(serve::cli(&book, &["export", "--format", "tmx", "--as-of", "2"]).stderr).unwrap();
    assert!(error.contains("as_of: a translation memory"), "{error}");

    // Over HTTP: the same bytes, as application/x-tmx+xml.
    let server = serve::Server::start(dir.path(), &[]);
    let export = server.get("/v1/books/memory/export?format=tmx");
    assert_eq!(export.status, 200, "{}", export.text());
    assert_eq!(export.header("content-type"), Some("application/x-tmx+xml"));
    assert_eq!(export.header("content-disposition"), Some("attachment; filename=\"translations.tmx\""));
    assert_eq!(export.body, memory);
    let header: Value = serde_json::from_str(export.header("lorebank-export").unwrap()).unwrap();
    assert_eq!((header["n_chunks"].as_u64(), header["output"].is_null()), (Some(1), true));
    let problem = server.get("/v1/books/memory/export?format=tmx&as_of=2").problem(400, "invalid");
    assert_eq!(problem["at"], "as_of", "{problem}");
    let problem = server.get("/v1/books/memory/export?format=tmx&target_lang=r%22u").problem(400, "invalid");
    assert_eq!(problem["at"], "target_lang", "{problem}");
    let problem = server.get("/v1/books/memory/export?format=tmxx").problem(400, "invalid");
    assert!(problem["detail"].as_str().unwrap().contains("profile or tmx"), "{problem}");

    // The CLI with --server: the same file.
    let url = format!("http://{}", server.addr);
    let output = std::process::Command::new(serve::BIN)
        .args(["--server", &url, "--book", "memory", "export", "--format", "tmx"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.stdout, memory);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("exported 1 chunk(s) as 2 TMX unit(s)") && stderr.contains("unchecked 1"), "{stderr}");
}

#[test]
fn a_dry_run_import_lists_the_recorded_chunks_it_would_reopen() {
    let book = Book::new();
    let dir = tempfile::tempdir().unwrap();
    let first = write_file(dir.path(), "g.txt", "萧炎\tСяо Янь\n药老\tЯо Лао\n");
    book.ok(&["import", &first]);
    let chunk = write_file(dir.path(), "chunk.txt", "萧炎看着药老。\n");
    let other = write_file(dir.path(), "other.txt", "药老笑了。\n");
    book.ok(&["assemble", "--chapter", "1", "--chunk", "1", "--text", &chunk]);
    book.ok(&["assemble", "--chapter", "2", "--chunk", "1", "--text", &other]);
    let head = book.head();
    // A new rendering of 萧炎 re-opens the chunk that has him, not the one without.
    let renamed = write_file(dir.path(), "g2.txt", "萧炎\tСяо Ян\n药老\tЯо Лао\n");
    let report = book.json(&["import", "--dry-run", &renamed]);
    let reopened = report["reopened"].as_array().unwrap_or_else(|| panic!("{report}"));
    assert_eq!(reopened.len(), 1, "{report}");
    assert_eq!((&reopened[0]["chapter"], &reopened[0]["chunk"]), (&1.into(), &"1".into()), "{report}");
    assert_eq!(reopened[0]["removed"], serde_json::json!(["萧炎 -> Сяо Янь"]), "{report}");
    assert_eq!(reopened[0]["added"], serde_json::json!(["萧炎 -> Сяо Ян"]), "{report}");
    let text = book.ok(&["import", "--dry-run", &renamed]);
    assert!(text.contains("1 recorded chunk(s) would get a different context"), "{text}");
    assert!(text.contains("    + 萧炎 -> Сяо Ян\n"), "{text}");
    assert_eq!(book.head(), head, "a dry run writes nothing");
    // The import itself writes, and has no such list.
    let written = book.json(&["import", &renamed]);
    assert!(written.get("reopened").is_none(), "{written}");
    assert_eq!(written["written"], true);
}

#[test]
fn a_new_rendering_from_a_format_without_forms_clears_the_old_forms() {
    let book = Book::new();
    book.ok(&[
        "term",
        "put",
        "--id",
        "T-1",
        "--src",
        "雾川",
        "--dst",
        "Мглистая река",
        "--decl",
        "Мглистой реки,Мглистую реку",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let same = write_file(dir.path(), "same.txt", "雾川\tМглистая река\n");
    assert_eq!(book.json(&["import", &same])["written"], false, "the same rendering keeps its forms");
    let renamed = write_file(dir.path(), "renamed.txt", "雾川\tТуманная река\n");
    let report = book.json(&["import", &renamed]);
    assert_eq!(report["updated"][0]["fields"], serde_json::json!(["dst", "decl"]), "{report}");
    let shown = book.json(&["show"]);
    assert_eq!(shown["terms"][0]["dst"], "Туманная река", "{shown}");
    assert_eq!(shown["terms"][0]["decl"], serde_json::json!([]), "{shown}");
    // Again: nothing left to change.
    assert_eq!(book.json(&["import", &renamed])["written"], false);
}
