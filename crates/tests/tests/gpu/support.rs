//! Shared helpers of the GPU tests: the per-thread GPU, seeded inputs, comparisons.

use gpu_primitives::{Error, Gpu};
use libtest_mimic::{Completion, Failed};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cell::OnceCell;

/// A GPU test: `Err` with a message on a mismatch.
pub type GpuTest = fn(&Gpu) -> Result<(), Failed>;

/// Why this thread has no GPU.
enum NoGpu {
    /// No CUDA device: the tests are ignored.
    Absent(String),
    /// A device, but opening it failed: the tests fail.
    Broken(String),
}

thread_local! {
    static GPU: OnceCell<Result<Gpu, NoGpu>> = const { OnceCell::new() };
}

/// Tests reported as ignored, with the reason, when `GPU_PRIMITIVES_SKIP_HUGE` is set (the
/// compute-sanitizer runs of `scripts/gpu-check`).
const SANITIZER_SKIPS: &[(&str, &str)] = &[
    (
        "segmented_sort::past_2_pow_31_keys",
        "sorts 2 GiB of keys in rows: an hour under compute-sanitizer",
    ),
    (
        "segmented_sort::top_k_past_2_pow_31_rows",
        "2^31 rows (13 GiB): long under compute-sanitizer",
    ),
    (
        "sort::past_2_pow_31_keys",
        "sorts 8 GiB of keys (5 passes over 26 GiB): hours under compute-sanitizer",
    ),
    (
        "device::past_2_pow_31_elements_u32",
        "moves 17 GiB: hours under compute-sanitizer",
    ),
    (
        "compaction::past_2_pow_31_elements",
        "moves about 40 GiB: hours under compute-sanitizer",
    ),
    (
        "run_length::past_2_pow_31_elements",
        "moves about 30 GiB: hours under compute-sanitizer",
    ),
    (
        "segments::past_2_pow_31_elements",
        "moves about 50 GiB: hours under compute-sanitizer",
    ),
    (
        "segments::one_huge_segment_beside_a_million_tiny",
        "9.4 million items through every check: long under compute-sanitizer (the property tests cover the same paths)",
    ),
    (
        "rows::past_2_pow_31_elements",
        "moves about 60 GiB: hours under compute-sanitizer",
    ),
    (
        "histogram::past_2_pow_31_samples",
        "reads 2 GiB twice: long under compute-sanitizer",
    ),
    (
        "streams::every_library_kernel_compiles_alone",
        "compiles every kernel of the library: long under compute-sanitizer",
    ),
    (
        "device::out_of_memory_is_an_error",
        "compute-sanitizer counts the failed allocation it provokes as an error",
    ),
];

/// GPU `ordinal` with every module the tests launch: the library's, the lessons' and the
/// probes' (one handle holding three crates' kernels).
fn open_all(ordinal: u32) -> gpu_primitives::Result<Gpu> {
    let gpu = gpu_primitives_lessons::open_gpu(ordinal)?;
    gpu_primitives::module(&gpu)?;
    gpu.module("gpu-primitives-tests", gpu_primitives_tests::PTX_VARIANTS)?;
    Ok(gpu)
}

/// Whether the sanitizer gate runs the suite (`GPU_PRIMITIVES_SKIP_HUGE` set): the tests in
/// [`SANITIZER_SKIPS`] report themselves ignored, and a few large fixed-shape tests take fewer
/// of their shapes (each says which).
pub fn under_sanitizers() -> bool {
    std::env::var_os("GPU_PRIMITIVES_SKIP_HUGE").is_some()
}

/// Run `test` on this thread's GPU. With no CUDA device, the test is ignored with the reason;
/// any other failure to open the GPU fails it.
pub fn run_on_gpu(name: &str, test: GpuTest) -> Result<Completion, Failed> {
    let skip = SANITIZER_SKIPS.iter().find(|(skipped, _)| *skipped == name);
    if let (Some((_, why)), true) = (skip, under_sanitizers()) {
        return Ok(Completion::ignored_with(format!(
            "GPU_PRIMITIVES_SKIP_HUGE is set: {why}"
        )));
    }
    GPU.with(|cell| {
        let opened = cell.get_or_init(|| match open_all(0) {
            Ok(gpu) => Ok(gpu),
            Err(Error::NoDevice(why)) => Err(NoGpu::Absent(why)),
            Err(other) => Err(NoGpu::Broken(other.to_string())),
        });
        match opened {
            Ok(gpu) => test(gpu).map(|()| Completion::Completed),
            Err(NoGpu::Absent(why)) => Ok(Completion::ignored_with(format!(
                "needs a CUDA GPU; none here ({why})"
            ))),
            Err(NoGpu::Broken(why)) => Err(format!("opening GPU 0 failed: {why}").into()),
        }
    })
}

/// A seeded generator: same inputs on every run (seed 0x5eed + `salt`).
pub fn rng(salt: u64) -> StdRng {
    StdRng::seed_from_u64(0x5eed + salt)
}

/// Lengths for the tile probes, for tiles of `tile` items: one item, around the tile's edges,
/// three tiles and a part, and one at random below five tiles.
pub fn tile_edge_lengths(tile: usize, r: &mut impl Rng) -> [usize; 6] {
    [
        1,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 5,
        r.random_range(1..5 * tile),
    ]
}

/// `n` values on the grid {k/4 : -8 <= k <= 8}: sums of up to 2^20 of them are exact in f32
/// in any order, so GPU and CPU results must be bitwise equal.
pub fn grid_values(n: usize, salt: u64) -> Vec<f32> {
    let mut r = rng(salt);
    (0..n).map(|_| r.random_range(-8i32..=8) as f32 * 0.25).collect()
}

/// Fail with index-free context when `found != expected`.
pub fn check_eq<T: PartialEq + std::fmt::Debug>(what: &str, found: T, expected: T) -> Result<(), Failed> {
    if found == expected {
        Ok(())
    } else {
        Err(format!("{what}: found {found:?}, expected {expected:?}").into())
    }
}

/// Fail at the first index where `found[i] != expected[i]`, ignoring indices where `skip(i)`.
pub fn check_slices<T: PartialEq + std::fmt::Debug>(
    what: &str,
    found: &[T],
    expected: &[T],
    skip: impl Fn(usize) -> bool,
) -> Result<(), Failed> {
    check_eq(&format!("{what}: length"), found.len(), expected.len())?;
    for (i, (f, e)) in found.iter().zip(expected).enumerate() {
        if !skip(i) && f != e {
            return Err(format!("{what}: index {i}: found {f:?}, expected {e:?}").into());
        }
    }
    Ok(())
}

/// Turn a library error into a test failure.
pub fn ok<T>(r: gpu_primitives::Result<T>) -> Result<T, Failed> {
    r.map_err(|e| Failed::from(format!("GPU call failed: {e}")))
}
