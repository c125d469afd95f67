//! [`reduce_by_key`] (CUB's `DeviceReduce::ReduceByKey`) and [`unique_by_key`] (CUB's
//! `DeviceSelect::UniqueByKey`): one pass with decoupled look-back over runs of equal
//! consecutive keys (kernels `device::reduce_by_key`).

use super::element::{DeviceView, DeviceViewMut, Element, Operator, Sum, check_bound, check_room};
use super::look_back_delay;
use super::segmented_scan::ScanKey;
use super::temp_storage::TempStorage;
use super::workspace::{DeviceWorkspace, StatusLayout};
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::reduce_by_key_layout;
use gpu_primitives_abi::params::ReduceByKeyParams;
use gpu_primitives_abi::tuning::SegmentedPolicy;

/// The reduce-by-key kernels (`device_reduce_by_key_<key>_<element>_<op>`); unique by key
/// launches the `sum` ones.
const REDUCE_BY_KEY: &Family = families::family("device_reduce_by_key");

/// The plan of one call over `n` items: the items a tile holds, the tiles (one block each) and
/// the dynamic shared memory of a block. Pure: a function of the types and `n` (and of the
/// segmented policy's tile shape, the same on every architecture).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceByKeyPlan {
    /// Items a tile.
    pub tile: usize,
    /// Tiles of the grid (0 for `n = 0`: nothing is launched).
    pub tiles: usize,
    /// Dynamic shared memory a block, in bytes.
    pub shared_bytes: u32,
}

impl ReduceByKeyPlan {
    /// The plan for `n` keys of `K` and values of `T`.
    ///
    /// # Errors
    /// [`Error::TooManyKeys`] for `n` of 2^32 or more (the runs are counted in `u32`).
    pub fn new<K: ScanKey, T: Element>(what: &'static str, n: usize) -> Result<Self> {
        let max = u32::MAX as usize;
        if n > max {
            return Err(Error::TooManyKeys { what, keys: n, max });
        }
        let policy = SegmentedPolicy::for_arch(crate::tuning::SHAPES_ARCH);
        let tile =
            policy.block_threads as usize * policy.reduce_by_key_items(size_of::<K>(), size_of::<T::Acc>());
        let (key_bytes, raw_bytes, acc_bytes) = (size_of::<K>(), size_of::<T::Raw>(), size_of::<T::Acc>());
        let shared_bytes =
            reduce_by_key_layout(tile as u32, key_bytes as u32, raw_bytes as u32, acc_bytes as u32).total;
        Ok(Self {
            tile,
            tiles: n.div_ceil(tile),
            shared_bytes,
        })
    }

    /// The workspace a call of this plan needs: 16 bytes of look-back status a tile, and the
    /// tile counter; nothing for `n = 0`.
    pub fn temp_storage(&self) -> TempStorage {
        if self.tiles == 0 {
            return TempStorage::default();
        }
        TempStorage::look_back(StatusLayout::Pair, self.tiles)
    }
}

impl TempStorage {
    /// [`reduce_by_key`] and [`unique_by_key`] of `n` keys of `K` and values of `T`.
    ///
    /// # Errors
    /// As [`ReduceByKeyPlan::new`].
    pub fn reduce_by_key<K: ScanKey, T: Element>(n: usize) -> Result<Self> {
        Ok(ReduceByKeyPlan::new::<K, T>("reduce_by_key", n)?.temp_storage())
    }
}

/// Where a call writes: each run's first key, then its reduction (reduce by key) or its first
/// value (unique by key), and the number of runs.
struct RunsOut<'o, K, T: Element> {
    keys: DeviceViewMut<'o, K>,
    values: RunValues<'o, T>,
    num_runs: DeviceViewMut<'o, u64>,
}

/// What a call writes for each run beside its key.
enum RunValues<'o, T: Element> {
    /// Reduce by key: the reduction of its values.
    Reductions(DeviceViewMut<'o, T::Acc>),
    /// Unique by key: its first value.
    Firsts(DeviceViewMut<'o, T>),
}

/// Check the views and lengths, then queue the kernel of `Op` (unique by key: `Sum`'s).
fn launch<K: ScanKey, T: Element, Op: Operator>(
    on: CallOn<'_>,
    what: &'static str,
    keys: DeviceView<'_, K>,
    values: DeviceView<'_, T>,
    out: RunsOut<'_, K, T>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (values_bound, values_len, values_address, unique) = match &out.values {
        RunValues::Reductions(r) => (r.bound, r.len(), r.address, false),
        RunValues::Firsts(f) => (f.bound, f.len(), f.address, true),
    };
    check_bound(
        &on,
        what,
        &[
            keys.bound,
            values.bound,
            out.keys.bound,
            values_bound,
            out.num_runs.bound,
        ],
    )?;
    let n = keys.len;
    if values.len != n {
        return Err(Error::LengthMismatch {
            what: "by key: values and keys differ in length",
            expected: n,
            found: values.len,
        });
    }
    let plan = ReduceByKeyPlan::new::<K, T>(what, n)?;
    // Every item may start a run.
    check_room(
        ("by key: num_runs", out.num_runs.len()),
        &[
            ("by key: keys output too short", out.keys.len()),
            ("by key: values output too short", values_len),
        ],
        n,
    )?;
    if n == 0 {
        // SAFETY: one u64 of the caller's count, cleared in stream order.
        return unsafe { on.stream().clear(out.num_runs.address, size_of::<u64>()) };
    }
    let name = crate::registered(REDUCE_BY_KEY, &[K::KERNEL_KEY, T::NAME, Op::NAME])?.name;
    // The key type of the parameters is a pointer's: any key of the kernel's width has the same
    // layout.
    let kernel = crate::module(on.gpu())?.kernel::<ReduceByKeyParams<K, T::Raw, T::Acc>>(name)?;
    let mut workspace = workspace.begin(on.stream(), &plan.temp_storage())?;
    let status = workspace.look_back_tiles(StatusLayout::Pair, plan.tiles)?;
    let policy = crate::tuning::segmented(&on);
    let config =
        LaunchConfig::new(plan.tiles as u32, policy.block_threads).with_shared_mem(plan.shared_bytes);
    let params = ReduceByKeyParams {
        keys: keys.address as *const K,
        values: values.address as *const T::Raw,
        unique_keys: out.keys.address as *mut K,
        reductions: if unique { 0 } else { values_address } as *mut T::Acc,
        firsts: if unique { values_address } else { 0 } as *mut T::Raw,
        num_runs: out.num_runs.address as *mut u64,
        n,
        status,
        look_back_delay_ns: look_back_delay(
            plan.tiles,
            policy.look_back_delay_min_tiles,
            policy.reduce_look_back_delay_ns,
        ),
        unique: unique as u32,
    };
    // SAFETY: the keys and values hold 0 < n < 2^32 items each (checked above); the outputs
    // have room for n runs and `num_runs` one u64, all distinct memory by the views' borrows; the
    // workspace gives 16 bytes of status per tile (16-byte aligned), a counter, the tile base and
    // an epoch newer than every slot's; one block of `block_threads` threads per tile of the plan,
    // with the shared memory of its layout.
    unsafe { on.stream().launch(&kernel, config, &params)? };
    workspace.look_back_launched();
    Ok(())
}

/// For each run of equal consecutive keys, its first key in `unique_keys_out[r]` and the
/// reduction of its values with `Op` in `reductions_out[r]`, in input order; the number of runs
/// in `num_runs_out[0]` (a `u64` in device memory). Stream-ordered: returns once queued. One
/// pass with decoupled look-back (CUB's `DeviceReduce::ReduceByKey`; Merrill & Garland,
/// NVR-2016-002).
///
/// Keys compare by their bits. Both outputs must hold `keys_in.len()` entries (every item may
/// start a run); past the number of runs they are left alone. f16 / bf16 values reduce into
/// f32. Within a run the values combine in input order, but a float reduction of a run that
/// crosses a tile of 4096 items (2048 for 8-byte keys or accumulators) can differ in the last
/// bits from run to run. Integer sums wrap.
///
/// # Errors
/// [`Error::LengthMismatch`] when values and keys differ in length, an output is shorter than
/// the input or `num_runs_out` is empty; [`Error::TooManyKeys`] for 2^32 items or more; all
/// before anything is queued. Device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, Sum};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let keys = DeviceVec::from_slice(&gpu, &[7u32, 7, 3, 3, 3, 7])?;
/// let values = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let mut unique = DeviceVec::<u32>::zeroed(&gpu, 6)?;
/// let mut sums = DeviceVec::<f32>::zeroed(&gpu, 6)?;
/// let mut runs = gpu.alloc_zeroed::<u64>(1)?;
/// let ws = &mut DeviceWorkspace::new();
/// device::reduce_by_key::<u32, f32, Sum>(&gpu, &keys, &values, &mut unique, &mut sums, &mut runs, ws)?;
/// assert_eq!(gpu.download(&runs)?, [3]);
/// assert_eq!(&unique.to_vec(&gpu)?[..3], [7, 3, 7]);
/// assert_eq!(&sums.to_vec(&gpu)?[..3], [3.0, 12.0, 6.0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn reduce_by_key<'k, 'v, 'o, 'g, K: ScanKey, T: Element, Op: Operator>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'k, K>>,
    values_in: impl Into<DeviceView<'v, T>>,
    unique_keys_out: impl Into<DeviceViewMut<'o, K>>,
    reductions_out: impl Into<DeviceViewMut<'o, T::Acc>>,
    num_runs_out: impl Into<DeviceViewMut<'o, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let out = RunsOut {
        keys: unique_keys_out.into(),
        values: RunValues::Reductions(reductions_out.into()),
        num_runs: num_runs_out.into(),
    };
    launch::<K, T, Op>(
        on.into(),
        "reduce_by_key",
        keys_in.into(),
        values_in.into(),
        out,
        workspace,
    )
}

/// For each run of equal consecutive keys, its first key in `keys_out[r]` and the value beside
/// it in `values_out[r]`, in input order; the number of runs in `num_selected_out[0]` (a `u64`
/// in device memory). As [`reduce_by_key`] (CUB's `DeviceSelect::UniqueByKey`); the values are
/// copied, not combined.
///
/// # Errors
/// As [`reduce_by_key`].
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let keys = DeviceVec::from_slice(&gpu, &[1i64, 1, 2, 2, 1])?;
/// let values = DeviceVec::from_slice(&gpu, &[10i32, 11, 20, 21, 30])?;
/// let mut keys_out = DeviceVec::<i64>::zeroed(&gpu, 5)?;
/// let mut values_out = DeviceVec::<i32>::zeroed(&gpu, 5)?;
/// let mut runs = gpu.alloc_zeroed::<u64>(1)?;
/// let ws = &mut DeviceWorkspace::new();
/// device::unique_by_key(&gpu, &keys, &values, &mut keys_out, &mut values_out, &mut runs, ws)?;
/// assert_eq!(gpu.download(&runs)?, [3]);
/// assert_eq!(&keys_out.to_vec(&gpu)?[..3], [1, 2, 1]);
/// assert_eq!(&values_out.to_vec(&gpu)?[..3], [10, 20, 30]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
pub fn unique_by_key<'k, 'v, 'o, 'g, K: ScanKey, T: Element>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'k, K>>,
    values_in: impl Into<DeviceView<'v, T>>,
    keys_out: impl Into<DeviceViewMut<'o, K>>,
    values_out: impl Into<DeviceViewMut<'o, T>>,
    num_selected_out: impl Into<DeviceViewMut<'o, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let out = RunsOut {
        keys: keys_out.into(),
        values: RunValues::Firsts(values_out.into()),
        num_runs: num_selected_out.into(),
    };
    launch::<K, T, Sum>(
        on.into(),
        "unique_by_key",
        keys_in.into(),
        values_in.into(),
        out,
        workspace,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_holds_64_bytes_of_the_wider_a_thread_and_its_staging_fits() {
        let p = ReduceByKeyPlan::new::<u32, f32>("t", 1 << 28).unwrap();
        assert_eq!((p.tile, p.tiles), (4096, 1 << 16));
        // 544 bytes every kernel takes, 4096 keys and 4096 values as padded tiles (one slot
        // after every 32: 4224 slots), two u32.
        assert_eq!(p.shared_bytes, 544 + 4224 * 4 + 4224 * 4 + 16);
        let wide = ReduceByKeyPlan::new::<u64, half::f16>("t", 2049).unwrap();
        assert_eq!((wide.tile, wide.tiles), (2048, 2));
        let f64_values = ReduceByKeyPlan::new::<u32, f64>("t", 0).unwrap();
        assert_eq!((f64_values.tile, f64_values.tiles), (2048, 0));
        assert_eq!(f64_values.temp_storage(), TempStorage::default());
        assert_ne!(p.temp_storage(), TempStorage::default());
    }

    #[test]
    fn more_than_u32_max_items_are_refused_by_name() {
        let n = u32::MAX as usize + 1;
        match ReduceByKeyPlan::new::<u32, f32>("reduce_by_key", n) {
            Err(Error::TooManyKeys { what, keys, max }) => {
                assert_eq!((what, keys, max), ("reduce_by_key", n, u32::MAX as usize));
            }
            other => panic!("{other:?}"),
        }
        assert!(ReduceByKeyPlan::new::<u64, f64>("t", u32::MAX as usize).is_ok());
    }
}
