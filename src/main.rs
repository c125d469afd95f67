//! The project's main job: run the kernels on a GPU and print what they computed.

use clap::{Parser, Subcommand};
use gpu_primitives::{Gpu, dot_product, reduction, reference};
use std::process::ExitCode;

/// Pure-Rust GPU primitives: run the puzzles and lessons on a GPU.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// GPU ordinal.
    #[arg(long, default_value_t = 0, global = true)]
    device: u32,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run every puzzle on the GPU and print one summary table (the default).
    Puzzles,
    /// Print the GPU, its compute capability, driver, memory and the PTX variant loaded.
    Info,
}

/// One row of the summary table.
struct Row {
    puzzle: &'static str,
    result: String,
    expected: String,
    pass: bool,
    micros: f64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> gpu_primitives::Result<bool> {
    let gpu = gpu_primitives::open_gpu(cli.device)?;
    match cli.command.as_ref().unwrap_or(&Command::Puzzles) {
        Command::Info => {
            print_info(&gpu);
            Ok(true)
        }
        Command::Puzzles => {
            print_info(&gpu);
            let rows = puzzles(&gpu)?;
            print_table(&rows);
            Ok(rows.iter().all(|r| r.pass))
        }
    }
}

fn print_info(gpu: &Gpu) {
    let i = gpu.info();
    println!(
        "GPU {}: {} (sm_{}, {} SMs, {:.1} GiB), driver CUDA {}, PTX variant sm_{}",
        i.ordinal,
        i.name,
        i.arch,
        i.multiprocessors,
        i.total_memory as f64 / (1u64 << 30) as f64,
        i.driver_cuda_version,
        i.ptx_arch
    );
}

fn puzzles(gpu: &Gpu) -> gpu_primitives::Result<Vec<Row>> {
    let mut rows = Vec::new();

    // Puzzle 12: SIZE 8, TPB 8, one block: a = b = 0..8 -> 140.
    let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let d_a = gpu.upload(&a)?;
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    let ((), t) = gpu.time(|| {
        dot_product::launch(
            gpu,
            &d_a,
            &d_a,
            &d_out,
            gpu_primitives::LaunchConfig::new(1, 8),
        )
    })?;
    let found = gpu.download(&d_out)?[0];
    rows.push(Row {
        puzzle: "p12 dot product (SIZE 8, TPB 8)",
        result: format!("{found}"),
        expected: "140".into(),
        pass: found == 140.0,
        micros: t.as_secs_f64() * 1e6,
    });

    // The same tree over many blocks: n = 2^20, values on a grid of 1/4 so the sum is exact.
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| ((i % 9) as f32 - 4.0) * 0.25).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i % 7) as f32 - 3.0) * 0.25).collect();
    let expected = reference::dot_product(&x, &y);
    let (d_x, d_y) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let d_out = gpu.alloc_zeroed::<f32>(1)?;
    let config = gpu_primitives::LaunchConfig::for_elements(
        n,
        dot_product::DEFAULT_BLOCK,
        4 * gpu.info().multiprocessors,
    );
    let ((), t) = gpu.time(|| dot_product::launch(gpu, &d_x, &d_y, &d_out, config))?;
    let found = gpu.download(&d_out)?[0];
    rows.push(Row {
        puzzle: "dot product, n = 2^20, many blocks",
        result: format!("{found}"),
        expected: format!("{expected}"),
        pass: found as f64 == expected,
        micros: t.as_secs_f64() * 1e6,
    });

    // The reduction lesson: hierarchical block_sum vs one thread, n = 2^24.
    let n = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| ((i % 17) as f32 - 8.0) * 0.25).collect();
    let expected = reference::sum(&x);
    let d_x = gpu.upload(&x)?;
    for kernel in [
        reduction::SumKernel::Hierarchical,
        reduction::SumKernel::Naive,
    ] {
        let d_out = gpu.alloc_zeroed::<f32>(1)?;
        let config = reduction::hierarchical_config(gpu, n);
        let ((), t) = gpu.time(|| reduction::launch(gpu, kernel, &d_x, &d_out, config))?;
        let found = gpu.download(&d_out)?[0];
        rows.push(Row {
            puzzle: match kernel {
                reduction::SumKernel::Hierarchical => "reduction: hierarchical block_sum, n = 2^24",
                reduction::SumKernel::Naive => "reduction: naive one-thread sum, n = 2^24",
            },
            result: format!("{found}"),
            expected: format!("{expected}"),
            pass: reference::f32_sum_matches(found, expected, n, reference::sum_abs(&x)),
            micros: t.as_secs_f64() * 1e6,
        });
    }
    Ok(rows)
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<46} {:>14} {:>14} {:>5} {:>12}",
        "puzzle", "result", "expected", "pass", "time (µs)"
    );
    for r in rows {
        println!(
            "{:<46} {:>14} {:>14} {:>5} {:>12.1}",
            r.puzzle,
            r.result,
            r.expected,
            if r.pass { "yes" } else { "NO" },
            r.micros
        );
    }
    let passed = rows.iter().filter(|r| r.pass).count();
    println!("{passed} passed, {} failed", rows.len() - passed);
}
