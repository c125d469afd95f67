//! Probe kernels for the block loads, stores and exchanges (`block::load`, `block::store`,
//! `block::exchange`), for 2-, 4- and 8-byte items, so the GPU tests can sweep block sizes,
//! items per thread and tile edges against a CPU model of each arrangement.

use crate::block::{
    BlockExchangeStorage, block_blocked_to_striped, block_blocked_to_warp_striped, block_load_direct_blocked,
    block_load_direct_striped, block_load_direct_warp_striped, block_load_transposed,
    block_load_warp_transposed, block_scatter_to_blocked, block_scatter_to_striped,
    block_scatter_to_warp_striped, block_store_direct_blocked, block_store_direct_striped,
    block_store_direct_warp_striped, block_store_transposed, block_store_warp_transposed,
    block_striped_to_blocked, block_warp_striped_to_blocked,
};
use crate::shared::{SharedValue, dynamic_shared};
use crate::sync::block_barrier;
use crate::thread::{block_dim, block_idx, thread_idx};
use crate::unroll::unrolled_for;

/// The parameters of the `probe_exchange_<T>_items<K>` kernels, in their order.
#[derive(Clone, Copy)]
struct ExchangeProbe<T> {
    /// `n` items.
    input: *const T,
    /// `block_dim() * ITEMS` per block: each thread's items after the load, thread `t`'s item
    /// `k` at `t * ITEMS + k` of its block's.
    registers: *mut T,
    /// `n` items: what the store wrote (the rest left as the host filled it).
    output: *mut T,
    /// `block_dim() * ITEMS` per block: the scatters' rank of thread `t`'s item `k` (blocked),
    /// each block's a permutation of its tile's positions.
    ranks: *const u32,
    /// Number of items.
    n: usize,
    /// How to load (see `exchange_probe`).
    load: u32,
    /// How to store (see `exchange_probe`).
    store: u32,
    /// What the loads give positions at or past `n`.
    past_end: T,
}

/// Block `b` loads tile `b` of `block_dim() * ITEMS` items (its `valid` = the items below `n`)
/// and dumps each thread's registers to `registers`, then stores them to `output`.
///
/// `load`: 0 direct blocked, 1 direct striped, 2 direct warp-striped, 3 transposed (blocked), 4
/// warp-transposed (blocked), 5 direct blocked then blocked -> striped, 6 direct blocked then
/// blocked -> warp-striped, 7 direct striped then striped -> blocked, 8 direct warp-striped then
/// warp-striped -> blocked, 9 / 10 / 11 direct blocked then scattered by `ranks` to blocked /
/// striped / warp-striped. `store`: 0 direct blocked, 1 direct striped, 2 direct warp-striped, 3
/// transposed, 4 warp-transposed (the last two take blocked items).
///
/// # Safety
/// The parameters' sizes above; the modes with a warp-striped arrangement need a block of whole
/// warps; the dynamic shared memory holds `BlockExchangeStorage::<T>::slots(block_dim(), ITEMS)`.
#[inline(always)]
unsafe fn exchange_probe<T: SharedValue, const ITEMS: usize>(p: ExchangeProbe<T>) {
    let tile_len = block_dim() as usize * ITEMS;
    let first = block_idx() as usize * tile_len;
    let valid = (p.n - first).min(tile_len) as u32;
    // SAFETY: (whole body) the launch's dynamic shared memory is the storage (the test's
    // contract); every thread of the block runs the same modes; the tile's `valid` items are
    // below n; `registers` and `ranks` hold the tile; a barrier separates the storage's uses.
    unsafe {
        let storage = BlockExchangeStorage::<T>::new(dynamic_shared::<T>(0));
        let tile = p.input.add(first);
        let mut items = match p.load {
            1 | 7 => block_load_direct_striped::<T, ITEMS>(tile, valid, p.past_end),
            2 | 8 => block_load_direct_warp_striped::<T, ITEMS>(tile, valid, p.past_end),
            3 => block_load_transposed::<T, ITEMS>(tile, valid, p.past_end, storage),
            4 => block_load_warp_transposed::<T, ITEMS>(tile, valid, p.past_end, storage),
            _ => block_load_direct_blocked::<T, ITEMS>(tile, valid, p.past_end),
        };
        let mut ranks = [0u32; ITEMS];
        let own = first + thread_idx() as usize * ITEMS;
        unrolled_for(ITEMS, |k| ranks[k] = *p.ranks.add(own + k));
        match p.load {
            5 => block_blocked_to_striped(&mut items, storage),
            6 => block_blocked_to_warp_striped(&mut items, storage),
            7 => block_striped_to_blocked(&mut items, storage),
            8 => block_warp_striped_to_blocked(&mut items, storage),
            9 => block_scatter_to_blocked(&mut items, &ranks, storage),
            10 => block_scatter_to_striped(&mut items, &ranks, storage),
            11 => block_scatter_to_warp_striped(&mut items, &ranks, storage),
            _ => {}
        }
        unrolled_for(ITEMS, |k| *p.registers.add(own + k) = items[k]);
        block_barrier();
        let out = p.output.add(first);
        match p.store {
            1 => block_store_direct_striped(out, valid, &items),
            2 => block_store_direct_warp_striped(out, valid, &items),
            3 => block_store_transposed(out, valid, items, storage),
            4 => block_store_warp_transposed(out, valid, items, storage),
            _ => block_store_direct_blocked(out, valid, &items),
        }
    }
}

macro_rules! exchange_probes {
    ($($name:ident = $ty:ty, $items:literal;)*) => {$(
        /// Exchange probe (see `exchange_probe`) of this item type and items per thread.
        ///
        /// # Safety
        /// As `exchange_probe`: `input` and `output` hold `n` items, `registers` and `ranks`
        /// one per thread and item of the grid; one block per tile; dynamic shared memory of
        /// `BlockExchangeStorage::slots(block_dim(), ITEMS)` items.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const $ty, registers: *mut $ty, output: *mut $ty, ranks: *const u32, n: usize,
            load: u32, store: u32, past_end: $ty,
        ) {
            let p = ExchangeProbe { input, registers, output, ranks, n, load, store, past_end };
            // SAFETY: forwarded.
            unsafe { exchange_probe::<$ty, $items>(p) }
        }
    )*};
}
exchange_probes!(
    probe_exchange_u32_items1 = u32, 1;
    probe_exchange_u32_items2 = u32, 2;
    probe_exchange_u32_items3 = u32, 3;
    probe_exchange_u32_items4 = u32, 4;
    probe_exchange_u32_items7 = u32, 7;
    probe_exchange_u32_items16 = u32, 16;
    probe_exchange_u64_items3 = u64, 3;
    probe_exchange_u64_items8 = u64, 8;
    probe_exchange_u16_items5 = u16, 5;
    probe_exchange_u16_items32 = u16, 32;
);
