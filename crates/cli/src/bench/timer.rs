//! The benchmark's timer: the median of timed calls, each between two CUDA events on the GPU's
//! stream.

use gpu_primitives::{Gpu, Result};

/// Median of `runs` timings (µs) of `work` (at least one), each the time between two events
/// recorded on `gpu`'s stream around it ([`Gpu::time`]), after one untimed warm-up call and a
/// synchronisation. A call that waits on the host inside (a download, a synchronisation) is
/// timed whole.
///
/// # Errors
/// The first error of `work` or of the stream.
pub fn median_micros(gpu: &Gpu, runs: usize, mut work: impl FnMut() -> Result<()>) -> Result<f64> {
    work()?;
    gpu.synchronize()?;
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| Ok(gpu.time(&mut work)?.1.as_secs_f64() * 1e6))
        .collect::<Result<_>>()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
