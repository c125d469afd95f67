//! The block loads, stores and exchanges (`probe_exchange_<T>_items<K>`): 2-, 4- and 8-byte
//! items, 1 to 32 items per thread, blocks of 1 to 1024 threads (whole warps where an
//! arrangement is warp-striped), lengths around the tile edges; every load mode's registers and
//! every store's output against a CPU model of the arrangements (under the sanitizers, fewer
//! block sizes and lengths).

use crate::support::{check_slices, ok, rng, tile_edge_lengths, under_sanitizers};
use gpu_primitives::{Gpu, LaunchConfig, WARP_SIZE};
use gpu_primitives_runtime::DeviceCopy;
use libtest_mimic::Failed;
use rand::Rng;
use rand::seq::SliceRandom;

pub const TESTS: &[(&str, crate::support::GpuTest)] = &[(
    "block_exchange::loads_stores_exchanges_scatters_x_types_x_items_x_block_sizes",
    loads_stores_exchanges,
)];

/// Where thread `t`'s item `k` sits in a tile.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arrangement {
    Blocked,
    Striped,
    WarpStriped,
}

impl Arrangement {
    /// Tile position of thread `t`'s item `k`, for blocks of `block` threads of `items` each.
    fn position(self, t: usize, k: usize, block: usize, items: usize) -> usize {
        let warp_size = WARP_SIZE as usize;
        match self {
            Self::Blocked => t * items + k,
            Self::Striped => k * block + t,
            Self::WarpStriped => ((t / warp_size) * items + k) * warp_size + t % warp_size,
        }
    }
}

use Arrangement::{Blocked, Striped, WarpStriped};

/// The probe's load modes: the arrangement of the registers after each, and whether the items
/// were scattered by their ranks (else loaded straight into that arrangement).
const LOADS: [(Arrangement, bool); 12] = [
    (Blocked, false),
    (Striped, false),
    (WarpStriped, false),
    (Blocked, false),
    (Blocked, false),
    (Striped, false),
    (WarpStriped, false),
    (Blocked, false),
    (Blocked, false),
    (Blocked, true),
    (Striped, true),
    (WarpStriped, true),
];

/// The probe's store modes: where each register goes (the transposed ones take blocked items).
const STORES: [Arrangement; 5] = [Blocked, Striped, WarpStriped, Blocked, Blocked];

/// Load modes that use a warp-striped arrangement (whole warps only).
fn warp_load(mode: usize) -> bool {
    matches!(mode, 2 | 4 | 6 | 8 | 11)
}

/// Store modes that do.
fn warp_store(mode: usize) -> bool {
    matches!(mode, 2 | 4)
}

/// An item type of the probes: distinct values from an index.
trait Item: DeviceCopy + Copy + Default + PartialEq + std::fmt::Debug {
    const NAME: &'static str;
    fn from_index(i: usize) -> Self;
}

impl Item for u16 {
    const NAME: &'static str = "u16";
    fn from_index(i: usize) -> Self {
        (i as u16) ^ 0x5a5a
    }
}

impl Item for u32 {
    const NAME: &'static str = "u32";
    fn from_index(i: usize) -> Self {
        (i as u32).wrapping_mul(0x9e37_79b9) | 1
    }
}

impl Item for u64 {
    const NAME: &'static str = "u64";
    fn from_index(i: usize) -> Self {
        (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 << 63
    }
}

/// Bytes of shared memory the probe's storage takes: the padded tile
/// (`BlockExchangeStorage::slots`, one unused slot after every 32).
fn shared_bytes<T>(tile: usize) -> u32 {
    let slots = gpu_primitives_abi::layout::padded_slots(tile as u32);
    slots * size_of::<T>() as u32
}

fn loads_stores_exchanges(gpu: &Gpu) -> Result<(), Failed> {
    let mut r = rng(71);
    sweep::<u32>(gpu, &[1, 2, 3, 4, 7, 16], &mut r)?;
    sweep::<u64>(gpu, &[3, 8], &mut r)?;
    sweep::<u16>(gpu, &[5, 32], &mut r)
}

/// Every load mode (each beside a random store mode, and every store mode once per length)
/// of `probe_exchange_<T>_items<K>` for each `items`, over block sizes and tile-edge lengths.
fn sweep<T: Item>(gpu: &Gpu, items_list: &[usize], r: &mut impl Rng) -> Result<(), Failed> {
    for &items in items_list {
        let kernel = format!("probe_exchange_{}_items{items}", T::NAME);
        // Under the sanitizers (every launch slow), three block sizes and one length each.
        let blocks: &[usize] = if under_sanitizers() {
            &[7, 96, 256]
        } else {
            &[1, 7, 32, 65, 96, 256, 1024]
        };
        for &block in blocks {
            let tile = block * items;
            if tile > 16384 {
                continue;
            }
            let whole_warps = block % WARP_SIZE as usize == 0;
            let lengths = if under_sanitizers() {
                vec![tile + 1]
            } else {
                tile_edge_lengths(tile, r)
                    .into_iter()
                    .filter(|&n| n > 0)
                    .collect()
            };
            for n in lengths {
                let grid = n.div_ceil(tile);
                let x: Vec<T> = (0..n).map(T::from_index).collect();
                let past_end = T::from_index(usize::MAX >> 1);
                let sentinel = T::from_index(usize::MAX >> 2);
                // Each block's ranks: a permutation of its tile's positions.
                let mut ranks = Vec::with_capacity(grid * tile);
                for _ in 0..grid {
                    let mut perm: Vec<u32> = (0..tile as u32).collect();
                    perm.shuffle(r);
                    ranks.extend(perm);
                }
                let d_x = ok(gpu.upload(&x))?;
                let d_ranks = ok(gpu.upload(&ranks))?;
                let mut pairs: Vec<(usize, usize)> = (0..LOADS.len())
                    .map(|load| (load, r.random_range(0..STORES.len())))
                    .collect();
                pairs.extend((0..STORES.len()).map(|store| (0, store)));
                for (load, store) in pairs {
                    if !whole_warps && (warp_load(load) || warp_store(store)) {
                        continue;
                    }
                    let d_registers = ok(gpu.upload(&vec![sentinel; grid * tile]))?;
                    let d_output = ok(gpu.upload(&vec![sentinel; n]))?;
                    let config =
                        LaunchConfig::new(grid as u32, block as u32).with_shared_mem(shared_bytes::<T>(tile));
                    // SAFETY: probe_exchange_<T>_items<K> takes (input, registers, output, ranks,
                    // n, load, store, past_end): n items in and out, one register and one rank
                    // per thread and item of the grid, each block's ranks a permutation of its
                    // tile; one block per tile; the padded tile's shared memory; warp-striped
                    // modes only in blocks of whole warps (skipped above otherwise).
                    unsafe {
                        ok(gpu.launch(
                            &kernel,
                            config,
                            (
                                d_x.as_device_ptr(),
                                d_registers.as_device_ptr(),
                                d_output.as_device_ptr(),
                                d_ranks.as_device_ptr(),
                                n,
                                load as u32,
                                store as u32,
                                past_end,
                            ),
                        ))?
                    };
                    let (registers, output) =
                        model(&x, &ranks, (block, items), load, store, past_end, sentinel);
                    let what = format!("{kernel} block {block} n {n} load {load} store {store}");
                    check_slices(
                        &format!("{what}: registers"),
                        &ok(gpu.download(&d_registers))?,
                        &registers,
                        |_| false,
                    )?;
                    check_slices(
                        &format!("{what}: output"),
                        &ok(gpu.download(&d_output))?,
                        &output,
                        |_| false,
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// The CPU model: each thread's registers after load mode `load` (dumped blocked: thread `t`'s
/// item `k` at `t * items + k` of its block's), and the output after store mode `store`
/// (positions past the input's end left as `sentinel`).
fn model<T: Item>(
    x: &[T],
    ranks: &[u32],
    (block, items): (usize, usize),
    load: usize,
    store: usize,
    past_end: T,
    sentinel: T,
) -> (Vec<T>, Vec<T>) {
    let n = x.len();
    let tile = block * items;
    let grid = n.div_ceil(tile);
    let mut registers = vec![sentinel; grid * tile];
    let mut output = vec![sentinel; n];
    let (arrangement, scattered) = LOADS[load];
    for b in 0..grid {
        let first = b * tile;
        let item_at = |p: usize| if first + p < n { x[first + p] } else { past_end };
        // Tile position -> the item the registers hold there.
        let mut by_position = vec![past_end; tile];
        for (p, slot) in by_position.iter_mut().enumerate() {
            *slot = item_at(p);
        }
        if scattered {
            // Loaded blocked: thread t's item k is position t * items + k, and goes to its rank.
            let mut moved = vec![past_end; tile];
            for (p, &item) in by_position.iter().enumerate() {
                moved[ranks[first + p] as usize] = item;
            }
            by_position = moved;
        }
        for t in 0..block {
            for k in 0..items {
                let held = by_position[arrangement.position(t, k, block, items)];
                registers[first + t * items + k] = held;
                let p = STORES[store].position(t, k, block, items);
                if first + p < n {
                    output[first + p] = held;
                }
            }
        }
    }
    (registers, output)
}
