//! Dot product with a shared-memory tree (puzzle 12), over any length and grid.

use crate::{DeviceBuffer, Error, Gpu, LaunchConfig, Result};

/// Kernel name in gpu-primitives-kernels (`kernels::dot_product`).
const KERNEL: &str = "dot_product_shared_tree";

/// Threads per block [`dot_product`] uses.
pub const DEFAULT_BLOCK: u32 = 256;

/// `sum_i a[i] * b[i]` in `f32`, with the launch shape chosen for the input (one block of
/// `a.len()` threads rounded up to a power of two when it fits in one block, else
/// [`DEFAULT_BLOCK`]-thread blocks, at most 4 per multiprocessor).
///
/// Empty inputs give 0.0. Copies both inputs to the device; neither is modified.
///
/// # Errors
/// [`Error::LengthMismatch`] when the lengths differ; device errors.
///
/// # Example
/// ```no_run
/// let gpu = gpu_primitives_lessons::open_gpu(0)?;
/// let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
/// assert_eq!(gpu_primitives_lessons::dot_product::dot_product(&gpu, &a, &a)?, 140.0); // puzzle 12
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn dot_product(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<f32> {
    let block = if a.len() <= LaunchConfig::MAX_BLOCK as usize {
        a.len().max(1).next_power_of_two() as u32
    } else {
        DEFAULT_BLOCK
    };
    let max_grid = 4 * gpu.info().multiprocessors;
    dot_product_with(gpu, a, b, LaunchConfig::for_elements(a.len(), block, max_grid))
}

/// [`dot_product`] with an explicit launch shape: `config.block` must be a power of two
/// (the tree halves it); `config.shared_mem_bytes` is set here.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::InvalidLaunch`] (block not a power of two), device errors.
pub fn dot_product_with(gpu: &Gpu, a: &[f32], b: &[f32], config: LaunchConfig) -> Result<f32> {
    if a.len() != b.len() {
        return Err(Error::LengthMismatch {
            what: "dot_product: b",
            expected: a.len(),
            found: b.len(),
        });
    }
    let d_a = gpu.upload(a)?;
    let d_b = gpu.upload(b)?;
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    launch(gpu, &d_a, &d_b, &d_out, config)?;
    Ok(gpu.download(&d_out)?[0])
}

/// Queue the kernel: `d_out[0] += dot(d_a, d_b)`. `d_out[0]` must be zero first.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::InvalidLaunch`], launch errors.
pub fn launch(
    gpu: &Gpu,
    d_a: &DeviceBuffer<f32>,
    d_b: &DeviceBuffer<f32>,
    d_out: &DeviceBuffer<f32>,
    config: LaunchConfig,
) -> Result<()> {
    if d_a.len() != d_b.len() {
        return Err(Error::LengthMismatch {
            what: "dot_product: d_b",
            expected: d_a.len(),
            found: d_b.len(),
        });
    }
    if d_out.is_empty() {
        return Err(Error::LengthMismatch {
            what: "dot_product: d_out",
            expected: 1,
            found: 0,
        });
    }
    if !config.block.is_power_of_two() {
        return Err(Error::InvalidLaunch(format!(
            "dot_product's tree needs a power-of-two block size, got {}",
            config.block
        )));
    }
    let config = config.with_shared_mem(config.block * size_of::<f32>() as u32);
    // SAFETY: the kernel takes (a, b, out, n): two arrays of n f32, one f32 output, n as usize;
    // the buffers have those lengths (checked above) and the shared memory is block * 4 bytes.
    unsafe {
        gpu.launch(
            KERNEL,
            config,
            (
                d_a.as_device_ptr(),
                d_b.as_device_ptr(),
                d_out.as_device_ptr(),
                d_a.len(),
            ),
        )
    }
}
