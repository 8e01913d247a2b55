//! A `lorebank serve` child process for the end-to-end tests of the HTTP API, and a
//! bare HTTP/1.1 request over a TCP stream (no client library needed).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A `lorebank serve` child on a free loopback port.
pub struct Server {
    child: Child,
    pub url: String,
    stderr: Arc<Mutex<String>>,
    drain: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lorebank"))
            .args(["serve", "--listen", "127.0.0.1:0", "--dir"])
            .arg(dir)
            .env_remove("LOREBANK_BOOK")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        let url = loop {
            let mut line = String::new();
            if lines.read_line(&mut line).unwrap() == 0 {
                let status = child.wait().unwrap();
                panic!("lorebank serve exited ({status}) before listening: {seen}");
            }
            seen.push_str(&line);
            if let Some(rest) = line.strip_prefix("lorebank serve: listening on ") {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        let stderr = Arc::new(Mutex::new(seen));
        let sink = Arc::clone(&stderr);
        let drain = std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                let mut sink = sink.lock().unwrap();
                sink.push_str(&line);
                sink.push('\n');
            }
        });
        Server { child, url, stderr, drain: Some(drain) }
    }

    /// SIGTERM, then the exit status must be 0 and the books closed.
    pub fn stop(mut self) {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill -TERM failed");
        let exit = self.child.wait().unwrap();
        self.drain.take().unwrap().join().unwrap();
        let stderr = self.stderr.lock().unwrap().clone();
        assert!(exit.success(), "lorebank serve exited with {exit} after SIGTERM: {stderr}");
        assert!(stderr.contains("lorebank serve: stopped"), "{stderr}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.drain.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One answer: status, headers (names lower-cased) and body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("{error}: {}", self.body))
    }
}

/// The head of an HTTP/1.1 message: its first line and its headers, names in lower
/// case, values trimmed; the reader is left at the body.
pub fn read_head(reader: &mut impl BufRead) -> (String, Vec<(String, String)>) {
    let mut first_line = String::new();
    reader.read_line(&mut first_line).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    (first_line, headers)
}

/// Sends one request to `url` (`http://IP:PORT`) and reads the whole answer.
pub fn request(url: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let address = url.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(address).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let (status_line, headers) = read_head(&mut reader);
    let status = status_line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut raw = Vec::new();
    reader.read_to_end(&mut raw).unwrap();
    let chunked = headers.iter().any(|(name, value)| name == "transfer-encoding" && value == "chunked");
    let body = if chunked { dechunk(&raw) } else { raw };
    Answer { status, headers, body: String::from_utf8(body).unwrap() }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let end = raw.windows(2).position(|pair| pair == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 4 + size..];
    }
}
