//! The deterministic stand-in model server (`tests/common/upstream.py`) started as a
//! child process, shared by the proxy's end-to-end tests (tests/proxy.rs,
//! tests/proxy_openai.rs); over plain HTTP, or over TLS with a certificate and key the
//! test made; and the library those tests proxy a book of.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::serve::Server;

/// A library (its root, and the `books` directory in it) whose book `a` has 美猴王
/// and 悟空 for every chapter and 祖师 only from chapter 4 on: the book the proxy's
/// tests translate through. Written by a server that is stopped again.
pub fn library_with_book_a() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let books = root.path().join("books");
    std::fs::create_dir(&books).unwrap();
    let setup = Server::start(&books, &[]);
    setup.create("a");
    let lines = [
        json!({ "term_put": { "id": "T-1", "src": "美猴王", "dst": "Царь обезьян" } }).to_string(),
        json!({ "term_put": { "id": "T-2", "src": "悟空", "dst": "Укун" } }).to_string(),
        json!({ "term_put": { "id": "T-3", "src": "祖师", "dst": "Патриарх Бодхи", "window": { "since": 4 } } })
            .to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(setup.append_lines("a", "actor=human:test", &lines).status, 200);
    (root, books)
}

/// The text the stand-in answers every `ok` request with.
pub const TRANSLATION: &str = "Царь обезьян поклонился, и Сунь Укун вышел за ворота.";

/// The stand-in model server, killed when dropped.
pub struct Upstream {
    child: Child,
    pub port: u16,
    log: std::path::PathBuf,
    /// Served over TLS (as `localhost`).
    tls: bool,
    _dir: tempfile::TempDir,
}

impl Upstream {
    pub fn start() -> Upstream {
        Upstream::spawn(None)
    }

    /// Served over TLS with the certificate chain `cert` and its `key`.
    pub fn start_tls(cert: &Path, key: &Path) -> Upstream {
        Upstream::spawn(Some((cert, key)))
    }

    fn spawn(tls: Option<(&Path, &Path)>) -> Upstream {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.jsonl");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/upstream.py");
        let mut command = Command::new("python3");
        command.arg(script).arg(&log);
        if let Some((cert, key)) = tls {
            command.arg("--tls").arg(cert).arg(key);
        }
        let mut child =
            command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python3 runs the stand-in upstream");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the stand-in printed {line:?}"));
        Upstream { child, port, log, tls: tls.is_some(), _dir: dir }
    }

    pub fn url(&self) -> String {
        if self.tls {
            format!("https://localhost:{}/v1", self.port)
        } else {
            format!("http://127.0.0.1:{}/v1", self.port)
        }
    }

    /// The requests it received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
