//! CPU references: what each GPU kernel must compute, in the plainest form, and the tolerance a
//! float result is checked with.
//!
//! The generic ones ([`reduce`], [`scan`], [`argmin`], [`argmax`], [`dot`],
//! [`segmented_reduce`]) follow the device-wide algorithms for every element type and operator
//! of the table, in the same accumulator and arithmetic (wrapping integers, NaN-propagating
//! min / max), combining left to right. Integer results must match the GPU exactly; float sums
//! are grouped differently on the GPU, so compare them exactly only on inputs whose partial sums
//! are exact (the GPU tests use multiples of 1/4), else within [`f32_sum_error_bound`]. The
//! `f32` ones below them accumulate in `f64` for the lessons.

pub mod rows;
pub mod sort;

use crate::device::{
    Accumulator, DotElement, Element, HistogramLevel, HistogramSample, Operator, Predicate, ScanKind,
};

/// `x[0] ⊕ x[1] ⊕ ... ⊕ x[n-1]` in `T::Acc`; the identity for an empty `x`.
///
/// # Example
/// ```
/// use gpu_primitives::device::{Max, Sum};
/// use gpu_primitives::reference;
/// assert_eq!(reference::reduce::<u32, Sum>(&[]), 0);
/// assert_eq!(reference::reduce::<f32, Max>(&[1.0, f32::NAN, 3.0]).is_nan(), true);
/// ```
pub fn reduce<T: Element, Op: Operator>(x: &[T]) -> T::Acc {
    x.iter().fold(Op::identity(), |a, &v| Op::combine(a, v.to_acc()))
}

/// The inclusive or exclusive scan of `x` with `Op`, in `T::Acc` (an exclusive scan starts
/// with the identity).
///
/// # Example
/// ```
/// use gpu_primitives::device::{ScanKind, Sum};
/// let y = gpu_primitives::reference::scan::<i32, Sum>(&[1, 2, 3], ScanKind::Exclusive);
/// assert_eq!(y, [0, 1, 3]);
/// ```
pub fn scan<T: Element, Op: Operator>(x: &[T], kind: ScanKind) -> Vec<T::Acc> {
    let mut acc = Op::identity();
    x.iter()
        .map(|&v| {
            let before = acc;
            acc = Op::combine(acc, v.to_acc());
            if kind == ScanKind::Exclusive { before } else { acc }
        })
        .collect()
}

/// [`reduce`] of each row of `x`, seen as rows of `row_len` elements (a trailing partial row is
/// ignored; `row_len` 0 gives no rows).
pub fn segmented_reduce<T: Element, Op: Operator>(x: &[T], row_len: usize) -> Vec<T::Acc> {
    if row_len == 0 {
        return Vec::new();
    }
    x.chunks_exact(row_len).map(reduce::<T, Op>).collect()
}

/// [`reduce`] of each segment `offsets[s] .. offsets[s + 1]` of `x` (CSR offsets, checked as
/// `SegmentOffsets` checks them; panics past `x`): the identity for an empty segment.
///
/// ```
/// use gpu_primitives::{device::Sum, reference};
/// assert_eq!(reference::segmented_reduce_by_offsets::<u32, Sum>(&[1, 2, 3], &[0, 2, 2, 3]), [3, 0, 3]);
/// ```
pub fn segmented_reduce_by_offsets<T: Element, Op: Operator>(x: &[T], offsets: &[u64]) -> Vec<T::Acc> {
    offsets
        .windows(2)
        .map(|w| reduce::<T, Op>(&x[w[0] as usize..w[1] as usize]))
        .collect()
}

/// [`scan`] of each segment `offsets[s] .. offsets[s + 1]` of `x`, written to the same items of
/// `output` (items outside every segment are left alone, as on the GPU).
///
/// ```
/// use gpu_primitives::{device::{ScanKind, Sum}, reference};
/// let mut y = [9; 4];
/// reference::segmented_scan_into::<u32, Sum>(&[1, 2, 3, 4], &[1, 2, 4], ScanKind::Inclusive, &mut y);
/// assert_eq!(y, [9, 2, 3, 7]);
/// ```
pub fn segmented_scan_into<T: Element, Op: Operator>(
    x: &[T],
    offsets: &[u64],
    kind: ScanKind,
    output: &mut [T::Acc],
) {
    for w in offsets.windows(2) {
        let range = w[0] as usize..w[1] as usize;
        output[range.clone()].copy_from_slice(&scan::<T, Op>(&x[range], kind));
    }
}

/// [`scan`] of each run of equal keys (`keys[i] == keys[i - 1]` continues a run): the scans by
/// key. `keys` and `x` have the same length.
///
/// ```
/// use gpu_primitives::{device::{ScanKind, Sum}, reference};
/// let y = reference::scan_by_key::<u32, i32, Sum>(&[1, 1, 2, 1], &[1, 2, 3, 4], ScanKind::Inclusive);
/// assert_eq!(y, [1, 3, 3, 4]);
/// ```
pub fn scan_by_key<K: PartialEq, T: Element, Op: Operator>(
    keys: &[K],
    x: &[T],
    kind: ScanKind,
) -> Vec<T::Acc> {
    assert_eq!(
        keys.len(),
        x.len(),
        "scan_by_key: keys and values differ in length"
    );
    let mut out = Vec::with_capacity(x.len());
    let mut start = 0;
    for i in 1..=x.len() {
        if i == x.len() || keys[i] != keys[i - 1] {
            out.extend(scan::<T, Op>(&x[start..i], kind));
            start = i;
        }
    }
    out
}

/// For each run of equal consecutive keys, its first key and the reduction of its values with
/// `Op`, combined in input order (`reduce_by_key`).
///
/// ```
/// use gpu_primitives::{device::Sum, reference};
/// let (keys, sums) = reference::reduce_by_key::<u32, i32, Sum>(&[7, 7, 3, 7], &[1, 2, 3, 4]);
/// assert_eq!((keys, sums), (vec![7, 3, 7], vec![3, 3, 4]));
/// ```
pub fn reduce_by_key<K: PartialEq + Copy, T: Element, Op: Operator>(
    keys: &[K],
    x: &[T],
) -> (Vec<K>, Vec<T::Acc>) {
    assert_eq!(
        keys.len(),
        x.len(),
        "reduce_by_key: keys and values differ in length"
    );
    run_ranges(keys)
        .map(|(start, end)| {
            let scanned = scan::<T, Op>(&x[start..end], ScanKind::Inclusive);
            (keys[start], scanned[scanned.len() - 1])
        })
        .unzip()
}

/// For each run of equal consecutive keys, its first key and the value beside it
/// (`unique_by_key`).
///
/// ```
/// let (keys, values) = gpu_primitives::reference::unique_by_key(&[1i64, 1, 2, 1], &[10u8, 11, 20, 30]);
/// assert_eq!((keys, values), (vec![1, 2, 1], vec![10, 20, 30]));
/// ```
pub fn unique_by_key<K: PartialEq + Copy, V: Copy>(keys: &[K], x: &[V]) -> (Vec<K>, Vec<V>) {
    assert_eq!(
        keys.len(),
        x.len(),
        "unique_by_key: keys and values differ in length"
    );
    run_ranges(keys).map(|(start, _)| (keys[start], x[start])).unzip()
}

/// The runs of equal consecutive keys (compared with `==`), as `(start, end)` item ranges, in
/// order: the runs [`reduce_by_key`] and [`unique_by_key`] reduce.
///
/// ```
/// let runs: Vec<_> = gpu_primitives::reference::run_ranges(&[7u32, 7, 3, 7]).collect();
/// assert_eq!(runs, [(0, 2), (2, 3), (3, 4)]);
/// ```
pub fn run_ranges<K: PartialEq>(keys: &[K]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let heads: Vec<usize> = (0..keys.len())
        .filter(|&i| i == 0 || keys[i] != keys[i - 1])
        .collect();
    let ends: Vec<usize> = heads.iter().skip(1).copied().chain([keys.len()]).collect();
    heads.into_iter().zip(ends)
}

/// The items of `x` that pass `predicate`, in order (`select_if`).
///
/// ```
/// use gpu_primitives::{device::Predicate, reference};
/// assert_eq!(reference::select_if(&[1.0f32, f32::NAN, 3.0], Predicate::less(2.0)), [1.0]);
/// ```
pub fn select_if<T: Element>(x: &[T], predicate: Predicate<T>) -> Vec<T> {
    x.iter().copied().filter(|&v| predicate.keep(v)).collect()
}

/// The items of `x` whose flag is non-zero, in order (`select_flagged`; flags past `x` ignored).
pub fn select_flagged<T: Element>(x: &[T], flags: &[u8]) -> Vec<T> {
    x.iter()
        .zip(flags)
        .filter(|(_, f)| **f != 0)
        .map(|(v, _)| *v)
        .collect()
}

/// Whether item `i` of `x` starts a run: the first item, or one that differs (`!=` in the
/// accumulator type) from the item before it.
pub fn is_head<T: Element>(x: &[T], i: usize) -> bool {
    i == 0 || x[i].to_acc() != x[i - 1].to_acc()
}

/// `x` without consecutive duplicates (`unique`): -0.0 and +0.0 are duplicates, NaNs are not.
///
/// ```
/// assert_eq!(gpu_primitives::reference::unique(&[1u32, 1, 2, 1]), [1, 2, 1]);
/// ```
pub fn unique<T: Element>(x: &[T]) -> Vec<T> {
    (0..x.len()).filter(|&i| is_head(x, i)).map(|i| x[i]).collect()
}

/// Each run of `x` (a maximal stretch of items equal with `==` in the accumulator type) as its
/// item and length (`run_length_encode`).
///
/// ```
/// let (items, lengths) = gpu_primitives::reference::run_length_encode(&[7u32, 7, 2, 9, 9, 9]);
/// assert_eq!((items, lengths), (vec![7, 2, 9], vec![2, 1, 3]));
/// ```
pub fn run_length_encode<T: Element>(x: &[T]) -> (Vec<T>, Vec<u32>) {
    let starts: Vec<usize> = (0..x.len()).filter(|&i| is_head(x, i)).collect();
    let lengths = run_lengths(&starts, x.len());
    (starts.iter().map(|&i| x[i]).collect(), lengths)
}

/// The runs of `x` longer than one item, as (offsets, lengths) (`non_trivial_runs`).
///
/// ```
/// let (offsets, lengths) = gpu_primitives::reference::non_trivial_runs(&[7u32, 7, 2, 9, 9, 9]);
/// assert_eq!((offsets, lengths), (vec![0, 3], vec![2, 3]));
/// ```
pub fn non_trivial_runs<T: Element>(x: &[T]) -> (Vec<u32>, Vec<u32>) {
    let starts: Vec<usize> = (0..x.len()).filter(|&i| is_head(x, i)).collect();
    let lengths = run_lengths(&starts, x.len());
    starts
        .iter()
        .zip(lengths)
        .filter(|(_, len)| *len > 1)
        .map(|(&start, len)| (start as u32, len))
        .unzip()
}

/// The lengths of the runs starting at `starts` (sorted) in `n` items.
fn run_lengths(starts: &[usize], n: usize) -> Vec<u32> {
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| (starts.get(k + 1).copied().unwrap_or(n) - s) as u32)
        .collect()
}

/// Stable partition: the items where `keep(i, x[i])` first, then the others, each in order;
/// and the number kept.
///
/// ```
/// let (y, kept) = gpu_primitives::reference::partition(&[1i32, -2, 3, -4], |_, v| v > 0);
/// assert_eq!((y, kept), (vec![1, 3, -2, -4], 2));
/// ```
pub fn partition<T: Element>(x: &[T], keep: impl Fn(usize, T) -> bool) -> (Vec<T>, usize) {
    let mut kept: Vec<T> = Vec::with_capacity(x.len());
    let mut rejected: Vec<T> = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        if keep(i, v) {
            kept.push(v)
        } else {
            rejected.push(v)
        }
    }
    let count = kept.len();
    kept.extend(rejected);
    (kept, count)
}

/// Counts of `x` in `bins` even bins over `[lower, upper)` (`histogram_even`): each sample as
/// its level, counted when `lower <= x < upper` (NaN never), in bin
/// [`HistogramLevel::even_bin`].
///
/// ```
/// let counts = gpu_primitives::reference::histogram_even(&[0u8, 1, 2, 200, 255], 4, 0, 256);
/// assert_eq!(counts, [3, 0, 0, 2]);
/// ```
pub fn histogram_even<S: HistogramSample>(x: &[S], bins: u32, lower: S::Level, upper: S::Level) -> Vec<u64> {
    let mut counts = vec![0u64; bins as usize];
    for v in x {
        let level = v.level();
        if level >= lower && level < upper {
            counts[S::Level::even_bin(level, lower, upper, bins) as usize] += 1;
        }
    }
    counts
}

/// Counts of `x` in the bins between sorted `levels` (`histogram_range`): bin `b` is
/// `[levels[b], levels[b + 1])`; samples outside `[levels[0], levels[last])` and NaN are not
/// counted.
///
/// ```
/// let counts = gpu_primitives::reference::histogram_range(&[0.5f32, 1.0, 2.5, f32::NAN, 9.0], &[0.0, 1.0, 2.0, 3.0]);
/// assert_eq!(counts, [1, 1, 1]);
/// ```
pub fn histogram_range<S: HistogramSample>(x: &[S], levels: &[S::Level]) -> Vec<u64> {
    let bins = levels.len().saturating_sub(1);
    let mut counts = vec![0u64; bins];
    for v in x {
        let level = v.level();
        // The last bin whose lower level is at most the sample.
        if bins > 0 && level >= levels[0] && level < levels[bins] {
            let b = levels[..bins].partition_point(|l| *l <= level) - 1;
            counts[b] += 1;
        }
    }
    counts
}

/// The index rule of argmin / argmax: the first index on ties; the first NaN if any (NumPy's).
fn arg<T: Element>(x: &[T], better: fn(T::Acc, T::Acc) -> bool) -> Option<(T::Acc, usize)> {
    let mut best: Option<(T::Acc, usize)> = None;
    for (i, v) in x.iter().map(|v| v.to_acc()).enumerate() {
        best = match best {
            None => Some((v, i)),
            Some((b, _)) if b.is_nan() => best,
            Some(_) if v.is_nan() => Some((v, i)),
            Some((b, _)) if better(v, b) => Some((v, i)),
            keep => keep,
        };
    }
    best
}

/// The smallest element and its index (first on ties; the first NaN if any); `None` if empty.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::argmin(&[3.0f32, 1.0, 1.0]), Some((1.0, 1)));
/// ```
pub fn argmin<T: Element>(x: &[T]) -> Option<(T::Acc, usize)> {
    arg(x, |v, best| v < best)
}

/// The largest element and its index (first on ties; the first NaN if any); `None` if empty.
pub fn argmax<T: Element>(x: &[T]) -> Option<(T::Acc, usize)> {
    arg(x, |v, best| v > best)
}

/// `sum_i a[i] * b[i]`, products and sum in `T::Acc`, left to right. Panics if the lengths
/// differ.
pub fn dot<T: DotElement>(a: &[T], b: &[T]) -> T::Acc {
    assert_eq!(a.len(), b.len(), "dot: lengths differ");
    a.iter()
        .zip(b)
        .fold(T::Acc::ZERO, |s, (&x, &y)| s.add(x.to_acc().mul(y.to_acc())))
}

/// `sum_i a[i] * b[i]`, accumulated in `f64`. Panics if the lengths differ.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::dot_product(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
/// ```
pub fn dot_product(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "dot_product: lengths differ");
    a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum()
}

/// `sum_i x[i]`, accumulated in `f64`.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::sum(&[0.5, 0.25]), 0.75);
/// ```
pub fn sum(x: &[f32]) -> f64 {
    x.iter().map(|&v| v as f64).sum()
}

/// `sum_i |x[i]|`, accumulated in `f64`: the scale of a sum's rounding error.
pub fn sum_abs(x: &[f32]) -> f64 {
    x.iter().map(|&v| (v as f64).abs()).sum()
}

/// Bound on the error of an `f32` sum of `n` terms whose absolute values add up to `abs_sum`,
/// in any order of summation: `gamma_(n-1) * abs_sum` with `gamma_k = k u / (1 - k u)` and
/// `u = 2^-24` (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., eq. 4.4),
/// plus one unit of the smallest normal for sums near zero. Infinite once `n u >= 1`.
///
/// # Example
/// ```
/// use gpu_primitives::reference::f32_sum_error_bound;
/// assert!(f32_sum_error_bound(1000, 1.0) < 1e-4);
/// assert!(f32_sum_error_bound(1 << 25, 1.0).is_infinite());
/// ```
pub fn f32_sum_error_bound(n: usize, abs_sum: f64) -> f64 {
    let u = f32::EPSILON as f64 / 2.0;
    let k = n.saturating_sub(1) as f64 * u;
    if k >= 1.0 {
        return f64::INFINITY;
    }
    k / (1.0 - k) * abs_sum + f32::MIN_POSITIVE as f64
}

/// Whether a GPU `f32` sum of `n` terms is within [`f32_sum_error_bound`] of the exact `expected`.
pub fn f32_sum_matches(found: f32, expected: f64, n: usize, abs_sum: f64) -> bool {
    (found as f64 - expected).abs() <= f32_sum_error_bound(n, abs_sum)
}

/// Inclusive scan (`y[i] = x[0] + ... + x[i]`), accumulated in `f64`.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::inclusive_scan(&[1.0, 2.0, 3.0]), [1.0, 3.0, 6.0]);
/// ```
pub fn inclusive_scan(x: &[f32]) -> Vec<f64> {
    x.iter()
        .scan(0.0f64, |acc, &v| {
            *acc += v as f64;
            Some(*acc)
        })
        .collect()
}

/// Exclusive scan (`y[0] = 0`, `y[i] = x[0] + ... + x[i-1]`), accumulated in `f64`.
///
/// # Example
/// ```
/// assert_eq!(gpu_primitives::reference::exclusive_scan(&[1.0, 2.0, 3.0]), [0.0, 1.0, 3.0]);
/// ```
pub fn exclusive_scan(x: &[f32]) -> Vec<f64> {
    let mut inclusive = inclusive_scan(x);
    inclusive.rotate_right(1);
    if let Some(first) = inclusive.first_mut() {
        *first = 0.0;
    }
    inclusive
}
