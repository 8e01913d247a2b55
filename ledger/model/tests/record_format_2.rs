//! Record format 2: format 1 plus the batch-end flag in bit 15 of `schema`.
//! Golden fixtures of schema-1 bodies (`tests/golden/record-format-2/<kind>.hex`,
//! created once with `LOREBANK_BLESS=1`, never re-blessed) pin every byte and open
//! upcast to schema 2; format-1 fixtures (`tests/golden/schema-1/*.hex`) stay
//! readable and report no batch boundary.

mod support;

use std::path::PathBuf;

use ledger_model::codec;
use ledger_model::record::{self, RecordError, BATCH_END_BIT, RECORD_FORMAT, SCHEMA_1, SCHEMA_CURRENT};
use ledger_model::{Hash32, Seq};

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/record-format-2").join(format!("{name}.hex"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap()).collect()
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read and bless golden files")]
fn golden_records_of_format_2_are_byte_identical() {
    let bless = std::env::var_os("LOREBANK_BLESS").is_some();
    let mut prev = Hash32::GENESIS;
    let mut failures = Vec::new();
    for (index, (name, event)) in support::schema1_examples().into_iter().enumerate() {
        let seq = Seq(index as u64 + 1);
        // Batches of three events: every third ends its batch.
        let batch_end = index % 3 == 2;
        let schema1 = ledger_model::schema1::NewEvent {
            recorded_at_ms: event.recorded_at_ms,
            actor: event.actor.clone(),
            source: event.source.clone(),
            body: event.body.to_schema1().unwrap(),
        };
        let payload = codec::encode(&schema1).unwrap();
        let (bytes, hash) = record::seal_in_batch(seq, prev, SCHEMA_1, &payload, batch_end);
        let text = format!("{}\nchain {}\n", hex(&bytes), hash);
        let path = golden_path(name);
        if bless && !path.exists() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap();
        if expected != text {
            failures.push(format!("{name}: encoding changed\n  expected {expected}\n  actual   {text}"));
        }
        let stored = unhex(expected.lines().next().unwrap());
        let opened = record::open(seq, &stored).unwrap();
        assert_eq!((opened.content, opened.schema), (event, SCHEMA_1));
        assert_eq!(record::batch_end(&stored), Ok(Some(batch_end)));
        assert_eq!(u16::from_le_bytes([stored[0], stored[1]]), RECORD_FORMAT);
        prev = hash;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read golden files")]
fn format_1_records_still_open_and_mark_no_batch_end() {
    for (index, (name, event)) in support::schema1_examples().into_iter().enumerate() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/schema-1").join(format!("{name}.hex"));
        let stored = unhex(std::fs::read_to_string(path).unwrap().lines().next().unwrap());
        assert_eq!(record::open(Seq(index as u64 + 1), &stored).unwrap().content, event);
        assert_eq!(record::batch_end(&stored), Ok(None));
    }
}

#[test]
fn the_flag_is_hashed_and_format_1_has_no_flag_bit() {
    let payload = support::examples()[0].1.encode().unwrap();
    let (_, end) = record::seal_in_batch(Seq(1), Hash32::GENESIS, SCHEMA_CURRENT, &payload, true);
    let (_, not_end) = record::seal_in_batch(Seq(1), Hash32::GENESIS, SCHEMA_CURRENT, &payload, false);
    assert_ne!(end, not_end, "the chain hash covers the batch-end flag");
    let (bytes, _) = record::seal(Seq(1), Hash32::GENESIS, SCHEMA_CURRENT | BATCH_END_BIT, &payload);
    assert_eq!(
        record::open(Seq(1), &bytes),
        Err(RecordError::UnknownSchema { schema: SCHEMA_CURRENT | BATCH_END_BIT })
    );
}
