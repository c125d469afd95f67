//! Puzzle 27: block.sum, block.broadcast and block.prefix_sum on SIZE = TPB = 128, input 1..8
//! repeated: sum 576, mean 4.5, normalised output mean 1.0. Exits non-zero on a mismatch.
use gpu_primitives_lessons::puzzles;

fn main() -> std::process::ExitCode {
    puzzles::example_main(puzzles::block_ops_p27)
}
