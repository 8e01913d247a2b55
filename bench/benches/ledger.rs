//! Ledger write-path benchmark: durable single-append latency against a raw
//! `write` + `fsync` baseline, and batched / group-committed throughput against SQLite
//! (WAL, `synchronous=FULL`), all on files in one directory of the same disk.
//!
//! Run: `cd bench && CARGO_TARGET_DIR=/work/target-bench cargo bench --bench ledger`
//!
//! A plain `harness = false` main with its own timing: every case runs several
//! rounds, interleaved with the engines it is compared to so that background load
//! from other builds hits all of them alike, and prints medians (and p99 for
//! latencies). Every case checks the event count it wrote (ledger head and chain,
//! SQLite row count and bytes) before its number is used, so a broken run panics
//! instead of reporting.
//!
//! Environment:
//! * `LEDGER_BENCH_DIR`: parent of the scratch directory (default: the cargo target
//!   directory this binary was built in, so it is on the same disk as the project;
//!   `/tmp` may be a tmpfs on other machines).
//! * `LEDGER_BENCH_QUICK=1`: a short smoke run (small counts, one round), numbers
//!   not meaningful.
//! * `LEDGER_BENCH_SKIP_LATENCY=1`: leaves out case 1 (for profiling the throughput
//!   case alone).
//! * `LEDGER_BENCH_ONLY_BIG=1`: runs only the sequential case with the largest batches
//!   (1,000 per batch), for profiling the writer's loop; the concurrent case and the
//!   smaller batches are left out.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ledger::Ledger;
use ledger_model::record::{self, HEADER_BYTES, SCHEMA_CURRENT};
use ledger_model::{
    Body, Gender, Hash32, KeyLogic, NewEvent, RecordId, RecordKind, SecondaryKeys, Seq, Status, TermPut, Window,
};

// ---------------------------------------------------------------------------------
// Parameters

struct Params {
    /// Rounds of every case (medians are over rounds or over all samples).
    rounds: usize,
    /// Single appends per round in the latency case.
    latency_ops: usize,
    /// Warm-up appends before the latency case (not recorded).
    latency_warmup: usize,
    /// (events per batch, batches per round) of the sequential throughput case.
    batch_cases: Vec<(usize, usize)>,
    /// Threads and 1-event appends per thread of the concurrent case.
    threads: usize,
    per_thread: usize,
}

impl Params {
    fn new(quick: bool) -> Params {
        if quick {
            Params {
                rounds: 1,
                latency_ops: 100,
                latency_warmup: 10,
                batch_cases: vec![(1, 100), (64, 10), (1000, 5)],
                threads: 8,
                per_thread: 20,
            }
        } else {
            Params {
                rounds: 7,
                latency_ops: 3000,
                latency_warmup: 200,
                batch_cases: vec![(1, 3000), (64, 250), (1000, 100)],
                threads: 8,
                per_thread: 500,
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Data

/// A realistic term put, shaped like the golden `term_put` fixture (~190 payload bytes:
/// Chinese source, Russian target with declensions, a note, secondary keys).
fn term_put(number: u32) -> NewEvent {
    let id = |n: u32| RecordId::new(RecordKind::Term, n).unwrap();
    NewEvent {
        recorded_at_ms: 1_764_000_000_000 + u64::from(number),
        actor: "human:anna".into(),
        source: format!("ch{:04}#p{:02}", number / 40 % 10_000 + 1, number % 40 + 1),
        body: Body::TermPut(TermPut {
            // 1000..61000: every id encodes to the same length, so every record has one size.
            id: id(1000 + number % 60_000),
            src: "萧炎".into(),
            sense: Some("person".into()),
            dst: "Сяо Янь".into(),
            kind: Some("character".into()),
            gender: Some(Gender::Masculine),
            decl: vec!["Сяо Яня".into(), "Сяо Яню".into()],
            speech: Some("дерзко, коротко".into()),
            note: Some("главный герой".into()),
            window: Window { since: 1, until: Some(120) },
            status: Status::Approved,
            priority: -3,
            constant: true,
            secondary: Some(SecondaryKeys { logic: KeyLogic::NotAll, keys: vec!["斗气".into(), "药老".into()] }),
            supersedes: Some(id(7)),
            owner: None,
            owner_role: None,
            release_to: None,
            note_release_to: None,
        }),
    }
}

/// `n` events and, for the engines that store opaque bytes, the exact record bytes the
/// ledger stores for them (header ‖ payload, chained from genesis).
fn dataset(n: usize) -> (Vec<NewEvent>, Vec<Vec<u8>>) {
    let events: Vec<NewEvent> = (0..n as u32).map(term_put).collect();
    let mut prev = Hash32::GENESIS;
    let records = events
        .iter()
        .enumerate()
        .map(|(index, event)| {
            let payload = event.encode().unwrap();
            let (bytes, hash) = record::seal(Seq(index as u64 + 1), prev, SCHEMA_CURRENT, &payload);
            prev = hash;
            bytes
        })
        .collect();
    (events, records)
}

// ---------------------------------------------------------------------------------
// Statistics

fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty());
    let rank = (p / 100.0 * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut out = values.to_vec();
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

fn median(values: &[f64]) -> f64 {
    percentile(&sorted(values), 50.0)
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

// ---------------------------------------------------------------------------------
// Scratch directory

fn scratch_parent() -> PathBuf {
    if let Some(dir) = std::env::var_os("LEDGER_BENCH_DIR") {
        return PathBuf::from(dir);
    }
    // target/<profile>/deps/ledger-<hash>  →  target/
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors().nth(3).expect("binary under a cargo target dir").to_owned()
}

/// The filesystem line of `df` for `path`, for the report.
fn df(path: &Path) -> String {
    std::process::Command::new("df")
        .args(["-hT"])
        .arg(path)
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.lines().nth(1).map(str::to_owned))
        .unwrap_or_else(|| "(df unavailable)".into())
}

// ---------------------------------------------------------------------------------
// Raw baselines and engines

/// A file written like a log: each op writes the record bytes at the end, then syncs.
struct RawLog {
    file: File,
    all: bool,
    n_bytes: u64,
}

impl RawLog {
    fn create(path: &Path, all: bool) -> RawLog {
        let file = OpenOptions::new().create_new(true).append(true).open(path).unwrap();
        file.sync_all().unwrap();
        RawLog { file, all, n_bytes: 0 }
    }

    fn append(&mut self, bytes: &[u8]) {
        self.file.write_all(bytes).unwrap();
        if self.all {
            self.file.sync_all().unwrap();
        } else {
            self.file.sync_data().unwrap();
        }
        self.n_bytes += bytes.len() as u64;
    }

    fn check(&self, n_ops: usize, record_len: usize) {
        assert_eq!(self.n_bytes, (n_ops * record_len) as u64);
        assert_eq!(self.file.metadata().unwrap().len(), self.n_bytes, "raw log length");
    }
}

/// The floor: the same bytes overwritten in place at offset 0 (no size change), then
/// `sync_data`. Like a page rewrite in a preallocated file.
struct RawOverwrite {
    file: File,
    n_ops: usize,
}

impl RawOverwrite {
    fn create(path: &Path, record_len: usize) -> RawOverwrite {
        let mut file = OpenOptions::new().create_new(true).read(true).write(true).open(path).unwrap();
        file.write_all(&vec![0u8; record_len]).unwrap();
        file.sync_all().unwrap();
        RawOverwrite { file, n_ops: 0 }
    }

    fn write(&mut self, bytes: &[u8]) {
        self.file.seek(SeekFrom::Start(0)).unwrap();
        self.file.write_all(bytes).unwrap();
        self.file.sync_data().unwrap();
        self.n_ops += 1;
    }
}

/// redb alone, in the ledger's layout: `events` (`u64 → &[u8]`) plus a 40-byte `head`
/// in `meta`, one durable commit per batch, the record bytes sealed beforehand.
/// Separates redb's own cost from the ledger's (thread hop, encode, seal, re-open).
const BARE_EVENTS: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("events");
const BARE_META: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");

struct BareRedb {
    db: redb::Database,
    next: u64,
}

impl BareRedb {
    fn create(path: &Path) -> BareRedb {
        let db = redb::Database::create(path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(BARE_EVENTS).unwrap();
        txn.open_table(BARE_META).unwrap().insert("head", [0u8; 40].as_slice()).unwrap();
        txn.commit().unwrap();
        BareRedb { db, next: 1 }
    }

    fn append(&mut self, batch: &[Vec<u8>]) {
        let txn = self.db.begin_write().unwrap();
        {
            let mut events = txn.open_table(BARE_EVENTS).unwrap();
            for bytes in batch {
                events.insert(self.next, bytes.as_slice()).unwrap();
                self.next += 1;
            }
            let mut head = [0u8; 40];
            head[..8].copy_from_slice(&(self.next - 1).to_le_bytes());
            txn.open_table(BARE_META).unwrap().insert("head", head.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }

    fn check(&self, n_events: usize) {
        use redb::{ReadableDatabase, ReadableTableMetadata};
        let txn = self.db.begin_read().unwrap();
        let table = txn.open_table(BARE_EVENTS).unwrap();
        assert_eq!(table.len().unwrap(), n_events as u64, "bare redb rows");
        let head = txn.open_table(BARE_META).unwrap().get("head").unwrap().unwrap().value()[..8].to_vec();
        assert_eq!(head, (n_events as u64).to_le_bytes(), "bare redb head");
    }
}

struct Sqlite {
    conn: rusqlite::Connection,
    next: i64,
}

impl Sqlite {
    fn create(path: &Path) -> Sqlite {
        let conn = rusqlite::Connection::open(path).unwrap();
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0)).unwrap();
        assert_eq!(mode.to_lowercase(), "wal");
        conn.execute_batch("PRAGMA synchronous=FULL;").unwrap();
        let sync: i64 = conn.query_row("PRAGMA synchronous", [], |row| row.get(0)).unwrap();
        assert_eq!(sync, 2, "synchronous=FULL");
        conn.execute_batch("CREATE TABLE events (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL);").unwrap();
        Sqlite { conn, next: 1 }
    }

    /// One transaction for the whole batch.
    fn append(&mut self, batch: &[Vec<u8>]) {
        let txn = self.conn.transaction().unwrap();
        {
            let mut insert = txn.prepare_cached("INSERT INTO events (seq, bytes) VALUES (?1, ?2)").unwrap();
            for bytes in batch {
                insert.execute(rusqlite::params![self.next, bytes]).unwrap();
                self.next += 1;
            }
        }
        txn.commit().unwrap();
    }

    fn check(conn: &rusqlite::Connection, n_events: usize, n_bytes: usize) {
        let (count, max, bytes): (i64, i64, i64) = conn
            .query_row(
                "SELECT count(*), coalesce(max(seq), 0), coalesce(sum(length(bytes)), 0) FROM events",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .unwrap();
        assert_eq!((count, max, bytes), (n_events as i64, n_events as i64, n_bytes as i64), "sqlite rows");
    }
}

fn check_ledger(ledger: &Ledger, n_events: usize) {
    assert_eq!(ledger.head().unwrap().seq, Seq(n_events as u64), "ledger head");
    let report = ledger.verify().unwrap();
    assert_eq!(report.n_events, n_events as u64, "ledger verified events");
}

// ---------------------------------------------------------------------------------
// Case 1: single durable append latency

struct Latency {
    name: &'static str,
    samples: Vec<f64>,
    round_medians: Vec<f64>,
}

impl Latency {
    fn new(name: &'static str) -> Latency {
        Latency { name, samples: Vec::new(), round_medians: Vec::new() }
    }
}

fn latency_case(dir: &Path, params: &Params, events: &[NewEvent], records: &[Vec<u8>]) -> Vec<Latency> {
    let record_len = records[0].len();
    let n_total = params.latency_warmup + params.rounds * params.latency_ops;
    assert!(events.len() >= n_total);
    // The fixed-size comparisons need one length; the generated events all have it.
    assert!(records[..n_total].iter().all(|r| r.len() == record_len));

    let ledger = Ledger::create(&dir.join("latency.lorebank")).unwrap();
    let mut bare = BareRedb::create(&dir.join("latency.redb"));
    let mut raw_data = RawLog::create(&dir.join("latency-fdatasync.log"), false);
    let mut raw_all = RawLog::create(&dir.join("latency-fsync.log"), true);
    let mut raw_over = RawOverwrite::create(&dir.join("latency-overwrite.bin"), record_len);

    let mut results = [
        Latency::new("lorebank append (1 event)"),
        Latency::new("redb bare commit (1 event)"),
        Latency::new("raw append + sync_data"),
        Latency::new("raw append + sync_all"),
        Latency::new("raw overwrite + sync_data"),
    ];
    let mut head = Seq::ZERO;
    let mut op = |engine: usize, index: usize, head: &mut Seq| -> Duration {
        let start = Instant::now();
        match engine {
            0 => {
                let appended = ledger.append(std::slice::from_ref(&events[index]), Some(*head)).unwrap();
                let elapsed = start.elapsed();
                assert_eq!(appended.last, head.next());
                *head = appended.last;
                return elapsed;
            }
            1 => bare.append(std::slice::from_ref(&records[index])),
            2 => raw_data.append(&records[index]),
            3 => raw_all.append(&records[index]),
            _ => raw_over.write(&records[index]),
        }
        start.elapsed()
    };
    let n_engines = results.len();
    for index in 0..params.latency_warmup {
        for engine in 0..n_engines {
            op(engine, index, &mut head);
        }
    }
    for round in 0..params.rounds {
        let mut round_samples = vec![Vec::with_capacity(params.latency_ops); n_engines];
        for i in 0..params.latency_ops {
            let index = params.latency_warmup + round * params.latency_ops + i;
            // Interleave op by op, rotating the order, so every engine sees the same load.
            for k in 0..n_engines {
                let engine = (i + k) % n_engines;
                round_samples[engine].push(micros(op(engine, index, &mut head)));
            }
        }
        for (result, samples) in results.iter_mut().zip(round_samples) {
            result.round_medians.push(median(&samples));
            result.samples.extend(samples);
        }
    }
    check_ledger(&ledger, n_total);
    bare.check(n_total);
    raw_data.check(n_total, record_len);
    raw_all.check(n_total, record_len);
    assert_eq!(raw_over.n_ops, n_total);
    results.into()
}

// ---------------------------------------------------------------------------------
// Case 2: throughput

/// Events/s of each round.
struct Throughput {
    name: String,
    rounds: Vec<f64>,
}

/// One round of the sequential case: the three engines, each on a fresh file, take the
/// same batches in turn (batch by batch, rotating who goes first), so background load
/// hits them alike. Returns events/s of lorebank, SQLite and bare redb, each over the
/// sum of its own append times.
fn sequential_round(
    dir: &Path,
    tag: &str,
    events: &[NewEvent],
    records: &[Vec<u8>],
    batch: usize,
    n_batches: usize,
) -> [f64; 3] {
    let n = batch * n_batches;
    let ledger = Ledger::create(&dir.join(format!("{tag}.lorebank"))).unwrap();
    let mut sqlite = Sqlite::create(&dir.join(format!("{tag}.sqlite")));
    let mut bare = BareRedb::create(&dir.join(format!("{tag}.redb")));
    let mut spent = [Duration::ZERO; 3];
    for index in 0..n_batches {
        let range = index * batch..(index + 1) * batch;
        for k in 0..3 {
            let engine = (index + k) % 3;
            let start = Instant::now();
            match engine {
                0 => {
                    let appended = ledger.append(&events[range.clone()], None).unwrap();
                    spent[0] += start.elapsed();
                    assert_eq!(appended.last, Seq(range.end as u64));
                    continue;
                }
                1 => sqlite.append(&records[range.clone()]),
                _ => bare.append(&records[range.clone()]),
            }
            spent[engine] += start.elapsed();
        }
    }
    check_ledger(&ledger, n);
    Sqlite::check(&sqlite.conn, n, records[..n].iter().map(Vec::len).sum());
    bare.check(n);
    spent.map(|d| n as f64 / d.as_secs_f64())
}

fn ledger_concurrent(path: &Path, events: &[NewEvent], threads: usize, per_thread: usize) -> f64 {
    let ledger = Ledger::create(path).unwrap();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let ledger = &ledger;
            let mine = &events[thread * per_thread..(thread + 1) * per_thread];
            scope.spawn(move || {
                for event in mine {
                    ledger.append(std::slice::from_ref(event), None).unwrap();
                }
            });
        }
    });
    let elapsed = start.elapsed();
    check_ledger(&ledger, threads * per_thread);
    (threads * per_thread) as f64 / elapsed.as_secs_f64()
}

/// SQLite has no group commit: the threads share one connection behind a mutex (what
/// an application would do), one transaction and one WAL fsync per event.
fn sqlite_concurrent(path: &Path, records: &[Vec<u8>], threads: usize, per_thread: usize) -> f64 {
    let sqlite = Mutex::new(Sqlite::create(path));
    let start = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let sqlite = &sqlite;
            let mine = &records[thread * per_thread..(thread + 1) * per_thread];
            scope.spawn(move || {
                for record in mine {
                    sqlite.lock().unwrap().append(std::slice::from_ref(record));
                }
            });
        }
    });
    let elapsed = start.elapsed();
    let sqlite = sqlite.into_inner().unwrap();
    let n = threads * per_thread;
    Sqlite::check(&sqlite.conn, n, records[..n].iter().map(Vec::len).sum());
    n as f64 / elapsed.as_secs_f64()
}

fn throughput_case(dir: &Path, params: &Params, events: &[NewEvent], records: &[Vec<u8>]) -> Vec<Throughput> {
    let mut results: Vec<Throughput> = Vec::new();
    let mut slot = |name: String, value: f64| match results.iter_mut().find(|t| t.name == name) {
        Some(t) => t.rounds.push(value),
        None => results.push(Throughput { name, rounds: vec![value] }),
    };
    for round in 0..params.rounds {
        for &(batch, n_batches) in &params.batch_cases {
            let [l, q, r] = sequential_round(dir, &format!("tp-r{round}-b{batch}"), events, records, batch, n_batches);
            slot(format!("lorebank b={batch}"), l);
            slot(format!("sqlite b={batch}"), q);
            slot(format!("redb-bare b={batch}"), r);
        }
        let (threads, per_thread) = (params.threads, params.per_thread);
        // `LEDGER_BENCH_ONLY_BIG` leaves the concurrent case out (no threads).
        if threads > 0 {
            let v = ledger_concurrent(&dir.join(format!("cc-r{round}.lorebank")), events, threads, per_thread);
            slot(format!("lorebank {threads}thr×1"), v);
            let v = sqlite_concurrent(&dir.join(format!("cc-r{round}.sqlite")), records, threads, per_thread);
            slot(format!("sqlite {threads}thr×1"), v);
        }
        // Keep the disk use small: every round starts from fresh files anyway.
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("tp-") || name.starts_with("cc-") {
                std::fs::remove_file(path).unwrap();
            }
        }
    }
    results
}

// ---------------------------------------------------------------------------------

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let quick = std::env::var_os("LEDGER_BENCH_QUICK").is_some_and(|v| v != "0");
    let mut params = Params::new(quick);
    let only_big = std::env::var_os("LEDGER_BENCH_ONLY_BIG").is_some_and(|v| v != "0");
    if only_big {
        let big = params.batch_cases.iter().copied().max().unwrap();
        params.batch_cases = vec![big];
        params.threads = 0;
    }
    let parent = scratch_parent();
    std::fs::create_dir_all(&parent).unwrap();
    let scratch = tempfile::Builder::new().prefix("ledger-bench-").tempdir_in(&parent).unwrap();
    let dir = scratch.path();
    let started = Instant::now();

    let n_latency = params.latency_warmup + params.rounds * params.latency_ops;
    let n_tp =
        params.batch_cases.iter().map(|&(b, n)| b * n).chain([params.threads * params.per_thread]).max().unwrap();
    let (events, records) = dataset(n_latency.max(n_tp));
    let payload_len = records[0].len() - HEADER_BYTES;

    println!("ledger benchmark{}", if quick { " (QUICK: numbers not meaningful)" } else { "" });
    println!("scratch dir: {}", dir.display());
    println!("filesystem:  {}", df(dir));
    println!("cpus:        {}", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0));
    println!(
        "event:       TermPut, payload {payload_len} B, stored record {} B (80 B header); raw baselines and SQLite write the record bytes",
        records[0].len()
    );
    println!();

    // Case 1
    if !only_big && std::env::var_os("LEDGER_BENCH_SKIP_LATENCY").is_none() {
        println!(
            "== 1. single durable append latency (µs; {} rounds × {} ops, interleaved op by op, after {} warm-up ops)",
            params.rounds, params.latency_ops, params.latency_warmup
        );
        let latency = latency_case(dir, &params, &events, &records);
        println!(
            "{:<30} {:>9} {:>9} {:>9} {:>9}   {:<24}",
            "case", "median", "p90", "p99", "max", "round medians min–max"
        );
        for l in &latency {
            let s = sorted(&l.samples);
            let rm = sorted(&l.round_medians);
            println!(
                "{:<30} {:>9.1} {:>9.1} {:>9.1} {:>9.1}   {:.1}–{:.1}",
                l.name,
                percentile(&s, 50.0),
                percentile(&s, 90.0),
                percentile(&s, 99.0),
                s[s.len() - 1],
                rm[0],
                rm[rm.len() - 1]
            );
        }
        let stat = |name: &str, p: f64| {
            let l = latency.iter().find(|l| l.name.starts_with(name)).unwrap();
            percentile(&sorted(&l.samples), p)
        };
        let round_ratio = |num: &str, den: &str| {
            let a = latency.iter().find(|l| l.name.starts_with(num)).unwrap();
            let b = latency.iter().find(|l| l.name.starts_with(den)).unwrap();
            let ratios: Vec<f64> = a.round_medians.iter().zip(&b.round_medians).map(|(x, y)| x / y).collect();
            let r = sorted(&ratios);
            (median(&ratios), r[0], r[r.len() - 1])
        };
        for (den, label) in [
            ("raw append + sync_data", "raw append+sync_data"),
            ("raw append + sync_all", "raw append+sync_all"),
            ("raw overwrite", "raw overwrite+sync_data"),
            ("redb bare", "redb bare commit"),
        ] {
            let (m, lo, hi) = round_ratio("lorebank", den);
            println!(
                "ratio lorebank / {label:<24}: {m:.2}× (median of round ratios; rounds {lo:.2}–{hi:.2}×; pooled median {:.2}×, p99 {:.2}×)",
                stat("lorebank", 50.0) / stat(den, 50.0),
                stat("lorebank", 99.0) / stat(den, 99.0),
            );
        }
        let (m, _, _) = round_ratio("lorebank", "raw append + sync_data");
        println!(
            "goal: one durable append ≤ 1.1× a raw fsync (append + sync_data): {m:.2}× {}",
            if m <= 1.1 { "MET" } else { "NOT MET" }
        );
        println!("   [{:.0} s]", started.elapsed().as_secs_f64());
        println!();
    }

    // Case 2
    println!(
        "== 2. throughput (events/s; median of {} rounds, each on fresh files; sequential cases interleave the engines batch by batch)",
        params.rounds
    );
    let throughput = throughput_case(dir, &params, &events, &records);
    println!("{:<22} {:>10} {:>10} {:>10} {:>12}", "case", "events", "median", "min", "max");
    let n_events = |name: &str| -> usize {
        if name.contains("thr") {
            params.threads * params.per_thread
        } else {
            let batch: usize = name.rsplit('=').next().unwrap().parse().unwrap();
            let (_, n) = params.batch_cases.iter().find(|(b, _)| *b == batch).unwrap();
            batch * n
        }
    };
    for t in &throughput {
        let s = sorted(&t.rounds);
        println!(
            "{:<22} {:>10} {:>10.0} {:>10.0} {:>12.0}",
            t.name,
            n_events(&t.name),
            median(&t.rounds),
            s[0],
            s[s.len() - 1]
        );
    }
    println!();
    println!(
        "{:<10} {:>14} {:>12} {:>16} {:>16} {:>15} {:>15}",
        "batching", "lorebank ev/s", "sqlite ev/s", "lorebank/sqlite", "(rounds)", "redb-bare ev/s", "redb-bare/sqlite"
    );
    let find = |name: String| throughput.iter().find(|t| t.name == name);
    let mut keys: Vec<String> = params.batch_cases.iter().map(|(b, _)| format!("b={b}")).collect();
    if params.threads > 0 {
        keys.push(format!("{}thr×1", params.threads));
    }
    for key in &keys {
        let l = find(format!("lorebank {key}")).unwrap();
        let q = find(format!("sqlite {key}")).unwrap();
        let per_round = sorted(&l.rounds.iter().zip(&q.rounds).map(|(a, b)| a / b).collect::<Vec<_>>());
        let (bare, bare_ratio) = match find(format!("redb-bare {key}")) {
            Some(b) => (format!("{:.0}", median(&b.rounds)), format!("{:.2}×", median(&b.rounds) / median(&q.rounds))),
            None => ("-".into(), "-".into()),
        };
        println!(
            "{:<10} {:>14.0} {:>12.0} {:>15.2}× {:>16} {:>15} {:>15}",
            key,
            median(&l.rounds),
            median(&q.rounds),
            median(&l.rounds) / median(&q.rounds),
            format!("{:.2}–{:.2}×", per_round[0], per_round[per_round.len() - 1]),
            bare,
            bare_ratio
        );
    }
    let find = |name: String| find(name).unwrap();
    let big = params.batch_cases.iter().map(|(b, _)| *b).max().unwrap();
    let l_big = median(&find(format!("lorebank b={big}")).rounds);
    let q_big = median(&find(format!("sqlite b={big}")).rounds);
    let met_batches: Vec<String> = params
        .batch_cases
        .iter()
        .filter(|(b, _)| *b > 1)
        .map(|(b, _)| {
            let r = median(&find(format!("lorebank b={b}")).rounds) / median(&find(format!("sqlite b={b}")).rounds);
            format!("b={b}: {r:.2}× {}", if r >= 1.5 { "MET" } else { "NOT MET" })
        })
        .collect();
    println!("goal: batched ≥ 1.5× SQLite: {}", met_batches.join(", "));
    let round_ratios = |num: String, den: String| {
        let ratios: Vec<f64> = find(num).rounds.iter().zip(&find(den).rounds).map(|(a, b)| a / b).collect();
        let r = sorted(&ratios);
        (median(&ratios), r[0], r[r.len() - 1])
    };
    for (engine, goal) in [("redb-bare", 0.8), ("sqlite", 1.0)] {
        let (m, lo, hi) = round_ratios(format!("lorebank b={big}"), format!("{engine} b={big}"));
        println!(
            "goal: {big} per batch ≥ {goal:.1}× {engine}: {m:.2}× (median of round ratios; rounds {lo:.2}–{hi:.2}×) {}",
            if m >= goal { "MET" } else { "NOT MET" }
        );
    }
    println!(
        "goal: ≥ 100k events/s at {big} per batch: {:.0} ev/s {} (SQLite {:.0})",
        l_big,
        if l_big >= 100_000.0 { "MET" } else { "NOT MET" },
        q_big
    );
    println!();
    println!("total {:.0} s", started.elapsed().as_secs_f64());
}
