//! The reduction lesson: hierarchical block_sum (registers -> warp shuffle -> shared memory ->
//! atomic add) beside a naive kernel in which one thread reads all n = 2^24 elements; prints both
//! results, their times and the speed-up. Exits non-zero on a mismatch.
use gpu_primitives_lessons::puzzles;

fn main() -> std::process::ExitCode {
    puzzles::example_main(puzzles::reduction_lesson)
}
