//! The radix sorts' planning (`gpu_primitives_abi::planning::sort`) through its public API,
//! without a GPU.

use gpu_primitives_abi::planning::sort::{onesweep_small_tiles, sort_histogram_copies};
use gpu_primitives_abi::tuning::SortPolicy;

/// The sort policy these tests plan with: sm_90's, the H100's of their figures.
const P: SortPolicy = SortPolicy::SM90;

/// 32 copies where they fit (16 for 8-byte keys at 128 KiB), halved until every pass's
/// counters fit the GPU's shared memory per block, at least one.
#[test]
fn copies_fit_the_budget_and_the_gpu() {
    let h100 = 227 * 1024;
    let copies = |max: u32| [1, 2, 4, 8].map(|key_bytes| sort_histogram_copies(P, key_bytes, max));
    assert_eq!(copies(h100), [32, 32, 32, 16]);
    assert_eq!(copies(99 * 1024), [32, 32, 16, 8]);
    assert_eq!(copies(48 * 1024), [32, 16, 8, 4]);
    assert_eq!(copies(1024), [1, 1, 1, 1]);
    for max in [1024, 48 * 1024, 99 * 1024, h100] {
        for (key_bytes, c) in [1, 2, 4, 8].into_iter().zip(copies(max)) {
            assert!(c.is_power_of_two());
            assert!(c == 1 || key_bytes * 256 * 4 * c <= max.min(128 * 1024));
        }
    }
}

#[test]
fn small_tiles_where_the_larger_ones_split_unevenly() {
    // (n, multiprocessors, key and value bytes, items, small items, small tiles taken)
    for (n, sms, bytes, items, small, expected) in [
        (1 << 20, 132, (4, 0), 20, 16, true), // 205 tiles: 2 on the busiest (10240 keys) vs 8192
        (1 << 20, 132, (4, 4), 24, 16, true), // pairs: 171 tiles of 6144 (12288 keys) vs 8192
        (1 << 24, 132, (4, 0), 20, 16, false), // 3277 tiles: 128000 keys vs 131072
        (1 << 28, 132, (4, 0), 20, 16, false),
        (1 << 20, 132, (4, 0), 16, 16, false), // the same tiles: never
        (5120, 132, (4, 0), 20, 16, true),     // one tile of 5120 or two of 4096 side by side
        (1 << 22, 132, (4, 0), 20, 16, false), // 35840 keys vs 32768: not an eighth fewer
        (0, 132, (4, 0), 20, 16, false),
        (1 << 20, 0, (4, 0), 20, 16, false), // no multiprocessors counted: as one
        // 8-byte keys alone, 256 threads both: 171 tiles of 6144 vs 342 of 3072 (3 on
        // the busiest, 9216 keys, against 12288)
        (1 << 20, 132, (8, 0), 24, 12, true),
        (1 << 24, 132, (8, 0), 24, 12, false),
        // 8-byte keys with 4-byte values: 183 tiles of 384 x 15 (11520 keys on the busiest)
        // vs 205 of 256 x 20 (10240, not an eighth fewer) in one wave of 264
        (1 << 20, 132, (8, 4), 15, 20, true),
        (264 * 5120, 132, (8, 4), 15, 20, true), // the last one wave
        (264 * 5120 + 1, 132, (8, 4), 15, 20, false), // 265 tiles
        (1 << 24, 132, (8, 4), 15, 20, false),   // 128000 keys vs 132480
        (1 << 20, 0, (8, 4), 15, 20, false),
        // 8-byte values: 228 tiles of 384 x 12 vs 256 of 256 x 16, one wave
        (1 << 20, 132, (8, 8), 12, 16, true),
        (1 << 21, 132, (8, 8), 12, 16, false),
    ] {
        assert_eq!(
            onesweep_small_tiles(P, n, sms, bytes, items, small),
            expected,
            "{n} keys, {sms} SMs, {bytes:?} bytes, {items} vs {small} items"
        );
    }
}
