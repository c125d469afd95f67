//! [`top_k_of_all`]: the `k` best keys of a whole array (CUB's `DeviceTopK`) by radix select
//! over the grid, on the steps of the kernels' `device::radix_select`.

use super::element::{DeviceView, DeviceViewMut, check_bound};
use super::sort::{SortKey, SortOptions, check_len, check_sort_len, sort_keys_in_place, sort_pairs_in_place};
use super::temp_storage::{Region, TempStorage};
use super::workspace::DeviceWorkspace;
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::radix_select_shared_bytes;
use gpu_primitives_abi::layout::{RADIX_BITS, RADIX_DIGITS};
use gpu_primitives_abi::params::{RadixSelectTopKParams, radix_select_step};

/// The steps of the device-wide top-k (`device_radix_select_top_k_<key>`).
const RADIX_SELECT: &Family = families::family("device_radix_select_top_k");

impl TempStorage {
    /// [`top_k_of_all`] of `k` keys of `K` on `on` (`&gpu`, or a call with its tuning): its
    /// digit counts and gather counter (257 `u32`) and the sorts of its `k` results in place
    /// (the indices, then the pairs by key).
    ///
    /// # Errors
    /// As the sorts: more than [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys.
    pub fn top_k_of_all<'g, K: SortKey>(on: impl Into<CallOn<'g>>, k: usize) -> Result<Self> {
        let ascending = SortOptions::ascending();
        top_k_of_all_storage::<K>(on.into(), k, (ascending, ascending))
    }
}

/// The counts' region of [`top_k_of_all`]: the digit counts and, past them, the gather's
/// counter (`u32` each).
fn counts_region() -> (TempStorage, Region) {
    TempStorage::region((RADIX_DIGITS as usize + 1) * size_of::<u32>())
}

/// What [`top_k_of_all`] of `k` keys of `K` needs with the sorts' options (by index, by key):
/// its steps, then each sort, one after another in stream order (each writes its scratch
/// before reading it), so that they share the arena: the largest of the three.
fn top_k_of_all_storage<K: SortKey>(
    on: CallOn<'_>,
    k: usize,
    (by_index, by_key): (SortOptions, SortOptions),
) -> Result<TempStorage> {
    let by_index = TempStorage::sort_keys::<u64>(on, k, by_index)?;
    let by_key = TempStorage::sort_pairs::<K, u64>(on, k, by_key)?;
    Ok(counts_region().0.max(by_index).max(by_key))
}

/// Where a radix select stands: the pair (ordered bits, index) has its bits fixed from the
/// top, the key's from `key_shift` up (`key_prefix`), then the index's from `index_shift` up
/// (`index_prefix`); `remaining` of the `k` are still to be found among the keys whose fixed
/// bits equal the prefixes (the others below them are selected).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) key_prefix: u64,
    pub(crate) key_shift: u32,
    pub(crate) index_prefix: u32,
    pub(crate) index_shift: u32,
    pub(crate) remaining: u64,
}

impl Selection {
    /// The start for the `k` best of `n` keys of `key_bits` bits: nothing fixed; the index's
    /// bits start at the fewest whole digits that hold `n - 1`.
    pub(crate) fn new(key_bits: u32, n: usize, k: usize) -> Self {
        let index_bits = usize::BITS - (n.max(1) - 1).leading_zeros();
        Self {
            key_prefix: 0,
            key_shift: key_bits,
            index_prefix: 0,
            index_shift: index_bits.next_multiple_of(RADIX_BITS),
            remaining: k as u64,
        }
    }

    /// Fix the next digit from this pass's `counts` of the candidates' next digit: the digit
    /// where the `remaining`-th candidate falls. Returns whether the selection is complete (the
    /// candidates of that digit are exactly those still needed); `None` where the counts cannot
    /// be a pass's (fewer candidates than needed, or a digit past the last bit).
    pub(crate) fn step(&mut self, counts: &[u32; RADIX_DIGITS as usize]) -> Option<bool> {
        let mut below = 0u64;
        for (digit, &count) in counts.iter().enumerate() {
            let count = u64::from(count);
            if below + count < self.remaining {
                below += count;
                continue;
            }
            self.remaining -= below;
            if self.key_shift > 0 {
                self.key_shift -= RADIX_BITS;
                self.key_prefix = (self.key_prefix << RADIX_BITS) | digit as u64;
            } else if self.index_shift > 0 {
                self.index_shift -= RADIX_BITS;
                self.index_prefix = (self.index_prefix << RADIX_BITS) | digit as u32;
            } else {
                return None;
            }
            return Some(count == self.remaining);
        }
        None
    }
}

/// [`top_k_of_all`]'s arguments past the views' bounds, checked without a GPU: `k` within the
/// `n` keys, at most [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys, their indices from `first_index` within `u64`,
/// outputs of at least `k`.
fn check_arguments(
    n: usize,
    k: usize,
    first_index: u64,
    values_out: usize,
    indices_out: usize,
) -> Result<()> {
    if k > n {
        return Err(Error::KPastInput {
            what: "top_k_of_all",
            k,
            most: n,
        });
    }
    check_sort_len("top_k_of_all", n)?;
    if n > 0 && first_index.checked_add(n as u64 - 1).is_none() {
        return Err(Error::IndicesPastU64 {
            what: "top_k_of_all",
            first_index,
            keys: n,
        });
    }
    check_len("top_k_of_all: values_out", k, values_out)?;
    check_len("top_k_of_all: indices_out", k, indices_out)
}

/// The `k` largest (or smallest) keys of the whole of `keys_in` and their indices (CUB's
/// `DeviceTopK`, torch's `topk(x.flatten(), k, largest, sorted=True)`), best first:
/// `values_out[j]` is the `j`-th largest key (smallest with `largest` false) and
/// `indices_out[j]` its index in `keys_in` plus `first_index` (0 for the array's own positions;
/// the first global position of a shard of data sharded across GPUs). Ties go to the lower
/// index, and with `largest` NaNs come first (they sort after +infinity, see [`SortKey`]): the
/// result is the first `k` of the array's stable sort, so it is deterministic. `keys_in` is not
/// modified; only the first `k` places of each output are written.
///
/// **Method**: radix select (RadiK, Li et al., ICS 2024, as CUB 3.2's `DeviceTopK`). The keys
/// are ranked by the pair (ordered bits, index), a total order; each pass counts the next 8-bit
/// digit of the keys still candidates (one read of the input, 256 counts downloaded) and fixes
/// it, until the keys at or below the prefix are exactly `k`: at most one pass a byte of the
/// key, and only where keys equal to the k-th are left over, a pass a byte of the index (up
/// to 4 more). One more read gathers their indices; the `k` indices are sorted in place, their
/// keys loaded beside them, and the pairs sorted stably by key.
///
/// **Synchronises** the stream once a pass and once after the gather (the host fixes each
/// digit); the sorts are queued and not waited for.
///
/// Temporary storage: [`TempStorage::top_k_of_all`]. `k == 0` or an empty input queues nothing.
///
/// # Errors
/// [`Error::KPastInput`] for `k` past the input's length; [`Error::IndicesPastU64`] for indices
/// past `u64::MAX`; [`Error::TooManyKeys`] for more than [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys;
/// [`Error::LengthMismatch`] for an output shorter than `k`; nothing is launched on an argument
/// error. [`Error::InvalidLaunch`] where the digit counts or the gather contradict each other
/// (a defect, not an argument error); device errors.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[3.0f32, 1.0, 9.0, 3.0, -1.0])?;
/// let mut values = DeviceVec::<f32>::zeroed(&gpu, 3)?;
/// let mut indices = DeviceVec::<u64>::zeroed(&gpu, 3)?;
/// let mut workspace = DeviceWorkspace::new();
/// device::top_k_of_all(&gpu, &x, 3, true, 0, &mut values, &mut indices, &mut workspace)?;
/// assert_eq!(values.to_vec(&gpu)?, [9.0, 3.0, 3.0]);
/// assert_eq!(indices.to_vec(&gpu)?, [2, 0, 3]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
#[allow(clippy::too_many_arguments)] // CUB's DeviceTopK: input, k, order, the indices' start, two outputs.
pub fn top_k_of_all<'a, 'o, 'i, 'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    k: usize,
    largest: bool,
    first_index: u64,
    values_out: impl Into<DeviceViewMut<'o, K>>,
    indices_out: impl Into<DeviceViewMut<'i, u64>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, keys_in, mut values_out, mut indices_out) =
        (on.into(), keys_in.into(), values_out.into(), indices_out.into());
    check_bound(
        &on,
        "top_k_of_all",
        &[keys_in.bound, values_out.bound, indices_out.bound],
    )?;
    let n = keys_in.len;
    check_arguments(n, k, first_index, values_out.len, indices_out.len)?;
    if k == 0 {
        return Ok(());
    }

    let kernel = crate::module(on.gpu())?
        .kernel::<RadixSelectTopKParams<K::Raw>>(crate::registered(RADIX_SELECT, &[K::NAME])?.name)?;
    let vector = 16 / size_of::<K::Raw>();
    let policy = crate::tuning::top_k(on.gpu());
    let block = policy.radix_select_block_threads;
    let blocks = (on.gpu().info().multiprocessors * policy.radix_select_blocks_per_sm)
        .min(n.div_ceil(block as usize * vector) as u32)
        .max(1);
    let config = LaunchConfig::new(blocks, block).with_shared_mem(radix_select_shared_bytes());
    let stream = on.stream();
    let mut selection = Selection::new(K::BITS, n, k);
    let mut params = RadixSelectTopKParams::<K::Raw> {
        keys: keys_in.address as *const K::Raw,
        n,
        counts: std::ptr::null_mut(),
        gathered: std::ptr::null_mut(),
        indices: indices_out.address as *mut u64,
        values_out: values_out.address as *mut K::Raw,
        k,
        index_offset: first_index,
        key_prefix: 0,
        key_shift: 0,
        index_prefix: 0,
        index_shift: 0,
        largest: largest as u32,
        step: radix_select_step::COUNT_DIGITS,
    };
    let at = |params: &mut RadixSelectTopKParams<K::Raw>, s: &Selection| {
        params.key_prefix = s.key_prefix;
        params.key_shift = s.key_shift;
        params.index_prefix = s.index_prefix;
        params.index_shift = s.index_shift;
    };
    // The sorts' options, known before anything is queued: the workspace grows once, here, for
    // the steps and both sorts (whose own uses below then find it grown).
    let index_bits = u64::BITS - (first_index + n as u64 - 1).leading_zeros();
    let by_index = SortOptions::ascending().bits(0..index_bits.max(1));
    let by_key = SortOptions::descending_if(largest);
    let need = top_k_of_all_storage::<K>(on, k, (by_index, by_key))?;
    {
        let workspace = workspace.begin(stream, &need)?;
        let (_, counts_region) = counts_region();
        loop {
            // The digit counts and, past them, the gather's counter: cleared each call.
            let counts = workspace.carve_zeroed(
                workspace.arena(),
                counts_region,
                (RADIX_DIGITS as usize + 1) * size_of::<u32>(),
            )?;
            params.counts = counts as *mut u32;
            params.gathered = (counts as *mut u32).wrapping_add(RADIX_DIGITS as usize);
            at(&mut params, &selection);
            // SAFETY: n keys (checked below 2^32); RADIX_DIGITS zeroed counters; the prefixes of
            // a selection that is not complete (some digit left to fix); the shared memory of
            // the counters.
            unsafe { stream.launch(&kernel, config, &params)? };
            let mut host = [0u32; RADIX_DIGITS as usize];
            // SAFETY: the RADIX_DIGITS counters, written by the launch queued before.
            unsafe { stream.copy_to_host(counts, &mut host)? };
            match selection.step(&host) {
                Some(true) => break,
                Some(false) => {}
                None => {
                    return Err(Error::InvalidLaunch(format!(
                        "top_k_of_all: the digit counts {:?}.. do not hold the {} keys still needed",
                        &host[..8],
                        selection.remaining
                    )));
                }
            }
        }
        at(&mut params, &selection);
        params.step = radix_select_step::GATHER;
        // SAFETY: the gather's counter is zeroed (the last `carve_zeroed`); it writes at most k
        // indices, the outputs' first k places (checked).
        unsafe { stream.launch(&kernel, config, &params)? };
        let mut gathered = [0u32];
        // SAFETY: the gather's counter, one u32 past the counts, written by the gather.
        unsafe { stream.copy_to_host(params.gathered as u64, &mut gathered)? };
        if gathered[0] as usize != k {
            return Err(Error::InvalidLaunch(format!(
                "top_k_of_all: the gather found {} keys at or below the selected prefix, not k = {k}",
                gathered[0]
            )));
        }
    }
    // In the stable sort's order: the indices sorted, then their keys loaded beside them (the
    // gather wrote the indices in no order), then the pairs sorted stably by key.
    sort_keys_in_place::<u64>(on, indices_out.slice(0..k), by_index, workspace)?;
    params.step = radix_select_step::LOAD_KEYS;
    // The counters lay in the arena use that ended above (the index sort may have carved the
    // same bytes since): the key load reads neither, and null says so.
    params.counts = core::ptr::null_mut();
    params.gathered = core::ptr::null_mut();
    let load = LaunchConfig::new(blocks.min(k.div_ceil(block as usize) as u32), block)
        .with_shared_mem(radix_select_shared_bytes());
    // SAFETY: the k indices the gather wrote (checked: exactly k), sorted in place, each
    // first_index + i for an i < n; k keys written to values_out's first k places (checked).
    unsafe { stream.launch(&kernel, load, &params)? };
    sort_pairs_in_place::<K, u64>(
        on,
        values_out.slice(0..k),
        indices_out.slice(0..k),
        by_key,
        workspace,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_without_a_gpu() {
        assert!(check_arguments(6, 3, 0, 3, 3).is_ok());
        assert!(check_arguments(0, 0, u64::MAX, 0, 0).is_ok());
        // The last index, u64::MAX, fits; one more does not.
        assert!(check_arguments(6, 1, u64::MAX - 5, 1, 1).is_ok());
        let r = check_arguments(6, 1, u64::MAX - 4, 1, 1);
        assert!(
            matches!(
                r,
                Err(Error::IndicesPastU64 {
                    first_index,
                    keys: 6,
                    ..
                }) if first_index == u64::MAX - 4
            ),
            "{r:?}"
        );
        let message = r.unwrap_err().to_string();
        assert!(
            message.contains("top_k_of_all") && message.contains(&(u64::MAX - 4).to_string()),
            "{message}"
        );
        assert!(matches!(
            check_arguments(6, 7, 0, 7, 7),
            Err(Error::KPastInput { k: 7, most: 6, .. })
        ));
        assert!(matches!(
            check_arguments(6, 3, 0, 2, 3),
            Err(Error::LengthMismatch { .. })
        ));
    }

    /// The selection against a sort: the k best of `keys` (smallest pairs (bits, index)) are
    /// those whose fixed bits are at most the prefixes once `step` says complete.
    fn select(keys: &[u8], k: usize) -> Vec<usize> {
        let mut s = Selection::new(8, keys.len(), k);
        loop {
            let mut counts = [0u32; RADIX_DIGITS as usize];
            for (i, &key) in keys.iter().enumerate() {
                let (key_top, index_top) = tops(key, i, &s);
                if key_top == s.key_prefix && index_top == s.index_prefix {
                    let digit = if s.key_shift > 0 {
                        key
                    } else {
                        (i >> (s.index_shift - 8)) as u8
                    };
                    counts[digit as usize] += 1;
                }
            }
            if s.step(&counts).expect("a pass's counts") {
                break;
            }
        }
        (0..keys.len())
            .filter(|&i| tops(keys[i], i, &s) <= (s.key_prefix, s.index_prefix))
            .collect()
    }

    fn tops(key: u8, i: usize, s: &Selection) -> (u64, u32) {
        let key_top = if s.key_shift >= 8 { 0 } else { u64::from(key) };
        let index_top = if s.index_shift >= 32 {
            0
        } else {
            (i as u32) >> s.index_shift
        };
        (key_top, index_top)
    }

    #[test]
    fn the_selection_is_the_first_k_of_the_stable_sort() {
        let cases: [&[u8]; 5] = [
            &[5, 1, 5, 1, 5],
            &[7; 300],
            &[0, 255, 3, 3, 3, 9, 0],
            &[1],
            &[2, 1],
        ];
        for keys in cases {
            for k in 1..=keys.len() {
                let mut order: Vec<usize> = (0..keys.len()).collect();
                order.sort_by_key(|&i| (keys[i], i));
                let mut want = order[..k].to_vec();
                want.sort();
                assert_eq!(select(keys, k), want, "{keys:?} k = {k}");
            }
        }
    }

    proptest::proptest! {
        /// Random keys of few or many distinct values (ties through the index's digits), every
        /// k: the selection is the first k of the stable sort.
        #[test]
        fn the_selection_of_random_keys_is_the_first_k(
            keys in proptest::collection::vec(0u8..=255, 1..700),
            few in proptest::bool::ANY,
            k in 1usize..700,
        ) {
            let keys: Vec<u8> = if few { keys.iter().map(|k| k % 3).collect() } else { keys };
            let k = k.min(keys.len());
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.sort_by_key(|&i| (keys[i], i));
            let mut want = order[..k].to_vec();
            want.sort();
            proptest::prop_assert_eq!(select(&keys, k), want);
        }
    }

    #[test]
    fn counts_short_of_the_keys_needed_are_refused() {
        let mut s = Selection::new(32, 10, 5);
        let mut counts = [0u32; RADIX_DIGITS as usize];
        counts[3] = 4;
        assert_eq!(s.step(&counts), None);
    }
}
