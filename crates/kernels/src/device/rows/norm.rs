//! The norms: [`RmsNorm`], [`LayerNorm`] and their backwards ([`RmsNormBackwardOp`],
//! [`LayerNormBackwardOp`]), which give `dx` and, with `SUMS`, each group's sums of the
//! parameters' gradients (`dweight`, `dbias`); the forward saves the row's statistics and the
//! backward reads them.

use super::tile::RowTile;
use super::{RowFacts, RowOp, SUM_IDENTITY, add, save};
use crate::block::RowGroup;
use crate::device::element::RowElement;
use crate::math::{fma, rcp_approx, rsqrt_approx};
use gpu_primitives_abi::params::RowParams;

/// RMSNorm: `y = x / sqrt(mean(x^2) + eps) * weight` (Zhang and Sennrich, "Root Mean Square
/// Layer Normalization", 2019); saves `rstd = 1 / sqrt(mean(x^2) + eps)`.
pub struct RmsNorm;
impl RowOp for RmsNorm {
    const AFFINE: bool = true;
    type Partial = [f32; 1];
    /// rstd
    type Row = f32;
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 1] {
        [tile.fold(0.0, |s, x, _| fma(x, x, s))]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([squares]: [f32; 1], row: &RowFacts) -> f32 {
        rsqrt_approx(squares / row.cols as f32 + row.eps)
    }
    fn output(x: f32, _: f32, weight: f32, _: f32, _: u32, rstd: &f32) -> f32 {
        x * (rstd * weight)
    }
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(p: &RowParams<T>, row: usize, rstd: &f32) {
        // SAFETY: a non-null rstd holds one value per row (the caller's contract).
        unsafe { save(p.rstd, row, *rstd) };
    }
}

/// LayerNorm: `y = (x - mean) / sqrt(var + eps) * weight + bias`, the biased variance (Ba, Kiros
/// and Hinton, "Layer Normalization", 2016); saves `mean` and `rstd = 1 / sqrt(var + eps)`.
pub struct LayerNorm;
impl RowOp for LayerNorm {
    const AFFINE: bool = true;
    /// (count, mean, sum of squared deviations)
    type Partial = [f32; 3];
    /// (mean, rstd)
    type Row = [f32; 2];
    fn identity() -> [f32; 3] {
        [0.0; 3]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 3] {
        let count = tile.valid_items() as f32;
        let sum = tile.fold(0.0, |s, x, _| s + x);
        let mean = if count > 0.0 { sum / count } else { 0.0 };
        let deviations = tile.fold_valid(0.0, |d, x| fma(x - mean, x - mean, d));
        [count, mean, deviations]
    }
    fn combine(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
        let ([na, ma, da], [nb, mb, db]) = (a, b);
        if nb == 0.0 {
            return a;
        }
        if na == 0.0 {
            return b;
        }
        let n = na + nb;
        let delta = mb - ma;
        // nb / n and na nb / n through one reciprocal (counts are exact in f32 below 2^24).
        let share = nb * rcp_approx(n);
        [n, fma(delta, share, ma), fma(delta * delta, na * share, da + db)]
    }
    fn finish([_, mean, deviations]: [f32; 3], row: &RowFacts) -> [f32; 2] {
        [mean, rsqrt_approx(deviations / row.cols as f32 + row.eps)]
    }
    /// The row's sum first, then the sum of squared deviations from its mean: two plain sums,
    /// fewer instructions than (count, mean, deviations) combined at every step (H100, `bf16`
    /// 262144 x 1024 and 65536 x 4096: that way 10 and 14 % slower; `f32` within 1 %).
    #[inline(always)]
    unsafe fn in_registers<T: RowElement, const W: usize>(
        tile: &RowTile<T, W>,
        group: &mut RowGroup,
        row: &RowFacts,
    ) -> [f32; 2] {
        // SAFETY: forwarded (two calls in a row alternate the slots).
        let [sum] = unsafe { group.all([tile.fold(0.0, |s, x, _| s + x)], SUM_IDENTITY, add) };
        let mean = sum / row.cols as f32;
        let squares = tile.fold_valid(0.0, |d, x| fma(x - mean, x - mean, d));
        // SAFETY: as above.
        let [deviations] = unsafe { group.all([squares], SUM_IDENTITY, add) };
        [mean, rsqrt_approx(deviations / row.cols as f32 + row.eps)]
    }
    /// `(x - mean) * (rstd * weight) + bias`: `x - mean` is exact for close values, so a row of
    /// nearly equal items (a large `rstd`) keeps its precision.
    fn output(x: f32, _: f32, weight: f32, bias: f32, _: u32, &[mean, rstd]: &[f32; 2]) -> f32 {
        fma(x - mean, rstd * weight, bias)
    }
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(p: &RowParams<T>, row: usize, &[mean, rstd]: &[f32; 2]) {
        // SAFETY: non-null mean / rstd hold one value per row (the caller's contract).
        unsafe {
            save(p.mean, row, mean);
            save(p.rstd, row, rstd);
        }
    }
}

/// Backward of LayerNorm: from `x`, `dy`, the weight and the saved (mean, rstd), with
/// `g = dy * weight` and `x^ = (x - mean) * rstd`,
/// `dx = rstd * (g - mean(g) - x^ * mean(g * x^))`; with `SUMS`, also each group's sums of the
/// weight's and bias's gradients (`RowOp::PARAMETER_GRADS`; else `device::norm_grads` reads the
/// rows again for them). Two kernels, so that the one without keeps its registers.
pub struct LayerNormBackwardOp<const SUMS: bool>;
/// [`LayerNormBackwardOp`], `dx` alone.
pub type LayerNormBackward = LayerNormBackwardOp<false>;
/// [`LayerNormBackwardOp`] summing the parameters' gradients too.
pub type LayerNormBackwardSums = LayerNormBackwardOp<true>;
impl<const SUMS: bool> RowOp for LayerNormBackwardOp<SUMS> {
    const GRAD: bool = true;
    const AFFINE: bool = true;
    const PARAMETER_GRADS: bool = SUMS;
    #[inline(always)]
    fn parameter_grads(x: f32, dy: f32, row: &RowFacts) -> [f32; 2] {
        norm_parameter_grads(x, dy, row)
    }
    /// (sum of g, sum of g x^)
    type Partial = [f32; 2];
    /// (mean, rstd, mean of g, mean of g x^)
    type Row = [f32; 4];
    fn identity() -> [f32; 2] {
        [0.0; 2]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, row: &RowFacts) -> [f32; 2] {
        let (mean, rstd) = (row.mean, row.rstd);
        tile.fold_weighted([0.0; 2], |[g_sum, gx_sum], x, dy, weight| {
            let g = dy * weight;
            [g_sum + g, fma(g, (x - mean) * rstd, gx_sum)]
        })
    }
    fn combine([a, b]: [f32; 2], [c, d]: [f32; 2]) -> [f32; 2] {
        [a + c, b + d]
    }
    fn finish([g_sum, gx_sum]: [f32; 2], row: &RowFacts) -> [f32; 4] {
        let cols = row.cols as f32;
        [row.mean, row.rstd, g_sum / cols, gx_sum / cols]
    }
    fn output(
        x: f32,
        dy: f32,
        weight: f32,
        _: f32,
        _: u32,
        &[mean, rstd, g_mean, gx_mean]: &[f32; 4],
    ) -> f32 {
        let normalized = (x - mean) * rstd;
        rstd * fma(-normalized, gx_mean, fma(dy, weight, -g_mean))
    }
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
        // SAFETY: forwarded.
        unsafe { saved_facts(p, row, facts) }
    }
}

/// Backward of RMSNorm (as [`LayerNormBackwardOp`]): with `g = dy * weight` and `x^ = x * rstd`,
/// `dx = rstd * (g - x^ * mean(g * x^))`.
pub struct RmsNormBackwardOp<const SUMS: bool>;
/// [`RmsNormBackwardOp`], `dx` alone.
pub type RmsNormBackward = RmsNormBackwardOp<false>;
/// [`RmsNormBackwardOp`] summing the weight's gradient too.
pub type RmsNormBackwardSums = RmsNormBackwardOp<true>;
impl<const SUMS: bool> RowOp for RmsNormBackwardOp<SUMS> {
    const GRAD: bool = true;
    const AFFINE: bool = true;
    const PARAMETER_GRADS: bool = SUMS;
    #[inline(always)]
    fn parameter_grads(x: f32, dy: f32, row: &RowFacts) -> [f32; 2] {
        norm_parameter_grads(x, dy, row)
    }
    type Partial = [f32; 1];
    /// (rstd, mean of g x^)
    type Row = [f32; 2];
    fn identity() -> [f32; 1] {
        SUM_IDENTITY
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, row: &RowFacts) -> [f32; 1] {
        let rstd = row.rstd;
        [tile.fold_weighted(0.0, |s, x, dy, weight| fma(dy * weight, x * rstd, s))]
    }
    fn combine(a: [f32; 1], b: [f32; 1]) -> [f32; 1] {
        add(a, b)
    }
    fn finish([gx_sum]: [f32; 1], row: &RowFacts) -> [f32; 2] {
        [row.rstd, gx_sum / row.cols as f32]
    }
    fn output(x: f32, dy: f32, weight: f32, _: f32, _: u32, &[rstd, gx_mean]: &[f32; 2]) -> f32 {
        rstd * fma(-(x * rstd), gx_mean, dy * weight)
    }
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
        // SAFETY: forwarded.
        unsafe { saved_facts(p, row, facts) }
    }
}

/// The norms' `x^` and `dy` at an item (`x^ = (x - mean) * rstd`, the mean 0 for RMSNorm): its
/// terms of `dweight` and `dbias` are `dy * x^` and `dy`.
#[inline(always)]
fn norm_parameter_grads(x: f32, dy: f32, row: &RowFacts) -> [f32; 2] {
    [(x - row.mean) * row.rstd, dy]
}

/// The norms' backward: `facts` with the (mean, rstd) the forward saved for `row` (mean 0 where
/// `p.mean` is null: RMSNorm).
///
/// # Safety
/// `row < p.rows`; `p.rstd` holds `rows` values, and a non-null `p.mean` too.
#[inline(always)]
unsafe fn saved_facts<T>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
    // SAFETY: the caller's.
    unsafe {
        RowFacts {
            mean: if p.mean.is_null() { 0.0 } else { *p.mean.add(row) },
            rstd: *p.rstd.add(row),
            ..facts
        }
    }
}
