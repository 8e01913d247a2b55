//! Pins the canonical encoding and checks the codec's contracts.
//!
//! * Golden fixtures: one sealed record per body kind in `tests/golden/<kind>.hex`.
//!   A change to any byte fails here; `LOREBANK_BLESS=1` rewrites the files, which is
//!   only right together with a new schema version and an upcast.
//! * Round trips (proptest): decode ∘ encode = identity for every body kind, JSON and
//!   bincode alike; sealed records open to what was sealed.
//! * Strictness (proptest): bytes that decode re-encode to themselves; a flipped byte
//!   in a record is always detected, by `open` or by a changed chain hash.

mod support;

use std::path::PathBuf;

use ledger_model::codec::{self, CodecError};
use ledger_model::record::{self, RecordError, SCHEMA_CURRENT};
use ledger_model::*;
use proptest::prelude::*;

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.hex"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[test]
fn every_body_kind_has_a_golden_example() {
    let names: Vec<&str> = support::examples()
        .iter()
        .map(|(name, event)| {
            assert_eq!(*name, event.body.kind_name());
            *name
        })
        .collect();
    // Adding a body kind without a fixture fails here: the match is exhaustive.
    let all = |body: &Body| match body {
        Body::TermPut(_)
        | Body::TermRetired(_)
        | Body::AliasAdded(_)
        | Body::AliasRemoved(_)
        | Body::SummaryPut(_)
        | Body::SummaryRetired(_)
        | Body::CandidateProposed(_)
        | Body::DispositionSet(_)
        | Body::ConfigSet(_)
        | Body::RollbackMarker(_) => 10,
    };
    assert_eq!(names.len(), all(&support::examples()[0].1.body));
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len());
    // The list of names is the list of kinds, in the order of the variants.
    assert_eq!(names, Body::KIND_NAMES);
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read and bless golden files")]
fn golden_records_are_byte_identical() {
    let bless = std::env::var_os("LOREBANK_BLESS").is_some();
    let mut prev = Hash32::GENESIS;
    let mut failures = Vec::new();
    for (seq_idx, (name, event)) in support::examples().into_iter().enumerate() {
        let seq = Seq(seq_idx as u64 + 1);
        let payload = event.encode().unwrap();
        let (bytes, hash) = record::seal(seq, prev, SCHEMA_CURRENT, &payload);
        let text = format!("{}\nchain {}\n", hex(&bytes), hash);
        let path = golden_path(name);
        if bless {
            std::fs::write(&path, &text).unwrap();
        } else {
            let expected = std::fs::read_to_string(&path)
                .unwrap_or_else(|error| panic!("{}: {error}; run with LOREBANK_BLESS=1 to create", path.display()));
            if expected != text {
                failures.push(format!("{name}: encoding changed\n  expected {expected}\n  actual   {text}"));
            }
        }
        // The stored bytes decode back to the example.
        let opened = record::open(seq, &bytes).unwrap();
        assert_eq!(opened.content, event);
        assert_eq!(opened.prev, prev);
        prev = hash;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn json_form_is_externally_tagged_snake_case() {
    let json = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"Сяо Янь","gender":"m","decl":["Сяо Яня"],"window":{"since":3}}}"#;
    let body: Body = serde_json::from_str(json).unwrap();
    let Body::TermPut(put) = &body else { panic!("not a term_put: {body:?}") };
    assert_eq!(put.window, Window { since: 3, until: None });
    assert_eq!(put.status, Status::Approved);
    assert_eq!(put.gender, Some(Gender::Masculine));
    let unknown = r#"{"term_put":{"id":"T-1","src":"萧炎","dst":"x","dts":"y"}}"#;
    let error = serde_json::from_str::<Body>(unknown).unwrap_err().to_string();
    assert!(error.contains("unknown field `dts`"), "{error}");
    let bad_id = r#"{"term_retired":{"id":"T-01"}}"#;
    let error = serde_json::from_str::<Body>(bad_id).unwrap_err().to_string();
    assert!(error.contains("invalid record id"), "{error}");
}

#[test]
fn unknown_schema_and_format_are_refused() {
    let (_, event) = &support::examples()[0];
    let payload = event.encode().unwrap();
    let (bytes, _) = record::seal(Seq(1), Hash32::GENESIS, 99, &payload);
    assert_eq!(record::open(Seq(1), &bytes), Err(RecordError::UnknownSchema { schema: 99 }));
    let (mut bytes, _) = record::seal(Seq(1), Hash32::GENESIS, SCHEMA_CURRENT, &payload);
    bytes[0] = 9;
    assert_eq!(record::open(Seq(1), &bytes), Err(RecordError::UnknownFormat { format: 9 }));
    let (bytes, _) = record::seal(Seq(2), Hash32::GENESIS, SCHEMA_CURRENT, &payload);
    assert!(matches!(record::open(Seq(1), &bytes), Err(RecordError::SeqMismatch { .. })));
    assert!(matches!(record::open(Seq(1), &bytes[..40]), Err(RecordError::TooShort { len: 40 })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn bodies_round_trip_through_both_forms(event in support::new_event()) {
        let bytes = event.encode().unwrap();
        let back: NewEvent = codec::decode_strict(&bytes).unwrap();
        prop_assert_eq!(&back, &event);
        let json = serde_json::to_string(&event.body).unwrap();
        let from_json: Body = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&from_json, &event.body);
    }

    #[test]
    fn sealed_records_open_to_what_was_sealed(event in support::new_event(), seq in 1u64..u64::MAX, prev in any::<[u8; 32]>()) {
        let payload = event.encode().unwrap();
        let (bytes, hash) = record::seal(Seq(seq), Hash32(prev), SCHEMA_CURRENT, &payload);
        let opened = record::open(Seq(seq), &bytes).unwrap();
        prop_assert_eq!(opened.hash, hash);
        prop_assert_eq!(opened.prev, Hash32(prev));
        prop_assert_eq!(opened.content, event);
    }

    #[test]
    fn a_flipped_byte_is_always_detected(event in support::new_event(), flip_at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let payload = event.encode().unwrap();
        let (mut bytes, hash) = record::seal(Seq(5), Hash32([1; 32]), SCHEMA_CURRENT, &payload);
        let at = flip_at.index(bytes.len());
        bytes[at] ^= 1 << bit;
        match record::open(Seq(5), &bytes) {
            Err(_) => {}
            // Only `prev` is not checked by `open`; the chain hash then differs, and
            // the walk of the chain catches it.
            Ok(opened) => {
                prop_assert!((16..48).contains(&at), "flip at {} passed open", at);
                prop_assert_ne!(opened.hash, hash);
            }
        }
    }

    #[test]
    fn decoded_bytes_are_canonical(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(event) = codec::decode_strict::<NewEvent>(&bytes) {
            prop_assert_eq!(event.encode().unwrap(), bytes);
        }
    }

    #[test]
    fn lengthened_varints_are_rejected(mut event in support::new_event(), recorded_at_ms in 0..u64::from(u32::MAX)) {
        // recorded_at_ms is the first field: re-spell it with a longer varint prefix.
        event.recorded_at_ms = recorded_at_ms;
        let bytes = event.encode().unwrap();
        let mut long = vec![253u8];
        long.extend_from_slice(&event.recorded_at_ms.to_le_bytes());
        let first_len = match bytes[0] { 0..=250 => 1, 251 => 3, 252 => 5, _ => 9 };
        long.extend_from_slice(&bytes[first_len..]);
        let result = codec::decode_strict::<NewEvent>(&long);
        prop_assert_eq!(result, Err(CodecError::NonCanonical));
    }
}
