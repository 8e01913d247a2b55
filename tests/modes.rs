//! Every command in both modes: one table of CLI invocations covering every
//! subcommand (checked against `lorebank --help` and each family's `--help`, so a
//! subcommand the table does not list fails the test), each run with `--json` on a
//! fresh copy of one prepared book file, and with `--server URL --json` on a fresh
//! copy of the same file in the library of a running `lorebank serve`. The exit codes,
//! the JSON answers (stdout, and the JSON error object on stderr) and, after a write,
//! the events it appended (`log --json` from the prepared head on) must be equal.
//!
//! What is normalised, and why: `recorded_at_ms` (the wall clock of each run) and
//! the chain hashes `hash` and `prev`, which cover it; nothing else. Both runs name
//! the book alike (`cN.lorebank` in the working directory, book `cN` of the
//! library, whose file is `cN.lorebank` there), read their files from the same
//! relative paths and write `-o` files to the same relative path, and both are made
//! by the same user (`USER`), so paths, names and actors need no normalising.
//!
//! The commands that work on a book file (`backup`, `restore`, `export-archive`,
//! `import-archive`), `extract`, `adjudicate` and `eval` (which ask the model from
//! where they run) and `serve` and `openapi` must refuse `--server` (exit 2).

#[path = "common/serve.rs"]
mod serve;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/embed/testdata/tiny.onnx");
const TOKENIZER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/embed/testdata/tiny-tokenizer.json");

/// Terms of characters the tiny model knows, one with every field a put can drop,
/// a summary and an alias.
const PREPARED: &str = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь","kind":"character","gender":"m","note":"главный герой","decl":["Сяо Яня"]}}
{"term_put":{"id":"T-2","src":"药老","dst":"Яо Лао","kind":"character"}}
{"term_put":{"id":"T-3","src":"林动","dst":"Линь Дун","kind":"character"}}
{"term_put":{"id":"T-4","src":"炎萧","dst":"Сяо Янь","kind":"character"}}
{"alias_added":{"id":"T-3","surface":"林哥","kind":"nickname"}}
{"summary_put":{"id":"S-1","scope":"book","text":"Секта и её враги."}}
"#;

/// 林月 (near 林动) and 药心 (near 药老), quoted, so the name alarm finds them.
const CHUNK: &str = "萧炎看着天空。“林月，你好。”萧炎说：“药心”。林月和林月和林月。";

/// The input files every case finds in its working directory.
const FILES: &[(&str, &str)] = &[
    ("chunk.txt", CHUNK),
    (
        "more.jsonl",
        "{\"term_put\":{\"id\":\"T-1\",\"src\":\"萧炎\",\"dst\":\"Сяо Янь\"}}\n{\"term_put\":{\"id\":\"T-9\",\"src\":\"古河\",\"dst\":\"Гу Хэ\"}}\n",
    ),
    ("glossary.txt", "纳兰嫣然\tНалань Яньжань\n古河\tГу Хэ\t丹师\n"),
    ("languages.jsonl", "{\"languages_set\":{\"source\":\"zh-Hant\",\"target\":\"en\"}}\n"),
    // A second 药老 without a sense: the head refuses it (UNIQUE).
    ("clash.jsonl", "{\"term_put\":{\"id\":\"T-8\",\"src\":\"药老\",\"dst\":\"Яо Лао\"}}\n"),
    ("cast.txt", "萧战\tcharacter\n萧薰儿\tcharacter\n"),
    ("translation.txt", "Сяо Янь смотрел на небо."),
    // Source text: a folder of chapters numbered by name (one with a byte order mark
    // and CRLF), and one with two files of chapter 1.
    ("chapters/001.txt", "\u{feff}萧炎看着天空。\r\n“林月，你好。”\r\n"),
    ("chapters/第2章.txt", "药老笑道：“药心。”\n"),
    ("two/ch1.txt", "萧炎。\n"),
    ("two/ch01-again.txt", "药老。\n"),
];

/// How a case runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// On a copy of the prepared book, in both modes.
    Both,
    /// Creates a new book (`init`), in both modes.
    Create,
    /// Refuses `--server` (exit 2); runs locally only.
    LocalOnly,
}

/// The table: each command line (`{receipt}` and `{snapshot}` stand for the
/// prepared book's receipt and snapshot ID), how it runs, and the exit code both
/// modes must give (with `--server`, for a command that refuses it).
const CASES: &[(&str, Mode, i32)] = &[
    ("init --profile plain", Mode::Create, 0),
    ("init --profile plain --source-lang en --target-lang es", Mode::Create, 0),
    ("apply more.jsonl", Mode::Both, 0),
    ("apply languages.jsonl", Mode::Both, 0),
    ("apply more.jsonl --replace", Mode::Both, 0),
    ("import glossary.txt --format galtransl", Mode::Both, 0),
    ("import glossary.txt --format galtransl --dry-run", Mode::Both, 0),
    ("import glossary.txt --format galtransl --source-lang zh-Hant --target-lang en", Mode::Both, 0),
    ("import glossary.txt --format galtransl --target-lang RU", Mode::Both, 2),
    ("export --format tbx -o out.tbx", Mode::Both, 0),
    ("export --format tbx --target-lang es-419 -o out.tbx", Mode::Both, 0),
    ("export --format tbx --target-lang es_419 -o out.tbx", Mode::Both, 2),
    ("export --format galtransl -o out.txt", Mode::Both, 0),
    ("export --format profile -o out.txt", Mode::Both, 0),
    ("export --format profile --chapter 1 -o out.txt", Mode::Both, 2),
    ("export --format galtransl", Mode::Both, 2),
    ("export --format tmx -o out.tmx", Mode::Both, 0),
    ("export --format tmx --chapter 1 --target-lang ru -o out.tmx", Mode::Both, 0),
    ("export --format tmx --as-of 2 -o out.tmx", Mode::Both, 2),
    ("check --receipt {receipt} --translation translation.txt", Mode::Both, 0),
    ("check --receipt {receipt} --translation translation.txt --propose", Mode::Both, 0),
    ("review list", Mode::Both, 0),
    ("review show C-1", Mode::Both, 0),
    ("review accept C-1 --dst Линь Юэ --gender f", Mode::Both, 0),
    ("review accept C-1 --dst Линь Юэ --expect-head 1", Mode::Both, 5),
    ("review reject C-1", Mode::Both, 0),
    ("review reject C-1 --actor human:anna --source ticket-9 --note нет", Mode::Both, 0),
    ("review verify T-1 --reason check_it", Mode::Both, 0),
    ("scan --chapter 1 --chunk 2 --text chunk.txt", Mode::Both, 0),
    ("scan --chapter 1 --chunk 2 --text chunk.txt --dry-run", Mode::Both, 0),
    ("scan --chapter 1", Mode::Both, 0),
    ("scan --chapter 1 --chunk whole --dry-run", Mode::Both, 0),
    ("scan --chapter 9", Mode::Both, 2),
    ("scan --chapter 1 --text chunk.txt", Mode::Both, 2),
    ("scan --chapter 1 --chunk 2 --text chunk.txt --source ticket-7 --actor human:anna", Mode::Both, 0),
    ("term put --id T-1 --src 萧炎 --dst Сяо Янь", Mode::Both, 0),
    ("term put --id T-1 --src 萧炎 --dst Сяо Янь --replace", Mode::Both, 0),
    ("term put --id T-10 --src 萧薰儿 --dst Сяо Сюнь-эр --alias 薰儿 --source ch1", Mode::Both, 0),
    ("term put --id T-11 --src 古元 --dst Гу Юань --expect-head 1", Mode::Both, 5),
    ("term edit T-1 --note новая --clear-gender", Mode::Both, 0),
    ("term edit T-2 --secondary-logic and-all", Mode::Both, 2),
    ("term edit T-1", Mode::Both, 2),
    ("term show T-1", Mode::Both, 0),
    ("term show X-1", Mode::Both, 2),
    // A revision after the head is out of range for every read, on the file too.
    ("term show T-1 --as-of 999", Mode::Both, 2),
    ("term retire T-2 --reason dup", Mode::Both, 0),
    ("alias add T-1 萧哥 --kind nickname --since 2", Mode::Both, 0),
    ("alias remove T-3 林哥", Mode::Both, 0),
    ("summary put --id S-2 --scope chapter:1 --text Первая глава.", Mode::Both, 0),
    ("summary retire S-1", Mode::Both, 0),
    ("log", Mode::Both, 0),
    ("log --from 2 --to 3", Mode::Both, 0),
    ("log --from 3 --to 2", Mode::Both, 2),
    ("log --from 99", Mode::Both, 2),
    ("verify", Mode::Both, 0),
    ("show", Mode::Both, 0),
    ("show --chapter 1 --as-of 5", Mode::Both, 0),
    ("snapshot --as-of 3", Mode::Both, 0),
    ("diff 2 6", Mode::Both, 0),
    ("rollback --to 5 --reason back", Mode::Both, 0),
    ("rebuild", Mode::Both, 0),
    ("assemble --chapter 1 --chunk 2 --text chunk.txt", Mode::Both, 0),
    ("assemble --chapter 1 --chunk 2 --text chunk.txt --dry-run", Mode::Both, 0),
    ("replay {receipt}", Mode::Both, 0),
    ("replay --snapshot {snapshot} --chapter 1 --text chunk.txt", Mode::Both, 0),
    ("audit --chapter 1", Mode::Both, 0),
    ("impact", Mode::Both, 0),
    ("impact --since 2 --term T-1", Mode::Both, 0),
    ("impact --since 0", Mode::Both, 2),
    ("impact --with more.jsonl", Mode::Both, 0),
    ("impact --with languages.jsonl --actor human:editor", Mode::Both, 0),
    ("impact --with clash.jsonl", Mode::Both, 2),
    ("names lint", Mode::Both, 0),
    ("expect import cast.txt", Mode::Both, 0),
    ("expect import cast.txt --dry-run", Mode::Both, 0),
    ("expect import cast.txt --source list-2 --expect-head 12", Mode::Both, 0),
    ("source add chunk.txt --chapter 1 --title 第一章", Mode::Both, 0),
    ("source add translation.txt --chapter 3 --title Три --source ticket-3 --actor human:anna", Mode::Both, 0),
    ("source add translation.txt --chapter 3 --expect-head 1", Mode::Both, 5),
    ("source add missing.txt --chapter 3", Mode::Both, 2),
    ("source import chapters", Mode::Both, 0),
    ("source import two", Mode::Both, 2),
    ("source list", Mode::Both, 0),
    ("source show 1", Mode::Both, 0),
    ("source show 9", Mode::Both, 2),
    ("expect add 萧战 --kind character --note каст", Mode::Both, 0),
    ("expect drop 药尘", Mode::Both, 0),
    ("coverage", Mode::Both, 0),
    ("coverage --chapter 1", Mode::Both, 0),
    ("profile check", Mode::Both, 0),
    ("profile check --require 3", Mode::Both, 2),
    ("embed set-model --name lorebank-tiny-char-mean-32 --output last_hidden_state", Mode::Both, 0),
    ("embed refresh", Mode::Both, 0),
    ("embed refresh --all", Mode::Both, 0),
    ("embed status", Mode::Both, 0),
    ("suggest --chapter 1 --text chunk.txt --chunk 1 --min-score 0.56", Mode::Both, 0),
    ("suggest --chapter 1 --text chunk.txt --min-score 0.56 --source ticket-8", Mode::Both, 0),
    ("suggest --chapter 1 --text chunk.txt --min-score 0.56 --expect-head 1", Mode::Both, 5),
    ("suggest --chapter 1 --text chunk.txt --min-score 0.56 --phrases --dry-run", Mode::Both, 0),
    ("dedupe", Mode::Both, 0),
    ("dedupe --expect-head 1", Mode::Both, 5),
    ("dedupe --dry-run --min-score 0.5", Mode::Both, 0),
    ("serve --dir .", Mode::LocalOnly, 2),
    ("openapi", Mode::LocalOnly, 2),
    ("backup copy.lorebank", Mode::LocalOnly, 2),
    ("restore copy.lorebank", Mode::LocalOnly, 2),
    ("export-archive copy.archive", Mode::LocalOnly, 2),
    ("import-archive copy.archive", Mode::LocalOnly, 2),
    ("extract --chapter 1 --model stand-in", Mode::LocalOnly, 2),
    ("eval --chapters 1 --model stand-in", Mode::LocalOnly, 2),
    ("adjudicate --model stand-in", Mode::LocalOnly, 2),
    ("scan --chapters 1", Mode::LocalOnly, 2),
    ("exchange 00", Mode::LocalOnly, 2),
];

/// The subcommands `lorebank --help` lists, and those of each family (`term put`).
fn subcommands() -> BTreeSet<String> {
    let listed = |args: &[&str]| -> Vec<String> {
        let output = Command::new(serve::BIN).args(args).arg("--help").output().unwrap();
        let help = String::from_utf8(output.stdout).unwrap();
        let commands = help.split("Commands:\n").nth(1).unwrap_or("");
        commands
            .lines()
            .take_while(|line| !line.trim().is_empty())
            .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
            .filter_map(|line| line.split_whitespace().next())
            .filter(|name| *name != "help")
            .map(str::to_owned)
            .collect()
    };
    let mut all = BTreeSet::new();
    for command in listed(&[]) {
        let family = listed(&[&command]);
        if family.is_empty() {
            all.insert(command);
        } else {
            all.extend(family.into_iter().map(|sub| format!("{command} {sub}")));
        }
    }
    all
}

/// The subcommand a case runs: its first word, or its first two for a family.
fn subcommand_of(case: &str, all: &BTreeSet<String>) -> String {
    let words: Vec<&str> = case.split_whitespace().collect();
    let two = words[..2.min(words.len())].join(" ");
    if all.contains(&two) {
        two
    } else {
        words[0].to_owned()
    }
}

/// Splits a case into arguments: words, with a `--dst`, `--text` or `--note` value
/// of Cyrillic words joined back into one argument.
fn arguments(case: &str, receipt: &str, snapshot: &str) -> Vec<String> {
    let case = case.replace("{receipt}", receipt).replace("{snapshot}", snapshot);
    let mut args: Vec<String> = Vec::new();
    for word in case.split_whitespace() {
        let joins = word.chars().next().is_some_and(|c| ('\u{400}'..='\u{4ff}').contains(&c))
            && args
                .last()
                .is_some_and(|last| last.chars().next().is_some_and(|c| ('\u{400}'..='\u{4ff}').contains(&c)));
        match args.last_mut() {
            Some(last) if joins => {
                last.push(' ');
                last.push_str(word);
            }
            _ => args.push(word.to_owned()),
        }
    }
    args
}

/// Runs the binary in `dir` with the same environment in both modes.
fn lorebank(dir: &Path, args: &[String]) -> Output {
    Command::new(serve::BIN)
        .current_dir(dir)
        .args(args)
        .env_remove("LOREBANK_BOOK")
        .env_remove("LOREBANK_SERVER")
        .env_remove("LOREBANK_ACTOR")
        .env_remove("LOREBANK_PARTY")
        .env_remove("LOREBANK_TOKEN")
        .env("USER", "tester")
        .env("LOREBANK_EMBED_MODEL", MODEL)
        .env("LOREBANK_EMBED_TOKENIZER", TOKENIZER)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// What a run answered: its exit code, its JSON lines on stdout and its JSON error
/// object on stderr, normalised.
#[derive(Debug, PartialEq)]
struct Answer {
    code: Option<i32>,
    stdout: Vec<Value>,
    stderr: Vec<Value>,
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.to_owned())))
        .map(normalised)
        .collect()
}

/// `value` without the fields that must differ between two runs: the wall clock and
/// the chain hashes that cover it.
fn normalised(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            for field in ["recorded_at_ms", "hash", "prev"] {
                if map.contains_key(field) {
                    map.insert(field.to_owned(), Value::String("…".to_owned()));
                }
            }
            for member in map.values_mut() {
                *member = normalised(member.take());
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                *item = normalised(item.take());
            }
        }
        _ => {}
    }
    value
}

fn answer(output: &Output) -> Answer {
    Answer { code: output.status.code(), stdout: json_lines(&output.stdout), stderr: json_lines(&output.stderr) }
}

/// The prepared book: its file, head, one receipt (checked) and the snapshot it was made at.
struct Prepared {
    file: PathBuf,
    head: u64,
    receipt: String,
    snapshot: String,
}

/// Writes `text` to `dir`/`name`, making the folders of `name`.
fn write_file(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn prepare(dir: &Path) -> Prepared {
    for (name, text) in FILES {
        write_file(dir, name, text);
    }
    std::fs::write(dir.join("prepared.jsonl"), PREPARED).unwrap();
    let run = |args: &str| {
        let args: Vec<String> = ["--book", "prepared.lorebank", "--json"]
            .iter()
            .map(|arg| arg.to_string())
            .chain(arguments(args, "", ""))
            .collect();
        let output = lorebank(dir, &args);
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap_or(Value::Null)
    };
    run("init");
    run("apply prepared.jsonl");
    run("embed set-model --name lorebank-tiny-char-mean-32 --output last_hidden_state");
    run("embed refresh");
    let assembled = run("assemble --chapter 1 --chunk 1 --text chunk.txt");
    // A checked translation, which the translation memory exports.
    run(&format!("check --receipt {} --translation translation.txt", assembled["receipt"].as_str().unwrap()));
    run("scan --chapter 1 --chunk 1 --text chunk.txt");
    run("expect add 药尘");
    run("source add chunk.txt --chapter 1 --title 第一章");
    let head = run("verify")["head"].as_u64().unwrap();
    Prepared {
        file: dir.join("prepared.lorebank"),
        head,
        receipt: assembled["receipt"].as_str().unwrap().to_owned(),
        snapshot: assembled["snapshot"].as_str().unwrap().to_owned(),
    }
}

#[test]
fn every_command_answers_alike_on_the_file_and_through_the_server() {
    let root = tempfile::tempdir().unwrap();
    let prepared = prepare(root.path());
    let library = root.path().join("library");
    std::fs::create_dir(&library).unwrap();
    let server = serve::Server::start(&library, &["--embed-model", MODEL, "--embed-tokenizer", TOKENIZER]);
    let url = format!("http://{}", server.addr);

    // The table lists every subcommand, and only those.
    let all = subcommands();
    assert!(all.contains("term put") && all.contains("embed set-model") && all.contains("verify"), "{all:?}");
    let covered: BTreeSet<String> = CASES.iter().map(|(case, _, _)| subcommand_of(case, &all)).collect();
    assert_eq!(covered, all, "the table covers exactly the subcommands of lorebank --help");

    let mut drifts = Vec::new();
    for (n, (case, mode, code)) in CASES.iter().enumerate() {
        let name = format!("c{n}");
        let dir = root.path().join(&name);
        std::fs::create_dir(&dir).unwrap();
        for (file, text) in FILES {
            write_file(&dir, file, text);
        }
        let args = arguments(case, &prepared.receipt, &prepared.snapshot);
        let book_file = format!("{name}.lorebank");
        let local_args = |book: &str| -> Vec<String> {
            ["--book", book, "--json"].iter().map(|a| a.to_string()).chain(args.clone()).collect()
        };
        let remote_args = |book: &str| -> Vec<String> {
            ["--server", &url, "--book", book, "--json"].iter().map(|a| a.to_string()).chain(args.clone()).collect()
        };
        match mode {
            Mode::LocalOnly => {
                let refused = lorebank(&dir, &remote_args(&name));
                assert_eq!(refused.status.code(), Some(*code), "{case} refuses --server");
                continue;
            }
            Mode::Create => {}
            Mode::Both => {
                std::fs::copy(&prepared.file, dir.join(&book_file)).unwrap();
                std::fs::copy(&prepared.file, library.join(&book_file)).unwrap();
            }
        }
        let local = answer(&lorebank(&dir, &local_args(&book_file)));
        let remote = answer(&lorebank(&dir, &remote_args(&name)));
        assert_eq!(local.code, Some(*code), "{case}: {local:?}");
        if local != remote {
            drifts.push(format!("{case}:\n  local  {local:?}\n  server {remote:?}"));
            continue;
        }
        // What a write appended, event by event.
        let from = if *mode == Mode::Create { 1 } else { prepared.head + 1 };
        let log = |args: Vec<String>| answer(&lorebank(&dir, &args));
        let tail = ["log", "--from", &from.to_string()].map(str::to_owned);
        let local_log =
            log(["--book", &book_file, "--json"].iter().map(|a| a.to_string()).chain(tail.clone()).collect());
        let remote_log =
            log(["--server", &url, "--book", &name, "--json"].iter().map(|a| a.to_string()).chain(tail).collect());
        if local_log != remote_log {
            drifts.push(format!("{case} appended:\n  local  {local_log:?}\n  server {remote_log:?}"));
        }
    }
    assert!(drifts.is_empty(), "{} command(s) answer differently:\n{}", drifts.len(), drifts.join("\n"));
}
