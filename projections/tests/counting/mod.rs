//! What the batch-cost tests share (`projections/tests/batch_cost.rs`, and
//! `book/tests/batch_cost.rs` through `#[path]`): the counting global allocator, the
//! lock that runs one measurement at a time, and generated names.

#![allow(dead_code)]

use std::alloc::System;
use std::sync::{Mutex, MutexGuard};

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One test at a time: the allocator counts every thread of the binary, so each test
/// holds this while it runs.
static ALONE: Mutex<()> = Mutex::new(());

pub fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What `work` returns and the bytes allocated while it ran.
pub fn allocated<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let region = Region::new(GLOBAL);
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
