//! fuzz_normalize: for arbitrary text and each profile flavour, the fold is idempotent,
//! `normalize` agrees with `fold` when no markup is enabled, the offset map's segments
//! tile the folded text with increasing source spans on char boundaries, and ruby spans
//! stay in range.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use matcher::{Flavour, Profile, ProfileBuilder};

fn profiles() -> &'static [Profile] {
    static PROFILES: OnceLock<Vec<Profile>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        vec![
            ProfileBuilder::new(Flavour::Zh).build().expect("zh profile"),
            ProfileBuilder::new(Flavour::Ja).build().expect("ja profile"),
            ProfileBuilder::new(Flavour::Plain).build().expect("plain profile"),
            ProfileBuilder::nfkc_only().build().expect("nfkc profile"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    if rest.len() > 4096 {
        return;
    }
    let text = String::from_utf8_lossy(rest);
    let profile = &profiles()[selector as usize % profiles().len()];
    let once = profile.fold(&text);
    assert_eq!(profile.fold(&once), once, "fold not idempotent on {text:?}");
    let normalized = profile.normalize(&text).expect("normalize");
    let norm = normalized.as_str();
    let options = profile.options();
    if !options.aozora_ruby && !options.html_ruby {
        assert_eq!(norm, once);
    }
    let (mut norm_pos, mut src_pos) = (0usize, 0usize);
    for (norm_span, src_span) in normalized.segments() {
        assert_eq!(norm_span.start.as_usize(), norm_pos);
        assert!(norm_span.end > norm_span.start && norm.is_char_boundary(norm_span.end.as_usize()));
        assert!(src_span.start.as_usize() >= src_pos && src_span.end > src_span.start);
        assert!(src_span.end.as_usize() <= text.len());
        assert!(text.is_char_boundary(src_span.start.as_usize()));
        assert!(text.is_char_boundary(src_span.end.as_usize()));
        assert_eq!(text[src_span.bytes()].chars().count(), src_span.chars().len());
        norm_pos = norm_span.end.as_usize();
        src_pos = src_span.end.as_usize();
    }
    assert_eq!(norm_pos, norm.len());
    for ruby in normalized.rubies() {
        assert!(ruby.base.start < ruby.base.end && ruby.base.end <= ruby.reading.start);
        assert!(ruby.reading.end.as_usize() <= text.len());
        assert!(text.is_char_boundary(ruby.reading.start.as_usize()));
        assert!(text.is_char_boundary(ruby.reading.end.as_usize()));
    }
});
