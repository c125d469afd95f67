//! The scan lecture: Kogge-Stone, double-buffered Kogge-Stone and Brent-Kung, inclusive and
//! exclusive, on one section and hierarchically on 2^20 + 3 elements. Exits non-zero on a
//! mismatch.
use gpu_primitives_lessons::puzzles;

fn main() -> std::process::ExitCode {
    puzzles::example_main(puzzles::scans)
}
