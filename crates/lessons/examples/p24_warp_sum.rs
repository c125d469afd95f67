//! Puzzle 24: one warp sums 0..WARP_SIZE with shuffle_down (offsets WARP_SIZE/2 .. 1).
//! WARP_SIZE is read from the device. Exits non-zero on a mismatch.
use gpu_primitives_lessons::puzzles;

fn main() -> std::process::ExitCode {
    puzzles::example_main(|gpu| Ok(vec![puzzles::warp_sum_p24(gpu)?]))
}
