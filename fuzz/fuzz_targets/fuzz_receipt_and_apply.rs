//! See `lorebank_fuzz::receipt_and_apply` (`fuzz/src/lib.rs`) for what this target checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lorebank_fuzz::receipt_and_apply(data));
