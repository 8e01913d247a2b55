//! The translation proxy's added latency (issue 27, docs/proxy.md): a release
//! `lorebank serve --upstream` in front of a stand-in model server that lives in this
//! process, against the same requests sent straight to that stand-in in the same run.
//!
//! * The book: the 1,000 chapters of `lorebank_bench::chapters` (4.9 M chars, the book
//!   of `benches/locate.rs`) as its source text (`Book::source_import`, what
//!   `lorebank source import DIR` does), and a glossary of 300 terms: the 20 names of
//!   every chapter and 280 jieba words that occur in the 西游记 slice.
//! * The stand-in: a plain `std::net` HTTP/1.1 server on a thread per connection that
//!   reads a request (head and `Content-Length` body) and answers a fixed chat
//!   completion of about 300 bytes, with keep-alive. It does no work, so what it costs
//!   is the same on both paths.
//! * A request: a chapter's first paragraphs (3,000+ chars) in GalTransl's prompt with
//!   its own glossary of the 20 names (`chapters::request`), after a system message,
//!   not streamed; every request from another chapter.
//! * `direct`: the request POSTed to the stand-in; `proxied`: the same body POSTed to
//!   `/proxy/big/v1/chat/completions`. One client with keep-alive connections; the two
//!   alternate request by request (which goes first alternates too), so both see the
//!   same machine. The added latency is each request's proxied time minus its direct
//!   one; p50 and p99 are over the requests.
//! * Two workloads: `found` sends no header, so the chunk is searched for in the
//!   1,000 chapters; `named` sends `Lorebank-Chapter` and `Lorebank-Chunk`, so nothing
//!   is searched (the chunk is the last user message's whole text).
//! * Where the time goes: the same `found` requests in-process, on a copy of the book
//!   made before the server ran: `locate::Index::locate` alone; `Book::proxy_prepare`
//!   (locate, the previous chunk, the assembly, the system message); and
//!   `Book::proxy_record` (the receipt, the proxy record and the marker in one durable
//!   commit, then the post-check, stored in a second one).
//!
//! Every proxied answer is checked (status, the stand-in's text, context injected,
//! the chapter found), the stand-in must have received every request, the proxied
//! ones with the book's context in their system message, and the served book must
//! hold one receipt per proxied request, so a broken run cannot print a number.
//!
//! Run: `cargo build --release && cd bench && cargo bench --bench proxy` (after
//! `scripts/setup.sh`, for jieba's word list). `LOREBANK_BIN` overrides the binary;
//! `LOREBANK_BENCH_REQUESTS` sets the requests per workload (default 300, at most 495).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use book::check::CheckOptions;
use book::proxy::{Answered, Hint};
use book::Book;
use ledger_model::{Body, NewEvent};
use lorebank_bench::chapters::{book as chapters, request, NAMES};
use lorebank_bench::{binary, corpus, event, init_book, jieba_words, ranked_term, start_serve, write_options};
use matcher::{Flavour, ProfileBuilder};
use serde_json::{json, Value};

const BOOK: &str = "big";
const N_TERMS: usize = 300;
const WARMUP: usize = 5;
const TRANSLATION: &str = "Царь обезьян поклонился, и Сунь Укун вышел за ворота.";
const SYSTEM: &str = "你是一个视觉小说翻译模型。";

/// The stand-in model server: the bodies it received (the chat requests only).
struct StandIn {
    port: u16,
    received: Arc<Mutex<Vec<Vec<u8>>>>,
    connections: Arc<AtomicUsize>,
}

impl StandIn {
    fn start() -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let answer = json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 1_764_000_000, "model": "stand-in-1",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": TRANSLATION },
                          "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 2_000, "completion_tokens": 60, "total_tokens": 2_060 },
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
            answer.len()
        );
        let response: Arc<Vec<u8>> = Arc::new([head.as_bytes(), answer.as_bytes()].concat());
        let (kept, counted) = (Arc::clone(&received), Arc::clone(&connections));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                counted.fetch_add(1, Ordering::Relaxed);
                let (kept, response) = (Arc::clone(&kept), Arc::clone(&response));
                std::thread::spawn(move || serve_connection(stream, &kept, &response));
            }
        });
        StandIn { port, received, connections }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

/// Answers the requests of one connection until it closes.
fn serve_connection(stream: TcpStream, received: &Mutex<Vec<Vec<u8>>>, response: &[u8]) {
    let _ = stream.set_nodelay(true);
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        let mut length = 0usize;
        let mut first = true;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" && !first {
                break;
            }
            first = false;
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        received.lock().unwrap().push(body);
        if writer.write_all(response).is_err() {
            return;
        }
    }
}

/// `n` jieba words (two or more chars) that occur in the 西游记 slice, distinct after
/// folding and from the names.
fn words_of_the_book(n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(corpus("xiyouji-head.txt")).unwrap();
    let chars: Vec<char> = text.chars().collect();
    let mut grams = BTreeSet::new();
    for width in 2..=4 {
        for window in chars.windows(width) {
            grams.insert(window.iter().collect::<String>());
        }
    }
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let mut seen: BTreeSet<String> = NAMES.iter().map(|name| profile.fold(name)).collect();
    let words: Vec<String> = jieba_words(200_000)
        .into_iter()
        .filter(|word| grams.contains(word))
        .filter(|word| !NAMES.iter().any(|name| name.contains(word.as_str()) || word.contains(name)))
        .filter(|word| seen.insert(profile.fold(word)))
        .collect();
    assert!(words.len() >= n, "only {} jieba words occur in the slice", words.len());
    // Spread over the words found, not their first letters.
    let step = words.len() / n;
    words.into_iter().step_by(step).take(n).collect()
}

/// The book: its glossary, then its 1,000 chapters of source text.
fn write_book(path: &Path, chapters: &[(u32, String, Vec<String>)]) {
    let mut book = init_book(path);
    let mut sources: Vec<String> = NAMES.iter().map(|name| name.to_string()).collect();
    sources.extend(words_of_the_book(N_TERMS - NAMES.len()));
    let events: Vec<NewEvent> = sources
        .iter()
        .enumerate()
        .map(|(index, src)| event(Body::TermPut(ranked_term(index as u32 + 1, src.clone(), format!("Термин {index}")))))
        .collect();
    let submitted = book.submit(&events, None, Vec::new()).unwrap();
    assert!(submitted.decision.dropped.is_empty(), "{:?}", submitted.decision.dropped);
    let files: Vec<(String, Vec<u8>)> =
        chapters.iter().map(|(number, text, _)| (format!("{number:04}.txt"), text.clone().into_bytes())).collect();
    book.source_import(files, &write_options()).unwrap();
}

/// One request of the run: its chapter, the tool's body and the last user message.
struct Request {
    chapter: u32,
    body: String,
    prompt: String,
}

fn requests(chapters: &[(u32, String, Vec<String>)], numbers: impl Iterator<Item = u32>) -> Vec<Request> {
    numbers
        .map(|chapter| {
            let (prompt, _) = request(&chapters[chapter as usize - 1].2);
            let body = json!({
                "model": "deepseek-chat",
                "temperature": 0.6,
                "messages": [{ "role": "system", "content": SYSTEM }, { "role": "user", "content": prompt }],
            })
            .to_string();
            Request { chapter, body, prompt }
        })
        .collect()
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// p50 and p99 of `samples`, in ms, as `p50 X, p99 Y`.
fn summary(samples: &[Duration]) -> String {
    format!("p50 {:6.2} ms, p99 {:6.2} ms", ms(percentile(samples, 0.5)), ms(percentile(samples, 0.99)))
}

/// The difference `proxied - direct` request by request (zero when negative).
fn added(proxied: &[Duration], direct: &[Duration]) -> Vec<Duration> {
    proxied.iter().zip(direct).map(|(proxied, direct)| proxied.saturating_sub(*direct)).collect()
}

/// POSTs `body`; the time until the whole answer was read, lorebank's headers and the
/// answer.
fn post(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, String)],
    body: &str,
) -> (Duration, Vec<(String, String)>, String) {
    let started = Instant::now();
    let mut call = agent.post(url).set("Content-Type", "application/json").set("Authorization", "Bearer sk-tool");
    for (name, value) in headers {
        call = call.set(name, value);
    }
    let response = call.send_string(body).unwrap_or_else(|error| match error {
        ureq::Error::Status(status, response) => {
            panic!("POST {url}: {status}: {}", response.into_string().unwrap_or_default())
        }
        error => panic!("POST {url}: {error}"),
    });
    let kept: Vec<(String, String)> = response
        .headers_names()
        .into_iter()
        .filter(|name| name.starts_with("lorebank-"))
        .map(|name| {
            let value = response.header(&name).unwrap_or_default().to_owned();
            (name, value)
        })
        .collect();
    let text = response.into_string().unwrap();
    (started.elapsed(), kept, text)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

/// One workload: every request direct and proxied, alternating; the times of each.
fn workload(
    agent: &ureq::Agent,
    serve: &str,
    stand_in: &StandIn,
    requests: &[Request],
    named: bool,
) -> (Vec<Duration>, Vec<Duration>) {
    let direct_url = format!("{}/chat/completions", stand_in.url());
    let proxy_url = format!("{serve}/proxy/{BOOK}/v1/chat/completions");
    let mut direct = Vec::with_capacity(requests.len());
    let mut proxied = Vec::with_capacity(requests.len());
    for (index, request) in requests.iter().enumerate() {
        let headers: Vec<(&str, String)> = if named {
            vec![("Lorebank-Chapter", request.chapter.to_string()), ("Lorebank-Chunk", format!("n{index:04}"))]
        } else {
            Vec::new()
        };
        let mut go_direct = || {
            let (elapsed, _, text) = post(agent, &direct_url, &[], &request.body);
            assert!(text.contains(TRANSLATION), "{text}");
            direct.push(elapsed);
        };
        let mut go_proxied = || {
            let (elapsed, kept, text) = post(agent, &proxy_url, &headers, &request.body);
            let answer: Value = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
            assert_eq!(answer["choices"][0]["message"]["content"], TRANSLATION, "{text}");
            assert_eq!(header(&kept, "lorebank-injected"), Some("context"), "chapter {}", request.chapter);
            let chapter = request.chapter.to_string();
            assert_eq!(header(&kept, "lorebank-chapter"), Some(chapter.as_str()), "the chunk was found elsewhere");
            let key = header(&kept, "lorebank-chunk").unwrap();
            assert_eq!(key.starts_with("src-"), !named, "{key}");
            proxied.push(elapsed);
        };
        if index % 2 == 0 {
            go_direct();
            go_proxied();
        } else {
            go_proxied();
            go_direct();
        }
    }
    (direct, proxied)
}

fn report(name: &str, direct: &[Duration], proxied: &[Duration]) {
    let difference = added(proxied, direct);
    let mean = |samples: &[Duration]| ms(samples.iter().sum::<Duration>()) / samples.len() as f64;
    println!("{name}: {} requests", direct.len());
    println!("  direct   {} (mean {:.2} ms)", summary(direct), mean(direct));
    println!("  proxied  {} (mean {:.2} ms)", summary(proxied), mean(proxied));
    println!("  added    {} (mean {:.2} ms)", summary(&difference), mean(proxied) - mean(direct));
}

/// Where the time of a found request goes, in-process on `path` (a copy of the book as
/// it was before the server ran).
fn breakdown(path: &Path, chapters: &[(u32, String, Vec<String>)], requests: &[Request]) {
    let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let index = locate::Index::build(&profile, chapters.iter().map(|(n, text, _)| (*n, text.as_str()))).unwrap();
    let mut book = Book::open(path).unwrap();
    // The first call builds the book's index, as the server's first request does.
    book.proxy_prepare(&requests[0].prompt, &Hint::default(), Some(SYSTEM)).unwrap().unwrap();
    let (mut located, mut prepared, mut recorded) = (Vec::new(), Vec::new(), Vec::new());
    let (mut named, mut checked, mut synced) = (Vec::new(), Vec::new(), Vec::new());
    let scratch = path.with_extension("fsync");
    for (number, request) in requests.iter().enumerate() {
        let started = Instant::now();
        let outcome = index.locate(&request.prompt).unwrap();
        located.push(started.elapsed());
        assert!(matches!(outcome, locate::Outcome::Found { ref chunk, .. } if chunk.chapter == request.chapter));

        let started = Instant::now();
        let ready = book.proxy_prepare(&request.prompt, &Hint::default(), Some(SYSTEM)).unwrap().unwrap();
        prepared.push(started.elapsed());
        assert_eq!(ready.chunk.chapter, request.chapter);

        let answered = Answered {
            fingerprint: book::proxy::fingerprint(BOOK, &[b"", b"", request.body.as_bytes()]),
            upstream_request: book::proxy::fingerprint(BOOK, &[b"upstream", request.body.as_bytes()]),
            model: "stand-in-1".into(),
            usage: None,
            translation: TRANSLATION.into(),
            streamed: false,
        };
        let options = CheckOptions {
            record: true,
            propose: false,
            actor: "tool:proxy".into(),
            recorded_at_ms: 1_764_000_000_000,
        };
        let started = Instant::now();
        let done = book.proxy_record(&ready, &answered, &options).unwrap();
        recorded.push(started.elapsed());
        let done = done.unwrap_or_else(|| panic!("chapter {} was recorded before", request.chapter));

        // The named path's preparation (nothing searched), not recorded.
        let hint = Hint { chapter: Some(request.chapter), chunk: Some(format!("n{number:04}")) };
        let started = Instant::now();
        book.proxy_prepare(&request.prompt, &hint, Some(SYSTEM)).unwrap().unwrap();
        named.push(started.elapsed());

        // The post-check alone, not stored.
        let options = CheckOptions { record: false, ..options };
        let started = Instant::now();
        book.check(&done.receipt.to_hex(), TRANSLATION, &options).unwrap();
        checked.push(started.elapsed());

        // The baseline of a durable write: 4 KiB written and `sync_data`, beside the book.
        let started = Instant::now();
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&scratch).unwrap();
        file.write_all(&[b'x'; 4096]).unwrap();
        file.sync_data().unwrap();
        synced.push(started.elapsed());
    }
    println!("in-process, the found requests on a copy of the book:");
    println!("  locate::Index::locate  {}", summary(&located));
    println!("  Book::proxy_prepare    {}  (locate, previous chunk, assembly, system message)", summary(&prepared));
    println!("  Book::proxy_record     {}  (receipt, record, check and marker in one commit)", summary(&recorded));
    println!("  proxy_prepare, named   {}  (previous chunk, assembly, system message)", summary(&named));
    println!("  Book::check, unstored  {}  (the post-check's work without its commit)", summary(&checked));
    println!("  write + sync_data      {}  (4 KiB appended to a file beside the book)", summary(&synced));
}

fn count_receipts(path: &Path) -> usize {
    Book::open(path).unwrap().latest_receipts(None).unwrap().len()
}

/// `lorebank serve`, stopped with SIGTERM when dropped.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg("-TERM").arg(self.0.id().to_string()).status();
        let status = self.0.wait().unwrap();
        assert!(status.success(), "lorebank serve stopped with {status}");
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    assert!(
        binary().exists(),
        "{} is missing: run `cargo build --release` in the main workspace first, or set LOREBANK_BIN",
        binary().display()
    );
    let n: usize =
        std::env::var("LOREBANK_BENCH_REQUESTS").ok().and_then(|value| value.parse().ok()).unwrap_or(300).min(495);
    let chapters = chapters();
    let dir = tempfile::tempdir().unwrap();
    let library = dir.path().join("books");
    std::fs::create_dir(&library).unwrap();
    let served = library.join(format!("{BOOK}.lorebank"));
    let started = Instant::now();
    write_book(&served, &chapters);
    let local = dir.path().join("local.lorebank");
    std::fs::copy(&served, &local).unwrap();
    println!(
        "book: {} chapters, {} chars of source text, {N_TERMS} terms; written in {:.1} s",
        chapters.len(),
        chapters.iter().map(|(_, text, _)| text.chars().count()).sum::<usize>(),
        started.elapsed().as_secs_f64()
    );

    // Even chapters warm up, odd ones are measured: 2 × n of them, found then named.
    let warmup = requests(&chapters, (0..WARMUP as u32).map(|i| 2 + 2 * i));
    let found = requests(&chapters, (0..n as u32).map(|i| 1 + 2 * i));
    let named = requests(&chapters, (0..n as u32).map(|i| 1 + 2 * i));
    let chars: Vec<usize> = found.iter().map(|request| request.prompt.chars().count()).collect();
    println!(
        "requests: {n} per workload, the user message {}..{} chars (mean {})",
        chars.iter().min().unwrap(),
        chars.iter().max().unwrap(),
        chars.iter().sum::<usize>() / chars.len()
    );

    let stand_in = StandIn::start();
    let url = stand_in.url();
    let (child, base) = start_serve(&library, &["--upstream", &url, "--upstream-timeout", "30"]);
    let serve = Serve(child);
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build();
    let started = Instant::now();
    let (_, _) = workload(&agent, &base, &stand_in, &warmup, false);
    println!("warm-up: {WARMUP} requests in {:.2} s (the first builds the index)", started.elapsed().as_secs_f64());

    let (direct, proxied) = workload(&agent, &base, &stand_in, &found, false);
    report("found (no header: the chunk is searched for in 1,000 chapters)", &direct, &proxied);
    let (direct, proxied) = workload(&agent, &base, &stand_in, &named, true);
    report("named (Lorebank-Chapter and Lorebank-Chunk: no search)", &direct, &proxied);
    drop(serve);

    let bodies = stand_in.received.lock().unwrap().clone();
    let total = 2 * (WARMUP + 2 * n);
    assert_eq!(bodies.len(), total, "the stand-in received {} of {total} requests", bodies.len());
    let with_context = bodies
        .iter()
        .filter(|body| String::from_utf8_lossy(body).contains("Glossary and context for the text to translate"))
        .count();
    assert_eq!(with_context, WARMUP + 2 * n, "the proxied requests carried the book's context");
    println!("stand-in: {} requests on {} connections", bodies.len(), stand_in.connections.load(Ordering::Relaxed));
    assert_eq!(count_receipts(&served), WARMUP + 2 * n, "one receipt per proxied request");

    breakdown(&local, &chapters, &found);
    assert_eq!(count_receipts(&local), n);
}
