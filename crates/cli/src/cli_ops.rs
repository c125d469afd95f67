//! The CLI's `reduce` and `scan` commands on `.npy` files: read, run on the GPU, report, and
//! (`--check`) compare with a CPU reference.

use crate::npy::{self, NpyElement, NpyError, NpyInput};
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
    /// An argument the command refuses (found before the GPU is opened).
    #[error("{0}")]
    Usage(String),
}

/// The exit status of a command from its outcome, the same for every command: 0 when it ran
/// and its `--check` found the GPU's result equal to the CPU's (or no check was asked), 1 when
/// the check found a difference, 2 for an error (a refused argument or file, a GPU failure).
///
/// ```
/// use gpu_primitives_cli::cli_ops::exit_status;
/// assert_eq!(exit_status::<()>(&Ok(true)), 0);
/// assert_eq!(exit_status::<()>(&Ok(false)), 1);
/// assert_eq!(exit_status(&Err("no such file")), 2);
/// ```
pub fn exit_status<E>(outcome: &Result<bool, E>) -> u8 {
    match outcome {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(_) => 2,
    }
}

/// What `reduce` or `scan` computes: the fold of every item, or each prefix's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// One value: every item combined (the identity for none).
    Reduce,
    /// Element `i` combines items `0..=i`.
    Inclusive,
    /// Element `i` combines items `0..i` (the identity first).
    Exclusive,
}

/// The values a fold gives from its inclusive prefixes (`inclusive[i]`: items `0..=i`) and
/// the operator's identity.
fn folded<S: Copy>(mut inclusive: Vec<S>, identity: S, fold: Fold) -> Vec<S> {
    match fold {
        Fold::Reduce => vec![inclusive.last().copied().unwrap_or(identity)],
        Fold::Inclusive => inclusive,
        Fold::Exclusive => {
            inclusive.pop();
            inclusive.insert(0, identity);
            inclusive
        }
    }
}

/// The first index at which `found` does not `agree` with `expected`; where all that both have
/// agree but their lengths differ, the shorter's length.
fn first_disagreement<F, E>(found: &[F], expected: &[E], agree: impl Fn(&F, &E) -> bool) -> Option<usize> {
    found
        .iter()
        .zip(expected)
        .position(|(f, e)| !agree(f, e))
        .or_else(|| (found.len() != expected.len()).then(|| found.len().min(expected.len())))
}

/// Whether a floating-point GPU result `found` (in an accumulator of unit roundoff `unit`,
/// largest finite value `max` and smallest normal value `smallest`, as f64) agrees with the CPU's `expected` (f64) for `op`
/// over `terms` items whose absolute values add up to `abs_sum`: NaN only for NaN; min, max and
/// an infinite result exactly; a finite sum within twice Higham's bound on any order of
/// summation, `gamma_(terms - 1) * abs_sum` (the reference's own rounding included), plus the
/// smallest normal per term (subnormals flushed); an overflow only where `abs_sum` passes `max`.
pub fn float_agrees(
    found: f64,
    expected: f64,
    op: OpArg,
    (terms, abs_sum): (usize, f64),
    (unit, max, smallest): (f64, f64, f64),
) -> bool {
    if expected.is_nan() {
        return found.is_nan();
    }
    if op != OpArg::Sum || expected.is_infinite() {
        return found == expected;
    }
    if !found.is_finite() {
        return abs_sum > max;
    }
    let k = terms.saturating_sub(1) as f64 * unit;
    let gamma = if k >= 1.0 { f64::INFINITY } else { k / (1.0 - k) };
    (found - expected).abs() <= 2.0 * gamma * abs_sum + terms.max(1) as f64 * smallest
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
pub(crate) trait CliElement: Element + NpyElement
where
    Self::Acc: npyz::AutoSerialize,
{
    /// The CPU value of `op` folded over `values` up to each index (inclusive), as f64:
    /// integers combine exactly in their own type (wrapping), floats in f64.
    fn reference_scan(values: &[Self], op: OpArg) -> Vec<f64>;
    /// A GPU result as f64.
    fn acc_f64(a: Self::Acc) -> f64;
    /// The first element of `found`, the GPU's `fold` of `values` by `op`, that is not the
    /// CPU's (`--check`'s verdict): integers exactly (wrapping, in their own type), floats as
    /// [`float_agrees`] says; `None` when every element agrees.
    fn first_mismatch(values: &[Self], found: &[Self::Acc], op: OpArg, fold: Fold) -> Option<usize>;
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
            fn first_mismatch(values: &[Self], found: &[Self], op: OpArg, fold: Fold) -> Option<usize> {
                let identity = match op { OpArg::Sum => 0, OpArg::Min => <$t>::MAX, OpArg::Max => <$t>::MIN };
                let inclusive = values.iter().scan(identity, |acc, &v| {
                    *acc = match op { OpArg::Sum => acc.wrapping_add(v), OpArg::Min => (*acc).min(v), OpArg::Max => (*acc).max(v) };
                    Some(*acc)
                }).collect();
                first_disagreement(found, &folded(inclusive, identity, fold), |f, e| f == e)
            }
        }
    )*};
}
cli_int!(i32, u32, i64, u64);

macro_rules! cli_float {
    ($($t:ty => $acc:ty),*) => {$(
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
            fn first_mismatch(values: &[Self], found: &[Self::Acc], op: OpArg, fold: Fold) -> Option<usize> {
                let reference = Self::reference_scan(values, op);
                let inclusive = reference.iter().zip(values).scan((0usize, 0.0f64), |(terms, abs), (&e, &v)| {
                    *terms += 1;
                    *abs += f64::from(v).abs();
                    Some((e, *terms, *abs))
                }).collect();
                let identity = match op { OpArg::Sum => 0.0, OpArg::Min => f64::INFINITY, OpArg::Max => f64::NEG_INFINITY };
                let accumulator = (<$acc>::EPSILON as f64 / 2.0, <$acc>::MAX as f64, <$acc>::MIN_POSITIVE as f64);
                first_disagreement(found, &folded(inclusive, (identity, 0, 0.0), fold), |&f, &(e, terms, abs)| {
                    float_agrees(f64::from(f), e, op, (terms, abs), accumulator)
                })
            }
        }
    )*};
}
cli_float!(f32 => f32, f64 => f64, half::f16 => f32);

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

fn run_reduce<T: CliElement>(gpu: &Gpu, host: &[T], job: &Job) -> Result<bool, CliError>
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
    if !job.check {
        return Ok(true);
    }
    let expected = T::reference_scan(host, job.op)
        .last()
        .copied()
        .unwrap_or(match job.op {
            OpArg::Sum => 0.0,
            OpArg::Min => f64::INFINITY,
            OpArg::Max => f64::NEG_INFINITY,
        });
    let (abs, rel) = largest_errors(std::iter::once(T::acc_f64(found)), &[expected]);
    let same = T::first_mismatch(host, &[found], job.op, Fold::Reduce).is_none();
    println!(
        "CPU reference: {expected}; error {abs:e} (relative {rel:e}); {}",
        if same {
            "within the bound"
        } else {
            "DIFFERENT (outside the bound)"
        }
    );
    Ok(same)
}

fn run_scan<T: CliElement>(gpu: &Gpu, host: &[T], job: &Job) -> Result<bool, CliError>
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
    if !job.check {
        return Ok(true);
    }
    let fold = if kind == ScanKind::Exclusive {
        Fold::Exclusive
    } else {
        Fold::Inclusive
    };
    let identity = match job.op {
        OpArg::Sum => 0.0,
        OpArg::Min => f64::INFINITY,
        OpArg::Max => f64::NEG_INFINITY,
    };
    let expected = folded(T::reference_scan(host, job.op), identity, fold);
    let (abs, rel) = largest_errors(out.iter().map(|&a| T::acc_f64(a)), &expected);
    let mismatch = T::first_mismatch(host, &out, job.op, fold);
    println!(
        "CPU reference: last {}; largest error {abs:e} (relative {rel:e}); {}",
        expected.last().unwrap_or(&0.0),
        match mismatch {
            None => "within the bound".to_owned(),
            Some(at) => format!("DIFFERENT (first at element {at} of {})", out.len()),
        }
    );
    Ok(mismatch.is_none())
}

/// Run `reduce` (`scan == false`) or `scan` on the file of `job`. The arguments are checked and
/// the file read before the GPU is opened. Returns whether `--check` found the GPU's result
/// equal to the CPU's, within the rounding of a float sum (true without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message.
pub fn run(job: &Job, scan: bool) -> Result<bool, CliError> {
    if let Some(output) = &job.output {
        npy::check_outputs(&[("--output", output)], &[&job.input])?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_reduce_is_a_mismatch() {
        // Integers exactly (wrapping).
        assert_eq!(
            u32::first_mismatch(&[1, 2, 3], &[6], OpArg::Sum, Fold::Reduce),
            None
        );
        assert_eq!(
            u32::first_mismatch(&[1, 2, 3], &[7], OpArg::Sum, Fold::Reduce),
            Some(0)
        );
        assert_eq!(
            u32::first_mismatch(&[u32::MAX, 2], &[1], OpArg::Sum, Fold::Reduce),
            None
        );
        assert_eq!(
            i64::first_mismatch(&[], &[i64::MAX], OpArg::Min, Fold::Reduce),
            None
        );
        // Past 2^53, where f64 cannot tell them apart.
        let big = (1u64 << 60) + 1;
        assert_eq!(
            u64::first_mismatch(&[big], &[1 << 60], OpArg::Max, Fold::Reduce),
            Some(0)
        );
        // Floats: a sum within its rounding bound agrees, one past it does not.
        let x = [0.1f32; 10];
        let exact: f64 = x.iter().map(|&v| f64::from(v)).sum();
        assert_eq!(
            f32::first_mismatch(&x, &[exact as f32], OpArg::Sum, Fold::Reduce),
            None
        );
        assert_eq!(
            f32::first_mismatch(&x, &[exact as f32 * 1.01], OpArg::Sum, Fold::Reduce),
            Some(0)
        );
        // Min and max exactly; NaN only for NaN.
        assert_eq!(
            f64::first_mismatch(&[2.0, -1.0], &[-1.0], OpArg::Min, Fold::Reduce),
            None
        );
        assert_eq!(
            f64::first_mismatch(&[2.0, -1.0], &[-0.9999999], OpArg::Min, Fold::Reduce),
            Some(0)
        );
        assert_eq!(
            f32::first_mismatch(&[1.0, f32::NAN], &[f32::NAN], OpArg::Max, Fold::Reduce),
            None
        );
        assert_eq!(
            f32::first_mismatch(&[1.0, f32::NAN], &[1.0], OpArg::Max, Fold::Reduce),
            Some(0)
        );
        assert_eq!(
            f32::first_mismatch(&[1.0, 2.0], &[f32::NAN], OpArg::Sum, Fold::Reduce),
            Some(0)
        );
        // An f32 overflow agrees only where the terms' magnitudes pass f32::MAX.
        assert_eq!(
            f32::first_mismatch(&[f32::MAX, f32::MAX], &[f32::INFINITY], OpArg::Sum, Fold::Reduce),
            None
        );
        assert_eq!(
            f32::first_mismatch(&[1.0, 2.0], &[f32::INFINITY], OpArg::Sum, Fold::Reduce),
            Some(0)
        );
        // f16 items sum in f32.
        let h = [half::f16::from_f32(1.5), half::f16::from_f32(2.0)];
        assert_eq!(
            half::f16::first_mismatch(&h, &[3.5], OpArg::Sum, Fold::Reduce),
            None
        );
        assert_eq!(
            half::f16::first_mismatch(&h, &[3.0], OpArg::Sum, Fold::Reduce),
            Some(0)
        );
    }

    #[test]
    fn a_wrong_scan_is_a_mismatch_at_its_first_wrong_element() {
        let x = [1i32, 2, 3, 4];
        assert_eq!(
            i32::first_mismatch(&x, &[1, 3, 6, 10], OpArg::Sum, Fold::Inclusive),
            None
        );
        assert_eq!(
            i32::first_mismatch(&x, &[0, 1, 3, 6], OpArg::Sum, Fold::Exclusive),
            None
        );
        assert_eq!(
            i32::first_mismatch(&x, &[0, 1, 4, 6], OpArg::Sum, Fold::Exclusive),
            Some(2)
        );
        assert_eq!(
            i32::first_mismatch(&x, &[i32::MAX, 1, 1, 1], OpArg::Min, Fold::Exclusive),
            None
        );
        // A result of the wrong length differs where the shorter ends.
        assert_eq!(
            i32::first_mismatch(&x, &[1, 3, 6], OpArg::Sum, Fold::Inclusive),
            Some(3)
        );
        let y = [0.5f32, 0.25, 1.0];
        assert_eq!(
            f32::first_mismatch(&y, &[0.5, 0.75, 1.75], OpArg::Sum, Fold::Inclusive),
            None
        );
        assert_eq!(
            f32::first_mismatch(&y, &[0.0, 0.5, 0.75], OpArg::Sum, Fold::Exclusive),
            None
        );
        assert_eq!(
            f32::first_mismatch(&y, &[0.5, 0.75, 1.5], OpArg::Sum, Fold::Inclusive),
            Some(2)
        );
        assert_eq!(
            f32::first_mismatch(&y, &[0.5, 0.25, 0.25], OpArg::Min, Fold::Inclusive),
            None
        );
        assert_eq!(
            f32::first_mismatch(&y, &[f32::INFINITY, 0.5, 0.25], OpArg::Min, Fold::Exclusive),
            None
        );
    }

    #[test]
    fn a_mismatch_exits_with_status_1_and_an_error_with_2() {
        assert_eq!(exit_status::<CliError>(&Ok(true)), 0);
        assert_eq!(exit_status::<CliError>(&Ok(false)), 1);
        assert_eq!(exit_status(&Err::<bool, _>(CliError::Usage("bad".into()))), 2);
    }
}
