//! The byte form and id of `ModelIdentity`: the bytes of a fixed identity written out
//! by hand (golden), the id as blake3 derive-key of them, that every field changes
//! the id, that reading is strict (`from_bytes(b).to_bytes() == b`, proptest) and that
//! no bytes make the reader panic; and that operator libraries are format 2, which
//! leaves the bytes and ids of identities without any as format 1 gave them.

use embed::{Dtype, IdentityError, ModelIdentity, Pooling, TokenizerId, IDENTITY_CONTEXT, OPERATOR_LIBRARIES_MAX};
use proptest::prelude::*;

fn sample() -> ModelIdentity {
    ModelIdentity {
        name: "e5".to_owned(),
        model_blake3: [0x11; 32],
        tokenizer: TokenizerId::File([0x22; 32]),
        dim: 384,
        dtype: Dtype::F32,
        pooling: Pooling::Mean,
        normalized: true,
        runtime_version: "1.31.1".to_owned(),
        operator_libraries: Vec::new(),
    }
}

#[test]
fn the_byte_form_is_the_documented_table() {
    let mut expected = vec![1u8]; // format
    expected.extend([2, 0, 0, 0]);
    expected.extend(b"e5");
    expected.extend([0x11; 32]);
    expected.push(1); // tokenizer file
    expected.extend([0x22; 32]);
    expected.extend([0x80, 0x01, 0, 0]); // 384
    expected.extend([1, 1, 1]); // f32, mean, normalized
    expected.extend([6, 0, 0, 0]);
    expected.extend(b"1.31.1");
    assert_eq!(sample().to_bytes(), expected);
    assert_eq!(sample().id().0, blake3::derive_key(IDENTITY_CONTEXT, &expected));
    assert_eq!(sample().id().to_string(), "c00a0de2599b962666f39e67a343db8339b8ae47ead40c93b42578a88d7aab24");

    let in_graph =
        ModelIdentity { tokenizer: TokenizerId::InGraph, pooling: Pooling::InGraph, normalized: false, ..sample() };
    let bytes = in_graph.to_bytes();
    assert_eq!(bytes[39], 0); // in the graph: no hash follows
    assert_eq!(&bytes[40..47], &[0x80, 0x01, 0, 0, 1, 3, 0]);
    assert_eq!(bytes.len(), expected.len() - 32);
}

#[test]
fn operator_libraries_are_format_2_after_the_fields_of_format_1() {
    let with = ModelIdentity { operator_libraries: vec![[0x33; 32], [0x44; 32]], ..sample() };
    let format_1 = sample().to_bytes();
    let mut expected = vec![2u8];
    expected.extend(&format_1[1..]);
    expected.push(2); // two libraries
    expected.extend([0x33; 32]);
    expected.extend([0x44; 32]);
    assert_eq!(with.to_bytes(), expected);
    assert_eq!(ModelIdentity::from_bytes(&expected), Ok(with.clone()));
    assert_ne!(with.id(), sample().id());
    assert!(with.to_string().ends_with(&format!(" operators={},{}", "33".repeat(32), "44".repeat(32))), "{with}");
    // Another order is another identity: libraries register in order.
    let swapped = ModelIdentity { operator_libraries: vec![[0x44; 32], [0x33; 32]], ..sample() };
    assert_ne!(swapped.id(), with.id());

    // Format 2 naming none is not what the encoder writes (that is format 1).
    let mut none = vec![2u8];
    none.extend(&format_1[1..]);
    none.push(0);
    assert_eq!(ModelIdentity::from_bytes(&none), Err(IdentityError::OperatorCount { count: 0 }));
    let mut too_many = none.clone();
    *too_many.last_mut().unwrap() = OPERATOR_LIBRARIES_MAX as u8 + 1;
    too_many.extend(std::iter::repeat_n(0x55, 32 * (OPERATOR_LIBRARIES_MAX + 1)));
    assert_eq!(
        ModelIdentity::from_bytes(&too_many),
        Err(IdentityError::OperatorCount { count: OPERATOR_LIBRARIES_MAX as u8 + 1 })
    );
    // Format 2 without its count, or with a hash cut short.
    assert_eq!(
        ModelIdentity::from_bytes(&none[..none.len() - 1]),
        Err(IdentityError::Truncated { field: "operator_libraries", offset: none.len() - 1 })
    );
    assert_eq!(
        ModelIdentity::from_bytes(&expected[..expected.len() - 1]),
        Err(IdentityError::Truncated { field: "operator_library_blake3", offset: expected.len() - 1 })
    );
    // Format 1 followed by libraries is trailing bytes, not format 2.
    let mut trailing = format_1;
    trailing.extend(&expected[format_1_len(&sample())..]);
    assert_eq!(ModelIdentity::from_bytes(&trailing), Err(IdentityError::TrailingBytes { extra: 65 }));
}

fn format_1_len(identity: &ModelIdentity) -> usize {
    identity.to_bytes().len()
}

#[test]
fn every_field_changes_the_id() {
    let base = sample();
    let changed = [
        ModelIdentity { name: "e6".to_owned(), ..sample() },
        ModelIdentity { model_blake3: [0x12; 32], ..sample() },
        ModelIdentity { tokenizer: TokenizerId::File([0x23; 32]), ..sample() },
        ModelIdentity { tokenizer: TokenizerId::InGraph, ..sample() },
        ModelIdentity { dim: 385, ..sample() },
        ModelIdentity { pooling: Pooling::Cls, ..sample() },
        ModelIdentity { normalized: false, ..sample() },
        ModelIdentity { runtime_version: "1.31.2".to_owned(), ..sample() },
        ModelIdentity { operator_libraries: vec![[0x33; 32]], ..sample() },
        ModelIdentity { operator_libraries: vec![[0x34; 32]], ..sample() },
    ];
    let mut ids = vec![base.id()];
    for identity in &changed {
        assert!(!ids.contains(&identity.id()), "{identity}");
        ids.push(identity.id());
    }
    // Not a plain hash of the bytes: the derive-key context binds the kind of object.
    assert_ne!(base.id().0, *blake3::hash(&base.to_bytes()).as_bytes());
}

#[test]
fn bad_bytes_are_named_errors() {
    let good = sample().to_bytes();
    assert_eq!(ModelIdentity::from_bytes(&good), Ok(sample()));
    assert_eq!(ModelIdentity::from_bytes(&[]), Err(IdentityError::Truncated { field: "format", offset: 0 }));
    assert_eq!(ModelIdentity::from_bytes(&[3]), Err(IdentityError::UnknownFormat { found: 3 }));
    assert_eq!(ModelIdentity::from_bytes(&[2]), Err(IdentityError::Truncated { field: "name", offset: 1 }));
    assert_eq!(
        ModelIdentity::from_bytes(&good[..good.len() - 1]),
        Err(IdentityError::Truncated { field: "runtime_version", offset: good.len() - 1 })
    );
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(ModelIdentity::from_bytes(&trailing), Err(IdentityError::TrailingBytes { extra: 1 }));
    let mut bad_pooling = good.clone();
    bad_pooling[77] = 9;
    assert_eq!(ModelIdentity::from_bytes(&bad_pooling), Err(IdentityError::UnknownCode { field: "pooling", code: 9 }));
    let mut bad_bool = good.clone();
    bad_bool[78] = 2;
    assert_eq!(ModelIdentity::from_bytes(&bad_bool), Err(IdentityError::UnknownCode { field: "normalized", code: 2 }));
    let mut zero_dim = good.clone();
    zero_dim[72..76].copy_from_slice(&[0, 0, 0, 0]);
    assert_eq!(ModelIdentity::from_bytes(&zero_dim), Err(IdentityError::ZeroDim));
    let mut huge_name = good.clone();
    huge_name[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(ModelIdentity::from_bytes(&huge_name), Err(IdentityError::Truncated { field: "name", offset: 89 }));
    let mut not_utf8 = good;
    not_utf8[5] = 0xff;
    let error = ModelIdentity::from_bytes(&not_utf8).unwrap_err();
    assert_eq!(error.to_string(), "model identity field name is not UTF-8 (length 2)");
}

fn identities() -> impl Strategy<Value = ModelIdentity> {
    (
        "\\PC{1,40}",
        any::<[u8; 32]>(),
        proptest::option::of(any::<[u8; 32]>()),
        1u32..=8192,
        prop_oneof![Just(Pooling::Mean), Just(Pooling::Cls), Just(Pooling::InGraph)],
        any::<bool>(),
        "[0-9.]{0,12}",
        proptest::collection::vec(any::<[u8; 32]>(), 0..=2),
    )
        .prop_map(
            |(name, model_blake3, tokenizer, dim, pooling, normalized, runtime_version, operator_libraries)| {
                ModelIdentity {
                    name,
                    model_blake3,
                    tokenizer: tokenizer.map_or(TokenizerId::InGraph, TokenizerId::File),
                    dim,
                    dtype: Dtype::F32,
                    pooling,
                    normalized,
                    runtime_version,
                    operator_libraries,
                }
            },
        )
}

proptest! {
    #[test]
    fn bytes_round_trip(identity in identities()) {
        let bytes = identity.to_bytes();
        let read = ModelIdentity::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&read, &identity);
        prop_assert_eq!(read.to_bytes(), bytes);
        prop_assert_eq!(read.id(), identity.id());
    }

    #[test]
    fn any_bytes_read_strictly_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..200), identity in identities(), flip in any::<(usize, u8)>()) {
        if let Ok(read) = ModelIdentity::from_bytes(&bytes) {
            prop_assert_eq!(read.to_bytes(), bytes);
        }
        let mut mutated = identity.to_bytes();
        let position = flip.0 % mutated.len();
        mutated[position] ^= flip.1.max(1);
        if let Ok(read) = ModelIdentity::from_bytes(&mutated) {
            prop_assert_eq!(read.to_bytes(), mutated);
            prop_assert_ne!(read.id(), identity.id());
        }
    }
}
