//! A local cluster of three `nats-server` processes with JetStream on loopback ports,
//! started and stopped by a test, and a small client of the NATS protocol over
//! `TcpStream` (a test publishes forged messages and deletes them with it).
//!
//! Every process a test starts is registered, so that [`watchdog`] can kill them all
//! if the test runs out of time; a cluster's processes are also killed when it is
//! dropped, on every path (a panic included).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Every child process a test started, by pid.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Registers a child process, so the watchdog can kill it.
pub fn register(pid: u32) {
    CHILDREN.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(pid);
}

/// Kills every registered child and ends the test after `limit`, loudly: a bound on
/// the whole test, not a claim about its speed.
pub fn watchdog(limit: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        eprintln!("the test did not finish within {} s: killing its child processes", limit.as_secs());
        for pid in CHILDREN.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).iter() {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
        std::process::exit(101);
    });
}

/// The `nats-server` to run: on the `PATH`, or where Debian installs it.
fn nats_server() -> PathBuf {
    for candidate in ["nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server"] {
        let found = Command::new(candidate).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
        if found.is_ok_and(|status| status.success()) {
            return PathBuf::from(candidate);
        }
    }
    panic!("nats-server is not installed: run scripts/setup.sh (it installs Debian's nats-server)");
}

/// Ports that were free a moment ago, all bound at once so that they differ.
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    listeners.iter().map(|listener| listener.local_addr().unwrap().port()).collect()
}

/// One `nats-server` of the cluster.
pub struct Node {
    pub name: String,
    pub client_port: u16,
    pub http_port: u16,
    child: Option<Child>,
}

/// Three `nats-server`s clustered with JetStream.
pub struct Cluster {
    _dir: tempfile::TempDir,
    pub nodes: Vec<Node>,
}

const PATIENCE: Duration = Duration::from_secs(60);

impl Cluster {
    /// Starts three servers and waits until each answers its health check with
    /// JetStream ready (up to 60 s; ports taken meanwhile are tried again twice).
    pub fn start() -> Cluster {
        let binary = nats_server();
        for attempt in 1..=3 {
            let dir = tempfile::tempdir().unwrap();
            let ports = free_ports(9);
            let routes: Vec<String> = (0..3).map(|i| format!("nats-route://127.0.0.1:{}", ports[3 + i])).collect();
            let mut nodes = Vec::new();
            for i in 0..3 {
                let name = format!("n{}", i + 1);
                let config = format!(
                    "server_name: {name}\nlisten: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\n\
                     jetstream {{ store_dir: \"{}\", max_memory_store: 64MB, max_file_store: 4GB }}\n\
                     cluster {{ name: lorebank-test, listen: 127.0.0.1:{}, routes: [{}] }}\n",
                    ports[i],
                    ports[6 + i],
                    dir.path().join(&name).display(),
                    ports[3 + i],
                    routes.join(", ")
                );
                let path = dir.path().join(format!("{name}.conf"));
                std::fs::write(&path, config).unwrap();
                let log = std::fs::File::create(dir.path().join(format!("{name}.log"))).unwrap();
                let child = Command::new(&binary)
                    .arg("-c")
                    .arg(&path)
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().unwrap())
                    .stderr(log)
                    .spawn()
                    .unwrap();
                register(child.id());
                nodes.push(Node { name, client_port: ports[i], http_port: ports[6 + i], child: Some(child) });
            }
            let mut cluster = Cluster { _dir: dir, nodes };
            if cluster.wait_healthy() {
                return cluster;
            }
            eprintln!("nats cluster attempt {attempt} did not become healthy: {}", cluster.logs());
        }
        panic!("the nats cluster did not start in 3 attempts");
    }

    fn wait_healthy(&mut self) -> bool {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            for node in &mut self.nodes {
                if let Some(child) = node.child.as_mut() {
                    if let Ok(Some(_)) = child.try_wait() {
                        return false;
                    }
                }
            }
            let healthy = self.nodes.iter().all(|node| {
                http_get(node.http_port, "/healthz").is_some_and(|(status, body)| status == 200 && body.contains("ok"))
            });
            if healthy {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// What the servers logged.
    pub fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|node| {
                let path = self._dir.path().join(format!("{}.log", node.name));
                let text = std::fs::read_to_string(path).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(20).collect();
                format!("--- {}:\n{}", node.name, tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The `--cluster` list.
    pub fn urls(&self) -> String {
        self.nodes.iter().map(|node| format!("nats://127.0.0.1:{}", node.client_port)).collect::<Vec<_>>().join(",")
    }

    /// A live server's client port.
    pub fn live_port(&self) -> u16 {
        self.nodes.iter().find(|node| node.child.is_some()).map(|node| node.client_port).unwrap()
    }

    /// The index of the server that leads `stream`, as a live server's monitoring
    /// endpoint reports it.
    pub fn stream_leader(&self, stream: &str) -> Option<usize> {
        for node in self.nodes.iter().filter(|node| node.child.is_some()) {
            let Some((200, body)) = http_get(node.http_port, "/jsz?accounts=true&streams=true") else { continue };
            let Ok(value) = serde_json::from_str::<Value>(&body) else { continue };
            if let Some(leader) = find_leader(&value, stream) {
                return self.nodes.iter().position(|node| node.name == leader);
            }
        }
        None
    }

    /// Kills server `index` with SIGKILL.
    pub fn kill(&mut self, index: usize) {
        if let Some(mut child) = self.nodes[index].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for index in 0..self.nodes.len() {
            self.kill(index);
        }
    }
}

fn find_leader(value: &Value, stream: &str) -> Option<String> {
    match value {
        Value::Object(map) => {
            if map.get("name").and_then(Value::as_str) == Some(stream) {
                if let Some(leader) =
                    map.get("cluster").and_then(|cluster| cluster.get("leader")).and_then(Value::as_str)
                {
                    return Some(leader.to_owned());
                }
            }
            map.values().find_map(|value| find_leader(value, stream))
        }
        Value::Array(items) => items.iter().find_map(|value| find_leader(value, stream)),
        _ => None,
    }
}

/// A GET on a monitoring port: status and body.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let (head, mut body) = text.split_once("\r\n\r\n").map(|(head, body)| (head.to_owned(), body.to_owned()))?;
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        let mut joined = String::new();
        while let Some((size, rest)) = body.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                break;
            }
            joined.push_str(rest.get(..size)?);
            body = rest.get(size + 2..)?.to_owned();
        }
        body = joined;
    }
    Some((status, body))
}

/// A client of the NATS protocol, enough to publish and to make requests.
pub struct RawNats {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    n_requests: u64,
}

impl RawNats {
    pub fn connect(port: u16) -> RawNats {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let writer = stream.try_clone().unwrap();
        let mut nats = RawNats { reader: BufReader::new(stream), writer, n_requests: 0 };
        let info = nats.line();
        assert!(info.starts_with("INFO "), "{info}");
        nats.send(b"CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1,\"name\":\"lorebank-test\"}\r\nPING\r\n");
        loop {
            let line = nats.line();
            if line == "PONG" {
                return nats;
            }
            assert!(!line.starts_with("-ERR"), "{line}");
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        line.trim_end().to_owned()
    }

    /// Publishes `payload` on `subject` with a reply inbox and returns the reply's
    /// payload (JetStream answers a publish on a stream's subject with its ack).
    pub fn request(&mut self, subject: &str, payload: &[u8]) -> Vec<u8> {
        self.n_requests += 1;
        let inbox = format!("_INBOX.lorebank-test.{}", self.n_requests);
        let sid = self.n_requests;
        let mut message = format!("SUB {inbox} {sid}\r\nPUB {subject} {inbox} {}\r\n", payload.len()).into_bytes();
        message.extend_from_slice(payload);
        message.extend_from_slice(b"\r\n");
        self.send(&message);
        loop {
            let line = self.line();
            if line == "PING" {
                self.send(b"PONG\r\n");
                continue;
            }
            assert!(!line.starts_with("-ERR"), "{line}");
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (header_len, total) = match fields.as_slice() {
                ["MSG", _, _, len] => (0, len.parse::<usize>().unwrap()),
                ["MSG", _, _, _, len] => (0, len.parse::<usize>().unwrap()),
                ["HMSG", _, _, headers, len] => (headers.parse::<usize>().unwrap(), len.parse::<usize>().unwrap()),
                ["HMSG", _, _, _, headers, len] => (headers.parse::<usize>().unwrap(), len.parse::<usize>().unwrap()),
                _ => continue,
            };
            let mut body = vec![0u8; total + 2];
            self.reader.read_exact(&mut body).unwrap();
            self.send(format!("UNSUB {sid}\r\n").as_bytes());
            return body[header_len..total].to_vec();
        }
    }
}
