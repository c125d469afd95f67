//! [`top_k`] per row (torch's `topk(dim=-1)`): radix select on the kernels of `device::top_k`
//! up to [`TOP_K_SELECT_MAX_K`] keys per row, the segmented sort's first k past it.

use super::element::{Bound, DeviceView, DeviceViewMut, check_bound};
use super::segmented::Segments;
use super::sort::{SegmentedCall, layout, segmented_launch as segmented_sort, segmented_scratch};
use super::sort::{SortBuffers, SortKey, SortOptions, Values, check_len, check_sort_len};
use super::temp_storage::TempStorage;
use super::workspace::DeviceWorkspace;
use crate::{CallOn, Error, LaunchConfig, Result};
use gpu_primitives_abi::families::{self, Family};
use gpu_primitives_abi::layout::top_k_layout;
use gpu_primitives_abi::layout::{SORT_BLOCK, TOP_K_SELECT_MAX_K};
use gpu_primitives_abi::params::TopKParams;

/// The top-k by radix select (`device_top_k_<key>`).
const TOP_K: &Family = families::family("device_top_k");

/// Whether a top-k of `k` keys a row sorts each row (the segmented sort's first k) rather than
/// selecting by radix.
fn sorts_rows(k: usize) -> bool {
    k > TOP_K_SELECT_MAX_K as usize
}

impl TempStorage {
    /// [`top_k`] of `k` keys of each row of `row_len` keys of `K`, `n` keys in all: nothing up
    /// to [`TOP_K_SELECT_MAX_K`]; for larger `k` each row is sorted by one block, through two
    /// alternates of each key and of its `u32` index where a row is longer than a tile
    /// (`SORT_BLOCK * K::ITEMS` keys).
    ///
    /// # Errors
    /// Sizes past the address space.
    pub fn top_k<K: SortKey>(n: usize, row_len: usize, k: usize) -> Result<Self> {
        if !sorts_rows(k) || row_len <= SORT_BLOCK as usize * K::ITEMS {
            return Ok(Self::default());
        }
        // The rows keep their first k: none goes through the device-wide sort.
        segmented_scratch::<K>(n, size_of::<u32>())
    }
}

/// The `k` largest (or smallest) keys of each row of `keys_in` (rows of `row_len`), in order,
/// and their indices within the row (torch's `topk(k, dim=-1, largest, sorted=True)`):
/// `values_out[r * k + j]` is row `r`'s `j`-th largest key (smallest with `largest` false) and
/// `indices_out[r * k + j]` its column. Ties go to the lower column; with `largest`, NaNs come
/// first (they sort after +infinity, see [`SortKey`]). The result is the first `k` of the row's
/// stable sort, so it is deterministic. Stream-ordered; `keys_in` is not modified.
///
/// - `k <= TOP_K_SELECT_MAX_K` (256): **radix select**, one block of [`SORT_BLOCK`] threads per
///   row, no workspace. A threshold first: the k-th smallest of the threads' best keys (for
///   `k <= 16` by sorting each warp's 32 with a network of shuffles and ranking the warps'
///   first k; past it by radix select over those 256, one 8-bit digit per pass from the top),
///   the same work on any input's distribution; the keys up to it
///   (at least k, and for random keys a few more) are gathered in shared memory and ordered by
///   counting. Where they are too many (keys equal or close to the k-th), the k-th key itself is
///   found by radix select over the whole row (a count of the matching keys' digits per pass;
///   at most 4 passes for 4-byte keys) and the keys before it, then the first of its ties by
///   column, are gathered. A row of up to 4096 keys of up to 4 bytes (2048 of 8,
///   `TopKPolicy::items_for`) is read from global memory once and kept in registers; a longer one is read
///   once per pass.
/// - larger `k`: each row is sorted by one block ([`segmented_sort_keys`](super::segmented_sort_keys);
///   in shared memory up to a tile) and its first `k` written.
///
/// `k == 0` (or no rows) queues nothing.
///
/// # Errors
/// [`Error::KPastInput`] for `k > row_len`; [`Error::NotWholeRows`] for rows that do not divide
/// the input; [`Error::TooManyKeys`] for a row past [`SORT_MAX_KEYS`](crate::device::SORT_MAX_KEYS) keys;
/// [`Error::LengthMismatch`] when an output is shorter than `rows * k`;
/// device errors. Nothing is launched on an error.
///
/// # Example
/// ```no_run
/// use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace};
/// let gpu = gpu_primitives::open_gpu(0)?;
/// let x = DeviceVec::from_slice(&gpu, &[3.0f32, 1.0, 2.0, 0.5, -1.0, 9.0])?; // 2 rows of 3
/// let mut values = DeviceVec::<f32>::zeroed(&gpu, 4)?;
/// let mut indices = DeviceVec::<u32>::zeroed(&gpu, 4)?;
/// let mut workspace = DeviceWorkspace::new();
/// device::top_k(&gpu, &x, 3, 2, true, &mut values, &mut indices, &mut workspace)?;
/// assert_eq!(values.to_vec(&gpu)?, [3.0, 2.0, 9.0, 0.5]);
/// assert_eq!(indices.to_vec(&gpu)?, [0, 2, 2, 0]);
/// # Ok::<(), gpu_primitives::Error>(())
/// ```
#[allow(clippy::too_many_arguments)] // torch's topk: input, k, dim's length, largest, two outputs.
pub fn top_k<'a, 'o, 'i, 'g, K: SortKey>(
    on: impl Into<CallOn<'g>>,
    keys_in: impl Into<DeviceView<'a, K>>,
    row_len: usize,
    k: usize,
    largest: bool,
    values_out: impl Into<DeviceViewMut<'o, K>>,
    indices_out: impl Into<DeviceViewMut<'i, u32>>,
    workspace: &mut DeviceWorkspace,
) -> Result<()> {
    let (on, keys_in, values_out, indices) =
        (on.into(), keys_in.into(), values_out.into(), indices_out.into());
    check_bound(&on, "top_k", &[keys_in.bound, values_out.bound, indices.bound])?;
    let n = keys_in.len;
    if k > row_len {
        return Err(Error::KPastInput {
            what: "top_k",
            k,
            most: row_len,
        });
    }
    check_sort_len("top_k (a row)", row_len)?;
    let (rows, ..) = layout("top_k", Segments::Rows(row_len), n)?;
    check_len("top_k: values_out", rows * k, values_out.len)?;
    check_len("top_k: indices_out", rows * k, indices.len)?;
    if rows == 0 || k == 0 {
        return Ok(());
    }
    if sorts_rows(k) {
        let call = SegmentedCall {
            buffers: SortBuffers {
                n,
                keys_in: keys_in.address,
                keys_out: values_out.address,
                values: Values::Pairs {
                    input: None,
                    output: indices.address,
                    bytes: 4,
                },
                bounds: [keys_in.bound, values_out.bound, Bound::default(), indices.bound],
            },
            segments: Segments::Rows(row_len),
            keep: Some(k),
        };
        let options = SortOptions::descending_if(largest);
        return segmented_sort::<K>(on, "top_k", call, options, workspace);
    }

    let name = crate::registered(TOP_K, &[K::NAME])?.name;
    let kernel = crate::module(on.gpu())?.kernel::<TopKParams<K::Raw>>(name)?;
    let shared = top_k_layout(size_of::<K::Raw>() as u32).total;
    // A block a row: past the most blocks a grid holds, a launch each chunk of rows, the
    // pointers moved on.
    for (first, chunk) in LaunchConfig::grid_chunks(rows) {
        let config = LaunchConfig::new(chunk, SORT_BLOCK).with_shared_mem(shared);
        let params = TopKParams::<K::Raw> {
            keys: (keys_in.address as *const K::Raw).wrapping_add(first * row_len),
            values_out: (values_out.address as *mut K::Raw).wrapping_add(first * k),
            indices_out: (indices.address as *mut u32).wrapping_add(first * k),
            rows: chunk as usize,
            row_len,
            k: k as u32,
            largest: largest as u32,
        };
        // SAFETY: rows `first .. first + chunk` of the `rows * row_len` keys in the input and
        // of the `rows * k` places in each output (checked); 1 <= k <= min(row_len,
        // TOP_K_SELECT_MAX_K) and row_len < 2^32 (checked); `chunk` blocks, one a row; the
        // layout's shared memory.
        unsafe { on.stream().launch(&kernel, config, &params)? };
    }
    Ok(())
}
