//! Puzzle 12: dot product with a shared-memory tree (SIZE 8, TPB 8 -> 140), then the same kernel
//! over 2^20 elements and many blocks. Exits non-zero on a mismatch.
use gpu_primitives_lessons::puzzles;

fn main() -> std::process::ExitCode {
    puzzles::example_main(|gpu| {
        Ok(vec![
            puzzles::dot_product_p12(gpu)?,
            puzzles::dot_product_many_blocks(gpu)?,
        ])
    })
}
