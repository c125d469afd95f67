//! Device-wide dot product.

use super::element::{DeviceView, Element};
use super::reduce::two_level;
use super::workspace::DeviceWorkspace;
use crate::{Error, Gpu, Result};

/// Element types with a dot product: f32, f64 (in themselves), f16 and bf16 (in f32).
pub trait DotElement: Element {}
impl DotElement for f32 {}
impl DotElement for f64 {}
impl DotElement for half::f16 {}
impl DotElement for half::bf16 {}

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
pub fn dot<'a, T: DotElement>(
    gpu: &Gpu,
    a: impl Into<DeviceView<'a, T>>,
    b: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<T::Acc> {
    let (a, b) = (a.into(), b.into());
    if a.len != b.len {
        return Err(Error::LengthMismatch {
            what: "dot: b",
            expected: a.len,
            found: b.len,
        });
    }
    let result = workspace.result_slot(gpu)?;
    let kernel = format!("device_dot_{}", T::NAME);
    let final_kernel = format!("device_reduce_{}_sum", T::ACC_NAME);
    // SAFETY (both closures): device_dot_<T> takes (a, b, n, partials, result, blocks_done): a and
    // b hold n elements; the workspace gives one 8-byte slot per block (a T::Acc), the result slot
    // and a counter that is 0 between launches (or null). The second pass is the Acc sum reduce
    // kernel over the `count` partials.
    two_level(
        gpu,
        a.len,
        T::VECTOR,
        1,
        result,
        workspace,
        |config, partials, blocks_done| unsafe {
            gpu.launch(
                &kernel,
                config,
                (a.address, b.address, a.len, partials, result, blocks_done),
            )
        },
        |config, partials, count| unsafe {
            gpu.launch(&final_kernel, config, (partials, count, result, 0u64, 0u64))
        },
    )?;
    workspace.read_result(gpu)
}
