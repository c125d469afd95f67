//! The CLI's `reduce-by-key` command on two `.npy` files (keys and values): for each run of equal
//! consecutive keys, its first key and the reduction of its values (or with `--unique` its first
//! value) on the GPU; report, optionally write both arrays, and (`--check`) compare them with
//! the CPU reference: keys and first values bit for bit, reductions as `reduce --check` compares
//! one (integers, min and max exactly; a float sum within the rounding bound of any order of
//! summation, over its run: the GPU adds a run that spans threads or tiles in another order).

use crate::cli_ops::{CliElement, CliError, Fold, OpArg, time_warm};
use crate::npy;
use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Max, Min, Operator, ScanKey, Sum};
use gpu_primitives::{Gpu, reference};
use std::path::{Path, PathBuf};

/// What `reduce-by-key` should do.
#[derive(Clone, Debug)]
pub struct ByKeyJob {
    /// The keys `.npy` (1-D: u32 i32 u64 i64).
    pub keys: PathBuf,
    /// The values `.npy` (1-D, as long as the keys).
    pub values: PathBuf,
    /// The operator of the reduction.
    pub op: OpArg,
    /// Each run's first value instead of its reduction (`unique_by_key`).
    pub unique: bool,
    /// Where to write the runs' keys; their values go beside it ([`values_path`]).
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// Where `reduce-by-key --output path` writes the values: [`npy::beside`]`(path, "values")`.
pub fn values_path(path: &Path) -> PathBuf {
    npy::beside(path, "values")
}

/// A type the command writes.
trait Written: npyz::Serialize + npyz::AutoSerialize + Copy + bytemuck::Pod {}
impl<T: npyz::Serialize + npyz::AutoSerialize + Copy + bytemuck::Pod> Written for T {}

/// The arrays the GPU's call fills: room for a run an item, and the count.
struct Targets<K: ScanKey> {
    keys: gpu_primitives::DeviceBuffer<K>,
    runs: gpu_primitives::DeviceBuffer<u64>,
}

/// Time `call` (warm) on `targets`, print the one-line summary and return the runs' keys and
/// the first `runs` of `values`.
fn finish_call<K: ScanKey + Default, V: Copy>(
    gpu: &Gpu,
    what: (&str, usize, &str),
    targets: &Targets<K>,
    elapsed: std::time::Duration,
    mut values: Vec<V>,
) -> Result<(Vec<K>, Vec<V>), CliError> {
    let runs = gpu.download(&targets.runs)?[0] as usize;
    let (name, n, value_type) = what;
    println!(
        "{name} of {n} {} keys and {value_type} values on {}: {runs} runs ({:.1} µs, copies both ways included)",
        std::any::type_name::<K>(),
        gpu.info().name,
        elapsed.as_secs_f64() * 1e6
    );
    let mut keys = gpu.download(&targets.keys)?;
    keys.truncate(runs);
    values.truncate(runs);
    Ok((keys, values))
}

/// Write the runs' keys to `path` and their values to [`values_path`]`(path)`.
fn write_runs<K: Written, V: Written>(
    path: &Path,
    keys: &[K],
    values: &[V],
    value_type: &str,
) -> Result<(), CliError> {
    npy::write(path, keys)?;
    println!("wrote {} ({} keys)", path.display(), keys.len());
    let values_path = values_path(path);
    npy::write(&values_path, values)?;
    println!(
        "wrote {} ({} values, {value_type})",
        values_path.display(),
        values.len()
    );
    Ok(())
}

/// Write (`--output`) and compare (`--check`) the GPU's runs with the CPU's: the keys by bits,
/// the values as `values_agree` says.
fn report<K: Written + PartialEq, V: Written>(
    job: &ByKeyJob,
    (found_keys, found): (Vec<K>, Vec<V>),
    expected_keys: &[K],
    values_agree: impl FnOnce(&[V]) -> bool,
    value_type: &str,
) -> Result<bool, CliError> {
    if let Some(path) = &job.output {
        write_runs(path, &found_keys, &found, value_type)?;
    }
    if !job.check {
        return Ok(true);
    }
    let same = found_keys == expected_keys && values_agree(&found);
    println!(
        "CPU reference: {} runs; {}",
        expected_keys.len(),
        if same { "agree" } else { "DIFFERENT" }
    );
    Ok(same)
}

/// Whether `found` holds one reduction by `op` a run (`runs`: item ranges of `values`), each
/// agreeing with the CPU's fold of its run's values as `reduce --check` judges one
/// ([`CliElement::first_mismatch`]: exact but for a float sum, within its rounding bound).
fn reductions_agree<T: CliElement>(runs: &[(usize, usize)], values: &[T], found: &[T::Acc], op: OpArg) -> bool
where
    T::Acc: npyz::AutoSerialize,
{
    found.len() == runs.len()
        && runs.iter().zip(found).all(|(&(start, end), reduction)| {
            T::first_mismatch(
                &values[start..end],
                std::slice::from_ref(reduction),
                op,
                Fold::Reduce,
            )
            .is_none()
        })
}

fn run_typed<K, T, Op>(gpu: &Gpu, keys: &[K], values: &[T], job: &ByKeyJob) -> Result<bool, CliError>
where
    K: ScanKey + Default + Written + PartialEq,
    T: CliElement + Written,
    T::Acc: Written,
    Op: Operator,
{
    let n = keys.len();
    let (d_keys, d_values) = (gpu.upload(keys)?, DeviceVec::from_slice(gpu, values)?);
    let mut targets = Targets {
        keys: gpu.alloc_zeroed::<K>(n)?,
        runs: gpu.alloc_zeroed::<u64>(1)?,
    };
    let ws = &mut DeviceWorkspace::new();
    if job.unique {
        let mut firsts = DeviceVec::<T>::zeroed(gpu, n)?;
        let ((), elapsed) = time_warm(gpu, || {
            let Targets { keys, runs } = &mut targets;
            device::unique_by_key::<K, T>(gpu, &d_keys, &d_values, keys, &mut firsts, runs, ws)
        })?;
        let firsts = T::from_raw(&firsts.to_vec(gpu)?).to_vec();
        let found = finish_call(gpu, ("unique_by_key", n, T::NAME), &targets, elapsed, firsts)?;
        let (expected_keys, expected) = reference::unique_by_key(keys, values);
        let bits = bytemuck::cast_slice::<T, u8>;
        let firsts_agree = |found: &[T]| bits(found) == bits(&expected);
        report(job, found, &expected_keys, firsts_agree, T::NAME)
    } else {
        let mut reductions = gpu.alloc_zeroed::<T::Acc>(n)?;
        let ((), elapsed) = time_warm(gpu, || {
            let Targets { keys, runs } = &mut targets;
            device::reduce_by_key::<K, T, Op>(gpu, &d_keys, &d_values, keys, &mut reductions, runs, ws)
        })?;
        let reductions = gpu.download(&reductions)?;
        let found = finish_call(gpu, ("reduce_by_key", n, T::NAME), &targets, elapsed, reductions)?;
        let acc = std::any::type_name::<T::Acc>();
        let runs: Vec<_> = reference::run_ranges(keys).collect();
        let expected_keys: Vec<K> = runs.iter().map(|&(start, _)| keys[start]).collect();
        let agree = |found: &[T::Acc]| reductions_agree(&runs, values, found, job.op);
        report(job, found, &expected_keys, agree, acc)
    }
}

/// Run `reduce-by-key` on the files of `job` (the arguments checked and the files read before
/// the GPU is opened). Returns whether `--check` found the GPU's runs equal to the CPU's (true
/// without `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: a file, keys and values of different lengths, an
/// `--output` (or the values beside it) that is an input, 2^32 items or more.
pub fn run(job: &ByKeyJob) -> Result<bool, CliError> {
    if let Some(output) = &job.output {
        let values = values_path(output);
        let outputs = [("--output", output.as_path()), ("--output's values", &values)];
        npy::check_outputs(&outputs, &[&job.keys, &job.values])?;
    }
    let (keys, values) = (npy::open(&job.keys)?, npy::open(&job.values)?);
    if keys.len != values.len {
        return Err(CliError::Usage(format!(
            "{} holds {} keys but {} holds {} values: one value a key",
            job.keys.display(),
            keys.len,
            job.values.display(),
            values.len
        )));
    }
    if keys.len > u32::MAX as usize {
        return Err(CliError::Usage(format!(
            "{}: {} keys; reduce-by-key counts runs in u32, so fewer than 2^32",
            job.keys.display(),
            keys.len
        )));
    }
    let bar = indicatif::ProgressBar::hidden();
    crate::with_npy_type!(keys, "reduce-by-key (keys)", [u32, i32, u64, i64], K => {
        let keys = keys.read::<K>(&bar)?;
        crate::with_npy_element!(values, "reduce-by-key (values)", T => {
            let values = values.read::<T>(&bar)?;
            let gpu = gpu_primitives::open_gpu(job.device)?;
            match job.op {
                OpArg::Sum => run_typed::<K, T, Sum>(&gpu, &keys, &values, job),
                OpArg::Min => run_typed::<K, T, Min>(&gpu, &keys, &values, job),
                OpArg::Max => run_typed::<K, T, Max>(&gpu, &keys, &values, job),
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_sum_in_another_order_agrees_and_a_wrong_one_does_not() {
        let keys = [1u32, 1, 1, 2, 2];
        let runs: Vec<_> = reference::run_ranges(&keys).collect();
        let values = [1.0e8f32, 1.0, -1.0e8, 0.5, 0.25];
        // In order, in f32: 1e8 + 1 rounds to 1e8, less 1e8 is 0; in another order, 1.
        assert!(reductions_agree(&runs, &values, &[0.0, 0.75], OpArg::Sum));
        assert!(reductions_agree(&runs, &values, &[1.0, 0.75], OpArg::Sum));
        assert!(!reductions_agree(&runs, &values, &[0.0, 0.5], OpArg::Sum));
        // A reduction short, or one too many.
        assert!(!reductions_agree(&runs, &values, &[0.0], OpArg::Sum));
        assert!(!reductions_agree(&runs, &values, &[0.0, 0.75, 0.0], OpArg::Sum));
        // Max and integers exactly.
        assert!(reductions_agree(&runs, &values, &[1.0e8, 0.5], OpArg::Max));
        assert!(!reductions_agree(&runs, &values, &[1.0e8, 0.25], OpArg::Max));
        let one_run = [(0, 2)];
        assert!(reductions_agree(&one_run, &[1u32, 2], &[3], OpArg::Sum));
        assert!(!reductions_agree(&one_run, &[1u32, 2], &[4], OpArg::Sum));
    }
}
