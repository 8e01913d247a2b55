//! The byte form of an index: pinned by a golden rendering of a small index's bytes
//! (header fields, counts, and a hash of the body, which is what another crate stores
//! as derived data), refused for another profile, and a decoded index answers as the
//! built one does. The proptests of `properties.rs` round-trip it and damage it.

mod common;

use common::{index_of, lines, xiyouji, xiyouji_index};
use expect_test::expect;
use locate::{DecodeError, Index, INDEX_FORMAT_VERSION, INDEX_MAGIC};
use matcher::Flavour;
use test_support::profiles::profile;

/// Two short chapters folded with the plain profile (no OpenCC: the bytes of the body
/// depend on the layout and the build only).
fn small() -> Index {
    let chapters = [
        (7, "第一回\r\n\r\n    诗曰：\r\n\r\n    混沌未分天地乱茫茫渺渺无人见。\r\n".to_owned()),
        (3, "Chapter Three\n\nＬｉｎ said: “ｶﾀｶﾅ”.\n".to_owned()),
    ];
    index_of(profile(Flavour::Plain), &chapters)
}

#[test]
fn the_byte_form_of_a_small_index_is_pinned() {
    let bytes = small().to_bytes();
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let rendered = format!(
        "magic {:?}, format {}, reserved {}\ncounts: chapters {}, text bytes {}, folded bytes {}, breaks {}, table bits {}, entries {}\nchapters: {:?}\nbody blake3 {}\nlength {}",
        std::str::from_utf8(&bytes[..4]).unwrap(),
        u16::from_le_bytes([bytes[4], bytes[5]]),
        u16::from_le_bytes([bytes[6], bytes[7]]),
        u32_at(72),
        u32_at(76),
        u32_at(80),
        u32_at(84),
        u32_at(88),
        u32_at(92),
        (0..u32_at(72) as usize).map(|i| (u32_at(96 + 12 * i), u32_at(100 + 12 * i), u32_at(104 + 12 * i))).collect::<Vec<_>>(),
        blake3::hash(&bytes[72..]).to_hex(),
        bytes.len(),
    );
    expect![[r#"
        magic "LBLI", format 1, reserved 0
        counts: chapters 2, text bytes 132, folded bytes 108, breaks 5, table bits 4, entries 12
        chapters: [(3, 51, 32), (7, 132, 56)]
        body blake3 fd70b89ebc6002e5cffa63fe97a0c2499e5f80b6f13cdc5600b9536b68500774
        length 549"#]]
    .assert_eq(&rendered);
    assert_eq!(bytes[..4], INDEX_MAGIC);
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), INDEX_FORMAT_VERSION);
}

#[test]
fn an_index_is_refused_with_another_profile() {
    let bytes = small().to_bytes();
    let refused = Index::from_bytes(&bytes, profile(Flavour::Zh)).unwrap_err();
    assert!(matches!(refused, DecodeError::OtherProfile { .. }), "{refused:?}");
    assert!(Index::from_bytes(&bytes, profile(Flavour::Plain)).is_ok());
}

#[test]
fn cut_or_extended_bytes_are_refused() {
    let bytes = small().to_bytes();
    for cut in [0, 3, 71, 72, 95, bytes.len() - 1] {
        assert!(Index::from_bytes(&bytes[..cut], profile(Flavour::Plain)).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(Index::from_bytes(&longer, profile(Flavour::Plain)).unwrap_err(), DecodeError::Damaged);
}

#[test]
fn a_decoded_index_answers_as_the_built_one() {
    let built = xiyouji_index();
    let decoded = Index::from_bytes(&built.to_bytes(), built.profile()).unwrap();
    let request = format!("Translate:\n{}", lines(xiyouji(), 5, 3..8).join("\n"));
    assert_eq!(decoded.locate(&request).unwrap(), built.locate(&request).unwrap());
    assert_eq!(decoded.locate(&request).unwrap().found().map(|chunk| chunk.chapter), Some(5));
}
