//! fuzz_matcher: arbitrary keys (the first lines of the input) over an arbitrary text
//! (the rest): daachorse (`Matcher::find`), the naive leftmost-longest scanner
//! (`Matcher::find_naive`) and a frozen-and-loaded copy return identical hits, and
//! every hit keeps the span contract: `fold(original[span]) == pattern`, increasing,
//! non-overlapping, on char boundaries.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use matcher::{Flavour, Matcher, MatcherBuilder, Profile, ProfileBuilder};

fn profiles() -> &'static [Profile] {
    static PROFILES: OnceLock<Vec<Profile>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        vec![
            ProfileBuilder::new(Flavour::Zh).build().expect("zh profile"),
            ProfileBuilder::new(Flavour::Ja).build().expect("ja profile"),
            ProfileBuilder::new(Flavour::Plain).build().expect("plain profile"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    if rest.len() > 2048 {
        return;
    }
    let input = String::from_utf8_lossy(rest);
    let mut parts = input.splitn(9, '\n');
    let mut keys: Vec<&str> = Vec::new();
    let mut text = "";
    for _ in 0..8 {
        match parts.next() {
            Some(part) if part.starts_with('\u{1}') => text = part,
            Some(part) => keys.push(part),
            None => break,
        }
    }
    if let Some(last) = parts.next() {
        text = last;
    }
    let profile = &profiles()[selector as usize % profiles().len()];
    let Ok(matcher) = MatcherBuilder::new(profile)
        .word_boundaries(selector & 0x80 != 0)
        .build(keys.iter().enumerate().map(|(i, k)| (*k, i as u32)))
    else {
        return;
    };
    let normalized = profile.normalize(text).expect("normalize");
    let hits = matcher.find(&normalized);
    assert_eq!(hits, matcher.find_naive(&normalized), "daachorse vs naive");
    let loaded = Matcher::from_bytes(&matcher.to_bytes(), profile).expect("load");
    assert_eq!(hits, loaded.find(&normalized), "frozen copy");
    let mut prev_end = 0usize;
    for hit in &hits {
        let span = hit.src.bytes();
        assert!(span.start >= prev_end && span.start < span.end && span.end <= text.len());
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        prev_end = span.end;
        let refolded = profile.normalize(&text[span]).expect("normalize span");
        assert_eq!(refolded.as_str(), matcher.pattern(hit.pattern));
    }
});
