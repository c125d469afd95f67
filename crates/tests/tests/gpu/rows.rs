//! Row operations (softmax, log-softmax, their backward, LayerNorm, RMSNorm) against the `f64`
//! references of `reference::rows`: property tests over every row type, column counts from 1 to
//! 2^20 (odd, prime, powers of two and their neighbours, past what a block holds in
//! registers), random row counts, misaligned views (the one-element-per-load path), masked
//! (`-inf`) and NaN rows; each result within a stated bound. Also bad input, determinism and a
//! matrix past 2^31 elements.

use crate::support::{GpuTest, check_eq, ok, rng, under_sanitizers};
use gpu_primitives::device::{DeviceVec, DeviceView, DeviceWorkspace};
use gpu_primitives::reference::rows::{self as reference, Forward, centring, f32_bound, shift};
use gpu_primitives::rows::{self, CrossEntropy, Norm, NormGrads, Reduction, RowElement};
use gpu_primitives::{Error, Gpu};
use half::{bf16, f16};
use libtest_mimic::Failed;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("rows::forward_every_type_and_shape", forward_every_type),
    ("rows::backward_every_type_and_shape", backward_every_type),
    (
        "rows::norm_backward_every_type_and_shape",
        norm_backward_every_type,
    ),
    (
        "rows::cross_entropy_every_type_and_shape",
        cross_entropy_every_type,
    ),
    (
        "rows::norm_backward_summed_in_the_dx_kernel",
        norm_backward_summed_in_the_dx_kernel,
    ),
    ("rows::cluster_kernels_few_rows", cluster_kernels_few_rows),
    (
        "rows::long_rows_x_tiles_kept_in_shared_memory",
        long_rows_kept_in_shared_memory,
    ),
    (
        "rows::shared_memory_reserved_per_block_as_planned",
        reserved_shared_memory,
    ),
    ("rows::special_rows", special_rows),
    ("rows::bad_input_and_empty", bad_input),
    ("rows::past_2_pow_31_elements", past_2_pow_31),
];

/// A row type in the tests: conversions, and the error of rounding an output to it.
pub trait RowTest: RowElement + Default {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// Relative error of rounding to this type (0 for f32: the bounds below cover f32).
    const ROUNDING: f64;
    /// Absolute error of rounding a value near 0 (the type's smallest subnormal step / 2).
    const TINY: f64;
}

impl RowTest for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    const ROUNDING: f64 = 0.0;
    const TINY: f64 = 1e-44;
}

macro_rules! half_row_test {
    ($t:ty, $rounding:expr, $tiny:expr) => {
        impl RowTest for $t {
            fn from_f64(v: f64) -> Self {
                <$t>::from_f64(v)
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            const ROUNDING: f64 = $rounding;
            const TINY: f64 = $tiny;
        }
    };
}
half_row_test!(f16, 1.0 / 2048.0, 3.0e-8);
half_row_test!(bf16, 1.0 / 256.0, 1e-40);

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Column counts: tiny, around a warp's and a block's capacity, odd and prime, past one tile.
const COLS: &[usize] = &[
    1,
    2,
    3,
    5,
    8,
    17,
    31,
    32,
    33,
    64,
    100,
    127,
    128,
    255,
    256,
    257,
    511,
    512,
    513,
    1000,
    1023,
    1024,
    1025,
    2047,
    2048,
    3001,
    4096,
    8191,
    8192,
    16383,
    16384,
    16385,
    32768,
    40_009,
    65_536,
    100_003,
    262_144,
    1 << 20,
];

/// Most elements one property case moves.
const CASE_ELEMENTS: usize = 1 << 22;

/// A matrix of `rows x cols` values in [-8, 8]: some rows shifted by up to 100 (the norms'
/// means), with `special` some rows masked from a random column on (`-inf`), all `-inf`,
/// holding a NaN, or one item 110 below the others (its softmax below 2^-126, flushed to 0).
fn matrix<T: RowTest>(rows: usize, cols: usize, special: bool, seed: u64) -> Vec<T> {
    let mut r = rng(seed);
    let mut x = Vec::with_capacity(rows * cols);
    for _ in 0..rows {
        let shift = if r.random_bool(0.2) {
            r.random_range(-100.0..100.0)
        } else {
            0.0
        };
        let start = x.len();
        x.extend((0..cols).map(|_| T::from_f64(shift + r.random_range(-8.0..8.0))));
        if special {
            let row = &mut x[start..];
            match r.random_range(0..20) {
                0 => row[r.random_range(0..cols)..].fill(T::from_f64(f64::NEG_INFINITY)),
                1 => row.fill(T::from_f64(f64::NEG_INFINITY)),
                2 => row[r.random_range(0..cols)] = T::from_f64(f64::NAN),
                3 => row[r.random_range(0..cols)] = T::from_f64(shift - 110.0),
                _ => {}
            }
        }
    }
    x
}

/// Upload `x`, one element further into its buffer when `skip` (a misaligned view).
fn upload<T: RowTest>(gpu: &Gpu, x: &[T], skip: bool) -> Result<DeviceVec<T>, TestCaseError> {
    let mut padded = Vec::with_capacity(x.len() + 1);
    if skip {
        padded.push(T::default());
    }
    padded.extend_from_slice(x);
    DeviceVec::from_slice(gpu, &padded).map_err(fail)
}

fn view<T>(v: &DeviceVec<T>, skip: bool, n: usize) -> DeviceView<'_, T>
where
    T: gpu_primitives::device::Element,
{
    let s = skip as usize;
    v.view().slice(s..s + n)
}

fn widen<T: RowTest>(x: &[T]) -> Vec<f64> {
    x.iter().map(|v| v.to_f64()).collect()
}

/// `found` against `expected` element by element: NaN where the reference is NaN, equal
/// infinities, else within `bound(i)` plus the output type's rounding.
fn within<T: RowTest>(
    what: &str,
    found: &[T],
    expected: &[f64],
    bound: impl Fn(usize) -> f64,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(found.len(), expected.len());
    for (i, (&f, &e)) in found.iter().zip(expected).enumerate() {
        let f = f.to_f64();
        let ok = if e.is_nan() {
            f.is_nan()
        } else if e.is_infinite() {
            f == e
        } else {
            (f - e).abs() <= bound(i) + T::ROUNDING * e.abs() + T::TINY
        };
        prop_assert!(
            ok,
            "{}: element {} found {} expected {} (bound {})",
            what,
            i,
            f,
            e,
            bound(i)
        );
    }
    Ok(())
}

fn download<T: RowTest>(gpu: &Gpu, v: &DeviceVec<T>) -> Result<Vec<T>, TestCaseError> {
    let raw = v.to_vec(gpu).map_err(fail)?;
    Ok(T::from_raw(&raw).to_vec())
}

/// One forward case: softmax, log-softmax, LayerNorm and RMSNorm of one matrix.
fn check_forward<T: RowTest>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    skip: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    let n = rows * cols;
    let what = |op: &str| format!("{op} {} {rows}x{cols} skip={skip}", T::NAME);
    let x = matrix::<T>(rows, cols, true, seed);
    let d_x = upload(gpu, &x, skip)?;
    let input = view(&d_x, skip, n);
    let wide = widen(&x);
    let mut d_y = DeviceVec::<T>::zeroed(gpu, n).map_err(fail)?;

    rows::softmax(gpu, input, cols, &mut d_y).map_err(fail)?;
    let y = download(gpu, &d_y)?;
    let expected = reference::softmax(&wide, cols);
    let shifts: Vec<f64> = wide.chunks(cols.max(1)).map(shift).collect();
    within(&what("softmax"), &y, &expected, |i| {
        f32_bound(Forward::Softmax, expected[i], 0.0, shifts[i / cols])
    })?;
    // Deterministic: the same bits again.
    rows::softmax(gpu, input, cols, &mut d_y).map_err(fail)?;
    let again = download(gpu, &d_y)?;
    let bytes = |v: &[T]| bytemuck::cast_slice::<T::Raw, u8>(T::as_raw(v)).to_vec();
    prop_assert!(
        bytes(&again) == bytes(&y),
        "{}: a second run differs",
        what("softmax")
    );

    rows::log_softmax(gpu, input, cols, &mut d_y).map_err(fail)?;
    let expected = reference::log_softmax(&wide, cols);
    within(&what("log_softmax"), &download(gpu, &d_y)?, &expected, |i| {
        f32_bound(Forward::LogSoftmax, expected[i], 0.0, shifts[i / cols])
    })?;

    // The norms, on masked and NaN rows too: LayerNorm's row is NaN throughout where it holds
    // a NaN or an infinity; RMSNorm's where it holds a NaN, and where it holds -inf its rstd is
    // 0 (its finite items give 0, the infinite ones NaN).
    let x = matrix::<T>(rows, cols, true, seed ^ 1);
    let wide = widen(&x);
    let d_x = upload(gpu, &x, skip)?;
    let input = view(&d_x, skip, n);
    let mut r = rng(seed ^ 2);
    let weight: Vec<T> = (0..cols)
        .map(|_| T::from_f64(r.random_range(-2.0..2.0)))
        .collect();
    let bias: Vec<T> = (0..cols)
        .map(|_| T::from_f64(r.random_range(-2.0..2.0)))
        .collect();
    let (d_weight, d_bias) = (upload(gpu, &weight, skip)?, upload(gpu, &bias, skip)?);
    let (w, b) = (view(&d_weight, skip, cols), view(&d_bias, skip, cols));
    let (wide_w, wide_b) = (widen(&weight), widen(&bias));
    let eps = 1e-5f32;
    // Weight, bias, both or neither (each optional on its own).
    let (weighted, biased) = (r.random_bool(0.5), r.random_bool(0.5));
    let mut d_mean = DeviceVec::<f32>::zeroed(gpu, rows).map_err(fail)?;
    let mut d_rstd = DeviceVec::<f32>::zeroed(gpu, rows).map_err(fail)?;
    let mut norm = Norm::new(eps);
    if weighted {
        norm = norm.weight(w);
    }
    if biased {
        norm = norm.bias(b);
    }
    let what = |op: &str| format!("{} weight={weighted} bias={biased}", what(op));
    rows::layer_norm(
        gpu,
        input,
        cols,
        norm,
        &mut d_y,
        Some(d_mean.view_mut()),
        Some(d_rstd.view_mut()),
    )
    .map_err(fail)?;
    let expected = reference::layer_norm(
        &wide,
        cols,
        weighted.then_some(&wide_w[..]),
        biased.then_some(&wide_b[..]),
        eps as f64,
    );
    let weight = |i: usize| if weighted { wide_w[i % cols] } else { 0.0 };
    within(&what("layer_norm"), &download(gpu, &d_y)?, &expected.y, |i| {
        let row = i / cols;
        f32_bound(
            Forward::LayerNorm,
            expected.y[i],
            weight(i),
            centring(expected.mean[row], expected.rstd[row], cols),
        )
    })?;
    // The saved statistics of rows of finite items (elsewhere: not finite, unspecified).
    let finite_row: Vec<bool> = wide
        .chunks(cols)
        .map(|row| row.iter().all(|v| v.is_finite()))
        .collect();
    let mean = d_mean.to_vec(gpu).map_err(fail)?;
    statistics(
        &what("layer_norm mean"),
        &mean,
        &expected.mean,
        &finite_row,
        |i| 1e-6 * (1.0 + expected.mean[i].abs()),
    )?;
    let rstd = d_rstd.to_vec(gpu).map_err(fail)?;
    statistics(
        &what("layer_norm rstd"),
        &rstd,
        &expected.rstd,
        &finite_row,
        |i| 2e-5 * expected.rstd[i],
    )?;

    let norm = if weighted {
        Norm::new(eps).weight(w)
    } else {
        Norm::new(eps)
    };
    rows::rms_norm(gpu, input, cols, norm, &mut d_y, Some(d_rstd.view_mut())).map_err(fail)?;
    let expected = reference::rms_norm(&wide, cols, weighted.then_some(&wide_w[..]), eps as f64);
    within(&what("rms_norm"), &download(gpu, &d_y)?, &expected.y, |i| {
        f32_bound(Forward::RmsNorm, expected.y[i], weight(i), 0.0)
    })?;
    let rstd = d_rstd.to_vec(gpu).map_err(fail)?;
    statistics(&what("rms_norm rstd"), &rstd, &expected.rstd, &finite_row, |i| {
        2e-5 * expected.rstd[i]
    })
}

/// A norm's saved statistics (one a row) against the reference's: within `bound` where the row
/// is all finite, else not finite (NaN or an infinity: which one depends on the order of the
/// sums) or, for RMSNorm's rstd of a row holding -inf, 0.
fn statistics(
    what: &str,
    found: &[f32],
    expected: &[f64],
    finite_row: &[bool],
    bound: impl Fn(usize) -> f64,
) -> Result<(), TestCaseError> {
    let finite: Vec<usize> = (0..found.len()).filter(|&r| finite_row[r]).collect();
    let pick_f32 = |v: &[f32]| finite.iter().map(|&r| v[r]).collect::<Vec<_>>();
    let pick = |v: &[f64]| finite.iter().map(|&r| v[r]).collect::<Vec<_>>();
    within(what, &pick_f32(found), &pick(expected), |i| bound(finite[i]))?;
    for (row, (&f, &e)) in found.iter().zip(expected).enumerate() {
        if !finite_row[row] {
            let agrees = !f.is_finite() || (e == 0.0 && f == 0.0);
            prop_assert!(
                agrees,
                "{}: row {} (not finite) found {} expected {}",
                what,
                row,
                f,
                e
            );
        }
    }
    Ok(())
}

/// One backward case: the gradients of softmax and log-softmax at a random `dy`.
fn check_backward<T: RowTest>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    skip: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    let n = rows * cols;
    let what = |op: &str| format!("{op} {} {rows}x{cols} skip={skip}", T::NAME);
    // Masked and NaN rows too: masked items' y is 0 (softmax) or -inf (log-softmax), a NaN
    // row's dx is NaN throughout.
    let logits = widen(&matrix::<T>(rows, cols, true, seed));
    let mut r = rng(seed ^ 3);
    let dy: Vec<T> = (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect();
    let wide_dy = widen(&dy);
    let d_dy = upload(gpu, &dy, skip)?;
    let mut d_dx = DeviceVec::<T>::zeroed(gpu, n).map_err(fail)?;

    let y: Vec<T> = reference::softmax(&logits, cols)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let wide_y = widen(&y);
    let d_y = upload(gpu, &y, skip)?;
    rows::softmax_backward(gpu, view(&d_y, skip, n), view(&d_dy, skip, n), cols, &mut d_dx).map_err(fail)?;
    let expected = reference::softmax_backward(&wide_y, &wide_dy, cols);
    let bounds = reference::softmax_backward_bounds(&wide_y, &wide_dy, cols);
    within(
        &what("softmax_backward"),
        &download(gpu, &d_dx)?,
        &expected,
        |i| bounds[i],
    )?;

    let y: Vec<T> = reference::log_softmax(&logits, cols)
        .into_iter()
        .map(T::from_f64)
        .collect();
    let wide_y = widen(&y);
    let d_y = upload(gpu, &y, skip)?;
    rows::log_softmax_backward(gpu, view(&d_y, skip, n), view(&d_dy, skip, n), cols, &mut d_dx)
        .map_err(fail)?;
    let expected = reference::log_softmax_backward(&wide_y, &wide_dy, cols);
    let bounds = reference::log_softmax_backward_bounds(&wide_y, &wide_dy, cols);
    within(
        &what("log_softmax_backward"),
        &download(gpu, &d_dx)?,
        &expected,
        |i| bounds[i],
    )
}

/// One case of the norms' backward: dx, and where asked (at random) dweight and dbias, of
/// LayerNorm and RMSNorm at a random `dy`, from `f32` saved statistics (the reference's, rounded,
/// so that the forward's error is not counted here).
fn check_norm_backward<T: RowTest>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    skip: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    check_norm_backward_of::<T>(gpu, rows, cols, skip, seed, None)
}

/// [`check_norm_backward`] with the weight and the parameter gradients asked for: the kernels
/// that sum `dweight` and `dbias` always run.
fn check_norm_backward_summed<T: RowTest>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    skip: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    check_norm_backward_of::<T>(gpu, rows, cols, skip, seed, Some((true, true)))
}

/// One case of the norms' backward; `affine_parameters`: whether a weight is given and the
/// parameter gradients asked for (random when `None`).
fn check_norm_backward_of<T: RowTest>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    skip: bool,
    seed: u64,
    affine_parameters: Option<(bool, bool)>,
) -> Result<(), TestCaseError> {
    let n = rows * cols;
    // Half the cases hold masked and NaN rows: their dx is NaN (the reference's too), and so
    // is every column's dweight that such a row's normalized item is NaN in (all of them for
    // LayerNorm), which hides that column's check; the other half check every column.
    let special = seed.is_multiple_of(2);
    let what = |op: &str| format!("{op} {} {rows}x{cols} skip={skip} special={special}", T::NAME);
    let x = matrix::<T>(rows, cols, special, seed);
    let wide_x = widen(&x);
    let mut r = rng(seed ^ 4);
    let dy: Vec<T> = (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect();
    let wide_dy = widen(&dy);
    let weight: Vec<T> = (0..cols)
        .map(|_| T::from_f64(r.random_range(-2.0..2.0)))
        .collect();
    let wide_w = widen(&weight);
    let drawn = (r.random_bool(0.7), r.random_bool(0.7));
    let (affine, parameters) = affine_parameters.unwrap_or(drawn);
    let (d_x, d_dy, d_w) = (
        upload(gpu, &x, skip)?,
        upload(gpu, &dy, skip)?,
        upload(gpu, &weight, skip)?,
    );
    let (input, grad) = (view(&d_x, skip, n), view(&d_dy, skip, n));
    let w = affine.then(|| view(&d_w, skip, cols));
    let wide_weight = affine.then_some(&wide_w[..]);
    let mut d_dx = DeviceVec::<T>::zeroed(gpu, n).map_err(fail)?;
    let mut d_dweight = DeviceVec::<T>::zeroed(gpu, cols).map_err(fail)?;
    let mut d_dbias = DeviceVec::<T>::zeroed(gpu, cols).map_err(fail)?;
    let workspace = &mut DeviceWorkspace::new();
    let stored = |v: &[f64]| -> Vec<f64> { v.iter().map(|&s| s as f32 as f64).collect() };
    let column_abs = |per: &dyn Fn(usize) -> f64| -> Vec<f64> {
        (0..cols)
            .map(|c| (0..rows).map(|r| per(r * cols + c)).sum())
            .collect()
    };
    // Sums of up to `rows` f32 terms, each from an approximate rstd.
    let sum_bound = 3e-5 + rows as f64 / (1u64 << 24) as f64;

    for centred in [true, false] {
        let op = if centred {
            "layer_norm_backward"
        } else {
            "rms_norm_backward"
        };
        let forward = if centred {
            reference::layer_norm(&wide_x, cols, None, None, 1e-5)
        } else {
            reference::rms_norm(&wide_x, cols, None, 1e-5)
        };
        let (mean, rstd) = (stored(&forward.mean), stored(&forward.rstd));
        let to_f32 = |v: &[f64]| -> Vec<f32> { v.iter().map(|&s| s as f32).collect() };
        let d_mean = DeviceVec::from_slice(gpu, &to_f32(&mean)).map_err(fail)?;
        let d_rstd = DeviceVec::from_slice(gpu, &to_f32(&rstd)).map_err(fail)?;
        // The backward into dx (and dweight, dbias), returning their bytes: run twice, the
        // same bits (dweight and dbias summed over the rows in a fixed order).
        let mut run = || -> Result<Vec<Vec<u8>>, TestCaseError> {
            let mut grads = NormGrads::new(&mut d_dx);
            if parameters {
                grads = grads.dweight(&mut d_dweight);
                if centred {
                    grads = grads.dbias(&mut d_dbias);
                }
            }
            if centred {
                rows::layer_norm_backward(gpu, input, grad, cols, w, &d_mean, &d_rstd, grads, workspace)
            } else {
                rows::rms_norm_backward(gpu, input, grad, cols, w, &d_rstd, grads, workspace)
            }
            .map_err(fail)?;
            [&d_dx, &d_dweight, &d_dbias]
                .into_iter()
                .map(|v| Ok(bytemuck::cast_slice::<T::Raw, u8>(&v.to_vec(gpu).map_err(fail)?).to_vec()))
                .collect()
        };
        let first = run()?;
        prop_assert!(run()? == first, "{}: a second run differs", what(op));
        let expected = if centred {
            reference::layer_norm_backward(&wide_x, &wide_dy, cols, wide_weight, &mean, &rstd)
        } else {
            reference::rms_norm_backward(&wide_x, &wide_dy, cols, wide_weight, &rstd)
        };
        let mean_or_0 = |row: usize| if centred { mean[row] } else { 0.0 };
        let normalized = |i: usize| (wide_x[i] - mean_or_0(i / cols)) * rstd[i / cols];
        let bounds = reference::norm_backward_dx_bounds(
            &wide_x,
            &wide_dy,
            cols,
            wide_weight,
            centred.then_some(&mean[..]),
            &rstd,
        );
        within(&what(op), &download(gpu, &d_dx)?, &expected.dx, |i| bounds[i])?;
        if parameters {
            let dw_abs = column_abs(&|i| (wide_dy[i] * normalized(i)).abs());
            within(
                &what("dweight"),
                &download(gpu, &d_dweight)?,
                &expected.dweight,
                |c| sum_bound * dw_abs[c],
            )?;
            if centred {
                let db_abs = column_abs(&|i| wide_dy[i].abs());
                within(&what("dbias"), &download(gpu, &d_dbias)?, &expected.dbias, |c| {
                    sum_bound * db_abs[c]
                })?;
            }
        }
    }
    Ok(())
}

/// One case of cross-entropy over `cols` classes: random targets (some the ignore index),
/// label smoothing, reduction, with or without the fused gradient.
fn check_cross_entropy<T: RowTest>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    skip: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    let n = rows * cols;
    // Half the cases hold masked rows (a loss of +inf where the target or, with smoothing, any
    // class is -inf), rows of all -inf and NaN rows (NaN loss and gradient).
    let special = seed.is_multiple_of(2);
    let x = matrix::<T>(rows, cols, special, seed);
    let wide = widen(&x);
    let mut r = rng(seed ^ 5);
    let ignore_index = if r.random_bool(0.5) {
        -100
    } else {
        r.random_range(0..cols as i64)
    };
    let targets: Vec<i64> = (0..rows)
        .map(|_| {
            if r.random_bool(0.1) {
                ignore_index
            } else {
                r.random_range(0..cols as i64)
            }
        })
        .collect();
    let smoothing = if r.random_bool(0.5) {
        0.0
    } else {
        r.random_range(0.0..1.0f32)
    };
    let reduction = [Reduction::Mean, Reduction::Sum, Reduction::None][r.random_range(0..3)];
    let with_grad = r.random_bool(0.7);
    let what = format!(
        "cross_entropy {} {rows}x{cols} skip={skip} special={special} {reduction:?} smoothing={smoothing} ignore={ignore_index} grad={with_grad}",
        T::NAME
    );
    let d_x = upload(gpu, &x, skip)?;
    let d_targets = DeviceVec::from_slice(gpu, &targets).map_err(fail)?;
    let per_row = reduction == Reduction::None;
    let mut d_loss = DeviceVec::<f32>::zeroed(gpu, if per_row { rows } else { 1 }).map_err(fail)?;
    let mut d_grad = DeviceVec::<T>::zeroed(gpu, n).map_err(fail)?;
    let options = CrossEntropy {
        reduction,
        ignore_index,
        label_smoothing: smoothing,
    };
    let grad = with_grad.then(|| d_grad.view_mut());
    let workspace = &mut DeviceWorkspace::new();
    rows::cross_entropy(
        gpu,
        view(&d_x, skip, n),
        cols,
        &d_targets,
        options,
        &mut d_loss,
        grad,
        workspace,
    )
    .map_err(fail)?;
    let expected = reference::cross_entropy(&wide, cols, &targets, ignore_index, smoothing as f64);
    let row_bound: Vec<f64> = wide.chunks(cols).map(reference::cross_entropy_bound).collect();
    let loss = d_loss.to_vec(gpu).map_err(fail)?;
    let scale = match reduction {
        Reduction::Mean => 1.0 / expected.valid as f64,
        _ => 1.0,
    };
    if per_row {
        within(&what, &loss, &expected.loss, |i| row_bound[i])?;
    } else {
        let total: f64 = expected.loss.iter().sum::<f64>() * scale;
        let abs: f64 = expected.loss.iter().map(|l| l.abs()).sum::<f64>() * scale;
        let bound = row_bound.iter().sum::<f64>() * scale + rows as f64 / (1u64 << 24) as f64 * abs;
        within(&what, &loss, &[total], |_| bound)?;
    }
    if with_grad {
        let grad = download(gpu, &d_grad)?;
        let bounds =
            reference::cross_entropy_grad_bounds(&wide, cols, &expected, &targets, ignore_index, scale);
        // Ignored rows have gradient 0, also when no row is valid (a mean over nothing).
        let expected_grad =
            reference::cross_entropy_scaled_grad(&expected, cols, &targets, ignore_index, scale);
        // Exactly 0 on an ignored row, whatever the row holds (a NaN row's probabilities are NaN).
        within(&format!("{what} gradient"), &grad, &expected_grad, |i| bounds[i])?;
    } else {
        prop_assert!(
            download(gpu, &d_grad)?.iter().all(|g| g.to_f64() == 0.0),
            "{}: a gradient was written",
            what
        );
    }
    Ok(())
}

/// (cols, rows, misaligned, seed) for one case.
fn shape() -> impl Strategy<Value = (usize, usize, bool, u64)> {
    (0..COLS.len(), 0.0f64..1.0, any::<bool>(), any::<u64>()).prop_map(|(c, f, skip, seed)| {
        let cols = COLS[c];
        let most = (CASE_ELEMENTS / cols).clamp(1, 5000);
        (cols, 1 + (f * f * most as f64) as usize % most, skip, seed)
    })
}

/// One property case of a row check, for every type.
type RowCheck = fn(&Gpu, usize, usize, bool, u64) -> Result<(), TestCaseError>;

/// Run each of `checks` (one per type) over random shapes.
fn run_cases(gpu: &Gpu, checks: [RowCheck; 3]) -> Result<(), Failed> {
    for check in checks {
        crate::properties::runner()
            .run(&shape(), |(cols, rows, skip, seed)| {
                check(gpu, rows, cols, skip, seed)
            })
            .map_err(|e| Failed::from(e.to_string()))?;
    }
    Ok(())
}

fn forward_every_type(gpu: &Gpu) -> Result<(), Failed> {
    run_cases(
        gpu,
        [check_forward::<f32>, check_forward::<f16>, check_forward::<bf16>],
    )
}

fn backward_every_type(gpu: &Gpu) -> Result<(), Failed> {
    run_cases(
        gpu,
        [
            check_backward::<f32>,
            check_backward::<f16>,
            check_backward::<bf16>,
        ],
    )
}

fn norm_backward_every_type(gpu: &Gpu) -> Result<(), Failed> {
    run_cases(
        gpu,
        [
            check_norm_backward::<f32>,
            check_norm_backward::<f16>,
            check_norm_backward::<bf16>,
        ],
    )
}

fn cross_entropy_every_type(gpu: &Gpu) -> Result<(), Failed> {
    run_cases(
        gpu,
        [
            check_cross_entropy::<f32>,
            check_cross_entropy::<f16>,
            check_cross_entropy::<bf16>,
        ],
    )
}

/// The norms' backward where the kernel summing the parameters' gradients holds the row in one
/// tile of more threads than `dx` alone takes (`row_sums_plan`: 1025 to 8192 columns, blocks
/// of 512 and 1024 threads), or in tiles whose sums fit its shared memory (`row_sums_launch`;
/// halves of 2049 to 4096 columns in two tiles of 256 threads, one block a row; on an H100: one
/// block a row to 16384 halves, and to 24576 `f32` columns, 6 tiles of 4096,
/// where the GPU has no clusters or `GPU_PRIMITIVES_ROW_CLUSTER=0`; on a GPU with clusters,
/// `f32` rows of 8193 to 24576 columns shared among a cluster's blocks of 256 threads in tiles
/// of 2048, 1 to 3 a block, and rows of 24577 to 98304 columns in tiles of 8192, 1 to 3 a
/// block, equal shares or not), and past that (the separate launches), on enough rows that each
/// block or cluster sums several, both load paths.
fn norm_backward_summed_in_the_dx_kernel(gpu: &Gpu) -> Result<(), Failed> {
    let checks: [RowCheck; 3] = [
        check_norm_backward::<f32>,
        check_norm_backward::<f16>,
        check_norm_backward::<bf16>,
    ];
    // Under the sanitizers: one length of each path (one block holding the row, halves' two
    // tiles of 256 threads, tiles, clusters
    // of one to three tiles a block, the separate launches past them), 8 rows each (one chunk
    // of rows). Racecheck takes them without clusters (it would take about half an hour over the
    // cluster-summing kernels here); `cluster_kernels_few_rows` gives it those (docs/testing.md).
    let sanitized = under_sanitizers();
    for (k, check) in checks.iter().enumerate() {
        for cols in [
            1025, 2048, 3001, 4096, 4097, 6007, 8192, 8193, 12289, 16384, 16385, 24577, 32768, 32769, 40009,
            65536, 81927, 98304, 98305,
        ] {
            if sanitized && ![1025, 3001, 4097, 16385, 24577, 40009, 98304, 98305].contains(&cols) {
                continue;
            }
            let rows = match cols {
                _ if sanitized => 8,
                0..=8192 => 700,
                8193..=24576 => 300,
                _ => 100,
            };
            for skip in [false, true] {
                check(gpu, rows, cols, skip, (k * 1000 + cols) as u64)
                    .map_err(|e| Failed::from(e.to_string()))?;
            }
        }
    }
    Ok(())
}

/// Every kind of cluster kernel (sm_90: a row shared among the blocks of a thread-block
/// cluster) at 2 rows, few enough shared-memory accesses that racecheck finishes them (it
/// checks about 35 thousand items a second of the summing kernels: docs/testing.md). On an
/// H100: the `f32` forward operations (81927 and 131072 columns), the softmax backward (`f32`
/// 65536, `bf16` 131072), cross-entropy (`f32` 131072), and the norms' backward summing
/// `dweight` and `dbias` across the cluster, with a weight and both gradients asked for (`f32`
/// 16384 in blocks of 256 threads, `f32` 40009 in blocks of 1024, `bf16` 32768, `f16` 40009).
/// Both load paths: aligned rows and odd ones. On a GPU without clusters the same lengths take
/// the one-block kernels.
fn cluster_kernels_few_rows(gpu: &Gpu) -> Result<(), Failed> {
    let cases: [(RowCheck, usize); 9] = [
        (check_forward::<f32>, 81_927),
        (check_forward::<f32>, 131_072),
        (check_backward::<f32>, 65_536),
        (check_backward::<bf16>, 131_072),
        (check_cross_entropy::<f32>, 131_072),
        (check_norm_backward_summed::<f32>, 16_384),
        (check_norm_backward_summed::<f32>, 40_009),
        (check_norm_backward_summed::<bf16>, 32_768),
        (check_norm_backward_summed::<f16>, 40_009),
    ];
    for (k, (check, cols)) in cases.into_iter().enumerate() {
        // Odd seeds: the norms' backward then has no masked or NaN rows, so every column's
        // dweight is checked (the other checks draw their own special rows).
        check(gpu, 2, cols, false, (2 * k + 1) as u64).map_err(|e| Failed::from(e.to_string()))?;
    }
    Ok(())
}

/// Rows read in tiles, every check over every type at lengths where the block keeps all its
/// tiles but the last in shared memory (on an H100: 16385, 40009 and 65536 columns forward,
/// halves up to 131072; at 16385 `f32` LayerNorm goes from one tile of 16 words a thread to
/// tiles of 8), some of them (262144: the rest read again), both load paths (aligned and one
/// element per load), 3 rows each: the random shapes of the property tests reach these lengths
/// only now and then. On a GPU with clusters (sm_90) the rows one block would read partly
/// twice are shared among the blocks of a cluster: `f32` forward from 81927 columns (6 tiles:
/// blocks of 1 and 2 tiles, the last one partial) to 2^20 (16 tiles a block, most read again),
/// the backward from 65536.
fn long_rows_kept_in_shared_memory(gpu: &Gpu) -> Result<(), Failed> {
    let checks: [[RowCheck; 3]; 4] = [
        [check_forward::<f32>, check_forward::<f16>, check_forward::<bf16>],
        [
            check_backward::<f32>,
            check_backward::<f16>,
            check_backward::<bf16>,
        ],
        [
            check_norm_backward::<f32>,
            check_norm_backward::<f16>,
            check_norm_backward::<bf16>,
        ],
        [
            check_cross_entropy::<f32>,
            check_cross_entropy::<f16>,
            check_cross_entropy::<bf16>,
        ],
    ];
    for (k, check) in checks.iter().flatten().enumerate() {
        for cols in [16_385, 40_009, 65_536, 81_927, 131_072, 262_144, 1 << 20] {
            for skip in [false, true] {
                check(gpu, 3, cols, skip, (k * 1000 + cols) as u64)
                    .map_err(|e| Failed::from(e.to_string()))?;
            }
        }
    }
    Ok(())
}

/// The row plans split a multiprocessor's shared memory among its blocks assuming the driver
/// reserves `layout::SHARED_RESERVED_PER_BLOCK` bytes a block (`planning::rows::row_shared_tiles`): this
/// GPU reserves that much.
fn reserved_shared_memory(gpu: &Gpu) -> Result<(), Failed> {
    let reserved = gpu.info().reserved_shared_per_block;
    let planned = gpu_primitives_abi::layout::SHARED_RESERVED_PER_BLOCK;
    if reserved != planned {
        return Err(Failed::from(format!(
            "{} reserves {reserved} bytes of shared memory a block; the row plans assume {planned}",
            gpu.info().name
        )));
    }
    Ok(())
}

/// Rows whose answer is known exactly: LayerNorm of one column (or of equal items) is the bias,
/// even for large values (the centred `x - mean` is exact); softmax of a row of all `-inf` is
/// NaN (PyTorch's answer), of a row with one finite item 1 there and 0 elsewhere.
fn special_rows(gpu: &Gpu) -> Result<(), Failed> {
    let x: Vec<f32> = (0..300).map(|i| 1000.0 + i as f32 * 0.37).collect();
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    let bias = ok(DeviceVec::from_slice(gpu, &[0.25f32]))?;
    let weight = ok(DeviceVec::from_slice(gpu, &[3.0f32]))?;
    let mut y = ok(DeviceVec::<f32>::zeroed(gpu, 300))?;
    let norm = Norm::new(1e-5).weight(&weight).bias(&bias);
    ok(rows::layer_norm(gpu, &d_x, 1, norm, &mut y, None, None))?;
    check_eq("layer_norm of one column", ok(y.to_vec(gpu))?, vec![0.25f32; 300])?;
    let equal = ok(DeviceVec::from_slice(gpu, &[4096.5f32; 300]))?;
    let weights = ok(DeviceVec::from_slice(gpu, &[3.0f32; 100]))?;
    let biases = ok(DeviceVec::from_slice(gpu, &[0.25f32; 100]))?;
    let norm = Norm::new(1e-5).weight(&weights).bias(&biases);
    ok(rows::layer_norm(gpu, &equal, 100, norm, &mut y, None, None))?;
    check_eq(
        "layer_norm of equal items",
        ok(y.to_vec(gpu))?,
        vec![0.25f32; 300],
    )?;
    let inf = f32::NEG_INFINITY;
    let masked = ok(DeviceVec::from_slice(gpu, &[inf, inf, inf, inf, 2.0, inf]))?;
    let mut p = ok(DeviceVec::<f32>::zeroed(gpu, 6))?;
    ok(rows::softmax(gpu, &masked, 3, &mut p))?;
    let p = ok(p.to_vec(gpu))?;
    check_eq("softmax of all -inf", p[..3].iter().all(|v| v.is_nan()), true)?;
    check_eq("softmax of one finite item", &p[3..], &[0.0, 1.0, 0.0][..])?;
    // exp(-100) (3.7e-44) is below f32's smallest normal 2^-126: flushed to 0, as documented.
    let far = ok(DeviceVec::from_slice(gpu, &[0.0f32, -100.0, -80.0]))?;
    let mut p = ok(DeviceVec::<f32>::zeroed(gpu, 3))?;
    ok(rows::softmax(gpu, &far, 3, &mut p))?;
    let p = ok(p.to_vec(gpu))?;
    check_eq("softmax's output below 2^-126", (p[0], p[1]), (1.0, 0.0))?;
    check_eq(
        "softmax's normal output beside it",
        ((p[2] as f64) / (-80f64).exp() - 1.0).abs() < 2e-5,
        true,
    )?;
    // Cross-entropy: a target out of range gives NaN for its row (and the mean); the mean over
    // no valid rows is NaN, the sum 0; equal logits over 4 classes lose ln 4.
    let workspace = &mut DeviceWorkspace::new();
    let logits = ok(DeviceVec::from_slice(gpu, &[0.5f32; 8]))?;
    let mut loss = ok(DeviceVec::<f32>::zeroed(gpu, 2))?;
    let mut grad = ok(DeviceVec::<f32>::zeroed(gpu, 8))?;
    let targets = ok(DeviceVec::from_slice(gpu, &[1i64, 4]))?;
    let none = CrossEntropy {
        reduction: Reduction::None,
        ..CrossEntropy::default()
    };
    let g = Some(grad.view_mut());
    ok(rows::cross_entropy(
        gpu, &logits, 4, &targets, none, &mut loss, g, workspace,
    ))?;
    let l = ok(loss.to_vec(gpu))?;
    check_eq(
        "cross_entropy of equal logits",
        (l[0] - 4f32.ln()).abs() < 1e-6,
        true,
    )?;
    check_eq("cross_entropy of a target out of range", l[1].is_nan(), true)?;
    let g = ok(grad.to_vec(gpu))?;
    check_eq("its gradient", g[4..].iter().all(|v| v.is_nan()), true)?;
    check_eq(
        "a valid row's gradient",
        (g[1] + 0.75).abs() < 1e-6 && (g[0] - 0.25).abs() < 1e-6,
        true,
    )?;
    let ignored = ok(DeviceVec::from_slice(gpu, &[-100i64, -100]))?;
    let mut total = ok(DeviceVec::<f32>::zeroed(gpu, 1))?;
    ok(rows::cross_entropy(
        gpu,
        &logits,
        4,
        &ignored,
        CrossEntropy::default(),
        &mut total,
        None,
        workspace,
    ))?;
    check_eq(
        "mean over no valid rows",
        ok(total.to_vec(gpu))?[0].is_nan(),
        true,
    )?;
    let sum = CrossEntropy {
        reduction: Reduction::Sum,
        ..CrossEntropy::default()
    };
    ok(rows::cross_entropy(
        gpu, &logits, 4, &ignored, sum, &mut total, None, workspace,
    ))?;
    check_eq("sum over no valid rows", ok(total.to_vec(gpu))?, vec![0.0f32])
}

fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    let x = ok(DeviceVec::from_slice(gpu, &[1.0f32; 12]))?;
    let mut y = ok(gpu.upload(&[7.0f32; 12]))?;
    let mismatch = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::LengthMismatch { .. }));
    let not_whole = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::NotWholeRows { .. }));
    let unsupported = |r: gpu_primitives::Result<()>| matches!(r, Err(Error::UnsupportedArgument { .. }));
    check_eq("cols 0", not_whole(rows::softmax(gpu, &x, 0, &mut y)), true)?;
    check_eq(
        "not whole rows",
        not_whole(rows::softmax(gpu, &x, 5, &mut y)),
        true,
    )?;
    check_eq(
        "cols past 2^31",
        matches!(
            rows::log_softmax(gpu, &x, 1 << 31, &mut y),
            Err(Error::PastLimit { .. })
        ),
        true,
    )?;
    let mut short = ok(gpu.alloc_zeroed::<f32>(11))?;
    check_eq(
        "short output",
        mismatch(rows::softmax(gpu, &x, 4, &mut short)),
        true,
    )?;
    let dy = ok(DeviceVec::from_slice(gpu, &[1.0f32; 8]))?;
    check_eq(
        "short dy",
        mismatch(rows::softmax_backward(gpu, &x, &dy, 4, &mut y)),
        true,
    )?;
    let weight = ok(DeviceVec::from_slice(gpu, &[1.0f32; 3]))?;
    let norm = Norm::new(1e-5).weight(&weight);
    check_eq(
        "short weight",
        mismatch(rows::layer_norm(gpu, &x, 4, norm, &mut y, None, None)),
        true,
    )?;
    let norm = Norm::new(1e-5).bias(&weight);
    check_eq(
        "RMSNorm bias",
        unsupported(rows::rms_norm(gpu, &x, 3, norm, &mut y, None)),
        true,
    )?;
    let norm = Norm::new(1e-5).bias(&weight);
    check_eq(
        "short bias",
        mismatch(rows::layer_norm(gpu, &x, 4, norm, &mut y, None, None)),
        true,
    )?;
    let mut rstd = ok(gpu.alloc_zeroed::<f32>(2))?;
    let r = rows::rms_norm(gpu, &x, 4, Norm::new(1e-5), &mut y, Some((&mut rstd).into()));
    check_eq("short rstd", mismatch(r), true)?;
    // The norms' backward: a short dweight, a bias gradient for RMSNorm, a short rstd.
    let workspace = &mut DeviceWorkspace::new();
    let stats = ok(DeviceVec::from_slice(gpu, &[1.0f32; 3]))?;
    let mut dweight = ok(gpu.alloc_zeroed::<f32>(3))?;
    let grads = NormGrads::new(&mut y).dweight(&mut dweight);
    let r = rows::layer_norm_backward(gpu, &x, &x, 4, None, &stats, &stats, grads, workspace);
    check_eq("short dweight", mismatch(r), true)?;
    let mut dbias = ok(gpu.alloc_zeroed::<f32>(4))?;
    let grads = NormGrads::new(&mut y).dbias(&mut dbias);
    let r = rows::rms_norm_backward(gpu, &x, &x, 4, None, &stats, grads, workspace);
    check_eq("RMSNorm dbias", unsupported(r), true)?;
    let r = rows::rms_norm_backward(gpu, &x, &x, 3, None, &stats, NormGrads::new(&mut y), workspace);
    check_eq("short rstd", mismatch(r), true)?;
    let two_stats = ok(DeviceVec::from_slice(gpu, &[1.0f32; 2]))?;
    let r = rows::layer_norm_backward(
        gpu,
        &x,
        &x,
        4,
        None,
        &two_stats,
        &stats,
        NormGrads::new(&mut y),
        workspace,
    );
    check_eq("short saved mean", mismatch(r), true)?;
    // Cross-entropy: a loss of the wrong length, short targets, a smoothing past 1.
    let targets = ok(DeviceVec::from_slice(gpu, &[0i64; 3]))?;
    let mut two = ok(gpu.alloc_zeroed::<f32>(2))?;
    let r = rows::cross_entropy(
        gpu,
        &x,
        4,
        &targets,
        CrossEntropy::default(),
        &mut two,
        None,
        workspace,
    );
    check_eq("cross_entropy loss of 2 for the mean", mismatch(r), true)?;
    let mut one = ok(gpu.alloc_zeroed::<f32>(1))?;
    let r = rows::cross_entropy(
        gpu,
        &x,
        3,
        &targets,
        CrossEntropy::default(),
        &mut one,
        None,
        workspace,
    );
    check_eq("cross_entropy short targets", mismatch(r), true)?;
    let smooth = CrossEntropy {
        label_smoothing: 1.5,
        ..CrossEntropy::default()
    };
    let r = rows::cross_entropy(
        gpu,
        &x,
        4,
        &targets,
        smooth,
        &mut one,
        Some((&mut y).into()),
        workspace,
    );
    check_eq(
        "cross_entropy smoothing 1.5",
        matches!(r, Err(Error::ScalarOutOfRange { .. })),
        true,
    )?;
    // No rows: the parameters' gradients are zeros.
    let empty = ok(DeviceVec::<f32>::zeroed(gpu, 0))?;
    let mut none = ok(gpu.alloc_zeroed::<f32>(0))?;
    let no_stats = ok(DeviceVec::<f32>::zeroed(gpu, 0))?;
    let mut dbias = ok(gpu.upload(&[7.0f32; 4]))?;
    let grads = NormGrads::new(&mut none).dbias(&mut dbias);
    ok(rows::layer_norm_backward(
        gpu, &empty, &empty, 4, None, &no_stats, &no_stats, grads, workspace,
    ))?;
    check_eq("dbias of no rows", ok(gpu.download(&dbias))?, vec![0.0f32; 4])?;
    // Cross-entropy of no rows: the mean is NaN (no valid target), the sum 0 (as PyTorch's).
    let no_targets = ok(DeviceVec::<i64>::zeroed(gpu, 0))?;
    for reduction in [Reduction::Mean, Reduction::Sum] {
        let mut loss = ok(gpu.upload(&[7.0f32]))?;
        let options = CrossEntropy {
            reduction,
            ..CrossEntropy::default()
        };
        ok(rows::cross_entropy(
            gpu,
            &empty,
            4,
            &no_targets,
            options,
            &mut loss,
            None,
            workspace,
        ))?;
        let found = ok(gpu.download(&loss))?[0];
        let expected = if reduction == Reduction::Mean {
            found.is_nan()
        } else {
            found == 0.0
        };
        check_eq(
            &format!("cross_entropy of no rows, {reduction:?}: {found}"),
            expected,
            true,
        )?;
    }
    // An output overlapping its input (views made from raw addresses).
    // SAFETY: the views cover `x`'s 12 elements, which stay allocated for the call; the call is
    // expected to refuse them before any launch.
    let (input, output) = unsafe {
        (
            DeviceView::<f32>::from_raw_parts(x.view().address(), 12),
            gpu_primitives::device::DeviceViewMut::<f32>::from_raw_parts(x.view().address() + 16, 8),
        )
    };
    check_eq(
        "overlap",
        matches!(
            rows::softmax(gpu, input.slice(0..8), 4, output),
            Err(Error::OutputOverlapsInput { .. })
        ),
        true,
    )?;
    // Nothing was written by any refused call.
    check_eq("output untouched", ok(gpu.download(&y))?, vec![7.0f32; 12])?;
    check_eq("input untouched", ok(x.to_vec(gpu))?, vec![1.0f32; 12])?;
    // Empty input: no launch, no error, with any cols (0 included).
    let empty = ok(DeviceVec::<f32>::zeroed(gpu, 0))?;
    let mut none = ok(gpu.alloc_zeroed::<f32>(0))?;
    ok(rows::softmax(gpu, &empty, 0, &mut none))?;
    ok(rows::layer_norm(
        gpu,
        &empty,
        7,
        Norm::new(1e-5),
        &mut none,
        None,
        None,
    ))
}

/// 2^31 + 1024 bf16 elements: rows of 1024 constant values, whose softmax is exactly 1/1024,
/// LayerNorm exactly 0, RMSNorm 1 in bf16 (0 for rows of 0), log-softmax -ln(1024), softmax
/// backward at dy = 1 exactly 0, and cross-entropy (summed, with its gradient) ln(1024) a row.
fn past_2_pow_31(gpu: &Gpu) -> Result<(), Failed> {
    let cols = 1024usize;
    let rows = (1usize << 31) / cols + 1;
    let n = rows * cols;
    let x: Vec<bf16> = (0..rows)
        .flat_map(|r| std::iter::repeat_n(bf16::from_f32((r % 7) as f32), cols))
        .collect();
    let d_x = ok(DeviceVec::from_slice(gpu, &x))?;
    drop(x);
    let mut d_y = ok(DeviceVec::<bf16>::zeroed(gpu, n))?;
    ok(rows::softmax(gpu, &d_x, cols, &mut d_y))?;
    let expected = bf16::from_f32(1.0 / cols as f32).to_bits();
    let y = ok(d_y.to_vec(gpu))?;
    check_eq(
        "softmax past 2^31: first wrong",
        y.iter().position(|&v| v != expected),
        None,
    )?;
    ok(rows::layer_norm(
        gpu,
        &d_x,
        cols,
        Norm::new(1e-5),
        &mut d_y,
        None,
        None,
    ))?;
    let y = ok(d_y.to_vec(gpu))?;
    check_eq(
        "layer_norm past 2^31: first wrong",
        y.iter().position(|&v| v != 0),
        None,
    )?;
    // RMSNorm of a row of c: c / sqrt(c^2 + eps), 1 in bf16 but for the rows of 0.
    ok(rows::rms_norm(gpu, &d_x, cols, Norm::new(1e-5), &mut d_y, None))?;
    let y = ok(d_y.to_vec(gpu))?;
    let one = bf16::ONE.to_bits();
    check_eq(
        "rms_norm past 2^31: first wrong",
        (0..n).find(|&i| y[i] != if (i / cols).is_multiple_of(7) { 0 } else { one }),
        None,
    )?;
    ok(rows::log_softmax(gpu, &d_x, cols, &mut d_y))?;
    let expected = bf16::from_f32(-(cols as f32).ln()).to_bits();
    let y = ok(d_y.to_vec(gpu))?;
    check_eq(
        "log_softmax past 2^31: first wrong",
        y.iter().position(|&v| v != expected),
        None,
    )?;
    drop(y);

    // The softmax's backward at y = 1 / cols, dy = 1: dx = y (dy - sum(dy y)) = 0.
    ok(rows::softmax(gpu, &d_x, cols, &mut d_y))?;
    let d_dy = ok(DeviceVec::from_slice(gpu, &vec![bf16::ONE; n]))?;
    let mut d_dx = ok(DeviceVec::<bf16>::zeroed(gpu, n))?;
    ok(rows::softmax_backward(gpu, &d_y, &d_dy, cols, &mut d_dx))?;
    let dx = ok(d_dx.to_vec(gpu))?;
    check_eq(
        "softmax_backward past 2^31: first not 0",
        dx.iter().position(|&v| v & 0x7fff != 0),
        None,
    )?;
    drop((dx, d_dy, d_y));

    // Cross-entropy of equal logits, summed: ln(cols) a row; its gradient 1 / cols but at the
    // target, 1 / cols - 1.
    let targets: Vec<i64> = (0..rows).map(|r| (r * 31 % cols) as i64).collect();
    let d_targets = ok(DeviceVec::from_slice(gpu, &targets))?;
    let mut d_loss = ok(DeviceVec::<f32>::zeroed(gpu, 1))?;
    let options = CrossEntropy {
        reduction: Reduction::Sum,
        ignore_index: -100,
        label_smoothing: 0.0,
    };
    let workspace = &mut DeviceWorkspace::new();
    ok(rows::cross_entropy(
        gpu,
        &d_x,
        cols,
        &d_targets,
        options,
        &mut d_loss,
        Some(d_dx.view_mut()),
        workspace,
    ))?;
    let loss = ok(d_loss.to_vec(gpu))?[0] as f64;
    let expected = rows as f64 * (cols as f64).ln();
    if (loss - expected).abs() > 1e-4 * expected {
        return Err(format!("cross_entropy past 2^31: loss {loss}, expected {expected}").into());
    }
    let grad = ok(d_dx.to_vec(gpu))?;
    let (rest, target) = (
        bf16::from_f32(1.0 / cols as f32).to_bits(),
        bf16::from_f32(1.0 / cols as f32 - 1.0).to_bits(),
    );
    check_eq(
        "cross_entropy past 2^31: first wrong gradient",
        (0..n).find(|&i| {
            grad[i]
                != if (i % cols) as i64 == targets[i / cols] {
                    target
                } else {
                    rest
                }
        }),
        None,
    )
}
