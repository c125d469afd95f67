//! How a row operation (softmax, log-softmax, the norms, cross-entropy and their backward) is
//! launched for a [`RowShape`]: threads per row, words per thread, tiles, the tiles kept in shared
//! memory, clusters, and the launches of the norms' parameter gradients. Each takes the policy it
//! chooses among ([`RowPolicy`], [`NormGradPolicy`]): the kernels pass the one of the
//! architecture they are built for, the host the one of its GPU.

use crate::tuning::{NormGradPolicy, RowPolicy};

/// What the row planner needs of a row operation's call: the rows' length and element type, and
/// the operation's register budget (its `row_op_table!` row).
///
/// ```
/// use gpu_primitives_abi::planning::rows::{RowPlan, RowShape, row_plan};
/// use gpu_primitives_abi::tuning::RowPolicy;
/// // Softmax of rows of 1025 `f32`: 16 words a thread, one block of 128 threads a row.
/// let shape = RowShape { cols: 1025, vector: 4, inputs: 1, op_words: 16, tiled_words: 16, max_group: 1024 };
/// let plan = row_plan(RowPolicy::SM90, shape);
/// assert_eq!(plan, RowPlan { words: 16, group: 128, block: 128, tiles: 1 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowShape {
    /// Elements of a row (its columns), at least 1.
    pub cols: usize,
    /// Elements per 16-byte load of the row's element type: 4 (`f32`) or 8 (`f16`, `bf16`).
    pub vector: usize,
    /// Row inputs a thread holds: 1, or 2 for the backward (`x` and `dy`).
    pub inputs: usize,
    /// Most 4-byte words of all the inputs together a thread holds where one tile holds the row.
    pub op_words: u32,
    /// As `op_words`, where the row takes several tiles.
    pub tiled_words: u32,
    /// Most threads a row takes: a power of two, 64 to the policy's `max_group` (that, unless a tuning
    /// override or a planner trying fewer threads asks for less).
    pub max_group: u32,
}

/// (chunks, rows per chunk) of the norms' weight and bias gradients over `rows x cols`: enough
/// chunks that the first launch has about `policy.blocks` blocks, each chunk at least
/// `policy.min_rows` rows (one chunk of 0 rows for an empty matrix). A function of the shape and
/// the policy only, so the order of the additions (and the result's bits) does not depend on the
/// GPU but by its policy (today the same on every architecture).
pub const fn norm_grad_chunks(policy: NormGradPolicy, rows: usize, cols: usize) -> (u32, usize) {
    let column_blocks = cols.div_ceil(policy.block_threads as usize);
    let by_blocks = if column_blocks >= policy.blocks {
        1
    } else {
        policy.blocks / column_blocks
    };
    let by_rows = rows.div_ceil(policy.min_rows);
    let wanted = if by_blocks < by_rows { by_blocks } else { by_rows };
    let wanted = if wanted == 0 { 1 } else { wanted };
    let per_chunk = rows.div_ceil(wanted);
    if per_chunk == 0 {
        return (1, 0);
    }
    (rows.div_ceil(per_chunk) as u32, per_chunk)
}

/// How a row operation is launched for rows of `cols` elements (`row_plan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPlan {
    /// Words of each input per thread and tile (selects the kernel: `_w<words>`).
    pub words: u32,
    /// Threads per row, a power of two.
    pub group: u32,
    /// Threads per block: the policy's `block_threads` for groups of a warp or less, else `group`.
    pub block: u32,
    /// Tiles of `group * words * 4` bytes per row: 1 keeps the row in registers between its
    /// reduction and its output; more read it twice.
    pub tiles: usize,
}

/// The launch of a row operation of `shape` (its fields named below as they are), whose threads
/// hold at most [`RowPolicy::words`]`(vector, inputs, op_words)` words of each of its `inputs` row
/// inputs where one tile holds the row, and [`RowPolicy::words`]`(vector, inputs, tiled_words)` where
/// it does not (`row_op_table!`):
///
/// - **a warp or less per row** while 32 threads hold the row: the fewest words per thread that
///   do, then the fewest threads (several rows per warp for short rows);
/// - **a block per row** while [`RowPolicy::register_group`] threads hold it (`inputs` row inputs:
///   1, or 2 for the backward): the fewest threads that do;
/// - **longer rows**: a block loops over the row in tiles of [`RowPolicy::words`] words per thread
///   (statistics, then output), keeping what fits in shared memory ([`row_shared_tiles`]) and
///   reading the rest again: of [`RowPolicy::register_group`] threads for up to `policy.few_tiles`
///   tiles, else of `max_group` threads (at most `policy.max_group`, which also caps the others).
pub const fn row_plan(policy: RowPolicy, shape: RowShape) -> RowPlan {
    let plan = row_plan_of_words(policy, shape, shape.op_words);
    if plan.tiles > 1 && shape.tiled_words != shape.op_words {
        row_plan_of_words(policy, shape, shape.tiled_words)
    } else {
        plan
    }
}

/// The one-tile launch of the norms' backward kernels that also sum the weight's and bias's
/// gradients (the `sums` operations of `row_op_table!`, `shape.op_words` words of all
/// `shape.inputs` inputs; `shape.tiled_words` is not read), each thread holding [`RowPolicy::sums_words`] of each input: where one tile of up to
/// `shape.max_group` threads holds the row, that tile ([`row_plan`]'s where [`RowPolicy::register_group`]
/// threads or fewer hold it, else more threads: the launches summing the gradients apart read
/// `x` and `dy` again; H100, `f32` 65536 x 4096 2.48x the copy apart, 1.58 in one tile of 512
/// threads); else tiles of `shape.max_group` threads of as many words (a cluster's,
/// [`row_sums_launch`]).
pub const fn row_sums_plan(policy: RowPolicy, shape: RowShape) -> RowPlan {
    let RowShape {
        cols,
        vector,
        inputs,
        op_words,
        max_group,
        ..
    } = shape;
    let words = policy.sums_words(vector, inputs, op_words);
    let plan = row_plan_of_words(policy, shape, words * inputs as u32);
    if plan.tiles == 1 {
        return plan;
    }
    let group = row_threads(cols, words, vector / 4);
    if group <= max_group as usize {
        return RowPlan {
            words,
            group: group as u32,
            block: group as u32,
            tiles: 1,
        };
    }
    let items = words as usize * vector / 4;
    RowPlan {
        words,
        group: max_group,
        block: max_group,
        tiles: cols.div_ceil(max_group as usize * items),
    }
}

/// How a summing kernel runs ([`row_sums_launch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSumsLaunch {
    /// Its launch: words a thread, threads, tiles of the whole row.
    pub plan: RowPlan,
    /// The row is shared among the policy's `cluster_blocks` blocks of a cluster (its `_cluster`
    /// kernel), each summing the columns of its own tiles.
    pub cluster: bool,
    /// Dynamic shared memory of the sums past `ROW_SHARED_BYTES`
    /// ([`row_column_sums_bytes`](crate::layout::row_column_sums_bytes) of a block's largest share
    /// of the tiles). In `f32` the summing kernels keep no tiles in shared memory: with the sums
    /// beside them they ran slower than reading the tiles again; in halves they do where they fit
    /// ([`row_sums_kept_tiles`]).
    /// H100, `f32` LayerNorm backward 4096 x 65536 in a cluster: 1.88x the copy keeping none, 2.46
    /// keeping 1 of each block's 2; docs/performance.md.
    pub sums_bytes: u64,
}

/// How the norms' backward sums its parameters' gradients in the `dx` kernel, on a device
/// allowing a block `block_limit_bytes` of shared memory, with or without thread-block
/// `clusters` (a `sums` operation of `shape`, its `op_words` and `tiled_words` as
/// `row_op_table!` gives them): in one tile
/// ([`row_sums_plan`]); else the row shared among the blocks of a cluster in tiles of
/// [`RowPolicy::sums_words`] (8 items of each input) where the sums of a block's share fit; else one
/// block a row in the tiles of [`row_plan`] (of `shape.tiled_words`) where the sums of all of them
/// fit; else `None`, and the gradients are summed apart. `f32` rows that tiles of `shape.max_group`
/// threads cut into fewer tiles than a cluster has blocks go to a cluster of blocks of
/// `policy.sums_cluster_group` threads; halves' rows one tile of more than
/// `policy.sums_halves_group` threads would hold, to at most `policy.sums_halves_tiles` tiles of
/// that many, one block a row. On an H100: one tile to 8192 columns, a cluster from 8193 to
/// 98304 (`f32`); halves: one tile to 2048 columns, two tiles of 256 threads in one block to
/// 4096, one tile to 8192, one block a row from 8193 to 16384, a cluster to 98304.
pub const fn row_sums_launch(
    policy: RowPolicy,
    shape: RowShape,
    block_limit_bytes: u64,
    clusters: bool,
) -> Option<RowSumsLaunch> {
    let RowShape {
        vector,
        tiled_words,
        max_group,
        ..
    } = shape;
    // The tiles of `tiled_words` words: the op's words where the row takes several tiles.
    let tiled_shape = RowShape {
        op_words: tiled_words,
        ..shape
    };
    let plan = row_sums_plan(policy, shape);
    if plan.tiles == 1 {
        // Halves' rows in a few tiles of fewer threads, one block a row.
        if vector == 8 && plan.group > policy.sums_halves_group {
            let tiled = row_plan(
                policy,
                RowShape {
                    max_group: policy.sums_halves_group,
                    ..tiled_shape
                },
            );
            if tiled.tiles <= policy.sums_halves_tiles
                && let Some(launch) =
                    row_sums_fitting(tiled, vector, tiled.tiles as u64, false, block_limit_bytes)
            {
                return Some(launch);
            }
        }
        return row_sums_fitting(plan, vector, 1, false, block_limit_bytes);
    }
    // f32 rows of fewer tiles than a cluster's blocks: tiles of fewer threads, as many as it
    // takes, for a cluster of blocks of `policy.sums_cluster_group` threads.
    let plan = if clusters && vector == 4 && plan.tiles < policy.cluster_blocks as usize {
        let group = if max_group < policy.sums_cluster_group {
            max_group
        } else {
            policy.sums_cluster_group
        };
        row_sums_plan(
            policy,
            RowShape {
                max_group: group,
                ..shape
            },
        )
    } else {
        plan
    };
    if clusters && plan.tiles >= policy.cluster_blocks as usize {
        let largest = (plan.tiles as u32).div_ceil(policy.cluster_blocks);
        if let Some(launch) = row_sums_fitting(plan, vector, largest as u64, true, block_limit_bytes) {
            return Some(launch);
        }
    }
    let plan = row_plan(policy, tiled_shape);
    row_sums_fitting(plan, vector, plan.tiles as u64, false, block_limit_bytes)
}

/// [`row_sums_launch`]'s launch of `plan` (elements of `vector` per 16 bytes), a block summing
/// `tiles` of its tiles (in a `cluster` or not), where its sums fit beside the reductions' slots
/// (and a cluster kernel's static slots) within `block_limit_bytes`.
const fn row_sums_fitting(
    plan: RowPlan,
    vector: usize,
    tiles: u64,
    cluster: bool,
    block_limit_bytes: u64,
) -> Option<RowSumsLaunch> {
    use crate::layout::{ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_column_sums_bytes};
    let items = plan.words as u64 * vector as u64 / 4;
    let sums_bytes = row_column_sums_bytes(items * tiles, plan.block);
    let slots = ROW_SHARED_BYTES as u64
        + if cluster {
            ROW_CLUSTER_SLOTS_BYTES as u64
        } else {
            0
        };
    if slots + sums_bytes <= block_limit_bytes {
        Some(RowSumsLaunch {
            plan,
            cluster,
            sums_bytes,
        })
    } else {
        None
    }
}

/// Tiles of its row a block of a norms' summing kernel ([`row_sums_launch`]'s `launch`, rows of
/// `vector` elements per 16 bytes, `inputs` row inputs) keeps in shared memory past its column
/// sums, on a device allowing a block `block_limit_bytes`: in halves every tile of the block but
/// its last (which stays in registers) that fits without costing a block of occupancy
/// ([`row_sums_room_tiles`]), so the block reads its share of the row once where all fit; in `f32`
/// none, every tile but the last read again (from L2, mostly), which measured faster there.
/// H100, `bf16` LayerNorm backward 65536 columns: 2.92x the copy keeping them, 3.03 not; `f32`
/// 65536 columns 2.46 keeping them, 1.89 not; docs/performance.md.
pub const fn row_sums_kept_tiles(
    policy: RowPolicy,
    launch: RowSumsLaunch,
    vector: usize,
    inputs: usize,
    block_limit_bytes: u64,
) -> u32 {
    if vector == 4 {
        return 0;
    }
    row_sums_room_tiles(policy, launch, inputs, block_limit_bytes)
}

/// How many of its tiles but the last a block of a norms' summing kernel `launch` (`inputs` row
/// inputs) can keep in shared memory past its column sums, on a device allowing a block
/// `block_limit_bytes`, without costing a block of occupancy (as [`row_shared_tiles`]).
pub const fn row_sums_room_tiles(
    policy: RowPolicy,
    launch: RowSumsLaunch,
    inputs: usize,
    block_limit_bytes: u64,
) -> u32 {
    use crate::layout::{ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, row_staged_tiles_bytes};
    let plan = launch.plan;
    let (tiles, slots) = if launch.cluster {
        (
            row_block_tiles(plan.tiles as u32, 0, policy.cluster_blocks).1,
            ROW_CLUSTER_SLOTS_BYTES,
        )
    } else {
        (plan.tiles as u32, 0)
    };
    let used = (ROW_SHARED_BYTES + slots) as u64 + launch.sums_bytes;
    let room = row_block_share_bytes(plan.block, block_limit_bytes).saturating_sub(used);
    let fit = room / row_staged_tiles_bytes(1, plan.words, inputs as u32, plan.block);
    let wanted = tiles.saturating_sub(1) as u64;
    if fit < wanted { fit as u32 } else { wanted as u32 }
}

/// Chunks of the `rows` rows a cluster kernel summing the norms' weight and bias gradients takes,
/// one cluster each (chunk `c` the rows `c`, `c + chunks`, ...): at most `most`, the clusters the
/// device runs at once (one wave), each at least `policy.min_rows` rows (1 for an empty matrix).
/// H100, `f32` LayerNorm backward 4096 x 65536, 30 clusters at once: 2.46x the copy in 30 chunks,
/// 2.76 in 128; docs/performance.md.
pub const fn row_sums_cluster_chunks(policy: NormGradPolicy, rows: usize, most: usize) -> usize {
    let chunks = rows.div_ceil(policy.min_rows);
    if chunks > most {
        most
    } else if chunks == 0 {
        1
    } else {
        chunks
    }
}

/// [`row_plan`] of `shape` where its threads hold at most `op_words` words of all its inputs, for
/// every row length.
const fn row_plan_of_words(policy: RowPolicy, shape: RowShape, op_words: u32) -> RowPlan {
    let RowShape {
        cols,
        vector,
        inputs,
        max_group,
        ..
    } = shape;
    let items_per_word = vector / 4;
    let most_words = policy.words(vector, inputs, op_words);
    let items = most_words as usize * items_per_word;
    let mut words = 4;
    while words <= most_words {
        let group = row_threads(cols, words, items_per_word);
        if group <= 32 {
            return RowPlan {
                words,
                group: group as u32,
                block: policy.block_threads,
                tiles: 1,
            };
        }
        words *= 2;
    }
    let register_group = policy.register_group(most_words, inputs);
    let in_registers = if register_group < max_group {
        register_group
    } else {
        max_group
    };
    let group = row_threads(cols, most_words, items_per_word);
    if group <= in_registers as usize {
        return RowPlan {
            words: most_words,
            group: group as u32,
            block: group as u32,
            tiles: 1,
        };
    }
    let group = if cols <= policy.few_tiles * in_registers as usize * items {
        in_registers
    } else {
        max_group
    };
    RowPlan {
        words: most_words,
        group,
        block: group,
        tiles: cols.div_ceil(group as usize * items),
    }
}

/// Shared memory one block of `block` threads may take without costing a block of occupancy,
/// on a device allowing a block `block_limit_bytes`: its share among the blocks of that size the
/// row kernels' registers let a multiprocessor hold (built for
/// [`MAX_BLOCK_THREADS`](crate::layout::MAX_BLOCK_THREADS) threads), the multiprocessor holding
/// the limit plus [`SHARED_RESERVED_PER_BLOCK`](crate::layout::SHARED_RESERVED_PER_BLOCK), which
/// each block takes too.
const fn row_block_share_bytes(block: u32, block_limit_bytes: u64) -> u64 {
    let blocks = (crate::layout::MAX_BLOCK_THREADS / block) as u64;
    let reserved = crate::layout::SHARED_RESERVED_PER_BLOCK as u64;
    ((block_limit_bytes + reserved) / if blocks == 0 { 1 } else { blocks }).saturating_sub(reserved)
}

/// How many of a row's first tiles the block keeps in shared memory between its reduction and its
/// output (`RowParams::shared_tiles`) under `plan`, for an operation of `inputs` row inputs on a
/// device allowing a block `block_limit_bytes` of shared memory (its opt-in limit): every tile but
/// the last (which stays in registers) where they fit, else as many as fit (the others are read
/// again); 0 for a row of one tile. They fit in the block's share of that limit among the blocks
/// the row kernels' registers let a multiprocessor hold (built for
/// [`MAX_BLOCK_THREADS`](crate::layout::MAX_BLOCK_THREADS) threads: that many threads per
/// multiprocessor; the multiprocessor holds the limit plus
/// [`SHARED_RESERVED_PER_BLOCK`](crate::layout::SHARED_RESERVED_PER_BLOCK), which each block takes
/// too), less `ROW_SHARED_BYTES`, so that kept tiles never cost a block of occupancy. A tile is
/// [`row_staged_tiles_bytes`](crate::layout::row_staged_tiles_bytes)`(1, ..)`: 64 KiB for 1024
/// threads of 16 words, so an H100 (227 KiB a block) keeps 3, and reads a row of 4 tiles (65536
/// `f32`) once.
/// H100, `f32` cross-entropy with its gradient over 16384 columns: 1.086x the copy within the
/// share, 1.10 where 7 kept tiles cost a block; docs/performance.md.
pub const fn row_shared_tiles(plan: RowPlan, inputs: usize, block_limit_bytes: u64) -> u32 {
    if plan.tiles <= 1 {
        return 0;
    }
    let share = row_block_share_bytes(plan.block, block_limit_bytes);
    let reductions = crate::layout::ROW_SHARED_BYTES as u64;
    let available = share.saturating_sub(reductions);
    let tile = crate::layout::row_staged_tiles_bytes(1, plan.words, inputs as u32, plan.block);
    let fit = available / tile;
    let wanted = (plan.tiles - 1) as u64;
    if fit < wanted { fit as u32 } else { wanted as u32 }
}

/// Whether a block of `plan` keeps all of its row's tiles but the last in shared memory
/// ([`row_shared_tiles`]), so that it reads the row once (a row of one tile: yes).
const fn row_read_once(plan: RowPlan, inputs: usize, block_limit_bytes: u64) -> bool {
    row_shared_tiles(plan, inputs, block_limit_bytes) as usize + 1 >= plan.tiles
}

/// [`row_plan`]'s `plan` (of `shape`, as given it; `shape.max_group` is not read, the smaller
/// groups tried are) for an operation writing an `output` or not (cross-entropy's loss alone) over
/// `rows` rows, on a device running `resident_threads` threads at once and allowing a block
/// `block_limit_bytes` of shared memory, with rows taken by fewer threads a block where that costs
/// no second read: rows of several tiles (with `small_tiles`, an operation of
/// `policy.small_tile_ops`, rows of one tile of a block too) go
/// to the fewest threads, at least `policy.min_tile_group` (with `small_tiles`,
/// `policy.small_tile_group`, and below `policy.min_tile_group` only while `rows` blocks of them make
/// half of `resident_threads`), whose plan has several tiles and, with an output, reads the row
/// once ([`row_shared_tiles`] keeps all but the last); rows that the plan's block reads partly
/// twice (for a cluster) stay. More blocks a multiprocessor overlap one row's reductions with
/// another's loads; where tiles of fewer threads are read twice, they are slower.
/// H100, `bf16` 4096 x 65536 softmax: 1.047x the copy in 8 tiles of 512 threads, 1.144 in 4 of
/// 1024; docs/performance.md.
#[allow(clippy::too_many_arguments)]
pub const fn row_plan_fewer_threads(
    policy: RowPolicy,
    plan: RowPlan,
    shape: RowShape,
    small_tiles: bool,
    output: bool,
    rows: usize,
    resident_threads: usize,
    block_limit_bytes: u64,
) -> RowPlan {
    let min_group = if small_tiles {
        policy.small_tile_group
    } else {
        policy.min_tile_group
    };
    if plan.group <= min_group || (plan.tiles <= 1 && !small_tiles) {
        return plan;
    }
    let inputs = shape.inputs;
    if output && !row_read_once(plan, inputs, block_limit_bytes) {
        return plan;
    }
    let mut group = min_group;
    while group < plan.group {
        let fewer = row_plan(
            policy,
            RowShape {
                max_group: group,
                ..shape
            },
        );
        if (group >= policy.min_tile_group || rows.saturating_mul(group as usize) >= resident_threads / 2)
            && fewer.tiles > 1
            && (!output || row_read_once(fewer, inputs, block_limit_bytes))
        {
            return fewer;
        }
        group *= 2;
    }
    plan
}

/// Whether a row of `plan` (an operation of `inputs` row inputs of `vector` elements per 16 bytes,
/// writing an output) is split among the `policy.cluster_blocks` blocks of a cluster on a device
/// that has clusters, where one block alone would keep `kept` of its tiles in shared memory
/// ([`row_shared_tiles`]): rows of at least that many tiles of `policy.max_group` threads that one
/// block would read partly twice (`kept < tiles - 1`), except the halves' one-input operations.
/// Where one block reads the row once, the cluster only adds its barrier; the halves' forward
/// operations are bound by their instructions, with the re-read tiles mostly in L2.
/// H100, `f32` softmax 1024 x 262144: 1.11x the copy in a cluster, 1.42 in one block;
/// docs/performance.md.
pub const fn row_cluster(policy: RowPolicy, plan: RowPlan, inputs: usize, vector: usize, kept: u32) -> bool {
    plan.group == policy.max_group
        && plan.tiles >= policy.cluster_blocks as usize
        && (kept as usize) + 1 < plan.tiles
        && (vector == 4 || inputs == 2)
}

/// The tiles of a row of `plan` that block `rank` of `blocks` sharing it reads: tiles
/// `rank * tiles / blocks ..` up to `(rank + 1) * tiles / blocks` (every block at least one
/// when `tiles >= blocks`; sizes differ by at most one). The kernels' and the host's one place
/// for it.
pub const fn row_block_tiles(tiles: u32, rank: u32, blocks: u32) -> (u32, u32) {
    let first = rank * tiles / blocks;
    (first, (rank + 1) * tiles / blocks - first)
}

/// Threads (a power of two) that hold `cols` items at `words` words of `items_per_word` each.
const fn row_threads(cols: usize, words: u32, items_per_word: usize) -> usize {
    cols.div_ceil(words as usize * items_per_word).next_power_of_two()
}
