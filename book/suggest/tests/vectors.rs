//! The byte form of a term's vectors in the derived set (proptest): what `encode`
//! writes `decode` reads back; `decode` reads any bytes without panicking and accepts
//! only what `encode` writes (every accepted input re-encodes to itself), so a damaged
//! entry is missing, never misread; and a term's version follows its texts exactly.

use ledger_model::{RecordId, RecordKind};
use proptest::prelude::*;
use suggest::vectors::{decode, encode, key, version, Role, TermVectors};

fn vectors() -> impl Strategy<Value = (TermVectors, u32, usize)> {
    (1u32..=8, 1usize..=6, 1u32..=1_000_000).prop_flat_map(|(dim, n_texts, number)| {
        let row = prop::collection::vec(-1.0f32..1.0, dim as usize);
        let rows = prop::collection::btree_map(0u16..n_texts as u16, row, 0..=n_texts);
        rows.prop_map(move |rows| {
            let id = RecordId::new(RecordKind::Term, number).unwrap();
            (TermVectors { id, rows: rows.into_iter().collect() }, dim, n_texts)
        })
    })
}

proptest! {
    #[test]
    fn what_encode_writes_decode_reads_back((vectors, dim, n_texts) in vectors()) {
        let bytes = encode(&vectors, dim);
        prop_assert_eq!(decode(&bytes, dim, n_texts), Some(vectors.clone()));
        // Another dim, or fewer texts than rows, is refused.
        prop_assert_eq!(decode(&bytes, dim + 1, n_texts), None);
        if !vectors.rows.is_empty() {
            let last = usize::from(vectors.rows.last().unwrap().0);
            prop_assert_eq!(decode(&bytes, dim, last), None);
        }
    }

    #[test]
    fn any_bytes_decode_without_panicking_and_only_encodings_are_accepted(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        dim in 1u32..=4,
        n_texts in 0usize..=4,
    ) {
        if let Some(vectors) = decode(&bytes, dim, n_texts) {
            prop_assert_eq!(encode(&vectors, dim), bytes);
        }
    }

    #[test]
    fn a_flipped_byte_of_an_entry_is_never_read_as_other_vectors(
        (vectors, dim, n_texts) in vectors(),
        at in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let mut bytes = encode(&vectors, dim);
        let at = at.index(bytes.len());
        bytes[at] ^= 1 << bit;
        // Either refused, or (a flipped bit inside a component) other finite numbers
        // in the same shape: the ledger's checksum, not this layout, catches those.
        if let Some(decoded) = decode(&bytes, dim, n_texts) {
            prop_assert_eq!(decoded.rows.len(), vectors.rows.len());
            prop_assert_eq!(encode(&decoded, dim), bytes);
        }
    }

    #[test]
    fn a_version_follows_the_id_and_every_text(
        texts in prop::collection::vec(("[a-z]{1,4}", 0u8..4), 1..5),
        number in 1u32..1_000,
    ) {
        let roles = [Role::Src, Role::Alias, Role::Dst, Role::Note];
        let texts: Vec<(Role, String)> = texts.into_iter().map(|(text, role)| (roles[role as usize], text)).collect();
        let id = RecordId::new(RecordKind::Term, number).unwrap();
        let other = RecordId::new(RecordKind::Term, number + 1).unwrap();
        let base = version(id, &texts);
        prop_assert_eq!(base, version(id, &texts.clone()));
        prop_assert_ne!(base, version(other, &texts));
        let mut changed = texts.clone();
        changed[0].1.push('x');
        prop_assert_ne!(base, version(id, &changed));
        // Texts that concatenate alike are still told apart (lengths are hashed).
        if texts.len() >= 2 && texts[0].1.len() > 1 {
            let mut moved = texts.clone();
            let first = moved[0].1.pop().unwrap();
            moved[1].1.insert(0, first);
            prop_assert_ne!(base, version(id, &moved));
        }
        let model = [3; 32];
        prop_assert_eq!(key(model, &base).len(), 64);
    }
}
