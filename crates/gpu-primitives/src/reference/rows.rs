//! References of the row operations ([`crate::rows`]) in `f64`, row by row over a row-major
//! `rows x cols` matrix (`x.len() / cols` rows), the formulas as PyTorch documents them: the
//! GPU's `f32` results are checked against these within stated bounds.

use crate::device::Accumulator;

/// The largest value of `row`, NaN if any is NaN (`-inf` for an empty row): the device-wide
/// `Max`'s reference ([`Accumulator::max_nan`]) over the row.
fn max_nan(row: &[f64]) -> f64 {
    row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max_nan(v))
}

/// `exp(x - max) / sum(exp(x - max))` per row.
///
/// ```
/// let y = gpu_primitives::reference::rows::softmax(&[0.0, 0.0, 1.0, 1.0], 2);
/// assert_eq!(y, [0.5, 0.5, 0.5, 0.5]);
/// ```
pub fn softmax(x: &[f64], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let max = max_nan(row);
            let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
            row.iter().map(move |v| (v - max).exp() / sum)
        })
        .collect()
}

/// `x - max - ln(sum(exp(x - max)))` per row.
pub fn log_softmax(x: &[f64], cols: usize) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let max = max_nan(row);
            let ln_sum = row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
            row.iter().map(move |v| v - max - ln_sum)
        })
        .collect()
}

/// `y * (dy - sum(dy * y))` per row (the gradient of softmax from its output `y`).
pub fn softmax_backward(y: &[f64], dy: &[f64], cols: usize) -> Vec<f64> {
    y.chunks(cols)
        .zip(dy.chunks(cols))
        .flat_map(|(y, dy)| {
            let dot: f64 = y.iter().zip(dy).map(|(y, dy)| y * dy).sum();
            y.iter().zip(dy).map(move |(y, dy)| y * (dy - dot))
        })
        .collect()
}

/// `dy - exp(y) * sum(dy)` per row (the gradient of log-softmax from its output `y`).
pub fn log_softmax_backward(y: &[f64], dy: &[f64], cols: usize) -> Vec<f64> {
    y.chunks(cols)
        .zip(dy.chunks(cols))
        .flat_map(|(y, dy)| {
            let sum: f64 = dy.iter().sum();
            y.iter().zip(dy).map(move |(y, dy)| dy - y.exp() * sum)
        })
        .collect()
}

/// A row operation's output and the statistics it saves per row.
pub struct Normalized {
    /// The output, as the input's shape.
    pub y: Vec<f64>,
    /// LayerNorm: each row's mean (empty for RMSNorm).
    pub mean: Vec<f64>,
    /// Each row's `1 / sqrt(var + eps)` (LayerNorm) or `1 / sqrt(mean(x^2) + eps)` (RMSNorm).
    pub rstd: Vec<f64>,
}

/// `(x - mean) / sqrt(var + eps) * weight + bias` per row, the biased variance; `weight` and
/// `bias` are `cols` values or none (1 and 0).
pub fn layer_norm(
    x: &[f64],
    cols: usize,
    weight: Option<&[f64]>,
    bias: Option<&[f64]>,
    eps: f64,
) -> Normalized {
    let mut out = Normalized {
        y: Vec::with_capacity(x.len()),
        mean: vec![],
        rstd: vec![],
    };
    for row in x.chunks(cols) {
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / cols as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        out.y.extend(
            row.iter()
                .enumerate()
                .map(|(c, v)| (v - mean) * rstd * weight.map_or(1.0, |w| w[c]) + bias.map_or(0.0, |b| b[c])),
        );
        out.mean.push(mean);
        out.rstd.push(rstd);
    }
    out
}

/// `x / sqrt(mean(x^2) + eps) * weight` per row; `weight` is `cols` values or none (1).
pub fn rms_norm(x: &[f64], cols: usize, weight: Option<&[f64]>, eps: f64) -> Normalized {
    let mut out = Normalized {
        y: Vec::with_capacity(x.len()),
        mean: vec![],
        rstd: vec![],
    };
    for row in x.chunks(cols) {
        let rstd = 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / cols as f64 + eps).sqrt();
        out.y.extend(
            row.iter()
                .enumerate()
                .map(|(c, v)| v * rstd * weight.map_or(1.0, |w| w[c])),
        );
        out.rstd.push(rstd);
    }
    out
}

/// The gradients of a norm's backward.
pub struct NormGradients {
    /// The input's, as its shape.
    pub dx: Vec<f64>,
    /// The weight's, `cols` values.
    pub dweight: Vec<f64>,
    /// The bias's, `cols` values (LayerNorm; zeros for RMSNorm, which has none).
    pub dbias: Vec<f64>,
}

/// The backward of a norm from the normalised input `x^` per row (`normalized`), `dy`, the
/// weight (none: 1), each row's `rstd`, and whether it is centred (LayerNorm):
/// `dx = rstd * (g - [mean(g)] - x^ * mean(g * x^))` with `g = dy * weight`,
/// `dweight = sum over rows of dy * x^`, `dbias = sum over rows of dy`.
fn norm_backward(
    normalized: &[f64],
    dy: &[f64],
    cols: usize,
    weight: Option<&[f64]>,
    rstd: &[f64],
    centred: bool,
) -> NormGradients {
    let mut out = NormGradients {
        dx: Vec::with_capacity(normalized.len()),
        dweight: vec![0.0; cols],
        dbias: vec![0.0; cols],
    };
    let w = |c: usize| weight.map_or(1.0, |w| w[c]);
    for ((xh, dy), rstd) in normalized.chunks(cols).zip(dy.chunks(cols)).zip(rstd) {
        let g_mean = if centred {
            dy.iter().enumerate().map(|(c, d)| d * w(c)).sum::<f64>() / cols as f64
        } else {
            0.0
        };
        let gx_mean = (0..cols).map(|c| dy[c] * w(c) * xh[c]).sum::<f64>() / cols as f64;
        out.dx
            .extend((0..cols).map(|c| rstd * (dy[c] * w(c) - g_mean - xh[c] * gx_mean)));
        for c in 0..cols {
            out.dweight[c] += dy[c] * xh[c];
            out.dbias[c] += dy[c];
        }
    }
    out
}

/// The backward of [`layer_norm`] at `x` with `dy`, from the forward's saved `mean` and `rstd`.
pub fn layer_norm_backward(
    x: &[f64],
    dy: &[f64],
    cols: usize,
    weight: Option<&[f64]>,
    mean: &[f64],
    rstd: &[f64],
) -> NormGradients {
    let normalized: Vec<f64> = x
        .chunks(cols)
        .zip(mean.iter().zip(rstd))
        .flat_map(|(row, (m, r))| row.iter().map(move |v| (v - m) * r))
        .collect();
    norm_backward(&normalized, dy, cols, weight, rstd, true)
}

/// The backward of [`rms_norm`] at `x` with `dy`, from the forward's saved `rstd`.
pub fn rms_norm_backward(
    x: &[f64],
    dy: &[f64],
    cols: usize,
    weight: Option<&[f64]>,
    rstd: &[f64],
) -> NormGradients {
    let normalized: Vec<f64> = x
        .chunks(cols)
        .zip(rstd)
        .flat_map(|(row, r)| row.iter().map(move |v| v * r))
        .collect();
    norm_backward(&normalized, dy, cols, weight, rstd, false)
}

/// Cross-entropy's per-row losses and gradient with respect to the logits (for an upstream
/// gradient of 1 on each row's loss: scale it for a mean).
pub struct CrossEntropyRows {
    /// One loss per row: `ln(sum(exp(x))) - (1 - s) x[target] - s mean(x)`; 0 where ignored,
    /// NaN for a target outside `0..classes`.
    pub loss: Vec<f64>,
    /// `softmax(x) - (1 - s) onehot(target) - s / classes` per row; 0 where ignored.
    pub grad: Vec<f64>,
    /// Rows whose target is not the ignore index.
    pub valid: usize,
}

/// Cross-entropy of each row of `logits` (`classes` per row) with its target, label smoothing
/// `smoothing`; rows whose target is `ignore_index` take no part.
pub fn cross_entropy(
    logits: &[f64],
    classes: usize,
    targets: &[i64],
    ignore_index: i64,
    smoothing: f64,
) -> CrossEntropyRows {
    let mut out = CrossEntropyRows {
        loss: Vec::with_capacity(targets.len()),
        grad: Vec::with_capacity(logits.len()),
        valid: 0,
    };
    let probabilities = softmax(logits, classes);
    for ((row, p), &target) in logits
        .chunks(classes)
        .zip(probabilities.chunks(classes))
        .zip(targets)
    {
        if target == ignore_index {
            out.loss.push(0.0);
            out.grad.extend(std::iter::repeat_n(0.0, classes));
            continue;
        }
        out.valid += 1;
        let max = max_nan(row);
        let log_sum = max + row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
        let mean = row.iter().sum::<f64>() / classes as f64;
        let Some(t) = usize::try_from(target).ok().filter(|&t| t < classes) else {
            out.loss.push(f64::NAN);
            out.grad.extend(std::iter::repeat_n(f64::NAN, classes));
            continue;
        };
        out.loss
            .push(log_sum - (1.0 - smoothing) * row[t] - smoothing * mean);
        out.grad.extend(
            p.iter()
                .enumerate()
                .map(|(c, p)| p - smoothing / classes as f64 - if c == t { 1.0 - smoothing } else { 0.0 }),
        );
    }
    out
}

/// A forward row operation, for [`f32_bound`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// [`crate::rows::softmax`].
    Softmax,
    /// [`crate::rows::log_softmax`].
    LogSoftmax,
    /// [`crate::rows::layer_norm`].
    LayerNorm,
    /// [`crate::rows::rms_norm`].
    RmsNorm,
}

/// The bound the GPU tests hold an `f32` result of `op` to, around the reference's `expected`
/// (`weight`: the magnitude of the norm's weight at the item, 0 without one; `row_term`: for
/// the softmaxes the row's [`shift`], for LayerNorm its [`centring`], 0 for RMSNorm). An output
/// in a half type may differ by its rounding besides (`2^-11 |expected|` for f16, `2^-8` for
/// bf16, and f16's subnormal step near 0).
///
/// - softmax `(2e-5 + 2^-23 shift) |expected| + 2^-126` (the approximate `exp` and `1 / sum`,
///   and the rounding of `max log2(e)` in each `exp(x - max)`, about `|max| 2^-24` relative; an
///   `exp` below 2^-126, `f32`'s smallest normal, is flushed to 0),
/// - log-softmax `1e-5 + 2e-6 |expected| + 2^-23 shift` (`ln` of the sum, and the same
///   rounding in it: a row of one item 210 gives about `1.1e-5`, not 0),
/// - LayerNorm and RMSNorm `(3e-5 (1 + |expected|) + 2^-22 centring) (1 + |weight|)`: the
///   approximate `1 / sqrt` and the sums of up to 2^20 items, and for LayerNorm the rounding of
///   an `f32` mean (about `log2(cols) 2^-24 |mean|`), which the centred items carry scaled by
///   `rstd` (a row of close large values is ill-conditioned in `f32`, as in PyTorch).
pub fn f32_bound(op: Forward, expected: f64, weight: f64, row_term: f64) -> f64 {
    let half_ulps = |v: f64| v / (1u64 << 23) as f64;
    match op {
        Forward::Softmax => (2e-5 + half_ulps(row_term)) * expected.abs() + f64::from(f32::MIN_POSITIVE),
        Forward::LogSoftmax => 1e-5 + 2e-6 * expected.abs() + half_ulps(row_term),
        Forward::LayerNorm | Forward::RmsNorm => {
            (3e-5 * (1.0 + expected.abs()) + row_term / (1u64 << 22) as f64) * (1.0 + weight.abs())
        }
    }
}

/// The softmaxes' `row_term` of [`f32_bound`] for a row: its largest finite magnitude (at least
/// its maximum's, whose `log2(e)` multiple each `exp` rounds).
pub fn shift(row: &[f64]) -> f64 {
    row.iter()
        .filter(|v| v.is_finite())
        .fold(0.0, |m, v| m.max(v.abs()))
}

/// The bound the GPU tests and the CLI hold an `f32` cross-entropy loss of `row` (its logits) to:
/// `1e-5 (1 + max |x| + ln(classes))` over the finite `x` ([`shift`]: a masked class adds
/// exactly 0 to the sum), the rounding of `max + ln(sum)` at the row's magnitude and the
/// approximate `exp` and `ln`.
pub fn cross_entropy_bound(row: &[f64]) -> f64 {
    1e-5 * (1.0 + shift(row) + (row.len() as f64).ln())
}

/// The gradient a kernel writes for `expected` (of [`cross_entropy`], `classes` logits a row):
/// `expected.grad` times `scale` (the upstream gradient: `1 / valid rows` for the mean, else
/// 1), and exactly 0 on a row whose target is `ignore_index` (also when no row is valid, a mean
/// over nothing, and whatever the row holds).
pub fn cross_entropy_scaled_grad(
    expected: &CrossEntropyRows,
    classes: usize,
    targets: &[i64],
    ignore_index: i64,
    scale: f64,
) -> Vec<f64> {
    (expected.grad.iter().enumerate())
        .map(|(i, g)| {
            if targets[i / classes] == ignore_index {
                0.0
            } else {
                g * scale
            }
        })
        .collect()
}

/// The bounds the GPU tests and the CLI hold an `f32` cross-entropy gradient to, one per logit
/// (`classes` per row), around `expected.grad` times `scale` (the upstream gradient: `1 /
/// valid rows` for the mean, else 1): `scale (2e-5 p + 1e-6 |p - g|)` with `p` the row's
/// softmax and `g` the reference gradient (so `|p - g|` the target distribution's share): the
/// approximate `exp` and `1 / sum` in `p`, the rounding of the subtraction. 0 on an ignored
/// row, whose gradient is exactly 0. An output in a half type may differ by its rounding
/// besides, as for [`f32_bound`].
pub fn cross_entropy_grad_bounds(
    logits: &[f64],
    classes: usize,
    expected: &CrossEntropyRows,
    targets: &[i64],
    ignore_index: i64,
    scale: f64,
) -> Vec<f64> {
    let probabilities = softmax(logits, classes);
    (0..logits.len())
        .map(|i| {
            if targets[i / classes] == ignore_index {
                return 0.0;
            }
            let p = probabilities[i];
            scale * (2e-5 * p + 1e-6 * (p - expected.grad[i]).abs())
        })
        .collect()
}

/// LayerNorm's `centring` term of [`f32_bound`] for a row of `cols` items with this `mean` and
/// `rstd`.
pub fn centring(mean: f64, rstd: f64, cols: usize) -> f64 {
    mean.abs() * rstd * (2.0 * cols as f64).log2()
}

/// Per row of `cols` items, the sum of `per(i)` over the row's items `i`.
fn row_sums(rows: usize, cols: usize, per: impl Fn(usize) -> f64) -> Vec<f64> {
    (0..rows)
        .map(|row| (row * cols..(row + 1) * cols).map(&per).sum())
        .collect()
}

/// The bound, per item, the GPU tests and the CLI hold an `f32` [`crate::rows::softmax_backward`]
/// to around [`softmax_backward`]`(y, dy, cols)` (the same `y` and `dy` as the GPU's):
/// `2e-5 |y| (|dy| + sum over the row of |y dy|)`, the rounding of the row's dot product and of
/// `dy - dot`.
pub fn softmax_backward_bounds(y: &[f64], dy: &[f64], cols: usize) -> Vec<f64> {
    let dot_abs = row_sums(y.len() / cols.max(1), cols, |i| (y[i] * dy[i]).abs());
    (0..y.len())
        .map(|i| 2e-5 * y[i].abs() * (dy[i].abs() + dot_abs[i / cols]))
        .collect()
}

/// As [`softmax_backward_bounds`], for [`crate::rows::log_softmax_backward`]:
/// `2e-5 (|dy| + exp(y) sum over the row of |dy|)` (the approximate `exp` and the row's sum).
pub fn log_softmax_backward_bounds(y: &[f64], dy: &[f64], cols: usize) -> Vec<f64> {
    let dy_abs = row_sums(y.len() / cols.max(1), cols, |i| dy[i].abs());
    (0..y.len())
        .map(|i| 2e-5 * (dy[i].abs() + y[i].exp() * dy_abs[i / cols]))
        .collect()
}

/// The bound, per item, the GPU tests and the CLI hold an `f32` norm backward's `dx` to around
/// [`layer_norm_backward`] (`mean` given) or [`rms_norm_backward`] (`mean` `None`), at the same
/// `x`, `dy`, weight and saved statistics as the GPU's: with `g = dy weight` and `x^` the
/// normalised item, `3e-5 rstd (|g| + mean |g| + (|x^| + centring 2^-22) mean |g x^|)` over the
/// row: the approximate terms of `rstd (g - mean(g) - x^ mean(g x^))`, and the rounding of
/// `x - mean` ([`centring`], as the forward's), carried by `mean(g x^)`.
pub fn norm_backward_dx_bounds(
    x: &[f64],
    dy: &[f64],
    cols: usize,
    weight: Option<&[f64]>,
    mean: Option<&[f64]>,
    rstd: &[f64],
) -> Vec<f64> {
    let rows = x.len() / cols.max(1);
    let g = |i: usize| dy[i] * weight.map_or(1.0, |w| w[i % cols]);
    let mean_or_0 = |row: usize| mean.map_or(0.0, |m| m[row]);
    let normalized = |i: usize| (x[i] - mean_or_0(i / cols)) * rstd[i / cols];
    let per_item = |sums: Vec<f64>| -> Vec<f64> { sums.into_iter().map(|s| s / cols as f64).collect() };
    let g_abs = per_item(row_sums(rows, cols, |i| g(i).abs()));
    let gx_abs = per_item(row_sums(rows, cols, |i| (g(i) * normalized(i)).abs()));
    (0..x.len())
        .map(|i| {
            let row = i / cols;
            let centring = centring(mean_or_0(row), rstd[row], cols) / (1u64 << 22) as f64;
            3e-5 * rstd[row] * (g(i).abs() + g_abs[row] + (normalized(i).abs() + centring) * gx_abs[row])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn references_agree_with_hand_values() {
        let y = super::softmax(&[1.0, 2.0, 3.0], 3);
        assert!((y[2] - 0.665_240_955_774_821_6).abs() < 1e-15);
        let l = super::log_softmax(&[1.0, 2.0, 3.0], 3);
        assert!((l[2] - y[2].ln()).abs() < 1e-15);
        assert!(
            super::softmax(&[f64::NEG_INFINITY; 2], 2)
                .iter()
                .all(|v| v.is_nan())
        );
        assert!(super::softmax(&[1.0, f64::NAN], 2).iter().all(|v| v.is_nan()));
        let n = super::layer_norm(&[1.0, 3.0], 2, Some(&[2.0, 2.0]), Some(&[1.0, 1.0]), 0.0);
        assert_eq!((n.y, n.mean, n.rstd), (vec![-1.0, 3.0], vec![2.0], vec![1.0]));
        let r = super::rms_norm(&[3.0, 4.0], 2, None, 0.0);
        assert!((r.rstd[0] - 1.0 / 12.5f64.sqrt()).abs() < 1e-15);
        // d/dx of sum(dy * softmax(x)) at dy = one-hot: y_k (delta - y).
        let g = super::softmax_backward(&[0.25, 0.75], &[1.0, 0.0], 2);
        assert_eq!(g, [0.25 * 0.75, -0.75 * 0.25]);
        let g = super::log_softmax_backward(&[0.5f64.ln(), 0.5f64.ln()], &[1.0, 0.0], 2);
        assert_eq!(g, [0.5, -0.5]);
        // LayerNorm of (1, 3) is (-1, 1) at rstd 1: a gradient along the output's direction
        // (dy = y) has dx 0 (scaling x does not change y); dweight = sum dy * x^, dbias = sum dy.
        let n = super::layer_norm(&[1.0, 3.0], 2, None, None, 0.0);
        let g = super::layer_norm_backward(&[1.0, 3.0], &n.y, 2, None, &n.mean, &n.rstd);
        assert_eq!(
            (g.dx, g.dweight, g.dbias),
            (vec![0.0, 0.0], vec![1.0, 1.0], vec![-1.0, 1.0])
        );
        // A constant dy has dx 0 too (shifting x does not change y).
        let g = super::layer_norm_backward(&[1.0, 3.0], &[0.5, 0.5], 2, None, &n.mean, &n.rstd);
        assert_eq!(g.dx, [0.0, 0.0]);
        // RMSNorm of (3, 4): rstd = 1 / sqrt(12.5); dy = y again gives dx 0.
        let r = super::rms_norm(&[3.0, 4.0], 2, None, 0.0);
        let g = super::rms_norm_backward(&[3.0, 4.0], &r.y, 2, None, &r.rstd);
        assert!(g.dx.iter().all(|d| d.abs() < 1e-15));
    }

    /// Cross-entropy's gradient against central differences of its loss; an ignored row and a
    /// row out of range.
    #[test]
    fn cross_entropy_matches_finite_differences() {
        let x = [0.3, -1.2, 2.5, 0.7];
        let rows = |x: &[f64]| super::cross_entropy(x, 4, &[2], -100, 0.1);
        let r = rows(&x);
        for i in 0..4 {
            let h = 1e-6;
            let (mut up, mut down) = (x, x);
            up[i] += h;
            down[i] -= h;
            let numeric = (rows(&up).loss[0] - rows(&down).loss[0]) / (2.0 * h);
            assert!(
                (numeric - r.grad[i]).abs() < 1e-8,
                "{i}: {numeric} vs {}",
                r.grad[i]
            );
        }
        let r = super::cross_entropy(&[1.0, 2.0, 1.0, 2.0], 2, &[-100, 5], -100, 0.0);
        assert_eq!((r.loss[0], r.valid), (0.0, 1));
        assert!(r.loss[1].is_nan() && r.grad[2].is_nan());
    }

    /// The norms' dx against central differences of `sum(dy * y)`.
    #[test]
    fn norm_backward_matches_finite_differences() {
        let (x, dy, w) = (
            [0.3, -1.2, 2.5, 0.7, 0.1],
            [0.5, -0.25, 1.0, 0.75, -1.5],
            [1.5, -0.5, 2.0, 1.0, 0.25],
        );
        let loss = |x: &[f64], rms: bool| -> f64 {
            let y = if rms {
                super::rms_norm(x, 5, Some(&w), 1e-3).y
            } else {
                super::layer_norm(x, 5, Some(&w), None, 1e-3).y
            };
            y.iter().zip(&dy).map(|(y, d)| y * d).sum()
        };
        for rms in [false, true] {
            let dx = if rms {
                let r = super::rms_norm(&x, 5, Some(&w), 1e-3);
                super::rms_norm_backward(&x, &dy, 5, Some(&w), &r.rstd).dx
            } else {
                let n = super::layer_norm(&x, 5, Some(&w), None, 1e-3);
                super::layer_norm_backward(&x, &dy, 5, Some(&w), &n.mean, &n.rstd).dx
            };
            for i in 0..5 {
                let h = 1e-6;
                let (mut up, mut down) = (x, x);
                up[i] += h;
                down[i] -= h;
                let numeric = (loss(&up, rms) - loss(&down, rms)) / (2.0 * h);
                assert!(
                    (numeric - dx[i]).abs() < 1e-7,
                    "rms {rms} item {i}: {numeric} vs {}",
                    dx[i]
                );
            }
        }
    }
}
