//! The project's main job: run the kernels on a GPU and print what they computed.

#![warn(clippy::undocumented_unsafe_blocks)]

use clap::{Parser, Subcommand};
use gpu_primitives_cli::cli_ops::{self, Job, OpArg};
use gpu_primitives_cli::compact_ops::{self, CompactJob, KeepArg};
use gpu_primitives_cli::run_ops::{self, RunJob};
use gpu_primitives_lessons::puzzles;
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
    /// Time the first use of each kernel family on the GPU: its frame decompressed, one of its
    /// kernels compiled by the driver (or taken from its cache, CUDA_CACHE_PATH) and loaded.
    FirstUse,
    /// Benchmark device-wide reduce, scan, compaction, histogram, row operations and radix sort
    /// beside a device-to-device copy (table on stdout).
    Bench(Box<BenchArgs>),
    /// Benchmark the multi-GPU calls (gpu-primitives-distributed, NCCL) over the first --gpus
    /// GPUs of this machine, a thread a GPU: all-reduce bus bandwidth, reduce and scan of
    /// sharded f32 beside one GPU on its shard and a copy (table on stdout). Needs libnccl.
    DistBench(DistBenchArgs),
    /// Reduce a 1-D .npy array (f32 f64 i32 u32 i64 u64 f16) on the GPU and print the result.
    Reduce(FileArgs),
    /// Scan a 1-D .npy array on the GPU; print its ends, optionally write it as .npy.
    Scan(ScanArgs),
    /// Keep the items of a 1-D .npy array that pass a test (select_if) on the GPU.
    Select(SelectArgs),
    /// Drop consecutive duplicates of a 1-D .npy array (unique) on the GPU.
    Unique(CompactArgs),
    /// Run-length encode a 1-D .npy array on the GPU: each run's item and length, or with
    /// --non-trivial the offset and length of each run longer than one item.
    Rle(RleArgs),
    /// For each run of equal consecutive keys of a 1-D .npy array (u32 i32 u64 i64), its first
    /// key and the reduction of its values from a second .npy array on the GPU (reduce_by_key;
    /// with --unique its first value, unique_by_key).
    ReduceByKey(ByKeyArgs),
    /// Count the samples of a 1-D .npy array (u8 u16 i32 u32 f16 f32 f64) in bins on the GPU: even bins
    /// over [lower, upper), or between --levels.
    Histogram(HistogramArgs),
    /// Radix sort the keys of a .npy array (f32 f64 i32 u32 i64 u64 f16 u8 u16; 1-D, or 2-D: each row
    /// on its own) on the GPU, ascending or descending, over all bits or a bit range; or
    /// --argsort: the permutation that sorts them (u32 indices, stable); or --top-k: each row's
    /// K largest or smallest.
    Sort(SortArgs),
    /// A row operation on each row of a 2-D .npy matrix (f32 f16) on the GPU: softmax,
    /// log-softmax, LayerNorm or RMSNorm.
    Rows(RowsArgs),
    /// Draw the plot of a benchmark CSV (from `bench --csv`) without running anything: no GPU.
    Plot {
        /// The CSV written by `bench --csv`.
        csv: std::path::PathBuf,
        /// The PNG to write.
        png: std::path::PathBuf,
    },
}

#[derive(clap::Args)]
struct FileArgs {
    /// The input .npy file (1-D, little-endian).
    input: std::path::PathBuf,
    /// The operator.
    #[arg(long, value_enum, default_value_t = OpArg::Sum)]
    op: OpArg,
    /// Also compute the CPU reference (f64 for floats, exact for integers) and print the largest
    /// error.
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct ScanArgs {
    #[command(flatten)]
    file: FileArgs,
    /// Exclusive scan (element i excludes input i) instead of inclusive.
    #[arg(long)]
    exclusive: bool,
    /// Write the scan to this .npy file (f16 input scans to f32).
    #[arg(long)]
    output: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct CompactArgs {
    /// The input .npy file (1-D, little-endian: f32 f64 i32 u32 i64 u64 f16).
    input: std::path::PathBuf,
    /// Write the kept items to this .npy file.
    #[arg(long)]
    output: Option<std::path::PathBuf>,
    /// Also compute the CPU reference and compare bit for bit (exit status 1 if they differ).
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct RleArgs {
    /// The input .npy file (1-D, little-endian: f32 f64 i32 u32 i64 u64 f16).
    input: std::path::PathBuf,
    /// Only the runs longer than one item, as their offsets (u32) and lengths, instead of every
    /// run's item and length.
    #[arg(long)]
    non_trivial: bool,
    /// Write the items (with --non-trivial: the offsets, u32) to this .npy file and the lengths
    /// (u32) beside it, `.lengths.npy` in place of `.npy`.
    #[arg(long)]
    output: Option<std::path::PathBuf>,
    /// Also compute the CPU reference and compare bit for bit (exit status 1 if they differ).
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct ByKeyArgs {
    /// The keys .npy file (1-D, little-endian: u32 i32 u64 i64).
    keys: std::path::PathBuf,
    /// The values .npy file (1-D, as long as the keys: f32 f64 i32 u32 i64 u64 f16).
    values: std::path::PathBuf,
    /// The operator of each run's reduction.
    #[arg(long, value_enum, default_value_t = OpArg::Sum)]
    op: OpArg,
    /// Each run's first value instead of its reduction (unique_by_key).
    #[arg(long)]
    unique: bool,
    /// Write the runs' keys to this .npy file and their values beside it, `.values.npy` in
    /// place of `.npy` (reductions of f16 values are f32).
    #[arg(long)]
    output: Option<std::path::PathBuf>,
    /// Also compute the CPU reference and compare (exit status 1 if they differ): keys and first
    /// values bit for bit, reductions exactly but for float sums, each within the rounding bound
    /// of its run (the GPU adds a long run in another order).
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct RowsArgs {
    /// The input .npy file (2-D, row-major, little-endian: f32 f16).
    input: std::path::PathBuf,
    /// The operation on each row.
    #[arg(long, value_enum)]
    op: gpu_primitives_cli::rows_ops::RowOpArg,
    /// The norms' epsilon (added to the variance or the mean square).
    #[arg(long, default_value_t = 1e-5)]
    eps: f32,
    /// Cross-entropy: the target class of each row (a 1-D i64 .npy file of `rows` values; -100
    /// ignores a row).
    #[arg(long)]
    targets: Option<std::path::PathBuf>,
    /// Cross-entropy's label smoothing, in [0, 1].
    #[arg(long, default_value_t = 0.0)]
    label_smoothing: f32,
    /// The backward instead: dy, a .npy matrix of the input's shape and type; the result is dx
    /// (softmax, log-softmax: from the GPU's y; LayerNorm, RMSNorm: from their saved mean and
    /// rstd, no weight).
    #[arg(long, value_name = "DY")]
    grad: Option<std::path::PathBuf>,
    /// Cross-entropy: also write the gradient of the rows' summed losses with respect to the
    /// logits (softmax minus the target distribution; 0 on an ignored row), fused into the
    /// forward, to this .npy file (the input's shape and type); --check checks it too.
    #[arg(long, value_name = "FILE")]
    logits_grad: Option<std::path::PathBuf>,
    /// The matrices are bf16, stored as their bits in u16 .npy files (NumPy has no bf16 type;
    /// torch: `x.view(torch.int16).numpy().view(numpy.uint16)`); the output is written the same
    /// way.
    #[arg(long)]
    bf16_bits: bool,
    /// Write the result (same shape and type) to this .npy file.
    #[arg(long)]
    output: Option<std::path::PathBuf>,
    /// Also compute the f64 CPU reference and check every element is within its bound (exit
    /// status 1 if one is not).
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct SortArgs {
    /// The keys: a .npy file (little-endian: f32 f64 i32 u32 i64 u64 f16 u8 u16), 1-D, or 2-D (C
    /// order: each row sorted on its own, as torch's sort(dim=-1)).
    input: std::path::PathBuf,
    /// Largest key first (NaNs first for floats) instead of smallest first; equal keys keep
    /// their input order either way.
    #[arg(long)]
    descending: bool,
    /// The permutation that sorts the keys (u32 indices: the input index of each key in order)
    /// instead of the sorted keys.
    #[arg(long)]
    argsort: bool,
    /// The first bit compared, of the keys' ordered bits (CUB's begin_bit): keys equal in the
    /// compared bits keep their input order.
    #[arg(long, value_name = "BIT")]
    begin_bit: Option<u32>,
    /// The bit after the last one compared (CUB's end_bit; default: the key's width). For floats
    /// the ordered bits are not the stored bits.
    #[arg(long, value_name = "BIT")]
    end_bit: Option<u32>,
    /// Keep each row's first K keys of the sort and their columns (torch's topk): the K largest
    /// with --descending (largest first, NaNs first for floats), else the K smallest; ties go to
    /// the lower column. Compares whole keys (no bit range).
    #[arg(long, value_name = "K", conflicts_with_all = ["begin_bit", "end_bit"])]
    top_k: Option<usize>,
    /// The keys are bf16, stored as their bits in a u16 .npy file (NumPy has no bf16 type;
    /// torch: `x.view(torch.int16).numpy().view(numpy.uint16)`); sorted keys are written the
    /// same way.
    #[arg(long)]
    bf16_bits: bool,
    /// Write the sorted keys (with --argsort: the indices, u32; 2-D for a 2-D input, each row's
    /// indices within the row) to this .npy file.
    #[arg(long)]
    output: Option<std::path::PathBuf>,
    /// Also sort on the CPU (a stable sort) and compare bit for bit, keys and indices (exit
    /// status 1 if they differ).
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct HistogramArgs {
    /// The input .npy file (1-D, little-endian: u8 u16 i32 u32 f16 f32 f64).
    input: std::path::PathBuf,
    /// Number of even bins.
    #[arg(long, default_value_t = 256)]
    bins: u32,
    /// Lowest level of the even bins (included).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    lower: f64,
    /// Highest level of the even bins (excluded).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    upper: f64,
    /// Sorted bin levels, comma-separated (bins + 1 of them): bins between levels instead.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    levels: Option<Vec<f64>>,
    /// Write the counts (u64) to this .npy file.
    #[arg(long)]
    output: Option<std::path::PathBuf>,
    /// Also compute the CPU reference and compare (exit status 1 if they differ).
    #[arg(long)]
    check: bool,
}

#[derive(clap::Args)]
struct SelectArgs {
    #[command(flatten)]
    file: CompactArgs,
    /// The test each item must pass.
    #[arg(long, value_enum)]
    keep: KeepArg,
    /// Its operand (the lower bound for `range`; unused for `not-nan`).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    value: f64,
    /// The upper bound of `range` (exclusive).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    hi: f64,
}

#[derive(clap::Args)]
struct DistBenchArgs {
    /// GPUs (ranks): the first N of this machine.
    #[arg(long, default_value_t = 2)]
    gpus: usize,
    /// Items of the reduce and the scan in all, as log2 (split evenly over the GPUs).
    #[arg(long, default_value_t = 30)]
    log2: u32,
    /// Bytes a rank of each all-reduce, as log2.
    #[arg(long, value_delimiter = ',', default_value = "20,24,26,28,30")]
    all_reduce_log2: Vec<u32>,
    /// Random u32 keys of the sort in all, as log2 (split evenly over the GPUs), beside GPU 0
    /// sorting all of them alone; 0 skips the sort.
    #[arg(long, default_value_t = 0)]
    sort_log2: u32,
    /// Timed calls per figure; the median is reported.
    #[arg(long, default_value_t = 21)]
    runs: usize,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Smallest n, as log2.
    #[arg(long, default_value_t = 10)]
    min_log2: u32,
    /// Largest n, as log2.
    #[arg(long, default_value_t = 30)]
    max_log2: u32,
    /// Step between sizes, as log2 (2 = x4).
    #[arg(long, default_value_t = 2)]
    step_log2: u32,
    /// Timed runs per measurement; the median is reported.
    #[arg(long, default_value_t = 21)]
    runs: usize,
    /// n (as log2) at which the other element types are measured; 0 skips them.
    #[arg(long, default_value_t = 28)]
    types_at_log2: u32,
    /// Element type of the size sweep: f32, f64, i32, u32, i64, u64, f16, bf16.
    #[arg(long, default_value = "f32")]
    sweep_type: String,
    /// Types measured at --types-at-log2, comma-separated (default: all but the sweep type).
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
    /// Operators of the reduce and the scan, comma-separated: sum, min, max.
    #[arg(long, value_delimiter = ',', default_value = "sum")]
    ops: Vec<String>,
    /// Skip reduce and scan (only the compaction rows).
    #[arg(long)]
    no_reduce_scan: bool,
    /// Types of the compaction rows (select, unique, partition, run-length encoding) and of the
    /// segment rows (segmented reduce and scan by offsets, scan by key), comma-separated; "none"
    /// skips them.
    #[arg(long, value_delimiter = ',', default_value = "f32,u32")]
    compaction_types: Vec<String>,
    /// Sizes of the compaction and histogram rows, as log2, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "20,24,28")]
    compaction_log2: Vec<u32>,
    /// Sample types of the histogram rows (256 bins, even and by range), comma-separated:
    /// u8, u16, i32, u32, f16, bf16, f32, f64; "none" skips them.
    #[arg(long, value_delimiter = ',', default_value = "f32,u32")]
    histogram_types: Vec<String>,
    /// Types of the row operations (softmax, log-softmax, LayerNorm, RMSNorm, the backward; five
    /// shapes of 2^28 elements), comma-separated: f32, f16, bf16; "none" skips them.
    #[arg(long, value_delimiter = ',', default_value = "f32,bf16")]
    row_types: Vec<String>,
    /// Key types of the radix sort rows, comma-separated: u8, u16, u32, i32, f32, u64, i64, f64,
    /// f16, bf16 (uniform random bits); the first is measured at every --sort-log2 size,
    /// sort_keys and sort_pairs with values of each --sort-values type, the others sort_keys at
    /// the largest; "none" skips them.
    #[arg(long, value_delimiter = ',', default_value = "u32,f32,u64")]
    sort_types: Vec<String>,
    /// Value types of the first sort key type's sort_pairs rows, comma-separated: u32, u64
    /// (each key's index); "none" skips them.
    #[arg(long, value_delimiter = ',', default_value = "u32")]
    sort_values: Vec<String>,
    /// Sizes of the sort rows, as log2, comma-separated (at most 31).
    #[arg(long, value_delimiter = ',', default_value = "20,24,28")]
    sort_log2: Vec<u32>,
    /// Also write the rows as CSV.
    #[arg(long)]
    csv: Option<std::path::PathBuf>,
    /// Also write the rows as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Also draw GB/s against n (the sweep type) with the copy as the reference line, as a PNG.
    #[arg(long)]
    plot: Option<std::path::PathBuf>,
}

fn compact_job(cli: &Cli, args: &CompactArgs, keep: Option<(KeepArg, f64, f64)>) -> CompactJob {
    CompactJob {
        input: args.input.clone(),
        keep,
        output: args.output.clone(),
        check: args.check,
        device: cli.device,
    }
}

/// Exit status 0 when the command ran (and `--check` found no difference), 1 when `--check`
/// found one, 2 for an error ([`cli_ops::exit_status`], one rule for every command).
fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = run(&cli);
    if let Err(e) = &outcome {
        eprintln!("error: {e}");
    }
    ExitCode::from(cli_ops::exit_status(&outcome))
}

/// Run the command. Every argument and input file is checked before the GPU is opened: the file
/// commands check theirs and read their input first (each module's `run` opens the GPU last),
/// and the benchmark's configuration is checked here before [`gpu_primitives_lessons::open_gpu`].
fn run(cli: &Cli) -> Result<bool, Box<dyn std::error::Error>> {
    // Tuning overrides for measurement sweeps, from `GPU_PRIMITIVES_<NAME>` (the library reads
    // no environment variable; the CLI and its benchmarks are where they are read): checked,
    // installed before the first launch as the process default, the tuning of every call here
    // (none carries overrides of its own, `CallOn::with_tuning`).
    gpu_primitives::set_tuning_overrides(gpu_primitives::TuningOverrides::from_vars(|name| {
        std::env::var(name).ok()
    })?)?;
    match &cli.command {
        Some(Command::Reduce(args)) => return Ok(cli_ops::run(&job(cli, args, false, None), false)?),
        Some(Command::Scan(args)) => {
            return Ok(cli_ops::run(
                &job(cli, &args.file, args.exclusive, args.output.clone()),
                true,
            )?);
        }
        Some(Command::Select(args)) => {
            return Ok(compact_ops::run(&compact_job(
                cli,
                &args.file,
                Some((args.keep, args.value, args.hi)),
            ))?);
        }
        Some(Command::Unique(args)) => return Ok(compact_ops::run(&compact_job(cli, args, None))?),
        Some(Command::Rle(args)) => {
            return Ok(run_ops::run(&RunJob {
                input: args.input.clone(),
                non_trivial: args.non_trivial,
                output: args.output.clone(),
                check: args.check,
                device: cli.device,
            })?);
        }
        Some(Command::ReduceByKey(args)) => {
            return Ok(gpu_primitives_cli::by_key_ops::run(
                &gpu_primitives_cli::by_key_ops::ByKeyJob {
                    keys: args.keys.clone(),
                    values: args.values.clone(),
                    op: args.op,
                    unique: args.unique,
                    output: args.output.clone(),
                    check: args.check,
                    device: cli.device,
                },
            )?);
        }
        Some(Command::Rows(args)) => {
            return Ok(gpu_primitives_cli::rows_ops::run(
                &gpu_primitives_cli::rows_ops::RowsJob {
                    input: args.input.clone(),
                    op: args.op,
                    eps: args.eps,
                    targets: args.targets.clone(),
                    label_smoothing: args.label_smoothing,
                    grad: args.grad.clone(),
                    logits_grad: args.logits_grad.clone(),
                    bf16_bits: args.bf16_bits,
                    output: args.output.clone(),
                    check: args.check,
                    device: cli.device,
                },
            )?);
        }
        Some(Command::Sort(args)) => {
            return Ok(gpu_primitives_cli::sort_ops::run(
                &gpu_primitives_cli::sort_ops::SortJob {
                    input: args.input.clone(),
                    descending: args.descending,
                    argsort: args.argsort,
                    begin_bit: args.begin_bit,
                    end_bit: args.end_bit,
                    top_k: args.top_k,
                    bf16_bits: args.bf16_bits,
                    output: args.output.clone(),
                    check: args.check,
                    device: cli.device,
                },
            )?);
        }
        Some(Command::Histogram(args)) => {
            return Ok(gpu_primitives_cli::histogram_ops::run(
                &gpu_primitives_cli::histogram_ops::HistogramJob {
                    input: args.input.clone(),
                    even: (args.bins, args.lower, args.upper),
                    levels: args.levels.clone(),
                    output: args.output.clone(),
                    check: args.check,
                    device: cli.device,
                },
            )?);
        }
        Some(Command::Plot { csv, png }) => {
            gpu_primitives_cli::npy::check_outputs(&[("plot's PNG", png)], &[csv])?;
            gpu_primitives_cli::plot::plot(png, &gpu_primitives_cli::bench::read_csv(csv)?)?;
            println!("wrote {}", png.display());
            return Ok(true);
        }
        _ => {}
    }
    if let Some(Command::DistBench(args)) = &cli.command {
        let config = gpu_primitives_cli::dist_bench::DistBenchConfig {
            gpus: args.gpus,
            log2: args.log2,
            all_reduce_log2: args.all_reduce_log2.clone(),
            sort_log2: (args.sort_log2 > 0).then_some(args.sort_log2),
            runs: args.runs,
        };
        config.validate().map_err(cli_ops::CliError::Usage)?;
        let rows = gpu_primitives_cli::dist_bench::run(&config)?;
        let name = gpu_primitives::open_gpu(0)?.info().name.clone();
        print!("{}", gpu_primitives_cli::dist_bench::table(&config, &name, &rows));
        return Ok(true);
    }
    // The benchmark's configuration, checked before the GPU is opened.
    if let Some(Command::Bench(args)) = &cli.command {
        let config = gpu_primitives_cli::bench::BenchConfig {
            min_log2: args.min_log2,
            max_log2: args.max_log2,
            step_log2: args.step_log2,
            runs: args.runs,
            other_types_log2: (args.types_at_log2 > 0).then_some(args.types_at_log2),
            sweep_type: args.sweep_type.clone(),
            types: args.types.clone(),
            ops: args.ops.clone(),
            reduce_scan: !args.no_reduce_scan,
            compaction_types: without_none(&args.compaction_types),
            compaction_log2: args.compaction_log2.clone(),
            histogram_types: without_none(&args.histogram_types),
            row_types: without_none(&args.row_types),
            sort_types: without_none(&args.sort_types),
            sort_values: without_none(&args.sort_values),
            sort_log2: args.sort_log2.clone(),
        };
        config.validate().map_err(cli_ops::CliError::Usage)?;
        let outputs: Vec<(&'static str, &std::path::Path)> = [
            ("--csv", &args.csv),
            ("--json", &args.json),
            ("--plot", &args.plot),
        ]
        .into_iter()
        .filter_map(|(option, path)| Some((option, path.as_deref()?)))
        .collect();
        gpu_primitives_cli::npy::check_outputs(&outputs, &[])?;
        let gpu = gpu_primitives_lessons::open_gpu(cli.device)?;
        return bench(&gpu, args, &config);
    }
    let gpu = gpu_primitives_lessons::open_gpu(cli.device)?;
    match cli.command.as_ref().unwrap_or(&Command::Puzzles) {
        Command::Info => {
            let i = gpu.info();
            println!("device {}: {}", i.ordinal, i.name);
            println!("compute capability: {}.{}", i.arch / 10, i.arch % 10);
            println!("multiprocessors: {}", i.multiprocessors);
            println!("warp size: {}", i.warp_size);
            println!("memory: {:.1} GiB", i.total_memory as f64 / (1u64 << 30) as f64);
            println!("driver CUDA version: {}", i.driver_cuda_version);
            println!("PTX variant loaded: sm_{}", gpu_primitives::ptx_arch(&gpu)?);
            Ok(true)
        }
        Command::FirstUse => {
            let rows = gpu_primitives_cli::first_use::measure(&gpu)?;
            println!(
                "{:<40} {:<46} {:>14} {:>16}",
                "family", "kernel compiled", "decompress µs", "first kernel µs"
            );
            for r in &rows {
                println!(
                    "{:<40} {:<46} {:>14.1} {:>16.1}",
                    r.family, r.kernel, r.decompress_us, r.first_kernel_us
                );
            }
            let total =
                |f: fn(&gpu_primitives_cli::first_use::FirstUse) -> f64| rows.iter().map(f).sum::<f64>();
            println!(
                "{:<40} {:<46} {:>14.1} {:>16.1}",
                format!("all {} families", rows.len()),
                "",
                total(|r| r.decompress_us),
                total(|r| r.first_kernel_us)
            );
            Ok(true)
        }
        Command::Puzzles => {
            let outcomes = puzzles::all(&gpu)?;
            puzzles::print_report(&gpu, &outcomes);
            Ok(outcomes.iter().all(|o| o.pass))
        }
        Command::Bench(_)
        | Command::DistBench(_)
        | Command::Reduce(_)
        | Command::Scan(_)
        | Command::Select(_)
        | Command::Unique(_)
        | Command::Rle(_)
        | Command::ReduceByKey(_)
        | Command::Rows(_)
        | Command::Sort(_)
        | Command::Histogram(_)
        | Command::Plot { .. } => {
            unreachable!("handled before the GPU is opened")
        }
    }
}

/// Run the benchmark of `config` (checked) on `gpu`, print it and write the files `args` asks
/// for: whether every file was written.
fn bench(
    gpu: &gpu_primitives::Gpu,
    args: &BenchArgs,
    config: &gpu_primitives_cli::bench::BenchConfig,
) -> Result<bool, Box<dyn std::error::Error>> {
    let rows = gpu_primitives_cli::bench::run(gpu, config)?;
    gpu_primitives_cli::bench::print_table(&rows);
    gpu_primitives_cli::bench::sort::print_rates(&rows);
    let written = [
        args.csv
            .as_ref()
            .map(|p| gpu_primitives_cli::bench::write_csv(p, &rows)),
        args.json
            .as_ref()
            .map(|p| gpu_primitives_cli::bench::write_json(p, &rows)),
        args.plot
            .as_ref()
            .map(|p| gpu_primitives_cli::plot::plot(p, &rows)),
    ];
    let failures: Vec<String> = written.into_iter().flatten().filter_map(|r| r.err()).collect();
    for failure in &failures {
        eprintln!("error: {failure}");
    }
    Ok(failures.is_empty())
}

fn job(cli: &Cli, args: &FileArgs, exclusive: bool, output: Option<std::path::PathBuf>) -> Job {
    Job {
        input: args.input.clone(),
        op: args.op,
        exclusive,
        output,
        check: args.check,
        device: cli.device,
    }
}

/// A comma-separated type list's names but "none" (the list that skips its rows).
fn without_none(names: &[String]) -> Vec<String> {
    names.iter().filter(|t| *t != "none").cloned().collect()
}
