//! Durability under storage faults and power loss, checked by a seeded,
//! deterministic driver (in the spirit of TigerBeetle's VOPR).
//!
//! Each seed builds a book on the fault backend (`support/faults.rs`), runs a
//! random workload of appends (single events and batches with expected heads, some
//! long enough to be streamed, some with blobs attached, some that conflict),
//! documents filed in groups, checkpoints and cache entries, and records what was
//! acknowledged. A first run without faults counts the storage calls the workload
//! makes; a second run of the same workload injects one fault at a random call:
//! EIO or ENOSPC on a read, write, `set_len` or sync, a torn write, or power loss.
//! Then every image a restart can find is reopened and checked: the volatile image
//! (the process restarts, the machine did not lose power), the durable image (power
//! loss: only what was synced), and the durable image plus a seeded subset of the
//! unsynced writes, some torn. On each: the book opens and `verify`s, every
//! acknowledged batch is there whole at its seqs, no batch is partial, a batch that
//! was refused is absent, every acknowledged document, blob and checkpoint is there
//! and intact, and the book accepts an append at its head. On the handle that saw
//! the fault, a failure is classed I/O (never corruption) and, after a failed
//! write, appends are refused.
//!
//! `LOREBANK_FAULT_SEEDS=N` runs seeds `0..N` (default [`SEEDS`]);
//! `LOREBANK_FAULT_SEED=S` runs only seed `S` (to replay a failure, whose seed the
//! panic message names).

#[allow(dead_code)]
#[path = "support/faults.rs"]
mod faults;
mod support;

use std::collections::BTreeMap;

use faults::{Fault, FaultFile, EIO, ENOSPC};
use ledger::{AppendError, Document, Ledger, ReadError};
use ledger_model::{Hash32, NewEvent, Seq};

/// Seeds a plain `cargo test` runs.
const SEEDS: u64 = 200;
/// Steps of a workload.
const STEPS: usize = 24;
/// Seeds that once failed, run every time before the others.
///
/// * 0: after a failed commit (EIO on a write while filing documents) the handle
///   refused the next append as `AppendError::Poisoned`, which callers class as
///   corruption; it is now refused as I/O.
const REGRESSIONS: &[u64] = &[0];

/// splitmix64: small, seeded, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn hash(&mut self) -> Hash32 {
        let mut out = [0u8; 32];
        for chunk in out.chunks_mut(8) {
            chunk.copy_from_slice(&self.next().to_le_bytes());
        }
        Hash32(out)
    }

    /// `min` to `min + spread - 1` random bytes.
    fn bytes(&mut self, min: u64, spread: u64) -> Vec<u8> {
        let n = min + self.below(spread);
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// What became of an attempted batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Returned `Ok`: must be there, whole, at these seqs.
    Acked { first: u64, last: u64 },
    /// Failed with an I/O error: may or may not be there, but only whole.
    Unknown,
    /// Refused before it reached the storage (conflict, poisoned handle): absent.
    Refused,
}

/// What the workload did and what it was told.
#[derive(Default)]
struct Model {
    /// Batch index → (events, outcome).
    batches: BTreeMap<u64, (u64, Outcome)>,
    documents: Vec<Document>,
    blobs: Vec<(Hash32, Vec<u8>)>,
    checkpoints: Vec<(Seq, Vec<u8>)>,
    head: u64,
    /// The first failure: (step, what failed, message).
    failure: Option<(usize, &'static str, String)>,
}

fn event(batch: u64, index: u64) -> NewEvent {
    let mut event = support::term(u32::try_from(batch * 1_000 + index + 1).unwrap(), &format!("b{batch}-{index}"));
    event.source = format!("b{batch}-{index}");
    event
}

fn batch_of(source: &str) -> u64 {
    source.strip_prefix('b').and_then(|rest| rest.split('-').next()).and_then(|n| n.parse().ok()).unwrap()
}

/// An I/O failure, classed as one: `Poisoned` is the refusal after detected damage,
/// which callers class as corruption.
fn append_io(error: &AppendError) -> bool {
    matches!(error, AppendError::Io(_))
}

fn read_io(error: &ReadError) -> bool {
    matches!(error, ReadError::Io(_))
}

/// One step of a workload.
#[derive(Clone, Debug)]
enum Step {
    /// A batch of `size` events with the head as expected head (or, when `stale`,
    /// the one before it, which must conflict), and blobs attached.
    Batch { size: u64, stale: bool, blobs: Vec<(Hash32, Vec<u8>)>, snapshot: Hash32 },
    /// Documents filed together, with blobs.
    Documents { documents: Vec<Document>, blobs: Vec<(Hash32, Vec<u8>)> },
    /// A checkpoint at revision `1 + at % head` (skipped on an empty log).
    Checkpoint { at: u64, bytes: Vec<u8> },
    /// A cache entry.
    Cache { key: Hash32, bytes: Vec<u8> },
}

/// The seed's random workload.
fn plan(seed: u64) -> Vec<Step> {
    let mut rng = Rng(seed ^ 0x005E_ED0F_FA17);
    let mut steps = Vec::new();
    for step in 0..STEPS {
        let pick = rng.below(100);
        steps.push(if pick < 50 {
            // Mostly short, sometimes long enough to be streamed, sometimes with blobs,
            // sometimes with a stale expected head.
            let size = match rng.below(20) {
                0 => 256 + rng.below(40),
                1..=8 => 1,
                _ => 2 + rng.below(7),
            };
            let stale = rng.below(10) == 0;
            let blobs = if rng.below(4) == 0 {
                let n = 1 + rng.below(2);
                (0..n).map(|_| (rng.hash(), rng.bytes(64, 4_000))).collect()
            } else {
                Vec::new()
            };
            Step::Batch { size, stale, blobs, snapshot: rng.hash() }
        } else if pick < 75 {
            let n = 1 + rng.below(3);
            let group = u32::try_from(rng.below(3)).unwrap();
            let documents = (0..n)
                .map(|i| Document {
                    id: rng.hash(),
                    bytes: rng.bytes(16, 2_000),
                    group,
                    key: format!("key-{step}-{i}"),
                })
                .collect();
            let blobs = if rng.below(3) == 0 { vec![(rng.hash(), rng.bytes(300, 1))] } else { Vec::new() };
            Step::Documents { documents, blobs }
        } else if pick < 90 {
            Step::Checkpoint { at: rng.next(), bytes: rng.bytes(32, 3_000) }
        } else {
            Step::Cache { key: rng.hash(), bytes: rng.bytes(100, 1_000) }
        });
    }
    steps
}

/// Runs `steps` on `ledger` until the first failure.
fn execute(ledger: &Ledger, steps: &[Step]) -> Model {
    let mut model = Model::default();
    for (number, step) in steps.iter().enumerate() {
        match step {
            Step::Batch { size, stale, blobs, snapshot } => {
                let idx = model.batches.len() as u64;
                let events: Vec<NewEvent> = (0..*size).map(|i| event(idx, i)).collect();
                let stale = *stale && model.head > 0;
                let expected = if stale { Seq(model.head - 1) } else { Seq(model.head) };
                let attachments =
                    ledger::Attachments { blobs: blobs.clone(), snapshot: Some(*snapshot), documents: vec![] };
                match ledger.append_with(&events, Some(expected), attachments) {
                    Ok(appended) => {
                        assert!(!stale, "a stale expected head was accepted");
                        assert_eq!(appended.first.0, model.head + 1, "an acknowledged batch starts after the head");
                        assert_eq!(appended.last.0, model.head + size);
                        model.head = appended.last.0;
                        let outcome = Outcome::Acked { first: appended.first.0, last: appended.last.0 };
                        model.batches.insert(idx, (*size, outcome));
                        model.blobs.extend(blobs.iter().cloned());
                    }
                    Err(AppendError::Conflict { .. }) if stale => {
                        model.batches.insert(idx, (*size, Outcome::Refused));
                    }
                    Err(error) => {
                        assert!(append_io(&error), "append failed with a non-I/O error: {error}");
                        model.batches.insert(idx, (*size, Outcome::Unknown));
                        model.failure = Some((number, "append", error.to_string()));
                        return model;
                    }
                }
            }
            Step::Documents { documents, blobs } => match ledger.file_documents(documents.clone(), blobs.clone()) {
                Ok(()) => {
                    model.documents.extend(documents.iter().cloned());
                    model.blobs.extend(blobs.iter().cloned());
                }
                Err(error) => {
                    assert!(append_io(&error), "filing documents failed with a non-I/O error: {error}");
                    model.failure = Some((number, "file_documents", error.to_string()));
                    return model;
                }
            },
            Step::Checkpoint { at, bytes } => {
                if model.head == 0 {
                    continue;
                }
                let revision = Seq(1 + at % model.head);
                match ledger.put_checkpoint(revision, 1_764_000_000_000, bytes, 1_000) {
                    Ok(()) => {
                        model.checkpoints.retain(|(done, _)| *done != revision);
                        model.checkpoints.push((revision, bytes.clone()));
                    }
                    Err(error) => {
                        assert!(read_io(&error), "a checkpoint failed with a non-I/O error: {error}");
                        model.failure = Some((number, "put_checkpoint", error.to_string()));
                        return model;
                    }
                }
            }
            Step::Cache { key, bytes } => {
                if let Err(error) = ledger.cache_put(*key, bytes) {
                    assert!(read_io(&error), "a cache write failed with a non-I/O error: {error}");
                    model.failure = Some((number, "cache_put", error.to_string()));
                    return model;
                }
            }
        }
    }
    model
}

/// Checks a reopened image against what the workload was told.
fn check_image(model: &Model, image: Vec<u8>, which: &str) {
    let file = FaultFile::from_image(image);
    let ledger = Ledger::open_with_backend(file.backend(), "fault-book")
        .unwrap_or_else(|error| panic!("{which}: reopen failed: {error}"));
    let report = ledger.verify().unwrap_or_else(|error| panic!("{which}: verify failed: {error}"));
    let mut present: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for event in ledger.events(Seq(1), report.head.seq).unwrap() {
        present.entry(batch_of(&event.content.source)).or_default().push(event.seq.0);
    }
    for (idx, seqs) in &present {
        let (size, outcome) = model.batches.get(idx).unwrap_or_else(|| panic!("{which}: batch {idx} was never sent"));
        assert_eq!(seqs.len() as u64, *size, "{which}: batch {idx} is partial ({outcome:?}): {seqs:?}");
        assert_ne!(*outcome, Outcome::Refused, "{which}: refused batch {idx} is there");
    }
    for (idx, (_, outcome)) in &model.batches {
        if let Outcome::Acked { first, last } = outcome {
            let seqs = present.get(idx).unwrap_or_else(|| panic!("{which}: acknowledged batch {idx} was lost"));
            assert_eq!(seqs, &(*first..=*last).collect::<Vec<_>>(), "{which}: batch {idx} moved");
        }
    }
    let filed = ledger.filed(None).unwrap();
    for document in &model.documents {
        let bytes = ledger.document(document.id).unwrap();
        assert_eq!(bytes.as_deref(), Some(document.bytes.as_slice()), "{which}: document {} lost", document.id);
        assert!(
            filed
                .iter()
                .any(|(group, key, _, id)| *group == document.group && *key == document.key && *id == document.id),
            "{which}: document {} is not on its shelf",
            document.id
        );
    }
    for (id, bytes) in &model.blobs {
        assert_eq!(ledger.blob(*id).unwrap().as_deref(), Some(bytes.as_slice()), "{which}: blob {id} lost");
    }
    let checkpoints = ledger.checkpoints().unwrap();
    for (revision, bytes) in &model.checkpoints {
        assert!(checkpoints.iter().any(|info| info.revision == *revision), "{which}: checkpoint {revision} lost");
        let (info, stored) = ledger.checkpoint_at_or_before(*revision).unwrap().expect("a checkpoint");
        assert_eq!(info.revision, *revision);
        assert_eq!(&stored, bytes, "{which}: checkpoint {revision} changed");
    }
    // The book works again.
    let next = model.batches.len() as u64;
    let appended = ledger
        .append(&[event(next, 0)], Some(report.head.seq))
        .unwrap_or_else(|error| panic!("{which}: append after reopen failed: {error}"));
    assert_eq!(appended.last, report.head.seq.next());
    ledger.verify().unwrap_or_else(|error| panic!("{which}: verify after the new append failed: {error}"));
}

/// What a run did.
#[derive(Default)]
struct Tally {
    runs: u64,
    faults_fired: u64,
    failures_seen: u64,
    images_checked: u64,
}

/// Runs `steps` without faults and checks the result; returns the storage calls
/// made by creating the book and by the whole run (closing the book included).
fn dry_run(steps: &[Step]) -> (u64, u64) {
    let file = FaultFile::new();
    let ledger = Ledger::create_with_backend(file.backend(), "fault-book").unwrap();
    let created = file.calls();
    let model = execute(&ledger, steps);
    assert!(model.failure.is_none(), "the run without faults failed: {:?}", model.failure);
    drop(ledger);
    check_image(&model, file.durable(), "run without faults, durable image");
    (created, file.calls())
}

/// Runs `steps` with `fault` at storage call `at`, then reopens and checks every
/// image a restart can find (`mix` picks the unsynced writes that reach the media).
fn run_with_fault(steps: &[Step], created: u64, at: u64, fault: Fault, mix: u64, tally: &mut Tally) {
    let file = FaultFile::new();
    let ledger = Ledger::create_with_backend(file.backend(), "fault-book").unwrap();
    assert_eq!(file.calls(), created, "the workload is not deterministic");
    file.schedule(at, fault);
    let model = execute(&ledger, steps);
    if let Some((step, what, message)) = &model.failure {
        tally.failures_seen += 1;
        assert!(!file.fired().is_empty(), "{what} at step {step} failed with no fault: {message}");
        // The handle that saw a failure refuses further writes, as I/O.
        let refused = ledger.append(&[event(model.batches.len() as u64 + 1, 0)], None);
        match refused {
            Err(error) => assert!(append_io(&error), "the refusal after {what} is not I/O: {error}"),
            Ok(_) => panic!("an append after a failed {what} ({message}) was accepted"),
        }
    }
    // Closing the book writes too: a fault may land there.
    drop(ledger);
    tally.runs += 1;
    tally.faults_fired += file.fired().len() as u64;
    let mut images = Vec::new();
    if !file.powered_off() {
        images.push(("volatile image (restart)", file.volatile()));
    }
    images.push(("durable image (power loss)", file.durable()));
    let mut pick = Rng(mix);
    let partial = file.after_power_loss(|size| match pick.below(4) {
        0 => None,
        1 => Some(pick.below(size as u64 + 1) as usize),
        _ => Some(size),
    });
    images.push(("durable image plus some unsynced writes, some torn", partial));
    for (which, image) in images {
        check_image(&model, image, &format!("{which}, {fault:?} at call {at}"));
        tally.images_checked += 1;
    }
}

/// One seed: its workload, one fault of a random kind at a random call.
fn run_seed(seed: u64, tally: &mut Tally) {
    let steps = plan(seed);
    let (created, total) = dry_run(&steps);
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xC0FFEE);
    let at = created + 1 + rng.below(total - created);
    let fault = match rng.below(10) {
        0..=2 => Fault::Fail(EIO),
        3..=4 => Fault::Fail(ENOSPC),
        5..=6 => Fault::Tear { keep: rng.below(4_096) as usize },
        _ => Fault::PowerLoss,
    };
    run_with_fault(&steps, created, at, fault, seed ^ 0xD15C, tally);
}

fn seeds() -> Vec<u64> {
    if let Some(seed) = std::env::var("LOREBANK_FAULT_SEED").ok().and_then(|seed| seed.parse().ok()) {
        return vec![seed];
    }
    let n = std::env::var("LOREBANK_FAULT_SEEDS").ok().and_then(|n| n.parse().ok()).unwrap_or(SEEDS);
    REGRESSIONS.iter().copied().chain(0..n).collect()
}

#[test]
fn no_fault_loses_an_acknowledged_write_or_leaves_a_partial_batch() {
    let mut tally = Tally::default();
    let seeds = seeds();
    for &seed in &seeds {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_seed(seed, &mut tally)));
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|text| (*text).to_owned()))
                .unwrap_or_default();
            panic!("seed {seed} failed (replay: LOREBANK_FAULT_SEED={seed}): {message}");
        }
    }
    println!(
        "{} seeds, {} faults fired, {} failures seen by the workload, {} images reopened and checked",
        seeds.len(),
        tally.faults_fired,
        tally.failures_seen,
        tally.images_checked
    );
    assert!(tally.faults_fired > 0);
}

/// A full disk, a failed read or sync, a torn write and power loss at every storage
/// call of one fixed workload: a batch, a streamed batch with blobs (a full disk in
/// the middle of a batch), a group of documents (a receipt group), a checkpoint and
/// another batch.
#[test]
fn every_call_of_a_batch_a_document_group_and_a_checkpoint_survives_every_fault() {
    let mut rng = Rng(13);
    let documents = (0..3)
        .map(|i| Document { id: rng.hash(), bytes: rng.bytes(500, 1_000), group: 7, key: format!("chunk-{i}") })
        .collect();
    let steps = vec![
        Step::Batch { size: 3, stale: false, blobs: vec![], snapshot: rng.hash() },
        Step::Batch { size: 300, stale: false, blobs: vec![(rng.hash(), rng.bytes(5_000, 1))], snapshot: rng.hash() },
        Step::Documents { documents, blobs: vec![(rng.hash(), rng.bytes(700, 1))] },
        Step::Checkpoint { at: 2, bytes: rng.bytes(6_000, 1) },
        Step::Batch { size: 2, stale: false, blobs: vec![], snapshot: rng.hash() },
    ];
    let (created, total) = dry_run(&steps);
    let mut tally = Tally::default();
    for at in created + 1..=total {
        for fault in [Fault::Fail(ENOSPC), Fault::Fail(EIO), Fault::Tear { keep: 1_000 }, Fault::PowerLoss] {
            run_with_fault(&steps, created, at, fault, at, &mut tally);
        }
    }
    println!(
        "{} calls after creation, {} runs, {} faults fired, {} failures seen by the workload, {} images checked",
        total - created,
        tally.runs,
        tally.faults_fired,
        tally.failures_seen,
        tally.images_checked
    );
    assert_eq!(tally.faults_fired, tally.runs, "every scheduled fault fired");
}

/// The checks are not vacuous: a disk whose sync does nothing loses every
/// acknowledged write at power loss, and the driver says so.
#[test]
fn the_checks_see_the_writes_a_sync_that_lies_loses() {
    let mut rng = Rng(7);
    let steps = vec![
        Step::Batch { size: 2, stale: false, blobs: vec![], snapshot: rng.hash() },
        Step::Documents {
            documents: vec![Document { id: rng.hash(), bytes: rng.bytes(100, 1), group: 1, key: "k".into() }],
            blobs: vec![],
        },
    ];
    let file = FaultFile::new();
    let ledger = Ledger::create_with_backend(file.backend(), "fault-book").unwrap();
    file.sync_lies();
    let model = execute(&ledger, &steps);
    assert!(model.failure.is_none(), "{:?}", model.failure);
    drop(ledger);
    // The process restarting finds everything; power loss finds the book as created.
    check_image(&model, file.volatile(), "volatile image");
    let caught = std::panic::catch_unwind(|| check_image(&model, file.durable(), "durable image"));
    let payload = caught.expect_err("the lost batch went unnoticed");
    let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("acknowledged batch 0 was lost"), "{message}");
}

/// A failed commit is an I/O failure, before and after: the append that failed and
/// every later one on that handle say I/O, never corruption, and the book reopens
/// with what was committed before.
#[test]
fn after_a_failed_commit_appends_are_refused_as_io_and_the_book_reopens() {
    let file = FaultFile::new();
    let ledger = Ledger::create_with_backend(file.backend(), "fault-book").unwrap();
    ledger.append(&[event(0, 0)], Some(Seq(0))).unwrap();
    file.schedule(file.calls() + 1, Fault::Fail(ENOSPC));
    file.schedule(file.calls() + 2, Fault::Fail(ENOSPC));
    file.schedule(file.calls() + 3, Fault::Fail(ENOSPC));
    let failed = ledger.append(&[event(1, 0)], Some(Seq(1))).unwrap_err();
    assert!(matches!(failed, AppendError::Io(_)), "{failed:?}");
    let refused = ledger.append(&[event(2, 0)], Some(Seq(1))).unwrap_err();
    match &refused {
        AppendError::Io(detail) => assert!(detail.to_string().contains("failed commit"), "{detail}"),
        other => panic!("refused as {other:?}, not as I/O"),
    }
    drop(ledger);
    let reopened = Ledger::open_with_backend(FaultFile::from_image(file.volatile()).backend(), "fault-book").unwrap();
    assert_eq!(reopened.verify().unwrap().head.seq, Seq(1));
    reopened.append(&[event(3, 0)], Some(Seq(1))).unwrap();
}
