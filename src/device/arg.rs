//! Device-wide argmin and argmax.

use super::element::{DeviceView, Element};
use super::reduce::two_level;
use super::workspace::DeviceWorkspace;
use crate::{Gpu, Result};

/// A `(value, index)` result as the kernels write it: value in the first 8 bytes, index after.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Pair {
    value: u64,
    index: u64,
}

fn arg<T: Element>(
    gpu: &Gpu,
    input: DeviceView<'_, T>,
    which: &str,
    ws: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    if input.len == 0 {
        return Ok(None);
    }
    let result = ws.result_slot(gpu)?;
    let kernel = format!("device_{which}_{}", T::NAME);
    let final_kernel = format!("device_{which}_final_{}", T::ACC_NAME);
    // SAFETY (both closures): device_arg{min,max}_<T> takes (input, n, partials, result,
    // blocks_done) with 16-byte (value, index) partials and result: the workspace gives two
    // 8-byte words per block, a 16-byte result slot and a counter that is 0 between launches (or
    // null). The final kernel takes (partials, count, result).
    two_level(
        gpu,
        input.len,
        T::VECTOR,
        2,
        result,
        ws,
        |config, partials, blocks_done| unsafe {
            gpu.launch(
                &kernel,
                config,
                (input.address, input.len, partials, result, blocks_done),
            )
        },
        |config, partials, count| unsafe { gpu.launch(&final_kernel, config, (partials, count, result)) },
    )?;
    let pair: Pair = ws.read_result(gpu)?;
    let value = bytemuck::pod_read_unaligned(&pair.value.to_le_bytes()[..size_of::<T::Acc>()]);
    Ok(Some((value, pair.index as usize)))
}

/// The smallest element and its index: the first index on ties; if any element is NaN, the
/// first NaN (as NumPy's `argmin`). `None` for an empty input. Synchronises (returns to the
/// host). Deterministic.
///
/// # Errors
/// Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[4.0f32, 1.0, 7.0, 1.0])?;
/// assert_eq!(device::argmin::<f32>(&gpu, &x, &mut DeviceWorkspace::new())?, Some((1.0, 1)));
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn argmin<'a, T: Element>(
    gpu: &Gpu,
    input: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    arg(gpu, input.into(), "argmin", workspace)
}

/// The largest element and its index: the first index on ties; if any element is NaN, the first
/// NaN (as NumPy's `argmax`). `None` for an empty input. As [`argmin`].
///
/// # Errors
/// Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[4i32, 9, 7, 9])?;
/// assert_eq!(device::argmax::<i32>(&gpu, &x, &mut DeviceWorkspace::new())?, Some((9, 1)));
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn argmax<'a, T: Element>(
    gpu: &Gpu,
    input: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    arg(gpu, input.into(), "argmax", workspace)
}
