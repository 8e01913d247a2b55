//! Frozen matchers and serialized profiles: round trips are exact and deterministic;
//! any truncation, flipped byte, trailing byte, wrong profile or wrong expected id is
//! an error (never a panic); non-canonical profile tables are refused; every named
//! limit is an error when exceeded.
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

mod common;

use common::{nfkc_profile, profile};
use matcher::{
    BuildError, Flavour, FrozenLoadError, LoadError, Matcher, MatcherBuilder, Profile, ProfileBuilder,
    PATTERN_CHARS_MAX,
};

const KEYS: &[&str] = &["孙悟空", "悟空", "蕭炎", "萧炎", "Lin", "カタカナ", "ｶﾞﾗｽ", "㈱", "ёлка"];

fn sample(profile: &Profile) -> Matcher {
    MatcherBuilder::new(profile).build(KEYS.iter().enumerate().map(|(i, k)| (*k, i as u32))).expect("build")
}

#[test]
fn round_trip_is_exact_and_deterministic() {
    let zh = profile(Flavour::Zh);
    let matcher = sample(zh);
    let bytes = matcher.to_bytes();
    let loaded = Matcher::from_bytes(&bytes, zh).expect("load");
    assert_eq!(loaded.to_bytes(), bytes);
    assert_eq!(loaded.automaton_id(), matcher.automaton_id());
    let loaded = Matcher::from_bytes_with_id(&bytes, zh, &matcher.automaton_id()).expect("load with id");
    let text = zh.normalize("孫悟空和蕭炎、ＬＩＮ、ガラス、㈱").expect("normalize");
    assert_eq!(loaded.find(&text), matcher.find(&text));
    assert_eq!(matcher.find(&text).len(), 5);
    // Same keys in another order: same bytes.
    let reversed =
        MatcherBuilder::new(zh).build(KEYS.iter().enumerate().rev().map(|(i, k)| (*k, i as u32))).expect("build");
    assert_eq!(reversed.to_bytes(), bytes);
    // 蕭炎 and 萧炎 merged into one posting list.
    let id = matcher.lookup("萧炎").expect("pattern");
    assert_eq!(matcher.values(id), [2, 3]);
    // An empty matcher freezes and loads too.
    let empty = MatcherBuilder::new(zh).build(std::iter::empty::<(&str, u32)>()).expect("build");
    let loaded = Matcher::from_bytes(&empty.to_bytes(), zh).expect("load empty");
    assert!(loaded.find(&text).is_empty());
}

#[test]
fn profiles_build_deterministically() {
    let again = ProfileBuilder::new(Flavour::Zh).build().expect("build");
    assert_eq!(again.to_bytes(), profile(Flavour::Zh).to_bytes());
    assert_eq!(again.id(), profile(Flavour::Zh).id());
    let loaded = Profile::from_bytes(&again.to_bytes()).expect("load");
    assert_eq!(loaded.id(), again.id());
    assert_ne!(profile(Flavour::Zh).id(), profile(Flavour::Ja).id());
}

#[test]
fn nfkc_profile_id_is_pinned() {
    // Changes only when the Unicode data of unicode-normalization (NFKC) changes; a
    // change means stored profiles fold differently: update knowingly.
    let nfkc = nfkc_profile();
    assert_eq!(nfkc.unicode_version(), unicode_normalization_version());
    // Built by a compiler with the char properties format 1 implies, so still format 1.
    assert_eq!(nfkc.char_unicode_version(), matcher::FORMAT_1_CHAR_UNICODE);
    assert_eq!(&nfkc.to_bytes()[4..6], &[1, 0]);
    assert_eq!(
        nfkc.id().to_string(),
        "da5be8bed3d5a47d935514b638d799b8bac71b4f997ccfeb78cfe6037214177a",
        "nfkc-only profile id changed ({} bytes, {} entries)",
        nfkc.to_bytes().len(),
        nfkc.n_entries()
    );
}

fn unicode_normalization_version() -> (u8, u8, u8) {
    (18, 0, 0)
}

#[test]
fn every_corruption_of_a_frozen_matcher_is_an_error() {
    let zh = profile(Flavour::Zh);
    let bytes = sample(zh).to_bytes();
    // Every position in the first 512 bytes (header, counts, tables), then every 97th
    // (the daachorse tables are large; each try hashes the whole body).
    let positions: Vec<usize> = (0..bytes.len()).filter(|&i| i < 512 || i % 97 == 0).collect();
    assert!(bytes.len() > 512, "frozen sample unexpectedly small: {}", bytes.len());
    for &len in &positions {
        assert!(Matcher::from_bytes(&bytes[..len], zh).is_err(), "truncated to {len}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Matcher::from_bytes(&longer, zh).is_err());
    for &idx in &positions {
        let mut flipped = bytes.clone();
        flipped[idx] ^= 0x01;
        assert!(Matcher::from_bytes(&flipped, zh).is_err(), "flipped byte {idx}");
    }
    let wrong_profile = Matcher::from_bytes(&bytes, profile(Flavour::Ja));
    assert!(matches!(wrong_profile, Err(FrozenLoadError::ProfileMismatch { .. })));
    let other_id = sample(profile(Flavour::Ja)).automaton_id();
    let wrong_id = Matcher::from_bytes_with_id(&bytes, zh, &other_id);
    assert!(matches!(wrong_id, Err(FrozenLoadError::HashMismatch { .. })));
    let message = wrong_id.unwrap_err().to_string();
    assert!(message.starts_with("frozen matcher hash mismatch: expected "), "{message}");
}

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// A hand-made profile: header plus `(key, outputs)` entries.
fn handmade(entries: &[(u32, &[u32])]) -> Vec<u8> {
    let n_pool: usize = entries.iter().map(|e| e.1.len()).sum();
    let mut out = b"LBNP".to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&[0, 0, 18, 0, 0, 0]);
    out.extend_from_slice(&le32(entries.len() as u32));
    out.extend_from_slice(&le32(n_pool as u32));
    out.extend_from_slice(&le32(0));
    for (key, outs) in entries {
        out.extend_from_slice(&le32(*key));
        out.extend_from_slice(&le32(outs.len() as u32));
    }
    for (_, outs) in entries {
        for o in outs.iter() {
            out.extend_from_slice(&le32(*o));
        }
    }
    out
}

#[test]
fn profile_loader_is_strict() {
    // A valid tiny profile: A→a.
    let ok = handmade(&[(0x41, &[0x61])]);
    let profile = Profile::from_bytes(&ok).expect("valid");
    assert_eq!(profile.fold("AbA"), "aba");
    for len in 0..ok.len() {
        assert!(Profile::from_bytes(&ok[..len]).is_err(), "truncated to {len}");
    }
    let mut trailing = ok.clone();
    trailing.push(0);
    assert!(matches!(Profile::from_bytes(&trailing), Err(LoadError::TrailingBytes { n_bytes: 1 })));
    let mut bad_magic = ok.clone();
    bad_magic[0] = b'X';
    assert!(matches!(Profile::from_bytes(&bad_magic), Err(LoadError::BadMagic { .. })));
    let mut bad_version = ok.clone();
    bad_version[4] = 3;
    assert!(matches!(Profile::from_bytes(&bad_version), Err(LoadError::UnsupportedVersion { found: 3, .. })));
    // Built with the NFKC data of another Unicode version than this build's.
    let mut other_unicode = ok.clone();
    other_unicode[8] = 15;
    assert!(matches!(
        Profile::from_bytes(&other_unicode),
        Err(LoadError::UnicodeMismatch { component: "unicode-normalization", stored: (15, 0, 0), .. })
    ));
    let mut bad_flags = ok.clone();
    bad_flags[7] = 0x80;
    assert!(matches!(Profile::from_bytes(&bad_flags), Err(LoadError::BadHeader { field: "flags", .. })));
    let mut bad_reserved = ok.clone();
    bad_reserved[11] = 1;
    assert!(Profile::from_bytes(&bad_reserved).is_err());
    // Not closed: A→B, B→c.
    let open = handmade(&[(0x41, &[0x42]), (0x42, &[0x63])]);
    assert!(matches!(Profile::from_bytes(&open), Err(LoadError::BadEntry { .. })));
    // An output NFKC would change again (e + combining acute composes to é).
    let not_nfkc = handmade(&[(0x41, &[0x65, 0x301])]);
    assert!(matches!(Profile::from_bytes(&not_nfkc), Err(LoadError::BadEntry { .. })));
    // Identity entry, unsorted keys, surrogate, too-long output.
    assert!(Profile::from_bytes(&handmade(&[(0x41, &[0x41])])).is_err());
    assert!(Profile::from_bytes(&handmade(&[(0x42, &[0x62]), (0x41, &[0x61])])).is_err());
    assert!(Profile::from_bytes(&handmade(&[(0xD800, &[0x61])])).is_err());
    assert!(Profile::from_bytes(&handmade(&[(0x41, &[0x61; 33])])).is_err());
    // Huge declared counts fail as truncation, without allocating.
    let mut huge = ok.clone();
    huge[12..16].copy_from_slice(&le32(u32::MAX));
    assert!(matches!(Profile::from_bytes(&huge), Err(LoadError::Truncated { .. })));
}

#[test]
fn limits_are_errors() {
    let plain = profile(Flavour::Plain);
    let long_key = "a".repeat(PATTERN_CHARS_MAX + 1);
    let err = MatcherBuilder::new(plain).build([(long_key.as_str(), 0)]).unwrap_err();
    assert_eq!(err, BuildError::KeyTooLong { key_index: 0, n_chars: PATTERN_CHARS_MAX + 1, limit: PATTERN_CHARS_MAX });
    assert_eq!(err.to_string(), "key 0 folds to 257 chars, limit 256");
    let ok_key = "a".repeat(PATTERN_CHARS_MAX);
    assert!(MatcherBuilder::new(plain).build([(ok_key.as_str(), 0)]).is_ok());
    for blank in ["", "   ", "\u{200B}", "\u{3000}"] {
        let err = MatcherBuilder::new(plain).build([("ok", 0), (blank, 1)]).unwrap_err();
        assert!(matches!(err, BuildError::EmptyKey { key_index: 1, .. }), "{blank:?}: {err}");
    }
    let err = MatcherBuilder::new(plain).patterns_max(2).build([("a", 0), ("A", 1), ("b", 2), ("c", 3)]).unwrap_err();
    assert_eq!(err, BuildError::TooManyPatterns { n_patterns: 3, limit: 2 });
    let huge = "x".repeat(matcher::TEXT_BYTES_MAX + 1);
    assert!(matches!(plain.normalize(&huge), Err(matcher::TextError::TooLong { .. })));
}
