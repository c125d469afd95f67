//! The reduction lesson: a naive one-thread sum and the hierarchical block sum
//! (registers -> warp shuffle -> shared memory -> atomic add).

use crate::{DeviceBuffer, Error, Gpu, LaunchConfig, Result};

/// Threads per block of [`block_sum`].
pub const DEFAULT_BLOCK: u32 = 256;

/// The two kernels of the lesson.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumKernel {
    /// One thread reads all n elements (`sum_naive`); always one block of one thread.
    Naive,
    /// `block_sum_hierarchical`: every thread accumulates, warps shuffle, blocks meet in shared
    /// memory, one atomic add per block.
    Hierarchical,
}

impl SumKernel {
    fn name(self) -> &'static str {
        match self {
            SumKernel::Naive => "sum_naive",
            SumKernel::Hierarchical => "block_sum_hierarchical",
        }
    }
}

/// A launch shape for [`SumKernel::Hierarchical`] over `n` elements: [`DEFAULT_BLOCK`] threads,
/// at most 8 blocks per multiprocessor.
pub fn hierarchical_config(gpu: &Gpu, n: usize) -> LaunchConfig {
    LaunchConfig::for_elements(n, DEFAULT_BLOCK, 8 * gpu.info().multiprocessors)
}

/// Sum of `input` (f32) on the GPU with the hierarchical kernel. Empty input gives 0.0.
///
/// # Errors
/// Device errors (allocation, launch).
///
/// # Example
/// ```no_run
/// let gpu = gpu_primitives_lessons::open_gpu(0)?;
/// assert_eq!(gpu_primitives_lessons::reduction::block_sum(&gpu, &[1.0; 1000])?, 1000.0);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn block_sum(gpu: &Gpu, input: &[f32]) -> Result<f32> {
    let d_in = gpu.upload(input)?;
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    launch(
        gpu,
        SumKernel::Hierarchical,
        &d_in,
        &d_out,
        hierarchical_config(gpu, input.len()),
    )?;
    Ok(gpu.download(&d_out)?[0])
}

/// Sum of `input` on the GPU, one thread reading everything.
///
/// # Errors
/// Device errors (allocation, launch).
pub fn sum_naive(gpu: &Gpu, input: &[f32]) -> Result<f32> {
    let d_in = gpu.upload(input)?;
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    launch(gpu, SumKernel::Naive, &d_in, &d_out, LaunchConfig::new(1, 1))?;
    Ok(gpu.download(&d_out)?[0])
}

/// Queue `kernel` over `d_in`, adding into `d_out[0]` (zero it first for a plain sum; the naive
/// kernel overwrites it). The naive kernel ignores `config` and runs one thread.
///
/// # Errors
/// [`Error::LengthMismatch`] for an empty `d_out`; launch errors.
pub fn launch(
    gpu: &Gpu,
    kernel: SumKernel,
    d_in: &DeviceBuffer<f32>,
    d_out: &DeviceBuffer<f32>,
    config: LaunchConfig,
) -> Result<()> {
    if d_out.is_empty() {
        return Err(Error::LengthMismatch {
            what: "sum: d_out",
            expected: 1,
            found: 0,
        });
    }
    let config = match kernel {
        SumKernel::Naive => LaunchConfig::new(1, 1),
        SumKernel::Hierarchical => config,
    };
    // SAFETY: both kernels take (input, out, n): n readable f32, one writable f32, n as usize,
    // which the buffers provide; neither uses dynamic shared memory.
    unsafe {
        gpu.launch(
            kernel.name(),
            config,
            (d_in.as_device_ptr(), d_out.as_device_ptr(), d_in.len()),
        )
    }
}
