//! Pins the canonical encoding and checks the codec's contracts.
//!
//! * Golden fixtures: one sealed record per body kind of schema 2 in
//!   `tests/golden/schema-2/<kind>.hex` (record format 2, as the ledger writes).
//!   A change to any byte fails here; `LOREBANK_BLESS=1` writes a missing file, and a
//!   changed one is only right together with a new schema version and an upcast.
//! * Schema 1: the fixtures of the first release (`tests/golden/schema-1/`, record
//!   format 1) are the schema-1 encodings of the schema-1 examples, byte for byte, and
//!   open upcast to them. They are never re-blessed.
//! * Round trips (proptest): decode ∘ encode = identity for every body kind, JSON and
//!   bincode alike; sealed records open to what was sealed.
//! * Strictness (proptest): bytes that decode re-encode to themselves; a flipped byte
//!   in a record is always detected, by `open` or by a changed chain hash.

mod support;

use std::path::PathBuf;

use ledger_model::codec::{self, CodecError};
use ledger_model::record::{self, RecordError, SCHEMA_1, SCHEMA_CURRENT};
use ledger_model::*;
use proptest::prelude::*;

fn golden_path(schema: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(schema).join(format!("{name}.hex"))
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap()).collect()
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
        | Body::RollbackMarker(_)
        | Body::RulePut(_)
        | Body::RuleRetired(_)
        | Body::GovernanceSet(_)
        | Body::ConceptExpected(_)
        | Body::ConceptDropped(_)
        | Body::EmbeddingModelSet(_)
        | Body::LanguagesSet(_)
        | Body::SourceSet(_)
        | Body::ProxyTemplateSet(_)
        | Body::ModelPromptSet(_)
        | Body::ModelPolicySet(_)
        | Body::CascadeSet(_)
        | Body::ExamplesSet(_) => 23,
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
        let (bytes, hash) = record::seal_in_batch(seq, prev, SCHEMA_CURRENT, &payload, seq_idx % 3 == 2);
        let text = format!("{}\nchain {}\n", hex(&bytes), hash);
        let path = golden_path("schema-2", name);
        if bless && !path.exists() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}; run with LOREBANK_BLESS=1 to create", path.display()));
        if expected != text {
            failures.push(format!("{name}: encoding changed\n  expected {expected}\n  actual   {text}"));
        }
        // The stored bytes decode back to the example.
        let opened = record::open(seq, &unhex(expected.lines().next().unwrap())).unwrap();
        assert_eq!((opened.content, opened.schema), (event, SCHEMA_CURRENT));
        assert_eq!(opened.prev, prev);
        prev = hash;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[allow(clippy::disallowed_methods, reason = "tests read golden files")]
fn schema_1_records_are_byte_identical_and_open_upcast() {
    let mut prev = Hash32::GENESIS;
    for (seq_idx, (name, event)) in support::schema1_examples().into_iter().enumerate() {
        let seq = Seq(seq_idx as u64 + 1);
        let schema1 = ledger_model::schema1::NewEvent {
            recorded_at_ms: event.recorded_at_ms,
            actor: event.actor.clone(),
            source: event.source.clone(),
            body: event.body.to_schema1().unwrap_or_else(|| panic!("{name} has a schema-1 form")),
        };
        let (bytes, hash) = record::seal(seq, prev, SCHEMA_1, &codec::encode(&schema1).unwrap());
        let path = golden_path("schema-1", name);
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert_eq!(expected, format!("{}\nchain {}\n", hex(&bytes), hash), "{name}: schema-1 bytes changed");
        let opened = record::open(seq, &unhex(expected.lines().next().unwrap())).unwrap();
        assert_eq!((opened.content, opened.schema), (event, SCHEMA_1), "{name}");
        prev = hash;
    }
}

#[test]
fn only_kinds_and_fields_of_schema_1_have_a_schema_1_form() {
    for (name, event) in support::examples() {
        let schema1 = event.body.to_schema1();
        match name {
            // Kinds schema 2 did not change keep their form; changed kinds with a new
            // field set and new kinds have none.
            "term_retired" | "alias_removed" | "summary_retired" | "disposition_set" | "config_set"
            | "rollback_marker" => assert!(schema1.is_some(), "{name}"),
            _ => assert!(schema1.is_none(), "{name}"),
        }
    }
    // A schema-1 body upcast and taken back is itself.
    for (name, event) in support::schema1_examples() {
        let back: Body = event.body.to_schema1().unwrap().into();
        assert_eq!(back, event.body, "{name}");
    }
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
    // A schema-2 payload is not a schema-1 payload: the decoder is chosen by the header.
    let (bytes, _) = record::seal(Seq(1), Hash32::GENESIS, SCHEMA_1, &payload);
    assert!(matches!(record::open(Seq(1), &bytes), Err(RecordError::Payload(_))));
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
