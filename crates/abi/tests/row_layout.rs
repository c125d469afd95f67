//! The shared-memory layouts of the row operations (`gpu_primitives_abi::layout`), without a GPU.

use gpu_primitives_abi::layout::{row_staged_tiles_bytes, row_staged_word};

#[test]
fn kept_tiles_chunks_are_distinct_within_their_bytes_and_a_warp_s_consecutive() {
    for (tiles, words, inputs, block) in [(3, 16, 1, 1024), (7, 8, 1, 1024), (3, 8, 2, 1024), (3, 8, 1, 256)]
    {
        let total = row_staged_tiles_bytes(tiles, words, inputs, block) / 4;
        let mut seen = vec![false; total as usize / 4];
        for t in 0..tiles {
            for i in 0..inputs {
                for c in 0..words / 4 {
                    for r in 0..block {
                        let w = row_staged_word(t, i, c, words, inputs, block, r);
                        assert!(w.is_multiple_of(4) && u64::from(w) + 4 <= total);
                        assert!(!std::mem::replace(&mut seen[w as usize / 4], true));
                        if r % 32 != 0 {
                            // Lanes of a warp: consecutive 16-byte chunks.
                            assert_eq!(w, row_staged_word(t, i, c, words, inputs, block, r - 1) + 4);
                        }
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "every chunk of the bytes is used");
    }
}
