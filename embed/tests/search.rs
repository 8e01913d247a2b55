//! Brute-force search: ties broken by row index, fixed-point scores, top-k equal to
//! the full ranking cut at k and consistent with an f64 cosine oracle (proptest, with
//! small-integer vectors so ties are frequent), batched queries equal to one-by-one
//! across block boundaries, int8 agreeing with f32 on well-separated data, and every
//! bad vector refused with its index.

use embed::{Matrix, Neighbour, Score, SearchError, Subject, Vector};
use proptest::prelude::*;
use test_support::search::noise;

fn indexes(neighbours: &[Neighbour]) -> Vec<u32> {
    neighbours.iter().map(|neighbour| neighbour.index).collect()
}

fn oracle_cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn equal_scores_are_ordered_by_row_index() {
    let rows: [&[f32]; 6] = [
        &[0.0, 1.0, 0.0],
        &[3.0, 0.0, 0.0], // the query's direction
        &[0.0, 0.0, 1.0],
        &[1.0, 0.0, 0.0], // the same direction: a tie with row 1
        &[1.0, 1.0, 0.0],
        &[0.5, 0.0, 0.0], // a tie again
    ];
    let matrix = Matrix::from_rows(3, rows).unwrap();
    let neighbours = matrix.search_one(&[2.0, 0.0, 0.0], 6).unwrap();
    assert_eq!(indexes(&neighbours), [1, 3, 5, 4, 0, 2]);
    let scores: Vec<i32> = neighbours.iter().map(|neighbour| neighbour.score.millionths()).collect();
    assert_eq!(scores, [1_000_000, 1_000_000, 1_000_000, 707_107, 0, 0]);
    assert_eq!(indexes(&matrix.search_one(&[2.0, 0.0, 0.0], 2).unwrap()), [1, 3]);

    // Cosines that round to the same millionth are a tie too, whatever their f32s:
    // the lower index wins although its cosine is a hair smaller.
    let tiny = 1e-7f32;
    let near = Matrix::from_rows(2, [&[1.0, tiny][..], &[1.0, 0.0][..]]).unwrap();
    let neighbours = near.search_one(&[1.0, 0.0], 2).unwrap();
    assert!(neighbours[0].cosine <= neighbours[1].cosine);
    assert_eq!(neighbours[0].score, neighbours[1].score);
    assert_eq!(indexes(&neighbours), [0, 1]);
}

#[test]
fn k_zero_k_over_the_rows_and_an_empty_matrix() {
    let matrix = Matrix::from_rows(2, [&[1.0, 0.0][..], &[0.0, 1.0][..]]).unwrap();
    assert!(matrix.search_one(&[1.0, 1.0], 0).unwrap().is_empty());
    assert_eq!(indexes(&matrix.search_one(&[1.0, 0.5], 10).unwrap()), [0, 1]);
    let empty = Matrix::new(2).unwrap();
    assert!(empty.is_empty());
    assert!(empty.search_one(&[1.0, 0.0], 3).unwrap().is_empty());
    assert!(empty.quantize().search_one(&[1.0, 0.0], 3).unwrap().is_empty());
    assert_eq!(matrix.search(&[], 3).unwrap(), Vec::<Vec<Neighbour>>::new());
}

#[test]
fn bad_vectors_are_refused_with_their_index() {
    assert_eq!(Matrix::new(0), Err(SearchError::BadDim { dim: 0 }));
    assert_eq!(Matrix::new(8193), Err(SearchError::BadDim { dim: 8193 }));
    let mut matrix = Matrix::new(2).unwrap();
    assert_eq!(matrix.push(&[1.0, 0.0]), Ok(0));
    assert_eq!(
        matrix.push(&[1.0, 0.0, 0.0]),
        Err(SearchError::WrongDim { subject: Subject::Row, index: 1, expected: 2, found: 3 })
    );
    assert_eq!(
        matrix.push(&[0.0, f32::NAN]),
        Err(SearchError::NotFinite { subject: Subject::Row, index: 1, position: 1 })
    );
    assert_eq!(matrix.push(&[0.0, 0.0]), Err(SearchError::ZeroVector { subject: Subject::Row, index: 1 }));
    assert_eq!(matrix.len(), 1, "a refused row is not added");
    // A subnormal vector still has a direction (its norm is taken in f64).
    assert_eq!(matrix.push(&[1e-45, 0.0]), Ok(1));
    assert_eq!(matrix.row(1), Some(&[1.0f32, 0.0][..]));
    let error = matrix.search(&[&[1.0, 0.0], &[f32::INFINITY, 0.0]], 1).unwrap_err();
    assert_eq!(error, SearchError::NotFinite { subject: Subject::Query, index: 1, position: 0 });
    assert_eq!(error.to_string(), "query 1 has a NaN or infinite component at position 0");
    assert_eq!(
        matrix.quantize().search(&[&[0.0, 0.0]], 1).unwrap_err().to_string(),
        "query 0 is a zero vector and has no cosine"
    );
    assert_eq!(matrix.search_one(&[1.0], 1).unwrap_err().to_string(), "query 0 has 1 components, the matrix 2");
}

#[test]
fn vectors_round_trip_through_their_bytes() {
    let vector = Vector::new(vec![1.5, -0.0, 3.25e-5, f32::MIN_POSITIVE]);
    let bytes = vector.to_le_bytes();
    assert_eq!(&bytes[..4], &1.5f32.to_le_bytes());
    assert_eq!(Vector::from_le_bytes(&bytes).unwrap().to_le_bytes(), bytes);
    assert_eq!(Vector::from_le_bytes(&bytes[..5]), Err(SearchError::BadVectorBytes { len: 5 }));
    let nan = f32::NAN.to_le_bytes();
    assert!(matches!(Vector::from_le_bytes(&nan), Err(SearchError::NotFinite { position: 0, .. })));
}

#[test]
fn batched_queries_give_what_one_by_one_queries_give() {
    // 600 rows and 40 queries cross the row and query blocks of the batched loops.
    let dim = 24;
    let rows: Vec<Vec<f32>> = (0..600).map(|i| noise(i, dim)).collect();
    let matrix = Matrix::from_rows(dim, rows.iter().map(Vec::as_slice)).unwrap();
    let quantized = matrix.quantize();
    let queries: Vec<Vec<f32>> = (0..40).map(|i| noise(10_000 + i, dim)).collect();
    let query_refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
    let batched = matrix.search(&query_refs, 7).unwrap();
    let batched_int8 = quantized.search(&query_refs, 7).unwrap();
    for (query_idx, query) in queries.iter().enumerate() {
        assert_eq!(batched[query_idx], matrix.search_one(query, 7).unwrap(), "query {query_idx}");
        assert_eq!(batched_int8[query_idx], quantized.search_one(query, 7).unwrap(), "query {query_idx}");
    }
    assert_eq!(matrix.search(&query_refs, 7).unwrap(), batched, "the same call gives the same neighbours");
}

#[test]
fn int8_and_f32_agree_on_well_separated_data() {
    let dim = 96;
    let rows: Vec<Vec<f32>> = (0..2_000).map(|i| noise(i, dim)).collect();
    let matrix = Matrix::from_rows(dim, rows.iter().map(Vec::as_slice)).unwrap();
    let quantized = matrix.quantize();
    assert_eq!(quantized.len(), 2_000);
    assert_eq!(quantized.row(3).unwrap().0.iter().map(|code| code.unsigned_abs()).max(), Some(127));
    // Each query is a row plus 30% noise: that row's cosine is about 0.95, the next
    // about 0.4.
    let targets: Vec<usize> = (0..100).map(|i| i * 19 % 2_000).collect();
    let queries: Vec<Vec<f32>> = targets
        .iter()
        .map(|target| rows[*target].iter().zip(noise(50_000 + *target as u64, dim)).map(|(x, n)| x + 0.3 * n).collect())
        .collect();
    let query_refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
    let exact = matrix.search(&query_refs, 3).unwrap();
    let approximate = quantized.search(&query_refs, 3).unwrap();
    let mut max_error = 0f64;
    for ((target, exact), approximate) in targets.iter().zip(&exact).zip(&approximate) {
        assert_eq!(exact[0].index as usize, *target);
        assert_eq!(approximate[0].index as usize, *target);
        assert!(exact[0].score.millionths() - exact[1].score.millionths() > 200_000, "well separated");
        for neighbour in approximate {
            let f32_cosine = oracle_cosine(
                &rows[neighbour.index as usize],
                &queries[targets.iter().position(|t| t == target).unwrap()],
            );
            max_error = max_error.max((f64::from(neighbour.cosine) - f32_cosine).abs());
        }
    }
    assert!(max_error < 0.02, "int8 cosine error {max_error}");
}

/// Vectors of small integers: many share a direction, so ties are common.
fn small_vectors(dim: usize, n: std::ops::Range<usize>) -> impl Strategy<Value = Vec<Vec<f32>>> {
    proptest::collection::vec(
        proptest::collection::vec(-2i8..=2, dim).prop_filter("not zero", |v| v.iter().any(|x| *x != 0)),
        n,
    )
    .prop_map(|rows| rows.into_iter().map(|row| row.into_iter().map(f32::from).collect()).collect())
}

proptest! {
    #[test]
    fn top_k_is_the_full_ranking_cut_at_k(
        rows in small_vectors(4, 0..60),
        queries in small_vectors(4, 1..5),
        k in 0usize..70,
    ) {
        let matrix = Matrix::from_rows(4, rows.iter().map(Vec::as_slice)).unwrap();
        let query_refs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
        for (matrix_name, top, all) in [
            ("f32", matrix.search(&query_refs, k).unwrap(), matrix.search(&query_refs, rows.len()).unwrap()),
            ("int8", matrix.quantize().search(&query_refs, k).unwrap(), matrix.quantize().search(&query_refs, rows.len()).unwrap()),
        ] {
            for (query_idx, (top, all)) in top.iter().zip(&all).enumerate() {
                // The full ranking: every row once, ordered by (score desc, index asc).
                let mut seen: Vec<u32> = indexes(all);
                seen.sort_unstable();
                prop_assert_eq!(seen, (0..rows.len() as u32).collect::<Vec<_>>());
                let mut naive = all.clone();
                naive.sort_by_key(|neighbour| (std::cmp::Reverse(neighbour.score), neighbour.index));
                prop_assert_eq!(&naive, all);
                prop_assert_eq!(&top[..], &all[..k.min(rows.len())], "{} query {}", matrix_name, query_idx);
                for neighbour in all {
                    prop_assert_eq!(neighbour.score, Score::from_cosine(neighbour.cosine));
                    if matrix_name == "f32" {
                        let oracle = oracle_cosine(&rows[neighbour.index as usize], &queries[query_idx]);
                        prop_assert!((f64::from(neighbour.cosine) - oracle).abs() < 1e-6);
                    }
                }
            }
        }
    }

    #[test]
    fn f32_ranking_agrees_with_an_f64_oracle(rows in small_vectors(6, 1..40), query in small_vectors(6, 1..2)) {
        let matrix = Matrix::from_rows(6, rows.iter().map(Vec::as_slice)).unwrap();
        let neighbours = matrix.search_one(&query[0], rows.len()).unwrap();
        for pair in neighbours.windows(2) {
            let first = oracle_cosine(&rows[pair[0].index as usize], &query[0]);
            let second = oracle_cosine(&rows[pair[1].index as usize], &query[0]);
            // Never ranked below a row whose true cosine is clearly smaller.
            prop_assert!(first > second - 2e-6, "{:?} {} {}", pair, first, second);
        }
    }
}
