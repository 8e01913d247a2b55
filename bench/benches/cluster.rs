//! A library on several machines (issue 16, `docs/scale.md`): three `nats-server`s
//! clustered on loopback ports (the stream replicated 3 times) and release
//! `lorebank serve --cluster` nodes, beside a single `lorebank serve` in the same run.
//!
//! * replicated append: one-event batches through HTTP, one writer alone (latency)
//!   and 8 writers at once (batches/s) on 8 books, on one book through one node, and
//!   on one book through two nodes; beside the same requests to a single node with
//!   a local durable append. Rounds alternate single node and library.
//! * open a book of 100,000 events on a fresh node: the first request of a node with
//!   an empty directory, without a checkpoint in the stream and then with one (the
//!   writing node's, shared when it stops); beside opening the same book from its
//!   file in a fresh single `lorebank serve`.
//! * 10,000 books on one node: every book opened once, in order, by a fresh node with
//!   `--max-open-books 1000` (the first opens fetch from the stream), then 1,000 of
//!   them again (from the node's files); the node's RSS at rest and as books open, and
//!   what one open book costs, against its own estimate (`open_bytes`).
//!
//! Every answer is checked (status, heads, the count of books and terms), so a broken
//! run cannot print a number.
//!
//! Run: `cargo build --release && cd bench && cargo bench --bench cluster` (after
//! `scripts/setup.sh`, which installs nats-server). `LOREBANK_BIN` overrides the
//! binary; `LOREBANK_BENCH_ROUNDS` sets the rounds of the append workloads (default
//! 3); `LOREBANK_BENCH_ONLY=append,open,books` picks the parts; `LOREBANK_BENCH_BOOKS`
//! the number of books (default 10,000); `LOREBANK_BENCH_DIR` where the nodes' files go
//! (default the system's temporary directory; 10,000 books take about 2 GB there).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use lorebank_bench::{binary, start_serve};
use serde_json::{json, Value};

const N_BIG_EVENTS: usize = 100_000;
const BIG_BATCH: usize = 1_000;

fn only(part: &str) -> bool {
    std::env::var("LOREBANK_BENCH_ONLY").map_or(true, |only| only.split(',').any(|one| one == part))
}

fn scratch() -> tempfile::TempDir {
    match std::env::var_os("LOREBANK_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

// ----- three nats-servers -----

struct Nats {
    _dir: tempfile::TempDir,
    children: Vec<Child>,
    urls: String,
}

fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    listeners.iter().map(|listener| listener.local_addr().unwrap().port()).collect()
}

fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

impl Nats {
    fn start() -> Nats {
        let dir = scratch();
        let ports = free_ports(9);
        let routes: Vec<String> = (0..3).map(|i| format!("nats-route://127.0.0.1:{}", ports[3 + i])).collect();
        let mut children = Vec::new();
        for i in 0..3 {
            let config = format!(
                "server_name: n{}\nlisten: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\njetstream {{ store_dir: \"{}\" }}\n\
                 cluster {{ name: lorebank-bench, listen: 127.0.0.1:{}, routes: [{}] }}\n",
                i + 1,
                ports[i],
                ports[6 + i],
                dir.path().join(format!("n{}", i + 1)).display(),
                ports[3 + i],
                routes.join(", ")
            );
            let path = dir.path().join(format!("n{}.conf", i + 1));
            std::fs::write(&path, config).unwrap();
            let child = Command::new("nats-server")
                .arg("-c")
                .arg(&path)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("nats-server (run scripts/setup.sh)");
            children.push(child);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(0..3).all(|i| http_status(ports[6 + i], "/healthz") == Some(200)) {
            assert!(Instant::now() < deadline, "the nats cluster did not become healthy");
            std::thread::sleep(Duration::from_millis(100));
        }
        let urls = (0..3).map(|i| format!("nats://127.0.0.1:{}", ports[i])).collect::<Vec<_>>().join(",");
        Nats { _dir: dir, children, urls }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// ----- lorebank serve -----

struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    fn start(dir: &Path, extra: &[&str]) -> Serve {
        let (child, base) = start_serve(dir, &[&["--request-timeout", "120"], extra].concat());
        Serve { child, base }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn get(&self, agent: &ureq::Agent, path: &str) -> Value {
        let response =
            agent.get(&self.url(path)).call().unwrap_or_else(|error| panic!("GET {path}: {}", describe(error)));
        serde_json::from_str(&response.into_string().unwrap()).unwrap()
    }

    fn rss_mb(&self, agent: &ureq::Agent) -> f64 {
        self.get(agent, "/v1/status")["rss_bytes"].as_u64().unwrap() as f64 / 1e6
    }

    fn create(&self, agent: &ureq::Agent, name: &str) {
        let response = agent
            .put(&self.url(&format!("/v1/books/{name}")))
            .set("Content-Type", "application/json")
            .send_string(&json!({ "profile": "plain", "actor": "human:bench" }).to_string())
            .unwrap_or_else(|error| panic!("PUT {name}: {}", describe(error)));
        assert_eq!(response.status(), 201);
    }

    /// Appends `events` (term_put bodies) as one batch; returns the head.
    fn append(&self, agent: &ureq::Agent, book: &str, events: &[Value]) -> u64 {
        let body = json!({ "events": events, "actor": "human:bench" }).to_string();
        let response = agent
            .post(&self.url(&format!("/v1/books/{book}/events")))
            .set("Content-Type", "application/json")
            .send_string(&body)
            .unwrap_or_else(|error| panic!("POST {book}: {}", describe(error)));
        let value: Value = serde_json::from_str(&response.into_string().unwrap()).unwrap();
        value["head"].as_u64().unwrap()
    }

    fn stop(mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "lorebank serve stopped with {status}");
        std::mem::forget(self);
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn describe(error: ureq::Error) -> String {
    match error {
        ureq::Error::Status(status, response) => format!("{status}: {}", response.into_string().unwrap_or_default()),
        other => other.to_string(),
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new().max_idle_connections_per_host(1).timeout(Duration::from_secs(180)).build()
}

fn term(id: usize) -> Value {
    json!({ "term_put": { "id": format!("T-{id}"), "src": format!("词{id:06}"), "dst": format!("слово {id}") } })
}

fn percentile(latencies: &mut [Duration], p: f64) -> Duration {
    latencies.sort_unstable();
    latencies[((latencies.len() - 1) as f64 * p).round() as usize]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn median(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0], values[values.len() - 1])
}

// ----- appends -----

/// One append workload's run: batches/s and latencies.
struct Run {
    per_s: f64,
    p50: Duration,
    p99: Duration,
}

/// `n_threads` writers, each appending `per_thread` one-event batches to
/// `books[thread % books.len()]` through `nodes[thread % nodes.len()]`.
fn appends(nodes: &[&Serve], books: &[String], n_threads: usize, per_thread: usize, next: &AtomicUsize) -> Run {
    let barrier = Barrier::new(n_threads + 1);
    let mut latencies = Vec::new();
    let wall = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n_threads)
            .map(|thread| {
                let (barrier, node, book) = (&barrier, nodes[thread % nodes.len()], &books[thread % books.len()]);
                scope.spawn(move || {
                    let agent = agent();
                    let _ = node.get(&agent, &format!("/v1/books/{book}"));
                    barrier.wait();
                    let mut latencies = Vec::with_capacity(per_thread);
                    for _ in 0..per_thread {
                        let id = next.fetch_add(1, Ordering::SeqCst);
                        let started = Instant::now();
                        node.append(&agent, book, &[term(id)]);
                        latencies.push(started.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        barrier.wait();
        let started = Instant::now();
        for handle in handles {
            latencies.extend(handle.join().unwrap());
        }
        started.elapsed()
    });
    let per_s = latencies.len() as f64 / wall.as_secs_f64();
    let (p50, p99) = (percentile(&mut latencies, 0.5), percentile(&mut latencies, 0.99));
    Run { per_s, p50, p99 }
}

fn append_part(nats: &Nats) {
    let rounds: usize = std::env::var("LOREBANK_BENCH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    let (local_dir, a_dir, b_dir) = (scratch(), scratch(), scratch());
    let local = Serve::start(local_dir.path(), &[]);
    let a = Serve::start(a_dir.path(), &["--cluster", &nats.urls]);
    let b = Serve::start(b_dir.path(), &["--cluster", &nats.urls]);
    let agent = agent();
    let next = AtomicUsize::new(1);
    // (name, books, writers, batches per writer, through two nodes)
    let workloads: [(&str, usize, usize, usize, bool); 4] = [
        ("1 writer, 1 book", 1, 1, 300, false),
        ("8 writers, 8 books", 8, 8, 150, false),
        ("8 writers, 1 book", 1, 8, 100, false),
        ("8 writers, 1 book, through 2 nodes (4 + 4)", 1, 8, 100, true),
    ];
    // Per workload: its name, then the three figures of each round.
    type Row = (String, Vec<f64>, Vec<f64>, Vec<f64>);
    let mut table: Vec<Row> = Vec::new();
    let mut written: Vec<(String, usize)> = Vec::new();
    for round in 0..rounds {
        for (index, (name, n_books, n_threads, per_thread, two_nodes)) in workloads.into_iter().enumerate() {
            // Fresh books for every run, so that every run appends to books of the same size.
            let books: Vec<String> = (0..n_books).map(|k| format!("r{round}-{index}-{k}")).collect();
            for book in &books {
                local.create(&agent, book);
                a.create(&agent, book);
                written.push((book.clone(), n_threads * per_thread / n_books));
            }
            let single = appends(&[&local], &books, n_threads, per_thread, &next);
            let nodes: Vec<&Serve> = if two_nodes { vec![&a, &b] } else { vec![&a] };
            let replicated = appends(&nodes, &books, n_threads, per_thread, &next);
            eprintln!(
                "round {round} {name}: single {:.0}/s p50 {:.2} ms p99 {:.2} ms; library {:.0}/s p50 {:.2} ms p99 {:.2} ms",
                single.per_s,
                ms(single.p50),
                ms(single.p99),
                replicated.per_s,
                ms(replicated.p50),
                ms(replicated.p99)
            );
            if table.len() <= index {
                table.push((name.to_owned(), Vec::new(), Vec::new(), Vec::new()));
            }
            let row = &mut table[index];
            row.1.push(single.per_s);
            row.2.push(replicated.per_s);
            row.3.extend([ms(single.p50), ms(single.p99), ms(replicated.p50), ms(replicated.p99)]);
        }
    }
    // Every batch is in the book it was written to, on both nodes of the library.
    for (book, n_batches) in &written {
        let expected = *n_batches as u64 + 1;
        assert_eq!(local.get(&agent, &format!("/v1/books/{book}"))["head"], expected, "{book} on the single node");
        let at = |node: &Serve| -> Value {
            let reply = agent
                .get(&node.url(&format!("/v1/books/{book}")))
                .set("Lorebank-Min-Revision", &expected.to_string())
                .call()
                .unwrap();
            serde_json::from_str(&reply.into_string().unwrap()).unwrap()
        };
        let (on_a, on_b) = (at(&a), at(&b));
        assert_eq!(on_a["head"], expected, "{book} on node a");
        assert_eq!(on_b, on_a, "{book} differs on the nodes");
    }
    let status = a.get(&agent, "/v1/status");
    let skipped =
        status["cluster"]["books"].as_array().unwrap().iter().filter(|book| !book["last_skipped"].is_null()).count();
    println!(
        "\n## Replicated append ({rounds} rounds; one-event batches over HTTP, keep-alive; fresh books each run)\n"
    );
    println!("| workload | single node, durable local append: batches/s [range] | library, R = 3: batches/s [range] | latency p50 / p99, single → library (median round) |");
    println!("| --- | --- | --- | --- |");
    for (name, single, library, latencies) in table {
        let (s, s_lo, s_hi) = median(single);
        let (l, l_lo, l_hi) = median(library);
        let pick = |offset: usize| median(latencies.iter().skip(offset).step_by(4).copied().collect()).0;
        println!(
            "| {name} | {s:.0} [{s_lo:.0}–{s_hi:.0}] | {l:.0} [{l_lo:.0}–{l_hi:.0}] | {:.2} / {:.2} ms → {:.2} / {:.2} ms |",
            pick(0),
            pick(1),
            pick(2),
            pick(3)
        );
    }
    println!("\nBooks open on node a with a message a race left behind (skipped by every node): {skipped}.");
    for serve in [local, a, b] {
        serve.stop();
    }
}

// ----- open 100k -----

fn open_part(nats: &Nats) {
    let writer_dir = scratch();
    let writer = Serve::start(writer_dir.path(), &["--cluster", &nats.urls]);
    let agent = agent();
    writer.create(&agent, "big");
    let started = Instant::now();
    let mut head = 1;
    for batch in 0..N_BIG_EVENTS / BIG_BATCH {
        let events: Vec<Value> = (0..BIG_BATCH).map(|i| term(batch * BIG_BATCH + i + 1)).collect();
        head = writer.append(&agent, "big", &events);
    }
    assert_eq!(head, N_BIG_EVENTS as u64 + 1);
    let written = started.elapsed();
    let info = writer.get(&agent, "/v1/books/big");
    let opened_on = |dir: &Path, extra: &[&str]| {
        let serve = Serve::start(dir, extra);
        let started = Instant::now();
        let got = serve.get(&agent, "/v1/books/big");
        let first = started.elapsed();
        assert_eq!((&got["head"], &got["hash"], &got["snapshot"]), (&info["head"], &info["hash"], &info["snapshot"]));
        let started = Instant::now();
        let body = json!({ "chapter": 1, "chunk": "1", "text": "词000001和词099999。", "record": false }).to_string();
        let assembled = agent
            .post(&serve.url("/v1/books/big/assemble"))
            .set("Content-Type", "application/json")
            .send_string(&body)
            .unwrap_or_else(|error| panic!("assemble: {}", describe(error)));
        let assembled: Value = serde_json::from_str(&assembled.into_string().unwrap()).unwrap();
        assert_eq!(assembled["hits"].as_array().map(Vec::len), Some(2), "{assembled}");
        let glossary = started.elapsed();
        let status = serve.get(&agent, "/v1/status");
        (serve, first, glossary, status)
    };
    // A fresh node, no checkpoint in the stream yet.
    let bare = scratch();
    let (serve, without, glossary_without, status) = opened_on(bare.path(), &["--cluster", &nats.urls]);
    assert_eq!(status["cluster"]["books"][0]["checkpoint_taken"], Value::Null);
    serve.stop();
    // The writer stops, leaving its newest checkpoint in the stream.
    writer.stop();
    let fresh = scratch();
    let (serve, with, glossary_with, status) = opened_on(fresh.path(), &["--cluster", &nats.urls]);
    let taken = status["cluster"]["books"][0]["checkpoint_taken"].as_u64().expect("a checkpoint taken from the stream");
    serve.stop();
    // The same book from its file, on a single node: the writer's copy.
    let single = scratch();
    std::fs::copy(writer_dir.path().join("big.lorebank"), single.path().join("big.lorebank")).unwrap();
    // A copy of a replica is a replica: reading it is all a single node does here.
    let (serve, from_file, glossary_file, _) = opened_on(single.path(), &[]);
    serve.stop();
    let size = std::fs::metadata(writer_dir.path().join("big.lorebank")).unwrap().len();
    println!("\n## Open a book of {N_BIG_EVENTS} events on a fresh node (written in {} batches of {BIG_BATCH} in {:.1} s; file {:.0} MB)\n", N_BIG_EVENTS / BIG_BATCH, written.as_secs_f64(), size as f64 / 1e6);
    println!("| how | first request (`GET /v1/books/big`: fetch, check, apply, fold to the head) | then a first dry-run assemble (builds the frozen projection of 100,000 terms) |");
    println!("| --- | --- | --- |");
    println!(
        "| fresh node, empty directory, no checkpoint in the stream | {:.2} s | {:.0} ms |",
        without.as_secs_f64(),
        ms(glossary_without)
    );
    println!(
        "| fresh node, empty directory, the stream's checkpoint (revision {taken}) | {:.2} s | {:.0} ms |",
        with.as_secs_f64(),
        ms(glossary_with)
    );
    println!(
        "| single node, the book's file already there (same run) | {:.2} s | {:.0} ms |",
        from_file.as_secs_f64(),
        ms(glossary_file)
    );
}

// ----- 10,000 books -----

fn books_part(nats: &Nats) {
    let n_books: usize = std::env::var("LOREBANK_BENCH_BOOKS").ok().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let names: Vec<String> = (0..n_books).map(|i| format!("b{i:05}")).collect();
    {
        // The books are created through one node, whose copies are then thrown away:
        // they are a cache.
        let creator_dir = scratch();
        let creator = Serve::start(creator_dir.path(), &["--cluster", &nats.urls, "--max-open-books", "64"]);
        let started = Instant::now();
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let (creator, names) = (&creator, &names);
                scope.spawn(move || {
                    let agent = agent();
                    for name in names.iter().skip(thread).step_by(8) {
                        creator.create(&agent, name);
                        let number: usize = name[1..].parse().unwrap();
                        let events: Vec<Value> = (0..20).map(|i| term(number * 100 + i + 1)).collect();
                        assert_eq!(creator.append(&agent, name, &events), 21);
                    }
                });
            }
        });
        eprintln!("created {n_books} books of 20 terms in {:.1} s", started.elapsed().as_secs_f64());
        creator.stop();
    }
    let node_dir = scratch();
    let node = Serve::start(node_dir.path(), &["--cluster", &nats.urls, "--max-open-books", "1000"]);
    let agent = agent();
    std::thread::sleep(Duration::from_secs(1));
    let at_rest = node.rss_mb(&agent);
    let listed = node.get(&agent, "/v1/books");
    assert_eq!(listed["books"].as_array().unwrap().len(), n_books);
    let mut rows = vec![(0usize, 0u64, at_rest, 0.0)];
    let mut first_opens = Vec::with_capacity(n_books);
    for (index, name) in names.iter().enumerate() {
        let started = Instant::now();
        let info = node.get(&agent, &format!("/v1/books/{name}"));
        first_opens.push(started.elapsed());
        assert_eq!(info["head"], 21, "{name}");
        let n_opened = index + 1;
        if [100, 500, 1_000, 2_500, 5_000, 10_000].contains(&n_opened) || n_opened == n_books {
            let status = node.get(&agent, "/v1/status");
            let n_open = status["n_open_books"].as_u64().unwrap();
            assert_eq!(n_open as usize, n_opened.min(1_000));
            let estimate = status["open_bytes"].as_u64().unwrap() as f64 / 1e6;
            rows.push((n_opened, n_open, status["rss_bytes"].as_u64().unwrap() as f64 / 1e6, estimate));
        }
    }
    rows.dedup_by_key(|row| row.0);
    // Books opened again: the first 1,000 were closed (least recently used), and
    // open from this node's files.
    let mut again = Vec::new();
    for name in names.iter().take(1_000.min(n_books)) {
        let started = Instant::now();
        assert_eq!(node.get(&agent, &format!("/v1/books/{name}"))["head"], 21);
        again.push(started.elapsed());
    }
    let on_disk: u64 =
        std::fs::read_dir(node_dir.path()).unwrap().map(|entry| entry.unwrap().metadata().unwrap().len()).sum();
    node.stop();
    let at_1000 = rows.iter().find(|row| row.1 == 1_000).copied();
    println!("\n## {n_books} books on one node (`--max-open-books 1000`; books of 20 terms, plain profile)\n");
    println!("| books opened once, in order | books open | RSS | the books' own estimate (`open_bytes`) |");
    println!("| --- | --- | --- | --- |");
    for (n_opened, n_open, rss, estimate) in &rows {
        println!("| {n_opened} | {n_open} | {rss:.0} MB | {estimate:.1} MB |");
    }
    if let Some((_, n_open, rss, estimate)) = at_1000 {
        println!(
            "\nPer open book: {:.2} MB of RSS ({rss:.0} MB − {at_rest:.0} MB at rest, over {n_open}); the estimate says {:.3} MB.",
            (rss - at_rest) / n_open as f64,
            estimate / n_open as f64
        );
    }
    println!(
        "\nOpen on demand: first open (fetched from the stream into a new file) p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; a closed book opened again from its file p50 {:.1} ms, p99 {:.1} ms. The node's files: {:.0} MB.",
        ms(percentile(&mut first_opens, 0.5)),
        ms(percentile(&mut first_opens, 0.99)),
        ms(percentile(&mut first_opens, 1.0)),
        ms(percentile(&mut again, 0.5)),
        ms(percentile(&mut again, 0.99)),
        on_disk as f64 / 1e6
    );
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    assert!(binary().exists(), "{} is missing: cargo build --release", binary().display());
    let nats = Nats::start();
    if only("append") {
        append_part(&nats);
    }
    if only("open") {
        open_part(&nats);
    }
    if only("books") {
        books_part(&nats);
    }
}
