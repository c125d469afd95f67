//! Device-wide reduce.

use super::element::{DeviceVec, DeviceView, Element, Operator};
use super::workspace::DeviceWorkspace;
use super::{
    DEVICE_SHARED_BYTES, REDUCE_BLOCK, REDUCE_BLOCKS_PER_SM, REDUCE_SINGLE_BLOCK_MAX,
    REDUCE_SINGLE_LAUNCH_MAX,
};
use crate::{DeviceBuffer, Error, Gpu, LaunchConfig, Result};

/// [`REDUCE_BLOCKS_PER_SM`], or `$GPU_PRIMITIVES_REDUCE_BLOCKS_PER_SM` (1 to 32) when set: a
/// tuning override for measuring other shapes (read once).
fn blocks_per_sm() -> u32 {
    static VALUE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *VALUE.get_or_init(|| {
        std::env::var("GPU_PRIMITIVES_REDUCE_BLOCKS_PER_SM")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|v| (1..=32).contains(v))
            .unwrap_or(REDUCE_BLOCKS_PER_SM)
    })
}

/// The launch shape of the first pass over `n` elements: enough blocks for four 16-byte loads
/// per thread, at most [`REDUCE_BLOCKS_PER_SM`] per multiprocessor; one block up to
/// [`REDUCE_SINGLE_BLOCK_MAX`] elements.
pub(crate) fn first_pass_blocks(gpu: &Gpu, n: usize, vector: u32) -> u32 {
    if n <= REDUCE_SINGLE_BLOCK_MAX {
        return 1;
    }
    let per_block = REDUCE_BLOCK as usize * vector as usize * 4;
    let cap = blocks_per_sm() * gpu.info().multiprocessors;
    n.div_ceil(per_block).clamp(1, cap as usize) as u32
}

/// Queue the reduction of `input` into the 8-byte device slot at `result`.
fn launch<T: Element, Op: Operator>(
    gpu: &Gpu,
    input: DeviceView<'_, T>,
    result: u64,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let blocks = first_pass_blocks(gpu, input.len, T::VECTOR);
    let (partials, blocks_done) = workspace.partials(gpu, blocks as usize)?;
    let shape = |grid| LaunchConfig::new(grid, REDUCE_BLOCK).with_shared_mem(DEVICE_SHARED_BYTES);
    let kernel = format!("device_reduce_{}_{}", T::NAME, Op::NAME);
    let null = 0u64;
    // SAFETY: device_reduce_<T>_<op> takes (input, n, partials, result, blocks_done): `input`
    // holds n elements of T; the partials buffer one 8-byte slot per block (`blocks`), `result`
    // one slot (each slot holds a T::Acc); `blocks_done` is the workspace's counter, 0 between
    // launches (the last block resets it), or null for the plain per-block pass.
    unsafe {
        if blocks == 1 {
            gpu.launch(&kernel, shape(1), (input.address, input.len, result, null, null))
        } else if input.len <= REDUCE_SINGLE_LAUNCH_MAX {
            gpu.launch(
                &kernel,
                shape(blocks),
                (input.address, input.len, partials, result, blocks_done),
            )
        } else {
            gpu.launch(
                &kernel,
                shape(blocks),
                (input.address, input.len, partials, null, null),
            )?;
            // The partials are packed T::Acc values; reduce them with the Acc kernel.
            let final_kernel = format!("device_reduce_{}_{}", T::ACC_NAME, Op::NAME);
            gpu.launch(
                &final_kernel,
                shape(1),
                (partials, blocks as usize, result, null, null),
            )
        }
    }
}

/// Reduce `input` with `Op`; returns the result on the host (synchronises the stream).
///
/// - `n = 0` gives the operator's identity (0, `+inf` / `MAX` for min, `-inf` / `MIN` for max).
/// - f16 / bf16 are combined in f32 and the result is f32.
/// - Deterministic: bitwise-equal results for the same input on the same GPU.
/// - One block up to [`REDUCE_SINGLE_BLOCK_MAX`] elements; one launch up to
///   [`REDUCE_SINGLE_LAUNCH_MAX`] (the last block to finish reduces the partials, picked by an
///   integer atomic counter); two launches above.
///
/// # Errors
/// Device errors (allocation, launch, a failed kernel).
pub fn reduce<'a, T: Element, Op: Operator>(
    gpu: &Gpu,
    input: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<T::Acc> {
    let result = workspace.result_slot(gpu)?;
    launch::<T, Op>(gpu, input.into(), result, workspace)?;
    let word = workspace.read_result(gpu)?;
    Ok(bytemuck::pod_read_unaligned(
        &word.to_le_bytes()[..size_of::<T::Acc>()],
    ))
}

/// [`reduce`] into `output[0]` on the device, without synchronising (stream-ordered).
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) for an empty `output`; device errors.
pub fn reduce_into<'a, T: Element, Op: Operator>(
    gpu: &Gpu,
    input: impl Into<DeviceView<'a, T>>,
    output: &mut DeviceBuffer<T::Acc>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    if output.is_empty() {
        return Err(Error::LengthMismatch {
            what: "reduce_into: output",
            expected: 1,
            found: 0,
        });
    }
    launch::<T, Op>(gpu, input.into(), output.as_device_ptr().as_raw(), workspace)
}

/// [`reduce`] of a host slice: copies it to the device first (with a workspace of its own).
///
/// # Errors
/// As [`reduce`].
pub fn reduce_slice<T: Element, Op: Operator>(gpu: &Gpu, input: &[T]) -> Result<T::Acc> {
    let d_in = DeviceVec::from_slice(gpu, input)?;
    reduce::<T, Op>(gpu, &d_in, &mut DeviceWorkspace::new())
}
