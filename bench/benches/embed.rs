//! Embedding search benchmark (issue 15): brute-force cosine top-10 over 50,000
//! vectors of dim 512 (by default), for batches of 16 queries, with `embed::Matrix` (f32, batched),
//! `embed::QuantizedMatrix` (int8, batched), both queried one query at a time, and a
//! naive baseline in the same process: an unbatched scalar loop that
//! computes each cosine from the raw vectors (both norms per pair), collects all
//! 50,000 scores and sorts them.
//!
//! The vectors are seeded pseudo-random (xorshift), each query a row plus 30% noise,
//! so the true top neighbour is known: before timing, every engine must return that row
//! first for every query, and 10 neighbours.
//!
//! Run: `cd bench && cargo bench --bench embed`. `LOREBANK_BENCH_ROWS` sets the rows
//! (default 50,000), `LOREBANK_BENCH_DIM` the dimension (default 512, the real
//! model's and the goal row). No ONNX Runtime is needed: this measures search
//! only.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use embed::{Matrix, QuantizedMatrix};
use test_support::search::noise;

const N_QUERIES: usize = 16;
const K: usize = 10;

fn dim() -> usize {
    std::env::var("LOREBANK_BENCH_DIM").ok().and_then(|value| value.parse().ok()).unwrap_or(512)
}

fn n_rows() -> usize {
    std::env::var("LOREBANK_BENCH_ROWS").ok().and_then(|value| value.parse().ok()).unwrap_or(50_000)
}

/// The baseline: one query at a time, a scalar loop per row with both norms, every
/// score kept, one full sort.
fn naive_top_k(rows: &[Vec<f32>], query: &[f32], k: usize) -> Vec<usize> {
    let mut scores: Vec<(f32, usize)> = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        let mut dot = 0f32;
        let mut row_norm = 0f32;
        let mut query_norm = 0f32;
        for i in 0..row.len() {
            dot += row[i] * query[i];
            row_norm += row[i] * row[i];
            query_norm += query[i] * query[i];
        }
        scores.push((dot / (row_norm.sqrt() * query_norm.sqrt()), index));
    }
    scores.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scores.into_iter().take(k).map(|(_, index)| index).collect()
}

struct Data {
    rows: Vec<Vec<f32>>,
    queries: Vec<Vec<f32>>,
    targets: Vec<usize>,
    matrix: Matrix,
    quantized: QuantizedMatrix,
}

fn data() -> Data {
    let n = n_rows();
    let dim = dim();
    let rows: Vec<Vec<f32>> = (0..n as u64).map(|i| noise(i, dim)).collect();
    let started = Instant::now();
    let matrix = Matrix::from_rows(dim, rows.iter().map(Vec::as_slice)).unwrap();
    let built = started.elapsed();
    let started = Instant::now();
    let quantized = matrix.quantize();
    let quantize = started.elapsed();
    eprintln!(
        "embed: {n} rows of dim {dim}: f32 matrix {:.1} MB built in {:.0} ms, int8 {:.1} MB quantized in {:.0} ms",
        (n * dim * 4) as f64 / 1e6,
        built.as_secs_f64() * 1e3,
        (n * (dim + 4)) as f64 / 1e6,
        quantize.as_secs_f64() * 1e3
    );
    let targets: Vec<usize> = (0..N_QUERIES).map(|i| (i * 7_919 + 13) % n).collect();
    let queries = targets
        .iter()
        .map(|target| {
            rows[*target].iter().zip(noise(1 << 40 | *target as u64, dim)).map(|(x, e)| x + 0.3 * e).collect()
        })
        .collect();
    Data { rows, queries, targets, matrix, quantized }
}

fn bench_search(c: &mut Criterion) {
    let data = data();
    let query_refs: Vec<&[f32]> = data.queries.iter().map(Vec::as_slice).collect();

    // Every engine finds each query's row first, with K neighbours: a broken run prints no number.
    let f32_neighbours = data.matrix.search(&query_refs, K).unwrap();
    let int8_neighbours = data.quantized.search(&query_refs, K).unwrap();
    for (query_idx, target) in data.targets.iter().enumerate() {
        let naive = naive_top_k(&data.rows, &data.queries[query_idx], K);
        assert_eq!(naive.len(), K);
        assert_eq!(naive[0], *target);
        assert_eq!(f32_neighbours[query_idx].len(), K);
        assert_eq!(f32_neighbours[query_idx][0].index as usize, *target);
        assert_eq!(int8_neighbours[query_idx].len(), K);
        assert_eq!(int8_neighbours[query_idx][0].index as usize, *target);
        let f32_top: Vec<usize> = f32_neighbours[query_idx].iter().map(|neighbour| neighbour.index as usize).collect();
        let overlap = f32_top.iter().filter(|index| naive.contains(index)).count();
        assert!(overlap >= K - 1, "f32 top-{K} and the naive top-{K} share {overlap}");
    }

    let mut group = c.benchmark_group(format!("embed_search_{}x{}_top{K}_{N_QUERIES}_queries", data.rows.len(), dim()));
    group.throughput(Throughput::Elements(N_QUERIES as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("f32_batched", |b| {
        b.iter(|| black_box(data.matrix.search(black_box(&query_refs), K).unwrap()))
    });
    group.bench_function("int8_batched", |b| {
        b.iter(|| black_box(data.quantized.search(black_box(&query_refs), K).unwrap()))
    });
    group.bench_function("f32_one_query_at_a_time", |b| {
        b.iter(|| {
            for query in &query_refs {
                black_box(data.matrix.search_one(black_box(query), K).unwrap());
            }
        })
    });
    group.bench_function("int8_one_query_at_a_time", |b| {
        b.iter(|| {
            for query in &query_refs {
                black_box(data.quantized.search_one(black_box(query), K).unwrap());
            }
        })
    });
    group.bench_function("naive_scalar_loop", |b| {
        b.iter(|| {
            for query in &data.queries {
                black_box(naive_top_k(black_box(&data.rows), query, K));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
