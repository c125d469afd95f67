//! Device-wide argmin and argmax.

use super::element::{DeviceView, Element, check_bound};
use super::reduce::{reduce_params, two_level, two_level_plan, two_level_storage};
use super::temp_storage::TempStorage;
use super::workspace::DeviceWorkspace;
use crate::{CallOn, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::Indexed;
use gpu_primitives_abi::params::{ArgFinalParams, ArgReduceParams};

/// The kernels of argmin or argmax: its first pass (of the element type) and its second (of
/// the accumulator, over the partials).
struct ArgKernels {
    first: &'static Family,
    last: &'static Family,
}

const ARGMIN: ArgKernels = ArgKernels {
    first: const { families::family("device_argmin") },
    last: const { families::family("device_argmin_final") },
};

const ARGMAX: ArgKernels = ArgKernels {
    first: const { families::family("device_argmax") },
    last: const { families::family("device_argmax_final") },
};

/// 8-byte words of one block's partial: an `Indexed` (value, index) pair.
const ARG_SLOT_WORDS: usize = 2;

impl TempStorage {
    /// [`argmin`] and [`argmax`] of `n` elements of `T` on `on` (`&gpu`, or a call with its
    /// tuning): 16 bytes a first-pass block (as many blocks as [`reduce`](super::reduce)'s)
    /// and a 16-byte result slot.
    pub fn arg_reduce<'g, T: Element>(on: impl Into<CallOn<'g>>, n: usize) -> Self {
        two_level_storage(&on.into(), n, T::VECTOR, ARG_SLOT_WORDS)
    }
}

fn arg<T: Element>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    which: ArgKernels,
    ws: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    check_bound(&on, "argmin / argmax: input", &[input.bound])?;
    if input.len == 0 {
        return Ok(None);
    }
    let module = crate::module(on.gpu())?;
    let kernel =
        module.kernel::<ArgReduceParams<T::Raw, T::Acc>>(crate::registered(which.first, &[T::NAME])?.name)?;
    let final_kernel = module.kernel::<ArgFinalParams<T::Acc>>(
        crate::registered(which.last, &[<T::Acc as Element>::NAME])?.name,
    )?;
    let plan = two_level_plan(&on, input.len, T::VECTOR, ARG_SLOT_WORDS);
    let ws = ws.begin(on.stream(), &plan.need)?;
    let result = ws.result_slot()?;
    // SAFETY (both closures): `input` holds n elements; the workspace gives two 8-byte words per
    // block (one 16-byte `Indexed` partial), a 16-byte result slot and a counter that is 0
    // between launches (or null), as `ArgReduceParams` and `ArgFinalParams` require.
    two_level(
        input.len,
        &plan,
        result,
        &ws,
        ws.arena(),
        // SAFETY: as the comment above the call says.
        |config, partials, blocks_done| unsafe {
            on.stream().launch(
                &kernel,
                config,
                &reduce_params(input.address, input.len, partials, result, blocks_done),
            )
        },
        // SAFETY: as the comment above the call says.
        |config, partials, count| unsafe {
            let params = ArgFinalParams {
                partials: partials as *const Indexed<T::Acc>,
                n: count,
                result: result as *mut Indexed<T::Acc>,
            };
            on.stream().launch(&final_kernel, config, &params)
        },
    )?;
    // An `Indexed<T::Acc>`: the value in the first bytes of word 0, the index in word 1.
    let [value, index]: [u64; 2] = ws.read_result()?;
    let value = bytemuck::pod_read_unaligned(&value.to_le_bytes()[..size_of::<T::Acc>()]);
    Ok(Some((value, index as usize)))
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
pub fn argmin<'a, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    arg(on.into(), input.into(), ARGMIN, workspace)
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
pub fn argmax<'a, 'g, T: Element>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<Option<(T::Acc, usize)>> {
    arg(on.into(), input.into(), ARGMAX, workspace)
}
