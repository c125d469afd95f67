//! The puzzles and lessons of SEEDS.md, each run on the GPU and compared with its expected
//! output. Shared by the CLI's `puzzles` command and the example binaries.

use crate::lecture_scan::SectionScan;
use crate::reduction::{self, SumKernel};
use crate::{Gpu, LaunchConfig, Result, dot_product, lecture_scan, reference};
use gpu_primitives::device::ScanKind;
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
    let copy = median_micros(gpu, 21, || gpu.copy_device_to_device(&d_x, &mut d_copy, n))?;
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

/// Run a puzzle kernel that maps `input` (f32) to `output_len` f32 with one launch of `config`;
/// returns the output and the kernel time.
fn run_kernel(
    gpu: &Gpu,
    kernel: &str,
    config: LaunchConfig,
    input: &[f32],
    output_len: usize,
) -> Result<(Vec<f32>, f64)> {
    let d_in = gpu.upload(input)?;
    let d_out = gpu.alloc_zeroed::<f32>(output_len)?;
    // SAFETY: every kernel run through here takes (input, output) as f32 device pointers, reads
    // `input.len()` and writes `output_len` elements for the launch shape its caller passes (see
    // each kernel's docs in crates/kernels/src/kernels/puzzles.rs).
    let ((), t) =
        gpu.time(|| unsafe { gpu.launch(kernel, config, (d_in.as_device_ptr(), d_out.as_device_ptr())) })?;
    Ok((gpu.download(&d_out)?, micros(t)))
}

fn list(values: &[f32]) -> String {
    let shown: Vec<String> = values.iter().map(|v| format!("{v}")).collect();
    format!("[{}]", shown.join(", "))
}

/// Puzzle 24: warp sum with `shuffle_down` over one warp holding 0..WARP_SIZE.
pub fn warp_sum_p24(gpu: &Gpu) -> Result<Outcome> {
    let warp = gpu.info().warp_size;
    let input: Vec<f32> = (0..warp).map(|i| i as f32).collect();
    let (out, t) = run_kernel(gpu, "p24_warp_sum", LaunchConfig::new(1, warp), &input, 1)?;
    let expected = (warp * (warp - 1) / 2) as f32;
    Ok(Outcome {
        name: format!("p24 warp sum (WARP_SIZE {warp})"),
        details: vec![format!("input 0..{warp}; offsets {:?}", offsets(warp))],
        result: format!("{}", out[0]),
        expected: format!("{expected}"),
        pass: out[0] == expected,
        micros: t,
    })
}

/// WARP_SIZE/2, ..., 2, 1: the shuffle offsets of a warp tree.
fn offsets(warp: u32) -> Vec<u32> {
    std::iter::successors(Some(warp / 2), |o| (*o > 1).then_some(o / 2)).collect()
}

/// Puzzle 26: the butterfly with `shuffle_xor`: pair swap, parallel max, conditional max/min.
pub fn butterfly_p26(gpu: &Gpu) -> Result<Vec<Outcome>> {
    let warp = gpu.info().warp_size;
    let w = warp as usize;
    let mut outcomes = Vec::new();

    let input: Vec<f32> = (0..warp).map(|i| i as f32).collect();
    let (out, t) = run_kernel(gpu, "p26_pair_swap", LaunchConfig::new(1, warp), &input, w)?;
    let expected: Vec<f32> = (0..w).map(|i| input[i ^ 1]).collect();
    outcomes.push(Outcome {
        name: "p26 pair swap: output[i] = input[i ^ 1]".into(),
        details: vec![
            format!("input {}", list(&input)),
            format!("output {}", list(&out)),
        ],
        result: list(&out[..4]).replace(']', ", ...]"),
        expected: list(&expected[..4]).replace(']', ", ...]"),
        pass: out == expected,
        micros: t,
    });

    // An input whose largest value, 1000, sits in one lane.
    let input: Vec<f32> = (0..w)
        .map(|i| if i == 13 { 1000.0 } else { (i * 7 % 31) as f32 })
        .collect();
    let (out, t) = run_kernel(gpu, "p26_warp_max", LaunchConfig::new(1, warp), &input, w)?;
    outcomes.push(Outcome {
        name: format!("p26 parallel max ({} butterfly steps)", warp.trailing_zeros()),
        details: vec![
            format!("input {}", list(&input)),
            format!("output {}", list(&out)),
        ],
        result: format!("all {}", out[0]),
        expected: "all 1000".into(),
        pass: out.iter().all(|&v| v == 1000.0),
        micros: t,
    });

    // SIZE_2 = 2 * WARP_SIZE in two blocks: block 0 holds max 9 and min 0, block 1 holds 32..63.
    let input: Vec<f32> = (0..2 * w)
        .map(|i| if i < w { (i % 10) as f32 } else { i as f32 })
        .collect();
    let (out, t) = run_kernel(gpu, "p26_max_min", LaunchConfig::new(2, warp), &input, 2 * w)?;
    let expected: Vec<f32> = (0..2 * w)
        .map(|i| match (i < w, i % 2 == 0) {
            (true, true) => 9.0,
            (true, false) => 0.0,
            (false, true) => (2 * w - 1) as f32,
            (false, false) => w as f32,
        })
        .collect();
    outcomes.push(Outcome {
        name: "p26 conditional max/min, 2 blocks".into(),
        details: vec![
            format!("block 0 output {}", list(&out[..w])),
            format!("block 1 output {}", list(&out[w..])),
        ],
        result: format!("{} {}", list(&out[..2]), list(&out[w..w + 2])),
        expected: format!("{} {}", list(&expected[..2]), list(&expected[w..w + 2])),
        pass: out == expected,
        micros: t,
    });
    Ok(outcomes)
}

/// Puzzle 27: block sum, broadcast and prefix_sum on SIZE = TPB = 128, input 1..8 repeated.
pub fn block_ops_p27(gpu: &Gpu) -> Result<Vec<Outcome>> {
    let size = 128usize;
    let input: Vec<f32> = (0..size).map(|i| (i % 8 + 1) as f32).collect();
    let d_in = gpu.upload(&input)?;
    let d_out = gpu.alloc_zeroed::<f32>(size)?;
    let d_stats = gpu.alloc_zeroed::<f32>(2)?;
    // SAFETY: p27_mean_normalize takes (input, output, stats): 128 f32 in and out, 2 stats, one
    // block of 128 threads.
    let ((), t) = gpu.time(|| unsafe {
        gpu.launch(
            "p27_mean_normalize",
            LaunchConfig::new(1, size as u32),
            (
                d_in.as_device_ptr(),
                d_out.as_device_ptr(),
                d_stats.as_device_ptr(),
            ),
        )
    })?;
    let (out, stats) = (gpu.download(&d_out)?, gpu.download(&d_stats)?);
    let out_sum: f64 = out.iter().map(|&v| v as f64).sum();
    let expected: Vec<f32> = input.iter().map(|&x| x / 4.5).collect();
    let mut outcomes = vec![Outcome {
        name: "p27 mean normalisation (block.sum, broadcast)".into(),
        details: vec![
            format!("sum {}  mean {}", stats[0], stats[1]),
            format!("normalised sample {}", list(&out[..8])),
            format!("output sum {out_sum}  output mean {}", out_sum / size as f64),
        ],
        result: format!(
            "sum {} mean {} out mean {:.4}",
            stats[0],
            stats[1],
            out_sum / size as f64
        ),
        expected: "sum 576 mean 4.5 out mean 1.0000".into(),
        pass: stats[0] == 576.0 && stats[1] == 4.5 && out == expected && (out_sum - 128.0).abs() < 1e-4,
        micros: micros(t),
    }];
    let (out, t) = run_kernel(
        gpu,
        "p27_prefix_sum",
        LaunchConfig::new(1, size as u32),
        &input,
        size,
    )?;
    let expected: Vec<f32> = reference::inclusive_scan(&input)
        .iter()
        .map(|&v| v as f32)
        .collect();
    outcomes.push(Outcome {
        name: "p27 block.prefix_sum".into(),
        details: vec![format!("first 10 positions {}", list(&out[..10]))],
        result: format!("last {}", out[size - 1]),
        expected: format!("last {}", expected[size - 1]),
        pass: out == expected,
        micros: t,
    });
    Ok(outcomes)
}

/// The lecture's scans: each algorithm, inclusive and exclusive, on one section (16 elements,
/// shown) and hierarchically on n = 2^20 + 3 (three levels with 256-thread blocks).
pub fn scans(gpu: &Gpu) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    let small: Vec<f32> = (0..16).map(|i| (i % 4 + 1) as f32).collect();
    let n = (1 << 20) + 3;
    let large: Vec<f32> = (0..n).map(|i| ((i % 13) as f32 - 6.0) * 0.25).collect();
    for algorithm in SectionScan::ALL {
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let reference_of = |x: &[f32]| match kind {
                ScanKind::Inclusive => reference::inclusive_scan(x),
                ScanKind::Exclusive => reference::exclusive_scan(x),
            };
            let block = 16 / algorithm.section_len(1) as u32;
            let out = lecture_scan::hierarchical_scan(gpu, &small, algorithm, kind, block)?;
            let small_ok = out.iter().zip(reference_of(&small)).all(|(&a, b)| a as f64 == b);
            let d_in = gpu.upload(&large)?;
            let d_out = gpu.alloc_zeroed::<f32>(n)?;
            let (workspace, t) =
                gpu.time(|| lecture_scan::launch(gpu, &d_in, &d_out, algorithm, kind, 256))?;
            drop(workspace);
            let found = gpu.download(&d_out)?;
            let expected = reference_of(&large);
            let mismatch = found.iter().zip(&expected).position(|(&a, &b)| a as f64 != b);
            outcomes.push(Outcome {
                name: format!("scan {algorithm:?} {kind:?}"),
                details: vec![
                    format!("input {}", list(&small)),
                    format!("one section ({block} threads): {}", list(&out)),
                    format!(
                        "hierarchical, n = 2^20 + 3, 256 threads per block: {}",
                        mismatch.map_or("all equal to the CPU scan".into(), |i| format!(
                            "first mismatch at {i}"
                        ))
                    ),
                ],
                result: format!("last {}", found[n - 1]),
                expected: format!("last {}", expected[n - 1]),
                pass: small_ok && mismatch.is_none(),
                micros: micros(t),
            });
        }
    }
    Ok(outcomes)
}

/// Every puzzle, in SEEDS.md order.
pub fn all(gpu: &Gpu) -> Result<Vec<Outcome>> {
    let mut outcomes = vec![
        dot_product_p12(gpu)?,
        dot_product_many_blocks(gpu)?,
        warp_sum_p24(gpu)?,
    ];
    outcomes.extend(butterfly_p26(gpu)?);
    outcomes.extend(block_ops_p27(gpu)?);
    outcomes.extend(reduction_lesson(gpu)?);
    outcomes.extend(scans(gpu)?);
    Ok(outcomes)
}

/// Print each outcome's details, then one summary table (puzzle, result, expected, pass, µs) and
/// a closing `N passed, M failed` line.
pub fn print_report(gpu: &Gpu, outcomes: &[Outcome]) {
    let i = gpu.info();
    println!(
        "GPU {}: {} (sm_{}, {} SMs), driver CUDA {}, PTX variant sm_{}",
        i.ordinal,
        i.name,
        i.arch,
        i.multiprocessors,
        i.driver_cuda_version,
        crate::ptx_arch(gpu).unwrap_or(0)
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
            "{:<46} {:>30} {:>30} {:>5} {:>12.1}",
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
