//! What the batch-cost tests share (`projections/tests/batch_cost.rs`,
//! `book/tests/batch_cost.rs`): a counting global allocator, the lock that runs one
//! measurement at a time, and generated names.
//!
//! A library cannot choose the allocator of the binaries that link it, so a test
//! binary installs the counter itself with [`count_allocations!`](crate::count_allocations);
//! [`allocated`] refuses to measure without it, so a count is never a silent zero.

use std::sync::{Mutex, MutexGuard};

use stats_alloc::Region;
pub use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

/// Installs the counting allocator as the global allocator of the test binary that
/// calls it (once, at the top level of the test file).
#[macro_export]
macro_rules! count_allocations {
    () => {
        #[global_allocator]
        static COUNTING_ALLOCATOR: &$crate::counting::StatsAlloc<::std::alloc::System> =
            &$crate::counting::INSTRUMENTED_SYSTEM;
    };
}

/// One test at a time: the allocator counts every thread of the binary, so each test
/// holds this while it runs.
static ALONE: Mutex<()> = Mutex::new(());

/// The lock of one measurement, held for the whole test.
pub fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What `work` returns and the bytes allocated while it ran.
///
/// # Panics
///
/// When the counting allocator is not the global one ([`count_allocations!`](crate::count_allocations)).
pub fn allocated<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let probe = Region::new(&INSTRUMENTED_SYSTEM);
    drop(std::hint::black_box(Box::new(0u64)));
    assert!(
        probe.change().allocations > 0,
        "the counting allocator is not installed: call test_support::count_allocations!() in the test file"
    );
    let region = Region::new(&INSTRUMENTED_SYSTEM);
    let value = work();
    let change = region.change();
    (value, change.bytes_allocated as u64 + change.bytes_reallocated.max(0) as u64)
}

/// `n` distinct three-character Chinese names (8,000 at most), none of which the
/// test folds change.
pub fn names(n: usize) -> Vec<String> {
    let first: Vec<char> = "林沈白云叶苏陆顾江秦楚韩柳宁谢温燕唐方姜".chars().collect();
    let rest: Vec<char> = "炎照川衣山天寒风月雪霜星辰海岳河清明远舟".chars().collect();
    assert!(n <= first.len() * rest.len() * rest.len());
    (0..n)
        .map(|index| {
            let (a, b, c) = (index / (rest.len() * rest.len()), index / rest.len() % rest.len(), index % rest.len());
            [first[a], rest[b], rest[c]].into_iter().collect()
        })
        .collect()
}
