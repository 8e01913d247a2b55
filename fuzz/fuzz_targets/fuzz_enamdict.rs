//! See `lorebank_fuzz::enamdict` (`fuzz/src/lib.rs`) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lorebank_fuzz::enamdict(data));
