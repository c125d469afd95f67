//! The project's main job: run the kernels on a GPU and print what they computed.

use clap::{Parser, Subcommand};
use gpu_primitives::puzzles;
use std::process::ExitCode;

/// Pure-Rust GPU primitives: run the puzzles and lessons on a GPU.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// GPU ordinal (0 = the first GPU).
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
            let i = gpu.info();
            println!("device {}: {}", i.ordinal, i.name);
            println!("compute capability: {}.{}", i.arch / 10, i.arch % 10);
            println!("multiprocessors: {}", i.multiprocessors);
            println!("warp size: {}", i.warp_size);
            println!("memory: {:.1} GiB", i.total_memory as f64 / (1u64 << 30) as f64);
            println!("driver CUDA version: {}", i.driver_cuda_version);
            println!("PTX variant loaded: sm_{}", i.ptx_arch);
            Ok(true)
        }
        Command::Puzzles => {
            let outcomes = puzzles::all(&gpu)?;
            puzzles::print_report(&gpu, &outcomes);
            Ok(outcomes.iter().all(|o| o.pass))
        }
    }
}
