//! Load benchmark of `lorebank serve` (issue 10): the release binary serving a
//! 50k-term book on loopback, each workload beside the same calls made in-process
//! in the same run (clones of `Book::assembler()` used from as many threads as there
//! are clients), on a copy of the same book.
//!
//! * dry-run assemble (`record: false`), one client: the latency of a request
//!   with nothing beside it, against one thread;
//! * dry-run assemble (`record: false`), 8 clients with keep-alive connections:
//!   requests/s and p50/p99 latency, against `Assembler::assemble_chunk(.., false)`
//!   from 8 threads;
//! * recorded assembly, 64 clients, one 3,000-char chunk per request: receipts/s,
//!   against 64 threads;
//! * recorded assembly, whole chapters (8 clients, 25 chunks per request, each
//!   request one chapter): receipts/s, against `Assembler::assemble_chapter` from 8
//!   threads;
//! * memory: 1,000 small books, each opened once (`GET /v1/books/{name}`), with
//!   `--max-open-books` 100 and then 1,000: the server's RSS (`rss_bytes` of
//!   `GET /v1/status`) before, during and after, and MB per open book.
//!
//! The workloads alternate (in-process, then server) for a few rounds; each figure
//! is the median round, with the range of the rounds beside it. Client and server
//! share the machine's cores: the benchmark reports the CPU time each used, per
//! chunk (CPU time is less disturbed by other load on the machine than rates). Every
//! response is checked (status, `recorded`, the number of receipts), and at the end
//! both copies of the book must hold exactly the receipts recorded, so a broken run
//! cannot report a number.
//!
//! Run: `cargo build --release && cd bench && cargo bench --bench serve` (after
//! `scripts/setup.sh`). `LOREBANK_BIN` overrides the binary (a wrapper, such as a
//! profiler that starts the server, works too: its CPU time is then the one read, and
//! its exit status is printed instead of checked);
//! `LOREBANK_BENCH_ROUNDS` sets the rounds (default 3);
//! `LOREBANK_BENCH_WORKLOADS=alone,dry,chunks,chapters` picks the throughput workloads;
//! `LOREBANK_BENCH_SKIP_MEMORY=1` leaves the memory case out;
//! `LOREBANK_BENCH_HITS=false` asks for every answer without its hit list
//! (`?hits=false`);
//! `LOREBANK_BENCH_PIN=1` gives the server and the in-process threads one core (CPU 1)
//! and the HTTP clients the other (CPU 0), so that both sides of a ratio do their
//! work on one core and the clients' own work is not counted against the server.

use std::collections::BTreeSet;

use std::path::Path;
use std::process::{Child, Command};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use book::{Assembler, Book, Chunk};
use ledger_model::*;
use lorebank_bench::{binary, corpus, event, init_book, jieba_words, ranked_term, start_serve};
use matcher::{Flavour, ProfileBuilder};
use serde_json::json;

const N_TERMS: usize = 50_000;
const N_SMALL_BOOKS: usize = 1_000;
const CHUNK_CHARS: usize = 3_000;
const CHUNKS_PER_CHAPTER: usize = 25;
const BOOK: &str = "big";

fn term(number: usize, src: &str) -> NewEvent {
    event(Body::TermPut(ranked_term(number as u32, src, format!("Термин {number}"))))
}

/// `n` jieba words whose folded surfaces (zh profile) are distinct, so that none
/// breaks the UNIQUE rule of a book.
fn distinct_words(n: usize) -> Vec<String> {
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let mut seen = BTreeSet::new();
    let words: Vec<String> =
        jieba_words(n * 6 / 5).into_iter().filter(|word| seen.insert(profile.fold(word))).take(n).collect();
    assert_eq!(words.len(), n, "jieba gave {} distinct words", words.len());
    words
}

/// A book made the way a client makes one (`init`, then batches of terms).
fn write_book(path: &Path, words: &[String]) {
    let mut book = init_book(path);
    let events: Vec<NewEvent> = words.iter().enumerate().map(|(index, word)| term(index + 1, word)).collect();
    for batch in events.chunks(5_000) {
        let submitted = book.submit(batch, None, Vec::new()).unwrap();
        assert!(submitted.decision.dropped.is_empty());
    }
}

/// 200 chunks of 3,000 chars of 西游记, starting every 240 chars (as `benches/book.rs`).
fn chunk_texts() -> Vec<String> {
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).expect("tests/data/corpora/xiyouji-head.txt");
    let chars: Vec<char> = text.chars().collect();
    (0..200)
        .map(|index| {
            let at = (index * 240) % (chars.len() - CHUNK_CHARS);
            chars[at..at + CHUNK_CHARS].iter().collect()
        })
        .collect()
}

/// CPU seconds (user + system) used so far by process `pid` (all its threads).
fn cpu_seconds(pid: u32, ticks_per_s: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses: utime and stime are
    // the 14th and 15th fields of the line, the 12th and 13th after the name.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11..13).map_or(0, |both| both.iter().filter_map(|f| f.parse::<u64>().ok()).sum());
    ticks as f64 / ticks_per_s
}

fn ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// A running `lorebank serve`, stopped with SIGTERM when dropped.
struct Serve {
    child: Child,
    base: String,
}

impl Serve {
    fn start(dir: &Path, max_open_books: usize) -> Serve {
        let (child, base) = start_serve(dir, &["--max-open-books", &max_open_books.to_string()]);
        Serve { child, base }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn get(&self, agent: &ureq::Agent, path: &str) -> serde_json::Value {
        let response =
            agent.get(&self.url(path)).call().unwrap_or_else(|error| panic!("GET {path}: {}", describe(error)));
        serde_json::from_str(&response.into_string().unwrap()).unwrap()
    }

    fn rss_mb(&self, agent: &ureq::Agent) -> f64 {
        self.get(agent, "/v1/status")["rss_bytes"].as_u64().unwrap() as f64 / 1e6
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let status = self.child.wait().unwrap();
        // A binary given as `LOREBANK_BIN` may be a wrapper (a profiler), whose own
        // exit after TERM is not the server's: said, not failed on.
        if std::env::var_os("LOREBANK_BIN").is_some() {
            if !status.success() {
                eprintln!("LOREBANK_BIN stopped with {status} (a wrapper's exit is not the server's)");
            }
        } else {
            assert!(status.success(), "lorebank serve stopped with {status}");
        }
    }
}

fn describe(error: ureq::Error) -> String {
    match error {
        ureq::Error::Status(status, response) => format!("{status}: {}", response.into_string().unwrap_or_default()),
        other => other.to_string(),
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new().max_idle_connections_per_host(1).timeout(Duration::from_secs(120)).build()
}

/// POSTs a JSON body; returns the response text (status 200 required).
fn post(agent: &ureq::Agent, url: &str, body: &[u8]) -> String {
    let response = agent
        .post(url)
        .set("Content-Type", "application/json")
        .send_bytes(body)
        .unwrap_or_else(|error| panic!("POST {url}: {}", describe(error)));
    assert_eq!(response.status(), 200);
    response.into_string().unwrap()
}

/// What one run of a workload measured.
struct Run {
    wall: Duration,
    latencies: Vec<Duration>,
    /// Chunks assembled (receipts, when recorded).
    n_chunks: usize,
    /// CPU seconds of the server and of this process over the run.
    server_cpu: f64,
    client_cpu: f64,
}

impl Run {
    fn per_s(&self) -> f64 {
        self.n_chunks as f64 / self.wall.as_secs_f64()
    }

    fn requests_per_s(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64()
    }

    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        sorted[((sorted.len() - 1) as f64 * p).round() as usize]
    }
}

/// The core of the server and of the in-process threads with `LOREBANK_BENCH_PIN=1`.
const SERVER_CPU: usize = 1;
/// The core of the HTTP clients with `LOREBANK_BENCH_PIN=1`.
const CLIENT_CPU: usize = 0;

fn pinned() -> bool {
    std::env::var("LOREBANK_BENCH_PIN").is_ok_and(|pin| pin == "1")
}

/// Moves the calling thread (and the threads and processes it starts later) to `cpu`.
fn set_cpu(cpu: usize) {
    // SAFETY: a zeroed `cpu_set_t` is the empty set, and `sched_setaffinity(0, ..)`
    // reads the set for the calling thread only.
    let done = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(done, 0, "LOREBANK_BENCH_PIN=1 needs CPU {cpu}: {}", std::io::Error::last_os_error());
}

fn pin_clients() {
    if pinned() {
        set_cpu(CLIENT_CPU);
    }
}

/// Runs `per_thread` operations on each of `n_threads` threads, all started at once
/// after each thread's `prepare` (not timed; it may warm up). `operation` returns
/// the chunks it assembled.
fn run_threads<S>(
    n_threads: usize,
    per_thread: usize,
    server_pid: Option<u32>,
    ticks: f64,
    prepare: impl Fn(usize) -> S + Sync,
    operation: impl Fn(&mut S, usize, usize) -> usize + Sync,
) -> Run {
    let barrier = Barrier::new(n_threads + 1);
    let own = std::process::id();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n_threads)
            .map(|thread| {
                let (barrier, prepare, operation) = (&barrier, &prepare, &operation);
                scope.spawn(move || {
                    if server_pid.is_some() {
                        pin_clients();
                    }
                    let mut state = prepare(thread);
                    barrier.wait();
                    let mut latencies = Vec::with_capacity(per_thread);
                    let mut n_chunks = 0;
                    for index in 0..per_thread {
                        let started = Instant::now();
                        n_chunks += operation(&mut state, thread, index);
                        latencies.push(started.elapsed());
                    }
                    (latencies, n_chunks)
                })
            })
            .collect();
        barrier.wait();
        let started = Instant::now();
        let (server_before, client_before) = (server_pid.map(|pid| cpu_seconds(pid, ticks)), cpu_seconds(own, ticks));
        let mut latencies = Vec::new();
        let mut n_chunks = 0;
        for thread in threads {
            let (mine, n) = thread.join().unwrap();
            latencies.extend(mine);
            n_chunks += n;
        }
        let wall = started.elapsed();
        let server_cpu = server_pid.map_or(0.0, |pid| cpu_seconds(pid, ticks) - server_before.unwrap());
        Run { wall, latencies, n_chunks, server_cpu, client_cpu: cpu_seconds(own, ticks) - client_before }
    })
}

fn median_by(runs: &[Run], key: impl Fn(&Run) -> f64) -> (f64, f64, f64) {
    let mut values: Vec<f64> = runs.iter().map(key).collect();
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0], values[values.len() - 1])
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The three throughput workloads, in-process and over HTTP.
#[derive(Clone, Copy, PartialEq)]
enum Workload {
    /// One client: the latency of a request with nothing queued beside it.
    DryRunAlone,
    DryRun,
    Recorded,
    Chapters,
}

impl Workload {
    fn clients(self) -> usize {
        match self {
            Workload::DryRunAlone => 1,
            Workload::DryRun | Workload::Chapters => 8,
            Workload::Recorded => 64,
        }
    }

    /// Requests per client in one round.
    fn per_client(self) -> usize {
        match self {
            Workload::DryRunAlone => 1_000,
            Workload::DryRun => 400,
            Workload::Recorded => 50,
            Workload::Chapters => 10,
        }
    }

    fn chunks_per_request(self) -> usize {
        if self == Workload::Chapters {
            CHUNKS_PER_CHAPTER
        } else {
            1
        }
    }

    fn records(self) -> bool {
        !matches!(self, Workload::DryRun | Workload::DryRunAlone)
    }

    /// The chapter of request `index` of `client` in `round`: one chapter per
    /// chapter request, else chapters 10 to 14 (every term is in force from
    /// chapter 7 on).
    fn chapter(self, round: usize, client: usize, index: usize) -> u32 {
        match self {
            Workload::Chapters => (1_000 + (round * 100 + client) * 100 + index) as u32,
            _ => 10 + (index % 5) as u32,
        }
    }

    fn key(self, round: usize, client: usize, index: usize) -> String {
        format!("r{round}-c{client}-q{index}")
    }
}

/// The first chunk text of request `index` of `client`.
fn text_index(client: usize, index: usize) -> usize {
    client * 7 + index * 3
}

fn in_process(assembler: &Assembler, texts: &[String], workload: Workload, round: usize, ticks: f64) -> Run {
    run_threads(
        workload.clients(),
        workload.per_client(),
        None,
        ticks,
        |client| {
            let assembler = assembler.clone();
            assembler.assemble_chunk(10, "warm", &texts[client], None, false).unwrap();
            assembler
        },
        |assembler, client, index| {
            let chapter = workload.chapter(round, client, index);
            let key = workload.key(round, client, index);
            let first = text_index(client, index);
            match workload {
                Workload::Chapters => {
                    let chunks: Vec<Chunk> = (0..CHUNKS_PER_CHAPTER)
                        .map(|k| Chunk { key: format!("{key}-k{k}"), text: texts[(first + k) % texts.len()].clone() })
                        .collect();
                    let assembled = assembler.assemble_chapter(chapter, &chunks, None, true).unwrap();
                    assert!(assembled.iter().all(|one| !one.assembly.hits.is_empty()));
                    assembled.len()
                }
                _ => {
                    let text = &texts[first % texts.len()];
                    let assembled = assembler.assemble_chunk(chapter, &key, text, None, workload.records()).unwrap();
                    assert!(!assembled.assembly.hits.is_empty());
                    1
                }
            }
        },
    )
}

/// `?hits=false` on every assembly request when `LOREBANK_BENCH_HITS=false`: the
/// lean answer of a pipeline that wants the context and receipt, not the hit list.
fn lean() -> bool {
    std::env::var("LOREBANK_BENCH_HITS").is_ok_and(|hits| hits == "false")
}

fn over_http(serve: &Serve, texts: &[String], workload: Workload, round: usize, ticks: f64) -> Run {
    let query = if lean() { "?hits=false" } else { "" };
    let chunk_url = serve.url(&format!("/v1/books/{BOOK}/assemble{query}"));
    run_threads(
        workload.clients(),
        workload.per_client(),
        Some(serve.pid()),
        ticks,
        |client| {
            // A keep-alive connection, warmed by one dry run; then every request
            // body of this client, encoded before the clock starts.
            let agent = agent();
            let warm = json!({ "chapter": 10, "chunk": "warm", "text": texts[client], "record": false });
            post(&agent, &chunk_url, warm.to_string().as_bytes());
            let bodies: Vec<(String, Vec<u8>)> = (0..workload.per_client())
                .map(|index| {
                    let chapter = workload.chapter(round, client, index);
                    let key = workload.key(round, client, index);
                    let first = text_index(client, index);
                    match workload {
                        Workload::Chapters => {
                            let chunks: Vec<_> = (0..CHUNKS_PER_CHAPTER)
                                .map(|k| json!({ "key": format!("{key}-k{k}"), "text": texts[(first + k) % texts.len()] }))
                                .collect();
                            let url = serve.url(&format!("/v1/books/{BOOK}/chapters/{chapter}/assemble{query}"));
                            (url, json!({ "chunks": chunks, "record": true }).to_string().into_bytes())
                        }
                        _ => {
                            let body = json!({
                                "chapter": chapter,
                                "chunk": key,
                                "text": texts[first % texts.len()],
                                "record": workload.records(),
                            });
                            (chunk_url.clone(), body.to_string().into_bytes())
                        }
                    }
                })
                .collect();
            (agent, bodies)
        },
        |(agent, bodies), _, index| {
            let (url, body) = &bodies[index];
            let text = post(agent, url, body);
            let recorded = if workload.records() { "\"recorded\":true" } else { "\"recorded\":false" };
            assert!(text.contains(recorded), "{}", &text[..text.len().min(300)]);
            assert_eq!(text.contains("\"hits\":"), !lean(), "the hit list is left out exactly when asked");
            let n_receipts = text.matches("\"receipt\":\"").count();
            assert_eq!(n_receipts, workload.chunks_per_request(), "receipts in one response");
            n_receipts
        },
    )
}

/// Opens each of `n_books` books once with `--max-open-books max_open`; returns the
/// rows of the memory table.
fn memory(dir: &Path, max_open: usize, n_books: usize) -> (Vec<(usize, usize, f64)>, Duration, Duration) {
    let serve = Serve::start(dir, max_open);
    let agent = agent();
    let mut rows = vec![(0, 0, serve.rss_mb(&agent))];
    let mut opens = Vec::with_capacity(n_books);
    for index in 0..n_books {
        let name = format!("b{index:04}");
        let started = Instant::now();
        let info = serve.get(&agent, &format!("/v1/books/{name}"));
        opens.push(started.elapsed());
        assert_eq!(info["book"], name.as_str());
        assert!(info["head"].as_u64().unwrap() > 1);
        let n_opened = index + 1;
        if [10, 50, 100, 250, 500, 750, 1_000].contains(&n_opened) || n_opened == n_books {
            let status = serve.get(&agent, "/v1/status");
            let n_open = status["n_open_books"].as_u64().unwrap() as usize;
            assert_eq!(n_open, n_opened.min(max_open), "books open after {n_opened} opens");
            rows.push((n_opened, n_open, status["rss_bytes"].as_u64().unwrap() as f64 / 1e6));
        }
    }
    rows.dedup_by_key(|row| row.0);
    opens.sort_unstable();
    (rows, opens[opens.len() / 2], opens[(opens.len() - 1) * 99 / 100])
}

fn main() {
    assert!(binary().exists(), "{} is missing: run `cargo build --release` first", binary().display());
    let ticks = ticks_per_second();
    let rounds: usize = std::env::var("LOREBANK_BENCH_ROUNDS").map_or(3, |rounds| rounds.parse().unwrap());
    let dir = tempfile::Builder::new().prefix("lorebank-bench").tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let library = dir.path().join("library");
    std::fs::create_dir(&library).unwrap();
    let words = distinct_words(N_TERMS);
    let texts = chunk_texts();

    // The 50k-term book, and a copy for the in-process baseline.
    let started = Instant::now();
    let served = library.join(format!("{BOOK}.lorebank"));
    write_book(&served, &words);
    let local = dir.path().join("local.lorebank");
    std::fs::copy(&served, &local).unwrap();
    eprintln!(
        "50k-term book written in {:.1} s ({:.1} MB)",
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&served).unwrap().len() as f64 / 1e6
    );

    if pinned() {
        // The server inherits this thread's core, and so do the in-process threads.
        set_cpu(SERVER_CPU);
    }
    let mut book = Book::open(&local).unwrap();
    let assembler = book.assembler().unwrap();
    let serve = Serve::start(&library, 64);
    let workloads: Vec<Workload> = [
        ("alone", Workload::DryRunAlone),
        ("dry", Workload::DryRun),
        ("chunks", Workload::Recorded),
        ("chapters", Workload::Chapters),
    ]
    .into_iter()
    .filter(|(name, _)| {
        std::env::var("LOREBANK_BENCH_WORKLOADS").map_or(true, |names| names.split(',').any(|n| n == *name))
    })
    .map(|(_, workload)| workload)
    .collect();
    let mut runs: Vec<(Vec<Run>, Vec<Run>)> = workloads.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    for round in 0..rounds {
        for (index, &workload) in workloads.iter().enumerate() {
            let local_run = in_process(&assembler, &texts, workload, round, ticks);
            let http_run = over_http(&serve, &texts, workload, round, ticks);
            eprintln!(
                "round {round}, workload {index}: in-process {:.0}/s, server {:.0}/s (p99 {:.2} ms)",
                local_run.per_s(),
                http_run.per_s(),
                ms(http_run.percentile(0.99))
            );
            runs[index].0.push(local_run);
            runs[index].1.push(http_run);
        }
    }
    let load_after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    // What one request carries.
    let request = json!({ "chapter": 10, "chunk": "size", "text": texts[0], "record": false }).to_string();
    let response = post(&agent(), &serve.url(&format!("/v1/books/{BOOK}/assemble")), request.as_bytes());
    let parsed: serde_json::Value = serde_json::from_str(&response).unwrap();
    let sizes = format!(
        "One dry-run request: {:.1} kB of JSON in (a {CHUNK_CHARS}-char chunk), {:.1} kB out ({} hits, {} injected lines, a context of {:.1} kB). Server RSS with the 50k-term book open, after the rounds: {:.0} MB.",
        request.len() as f64 / 1e3,
        response.len() as f64 / 1e3,
        parsed["hits"].as_array().unwrap().len(),
        parsed["injected"].as_array().unwrap().len(),
        parsed["context"].as_str().unwrap().len() as f64 / 1e3,
        serve.rss_mb(&agent()),
    );
    drop(serve);

    // Both copies hold exactly the receipts recorded.
    let recorded: usize = workloads
        .iter()
        .filter(|workload| workload.records())
        .map(|&workload| rounds * workload.clients() * workload.per_client() * workload.chunks_per_request())
        .sum();
    assert_eq!(book.ledger().filed(None).unwrap().len(), recorded, "receipts filed in-process");
    drop((assembler, book));
    let book = Book::open(&served).unwrap();
    assert_eq!(book.ledger().filed(None).unwrap().len(), recorded, "receipts filed by the server");
    drop(book);

    println!("Load average before / after the throughput rounds: {} / {}", load_before.trim(), load_after.trim());
    if pinned() {
        println!(
            "Pinned: the server and the in-process threads on CPU {SERVER_CPU}, the HTTP clients on CPU {CLIENT_CPU}."
        );
    }
    println!("{sizes}");
    println!();
    println!(
        "| workload ({rounds} rounds: median [range]) | server | in-process, same run | server / in-process | CPU per chunk: server + client / in-process |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (index, &workload) in workloads.iter().enumerate() {
        let (local, http) = &runs[index];
        let (local_rate, local_low, local_high) = median_by(local, Run::per_s);
        let (http_rate, http_low, http_high) = median_by(http, Run::per_s);
        let (ratio, ratio_low, ratio_high) = {
            let mut ratios: Vec<f64> = local.iter().zip(http).map(|(l, h)| h.per_s() / l.per_s()).collect();
            ratios.sort_by(f64::total_cmp);
            (ratios[ratios.len() / 2], ratios[0], ratios[ratios.len() - 1])
        };
        let (p50, ..) = median_by(http, |run| ms(run.percentile(0.5)));
        let (p99, p99_low, p99_high) = median_by(http, |run| ms(run.percentile(0.99)));
        let (local_p50, ..) = median_by(local, |run| ms(run.percentile(0.5)));
        let (local_p99, ..) = median_by(local, |run| ms(run.percentile(0.99)));
        let per_chunk_us = |cpu: f64, run: &Run| cpu / run.n_chunks as f64 * 1e6;
        let (server_us, ..) = median_by(http, |run| per_chunk_us(run.server_cpu, run));
        let (client_us, ..) = median_by(http, |run| per_chunk_us(run.client_cpu, run));
        let (local_us, ..) = median_by(local, |run| per_chunk_us(run.client_cpu, run));
        let (label, unit) = match workload {
            Workload::DryRunAlone => ("dry-run assemble, 1 client, one chunk per request".to_owned(), "requests/s"),
            Workload::DryRun => ("dry-run assemble, 8 clients, one chunk per request".to_owned(), "requests/s"),
            Workload::Recorded => ("recorded assembly, 64 clients, one chunk per request".to_owned(), "receipts/s"),
            Workload::Chapters => (
                format!("recorded assembly, 8 clients, one chapter of {CHUNKS_PER_CHAPTER} chunks per request"),
                "receipts/s",
            ),
        };
        let requests = if workload == Workload::Chapters {
            format!(" ({:.0} requests/s)", median_by(http, Run::requests_per_s).0)
        } else {
            String::new()
        };
        println!(
            "| {label} | {http_rate:.0} {unit} [{http_low:.0}–{http_high:.0}]{requests}; p50 {p50:.2} ms, p99 {p99:.2} ms [{p99_low:.2}–{p99_high:.2}] | {local_rate:.0} {unit} [{local_low:.0}–{local_high:.0}]; p50 {local_p50:.2} ms, p99 {local_p99:.2} ms | {ratio:.2}× [{ratio_low:.2}–{ratio_high:.2}] | {server_us:.0} + {client_us:.0} µs / {local_us:.0} µs |"
        );
    }

    if std::env::var_os("LOREBANK_BENCH_SKIP_MEMORY").is_some() {
        return;
    }
    // --- memory: 1,000 small books (init and 200 terms each), each opened once ---
    let shelf = dir.path().join("shelf");
    std::fs::create_dir(&shelf).unwrap();
    let template = dir.path().join("small.lorebank");
    write_book(&template, &words[..200]);
    let template_mb = std::fs::metadata(&template).unwrap().len() as f64 / 1e6;
    for index in 0..N_SMALL_BOOKS {
        std::fs::copy(&template, shelf.join(format!("b{index:04}.lorebank"))).unwrap();
    }
    println!();
    println!("{N_SMALL_BOOKS} books of 200 terms ({template_mb:.1} MB each), each opened once (`GET /v1/books/{{name}}`, one client):");
    println!();
    println!("| `--max-open-books` | RSS after n opens (books open) | open p50 / p99 | MB per open book |");
    println!("| --- | --- | --- | --- |");
    for max_open in [100, N_SMALL_BOOKS] {
        let (rows, p50, p99) = memory(&shelf, max_open, N_SMALL_BOOKS);
        let base = rows[0].2;
        let peak_open = rows.iter().map(|row| row.1).max().unwrap();
        let at_peak = rows.iter().find(|row| row.1 == peak_open).unwrap().2;
        let cells: Vec<String> = rows.iter().map(|(n, open, rss)| format!("{n}: {rss:.0} MB ({open})")).collect();
        println!(
            "| {max_open} | {} | {:.1} / {:.1} ms | {:.2} ({peak_open} open: {at_peak:.0} MB − {base:.0} MB at start) |",
            cells.join(", "),
            ms(p50),
            ms(p99),
            (at_peak - base) / peak_open as f64
        );
    }
}
