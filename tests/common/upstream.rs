//! The deterministic stand-in model server (`tests/common/upstream.py`) started as a
//! child process, shared by the proxy's end-to-end tests (tests/proxy.rs,
//! tests/proxy_openai.rs); over plain HTTP, or over TLS with a certificate and key the
//! test made.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

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
