//! Property tests: the fold is idempotent and its offset map stays in range and on char
//! boundaries for arbitrary Unicode; daachorse, aho-corasick and the naive scanner
//! return identical hits on random key sets and texts, and every hit keeps the span
//! contract (`fold(original[span]) == pattern`, increasing, non-overlapping).
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

mod common;

use common::{check_hits, profile, AhoCorasickEngine};
use matcher::{Flavour, MatcherBuilder, Profile};
use proptest::prelude::*;

/// Chars that exercise the fold: CJK variants, kana in all widths, combining marks,
/// expansions, ignorables, whitespace, Latin/Cyrillic case.
const ALPHABET: &[char] = &[
    'a', 'b', 'A', 'B', 'é', '\u{301}', '\u{308}', 'ё', 'Ё', 'е', 'л', 'Л', ' ', '\u{3000}', '\t', '\n', '萧', '蕭',
    '簫', '炎', '发', '髮', '發', '國', '国', 'か', 'カ', 'ｶ', 'ﾞ', '\u{3099}', 'が', 'ガ', 'ヴ', 'ゔ', 'ｳ', 'ヷ', '㈱',
    '株', '(', ')', '…', '.', '\u{200B}', '\u{FE0F}', '\u{AD}', 'ﬁ', 'ǅ', 'İ', '1', '１', 'Ａ', '가', '\u{11A8}', 'ㄱ',
    'ㅏ', '😀', '《', '》', '｜', '<', '>', '\u{FF9F}', 'ﾊ', 'ぱ', '¨', 'Ω', '\u{2126}',
];

fn text_strategy(max_len: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(ALPHABET),
            1 => any::<char>(),
        ],
        0..max_len,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn key_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 1..4).prop_map(|c| c.into_iter().collect())
}

fn all_profiles() -> [&'static Profile; 4] {
    [profile(Flavour::Zh), profile(Flavour::Ja), profile(Flavour::Plain), common::nfkc_profile()]
}

fn check_fold(profile: &Profile, text: &str) {
    let once = profile.fold(text);
    let twice = profile.fold(&once);
    assert_eq!(once, twice, "fold not idempotent on {text:?} ({:?})", profile.flavour());
    let normalized = profile.normalize(text).expect("normalize");
    let norm = normalized.as_str();
    let mut norm_pos = 0usize;
    let mut src_pos = 0usize;
    for (norm_span, src_span) in normalized.segments() {
        assert_eq!(norm_span.start.as_usize(), norm_pos, "segments must tile the folded text");
        assert!(norm_span.end > norm_span.start, "empty segment");
        assert!(norm.is_char_boundary(norm_span.end.as_usize()));
        assert!(src_span.start.as_usize() >= src_pos, "source spans must increase");
        assert!(src_span.end > src_span.start && src_span.end.as_usize() <= text.len());
        assert!(text.is_char_boundary(src_span.start.as_usize()) && text.is_char_boundary(src_span.end.as_usize()));
        assert_eq!(text[..src_span.start.as_usize()].chars().count(), src_span.start_char.as_usize());
        assert_eq!(text[src_span.bytes()].chars().count(), src_span.chars().len());
        norm_pos = norm_span.end.as_usize();
        src_pos = src_span.end.as_usize();
    }
    assert_eq!(norm_pos, norm.len(), "segments must cover the folded text");
    if !profile.options().aozora_ruby && !profile.options().html_ruby {
        assert_eq!(norm, once, "normalize and fold disagree on {text:?}");
    }
    for ruby in normalized.rubies() {
        assert!(ruby.base.end <= ruby.reading.start && ruby.reading.end.as_usize() <= text.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn fold_is_idempotent_with_sane_offsets(text in text_strategy(24)) {
        for profile in all_profiles() {
            check_fold(profile, &text);
        }
    }

    #[test]
    fn engines_agree_and_spans_hold(
        keys in prop::collection::vec(key_strategy(), 1..12),
        text in text_strategy(40),
        word_boundaries in any::<bool>(),
        profile_idx in 0usize..4,
    ) {
        let profile = all_profiles()[profile_idx];
        let keyed: Vec<(String, u32)> = keys
            .iter()
            .enumerate()
            .filter(|(_, k)| !profile.fold(k).trim().is_empty())
            .map(|(i, k)| (k.clone(), i as u32))
            .collect();
        prop_assume!(!keyed.is_empty());
        let matcher = MatcherBuilder::new(profile)
            .word_boundaries(word_boundaries)
            .build(keyed.iter().map(|(k, v)| (k.as_str(), *v)))
            .expect("build");
        let normalized = profile.normalize(&text).expect("normalize");
        let daachorse = matcher.find(&normalized);
        let aho = matcher.find_with(&AhoCorasickEngine::new(&matcher), &normalized);
        let naive = matcher.find_naive(&normalized);
        prop_assert_eq!(&daachorse, &aho, "daachorse vs aho-corasick");
        prop_assert_eq!(&daachorse, &naive, "daachorse vs naive");
        check_hits(&matcher, &normalized, &daachorse, &format!("{text:?} {keys:?}"));
        // Freezing and loading gives the same matcher.
        let frozen = matcher.to_bytes();
        let loaded = matcher::Matcher::from_bytes(&frozen, profile).expect("load");
        prop_assert_eq!(loaded.find(&normalized), daachorse);
    }

    #[test]
    fn key_found_in_its_own_text(key in key_strategy(), left in text_strategy(6), right in text_strategy(6)) {
        // A key always matches itself when surrounded by spaces (boundary-safe), unless a
        // longer overlapping key… there is only one key here.
        let profile = profile(Flavour::Ja);
        prop_assume!(!profile.fold(&key).trim().is_empty());
        let matcher = MatcherBuilder::new(profile).build([(key.as_str(), 7)]).expect("build");
        let text = format!("{left} {key} {right}");
        let normalized = profile.normalize(&text).expect("normalize");
        let hits = matcher.find(&normalized);
        check_hits(&matcher, &normalized, &hits, &text);
        let naive = matcher.find_naive(&normalized);
        prop_assert_eq!(hits, naive);
    }
}
