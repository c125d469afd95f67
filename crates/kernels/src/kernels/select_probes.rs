//! A kernel of the kind a project's own kernel crate writes: the library's compaction agent
//! ([`select_tile`]) with a predicate the library does not ship, its look-back status from the
//! host's `DeviceWorkspace::look_back_status`, so that the GPU tests check that path end to end.

use crate::device::select::{ByPredicate, SelectOutput, SelectPredicate, SelectStorage, select_tile};
use crate::device::tile_status::{LookBackStatus, TileStatus};

/// Keeps the `u32` items with an odd number of set bits: a test no [`Compare`] interval
/// expresses.
///
/// [`Compare`]: crate::device::select::Compare
#[derive(Clone, Copy)]
pub struct OddBitCount;

impl SelectPredicate<u32> for OddBitCount {
    #[inline(always)]
    fn keep(&self, item: u32) -> bool {
        item.count_ones() % 2 == 1
    }
}

/// The parameters of `probe_select_odd_bit_count_u32`, in their order.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct OddBitCountProbe {
    /// `n` items.
    input: *const u32,
    /// Room for `n` items: the kept ones from 0 (when partitioning, the rejected ones from the
    /// end down, in reverse input order).
    output: *mut u32,
    /// One `u64`: the number kept.
    num_selected: *mut u64,
    /// Number of items.
    n: usize,
    /// This launch's look-back status (one call of `DeviceWorkspace::look_back_status`).
    status: LookBackStatus,
    /// Non-zero: partition (write the rejected items too).
    partition: u32,
}

/// Items a thread: 4-item rows (one 16-byte load each), 2 rows.
const ITEMS: usize = 8;

/// Select (or partition) `input[0..n]` by [`OddBitCount`].
///
/// Launch: `ceil(n / (block * 8))` blocks of any whole number of warps, and
/// `select_shared_bytes(block * 8, 4)` bytes of dynamic shared memory.
///
/// # Safety
/// As [`select_tile`], with the buffers [`OddBitCountProbe`] describes (`input` 16-byte
/// aligned).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn probe_select_odd_bit_count_u32(p: OddBitCountProbe) {
    let output = SelectOutput {
        items: p.output,
        num_selected: p.num_selected,
        partition: p.partition != 0,
    };
    // SAFETY: the launch's dynamic shared memory is sized as the kernel's docs say and used for
    // nothing else; the rest is forwarded from the kernel's contract.
    unsafe {
        select_tile::<u32, _, 4, ITEMS>(
            p.input,
            p.n,
            ByPredicate(OddBitCount),
            output,
            TileStatus::from(p.status),
            0,
            SelectStorage::in_dynamic_shared(),
        )
    };
}
