//! Crash consistency: a child process appends batches in a loop and is killed with
//! SIGKILL at a random moment, 50 times over the same book. After every kill the
//! book must reopen, verify, hold only whole batches, and hold every batch the child
//! had acknowledged before it died.
//!
//! A `harness = false` target: run by `cargo test`, `main` is the test. The child is
//! this same binary, re-run with `LOREBANK_CRASH_CHILD` set to the book's path; it
//! only appends. The random schedule's seed is printed; `LOREBANK_CRASH_SEED` replays
//! it.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use ledger::Ledger;
use ledger_model::Seq;
use support::term;
use test_support::harness;

const KILLS: u32 = 50;

/// Mostly short batches; every tenth is long enough to be streamed to the writer in
/// parts (a kill can land while its parts are still arriving).
fn batch_size(batch_idx: u64) -> u64 {
    if batch_idx % 10 == 9 {
        256
    } else {
        1 + batch_idx % 4
    }
}

/// The batches in the book, by index, with their seqs; panics if any is partial.
fn whole_batches(path: &Path) -> BTreeMap<u64, Vec<u64>> {
    let ledger = Ledger::open(path).unwrap_or_else(|error| panic!("reopen after kill: {error}"));
    let report = ledger.verify().unwrap_or_else(|error| panic!("verify after kill: {error}"));
    let mut batches: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for event in ledger.events(Seq(1), report.head.seq).unwrap() {
        let batch_idx: u64 = event.content.source.strip_prefix("batch-").unwrap().parse().unwrap();
        batches.entry(batch_idx).or_default().push(event.seq.0);
    }
    for (batch_idx, seqs) in &batches {
        assert_eq!(seqs.len() as u64, batch_size(*batch_idx), "batch {batch_idx} is partial: {seqs:?}");
    }
    let indexes: Vec<u64> = batches.keys().copied().collect();
    assert_eq!(indexes, (0..indexes.len() as u64).collect::<Vec<_>>(), "batches are not contiguous");
    batches
}

const CHILD: &str = "LOREBANK_CRASH_CHILD";

fn main() {
    match std::env::var_os(CHILD) {
        Some(path) => crash_child(Path::new(&path)),
        None => harness::run(&[(
            "sigkill_mid_append_leaves_a_prefix_of_whole_batches",
            sigkill_mid_append_leaves_a_prefix_of_whole_batches,
        )]),
    }
}

/// Child side: append batches forever, acknowledging each on stdout.
fn crash_child(path: &Path) {
    let ledger = if path.exists() { Ledger::open(path).unwrap() } else { Ledger::create(path).unwrap() };
    // The last event names the last batch (reading only it keeps restarts quick as
    // the book grows).
    let head = ledger.head().unwrap().seq;
    let last = (head > Seq(0)).then(|| ledger.get(head).unwrap());
    let mut batch_idx =
        last.map_or(0, |event| 1 + event.content.source.strip_prefix("batch-").unwrap().parse::<u64>().unwrap());
    loop {
        let batch: Vec<_> = (0..batch_size(batch_idx))
            .map(|event_idx| term((batch_idx * 4 + event_idx + 1) as u32, &format!("batch-{batch_idx}")))
            .collect();
        ledger.append(&batch, None).unwrap();
        println!("ack {batch_idx}");
        batch_idx += 1;
    }
}

fn sigkill_mid_append_leaves_a_prefix_of_whole_batches() {
    let seed: u64 = std::env::var("LOREBANK_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    eprintln!("crash schedule seed {seed} (set LOREBANK_CRASH_SEED to replay)");
    let mut state = seed | 1;
    let mut next_random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.lorebank");
    let exe = std::env::current_exe().unwrap();
    let mut acked_max: Option<u64> = None;
    let mut kills_mid_append = 0;
    for kill_idx in 0..KILLS {
        let mut child =
            Command::new(&exe).env(CHILD, &path).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut acked = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(batch_idx) = line.strip_prefix("ack ") {
                    acked.push(batch_idx.parse::<u64>().unwrap());
                }
            }
            acked
        });
        // Let it get going (process start, open), then kill at a random moment.
        std::thread::sleep(Duration::from_millis(20 + next_random() % 80));
        child.kill().unwrap();
        child.wait().unwrap();
        let acked = reader.join().unwrap();
        if !path.exists() {
            continue;
        }
        let batches = whole_batches(&path);
        if let Some(&last) = acked.last() {
            acked_max = Some(acked_max.map_or(last, |max: u64| max.max(last)));
        }
        if let Some(max) = acked_max {
            assert!(batches.contains_key(&max), "kill {kill_idx}: acknowledged batch {max} is missing");
        }
        if !acked.is_empty() {
            kills_mid_append += 1;
        }
    }
    eprintln!("{:?} was the last acknowledged batch; {kills_mid_append} kills hit a running loop", acked_max);
    assert!(kills_mid_append >= KILLS / 2, "only {kills_mid_append} of {KILLS} kills hit a running append loop");
}
