//! `lorebank --server URL …`: the CLI's commands sent to a running server give the
//! same answers and exit codes as the same commands on the file, and the book the
//! server wrote is the one the local CLI reads afterwards.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_lorebank");

struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--dir"])
            .arg(dir)
            .args(["--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next().unwrap().unwrap();
        let url = line.split("listening on ").nth(1).unwrap().split(' ').next().unwrap().to_owned();
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        Server { child, url }
    }

    fn stop(mut self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server stops cleanly on SIGTERM: {status}");
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("LOREBANK_BOOK").env_remove("LOREBANK_SERVER").output().unwrap()
}

fn remote(server: &Server, args: &[&str]) -> Output {
    let mut all = vec!["--server", &server.url, "--book", "wuchuan"];
    all.extend_from_slice(args);
    run(&all)
}

fn ok_json(output: Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn commands_through_the_server_match_the_same_commands_on_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    ok_json(remote(&server, &["--json", "init", "--profile", "zh"]));
    let put = ok_json(remote(
        &server,
        &["--json", "term", "put", "--id", "T-1", "--src", "顾寒川", "--dst", "Гу Ханьчуань", "--actor", "human:anna"],
    ));
    assert_eq!(put["head"], 2);
    ok_json(remote(&server, &["--json", "term", "edit", "T-1", "--note", "главный герой", "--actor", "human:anna"]));
    ok_json(remote(&server, &["--json", "alias", "add", "T-1", "顧寒川", "--actor", "human:anna"]));

    // The same exit codes as on the file: a stale head is a conflict (5), a bad
    // id invalid (2), and nothing is written.
    let stale =
        remote(&server, &["term", "put", "--id", "T-2", "--src", "沈照", "--dst", "Шэнь", "--expect-head", "1"]);
    assert_eq!(stale.status.code(), Some(5), "{}", String::from_utf8_lossy(&stale.stderr));
    assert_eq!(remote(&server, &["term", "show", "X-1"]).status.code(), Some(2));
    assert_eq!(run(&["--server", &server.url, "--book", "../etc", "show"]).status.code(), Some(2));

    let text = dir.path().join("chunk.txt");
    std::fs::write(&text, "顧寒川站在雾川边。").unwrap();
    let text = text.to_str().unwrap();
    let assembled = ok_json(remote(&server, &["--json", "assemble", "--chapter", "1", "--chunk", "1", "--text", text]));
    let receipt = assembled["receipt"].as_str().unwrap().to_owned();
    assert!(assembled["context"].as_str().unwrap().contains("Гу Ханьчуань"));
    let plain = remote(&server, &["assemble", "--chapter", "1", "--chunk", "1", "--text", text, "--dry-run"]);
    assert_eq!(String::from_utf8(plain.stdout).unwrap(), assembled["context"].as_str().unwrap());
    let replayed = ok_json(remote(&server, &["--json", "replay", &receipt[..12]]));
    assert_eq!(replayed["identical"], true);

    let show = ok_json(remote(&server, &["--json", "show", "--chapter", "1"]));
    let snapshot = ok_json(remote(&server, &["--json", "snapshot"]));
    let history = ok_json(remote(&server, &["--json", "term", "show", "T-1"]));
    let audit = ok_json(remote(&server, &["--json", "audit", "--chapter", "1"]));
    let log = remote(&server, &["--json", "log"]);
    assert_eq!(log.status.code(), Some(0));
    assert_eq!(ok_json(remote(&server, &["--json", "verify"]))["ok"], true);
    server.stop();

    // The local CLI reads what the server wrote, and answers the same.
    let file = dir.path().join("wuchuan.lorebank");
    let file = file.to_str().unwrap();
    let local = |args: &[&str]| {
        let mut all = vec!["--book", file, "--json"];
        all.extend_from_slice(args);
        run(&all)
    };
    assert_eq!(ok_json(local(&["show", "--chapter", "1"])), show);
    assert_eq!(ok_json(local(&["snapshot"])), snapshot);
    assert_eq!(ok_json(local(&["term", "show", "T-1"])), history);
    assert_eq!(ok_json(local(&["audit", "--chapter", "1"])), audit);
    assert_eq!(local(&["log"]).stdout, log.stdout);
    assert_eq!(ok_json(local(&["replay", &receipt]))["identical"], true);

    // A term edit that names no source records the use case's own, `edit`, through
    // the server as on the file (it used to record `cli` from either).
    ok_json(local(&["term", "edit", "T-1", "--priority", "3"]));
    let source_at = |history: &Value, seq: u64| {
        history["versions"].as_array().unwrap().iter().find(|version| version["seq"] == seq).unwrap()["source"].clone()
    };
    assert_eq!(source_at(&history, 3), "edit", "{history}");
    assert_eq!(source_at(&ok_json(local(&["term", "show", "T-1"])), 5), "edit");
}

#[test]
fn an_unreachable_server_is_a_storage_failure_and_serve_is_refused_remotely() {
    // Port 9 (discard) on loopback: nothing listens there in a test sandbox.
    let output = run(&["--server", "http://127.0.0.1:9", "--book", "x", "show"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot reach the server"));
    let output = run(&["--server", "127.0.0.1:7373", "--book", "x", "show"]);
    assert_eq!(output.status.code(), Some(2), "a URL without a scheme is invalid");
    let output = run(&["--server", "http://127.0.0.1:9", "openapi"]);
    assert_eq!(output.status.code(), Some(2));
}
