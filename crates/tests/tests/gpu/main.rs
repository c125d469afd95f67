//! GPU tests: every kernel against its CPU reference, on GPU 0.
//!
//! A custom harness (libtest-mimic) so that, on a machine without a CUDA device, every test is
//! reported as *ignored* with the reason, by name, instead of silently passing. Any other failure
//! to open the GPU (PTX load, driver too old) fails every test.
//!
//! Run: `cargo test -p gpu-primitives-tests --test gpu` (add `-- --nocapture` to see the tables some tests print).

#![warn(clippy::undocumented_unsafe_blocks)]

mod block_exchange;
mod block_radix;
mod collectives;
mod compaction;
mod device;
mod device_layer;
mod dot_product;
mod faults;
mod histogram;
mod properties;
mod puzzles;
mod reduce_by_key;
mod reduction;
mod rows;
mod run_length;
mod scans;
mod segmented_sort;
mod segments;
mod sort;
mod soundness;
mod streams;
mod support;
mod temp_storage;
mod top_k_of_all;
mod tuning;

use libtest_mimic::{Arguments, Trial};

fn main() {
    // Tuning overrides from `GPU_PRIMITIVES_<NAME>` (`GPU_PRIMITIVES_ROW_CLUSTER=0`: the rows'
    // tests on one block a row), as the CLI installs them: the process default, which a call's
    // own overrides (`tuning::TESTS`) write over; a bad value stops the run.
    gpu_primitives::set_tuning_overrides(
        gpu_primitives::TuningOverrides::from_vars(|name| std::env::var(name).ok())
            .expect("GPU_PRIMITIVES_* tuning overrides"),
    )
    .expect("tuning overrides installed before any launch");
    let mut args = Arguments::from_args();
    // One CUDA context per thread; run the tests one after another on the main thread.
    args.test_threads = Some(1);
    let trials: Vec<Trial> = [
        device_layer::TESTS,
        collectives::TESTS,
        block_exchange::TESTS,
        block_radix::TESTS,
        device::TESTS,
        compaction::TESTS,
        histogram::TESTS,
        run_length::TESTS,
        reduce_by_key::TESTS,
        segments::TESTS,
        rows::TESTS,
        sort::TESTS,
        segmented_sort::TESTS,
        top_k_of_all::TESTS,
        dot_product::TESTS,
        reduction::TESTS,
        puzzles::TESTS,
        scans::TESTS,
        streams::TESTS,
        streams::BACKEND_TESTS,
        soundness::TESTS,
        properties::TESTS,
        faults::TESTS,
        temp_storage::TESTS,
        tuning::TESTS,
    ]
    .iter()
    .flat_map(|group| group.iter())
    .map(|&(name, test)| Trial::ignorable_test(name, move || support::run_on_gpu(name, test)))
    .collect();
    libtest_mimic::run(&args, trials).exit();
}
