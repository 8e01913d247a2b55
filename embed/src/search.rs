//! Brute-force cosine search over vectors in memory, in f32 or int8.
//!
//! No index: every query is scored against every row, so the result is exact (for
//! f32) and its order is total: score descending, then row index ascending. Scores
//! are ranked as [`Score`]s, fixed-point millionths of the cosine, which is also what
//! goes into hashed data (no floats there), so what is stored orders the way it was
//! ranked. Everything runs on the calling thread, in row order; no hash map is used.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fmt;

use crate::DIM_MAX;

/// The most rows a matrix holds: a row index is a `u32`.
pub const ROWS_MAX: usize = u32::MAX as usize;
/// The most queries one search call takes.
pub const QUERIES_PER_CALL_MAX: usize = 65_536;

/// Rows scored per block: the queries of a block stay in cache while a block of rows
/// streams past. Changes speed only; every score is the same function of two vectors.
const ROW_BLOCK: usize = 256;
const QUERY_BLOCK: usize = 16;
const F32_LANES: usize = 16;
const I8_LANES: usize = 32;

/// One embedding: `dim` f32 components.
#[derive(Clone, Debug, PartialEq)]
pub struct Vector(Vec<f32>);

impl Vector {
    /// A vector of these components.
    pub fn new(components: Vec<f32>) -> Vector {
        Vector(components)
    }

    /// Its components.
    pub fn as_slice(&self) -> &[f32] {
        &self.0
    }

    /// Its components, owned.
    pub fn into_vec(self) -> Vec<f32> {
        self.0
    }

    /// The number of components.
    pub fn dim(&self) -> usize {
        self.0.len()
    }

    /// The components as little-endian IEEE 754 bytes, 4 per component: the form a
    /// caller stores (as derived data, never inside hashed event bytes).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.0.iter().flat_map(|component| component.to_le_bytes()).collect()
    }

    /// Reads [`Vector::to_le_bytes`]; refuses a length that is not a multiple of 4 or
    /// over [`DIM_MAX`] components, and NaN or infinite components.
    pub fn from_le_bytes(bytes: &[u8]) -> Result<Vector, SearchError> {
        if bytes.len() % 4 != 0 || bytes.len() / 4 > DIM_MAX as usize {
            return Err(SearchError::BadVectorBytes { len: bytes.len() });
        }
        let components: Vec<f32> =
            bytes.chunks_exact(4).map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])).collect();
        if let Some(position) = components.iter().position(|component| !component.is_finite()) {
            return Err(SearchError::NotFinite { subject: Subject::Vector, index: 0, position });
        }
        Ok(Vector(components))
    }
}

/// A cosine as a fixed-point number: millionths, in `-1_000_000..=1_000_000`.
///
/// `Score::from_cosine(c)` is `round(clamp(c, -1, 1) * 10^6)`, rounding half away
/// from zero. Results are ranked by it, so two rows whose cosines round to the same
/// millionth are a tie, broken by the row index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Score(i32);

impl Score {
    /// The fixed-point scale: a cosine of 1 is this many.
    pub const SCALE: i32 = 1_000_000;

    /// The score of a cosine (NaN counts as -1; callers never pass one).
    pub fn from_cosine(cosine: f32) -> Score {
        if cosine.is_nan() {
            return Score(-Score::SCALE);
        }
        let clamped = f64::from(cosine.clamp(-1.0, 1.0));
        // In range by the clamp.
        Score((clamped * f64::from(Score::SCALE)).round() as i32)
    }

    /// A score of this many millionths, clamped to the valid range.
    pub fn from_millionths(millionths: i32) -> Score {
        Score(millionths.clamp(-Score::SCALE, Score::SCALE))
    }

    /// The score in millionths of a cosine.
    pub fn millionths(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Score {
    /// Six decimals: `0.912345`, `-0.000001`, `1.000000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let magnitude = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:06}", magnitude / 1_000_000, magnitude % 1_000_000)
    }
}

/// One result: a row, its fixed-point score, and the cosine it was rounded from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    /// The row index in the matrix: the caller's stable key order.
    pub index: u32,
    /// The score the results are ranked by.
    pub score: Score,
    /// The cosine as computed (int8: from the quantized vectors). Informational; never
    /// put it into hashed data.
    pub cosine: f32,
}

impl Neighbour {
    /// The ranking key: smaller is better (higher score, then lower index).
    fn key(&self) -> (Reverse<Score>, u32) {
        (Reverse(self.score), self.index)
    }
}

/// What a vector was in a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A row being added to a matrix.
    Row,
    /// A query.
    Query,
    /// A vector read from bytes.
    Vector,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Subject::Row => "row",
            Subject::Query => "query",
            Subject::Vector => "vector",
        })
    }
}

/// Why a matrix could not be built or searched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The dimension is 0 or over [`DIM_MAX`].
    #[error("dim {dim} is not in 1..={DIM_MAX}")]
    BadDim {
        /// The dimension asked for.
        dim: usize,
    },
    /// A vector has another number of components than the matrix.
    #[error("{subject} {index} has {found} components, the matrix {expected}")]
    WrongDim {
        /// Row or query.
        subject: Subject,
        /// Its index.
        index: usize,
        /// The matrix's dimension.
        expected: usize,
        /// The vector's.
        found: usize,
    },
    /// A component is NaN or infinite.
    #[error("{subject} {index} has a NaN or infinite component at position {position}")]
    NotFinite {
        /// Row, query or vector.
        subject: Subject,
        /// Its index.
        index: usize,
        /// The first bad component.
        position: usize,
    },
    /// A vector is zero (or so small its norm underflows): it has no direction.
    #[error("{subject} {index} is a zero vector and has no cosine")]
    ZeroVector {
        /// Row or query.
        subject: Subject,
        /// Its index.
        index: usize,
    },
    /// The matrix is full ([`ROWS_MAX`]).
    #[error("the matrix already holds {ROWS_MAX} rows")]
    TooManyRows,
    /// More queries in one call than [`QUERIES_PER_CALL_MAX`].
    #[error("{n_queries} queries in one call, more than the limit of {QUERIES_PER_CALL_MAX}")]
    TooManyQueries {
        /// The queries given.
        n_queries: usize,
    },
    /// Bytes that are not a vector.
    #[error("{len} bytes are not a vector of at most {DIM_MAX} little-endian f32 components")]
    BadVectorBytes {
        /// Their length.
        len: usize,
    },
}

/// Scales `vector` to unit L2 norm (the norm summed in f64, in component order);
/// `false`, leaving it unchanged, when it has no direction.
pub(crate) fn normalize_in_place(vector: &mut [f32]) -> bool {
    let norm = vector.iter().map(|component| f64::from(*component) * f64::from(*component)).sum::<f64>().sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return false;
    }
    let normalized: Vec<f32> = vector.iter().map(|component| (f64::from(*component) / norm) as f32).collect();
    if normalized.iter().all(|component| *component == 0.0) {
        return false;
    }
    vector.copy_from_slice(&normalized);
    // Postcondition: a finite vector of unit length (a walk over it: debug builds).
    debug_assert!(is_unit(vector), "a normalized vector is finite and of unit length");
    true
}

/// Whether `vector` is finite and of unit length, up to the rounding of its components
/// to f32.
fn is_unit(vector: &[f32]) -> bool {
    let norm_squared: f64 = vector.iter().map(|component| f64::from(*component) * f64::from(*component)).sum();
    vector.iter().all(|component| component.is_finite()) && (norm_squared - 1.0).abs() < 1e-4
}

fn checked_unit(subject: Subject, index: usize, dim: usize, vector: &[f32]) -> Result<Vec<f32>, SearchError> {
    if vector.len() != dim {
        return Err(SearchError::WrongDim { subject, index, expected: dim, found: vector.len() });
    }
    if let Some(position) = vector.iter().position(|component| !component.is_finite()) {
        return Err(SearchError::NotFinite { subject, index, position });
    }
    let mut unit = vector.to_vec();
    if !normalize_in_place(&mut unit) {
        return Err(SearchError::ZeroVector { subject, index });
    }
    // Postcondition: the vector has the matrix's dimension.
    assert_eq!(unit.len(), dim, "a checked vector has the matrix's dimension");
    Ok(unit)
}

/// The dot product in a fixed order: `F32_LANES` running sums over the
/// components, then the lanes added pairwise, then the tail. The same two slices give
/// the same bits on every call and every x86-64 or other CPU (no fused multiply-add,
/// no runtime dispatch).
#[inline]
fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; F32_LANES];
    let mut chunks_a = a.chunks_exact(F32_LANES);
    let mut chunks_b = b.chunks_exact(F32_LANES);
    for (chunk_a, chunk_b) in (&mut chunks_a).zip(&mut chunks_b) {
        for lane in 0..F32_LANES {
            lanes[lane] += chunk_a[lane] * chunk_b[lane];
        }
    }
    finish_f32(lanes, chunks_a.remainder(), chunks_b.remainder())
}

#[inline]
fn finish_f32(mut lanes: [f32; F32_LANES], tail_a: &[f32], tail_b: &[f32]) -> f32 {
    let mut tail = 0f32;
    for (x, y) in tail_a.iter().zip(tail_b) {
        tail += x * y;
    }
    let mut width = F32_LANES;
    while width > 1 {
        width /= 2;
        for lane in 0..width {
            lanes[lane] += lanes[lane + width];
        }
    }
    lanes[0] + tail
}

/// The exact integer dot product of two int8 vectors.
#[inline]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; I8_LANES];
    let mut chunks_a = a.chunks_exact(I8_LANES);
    let mut chunks_b = b.chunks_exact(I8_LANES);
    for (chunk_a, chunk_b) in (&mut chunks_a).zip(&mut chunks_b) {
        for lane in 0..I8_LANES {
            lanes[lane] += i32::from(chunk_a[lane]) * i32::from(chunk_b[lane]);
        }
    }
    let mut sum: i32 = lanes.iter().sum();
    for (x, y) in chunks_a.remainder().iter().zip(chunks_b.remainder()) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// The best `k` neighbours seen so far; the worst of them on top of the heap.
struct TopK {
    k: usize,
    heap: BinaryHeap<Ranked>,
    /// Once `k` are kept, the cosine of the worst of them: a row at or below it can
    /// never be kept (its score is at most the worst's, and its index is later), so it
    /// is turned away before its score is computed. `-inf` until then.
    floor: f32,
}

/// A neighbour ordered by its ranking key, so the heap's top is the worst kept neighbour.
struct Ranked(Neighbour);

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.0.key() == other.0.key()
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> Ordering {
        self.0.key().cmp(&other.0.key())
    }
}

impl TopK {
    fn new(k: usize) -> TopK {
        TopK { k, heap: BinaryHeap::with_capacity(k.min(4096) + 1), floor: f32::NEG_INFINITY }
    }

    #[inline]
    fn offer(&mut self, index: u32, cosine: f32) {
        // `Score::from_cosine` never decreases as the cosine grows, so this turns away
        // only rows the comparison below would (a NaN falls through to it).
        if self.k == 0 || cosine <= self.floor {
            return;
        }
        let neighbour = Neighbour { index, score: Score::from_cosine(cosine), cosine };
        if self.heap.len() < self.k {
            self.heap.push(Ranked(neighbour));
        } else if let Some(worst) = self.heap.peek() {
            // Rows come in index order, so an equal score never displaces a kept neighbour.
            if neighbour.key() < worst.0.key() {
                self.heap.pop();
                self.heap.push(Ranked(neighbour));
            }
        }
        if self.heap.len() == self.k {
            if let Some(worst) = self.heap.peek() {
                self.floor = worst.0.cosine;
            }
        }
        // Invariant: at most k kept (checked per row scored: debug builds only).
        debug_assert!(self.heap.len() <= self.k, "top-k keeps at most k neighbours");
    }

    fn into_sorted(self) -> Vec<Neighbour> {
        let k = self.k;
        let mut neighbours: Vec<Neighbour> = self.heap.into_iter().map(|ranked| ranked.0).collect();
        neighbours.sort_by_key(Neighbour::key);
        // Postcondition: at most k, best first, each row once.
        assert!(neighbours.len() <= k, "top-k returns at most k neighbours");
        assert!(
            neighbours.windows(2).all(|pair| pair[0].key() < pair[1].key()),
            "top-k is sorted by score descending, then row index ascending"
        );
        neighbours
    }
}

/// The answer to `n_queries` queries of a matrix of `n_rows` rows: each query's top
/// `k`, best first.
fn answers(tops: Vec<TopK>, n_queries: usize, k: usize, n_rows: usize) -> Vec<Vec<Neighbour>> {
    let answers: Vec<Vec<Neighbour>> = tops.into_iter().map(TopK::into_sorted).collect();
    // Postcondition: one list per query, each of at most `k` rows of the matrix
    // (each sorted: `TopK::into_sorted`).
    let holds = answers.len() == n_queries
        && answers.iter().all(|neighbours| {
            neighbours.len() <= k.min(n_rows) && neighbours.iter().all(|neighbour| (neighbour.index as usize) < n_rows)
        });
    assert!(holds, "a search answers each query with rows of the matrix");
    answers
}

/// Vectors in memory, each scaled to unit length when added, searched by cosine.
///
/// Row `i` is the `i`-th vector added; the caller adds rows in the order of its own
/// stable key (record id, say), and that order breaks ties between equal scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    dim: usize,
    data: Vec<f32>,
}

impl Matrix {
    /// An empty matrix of vectors with `dim` components, 1 to [`DIM_MAX`].
    pub fn new(dim: usize) -> Result<Matrix, SearchError> {
        if dim == 0 || dim > DIM_MAX as usize {
            return Err(SearchError::BadDim { dim });
        }
        Ok(Matrix { dim, data: Vec::new() })
    }

    /// A matrix of these rows, in order.
    pub fn from_rows<'a>(dim: usize, rows: impl IntoIterator<Item = &'a [f32]>) -> Result<Matrix, SearchError> {
        let mut matrix = Matrix::new(dim)?;
        for row in rows {
            matrix.push(row)?;
        }
        Ok(matrix)
    }

    /// Adds a row (scaled to unit length) and returns its index. Refuses a vector of
    /// another dimension, with a NaN or infinite component, or zero.
    pub fn push(&mut self, row: &[f32]) -> Result<u32, SearchError> {
        let index = self.len();
        if index >= ROWS_MAX {
            return Err(SearchError::TooManyRows);
        }
        let unit = checked_unit(Subject::Row, index, self.dim, row)?;
        self.data.extend_from_slice(&unit);
        // Postcondition: the row is the last one, of the matrix's dimension.
        assert_eq!(self.data.len(), (index + 1) * self.dim, "a row has the matrix's dimension");
        // Below ROWS_MAX, which is u32::MAX.
        Ok(index as u32)
    }

    /// The number of components of every row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.data.len() / self.dim
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Row `index` as stored (unit length), if there is one.
    pub fn row(&self, index: usize) -> Option<&[f32]> {
        self.data.get(index * self.dim..(index + 1) * self.dim)
    }

    /// The `k` rows most similar to each query, best first: score descending, then
    /// row index ascending. Fewer than `k` when the matrix is smaller; none for `k = 0`.
    /// Queries are scaled to unit length; a query of another dimension, with a NaN or
    /// infinite component, or zero is an error and no query is answered.
    pub fn search(&self, queries: &[&[f32]], k: usize) -> Result<Vec<Vec<Neighbour>>, SearchError> {
        let units = checked_queries(self.dim, queries)?;
        let mut tops: Vec<TopK> = units.iter().map(|_| TopK::new(k)).collect();
        if k == 0 {
            return Ok(tops.into_iter().map(TopK::into_sorted).collect());
        }
        let n_rows = self.len();
        for (query_block, top_block) in units.chunks(QUERY_BLOCK).zip(tops.chunks_mut(QUERY_BLOCK)) {
            for block_start in (0..n_rows).step_by(ROW_BLOCK) {
                let block_end = (block_start + ROW_BLOCK).min(n_rows);
                for row_idx in block_start..block_end {
                    let row = &self.data[row_idx * self.dim..(row_idx + 1) * self.dim];
                    for (query, top) in query_block.iter().zip(top_block.iter_mut()) {
                        top.offer(row_idx as u32, dot_f32(row, query));
                    }
                }
            }
        }
        Ok(answers(tops, queries.len(), k, n_rows))
    }

    /// [`Matrix::search`] for one query.
    pub fn search_one(&self, query: &[f32], k: usize) -> Result<Vec<Neighbour>, SearchError> {
        Ok(self.search(&[query], k)?.remove(0))
    }

    /// The int8 form of this matrix (see [`QuantizedMatrix`]).
    pub fn quantize(&self) -> QuantizedMatrix {
        let n_rows = self.len();
        let mut codes = Vec::with_capacity(self.data.len());
        let mut scales = Vec::with_capacity(n_rows);
        for row in self.data.chunks_exact(self.dim) {
            scales.push(quantize_into(row, &mut codes));
        }
        QuantizedMatrix { dim: self.dim, codes, scales }
    }
}

fn checked_queries(dim: usize, queries: &[&[f32]]) -> Result<Vec<Vec<f32>>, SearchError> {
    if queries.len() > QUERIES_PER_CALL_MAX {
        return Err(SearchError::TooManyQueries { n_queries: queries.len() });
    }
    queries.iter().enumerate().map(|(index, query)| checked_unit(Subject::Query, index, dim, query)).collect()
}

/// Appends the int8 codes of a unit vector and returns its scale:
/// `scale = max|x| / 127`, `code = round(x / scale)` (half away from zero), so the
/// largest component is ±127 and `x ≈ code × scale`.
fn quantize_into(unit: &[f32], codes: &mut Vec<i8>) -> f32 {
    let max_abs = unit.iter().fold(0f32, |max, component| max.max(component.abs()));
    // A unit vector has a component of at least 1/sqrt(dim), so max_abs > 0.
    let scale = max_abs / 127.0;
    codes.extend(unit.iter().map(|component| (component / scale).round().clamp(-127.0, 127.0) as i8));
    scale
}

/// A matrix quantized to int8 with one symmetric scale per vector: a quarter of the
/// memory of a [`Matrix`], and integer dot products.
///
/// A score is `dot(codes_row, codes_query) × scale_row × scale_query`, the exact
/// integer dot product of the codes scaled in f64, so it is deterministic and close
/// to the f32 cosine (the error per component is at most half a step, `scale / 2`).
/// Rankings agree with f32 where scores are further apart than that error; close
/// scores may swap. Use it for large candidate sets, and f32 to re-rank the top if
/// the order of near ties matters.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedMatrix {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl QuantizedMatrix {
    /// The number of components of every row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Row `index`: its codes and its scale.
    pub fn row(&self, index: usize) -> Option<(&[i8], f32)> {
        Some((self.codes.get(index * self.dim..(index + 1) * self.dim)?, *self.scales.get(index)?))
    }

    /// As [`Matrix::search`], on the quantized rows with each query quantized the same
    /// way.
    pub fn search(&self, queries: &[&[f32]], k: usize) -> Result<Vec<Vec<Neighbour>>, SearchError> {
        let units = checked_queries(self.dim, queries)?;
        let mut query_codes = Vec::with_capacity(units.len() * self.dim);
        let query_scales: Vec<f32> = units.iter().map(|unit| quantize_into(unit, &mut query_codes)).collect();
        let mut tops: Vec<TopK> = units.iter().map(|_| TopK::new(k)).collect();
        if k == 0 {
            return Ok(tops.into_iter().map(TopK::into_sorted).collect());
        }
        let n_rows = self.len();
        let n_queries = units.len();
        for block_first_query in (0..n_queries).step_by(QUERY_BLOCK) {
            let block_end_query = (block_first_query + QUERY_BLOCK).min(n_queries);
            for block_start in (0..n_rows).step_by(ROW_BLOCK) {
                let block_end = (block_start + ROW_BLOCK).min(n_rows);
                for row_idx in block_start..block_end {
                    let row = &self.codes[row_idx * self.dim..(row_idx + 1) * self.dim];
                    let row_scale = f64::from(self.scales[row_idx]);
                    for query_idx in block_first_query..block_end_query {
                        let query = &query_codes[query_idx * self.dim..(query_idx + 1) * self.dim];
                        let dot = f64::from(dot_i8(row, query));
                        let cosine = (dot * row_scale * f64::from(query_scales[query_idx])) as f32;
                        tops[query_idx].offer(row_idx as u32, cosine);
                    }
                }
            }
        }
        Ok(answers(tops, queries.len(), k, n_rows))
    }

    /// [`QuantizedMatrix::search`] for one query.
    pub fn search_one(&self, query: &[f32], k: usize) -> Result<Vec<Neighbour>, SearchError> {
        Ok(self.search(&[query], k)?.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_rounds_half_away_from_zero_and_clamps() {
        assert_eq!(Score::from_cosine(1.5).millionths(), 1_000_000);
        assert_eq!(Score::from_cosine(-2.0).millionths(), -1_000_000);
        assert_eq!(Score::from_cosine(0.0).millionths(), 0);
        assert_eq!(Score::from_cosine(0.5).millionths(), 500_000);
        assert_eq!(Score::from_cosine(f32::NAN).millionths(), -1_000_000);
        assert_eq!(Score::from_millionths(7).to_string(), "0.000007");
        assert_eq!(Score::from_millionths(-1).to_string(), "-0.000001");
        assert_eq!(Score::from_millionths(1_000_000).to_string(), "1.000000");
    }

    #[test]
    fn dot_f32_matches_a_plain_sum_on_small_integers() {
        // Small integers are exact in f32, so any summation order gives the same sum.
        let a: Vec<f32> = (0..37).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..37).map(|i| (i % 5) as f32 - 2.0).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert_eq!(dot_f32(&a, &b), plain);
        let a8: Vec<i8> = (0..77).map(|i| (i * 37 % 255 - 127) as i8).collect();
        let b8: Vec<i8> = (0..77).map(|i| (i * 91 % 255 - 127) as i8).collect();
        let plain8: i32 = a8.iter().zip(&b8).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
        assert_eq!(dot_i8(&a8, &b8), plain8);
    }

    #[test]
    fn quantized_codes_reach_127() {
        let mut codes = Vec::new();
        let scale = quantize_into(&[0.6, -0.8], &mut codes);
        assert_eq!(codes[1], -127);
        assert!((f32::from(codes[0]) * scale - 0.6).abs() <= scale / 2.0);
    }
}
