//! The CLI's `reduce` and `scan` commands on `.npy` files: read, run on the GPU, report, and
//! (`--check`) compare with a CPU reference.

use crate::npy::{self, NpyError, NpyInput};
use gpu_primitives::Gpu;
use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Element, Max, Min, ScanKind, Sum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

/// `work` once untimed, then again timed with CUDA events on the GPU's stream
/// ([`Gpu::time`]): the first call compiles the kernels it launches (each on its first use) and
/// sizes the workspace, so that the time the commands print is the call's alone.
///
/// # Errors
/// The calls' errors.
pub fn time_warm<R>(
    gpu: &Gpu,
    mut work: impl FnMut() -> gpu_primitives::Result<R>,
) -> gpu_primitives::Result<(R, std::time::Duration)> {
    work()?;
    gpu.time(work)
}

/// An operator named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OpArg {
    /// Sum (wrapping for integers).
    Sum,
    /// Minimum (NaN-propagating).
    Min,
    /// Maximum (NaN-propagating).
    Max,
}

/// Errors of the `reduce` and `scan` commands.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file problem.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// A GPU problem.
    #[error(transparent)]
    Gpu(#[from] gpu_primitives::Error),
}

/// What `reduce` / `scan` should do.
#[derive(Clone, Debug)]
pub struct Job {
    /// The input `.npy`.
    pub input: PathBuf,
    /// The operator.
    pub op: OpArg,
    /// Exclusive scan (scan only).
    pub exclusive: bool,
    /// Where to write the scan (scan only).
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// An element type the CLI reads, with its CPU reference.
trait CliElement: Element + npyz::Deserialize
where
    Self::Acc: npyz::AutoSerialize,
{
    /// The CPU value of `op` folded over `values` up to each index (inclusive), as f64:
    /// integers combine exactly in their own type (wrapping), floats in f64.
    fn reference_scan(values: &[Self], op: OpArg) -> Vec<f64>;
    /// A GPU result as f64.
    fn acc_f64(a: Self::Acc) -> f64;
}

macro_rules! cli_int {
    ($($t:ty),*) => {$(
        impl CliElement for $t {
            fn reference_scan(values: &[Self], op: OpArg) -> Vec<f64> {
                let mut acc = match op { OpArg::Sum => 0, OpArg::Min => <$t>::MAX, OpArg::Max => <$t>::MIN };
                values.iter().map(|&v| {
                    acc = match op { OpArg::Sum => acc.wrapping_add(v), OpArg::Min => acc.min(v), OpArg::Max => acc.max(v) };
                    acc as f64
                }).collect()
            }
            fn acc_f64(a: Self) -> f64 { a as f64 }
        }
    )*};
}
cli_int!(i32, u32, i64, u64);

macro_rules! cli_float {
    ($($t:ty),*) => {$(
        impl CliElement for $t {
            fn reference_scan(values: &[Self], op: OpArg) -> Vec<f64> {
                let mut acc = match op { OpArg::Sum => 0.0, OpArg::Min => f64::INFINITY, OpArg::Max => f64::NEG_INFINITY };
                values.iter().map(|&v| {
                    let v = f64::from(v);
                    acc = if v.is_nan() || acc.is_nan() { f64::NAN } else {
                        match op { OpArg::Sum => acc + v, OpArg::Min => acc.min(v), OpArg::Max => acc.max(v) }
                    };
                    acc
                }).collect()
            }
            fn acc_f64(a: Self::Acc) -> f64 { f64::from(a) }
        }
    )*};
}
cli_float!(f32, f64, half::f16);

fn progress_bar(len: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} elements")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(what.to_owned());
    bar
}

/// Largest |found - expected| and the largest relative error |found - expected| / |expected|
/// (NaN matching NaN counts as no error).
fn largest_errors(found: impl Iterator<Item = f64>, expected: &[f64]) -> (f64, f64) {
    found.zip(expected).fold((0.0f64, 0.0f64), |(abs, rel), (f, &e)| {
        if f.is_nan() && e.is_nan() || f == e {
            return (abs, rel);
        }
        let d = (f - e).abs();
        (abs.max(d), rel.max(if e != 0.0 { d / e.abs() } else { d }))
    })
}

fn read<T: CliElement>(input: NpyInput) -> Result<Vec<T>, NpyError>
where
    T::Acc: npyz::AutoSerialize,
{
    let bar = progress_bar(input.len, "reading");
    input.read::<T>(&bar)
}

fn run_reduce<T: CliElement>(gpu: &Gpu, host: &[T], job: &Job) -> Result<(), CliError>
where
    T::Acc: npyz::AutoSerialize,
{
    let d_in = DeviceVec::from_slice(gpu, host)?;
    let ws = &mut DeviceWorkspace::new();
    let (found, elapsed) = time_warm(gpu, || match job.op {
        OpArg::Sum => device::reduce::<T, Sum>(gpu, &d_in, ws),
        OpArg::Min => device::reduce::<T, Min>(gpu, &d_in, ws),
        OpArg::Max => device::reduce::<T, Max>(gpu, &d_in, ws),
    })?;
    println!(
        "{:?} of {} {} elements on {}: {:?} ({:.1} µs, the result copied back included)",
        job.op,
        host.len(),
        T::NAME,
        gpu.info().name,
        found,
        elapsed.as_secs_f64() * 1e6
    );
    if job.check {
        let expected = T::reference_scan(host, job.op)
            .last()
            .copied()
            .unwrap_or(match job.op {
                OpArg::Sum => 0.0,
                OpArg::Min => f64::INFINITY,
                OpArg::Max => f64::NEG_INFINITY,
            });
        let (abs, rel) = largest_errors(std::iter::once(T::acc_f64(found)), &[expected]);
        println!("CPU reference: {expected}; error {abs:e} (relative {rel:e})");
    }
    Ok(())
}

fn run_scan<T: CliElement>(gpu: &Gpu, host: &[T], job: &Job) -> Result<(), CliError>
where
    T::Acc: npyz::AutoSerialize,
{
    let kind = if job.exclusive {
        ScanKind::Exclusive
    } else {
        ScanKind::Inclusive
    };
    let d_in = DeviceVec::from_slice(gpu, host)?;
    let mut d_out = gpu.alloc_zeroed::<T::Acc>(host.len())?;
    let ws = &mut DeviceWorkspace::new();
    let ((), elapsed) = time_warm(gpu, || match (job.op, kind) {
        (OpArg::Sum, ScanKind::Inclusive) => device::inclusive_scan::<T, Sum>(gpu, &d_in, &mut d_out, ws),
        (OpArg::Sum, ScanKind::Exclusive) => device::exclusive_scan::<T, Sum>(gpu, &d_in, &mut d_out, ws),
        (OpArg::Min, ScanKind::Inclusive) => device::inclusive_scan::<T, Min>(gpu, &d_in, &mut d_out, ws),
        (OpArg::Min, ScanKind::Exclusive) => device::exclusive_scan::<T, Min>(gpu, &d_in, &mut d_out, ws),
        (OpArg::Max, ScanKind::Inclusive) => device::inclusive_scan::<T, Max>(gpu, &d_in, &mut d_out, ws),
        (OpArg::Max, ScanKind::Exclusive) => device::exclusive_scan::<T, Max>(gpu, &d_in, &mut d_out, ws),
    })?;
    let out = gpu.download(&d_out)?;
    let show = |v: &[T::Acc]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
    let head = &out[..out.len().min(4)];
    let tail = &out[out.len().saturating_sub(2)..];
    println!(
        "{kind:?} {:?} scan of {} {} elements on {}: [{}, ..., {}] ({:.1} µs)",
        job.op,
        host.len(),
        T::NAME,
        gpu.info().name,
        show(head),
        show(tail),
        elapsed.as_secs_f64() * 1e6
    );
    if let Some(path) = &job.output {
        npy::write(path, &out)?;
        println!("wrote {} ({} elements)", path.display(), out.len());
    }
    if job.check {
        let mut expected = T::reference_scan(host, job.op);
        if kind == ScanKind::Exclusive {
            expected.rotate_right(1);
            if let Some(first) = expected.first_mut() {
                *first = match job.op {
                    OpArg::Sum => 0.0,
                    OpArg::Min => f64::INFINITY,
                    OpArg::Max => f64::NEG_INFINITY,
                };
            }
        }
        let (abs, rel) = largest_errors(out.iter().map(|&a| T::acc_f64(a)), &expected);
        println!(
            "CPU reference: last {}; largest error {abs:e} (relative {rel:e})",
            expected.last().unwrap_or(&0.0)
        );
    }
    Ok(())
}

/// Run `reduce` (`scan == false`) or `scan` on the file of `job`. The file is checked and read
/// before the GPU is opened.
///
/// # Errors
/// [`CliError`] with a one-line message.
pub fn run(job: &Job, scan: bool) -> Result<(), CliError> {
    let input = npy::open(&job.input)?;
    crate::with_npy_element!(input, if scan { "scan" } else { "reduce" }, T => {
        let host = read::<T>(input)?;
        let gpu = gpu_primitives::open_gpu(job.device)?;
        if scan {
            run_scan::<T>(&gpu, &host, job)
        } else {
            run_reduce::<T>(&gpu, &host, job)
        }
    })
}

/// Read `path` as it would be for a job, without a GPU (for tests of the error paths).
///
/// # Errors
/// As [`run`], before the GPU.
pub fn check_file(path: &Path) -> Result<usize, CliError> {
    let input = npy::open(path)?;
    let len = input.len;
    crate::with_npy_element!(input, "reduce", T => read::<T>(input).map(|_| len)).map_err(CliError::from)
}

/// Whether two arrays hold the same bits (NaN equals a NaN of the same bits, -0.0 differs from
/// +0.0): how `--check` compares results that the GPU must reproduce exactly.
pub fn same_bits<T: gpu_primitives::device::Element>(a: &[T], b: &[T]) -> bool {
    let bytes = |v: &[T]| -> Vec<u8> { bytemuck::cast_slice::<T::Raw, u8>(T::as_raw(v)).to_vec() };
    bytes(a) == bytes(b)
}
