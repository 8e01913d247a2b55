//! fuzz_frozen_load: arbitrary bytes given to `Matcher::from_bytes` return an error,
//! never a panic or a hang (the hash check comes before daachorse sees a byte); the
//! same bytes XOR-ed onto a valid frozen matcher are refused unless they change
//! nothing; arbitrary bytes given to `Profile::from_bytes` never panic, and any profile
//! that does load folds idempotently.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use matcher::{Flavour, Matcher, MatcherBuilder, Profile, ProfileBuilder};

fn fixture() -> &'static (Profile, Vec<u8>) {
    static FIXTURE: OnceLock<(Profile, Vec<u8>)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let profile = ProfileBuilder::new(Flavour::Plain).build().expect("plain profile");
        let matcher =
            MatcherBuilder::new(&profile).build([("Lin", 1), ("林", 2), ("かたかな", 3), ("ёлка", 4)]).expect("build");
        let bytes = matcher.to_bytes();
        (profile, bytes)
    })
}

fuzz_target!(|data: &[u8]| {
    let (profile, valid) = fixture();
    assert!(Matcher::from_bytes(data, profile).is_err(), "arbitrary bytes loaded");
    let mut patched = valid.clone();
    for (idx, byte) in data.iter().enumerate().take(valid.len()) {
        patched[idx] ^= byte;
    }
    if patched != *valid {
        assert!(Matcher::from_bytes(&patched, profile).is_err(), "patched matcher loaded");
    }
    if let Ok(loaded) = Profile::from_bytes(data) {
        let text = String::from_utf8_lossy(data);
        let once = loaded.fold(&text);
        assert_eq!(loaded.fold(&once), once);
        let _ = loaded.normalize(&text);
    }
});
