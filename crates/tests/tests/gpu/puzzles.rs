//! Every puzzle as the main job runs it, with SEEDS.md's expected values checked here too.

use crate::support::{GpuTest, check_eq, ok};
use gpu_primitives::Gpu;
use gpu_primitives_lessons::puzzles;
use libtest_mimic::Failed;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("puzzles::p24_warp_sum_is_496", p24),
    ("puzzles::p26_butterflies", p26),
    ("puzzles::p27_sum_576_mean_4_5_output_mean_1", p27),
];

fn p24(gpu: &Gpu) -> Result<(), Failed> {
    let o = ok(puzzles::warp_sum_p24(gpu))?;
    check_eq("p24 result", o.result.as_str(), "496")?;
    check_eq("p24 pass", o.pass, true)
}

fn p26(gpu: &Gpu) -> Result<(), Failed> {
    let outcomes = ok(puzzles::butterfly_p26(gpu))?;
    check_eq("p26 pair swap", outcomes[0].result.as_str(), "[1, 0, 3, 2, ...]")?;
    check_eq("p26 parallel max", outcomes[1].result.as_str(), "all 1000")?;
    check_eq("p26 max/min", outcomes[2].result.as_str(), "[9, 0] [63, 32]")?;
    check_eq("p26 all pass", outcomes.iter().all(|o| o.pass), true)
}

fn p27(gpu: &Gpu) -> Result<(), Failed> {
    let outcomes = ok(puzzles::block_ops_p27(gpu))?;
    check_eq(
        "p27 stats",
        outcomes[0].result.as_str(),
        "sum 576 mean 4.5 out mean 1.0000",
    )?;
    let sample = "normalised sample [0.22222222, 0.44444445, 0.6666667, 0.8888889, 1.1111112, 1.3333334, 1.5555556, 1.7777778]";
    check_eq("p27 sample", outcomes[0].details[1].as_str(), sample)?;
    check_eq("p27 prefix_sum last", outcomes[1].result.as_str(), "last 576")?;
    check_eq("p27 all pass", outcomes.iter().all(|o| o.pass), true)
}
