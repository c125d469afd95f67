//! Puzzle 26: the warp butterfly with shuffle_xor: pair swap, parallel max (-> all 1000.0), and
//! conditional max/min over two blocks (-> [9, 0, ...] and [63, 32, ...]). Exits non-zero on a
//! mismatch.
use gpu_primitives_lessons::puzzles;

fn main() -> std::process::ExitCode {
    puzzles::example_main(puzzles::butterfly_p26)
}
