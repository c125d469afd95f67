//! The CLI's `rows` command on 2-D `.npy` files: softmax, log-softmax, LayerNorm or RMSNorm of
//! every row on the GPU (`gpu_primitives::rows`), optionally written out as a matrix of the same
//! shape and type, and (`--check`) compared with the `f64` reference within the bound the GPU
//! tests use (`reference::rows::f32_bound`, plus an f16 output's rounding); or cross-entropy of
//! each row as logits with a target class from a 1-D `i64` file, one `f32` loss per row
//! (`reference::rows::cross_entropy_bound`).

use crate::cli_ops::{CliError, time_warm};
use crate::npy::{self, NpyStored};
use gpu_primitives::Gpu;
use gpu_primitives::device::{DeviceVec, DeviceWorkspace};
use gpu_primitives::reference::rows::{self as reference, Forward, centring, f32_bound, shift};
use gpu_primitives::rows::{self, Norm, NormGrads, RowElement};
use std::path::PathBuf;

/// A row operation named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RowOpArg {
    /// `exp(x - max) / sum(exp(x - max))` per row.
    Softmax,
    /// `x - max - ln(sum(exp(x - max)))` per row.
    LogSoftmax,
    /// `(x - mean) / sqrt(var + eps)` per row (no weight or bias).
    LayerNorm,
    /// `x / sqrt(mean(x^2) + eps)` per row (no weight).
    RmsNorm,
    /// `ln(sum(exp(x))) - (1 - s) x[target] - s mean(x)` per row (`--targets`, `--label-smoothing`
    /// s), one `f32` per row (written as a `rows x 1` matrix).
    CrossEntropy,
}

impl RowOpArg {
    /// The forward operation of the matrix-shaped outputs (`None`: cross-entropy).
    fn forward(self) -> Option<Forward> {
        match self {
            Self::Softmax => Some(Forward::Softmax),
            Self::LogSoftmax => Some(Forward::LogSoftmax),
            Self::LayerNorm => Some(Forward::LayerNorm),
            Self::RmsNorm => Some(Forward::RmsNorm),
            Self::CrossEntropy => None,
        }
    }
}

/// What `rows` should do.
#[derive(Clone, Debug)]
pub struct RowsJob {
    /// The input `.npy` (2-D, f32 or f16).
    pub input: PathBuf,
    /// The operation.
    pub op: RowOpArg,
    /// The norms' epsilon.
    pub eps: f32,
    /// Cross-entropy: the target class of each row (a 1-D `i64` `.npy`).
    pub targets: Option<PathBuf>,
    /// Cross-entropy's label smoothing.
    pub label_smoothing: f32,
    /// The backward instead of the forward: `dy`, a matrix of the input's shape and type; the
    /// result is `dx` (softmaxes: from the GPU's own `y`; norms: from their saved statistics,
    /// without weight).
    pub grad: Option<PathBuf>,
    /// Cross-entropy: where to write the gradient of the summed losses with respect to the
    /// logits (a matrix of the input's shape and type), computed in the same launch.
    pub logits_grad: Option<PathBuf>,
    /// The input (and dy) hold bf16 values as their bits in a `u16` matrix (NumPy has no bf16
    /// type); the output is written the same way.
    pub bf16_bits: bool,
    /// Where to write the result (same shape and type).
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// A row type the command reads and writes (as a file stores it: [`NpyStored`]), with its
/// output rounding (for `--check`).
trait CliRow: RowElement + NpyStored + Default {
    /// Relative error of rounding to the type, and its absolute error near 0.
    const ROUNDING: (f64, f64);
    fn wide(self) -> f64;
}
macro_rules! cli_row {
    ($($t:ty => $rounding:expr, $wide:expr);* $(;)?) => {$(
        impl CliRow for $t {
            const ROUNDING: (f64, f64) = $rounding;
            fn wide(self) -> f64 {
                $wide(self)
            }
        }
    )*};
}
cli_row!(
    f32 => (0.0, 0.0), f64::from;
    half::f16 => (1.0 / 2048.0, 3.0e-8), half::f16::to_f64;
    half::bf16 => (1.0 / 256.0, 1e-40), half::bf16::to_f64;
);

fn run_typed<T: CliRow>(
    gpu: &Gpu,
    host: &[T],
    dy: Option<&[T]>,
    (rows, cols): (usize, usize),
    targets: &[i64],
    job: &RowsJob,
) -> Result<bool, CliError> {
    let Some(forward) = job.op.forward() else {
        return run_cross_entropy(gpu, host, (rows, cols), targets, job);
    };
    if let Some(dy) = dy {
        return run_backward(gpu, host, dy, (rows, cols), forward, job);
    }
    let x = DeviceVec::from_slice(gpu, host)?;
    let mut y = DeviceVec::<T>::zeroed(gpu, host.len())?;
    let norm = Norm::new(job.eps);
    let ((), elapsed) = time_warm(gpu, || match forward {
        Forward::Softmax => rows::softmax(gpu, &x, cols, &mut y),
        Forward::LogSoftmax => rows::log_softmax(gpu, &x, cols, &mut y),
        Forward::LayerNorm => rows::layer_norm(gpu, &x, cols, norm, &mut y, None, None),
        Forward::RmsNorm => rows::rms_norm(gpu, &x, cols, norm, &mut y, None),
    })?;
    let found = report_and_write(gpu, job, ("", "one launch"), (rows, cols), elapsed, &y)?;
    if !job.check {
        return Ok(true);
    }
    let wide: Vec<f64> = host.iter().map(|v| v.wide()).collect();
    let shifts = || wide.chunks(cols.max(1)).map(shift).collect();
    let (expected, row_terms) = match forward {
        Forward::Softmax => (reference::softmax(&wide, cols), shifts()),
        Forward::LogSoftmax => (reference::log_softmax(&wide, cols), shifts()),
        Forward::LayerNorm => {
            let n = reference::layer_norm(&wide, cols, None, None, job.eps as f64);
            let c = n
                .mean
                .iter()
                .zip(&n.rstd)
                .map(|(&m, &r)| centring(m, r, cols))
                .collect();
            (n.y, c)
        }
        Forward::RmsNorm => (
            reference::rms_norm(&wide, cols, None, job.eps as f64).y,
            vec![0.0; rows],
        ),
    };
    let bound = |i: usize| f32_bound(forward, expected[i], 0.0, row_terms[i / cols]);
    report(compare(&found, &expected, bound), found.len())
}

/// Print the timed call (`what`: the op's name's suffix, `note`: what the time covers), copy
/// `out` back and write it where `--output` asks: the result, for `--check`.
fn report_and_write<T: CliRow>(
    gpu: &Gpu,
    job: &RowsJob,
    (what, note): (&str, &str),
    (rows, cols): (usize, usize),
    elapsed: std::time::Duration,
    out: &DeviceVec<T>,
) -> Result<Vec<T>, CliError> {
    println!(
        "{:?}{what} of {rows} x {cols} {} on {}: {:.1} µs ({note})",
        job.op,
        T::NAME,
        gpu.info().name,
        elapsed.as_secs_f64() * 1e6
    );
    let found: Vec<T> = T::from_raw(&out.to_vec(gpu)?).to_vec();
    if let Some(path) = &job.output {
        npy::write_matrix(path, rows, cols, T::to_stored(&found))?;
        println!("wrote {} ({rows} x {cols} {}{what})", path.display(), T::NAME);
    }
    Ok(found)
}

/// The largest error of `found` over its bound (with the output type's rounding) and where, and
/// how many elements are outside it; a NaN or infinity expected must be found exactly.
fn compare<T: CliRow>(found: &[T], expected: &[f64], bound: impl Fn(usize) -> f64) -> ((f64, usize), usize) {
    let (relative, tiny) = T::ROUNDING;
    let mut worst = (0.0f64, 0usize);
    let mut outside = 0usize;
    for (i, (f, &e)) in found.iter().zip(expected).enumerate() {
        let f = f.wide();
        let bad = if e.is_nan() {
            !f.is_nan()
        } else if e.is_infinite() {
            f != e
        } else {
            let error = (f - e).abs();
            let bound = bound(i) + relative * e.abs() + tiny;
            if error / bound > worst.0 {
                worst = (error / bound, i);
            }
            error > bound
        };
        outside += bad as usize;
    }
    (worst, outside)
}

/// The backward of `forward` at `x` (`host`) and `dy`: `dx`, reported, written and checked as
/// the forward's output is.
fn run_backward<T: CliRow>(
    gpu: &Gpu,
    host: &[T],
    dy: &[T],
    (rows, cols): (usize, usize),
    forward: Forward,
    job: &RowsJob,
) -> Result<bool, CliError> {
    let (x, d_dy) = (DeviceVec::from_slice(gpu, host)?, DeviceVec::from_slice(gpu, dy)?);
    let mut y = DeviceVec::<T>::zeroed(gpu, host.len())?;
    let mut dx = DeviceVec::<T>::zeroed(gpu, host.len())?;
    let (mut mean, mut rstd) = (
        DeviceVec::<f32>::zeroed(gpu, rows)?,
        DeviceVec::<f32>::zeroed(gpu, rows)?,
    );
    let norm = Norm::new(job.eps);
    match forward {
        Forward::Softmax => rows::softmax(gpu, &x, cols, &mut y)?,
        Forward::LogSoftmax => rows::log_softmax(gpu, &x, cols, &mut y)?,
        Forward::LayerNorm => rows::layer_norm(
            gpu,
            &x,
            cols,
            norm,
            &mut y,
            Some((&mut mean).into()),
            Some((&mut rstd).into()),
        )?,
        Forward::RmsNorm => rows::rms_norm(gpu, &x, cols, norm, &mut y, Some((&mut rstd).into()))?,
    }
    let workspace = &mut DeviceWorkspace::new();
    let ((), elapsed) = time_warm(gpu, || match forward {
        Forward::Softmax => rows::softmax_backward(gpu, &y, &d_dy, cols, &mut dx),
        Forward::LogSoftmax => rows::log_softmax_backward(gpu, &y, &d_dy, cols, &mut dx),
        Forward::LayerNorm => rows::layer_norm_backward(
            gpu,
            &x,
            &d_dy,
            cols,
            None,
            &mean,
            &rstd,
            NormGrads::new(&mut dx),
            workspace,
        ),
        Forward::RmsNorm => rows::rms_norm_backward(
            gpu,
            &x,
            &d_dy,
            cols,
            None,
            &rstd,
            NormGrads::new(&mut dx),
            workspace,
        ),
    })?;
    let note = "dx; the forward before it not timed";
    let found = report_and_write(gpu, job, (" backward", note), (rows, cols), elapsed, &dx)?;
    if !job.check {
        return Ok(true);
    }
    let wide = |v: &[T]| -> Vec<f64> { v.iter().map(|v| v.wide()).collect() };
    let saved = |v: &DeviceVec<f32>| -> Result<Vec<f64>, CliError> {
        Ok(v.to_vec(gpu)?.into_iter().map(f64::from).collect())
    };
    let (wide_x, wide_dy) = (wide(host), wide(dy));
    // Against the reference from the GPU's own y or saved statistics: the backward's error alone.
    let (expected, bounds) = match forward {
        Forward::Softmax | Forward::LogSoftmax => {
            let wide_y = wide(T::from_raw(&y.to_vec(gpu)?));
            if forward == Forward::Softmax {
                let bounds = reference::softmax_backward_bounds(&wide_y, &wide_dy, cols);
                (reference::softmax_backward(&wide_y, &wide_dy, cols), bounds)
            } else {
                let bounds = reference::log_softmax_backward_bounds(&wide_y, &wide_dy, cols);
                (reference::log_softmax_backward(&wide_y, &wide_dy, cols), bounds)
            }
        }
        Forward::LayerNorm => {
            let (mean, rstd) = (saved(&mean)?, saved(&rstd)?);
            let bounds =
                reference::norm_backward_dx_bounds(&wide_x, &wide_dy, cols, None, Some(&mean), &rstd);
            (
                reference::layer_norm_backward(&wide_x, &wide_dy, cols, None, &mean, &rstd).dx,
                bounds,
            )
        }
        Forward::RmsNorm => {
            let rstd = saved(&rstd)?;
            let bounds = reference::norm_backward_dx_bounds(&wide_x, &wide_dy, cols, None, None, &rstd);
            (
                reference::rms_norm_backward(&wide_x, &wide_dy, cols, None, &rstd).dx,
                bounds,
            )
        }
    };
    report(compare(&found, &expected, |i| bounds[i]), found.len())
}

/// Print `--check`'s summary; whether every element was within its bound.
fn report(((ratio, at), outside): ((f64, usize), usize), of: usize) -> Result<bool, CliError> {
    println!(
        "CPU reference (f64): largest error {ratio:.3} of its bound (element {at}); {outside} of {of} outside"
    );
    Ok(outside == 0)
}

/// Cross-entropy of each row of `host` with the targets of `job`, one loss per row.
fn run_cross_entropy<T: CliRow>(
    gpu: &Gpu,
    host: &[T],
    (rows, cols): (usize, usize),
    targets: &[i64],
    job: &RowsJob,
) -> Result<bool, CliError> {
    let x = DeviceVec::from_slice(gpu, host)?;
    let d_targets = DeviceVec::from_slice(gpu, targets)?;
    let mut loss = DeviceVec::<f32>::zeroed(gpu, rows)?;
    let mut d_grad = match job.logits_grad {
        Some(_) => Some(DeviceVec::<T>::zeroed(gpu, host.len())?),
        None => None,
    };
    let options = cross_entropy_options(job);
    let workspace = &mut DeviceWorkspace::new();
    let ((), elapsed) = time_warm(gpu, || {
        let grad = d_grad.as_mut().map(|g| g.view_mut());
        rows::cross_entropy(gpu, &x, cols, &d_targets, options, &mut loss, grad, workspace)
    })?;
    let found = loss.to_vec(gpu)?;
    let grad: Option<Vec<T>> = d_grad
        .map(|g| g.to_vec(gpu).map(|raw| T::from_raw(&raw).to_vec()))
        .transpose()?;
    let valid: Vec<f64> = found
        .iter()
        .zip(targets)
        .filter(|(_, t)| **t != options.ignore_index)
        .map(|(l, _)| *l as f64)
        .collect();
    println!(
        "CrossEntropy of {rows} x {cols} {} on {}: {:.1} µs (one launch{}); mean loss {:.6}",
        T::NAME,
        gpu.info().name,
        elapsed.as_secs_f64() * 1e6,
        if grad.is_some() {
            ", the gradient fused"
        } else {
            ""
        },
        valid.iter().sum::<f64>() / valid.len() as f64
    );
    if let Some(path) = &job.output {
        npy::write_matrix(path, rows, 1, &found)?;
        println!("wrote {} ({rows} x 1 f32: each row's loss)", path.display());
    }
    if let (Some(path), Some(grad)) = (&job.logits_grad, &grad) {
        npy::write_matrix(path, rows, cols, T::to_stored(grad))?;
        println!(
            "wrote {} ({rows} x {cols} {}: the logits' gradient)",
            path.display(),
            T::NAME
        );
    }
    if !job.check {
        return Ok(true);
    }
    let wide: Vec<f64> = host.iter().map(|v| v.wide()).collect();
    let expected = reference::cross_entropy(
        &wide,
        cols,
        targets,
        options.ignore_index,
        job.label_smoothing as f64,
    );
    let mut worst = (0.0f64, 0usize);
    let mut outside = 0usize;
    for (r, (&f, &e)) in found.iter().zip(&expected.loss).enumerate() {
        let (f, bound) = (
            f as f64,
            reference::cross_entropy_bound(&wide[r * cols..(r + 1) * cols]),
        );
        let bad = if e.is_nan() {
            !f.is_nan()
        } else {
            let ratio = (f - e).abs() / bound;
            if ratio > worst.0 {
                worst = (ratio, r);
            }
            ratio > 1.0
        };
        outside += bad as usize;
    }
    let losses = report((worst, outside), rows)?;
    let Some(grad) = grad else {
        return Ok(losses);
    };
    print!("gradient: ");
    let bounds =
        reference::cross_entropy_grad_bounds(&wide, cols, &expected, targets, options.ignore_index, 1.0);
    let grads = report(compare(&grad, &expected.grad, |i| bounds[i]), grad.len())?;
    Ok(losses && grads)
}

/// The options of `job`'s cross-entropy: a loss per row, its label smoothing, PyTorch's ignore
/// index (-100).
fn cross_entropy_options(job: &RowsJob) -> rows::CrossEntropy {
    rows::CrossEntropy {
        reduction: rows::Reduction::None,
        label_smoothing: job.label_smoothing,
        ..rows::CrossEntropy::default()
    }
}

impl RowsJob {
    /// Check the arguments that need no file: which options go with which operation, the label
    /// smoothing, epsilon, and that no output is one of the files read (or the other output).
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the option; [`npy::NpyError::OutputIsInput`].
    pub fn check_arguments(&self) -> Result<(), CliError> {
        let usage = |what: &str| Err(CliError::Usage(format!("rows {what}")));
        let cross_entropy = self.op == RowOpArg::CrossEntropy;
        if self.grad.is_some() && cross_entropy {
            return usage(
                "--grad: cross-entropy's gradient is not a backward of dy (it is fused into the forward: --logits-grad FILE writes it)",
            );
        }
        if self.logits_grad.is_some() && !cross_entropy {
            return usage(
                "--logits-grad is cross-entropy's gradient (--op cross-entropy); the others' backward takes --grad DY",
            );
        }
        if self.targets.is_some() && !cross_entropy {
            return usage("--targets are cross-entropy's (--op cross-entropy)");
        }
        if cross_entropy && self.targets.is_none() {
            return usage("--op cross-entropy needs --targets FILE.npy (1-D i64)");
        }
        if !(0.0..=1.0).contains(&self.label_smoothing) {
            return usage(&format!(
                "--label-smoothing {}: must be within [0, 1]",
                self.label_smoothing
            ));
        }
        if !(self.eps.is_finite() && self.eps >= 0.0) {
            return usage(&format!("--eps {}: must be finite and at least 0", self.eps));
        }
        let outputs: Vec<(&'static str, &std::path::Path)> =
            [("--output", &self.output), ("--logits-grad", &self.logits_grad)]
                .into_iter()
                .filter_map(|(option, path)| Some((option, path.as_deref()?)))
                .collect();
        let inputs: Vec<&std::path::Path> = std::iter::once(self.input.as_path())
            .chain(self.targets.as_deref())
            .chain(self.grad.as_deref())
            .collect();
        npy::check_outputs(&outputs, &inputs)?;
        Ok(())
    }
}

/// Check a matrix of `rows x cols` for the row operations: a row holds at least one element
/// (unless there are no rows), and at most 2^31 - 1.
///
/// # Errors
/// [`CliError::Usage`] naming the file and its shape.
fn check_shape(path: &std::path::Path, (rows, cols): (usize, usize)) -> Result<(), CliError> {
    if cols == 0 && rows > 0 {
        return Err(CliError::Usage(format!(
            "{}: a {rows} x 0 matrix: its rows have no element to operate on",
            path.display()
        )));
    }
    if cols > i32::MAX as usize {
        return Err(CliError::Usage(format!(
            "{}: rows of {cols} elements; at most 2^31 - 1",
            path.display()
        )));
    }
    Ok(())
}

/// Check cross-entropy's targets (from `path`) against `rows` rows of `classes` logits: one a
/// row, each a class in `0..classes` or the ignore index (PyTorch refuses any other; the GPU
/// would give that row a NaN loss).
///
/// # Errors
/// [`CliError::Usage`] naming the file and the first bad row and its value.
pub fn check_targets(
    path: &std::path::Path,
    targets: &[i64],
    (rows, classes): (usize, usize),
    ignore_index: i64,
) -> Result<(), CliError> {
    if targets.len() != rows {
        return Err(CliError::Usage(format!(
            "{}: {} targets for {rows} rows (one a row)",
            path.display(),
            targets.len()
        )));
    }
    let valid = |t: i64| t == ignore_index || usize::try_from(t).is_ok_and(|t| t < classes);
    match targets.iter().position(|&t| !valid(t)) {
        None => Ok(()),
        Some(row) => Err(CliError::Usage(format!(
            "{}: row {row}'s target {} is not a class of 0..{classes} (nor the ignore index {ignore_index})",
            path.display(),
            targets[row]
        ))),
    }
}

/// Run `rows` on the file of `job` (the arguments checked, and the files read and checked,
/// before the GPU is opened). Returns whether `--check` found every element within its bound
/// (true without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: a bad argument ([`RowsJob::check_arguments`]), a file
/// that is not a 2-D f32 or f16 matrix, a matrix of empty rows, targets that are not one class
/// a row, GPU errors.
pub fn run(job: &RowsJob) -> Result<bool, CliError> {
    job.check_arguments()?;
    let input = npy::open_matrix(&job.input)?;
    let shape = (input.shape[0], input.shape[1]);
    check_shape(&job.input, shape)?;
    let bar = indicatif::ProgressBar::hidden();
    let targets = match (&job.targets, job.op) {
        (Some(path), RowOpArg::CrossEntropy) => {
            let targets = read_targets(path)?;
            check_targets(path, &targets, shape, cross_entropy_options(job).ignore_index)?;
            targets
        }
        _ => vec![],
    };
    let grad = job.grad.as_deref().map(npy::open_matrix).transpose()?;
    if let Some(grad) = &grad
        && (grad.shape != input.shape || grad.dtype != input.dtype)
    {
        return Err(CliError::Usage(format!(
            "{}: dy is a {:?} {} matrix; the input is {:?} {}",
            grad.path().display(),
            grad.shape,
            grad.dtype.name(),
            input.shape,
            input.dtype.name()
        )));
    }
    macro_rules! read_and_run {
        ($t:ty) => {{
            let host = <$t>::from_stored(input.read(&bar)?);
            let dy = grad.map(|g| g.read(&bar).map(<$t>::from_stored)).transpose()?;
            let gpu = gpu_primitives::open_gpu(job.device)?;
            run_typed::<$t>(&gpu, &host, dy.as_deref(), shape, &targets, job)
        }};
    }
    if job.bf16_bits {
        crate::with_npy_type!(input, "rows --bf16-bits", [u16], _T => read_and_run!(half::bf16))
    } else {
        crate::with_npy_type!(input, "rows", [f32, f16], T => read_and_run!(T))
    }
}

/// Cross-entropy's targets: a 1-D `i64` `.npy` (checked against the logits by
/// [`check_targets`]).
fn read_targets(path: &std::path::Path) -> Result<Vec<i64>, CliError> {
    let file = npy::open(path)?;
    if file.dtype != npy::NpyDtype::I64 {
        let what = format!("{}: targets are i64, not {:?}", path.display(), file.dtype);
        return Err(CliError::Usage(what));
    }
    Ok(file.read(&indicatif::ProgressBar::hidden())?)
}
