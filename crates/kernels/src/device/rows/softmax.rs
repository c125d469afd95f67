//! The softmax family: [`Softmax`], [`LogSoftmax`] and their backwards
//! ([`SoftmaxBackward`], [`LogSoftmaxBackward`]). Softmax's statistics are the online pair
//! (running maximum, sum of `exp(x - maximum)`), which cross-entropy shares.

use super::tile::RowTile;
use super::{RowFacts, RowOp, SUM_IDENTITY, add};
use crate::device::element::RowElement;
use crate::math::{exp_approx, exp2_approx, fma, ln_approx};
use crate::op::max_nan_f32;

/// `exp(x - max)` as `2^(x log2(e) - max log2(e))`: one fused multiply-add and one `ex2.approx`
/// (the shift's rounding adds about `|max| * 2^-24` to the relative error). `x = -inf` gives 0
/// for a finite `max`; `max = -inf` gives NaN (a row of all `-inf`).
#[inline(always)]
pub(super) fn exp_shifted(x: f32, max: f32) -> f32 {
    let shift = max * core::f32::consts::LOG2_E;
    exp2_approx(fma(x, core::f32::consts::LOG2_E, -shift))
}

/// `exp(m - max)` for a partial maximum `m` of the row maximum `max`: 1 when they are equal
/// (both `-inf` included).
#[inline(always)]
fn rescale(m: f32, max: f32) -> f32 {
    if m == max { 1.0 } else { exp_approx(m - max) }
}

/// The (maximum, sum of `exp(x - maximum)`) pair of softmax and log-softmax over a thread's
/// items: a thread whose items are all `-inf` sums `exp(-inf - 0)` = 0.
#[inline(always)]
pub(super) fn softmax_fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>) -> [f32; 2] {
    let max = tile.fold(f32::NEG_INFINITY, |m, x, _| max_nan_f32(m, x));
    let shift = if max == f32::NEG_INFINITY { 0.0 } else { max };
    [max, tile.fold(0.0, |s, x, _| s + exp_shifted(x, shift))]
}

#[inline(always)]
pub(super) fn softmax_combine([ma, sa]: [f32; 2], [mb, sb]: [f32; 2]) -> [f32; 2] {
    let max = max_nan_f32(ma, mb);
    [max, sa * rescale(ma, max) + sb * rescale(mb, max)]
}

/// `y = exp(x - max) / sum(exp(x - max))`.
pub struct Softmax;
impl RowOp for Softmax {
    const PAD: f32 = f32::NEG_INFINITY;
    type Partial = [f32; 2];
    /// (maximum, 1 / sum)
    type Row = [f32; 2];
    fn identity() -> [f32; 2] {
        [f32::NEG_INFINITY, 0.0]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 2] {
        softmax_fold(tile)
    }
    fn combine(a: [f32; 2], b: [f32; 2]) -> [f32; 2] {
        softmax_combine(a, b)
    }
    fn finish([max, sum]: [f32; 2], _: &RowFacts) -> [f32; 2] {
        [max, 1.0 / sum]
    }
    fn output(x: f32, _: f32, _: f32, _: f32, _: u32, &[max, inverse]: &[f32; 2]) -> f32 {
        exp_shifted(x, max) * inverse
    }
}

/// `y = x - max - ln(sum(exp(x - max)))`.
pub struct LogSoftmax;
impl RowOp for LogSoftmax {
    const PAD: f32 = f32::NEG_INFINITY;
    type Partial = [f32; 2];
    /// (maximum, ln sum)
    type Row = [f32; 2];
    fn identity() -> [f32; 2] {
        [f32::NEG_INFINITY, 0.0]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 2] {
        softmax_fold(tile)
    }
    fn combine(a: [f32; 2], b: [f32; 2]) -> [f32; 2] {
        softmax_combine(a, b)
    }
    fn finish([max, sum]: [f32; 2], _: &RowFacts) -> [f32; 2] {
        [max, ln_approx(sum)]
    }
    fn output(x: f32, _: f32, _: f32, _: f32, _: u32, &[max, ln_sum]: &[f32; 2]) -> f32 {
        (x - max) - ln_sum
    }
}

/// Backward of softmax: from its output `y` and `dy`, `dx = y * (dy - sum(dy * y))`.
pub struct SoftmaxBackward;
impl RowOp for SoftmaxBackward {
    const GRAD: bool = true;
    type Partial = [f32; 1];
    type Row = f32;
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 1] {
        [tile.fold(0.0, |s, y, dy| fma(dy, y, s))]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([dot]: [f32; 1], _: &RowFacts) -> f32 {
        dot
    }
    fn output(y: f32, dy: f32, _: f32, _: f32, _: u32, dot: &f32) -> f32 {
        y * (dy - dot)
    }
}

/// Backward of log-softmax: from its output `y` and `dy`, `dx = dy - exp(y) * sum(dy)`.
pub struct LogSoftmaxBackward;
impl RowOp for LogSoftmaxBackward {
    const GRAD: bool = true;
    type Partial = [f32; 1];
    type Row = f32;
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 1] {
        [tile.fold(0.0, |s, _, dy| s + dy)]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([sum]: [f32; 1], _: &RowFacts) -> f32 {
        sum
    }
    fn output(y: f32, dy: f32, _: f32, _: f32, _: u32, sum: &f32) -> f32 {
        fma(-exp_approx(y), *sum, dy)
    }
}
