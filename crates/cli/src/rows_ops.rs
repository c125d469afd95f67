//! The CLI's `rows` command on 2-D `.npy` files: softmax, log-softmax, LayerNorm or RMSNorm of
//! every row on the GPU (`gpu_primitives::rows`), optionally written out as a matrix of the same
//! shape and type, and (`--check`) compared with the `f64` reference within the bound the GPU
//! tests use (`reference::rows::f32_bound`, plus an f16 output's rounding).

use crate::cli_ops::CliError;
use crate::npy;
use gpu_primitives::device::DeviceVec;
use gpu_primitives::reference::rows::{self as reference, Forward, centring, f32_bound};
use gpu_primitives::rows::{self, Norm, RowElement};
use gpu_primitives::{Error, Gpu};
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
}

impl RowOpArg {
    fn forward(self) -> Forward {
        match self {
            Self::Softmax => Forward::Softmax,
            Self::LogSoftmax => Forward::LogSoftmax,
            Self::LayerNorm => Forward::LayerNorm,
            Self::RmsNorm => Forward::RmsNorm,
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
    /// Where to write the result (same shape and type).
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// A row type the command reads and writes, with its output rounding (for `--check`).
trait CliRow: RowElement + npyz::Deserialize + npyz::Serialize + npyz::AutoSerialize + Default {
    /// Relative error of rounding to the type, and its absolute error near 0.
    const ROUNDING: (f64, f64);
    fn wide(self) -> f64;
}
impl CliRow for f32 {
    const ROUNDING: (f64, f64) = (0.0, 0.0);
    fn wide(self) -> f64 {
        self as f64
    }
}
impl CliRow for half::f16 {
    const ROUNDING: (f64, f64) = (1.0 / 2048.0, 3.0e-8);
    fn wide(self) -> f64 {
        self.to_f64()
    }
}

fn run_typed<T: CliRow>(
    gpu: &Gpu,
    host: &[T],
    rows: usize,
    cols: usize,
    job: &RowsJob,
) -> Result<bool, CliError> {
    let x = DeviceVec::from_slice(gpu, host)?;
    let mut y = DeviceVec::<T>::zeroed(gpu, host.len())?;
    let norm = Norm::new(job.eps);
    let ((), elapsed) = gpu.time(|| match job.op {
        RowOpArg::Softmax => rows::softmax(gpu, &x, cols, &mut y),
        RowOpArg::LogSoftmax => rows::log_softmax(gpu, &x, cols, &mut y),
        RowOpArg::LayerNorm => rows::layer_norm(gpu, &x, cols, norm, &mut y, None, None),
        RowOpArg::RmsNorm => rows::rms_norm(gpu, &x, cols, norm, &mut y, None),
    })?;
    println!(
        "{:?} of {rows} x {cols} {} on {}: {:.1} µs (one launch)",
        job.op,
        T::NAME,
        gpu.info().name,
        elapsed.as_secs_f64() * 1e6
    );
    let found: Vec<T> = T::from_raw(&y.to_vec(gpu)?).to_vec();
    if let Some(path) = &job.output {
        npy::write_matrix(path, rows, cols, &found)?;
        println!("wrote {} ({rows} x {cols} {})", path.display(), T::NAME);
    }
    if !job.check {
        return Ok(true);
    }
    let wide: Vec<f64> = host.iter().map(|v| v.wide()).collect();
    let (expected, centrings) = match job.op {
        RowOpArg::Softmax => (reference::softmax(&wide, cols), vec![0.0; rows]),
        RowOpArg::LogSoftmax => (reference::log_softmax(&wide, cols), vec![0.0; rows]),
        RowOpArg::LayerNorm => {
            let n = reference::layer_norm(&wide, cols, None, None, job.eps as f64);
            let c = n
                .mean
                .iter()
                .zip(&n.rstd)
                .map(|(&m, &r)| centring(m, r, cols))
                .collect();
            (n.y, c)
        }
        RowOpArg::RmsNorm => (
            reference::rms_norm(&wide, cols, None, job.eps as f64).y,
            vec![0.0; rows],
        ),
    };
    let (relative, tiny) = T::ROUNDING;
    let mut worst = (0.0f64, 0usize);
    let mut outside = 0usize;
    for (i, (f, &e)) in found.iter().zip(&expected).enumerate() {
        let f = f.wide();
        let bad = if e.is_nan() {
            !f.is_nan()
        } else if e.is_infinite() {
            f != e
        } else {
            let error = (f - e).abs();
            let bound = f32_bound(job.op.forward(), e, 0.0, centrings[i / cols]) + relative * e.abs() + tiny;
            if error / bound > worst.0 {
                worst = (error / bound, i);
            }
            error > bound
        };
        outside += bad as usize;
    }
    println!(
        "CPU reference (f64): largest error {:.3} of its bound (element {}); {outside} of {} outside",
        worst.0,
        worst.1,
        found.len()
    );
    Ok(outside == 0)
}

/// Run `rows` on the file of `job` (read before the GPU is opened). Returns whether `--check`
/// found every element within its bound (true without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: a file that is not a 2-D f32 or f16 matrix, GPU errors.
pub fn run(job: &RowsJob) -> Result<bool, CliError> {
    let input = npy::open_matrix(&job.input)?;
    let (rows, cols) = (input.shape[0], input.shape[1]);
    let bar = indicatif::ProgressBar::hidden();
    match input.dtype {
        npy::NpyDtype::F32 => {
            let host = input.read::<f32>(&bar)?;
            let gpu = gpu_primitives::open_gpu(job.device)?;
            run_typed(&gpu, &host, rows, cols, job)
        }
        npy::NpyDtype::F16 => {
            let host = input.read::<half::f16>(&bar)?;
            let gpu = gpu_primitives::open_gpu(job.device)?;
            run_typed(&gpu, &host, rows, cols, job)
        }
        other => Err(Error::InvalidLaunch(format!(
            "{}: rows reads f32 or f16 matrices, not {other:?}",
            job.input.display()
        ))
        .into()),
    }
}
