//! Processes that open one book take turns instead of failing: concurrent writers
//! all succeed and lose nothing while readers run beside them; a holder or waiter
//! killed with SIGKILL leaves no lock behind; a wait that runs out names the book and
//! how long it waited; a book whose lock files cannot be created is still read.
//!
//! A `harness = false` target: `main` runs the tests, which start `lorebank`
//! processes. A process that must hold a turn at a known moment is this same binary,
//! re-run with `LOREBANK_QUEUE_CHILD` set to `read:PATH` or `write:PATH`: it opens the
//! book in its turn, prints `held`, and keeps it until its stdin closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::Duration;

use ledger::{Ledger, Patience};

const CHILD: &str = "LOREBANK_QUEUE_CHILD";
const WRITERS: usize = 8;
const WRITES_EACH: usize = 4;
const READERS: usize = 3;
const READS_EACH: usize = 4;
const APPLIED: usize = 20;

fn main() {
    if let Some(role) = std::env::var_os(CHILD) {
        return hold(role.to_str().unwrap());
    }
    let tests: &[(&str, fn())] = &[
        (
            "concurrent_writers_all_succeed_and_readers_never_fail",
            concurrent_writers_all_succeed_and_readers_never_fail,
        ),
        ("a_killed_holder_or_waiter_leaves_the_book_unlocked", a_killed_holder_or_waiter_leaves_the_book_unlocked),
        ("a_wait_that_runs_out_names_the_book_and_how_long", a_wait_that_runs_out_names_the_book_and_how_long),
        ("without_lock_files_a_book_is_still_read_and_written", without_lock_files_a_book_is_still_read_and_written),
    ];
    test_support::harness::run(tests);
}

/// Child side: hold a turn at the book until stdin closes.
fn hold(role: &str) {
    let (access, path) = role.split_once(':').unwrap();
    let path = Path::new(path);
    let mut patience = Patience::new(Duration::from_secs(30));
    let ledger = match access {
        "read" => Ledger::open_read_only_in_turn(path, &mut patience),
        "write" => Ledger::open_in_turn(path, &mut patience),
        other => panic!("unknown role {other}"),
    }
    .unwrap();
    println!("held");
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(ledger);
}

struct Book {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Book {
    /// `init` with the plain profile, then `apply` of `APPLIED` terms.
    fn new() -> Book {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.lorebank");
        let book = Book { _dir: dir, path };
        book.exits(&["init", "--profile", "plain"], 0);
        let glossary: String = (1..=APPLIED)
            .map(|n| format!("{{\"term_put\":{{\"id\":\"T-{n}\",\"src\":\"applied{n}\",\"dst\":\"a{n}\"}}}}\n"))
            .collect();
        let file = book.path.with_extension("jsonl");
        std::fs::write(&file, glossary).unwrap();
        book.exits(&["apply", file.to_str().unwrap()], 0);
        book
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_lorebank"));
        command
            .arg("--book")
            .arg(&self.path)
            .args(args)
            .env_remove("LOREBANK_BOOK")
            .env_remove("LOREBANK_WAIT")
            .env("LOREBANK_ACTOR", "human:test")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs `args`, asserts the exit code, returns (stdout, stderr).
    fn exits(&self, args: &[&str], code: i32) -> (String, String) {
        let output = self.run(args);
        let (out, err) = (String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap());
        assert_eq!(output.status.code(), Some(code), "lorebank {args:?}\nstdout: {out}\nstderr: {err}");
        (out, err)
    }

    /// A child of this binary holding a turn (`read` or `write`), once it holds it.
    fn holder(&self, access: &str) -> Child {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(CHILD, format!("{access}:{}", self.path.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "held\n", "the {access} holder did not get its turn");
        child
    }

    /// A `lorebank` process started with `args`, once it says it waits, and the rest
    /// of its stderr.
    fn waiting(&self, args: &[&str], holder: &str) -> (Child, BufReader<ChildStderr>) {
        let mut child = self.command(args).spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let expected = format!("note: waiting for {}: {holder} (giving up after 30 s)\n", self.path.display());
        assert_eq!(line, expected, "lorebank {args:?} did not say what it waits for");
        (child, stderr)
    }

    /// The ids of the active terms at the head.
    fn term_ids(&self) -> Vec<String> {
        let (out, _) = self.exits(&["--json", "show"], 0);
        let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut ids: Vec<String> =
            shown["terms"].as_array().unwrap().iter().map(|term| term["id"].as_str().unwrap().to_owned()).collect();
        ids.sort();
        ids
    }
}

fn concurrent_writers_all_succeed_and_readers_never_fail() {
    let book = Book::new();
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let book = &book;
                scope.spawn(move || {
                    for write in 0..WRITES_EACH {
                        let n = 1000 + writer * 10 + write;
                        let (id, src, dst) = (format!("T-{n}"), format!("written{n}"), format!("w{n}"));
                        book.exits(&["term", "put", "--id", &id, "--src", &src, "--dst", &dst], 0);
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..READERS)
            .map(|_| {
                let book = &book;
                scope.spawn(move || {
                    for _ in 0..READS_EACH {
                        let (out, _) = book.exits(&["show"], 0);
                        assert!(out.contains("active term(s)"), "{out}");
                    }
                })
            })
            .collect();
        for thread in writers.into_iter().chain(readers) {
            thread.join().unwrap();
        }
    });
    let mut expected: Vec<String> = (1..=APPLIED).map(|n| format!("T-{n}")).collect();
    for writer in 0..WRITERS {
        expected.extend((0..WRITES_EACH).map(|write| format!("T-{}", 1000 + writer * 10 + write)));
    }
    expected.sort();
    assert_eq!(book.term_ids(), expected, "a write was lost");
    let (out, _) = book.exits(&["--json", "verify"], 0);
    let head = 1 + APPLIED + WRITERS * WRITES_EACH;
    assert!(out.contains(&format!("\"head\":{head}")), "{out}");
}

fn a_killed_holder_or_waiter_leaves_the_book_unlocked() {
    let book = Book::new();

    // A writer holds the book; a second writer waits behind it. Both are killed.
    let mut holder = book.holder("write");
    let put = ["--wait", "30", "term", "put", "--id", "T-501", "--src", "killed501", "--dst", "k"];
    let (mut waiter, _) = book.waiting(&put, "another lorebank process is writing it");
    waiter.kill().unwrap();
    waiter.wait().unwrap();
    holder.kill().unwrap();
    holder.wait().unwrap();
    book.exits(&["--wait", "0", "term", "put", "--id", "T-502", "--src", "after502", "--dst", "a"], 0);

    // A reader holds the book; a writer waits for it, and holds up the readers after it.
    let mut reader = book.holder("read");
    let put = ["--wait", "30", "term", "put", "--id", "T-503", "--src", "killed503", "--dst", "k"];
    let (mut waiter, _) = book.waiting(&put, "other lorebank processes are reading it");
    let (_, err) = book.exits(&["--wait", "0.3", "show"], 1);
    assert!(err.contains("gave up after waiting 0.3 s"), "a reader went past a waiting writer: {err}");
    // Killed while it waits in the turnstile, the writer holds up no one.
    waiter.kill().unwrap();
    waiter.wait().unwrap();
    book.exits(&["--wait", "0", "show"], 0);
    // The reader killed, a writer goes at once.
    reader.kill().unwrap();
    reader.wait().unwrap();
    book.exits(&["--wait", "0", "term", "put", "--id", "T-504", "--src", "after504", "--dst", "a"], 0);

    let ids = book.term_ids();
    assert!(ids.contains(&"T-502".to_owned()) && ids.contains(&"T-504".to_owned()), "{ids:?}");
    assert!(!ids.contains(&"T-501".to_owned()) && !ids.contains(&"T-503".to_owned()), "{ids:?}");
    book.exits(&["verify"], 0);
}

fn a_wait_that_runs_out_names_the_book_and_how_long() {
    let book = Book::new();
    let path = book.path.display().to_string();
    {
        let _held = Ledger::open_in_turn(&book.path, &mut Patience::new(Duration::ZERO)).unwrap();

        let (_, err) = book.exits(&["--wait", "1.2", "show"], 1);
        assert_eq!(
            err,
            format!(
                "note: waiting for {path}: another lorebank process is writing it (giving up after 1.2 s)\n\
                 error: {path} is in use by another process: gave up after waiting 1.2 s\n"
            )
        );

        let output = book
            .command(&["--json", "term", "put", "--id", "T-1", "--src", "x1", "--dst", "y"])
            .env("LOREBANK_WAIT", "0.2")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        let err = String::from_utf8(output.stderr).unwrap();
        let error: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
        assert_eq!(error["error"]["kind"], "io");
        assert_eq!(
            error["error"]["message"],
            format!("{path} is in use by another process: gave up after waiting 0.2 s")
        );

        // Readers share a turn, but not with a writer.
        book.exits(&["--wait", "0", "log"], 1);
    }
    let (_, err) = book.exits(&["--wait", "soon", "show"], 2);
    assert!(err.contains("--wait"), "{err}");
    book.exits(&["--wait", "0", "show"], 0);
    let mut reader = book.holder("read");
    book.exits(&["--wait", "0", "show"], 0);
    let (_, err) = book.exits(&["--wait", "0", "term", "put", "--id", "T-1", "--src", "x1", "--dst", "y"], 1);
    assert!(err.contains("gave up after waiting 0 s"), "{err}");
    drop(reader.stdin.take());
    reader.wait().unwrap();
}

fn without_lock_files_a_book_is_still_read_and_written() {
    let book = Book::new();
    for suffix in [".lock", ".turnstile"] {
        let mut name = book.path.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(&name);
        std::os::unix::fs::symlink(book.path.with_file_name("missing-dir/lock"), &name).unwrap();
    }
    book.exits(&["--wait", "0", "show"], 0);
    book.exits(&["--wait", "0", "term", "put", "--id", "T-601", "--src", "unqueued601", "--dst", "u"], 0);
    book.exits(&["--wait", "0", "verify"], 0);

    // A command on a book that does not exist creates nothing beside it.
    let missing = book.path.with_file_name("missing.lorebank");
    let output = Command::new(env!("CARGO_BIN_EXE_lorebank"))
        .arg("--book")
        .arg(&missing)
        .arg("show")
        .env_remove("LOREBANK_WAIT")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let dir: Vec<_> = std::fs::read_dir(missing.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with("missing"))
        .collect();
    assert!(dir.is_empty(), "{dir:?}");
}
