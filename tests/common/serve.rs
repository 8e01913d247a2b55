//! `lorebank serve` started as a child process on a free loopback port, and a small
//! blocking HTTP/1.1 client over `TcpStream` (one connection per request, so a test
//! controls every byte), shared by the server's end-to-end tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_lorebank");

/// How long a test waits for the server to start, answer or stop before failing.
const PATIENCE: Duration = Duration::from_secs(60);

/// A running `lorebank serve`.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`, to connect to.
    pub addr: String,
    /// The directory of books.
    pub dir: PathBuf,
    stderr: Arc<Mutex<String>>,
    /// The bearer token sent with every request, if any.
    pub token: Option<String>,
}

impl Server {
    /// Serves `dir` on `127.0.0.1:0` with `extra` flags; waits for the line that
    /// says where it listens.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        Server::start_on(dir, "127.0.0.1:0", extra)
    }

    /// A library (a `books` directory inside a new temp dir, so that its parent is
    /// watched too) served with `extra` flags, with book `a` holding `lines` (term
    /// lines, as [`term_line`] makes them). Keep the temp dir while the server runs.
    /// The book is written by a server with no `extra` flags, stopped before the
    /// served one starts: a tight limit under test (`--request-timeout 1` on a busy
    /// machine) applies to what the test sends, never to its setup.
    pub fn library_with_a_book(extra: &[&str], lines: &[&str]) -> (tempfile::TempDir, Server) {
        let root = tempfile::tempdir().unwrap();
        let books = root.path().join("books");
        std::fs::create_dir(&books).unwrap();
        let setup = Server::start(&books, &[]);
        setup.create("a");
        setup.append_lines("a", "actor=human:test", lines).ok();
        drop(setup);
        (root, Server::start(&books, extra))
    }

    pub fn start_on(dir: &Path, listen: &str, extra: &[&str]) -> Server {
        Server::start_with_env(dir, listen, extra, &[])
    }

    /// [`Server::start_on`] with `env` set for the server process.
    pub fn start_with_env(dir: &Path, listen: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--dir"])
            .arg(dir)
            .args(["--listen", listen])
            .args(extra)
            .envs(env.iter().copied())
            .env_remove("LOREBANK_BOOK")
            .env_remove("LOREBANK_ACTOR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (ready, listening) = mpsc::channel();
        let mut lines = BufReader::new(child.stderr.take().unwrap());
        let collected = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut line = String::new();
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let _ = ready.send(rest.split_whitespace().next().unwrap_or("").to_owned());
                }
                collected.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let bound = match listening.recv_timeout(PATIENCE) {
            Ok(bound) => bound,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("lorebank serve did not start: {}", stderr.lock().unwrap());
            }
        };
        let port = bound.rsplit(':').next().unwrap().to_owned();
        Server { child, addr: format!("127.0.0.1:{port}"), dir: dir.to_owned(), stderr, token: None }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(mut self) -> (ExitStatus, String) {
        let sent = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let status = wait_for_exit(&mut self.child);
        (status, self.stderr())
    }

    /// Sends SIGKILL and waits for the exit.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// A request with the server's token (if it has one) and `Connection: close`.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        let bearer;
        if let Some(token) = &self.token {
            bearer = format!("Bearer {token}");
            all.push(("Authorization", &bearer));
        }
        request(&self.addr, method, path, &all, body)
    }

    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, &[], b"")
    }

    pub fn post(&self, path: &str, body: &Value) -> Reply {
        self.send("POST", path, &[("Content-Type", "application/json")], body.to_string().as_bytes())
    }

    pub fn put(&self, path: &str, body: &Value) -> Reply {
        self.send("PUT", path, &[("Content-Type", "application/json")], body.to_string().as_bytes())
    }

    /// Appends NDJSON `lines` to `book` (`query` after `?`, may be empty).
    pub fn append_lines(&self, book: &str, query: &str, lines: &[&str]) -> Reply {
        let body = lines.join("\n") + "\n";
        let path = if query.is_empty() {
            format!("/v1/books/{book}/events")
        } else {
            format!("/v1/books/{book}/events?{query}")
        };
        self.send("POST", &path, &[("Content-Type", "application/x-ndjson")], body.as_bytes())
    }

    /// Creates book `name` (zh profile, by `human:test`).
    pub fn create(&self, name: &str) {
        let reply = self.put(&format!("/v1/books/{name}"), &json!({ "profile": "zh", "actor": "human:test" }));
        assert_eq!(reply.status, 201, "{}", reply.text());
    }

    /// `GET /v1/books/{book}`: head, hash and snapshot.
    pub fn info(&self, book: &str) -> Value {
        self.get(&format!("/v1/books/{book}")).ok()
    }

    /// `POST .../verify`, which must say ok; its answer.
    pub fn verified(&self, book: &str) -> Value {
        let verified = self.send("POST", &format!("/v1/books/{book}/verify"), &[], b"").ok();
        assert_eq!(verified["ok"], true, "{verified}");
        verified
    }

    /// The whole log of `book`, one JSON value a line.
    pub fn log(&self, book: &str) -> Vec<Value> {
        let reply = self.get(&format!("/v1/books/{book}/events"));
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.text().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn wait_for_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// Header names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == &name.to_ascii_lowercase()).map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| panic!("{error}: {}", self.text()))
    }

    /// The JSON body of a 200.
    pub fn ok(&self) -> Value {
        assert_eq!(self.status, 200, "{}", self.text());
        self.json()
    }

    /// The body of a problem answer with `status`, checked to be
    /// `application/problem+json` of class `kind`.
    pub fn problem(&self, status: u16, kind: &str) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(self.header("content-type"), Some("application/problem+json"), "{}", self.text());
        let problem = self.json();
        assert_eq!(problem["type"], format!("urn:lorebank:problem:{kind}"), "{problem}");
        assert_eq!(problem["status"], status, "{problem}");
        problem
    }

    /// The `detail` of a problem.
    pub fn detail(&self) -> String {
        self.json()["detail"].as_str().unwrap_or_default().to_owned()
    }
}

/// Sends one request on a new connection and reads the whole answer.
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    try_request(addr, method, path, headers, body).unwrap_or_else(|error| panic!("{method} {path}: {error}"))
}

/// [`request`], with a failure to connect or read as an error (a server going away).
pub fn try_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes)?;
    parse_reply(&bytes)
}

/// Parses an HTTP/1.1 answer (a `Content-Length` or chunked body, or one read to
/// the end of the connection).
pub fn parse_reply(bytes: &[u8]) -> std::io::Result<Reply> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let end = bytes.windows(4).position(|window| window == b"\r\n\r\n").ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&bytes[..end]).map_err(|_| bad("headers not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status: u16 =
        status_line.split(' ').nth(1).and_then(|code| code.parse().ok()).ok_or_else(|| bad(status_line))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let raw = &bytes[end + 4..];
    let chunked = headers.iter().any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    let body = if chunked {
        let mut body = Vec::new();
        let mut rest = raw;
        loop {
            let line_end = rest.windows(2).position(|window| window == b"\r\n").ok_or_else(|| bad("chunk size"))?;
            let size_text = std::str::from_utf8(&rest[..line_end]).map_err(|_| bad("chunk size"))?;
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| bad("chunk size"))?;
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            if rest.len() < size + 2 {
                return Err(bad("truncated chunk"));
            }
            body.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        body
    } else if let Some(length) = headers.iter().find(|(name, _)| name == "content-length") {
        let length: usize = length.1.parse().map_err(|_| bad("content-length"))?;
        if raw.len() < length {
            return Err(bad("truncated body"));
        }
        raw[..length].to_vec()
    } else {
        raw.to_vec()
    };
    Ok(Reply { status, headers, body })
}

/// Runs the CLI on book file `book` (no actor from the environment).
pub fn cli(book: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--book")
        .arg(book)
        .args(args)
        .env_remove("LOREBANK_BOOK")
        .env("LOREBANK_ACTOR", "human:test")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs the CLI on `book`; it must succeed. Its stdout.
pub fn cli_ok(book: &Path, args: &[&str]) -> String {
    let output = cli(book, args);
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Every file and directory under `dir`, relative, sorted.
pub fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().to_owned());
        }
    }
    found.sort();
    found
}

/// A term body line for NDJSON appends.
pub fn term_line(id: &str, src: &str, dst: &str) -> String {
    json!({ "term_put": { "id": id, "src": src, "dst": dst } }).to_string()
}
