//! The row operations' benchmark: softmax, log-softmax, LayerNorm (with weight and bias) and
//! RMSNorm (with weight), and their backward (the norms' with the weight's and bias's
//! gradients), over the matrices of [`ROW_SHAPES`] (2^28 elements each), beside a
//! device-to-device copy of the same matrix in the same run. The forward moves the matrix in and
//! out (`2 n` elements); the backward reads `y` (or `x`) and `dy` and writes `dx` (`3 n`), so its
//! time over the copy's is at best 1.5. Cross-entropy (the mean) reads the logits (`n`), and with
//! its fused gradient writes it too (`2 n`).
//! `scripts/torch-rows.py` times PyTorch on the same shapes.

use super::row::{BenchRow, hash};
use super::timer::median_micros;
use gpu_primitives::device::{DeviceVec, DeviceWorkspace};
use gpu_primitives::rows::{self, CrossEntropy, Norm, NormGrads, RowElement};
use gpu_primitives::{Gpu, Result};

/// (rows, cols) of the row benchmark: a model's tokens x hidden size, to one very long row per
/// block.
pub const ROW_SHAPES: [(usize, usize); 5] = [
    (262_144, 1024),
    (65_536, 4096),
    (16_384, 16_384),
    (4096, 65_536),
    (1024, 262_144),
];

/// The row types the benchmark knows (the library's row table).
pub const ROW_TYPES: &[&str] = &["f32", "f16", "bf16"];

/// A value in [-8, 8) from the benchmark's hash of `i`.
fn value(i: usize) -> f32 {
    (hash(i) >> 8) as f32 / (1 << 24) as f32 * 16.0 - 8.0
}

/// Measure every row operation over every shape for `T`.
fn run<T: RowElement>(gpu: &Gpu, runs: usize, from_f32: fn(f32) -> T) -> Result<Vec<BenchRow>> {
    let n = ROW_SHAPES[0].0 * ROW_SHAPES[0].1;
    let x: Vec<T> = (0..n).map(|i| from_f32(value(i))).collect();
    let d_x = DeviceVec::from_slice(gpu, &x)?;
    let dy: Vec<T> = (0..n).map(|i| from_f32(value(i + n) / 8.0)).collect();
    let d_dy = DeviceVec::from_slice(gpu, &dy)?;
    drop((x, dy));
    let mut d_out = DeviceVec::<T>::zeroed(gpu, n)?;
    let mut d_y = DeviceVec::<T>::zeroed(gpu, n)?;
    let mut copy_target = gpu.alloc_zeroed::<T::Raw>(n)?;
    let size = size_of::<T>();
    let mut out = Vec::new();
    for (rows, cols) in ROW_SHAPES {
        assert_eq!(rows * cols, n, "every shape holds the same elements");
        let weight: Vec<T> = (0..cols).map(|i| from_f32(1.0 + value(i) / 16.0)).collect();
        let bias: Vec<T> = (0..cols).map(|i| from_f32(value(i + 7) / 16.0)).collect();
        let (d_weight, d_bias) = (
            DeviceVec::from_slice(gpu, &weight)?,
            DeviceVec::from_slice(gpu, &bias)?,
        );
        let copy = median_micros(gpu, runs, || {
            gpu.copy_device_to_device(d_x.raw(), &mut copy_target, n)
        })?;
        let mut row = |name: &str, time: f64, moved: usize| {
            let algorithm = format!("{name} {rows}x{cols}");
            out.push(BenchRow::new(
                gpu,
                T::NAME,
                size,
                algorithm,
                n,
                time,
                (moved * size) as f64,
                copy,
            ));
        };
        let t = median_micros(gpu, runs, || rows::softmax(gpu, &d_x, cols, &mut d_out))?;
        row("softmax", t, 2 * n);
        let t = median_micros(gpu, runs, || rows::log_softmax(gpu, &d_x, cols, &mut d_out))?;
        row("log_softmax", t, 2 * n);
        let norm = Norm::new(1e-5).weight(&d_weight).bias(&d_bias);
        let t = median_micros(gpu, runs, || {
            rows::layer_norm(gpu, &d_x, cols, norm, &mut d_out, None, None)
        })?;
        row("layer_norm", t, 2 * n);
        let norm = Norm::new(1e-5).weight(&d_weight);
        let t = median_micros(gpu, runs, || {
            rows::rms_norm(gpu, &d_x, cols, norm, &mut d_out, None)
        })?;
        row("rms_norm", t, 2 * n);
        rows::softmax(gpu, &d_x, cols, &mut d_y)?;
        let t = median_micros(gpu, runs, || {
            rows::softmax_backward(gpu, &d_y, &d_dy, cols, &mut d_out)
        })?;
        row("softmax_backward", t, 3 * n);
        rows::log_softmax(gpu, &d_x, cols, &mut d_y)?;
        let t = median_micros(gpu, runs, || {
            rows::log_softmax_backward(gpu, &d_y, &d_dy, cols, &mut d_out)
        })?;
        row("log_softmax_backward", t, 3 * n);
        let mut mean = DeviceVec::<f32>::zeroed(gpu, rows)?;
        let mut rstd = DeviceVec::<f32>::zeroed(gpu, rows)?;
        let mut dweight = DeviceVec::<T>::zeroed(gpu, cols)?;
        let mut dbias = DeviceVec::<T>::zeroed(gpu, cols)?;
        let workspace = &mut DeviceWorkspace::new();
        let norm = Norm::new(1e-5).weight(&d_weight).bias(&d_bias);
        let saved = (Some(mean.view_mut()), Some(rstd.view_mut()));
        rows::layer_norm(gpu, &d_x, cols, norm, &mut d_y, saved.0, saved.1)?;
        let t = median_micros(gpu, runs, || {
            let grads = NormGrads::new(&mut d_out).dweight(&mut dweight).dbias(&mut dbias);
            let weight = Some(d_weight.view());
            rows::layer_norm_backward(gpu, &d_x, &d_dy, cols, weight, &mean, &rstd, grads, workspace)
        })?;
        row("layer_norm_backward", t, 3 * n);
        let norm = Norm::new(1e-5).weight(&d_weight);
        rows::rms_norm(gpu, &d_x, cols, norm, &mut d_y, Some(rstd.view_mut()))?;
        let t = median_micros(gpu, runs, || {
            let grads = NormGrads::new(&mut d_out).dweight(&mut dweight);
            rows::rms_norm_backward(
                gpu,
                &d_x,
                &d_dy,
                cols,
                Some(d_weight.view()),
                &rstd,
                grads,
                workspace,
            )
        })?;
        row("rms_norm_backward", t, 3 * n);
        let targets: Vec<i64> = (0..rows).map(|r| (hash(r) % cols as u32) as i64).collect();
        let targets = DeviceVec::from_slice(gpu, &targets)?;
        let mut loss = DeviceVec::<f32>::zeroed(gpu, 1)?;
        let options = CrossEntropy::default();
        let t = median_micros(gpu, runs, || {
            rows::cross_entropy(gpu, &d_x, cols, &targets, options, &mut loss, None, workspace)
        })?;
        row("cross_entropy", t, n);
        let t = median_micros(gpu, runs, || {
            let grad = Some(d_out.view_mut());
            rows::cross_entropy(gpu, &d_x, cols, &targets, options, &mut loss, grad, workspace)
        })?;
        row("cross_entropy_with_grad", t, 2 * n);
    }
    Ok(out)
}

/// Every row operation over every shape of [`ROW_SHAPES`] for the row type named `name` (one of
/// [`ROW_TYPES`]).
///
/// # Errors
/// An unknown name; device errors (out of memory: the benchmark holds five 2^28-element
/// matrices).
pub fn run_named(gpu: &Gpu, name: &str, runs: usize) -> Result<Vec<BenchRow>> {
    match name {
        "f32" => run::<f32>(gpu, runs, |v| v),
        "f16" => run::<half::f16>(gpu, runs, half::f16::from_f32),
        "bf16" => run::<half::bf16>(gpu, runs, half::bf16::from_f32),
        other => Err(gpu_primitives::Error::InvalidArgument(format!(
            "bench: unknown row type {other}"
        ))),
    }
}
