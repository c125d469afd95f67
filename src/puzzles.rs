//! The puzzles and lessons of SEEDS.md, each run on the GPU and compared with its expected
//! output. Shared by the CLI's `puzzles` command and the example binaries.

use crate::reduction::{self, SumKernel};
use crate::{Gpu, LaunchConfig, Result, dot_product, reference};
use std::time::Duration;

/// What one puzzle printed and whether it matched.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Puzzle name, e.g. "p12 dot product (SIZE 8, TPB 8)".
    pub name: String,
    /// Lines to show before the summary (inputs, intermediate values).
    pub details: Vec<String>,
    /// What the GPU computed.
    pub result: String,
    /// What SEEDS.md (or the CPU reference) expects.
    pub expected: String,
    /// Whether they match.
    pub pass: bool,
    /// Kernel time, µs (CUDA events; median where `details` says so).
    pub micros: f64,
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Median of `runs` timings (µs) of `work`, after one untimed warm-up run.
pub fn median_micros(gpu: &Gpu, runs: usize, mut work: impl FnMut() -> Result<()>) -> Result<f64> {
    work()?;
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        times.push(micros(gpu.time(&mut work)?.1));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Puzzle 12: SIZE = 8, TPB = 8, one block, a = b = 0..8: the shared-memory tree gives 140.
pub fn dot_product_p12(gpu: &Gpu) -> Result<Outcome> {
    let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let products: Vec<f32> = a.iter().map(|x| x * x).collect();
    let d_a = gpu.upload(&a)?;
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    let ((), t) = gpu.time(|| dot_product::launch(gpu, &d_a, &d_a, &d_out, LaunchConfig::new(1, 8)))?;
    let found = gpu.download(&d_out)?[0];
    let mut tree = products.clone();
    let mut levels = vec![format!("products {products:?}")];
    let mut stride = 4;
    while stride > 0 {
        for i in 0..stride {
            tree[i] += tree[i + stride];
        }
        levels.push(format!("stride {stride}: {:?}", &tree[..stride]));
        stride /= 2;
    }
    Ok(Outcome {
        name: "p12 dot product (SIZE 8, TPB 8)".into(),
        details: [vec![format!("a = b = {a:?}")], levels].concat(),
        result: format!("{found}"),
        expected: "140".into(),
        pass: found == 140.0,
        micros: micros(t),
    })
}

/// The same tree over many blocks: n = 2^20 values on a grid of 1/4 (so the sum is exact).
pub fn dot_product_many_blocks(gpu: &Gpu) -> Result<Outcome> {
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| ((i % 9) as f32 - 4.0) * 0.25).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i % 7) as f32 - 3.0) * 0.25).collect();
    let expected = reference::dot_product(&x, &y);
    let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    let config = LaunchConfig::for_elements(n, dot_product::DEFAULT_BLOCK, 4 * gpu.info().multiprocessors);
    let ((), t) = gpu.time(|| dot_product::launch(gpu, &d_x, &d_y, &d_out, config))?;
    let found = gpu.download(&d_out)?[0];
    Ok(Outcome {
        name: "dot product, n = 2^20, many blocks".into(),
        details: vec![format!("{} blocks of {} threads", config.grid, config.block)],
        result: format!("{found}"),
        expected: format!("{expected}"),
        pass: found as f64 == expected,
        micros: micros(t),
    })
}

/// The reduction lesson at n = 2^24: hierarchical block_sum and the naive one-thread sum, their
/// times (median of CUDA-event timings), the speed-up, and the hierarchical kernel's GB/s beside a
/// device-to-device copy of the same n measured in the same run.
pub fn reduction_lesson(gpu: &Gpu) -> Result<Vec<Outcome>> {
    let n: usize = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| ((i % 17) as f32 - 8.0) * 0.25).collect();
    let expected = reference::sum(&x);
    let d_x = gpu.upload(&x)?;
    let mut d_copy = gpu.alloc_zeroed::<f32>(n)?;
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    let config = reduction::hierarchical_config(gpu, n);

    let mut outcomes = Vec::new();
    let mut times = Vec::new();
    for (kernel, runs) in [(SumKernel::Hierarchical, 21), (SumKernel::Naive, 3)] {
        let t = median_micros(gpu, runs, || reduction::launch(gpu, kernel, &d_x, &d_out, config))?;
        // A separate, untimed run from zero gives the checked result.
        let d_result = gpu.alloc_zeroed::<f32>(1)?;
        reduction::launch(gpu, kernel, &d_x, &d_result, config)?;
        let found = gpu.download(&d_result)?[0];
        times.push(t);
        outcomes.push(Outcome {
            name: match kernel {
                SumKernel::Hierarchical => "reduction: hierarchical block_sum, n = 2^24".into(),
                SumKernel::Naive => "reduction: naive one-thread sum, n = 2^24".into(),
            },
            details: vec![format!("{kernel:?}: median of {runs} runs: {t:.1} µs")],
            result: format!("{found}"),
            expected: format!("{expected}"),
            pass: reference::f32_sum_matches(found, expected, n, reference::sum_abs(&x)),
            micros: t,
        });
    }
    let copy = median_micros(gpu, 21, || gpu.copy_device_to_device(&d_x, &mut d_copy))?;
    let bytes = (n * size_of::<f32>()) as f64;
    outcomes[0].details.push(format!(
        "hierarchical reads {:.0} GB/s; device-to-device copy of the same n: {:.1} µs, {:.0} GB/s (read + write)",
        bytes / times[0] / 1e3,
        copy,
        2.0 * bytes / copy / 1e3
    ));
    outcomes[0].details.push(format!(
        "speed-up over the naive kernel: {:.0}x (the lesson expects 50-100x)",
        times[1] / times[0]
    ));
    Ok(outcomes)
}

/// Every puzzle, in SEEDS.md order.
pub fn all(gpu: &Gpu) -> Result<Vec<Outcome>> {
    let mut outcomes = vec![dot_product_p12(gpu)?, dot_product_many_blocks(gpu)?];
    outcomes.extend(reduction_lesson(gpu)?);
    Ok(outcomes)
}

/// Print each outcome's details, then one summary table (puzzle, result, expected, pass, µs) and
/// a closing `N passed, M failed` line.
pub fn print_report(gpu: &Gpu, outcomes: &[Outcome]) {
    let i = gpu.info();
    println!(
        "GPU {}: {} (sm_{}, {} SMs), driver CUDA {}, PTX variant sm_{}",
        i.ordinal, i.name, i.arch, i.multiprocessors, i.driver_cuda_version, i.ptx_arch
    );
    for o in outcomes {
        println!("\n{}", o.name);
        for line in &o.details {
            println!("  {line}");
        }
        println!(
            "  result {}  expected {}  {}",
            o.result,
            o.expected,
            if o.pass { "PASS" } else { "FAIL" }
        );
    }
    println!(
        "\n{:<46} {:>14} {:>14} {:>5} {:>12}",
        "puzzle", "result", "expected", "pass", "time (µs)"
    );
    for o in outcomes {
        println!(
            "{:<46} {:>14} {:>14} {:>5} {:>12.1}",
            o.name,
            o.result,
            o.expected,
            if o.pass { "yes" } else { "NO" },
            o.micros
        );
    }
    let passed = outcomes.iter().filter(|o| o.pass).count();
    println!("{passed} passed, {} failed", outcomes.len() - passed);
}

/// Body of an example binary: open GPU 0, run `puzzles`, print the report; exit 0 when all pass,
/// 1 on a mismatch, 2 on an error (message on stderr).
pub fn example_main(puzzles: impl FnOnce(&Gpu) -> Result<Vec<Outcome>>) -> std::process::ExitCode {
    let run = || -> Result<bool> {
        let gpu = crate::open_gpu(0)?;
        let outcomes = puzzles(&gpu)?;
        print_report(&gpu, &outcomes);
        Ok(outcomes.iter().all(|o| o.pass))
    };
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
