//! What the benchmarks share: the committed corpus slices and jieba's word list, the
//! terms and events they write, a book made as a client makes one, and the release
//! `lorebank` binary with a `lorebank serve` started from it.

pub mod chapters;

/// With `--features mimalloc`, every benchmark runs on mimalloc instead of the
/// system's allocator, to measure one against the other (docs/benchmarks.md, "The
/// allocator").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use book::{Book, WriteOptions};
use ledger_model::{Body, Gender, NewEvent, RecordId, RecordKind, TermPut, Window};

/// A committed corpus slice (`tests/data/corpora/NAME`).
pub fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/corpora").join(name)
}

/// `limit` distinct Chinese words of two or more characters from jieba's `dict.txt`
/// (installed by `scripts/setup.sh`), spread over the dictionary.
pub fn jieba_words(limit: usize) -> Vec<String> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import jieba, os; print(os.path.dirname(jieba.__file__))"])
        .output()
        .expect("python3 with jieba (run scripts/setup.sh)");
    let dir = String::from_utf8(output.stdout).expect("a UTF-8 path").trim().to_owned();
    let dict = std::fs::read_to_string(Path::new(&dir).join("dict.txt")).expect("jieba dict.txt");
    let mut words: Vec<String> = dict
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|word| word.chars().count() >= 2 && word.chars().all(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)))
        .map(str::to_owned)
        .collect();
    words.sort();
    words.dedup();
    // Spread over the dictionary, not its first letters.
    let step = (words.len() / limit).max(1);
    words.into_iter().step_by(step).take(limit).collect()
}

/// The term the benchmarks write: T-`number`, of kind `term`, with two declined forms,
/// from chapter 1 + `number` % 7.
pub fn term(number: u32, src: impl Into<String>, dst: impl Into<String>) -> TermPut {
    TermPut {
        kind: Some("term".into()),
        decl: vec![format!("Термина {number}"), format!("Термину {number}")],
        window: Window { since: 1 + number % 7, until: None },
        ..TermPut::new(RecordId::new(RecordKind::Term, number).unwrap(), src, dst)
    }
}

/// [`term`], masculine and of priority `number` % 5, as the book and server
/// benchmarks write it.
pub fn ranked_term(number: u32, src: impl Into<String>, dst: impl Into<String>) -> TermPut {
    TermPut { gender: Some(Gender::Masculine), priority: (number % 5) as i32, ..term(number, src, dst) }
}

/// `body` as an event of an import, at a fixed time.
pub fn event(body: Body) -> NewEvent {
    NewEvent { recorded_at_ms: 1_764_000_000_000, actor: "import:bench".into(), source: "bench".into(), body }
}

/// The write options of [`event`]'s import.
pub fn write_options() -> WriteOptions {
    WriteOptions {
        actor: "import:bench".into(),
        source: Some("bench".into()),
        expect_head: None,
        recorded_at_ms: 1_764_000_000_000,
    }
}

/// A new zh book at `path`, made as a client makes one (`Book::init`), opened.
pub fn init_book(path: &Path) -> Book {
    Book::init(path, "zh", &write_options()).unwrap();
    Book::open(path).unwrap()
}

/// The `lorebank` binary: `LOREBANK_BIN`, else the release build of the main workspace.
pub fn binary() -> PathBuf {
    match std::env::var_os("LOREBANK_BIN") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/lorebank"),
    }
}

/// `lorebank serve --dir DIR` on a free loopback port with `extra` arguments, and the
/// base URL it listens on; what it says on stderr afterwards goes to the benchmark's.
pub fn start_serve(dir: &Path, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(binary())
        .arg("serve")
        .arg("--dir")
        .arg(dir)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let base = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "lorebank serve exited before listening");
        if let Some(rest) = line.split_once("listening on ").map(|(_, rest)| rest) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
        eprint!("serve: {line}");
    };
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            eprintln!("serve: {line}");
        }
    });
    (child, base)
}
