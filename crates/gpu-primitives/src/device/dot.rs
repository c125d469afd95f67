//! Device-wide dot product.

use super::element::{DeviceView, Element, check_bound};
use super::reduce::{reduce_kernel_name, reduce_params, two_level, two_level_plan, two_level_storage};
use super::temp_storage::TempStorage;
use super::workspace::DeviceWorkspace;
use crate::{CallOn, Error, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::params::{DotParams, ReduceParams};

/// The dot products' first passes (`device_dot_<element>`).
const DOT: &Family = families::family("device_dot");

/// Element types with a dot product: f32, f64 (in themselves), f16 and bf16 (in f32).
pub trait DotElement: Element {}
impl DotElement for f32 {}
impl DotElement for f64 {}
impl DotElement for half::f16 {}
impl DotElement for half::bf16 {}

impl TempStorage {
    /// [`dot`] of two inputs of `n` elements of `T` on `on` (`&gpu`, or a call with its
    /// tuning): as [`reduce`](super::reduce)'s.
    pub fn dot<'g, T: DotElement>(on: impl Into<CallOn<'g>>, n: usize) -> Self {
        two_level_storage(&on.into(), n, T::VECTOR, DOT_SLOT_WORDS)
    }
}

/// 8-byte words of one block's partial (a `T::Acc`).
const DOT_SLOT_WORDS: usize = 1;

/// `sum_i a[i] * b[i]`, products and sums in `T::Acc` (f32 for f16 / bf16). Synchronises
/// (returns to the host). Deterministic on a given GPU. Empty inputs give 0.
///
/// # Errors
/// [`Error::LengthMismatch`] when the lengths differ (before any launch); device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let a = DeviceVec::from_slice(&gpu, &[1.0f64, 2.0, 3.0])?;
/// let b = DeviceVec::from_slice(&gpu, &[4.0f64, 5.0, 6.0])?;
/// assert_eq!(device::dot::<f64>(&gpu, &a, &b, &mut DeviceWorkspace::new())?, 32.0);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn dot<'a, 'g, T: DotElement>(
    on: impl Into<CallOn<'g>>,
    a: impl Into<DeviceView<'a, T>>,
    b: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<T::Acc> {
    let (on, a, b) = (on.into(), a.into(), b.into());
    check_bound(&on, "dot", &[a.bound, b.bound])?;
    if a.len != b.len {
        return Err(Error::LengthMismatch {
            what: "dot: b",
            expected: a.len,
            found: b.len,
        });
    }
    let module = crate::module(on.gpu())?;
    let kernel = module.kernel::<DotParams<T::Raw, T::Acc>>(crate::registered(DOT, &[T::NAME])?.name)?;
    let final_kernel = module
        .kernel::<ReduceParams<T::Acc, T::Acc>>(reduce_kernel_name(<T::Acc as Element>::NAME, "sum")?)?;
    let plan = two_level_plan(&on, a.len, T::VECTOR, DOT_SLOT_WORDS);
    let workspace = workspace.begin(on.stream(), &plan.need)?;
    let result = workspace.result_slot()?;
    // SAFETY (both closures): a and b hold n elements; the workspace gives one 8-byte slot per
    // block (a T::Acc), the result slot and a counter that is 0 between launches (or null), as
    // `DotParams` requires. The second pass is the Acc sum reduce kernel over the `count`
    // partials.
    two_level(
        a.len,
        &plan,
        result,
        &workspace,
        workspace.arena(),
        // SAFETY: as the comment above the call says.
        |config, partials, blocks_done| unsafe {
            let params = DotParams {
                a: a.address as *const T::Raw,
                b: b.address as *const T::Raw,
                n: a.len,
                partials: partials as *mut T::Acc,
                result: result as *mut T::Acc,
                blocks_done: blocks_done as *mut u32,
            };
            on.stream().launch(&kernel, config, &params)
        },
        // SAFETY: as the comment above the call says.
        |config, partials, count| unsafe {
            on.stream().launch(
                &final_kernel,
                config,
                &reduce_params(partials, count, result, 0, 0),
            )
        },
    )?;
    workspace.read_result()
}
