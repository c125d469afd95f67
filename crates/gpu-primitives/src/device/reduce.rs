//! Device-wide reduce.

use super::DEVICE_SHARED_BYTES;
use super::element::{DeviceVec, DeviceView, DeviceViewMut, Element, Operator, check_bound};
use super::temp_storage::{Region, TempStorage};
use super::workspace::{Arena, DeviceWorkspace, InUse};
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::params::ReduceParams;
use gpu_primitives_abi::tuning::ReducePolicy;

/// The launch shape of the first pass over `n` elements under a call's reduce `policy` (its
/// overrides in place) on a GPU of `multiprocessors`: enough blocks for `loads_in_flight`
/// 16-byte loads per thread, at most `blocks_per_sm` per multiprocessor; one block up to
/// `single_block_max_items`.
fn first_pass_blocks(policy: ReducePolicy, multiprocessors: u32, n: usize, vector: u32) -> u32 {
    if n <= policy.single_block_max_items {
        return 1;
    }
    let per_block = policy.block_threads as usize * vector as usize * policy.loads_in_flight as usize;
    let cap = policy.blocks_per_sm * multiprocessors;
    n.div_ceil(per_block).clamp(1, cap as usize) as u32
}

/// The first pass's blocks over `n` elements and the workspace of a reduction in up to two
/// levels ([`two_level`]): `words_per_slot` 8-byte words a first-pass block in one scratch
/// region, and the control block (the block counter, the result slot of the reductions that
/// return to the host).
pub(crate) struct TwoLevel {
    blocks: u32,
    /// The reduce policy of the call planned for (its overrides in place): the launches' block
    /// and the single launch's bound.
    policy: ReducePolicy,
    partials: Region,
    pub(crate) need: TempStorage,
}

/// The [`TwoLevel`] plan of a reduction of `n` elements loaded `vector` at a time by `call`.
pub(crate) fn two_level_plan(call: &CallOn<'_>, n: usize, vector: u32, words_per_slot: usize) -> TwoLevel {
    let policy = crate::tuning::reduce(call);
    let blocks = first_pass_blocks(policy, call.gpu().info().multiprocessors, n, vector);
    let (scratch, partials) = TempStorage::region((blocks as usize).saturating_mul(8 * words_per_slot));
    TwoLevel {
        blocks,
        policy,
        partials,
        need: TempStorage {
            control: true,
            ..scratch
        },
    }
}

/// Queue a reduction of `n` elements in up to two levels, the shape every device reduction
/// shares (reduce, argmin / argmax, dot), as `plan` (of `n` elements, under its reduce policy)
/// says:
/// - one block (`n <= single_block_max_items`): `first(1, result, null)` writes the result;
/// - one launch (`n <= single_launch_max_items`): `first(blocks, partials, counter)`, whose last
///   block reduces the partials into `result`;
/// - two launches: `first(blocks, partials, null)`, then `second(partials, blocks)` (one block).
///
/// `first(grid, partials, blocks_done)` and `second(partials, count)` queue the kernels (both
/// write the device address `result` where the list above says so). The partials are carved
/// from `arena` (where the call's need holds `plan.need`), the counter is the workspace's.
pub(crate) fn two_level(
    n: usize,
    plan: &TwoLevel,
    result: u64,
    workspace: &InUse<'_, '_>,
    arena: Arena,
    first: impl FnOnce(LaunchConfig, u64, u64) -> Result<()>,
    second: impl FnOnce(LaunchConfig, u64, usize) -> Result<()>,
) -> Result<()> {
    let blocks = plan.blocks;
    let policy = plan.policy;
    let partials = arena.carve(plan.partials, plan.partials.bytes)?;
    let blocks_done = workspace.blocks_done()?;
    let shape = |grid| LaunchConfig::new(grid, policy.block_threads).with_shared_mem(DEVICE_SHARED_BYTES);
    if blocks == 1 {
        first(shape(1), result, 0)
    } else if n <= policy.single_launch_max_items {
        first(shape(blocks), partials, blocks_done)
    } else {
        first(shape(blocks), partials, 0)?;
        second(shape(1), partials, blocks as usize)
    }
}

/// What [`two_level`] over `n` elements needs of the workspace ([`TwoLevel::need`]).
pub(crate) fn two_level_storage(
    call: &CallOn<'_>,
    n: usize,
    vector: u32,
    words_per_slot: usize,
) -> TempStorage {
    two_level_plan(call, n, vector, words_per_slot).need
}

impl TempStorage {
    /// [`reduce`] and [`reduce_into`] of `n` elements of `T` on `on` (`&gpu`, or a call with
    /// its tuning: the GPU's multiprocessor count and the reduce policy's `blocks_per_sm` set
    /// the first pass's blocks): 8 bytes a block, and a 16-byte result slot.
    pub fn reduce<'g, T: Element>(on: impl Into<CallOn<'g>>, n: usize) -> Self {
        two_level_storage(&on.into(), n, T::VECTOR, REDUCE_SLOT_WORDS)
    }
}

/// 8-byte words of one block's partial (a `T::Acc`).
const REDUCE_SLOT_WORDS: usize = 1;

/// The parameters of a reduce kernel, from device addresses.
pub(crate) fn reduce_params<In, Acc>(
    input: u64,
    n: usize,
    partials: u64,
    result: u64,
    blocks_done: u64,
) -> ReduceParams<In, Acc> {
    ReduceParams {
        input: input as *const In,
        n,
        partials: partials as *mut Acc,
        result: result as *mut Acc,
        blocks_done: blocks_done as *mut u32,
    }
}

/// The reduce kernels (`device_reduce_<element>_<op>`): the first pass of `T`, the second of its
/// accumulator.
pub(crate) const REDUCE: &Family = families::family("device_reduce");

/// The name of the reduce kernel of element type `element` (or of its accumulator, for the
/// second pass) and operator `op`.
pub(crate) fn reduce_kernel_name(element: &str, op: &str) -> Result<&'static str> {
    Ok(crate::registered(REDUCE, &[element, op])?.name)
}

/// Queue the reduction of `input` into the device address `result` (one T::Acc), its partials
/// carved from `arena`, which holds [`TempStorage::reduce`] of `input`'s length.
pub(crate) fn launch<T: Element, Op: Operator>(
    on: CallOn<'_>,
    input: DeviceView<'_, T>,
    result: u64,
    workspace: &InUse<'_, '_>,
    arena: Arena,
) -> Result<()> {
    let plan = two_level_plan(&on, input.len, T::VECTOR, REDUCE_SLOT_WORDS);
    let module = crate::module(on.gpu())?;
    let kernel = module.kernel::<ReduceParams<T::Raw, T::Acc>>(reduce_kernel_name(T::NAME, Op::NAME)?)?;
    let final_kernel = module
        .kernel::<ReduceParams<T::Acc, T::Acc>>(reduce_kernel_name(<T::Acc as Element>::NAME, Op::NAME)?)?;
    // SAFETY (both closures): `input` holds n elements of T; the workspace gives one 8-byte slot
    // per block (holding a T::Acc), the result slot, and a counter that is 0 between launches
    // (or null), as `ReduceParams` requires; the second pass runs the Acc kernel over the
    // `count` packed partials with `result` as its one partial.
    two_level(
        input.len,
        &plan,
        result,
        workspace,
        arena,
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
            on.stream().launch(
                &final_kernel,
                config,
                &reduce_params(partials, count, result, 0, 0),
            )
        },
    )
}

/// Reduce `input` with `Op`; returns the result on the host (synchronises the stream).
///
/// - `n = 0` gives the operator's identity (0, `+inf` / `MAX` for min, `-inf` / `MIN` for max).
/// - f16 / bf16 are combined in f32 and the result is f32.
/// - Deterministic: bitwise-equal results for the same input on the same GPU.
/// - One block up to the reduce policy's `single_block_max_items` elements; one launch up to
///   its `single_launch_max_items` (the last block to finish reduces the partials, picked by an
///   integer atomic counter); two launches above.
///
/// # Errors
/// Device errors (allocation, launch, a failed kernel).
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 4.0])?;
/// assert_eq!(device::reduce::<f32, Sum>(&gpu, &x, &mut DeviceWorkspace::new())?, 10.0);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn reduce<'a, 'g, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    workspace: &mut DeviceWorkspace,
) -> Result<T::Acc> {
    let (on, input) = (on.into(), input.into());
    check_bound(&on, "reduce: input", &[input.bound])?;
    let workspace = workspace.begin(on.stream(), &TempStorage::reduce::<T>(on, input.len))?;
    let result = workspace.result_slot()?;
    launch::<T, Op>(on, input, result, &workspace, workspace.arena())?;
    workspace.read_result()
}

/// [`reduce`] into `output[0]` on the device, without synchronising (stream-ordered: the result
/// is there for work queued after it on the same stream).
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) for an empty `output`; device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Max};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[3i32, 9, -2])?;
/// let mut out = gpu.alloc_zeroed::<i32>(1)?;
/// device::reduce_into::<i32, Max>(&gpu, &x, &mut out, &mut DeviceWorkspace::new())?;
/// assert_eq!(gpu.download(&out)?, [9]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn reduce_into<'a, 'o, 'g, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    input: impl Into<DeviceView<'a, T>>,
    output: impl Into<DeviceViewMut<'o, T::Acc>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, input, output) = (on.into(), input.into(), output.into());
    check_bound(&on, "reduce_into", &[input.bound, output.bound])?;
    if output.is_empty() {
        return Err(Error::LengthMismatch {
            what: "reduce_into: output",
            expected: 1,
            found: 0,
        });
    }
    let workspace = workspace.begin(on.stream(), &TempStorage::reduce::<T>(on, input.len))?;
    launch::<T, Op>(on, input, output.address, &workspace, workspace.arena())
}

/// [`reduce`] of a host slice: copies it to the device first (with a workspace of its own).
///
/// Takes any call, as [`reduce`]: `&gpu`, `gpu.on(&stream)?`, or a tuned call
/// ([`WithTuning`](crate::WithTuning)). The copy, the reduce (with the call's tuning) and the
/// read of the result are queued in that order on the call's stream, which is synchronised.
///
/// # Errors
/// As [`reduce`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, Min};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// assert_eq!(device::reduce_slice::<u64, Min>(&gpu, &[7, 3, 5])?, 3);
/// let stream = gpu.create_stream()?;
/// assert_eq!(device::reduce_slice::<u64, Min>(gpu.on(&stream)?, &[7, 3, 5])?, 3);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn reduce_slice<'g, T: Element, Op: Operator>(on: impl Into<CallOn<'g>>, input: &[T]) -> Result<T::Acc> {
    let on = on.into();
    let d_in = DeviceVec::from_slice_on(on.stream(), input)?;
    reduce::<T, Op>(on, &d_in, &mut DeviceWorkspace::new())
}
