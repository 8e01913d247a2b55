//! A book in a temp dir and the `lorebank` binary run on it, shared by the
//! end-to-end tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub struct Book {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    actor: &'static str,
}

impl Book {
    /// A fresh book (`init`, zh profile) whose writes are made by `human:test`.
    pub fn new() -> Book {
        Book::with_actor("human:test")
    }

    /// A fresh book whose writes are made by `actor`.
    pub fn with_actor(actor: &'static str) -> Book {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.lorebank");
        let book = Book { _dir: dir, path, actor };
        book.ok(&["init"]);
        book
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_with_stdin(args, None)
    }

    pub fn run_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_lorebank"));
        command.arg("--book").arg(&self.path).args(args).env_remove("LOREBANK_BOOK").env("LOREBANK_ACTOR", self.actor);
        // The same name dictionary on every machine (tests/data/enamdict).
        command.env("LOREBANK_ENAMDICT", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/enamdict/enamdict-slice"));
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        if let Some(text) = stdin {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// Runs a command with one more environment variable set.
    pub fn run_with_env(&self, args: &[&str], name: &str, value: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(&self.path)
            .args(args)
            .env_remove("LOREBANK_BOOK")
            .env("LOREBANK_ACTOR", self.actor)
            .env(name, value)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Runs a command whose stdout is a pipe nobody reads (`| true`): the read end
    /// is closed right after the spawn, long before the command has opened the book.
    /// Its exit status and stderr.
    pub fn run_closed_stdout(&self, args: &[&str]) -> (Option<i32>, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .arg("--book")
            .arg(&self.path)
            .args(args)
            .env_remove("LOREBANK_BOOK")
            .env("LOREBANK_ACTOR", self.actor)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        (output.status.code(), String::from_utf8(output.stderr).unwrap())
    }

    /// Runs a command that must succeed; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs a command that must exit with `code`; its stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let output = self.run(args);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stderr).unwrap()
    }

    /// Runs a command with `--json`; its parsed stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(&[&["--json"], args].concat())).unwrap()
    }

    pub fn log(&self) -> Vec<Value> {
        self.ok(&["--json", "log"]).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    pub fn head(&self) -> u64 {
        self.json(&["verify"])["head"].as_u64().unwrap()
    }

    /// Ids of the terms `show` lists with `args`.
    pub fn ids(&self, args: &[&str]) -> Vec<String> {
        let shown = self.json(&[&["show"], args].concat());
        shown["terms"].as_array().unwrap().iter().map(|term| term["id"].as_str().unwrap().to_owned()).collect()
    }
}

impl Book {
    /// Registers `text` as the book's source text in `chapters` chapters of about
    /// equal numbers of lines (`source add`), their files written in `dir`.
    pub fn add_source_in_chapters(&self, dir: &std::path::Path, text: &str, chapters: usize) {
        let lines: Vec<&str> = text.lines().collect();
        for (n, part) in lines.chunks(lines.len().div_ceil(chapters)).enumerate() {
            let file = write_file(dir, &format!("{:03}.txt", n + 1), &(part.join("\n") + "\n"));
            self.ok(&["source", "add", "--chapter", &(n + 1).to_string(), &file]);
        }
    }
}

/// Writes `text` to the file `name` in `dir`; its path, as an argument.
pub fn write_file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}
