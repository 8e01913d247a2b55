//! Projections: the state a translator and an auditor ask about, folded from the event log.
//!
//! This crate will own `fold(events) -> State`, the bi-temporal reads (editorial
//! revision × chapter window), the UNIQUE(src, sense, window) index, the reverse-dst
//! conflict index, the content-addressed snapshot ID and the frozen automaton cache.
//!
//! It must not do I/O: no files, no redb, no clocks, no randomness, and no iteration
//! over hash maps in anything that is hashed or rendered. It takes events and returns
//! values; the `ledger` crate and the application do the reading and writing.
