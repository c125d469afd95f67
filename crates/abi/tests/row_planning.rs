//! The row planner (`gpu_primitives_abi::planning::rows`) through its public API, without a GPU:
//! threads per row, tiles, the tiles kept in shared memory, clusters, and the norms' summing
//! launches. H100: 227 KiB of shared memory a block where a kernel opts in; A100: 163 KiB.

use gpu_primitives_abi::layout::{
    ROW_CLUSTER_SLOTS_BYTES, ROW_SHARED_BYTES, SHARED_RESERVED_PER_BLOCK, row_staged_tiles_bytes,
};
use gpu_primitives_abi::planning::rows::{
    RowPlan, RowShape, RowSumsLaunch, norm_grad_chunks, row_block_tiles, row_cluster, row_plan,
    row_plan_fewer_threads, row_shared_tiles, row_sums_cluster_chunks, row_sums_kept_tiles, row_sums_launch,
    row_sums_plan, row_sums_room_tiles,
};
use gpu_primitives_abi::tuning::{NormGradPolicy, RowPolicy};

/// The row policy these tests plan with: sm_90's, the H100's of their figures.
const P: RowPolicy = RowPolicy::SM90;
/// The norms' gradients' policy, sm_90's.
const G: NormGradPolicy = NormGradPolicy::SM90;

/// Rows of `cols` elements of `vector` per 16 bytes, of an operation of `inputs` row inputs whose
/// threads hold `op_words` words of all of them in one tile and `tiled_words` in several, at most
/// `max_group` threads a row.
const fn shape(
    cols: usize,
    vector: usize,
    inputs: usize,
    op_words: u32,
    tiled_words: u32,
    max_group: u32,
) -> RowShape {
    RowShape {
        cols,
        vector,
        inputs,
        op_words,
        tiled_words,
        max_group,
    }
}

/// The plan of `words` words a thread, `group` threads a row, blocks of `block`, `tiles` tiles.
const fn planned(words: u32, group: u32, block: u32, tiles: usize) -> RowPlan {
    RowPlan {
        words,
        group,
        block,
        tiles,
    }
}

#[test]
fn cluster_blocks_share_every_tile_once() {
    for tiles in P.cluster_blocks..200 {
        let mut next = 0;
        for rank in 0..P.cluster_blocks {
            let (first, count) = row_block_tiles(tiles, rank, P.cluster_blocks);
            assert_eq!(
                first, next,
                "{tiles} tiles: block {rank} starts where the last ended"
            );
            assert!(count >= tiles / P.cluster_blocks && count <= tiles.div_ceil(P.cluster_blocks));
            next = first + count;
        }
        assert_eq!(next, tiles);
    }
}

#[test]
fn clusters_take_rows_one_block_would_read_twice() {
    let h100 = 227 * 1024;
    let cluster = |cols: usize, vector: usize, inputs: usize, words: u32, max_group: u32| {
        let plan = row_plan(P, shape(cols, vector, inputs, words, words, max_group));
        row_cluster(P, plan, inputs, vector, row_shared_tiles(plan, inputs, h100))
    };
    // f32 forward: 16384 columns a tile of 1024 threads; one block reads 65536 once.
    assert!(!cluster(16384, 4, 1, 16, 1024));
    assert!(!cluster(65536, 4, 1, 16, 1024));
    assert!(cluster(262_144, 4, 1, 16, 1024));
    assert!(cluster(1 << 20, 4, 1, 16, 1024));
    // f32 backward: 8192 columns a tile; one block keeps 3 of 8 at 65536.
    assert!(cluster(65536, 4, 2, 16, 1024));
    // bf16: the backward, not the forward.
    assert!(!cluster(262_144, 8, 1, 16, 1024));
    assert!(cluster(262_144, 8, 2, 16, 1024));
    // A cap on the threads per row (tuning sweeps) keeps rows to one block.
    assert!(!cluster(1 << 20, 4, 1, 16, 256));
}

#[test]
fn shared_tiles_keep_what_fits_and_leave_the_last_tile_in_registers() {
    // H100 (sm_90): 227 KiB a block where a kernel opts in; A100 (sm_80): 163 KiB.
    let (h100, a100) = (227 * 1024, 163 * 1024);
    // (cols, vector, inputs, op words, H100 tiles kept, A100 tiles kept)
    for (cols, vector, inputs, words, h, a) in [
        (16384, 4, 1, 16, 0, 0),  // f32 softmax: one tile
        (65536, 4, 1, 16, 3, 2),  // 4 tiles of 64 KiB
        (262144, 4, 1, 16, 3, 2), // 16 tiles: 3 kept, 12 read again
        (65536, 8, 1, 16, 3, 3),  // bf16: 4 tiles of 32 KiB
        (262144, 8, 1, 16, 7, 5), // bf16: 16 tiles of 32 KiB
        (65536, 4, 2, 16, 3, 2),  // f32 backward: 8 tiles of 2 x 32 KiB
        (3000, 4, 1, 8, 1, 1),    // LayerNorm f32: 2 tiles of 256 threads, 8 KiB
        (8000, 4, 1, 8, 3, 3),    // LayerNorm f32: 4 tiles of 256 threads
    ] {
        let plan = row_plan(P, shape(cols, vector, inputs, words, words, 1024));
        for (available, expected) in [(h100, h), (a100, a)] {
            let kept = row_shared_tiles(plan, inputs, available);
            assert_eq!(kept, expected, "{cols} cols, {plan:?}, {available} bytes");
            assert!(kept as usize <= plan.tiles.saturating_sub(1));
            // Within the block's share of the limit (1024 threads a multiprocessor).
            let blocks = 1024 / plan.block as u64;
            let used = row_staged_tiles_bytes(kept, plan.words, inputs as u32, plan.block);
            assert!(blocks * (used + ROW_SHARED_BYTES as u64) <= available);
        }
    }
    assert_eq!(
        row_shared_tiles(row_plan(P, shape(65536, 4, 1, 16, 16, 1024)), 1, 0),
        0
    );
    // Blocks of 256 threads (a tuning override) keep a quarter: 65536 f32 in 16 tiles of
    // 16 KiB keeps 3 on an H100, not 14 (which would leave one block a multiprocessor).
    assert_eq!(
        row_shared_tiles(row_plan(P, shape(65536, 4, 1, 16, 16, 256)), 1, h100),
        3
    );
}

#[test]
fn tiled_rows_take_fewer_threads_only_where_none_is_read_twice() {
    let h100 = 227 * 1024;
    let fewer = |plan, cols, vector, output, limit| {
        let f = row_plan_fewer_threads;
        f(
            P,
            plan,
            shape(cols, vector, 1, 16, 16, 1024),
            false,
            output,
            4096,
            270_336,
            limit,
        )
    };
    // bf16 softmax, 65536 columns: 4 tiles of 1024 threads -> 8 of 512, all but the last kept.
    let plan = row_plan(P, shape(65536, 8, 1, 16, 16, 1024));
    assert_eq!((plan.group, plan.tiles), (1024, 4));
    let less = fewer(plan, 65536, 8, true, h100);
    assert_eq!(
        (less.group, less.block, less.tiles, less.words),
        (512, 512, 8, plan.words)
    );
    assert_eq!(row_shared_tiles(less, 1, h100), 7);
    // Blocks of 256 threads, 4 a multiprocessor: 6 tiles of 8 KiB each, as 7 would leave
    // room for 3 blocks with the driver's 1 KiB a block.
    let quarter = planned(8, 256, 256, 8);
    assert_eq!(row_shared_tiles(quarter, 1, h100), 6);
    let kept = row_staged_tiles_bytes(6, 8, 1, 256);
    let block = kept + u64::from(ROW_SHARED_BYTES + SHARED_RESERVED_PER_BLOCK);
    assert!(4 * block <= h100 + 1024);
    // f32: 512 threads would keep 3 of 8 tiles: unchanged.
    let plan = row_plan(P, shape(65536, 4, 1, 16, 16, 1024));
    assert_eq!(fewer(plan, 65536, 4, true, h100), plan);
    // Without an output: the fewest threads.
    let less = fewer(plan, 65536, 4, false, h100);
    assert_eq!((less.group, less.tiles), (P.min_tile_group, 16));
    // Rows a block reads partly twice (for a cluster) and rows of one tile: unchanged.
    let plan = row_plan(P, shape(262_144, 8, 1, 16, 16, 1024));
    assert_eq!(fewer(plan, 262_144, 8, true, h100), plan);
    let plan = row_plan(P, shape(4096, 8, 1, 16, 16, 1024));
    assert_eq!(fewer(plan, 4096, 8, false, h100), plan);
    // The cross-entropy's rows of one tile (bf16 4096: 256 threads): 4 tiles of 64 threads,
    // 3 kept with its gradient; f32 1024 (128 threads): 2 tiles of 64.
    let ce = |cols: usize, vector, output| {
        let plan = row_plan(P, shape(cols, vector, 1, 8, 8, 1024));
        let rows = (1 << 28) / cols;
        let f = row_plan_fewer_threads;
        f(
            P,
            plan,
            shape(cols, vector, 1, 8, 8, 1024),
            true,
            output,
            rows,
            270_336,
            h100,
        )
    };
    assert_eq!(
        (
            row_plan(P, shape(4096, 8, 1, 8, 8, 1024)).tiles,
            ce(4096, 8, true).group
        ),
        (1, 64)
    );
    assert_eq!((ce(4096, 8, true).tiles, ce(4096, 8, false).group), (4, 64));
    // f32 4096 (2 tiles of 256 threads): 4 tiles of 128 with its gradient (64 would keep 6
    // of 8), tiles of 64 without.
    assert_eq!((ce(4096, 4, true).group, ce(4096, 4, true).tiles), (128, 4));
    assert_eq!((ce(4096, 4, false).group, ce(1024, 4, false).group), (64, 64));
    // 1024 rows: at least 256 threads (1024 x 128 is under half of an H100's 270336).
    assert_eq!(
        (ce(262_144, 4, false).group, ce(16384, 4, false).group),
        (256, 64)
    );
}

#[test]
fn norm_grad_chunks_cover_the_rows() {
    for (rows, cols) in [
        (0, 5),
        (1, 1),
        (31, 1),
        (33, 1),
        (262_144, 1024),
        (1024, 262_144),
        (1 << 20, 1),
        (7, 3000),
    ] {
        let (chunks, per_chunk) = norm_grad_chunks(G, rows, cols);
        assert!(chunks >= 1);
        assert!(chunks as usize * per_chunk >= rows && (chunks as usize - 1) * per_chunk < rows.max(1));
        assert!(chunks as usize * cols.div_ceil(256) <= G.blocks.max(cols.div_ceil(256)));
    }
    assert_eq!(norm_grad_chunks(G, 262_144, 1024), (512, 512));
    assert_eq!(norm_grad_chunks(G, 1024, 262_144), (2, 512));
    assert_eq!(norm_grad_chunks(G, 33, 1), (2, 17));
}

#[test]
fn summing_rows_take_one_tile_of_up_to_max_group_threads() {
    // The norms' backward summing its parameters' gradients: 16 words of x and dy together,
    // at most 8 items of each a thread (8 f32 words, 4 of halves).
    assert_eq!((P.sums_words(4, 2, 16), P.sums_words(8, 2, 16)), (8, 4));
    for (cols, vector) in [(7, 4), (1024, 4), (2048, 4), (100, 8), (2048, 8)] {
        let words = P.sums_words(vector, 2, 16);
        assert_eq!(
            row_sums_plan(P, shape(cols, vector, 2, 16, 16, 1024)),
            row_plan(P, shape(cols, vector, 2, 2 * words, 2 * words, 1024))
        );
    }
    let one_tile = |words, group| RowPlan {
        words,
        group,
        block: group,
        tiles: 1,
    };
    assert_eq!(
        row_sums_plan(P, shape(1024, 4, 2, 16, 16, 1024)),
        one_tile(8, 128)
    );
    // 4096 f32 or 8192 halves: past row_register_group's tiles, one tile of more threads.
    assert_eq!(row_plan(P, shape(4096, 8, 2, 8, 8, 1024)).tiles, 2);
    assert_eq!(
        row_sums_plan(P, shape(4096, 4, 2, 16, 16, 1024)),
        one_tile(8, 512)
    );
    assert_eq!(
        row_sums_plan(P, shape(4096, 8, 2, 16, 16, 1024)),
        one_tile(4, 512)
    );
    assert_eq!(
        row_sums_plan(P, shape(8192, 8, 2, 16, 16, 1024)),
        one_tile(4, 1024)
    );
    assert_eq!(
        row_sums_plan(P, shape(8192, 4, 2, 16, 16, 1024)),
        one_tile(8, 1024)
    );
    assert_eq!(
        row_sums_plan(P, shape(6007, 4, 2, 16, 16, 1024)),
        one_tile(8, 1024)
    );
    // Past what max_group threads hold in one tile: tiles of max_group threads of as many
    // words (8 items of each input; not the 16 halves a thread one tile of 1024 threads
    // would hold at 16384 columns).
    for (cols, vector, max_group, words, tiles) in [
        (8193, 4, 1024, 8, 2),
        (8193, 8, 1024, 4, 2),
        (16384, 8, 1024, 4, 2),
        (16384, 4, 1024, 8, 2),
        (65536, 4, 1024, 8, 8),
        (8192, 4, 512, 8, 2),
    ] {
        let plan = row_sums_plan(P, shape(cols, vector, 2, 16, 16, max_group));
        assert_eq!(
            plan,
            RowPlan {
                words,
                group: max_group,
                block: max_group,
                tiles
            }
        );
    }
}

#[test]
fn summing_kernels_take_one_tile_a_cluster_one_block_or_none() {
    let (h100, a100) = (227 * 1024, 163 * 1024);
    // (cols, vector, limit, clusters) -> (cluster, words, tiles of the whole row)
    for (cols, vector, limit, clusters, expected) in [
        (4096, 4, h100, true, Some((false, 8, 1))),
        (8193, 4, h100, true, Some((true, 8, 5))), // 2 tiles of 1024 threads: 5 of 256
        (16384, 4, h100, true, Some((true, 8, 8))),
        (16384, 4, h100, false, Some((false, 4, 4))), // no cluster: one block of 1024
        (16384, 8, h100, true, Some((false, 4, 2))),  // halves: one block
        (2048, 8, h100, true, Some((false, 4, 1))),   // halves: one tile of 256 threads
        (4096, 8, h100, true, Some((false, 4, 2))),   // 2 tiles of 256, not one of 512
        (4096, 8, a100, false, Some((false, 4, 2))),
        (8192, 8, h100, true, Some((false, 4, 1))), // 4 tiles of 256: one of 1024
        (24576, 4, h100, true, Some((true, 8, 12))),
        (24577, 4, h100, true, Some((true, 8, 4))), // 4 tiles of 8 words: a cluster
        (32768, 4, h100, true, Some((true, 8, 4))), // a tile a block
        (32768, 4, h100, false, None),
        (65536, 4, h100, true, Some((true, 8, 8))),
        (65536, 8, h100, true, Some((true, 4, 8))),
        (98304, 4, h100, true, Some((true, 8, 12))),
        (98305, 4, h100, true, None), // 4 tiles a block: their sums take 260 KiB
        (262144, 8, h100, true, None),
        (16384, 4, a100, false, Some((false, 4, 4))),
        (24576, 4, a100, false, None),
    ] {
        let launch = row_sums_launch(P, shape(cols, vector, 2, 16, 8, 1024), limit, clusters);
        assert_eq!(
            launch.map(|l| (l.cluster, l.plan.words, l.plan.tiles)),
            expected,
            "{cols} cols, {vector} a vector, {limit} bytes"
        );
        if let Some(RowSumsLaunch {
            plan,
            cluster,
            sums_bytes,
        }) = launch
        {
            let items = plan.words as u64 * vector as u64 / 4;
            let tiles = if cluster {
                plan.tiles.div_ceil(4)
            } else {
                plan.tiles
            } as u64;
            assert_eq!(sums_bytes, 4 * (2 * items * tiles + 1) * u64::from(plan.block));
            let slots = if cluster { ROW_CLUSTER_SLOTS_BYTES } else { 0 };
            assert!(u64::from(ROW_SHARED_BYTES + slots) + sums_bytes <= limit);
        }
    }
}

#[test]
fn summing_kernels_keep_their_tiles_in_halves_only() {
    let (h100, a100) = (227 * 1024, 163 * 1024);
    // (cols, vector, limit, clusters) -> tiles kept a block
    for (cols, vector, limit, clusters, kept) in [
        (2048, 8, h100, true, 0),  // one tile
        (4096, 8, h100, true, 1),  // 2 tiles of 256 threads, one block: the row read once
        (4096, 8, a100, false, 0), // A100: a kept tile would cost a block (4 -> 3)
        (16384, 8, h100, true, 1), // one block, 2 tiles of 1024 threads
        (65536, 8, h100, true, 1), // a cluster, 2 tiles a block
        (98304, 8, h100, true, 0), // a cluster, 3 tiles a block: their sums leave no room
        (16384, 4, h100, true, 0), // f32: none
        (65536, 4, h100, true, 0),
    ] {
        let launch = row_sums_launch(P, shape(cols, vector, 2, 16, 8, 1024), limit, clusters).unwrap();
        assert_eq!(
            row_sums_kept_tiles(P, launch, vector, 2, limit),
            kept,
            "{cols} cols, {vector} a vector"
        );
        // What may be kept fits past the sums.
        let room = row_sums_room_tiles(P, launch, 2, limit);
        let slots = if launch.cluster {
            ROW_CLUSTER_SLOTS_BYTES
        } else {
            0
        };
        let staged = row_staged_tiles_bytes(room, launch.plan.words, 2, launch.plan.block);
        assert!(u64::from(ROW_SHARED_BYTES + slots) + launch.sums_bytes + staged <= limit);
    }
}

#[test]
fn cluster_sums_take_a_chunk_a_cluster_at_once() {
    assert_eq!(row_sums_cluster_chunks(G, 0, 30), 1);
    assert_eq!(row_sums_cluster_chunks(G, 1, 30), 1);
    assert_eq!(row_sums_cluster_chunks(G, G.min_rows + 1, 30), 2);
    assert_eq!(row_sums_cluster_chunks(G, 4096, 30), 30);
    assert_eq!(row_sums_cluster_chunks(G, 4096, 128), 128);
}

#[test]
fn short_rows_share_a_warp_long_rows_take_a_block() {
    // 8 f32: 4 words (4 items) per thread, 2 threads per row.
    assert_eq!(row_plan(P, shape(8, 4, 1, 16, 16, 1024)), planned(4, 2, 256, 1));
    // 1 item: one thread per row.
    assert_eq!(row_plan(P, shape(1, 4, 1, 16, 16, 1024)).group, 1);
    // 512 f32: a warp of 16 words each; 1024: two warps.
    assert_eq!(
        row_plan(P, shape(512, 4, 1, 16, 16, 1024)),
        planned(16, 32, 256, 1)
    );
    assert_eq!(
        row_plan(P, shape(1024, 4, 1, 16, 16, 1024)),
        planned(16, 64, 64, 1)
    );
    // 512 bf16: a warp of 8 words (16 halves) each.
    assert_eq!(
        row_plan(P, shape(512, 8, 1, 16, 16, 1024)),
        planned(8, 32, 256, 1)
    );
    // 1025 f32: 128 threads.
    assert_eq!(
        row_plan(P, shape(1025, 4, 1, 16, 16, 1024)),
        planned(16, 128, 128, 1)
    );
    // 16384 f32 in 1024 threads, 16384 halves in four tiles of 256; 65536 f32 in four tiles.
    assert_eq!(
        row_plan(P, shape(16384, 4, 1, 16, 16, 1024)),
        planned(16, 1024, 1024, 1)
    );
    assert_eq!(
        row_plan(P, shape(16384, 8, 1, 16, 16, 1024)),
        planned(8, 256, 256, 4)
    );
    // 4096 halves in registers; 65536 in four tiles of 1024 threads.
    assert_eq!(row_plan(P, shape(4096, 8, 1, 16, 16, 1024)).tiles, 1);
    assert_eq!(row_plan(P, shape(65536, 8, 1, 16, 16, 1024)).group, 1024);
    assert_eq!(
        row_plan(P, shape(65536, 4, 1, 16, 16, 1024)),
        planned(16, 1024, 1024, 4)
    );
    assert_eq!(row_plan(P, shape(1 << 20, 8, 1, 16, 16, 1024)).tiles, 64);
    // The backward of 16384 halves holds 64 bytes per thread: 1024 threads, in registers.
    assert_eq!(row_plan(P, shape(16384, 8, 2, 16, 16, 1024)).tiles, 1);
    // The f32 backward holds 8 words of each input; LayerNorm 8 words: 1024 f32 in 128.
    assert_eq!(row_plan(P, shape(1024, 4, 2, 16, 16, 1024)).words, 8);
    assert_eq!(
        row_plan(P, shape(1024, 4, 1, 8, 8, 1024)),
        planned(8, 128, 128, 1)
    );
}

#[test]
fn layer_norm_holds_16_words_in_one_tile_and_8_in_several() {
    let plan = |cols| row_plan(P, shape(cols, 4, 1, 16, 8, 1024));
    let expect = |words, group, tiles| RowPlan {
        words,
        group,
        block: group,
        tiles,
    };
    assert_eq!(plan(1024), expect(16, 64, 1));
    assert_eq!(plan(4096), expect(16, 256, 1));
    assert_eq!(plan(16384), expect(16, 1024, 1));
    // Past one tile of 1024 threads of 16 words: tiles of 8 words.
    assert_eq!(plan(16385), expect(8, 1024, 3));
    assert_eq!(plan(65536), expect(8, 1024, 8));
    // Halves: 8 words either way.
    assert_eq!(
        row_plan(P, shape(65536, 8, 1, 16, 8, 1024)),
        row_plan(P, shape(65536, 8, 1, 8, 8, 1024))
    );
}

#[test]
fn every_plan_covers_its_row() {
    for vector in [4usize, 8] {
        for (inputs, op_words, tiled_words) in [(1usize, 16u32, 16u32), (2, 16, 16), (1, 8, 8), (1, 16, 8)] {
            for cols in (1..5000).chain([1 << 14, 1 << 15, 1 << 16, (1 << 20) - 3, 1 << 20]) {
                let p = row_plan(P, shape(cols, vector, inputs, op_words, tiled_words, 1024));
                let per_tile = p.group as usize * p.words as usize * vector / 4;
                assert!(p.tiles * per_tile >= cols, "{cols} {vector}: {p:?}");
                assert!(p.tiles <= P.few_tiles || p.group == 1024);
                let small = row_plan(P, shape(cols, vector, inputs, op_words, tiled_words, 256));
                let small_tile = 256 * small.words as usize * vector / 4;
                assert!(small.group <= 256 && small.tiles * small_tile >= cols);
                assert!(p.group.is_power_of_two() && p.block.is_multiple_of(p.group) && p.block <= 1024);
                assert!(p.words as usize * vector / 4 <= P.items);
                assert!(p.words as usize * inputs <= op_words as usize && p.words >= 4);
                // Rows of several tiles: at the operation's most words for tiles.
                for q in [p, small] {
                    assert!(q.tiles == 1 || q.words == P.words(vector, inputs, tiled_words));
                }
            }
        }
    }
}
