//! The CLI's `rle` command on `.npy` files: read, run-length encode on the GPU (each run's item
//! and length, or with `--non-trivial` the offset and length of each run longer than one item),
//! report, optionally write both arrays, and (`--check`) compare them bit for bit with the CPU
//! reference.

use crate::cli_ops::{CliError, time_warm};
use crate::npy::{self, NpyElement};
use gpu_primitives::device::{self, Element};
use gpu_primitives::{Gpu, reference};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `rle` should do.
#[derive(Clone, Debug)]
pub struct RunJob {
    /// The input `.npy` (1-D).
    pub input: PathBuf,
    /// Only the runs longer than one item, as offsets and lengths (`non_trivial_runs`) instead of
    /// every run's item and length (`run_length_encode`).
    pub non_trivial: bool,
    /// Where to write the items (or offsets); the lengths go beside it ([`lengths_path`]).
    pub output: Option<PathBuf>,
    /// Compare with the CPU reference.
    pub check: bool,
    /// GPU ordinal.
    pub device: u32,
}

/// Where `rle --output path` writes the lengths: [`npy::beside`]`(path, "lengths")`.
pub fn lengths_path(path: &Path) -> PathBuf {
    npy::beside(path, "lengths")
}

/// An element type the command reads and writes.
trait RunElement: Element + NpyElement + npyz::Serialize + npyz::AutoSerialize {}
impl<T: Element + NpyElement + npyz::Serialize + npyz::AutoSerialize> RunElement for T {}

/// Print the one-line summary of the GPU's call.
fn report<T: Element>(gpu: &Gpu, what: &str, n: usize, runs: usize, elapsed: Duration) {
    println!(
        "{what} of {n} {} elements on {}: {runs} runs ({:.1} µs, copies both ways included)",
        T::NAME,
        gpu.info().name,
        elapsed.as_secs_f64() * 1e6
    );
}

/// Write `first` (the items or offsets, named `first_name`, of type `first_type`) to `path` and
/// `lengths` to [`lengths_path`]`(path)`.
fn write_runs<F: npyz::Serialize + npyz::AutoSerialize + Copy>(
    path: &Path,
    (first_name, first_type, first): (&str, &str, &[F]),
    lengths: &[u32],
) -> Result<(), CliError> {
    npy::write(path, first)?;
    println!(
        "wrote {} ({} {first_name}, {first_type})",
        path.display(),
        first.len()
    );
    let lengths_path = lengths_path(path);
    npy::write(&lengths_path, lengths)?;
    println!(
        "wrote {} ({} lengths, u32)",
        lengths_path.display(),
        lengths.len()
    );
    Ok(())
}

/// Print the comparison with the CPU reference (`expected_runs` runs) and return `same`.
fn print_check(expected_runs: usize, same: bool) -> bool {
    println!(
        "CPU reference: {expected_runs} runs; {}",
        if same { "identical" } else { "DIFFERENT" }
    );
    same
}

fn run_typed<T: RunElement>(gpu: &Gpu, host: &[T], job: &RunJob) -> Result<bool, CliError> {
    if job.non_trivial {
        let ((offsets, lengths), elapsed) = time_warm(gpu, || device::non_trivial_runs_slice(gpu, host))?;
        report::<T>(gpu, "non_trivial_runs", host.len(), lengths.len(), elapsed);
        if let Some(path) = &job.output {
            write_runs(path, ("offsets", "u32", &offsets), &lengths)?;
        }
        if !job.check {
            return Ok(true);
        }
        let (expected_offsets, expected_lengths) = reference::non_trivial_runs(host);
        let same = offsets == expected_offsets && lengths == expected_lengths;
        Ok(print_check(expected_lengths.len(), same))
    } else {
        let ((items, lengths), elapsed) = time_warm(gpu, || device::run_length_encode_slice(gpu, host))?;
        report::<T>(gpu, "run_length_encode", host.len(), lengths.len(), elapsed);
        if let Some(path) = &job.output {
            write_runs(path, ("items", T::NAME, &items), &lengths)?;
        }
        if !job.check {
            return Ok(true);
        }
        let (expected_items, expected_lengths) = reference::run_length_encode(host);
        let same = crate::cli_ops::same_bits::<T>(&items, &expected_items) && lengths == expected_lengths;
        Ok(print_check(expected_lengths.len(), same))
    }
}

/// Run `rle` on the file of `job` (the arguments checked and the file read before the GPU is
/// opened). Returns whether `--check` found the GPU's runs equal to the CPU's (true without
/// `--check`).
///
/// # Errors
/// [`CliError`] with a one-line message: the file, an `--output` (or the lengths beside it)
/// that is the input, 2^32 items or more (the lengths are `u32`).
pub fn run(job: &RunJob) -> Result<bool, CliError> {
    if let Some(output) = &job.output {
        let lengths = lengths_path(output);
        let outputs = [("--output", output.as_path()), ("--output's lengths", &lengths)];
        npy::check_outputs(&outputs, &[&job.input])?;
    }
    let input = npy::open(&job.input)?;
    if input.len > u32::MAX as usize {
        return Err(CliError::Usage(format!(
            "{}: {} items; rle's offsets and lengths are u32, so fewer than 2^32",
            job.input.display(),
            input.len
        )));
    }
    let bar = indicatif::ProgressBar::hidden();
    crate::with_npy_element!(input, "rle", T => {
        let host = input.read::<T>(&bar)?;
        let gpu = gpu_primitives::open_gpu(job.device)?;
        run_typed::<T>(&gpu, &host, job)
    })
}
