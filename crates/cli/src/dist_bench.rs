//! `gpu-primitives dist-bench`: the calls of `gpu-primitives-distributed` over the first `gpus`
//! GPUs of this machine (one process, a thread a GPU: `Communicator::local`), beside each GPU
//! doing its shard alone with the single-GPU library and a device-to-device copy of its shard,
//! all measured in the same run.
//!
//! Every call of the distributed crate returns when its work has run, so each is timed on the
//! host: the ranks start each call together (a barrier), and a figure is the median over `runs`
//! calls (after one untimed warm-up) of the slowest rank's time. The single-GPU rows are timed
//! the same way (the call, then a synchronisation of its stream), each GPU on its own shard at
//! the same time.
//!
//! - All-reduce: NCCL's in-place sum of `f32` (`all_reduce`), `bytes` a rank. Algorithm
//!   bandwidth = bytes / time; bus bandwidth = algorithm bandwidth x 2 (N - 1) / N, the
//!   convention of NVIDIA's nccl-tests, which `scripts/dist-baseline` prints for
//!   `torch.distributed.all_reduce` in the same units.
//! - Reduce and scan (sum of `f32`): `n` items in all, `n / N` a rank; GB/s counts the bytes the
//!   algorithm must move on a rank (the reduce reads its shard; the scan reads it and writes
//!   its output; the copy reads and writes the shard), so the distributed scan's second read
//!   shows as a lower figure. Beside each: one GPU's single-GPU call on its shard, and the
//!   all-reduce of one `f32` (a small NCCL round trip).
//! - Sort (`sort_keys` of `u32`, ascending; optional): `2^sort_log2` uniformly random keys in
//!   all, `1 / N` a rank, beside GPU 0 sorting as many keys alone (other random keys of the
//!   same distribution, generated on the host; at most `SORT_MAX_KEYS`, 2^32 - 1, which one
//!   call sorts). GB/s counts the keys' bytes of each row (every rank's, for the distributed
//!   sort), so the ratio of the two rows' GB/s is the ratio of keys per second. Then one more
//!   distributed sort with its phases timed (`Communicator::record_phases`: each phase ends with
//!   a synchronisation), the slowest rank's time of each. Then the whole array's top-k
//!   (`top_k`, the largest, k = 2^10 and 2^20) of the same keys, beside GPU 0's `top_k_of_all`
//!   of as many keys alone.

use gpu_primitives::device::{self, DeviceVec, DeviceWorkspace, SortOptions, Sum};
use gpu_primitives::{DeviceBuffer, Gpu};
use gpu_primitives_distributed::{self as dist, Communicator, ReduceOp};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a rank's collective waits for the others in the benchmark.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The line the ranks start each timed call at: a barrier that a rank which fails or panics
/// breaks (through [`Breaker`]), so that the others stop instead of waiting for it.
struct StartLine {
    ranks: usize,
    /// Ranks arrived in this round, the round, whether broken.
    state: Mutex<(usize, u64, bool)>,
    turn: Condvar,
}

impl StartLine {
    fn new(ranks: usize) -> Self {
        Self {
            ranks,
            state: Mutex::new((0, 0, false)),
            turn: Condvar::new(),
        }
    }

    /// Wait for every rank; false when the line is broken.
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.2 {
            return false;
        }
        let round = state.1;
        state.0 += 1;
        if state.0 == self.ranks {
            *state = (0, round + 1, false);
            self.turn.notify_all();
            return true;
        }
        while state.1 == round && !state.2 {
            state = self.turn.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.1 != round
    }

    fn break_line(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).2 = true;
        self.turn.notify_all();
    }
}

/// Breaks the line when dropped armed: a rank that returns an error or panics.
struct Breaker<'a>(&'a StartLine, bool);

impl Drop for Breaker<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.break_line();
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct DistBenchConfig {
    /// GPUs (ranks), the first of this machine; at least 1.
    pub gpus: usize,
    /// Items of the reduce and the scan, in all, as log2 (split evenly over the ranks).
    pub log2: u32,
    /// Bytes a rank of each all-reduce, as log2.
    pub all_reduce_log2: Vec<u32>,
    /// Keys of the sort in all, as log2 (none: no sort).
    pub sort_log2: Option<u32>,
    /// Timed calls per figure (the median is reported).
    pub runs: usize,
}

impl DistBenchConfig {
    /// Check the configuration without a GPU.
    ///
    /// # Errors
    /// What is wrong, for the command line.
    pub fn validate(&self) -> Result<(), String> {
        if self.gpus == 0 {
            return Err("--gpus: at least 1".into());
        }
        if self.runs == 0 {
            return Err("--runs: at least 1".into());
        }
        if !(10..=36).contains(&self.log2) {
            return Err(format!("--log2 {}: from 10 to 36", self.log2));
        }
        if let Some(b) = self.all_reduce_log2.iter().find(|b| !(2..=34).contains(*b)) {
            return Err(format!("--all-reduce-log2 {b}: from 2 (one f32) to 34"));
        }
        if let Some(k) = self.sort_log2.filter(|k| !(10..=34).contains(k)) {
            return Err(format!("--sort-log2 {k}: from 10 to 34 (0: no sort)"));
        }
        Ok(())
    }

    /// The items of rank `rank`'s shard: `2^log2` split as evenly as it goes.
    pub fn shard_len(&self, rank: usize) -> usize {
        split(1usize << self.log2, self.gpus, rank)
    }
}

/// Rank `rank`'s share of `n` items over `ranks`, as even as it goes.
fn split(n: usize, ranks: usize, rank: usize) -> usize {
    n / ranks + usize::from(rank < n % ranks)
}

/// One measured figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What ran: `all_reduce`, `reduce`, `scan`, `one GPU reduce`, `copy`, ...
    pub what: String,
    /// Ranks that took part (1 for the single-GPU rows: each GPU alone).
    pub ranks: usize,
    /// Bytes a rank moves (as the module says).
    pub bytes: u64,
    /// Median time of the slowest rank, µs.
    pub micros: f64,
    /// `bytes / time`, GB/s (10^9 bytes).
    pub gb_per_s: f64,
    /// All-reduce only: the bus bandwidth, GB/s.
    pub bus_gb_per_s: Option<f64>,
}

/// The bus bandwidth of an all-reduce of `bytes` a rank over `ranks` ranks in `micros` µs
/// (nccl-tests' convention: algorithm bandwidth x 2 (ranks - 1) / ranks).
///
/// ```
/// use gpu_primitives_cli::dist_bench::bus_bandwidth;
/// assert_eq!(bus_bandwidth(1_000_000_000, 4, 10_000.0), 150.0); // 100 GB/s x 1.5
/// assert_eq!(bus_bandwidth(1_000_000_000, 1, 10_000.0), 0.0);
/// ```
pub fn bus_bandwidth(bytes: u64, ranks: usize, micros: f64) -> f64 {
    let algorithm = bytes as f64 / micros / 1e3;
    algorithm * 2.0 * (ranks as f64 - 1.0) / ranks as f64
}

/// The median over calls of the slowest rank's time: `times[rank][call]`, µs.
///
/// ```
/// use gpu_primitives_cli::dist_bench::median_of_slowest;
/// assert_eq!(median_of_slowest(&[vec![1.0, 5.0, 3.0], vec![2.0, 1.0, 4.0]]), 4.0);
/// ```
pub fn median_of_slowest(times: &[Vec<f64>]) -> f64 {
    let calls = times.iter().map(Vec::len).min().unwrap_or(0);
    let mut slowest: Vec<f64> = (0..calls)
        .map(|c| times.iter().map(|t| t[c]).fold(0.0, f64::max))
        .collect();
    slowest.sort_by(f64::total_cmp);
    slowest.get(calls / 2).copied().unwrap_or(f64::NAN)
}

/// One rank's timings: each measurement's name and its calls' times, µs.
type Timings = Vec<(String, Vec<f64>)>;

/// Run every measurement on `gpus`, a thread a rank.
///
/// # Errors
/// A rank's error (the GPU, memory, NCCL, a timeout).
pub fn run(config: &DistBenchConfig) -> Result<Vec<Row>, dist::Error> {
    let gpus: Vec<Gpu> = (0..config.gpus)
        .map(|o| gpu_primitives::open_gpu(o as u32))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&Gpu> = gpus.iter().collect();
    let comms = Communicator::local(&refs, TIMEOUT)?;
    let line = StartLine::new(config.gpus);
    let per_rank: Vec<Result<Timings, dist::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .zip(&gpus)
            .map(|(comm, gpu)| {
                let line = &line;
                s.spawn(move || {
                    let mut breaker = Breaker(line, true);
                    let timings = rank_timings(config, comm, gpu, line);
                    breaker.1 = timings.is_err();
                    timings
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank panicked"))
            .collect()
    });
    let per_rank: Vec<Timings> = per_rank.into_iter().collect::<Result<_, _>>()?;
    let shard_bytes = (config.shard_len(0) * size_of::<f32>()) as u64;
    let rows = per_rank[0]
        .iter()
        .enumerate()
        .map(|(m, (what, _))| {
            let times: Vec<Vec<f64>> = per_rank.iter().map(|r| r[m].1.clone()).collect();
            let micros = median_of_slowest(&times);
            let (ranks, bytes, bus) = if let Some(log2) = what.strip_prefix("all_reduce ") {
                let bytes = 1u64 << log2.parse::<u32>().expect("the name this module gave");
                (
                    config.gpus,
                    bytes,
                    Some(bus_bandwidth(bytes, config.gpus, micros)),
                )
            } else if what.starts_with("small round trip") {
                (config.gpus, size_of::<f32>() as u64, None)
            } else if what.starts_with("sort phase") {
                (config.gpus, 0, None)
            } else if what.contains("sort") || what.contains("top_k") {
                let keys = 1u64 << config.sort_log2.unwrap_or(0);
                let ranks = if what.starts_with("one GPU") {
                    1
                } else {
                    config.gpus
                };
                (ranks, keys * size_of::<u32>() as u64, None)
            } else {
                let distributed = !what.starts_with("one GPU") && what != "copy";
                let moves = if what.ends_with("reduce") { 1 } else { 2 };
                (
                    if distributed { config.gpus } else { 1 },
                    moves * shard_bytes,
                    None,
                )
            };
            Row {
                what: what.clone(),
                ranks,
                bytes,
                micros,
                gb_per_s: bytes as f64 / micros / 1e3,
                bus_gb_per_s: bus,
            }
        })
        .collect();
    Ok(rows)
}

/// Time `call` `runs` times after a warm-up, every rank starting each call at the line (an
/// error, [`dist::Error::Aborted`], where another rank failed).
fn timed(
    config: &DistBenchConfig,
    line: &StartLine,
    mut call: impl FnMut() -> Result<(), dist::Error>,
) -> Result<Vec<f64>, dist::Error> {
    let mut times = Vec::with_capacity(config.runs);
    for i in 0..=config.runs {
        if !line.wait() {
            return Err(dist::Error::Aborted);
        }
        let start = Instant::now();
        call()?;
        if i > 0 {
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(times)
}

/// Every measurement on one rank, in the same order on every rank.
fn rank_timings(
    config: &DistBenchConfig,
    mut comm: Communicator,
    gpu: &Gpu,
    line: &StartLine,
) -> Result<Timings, dist::Error> {
    let mut out = Timings::new();
    // All-reduce, each size in one buffer of the largest.
    let largest = config.all_reduce_log2.iter().max().copied().unwrap_or(2);
    let mut buffer = DeviceVec::<f32>::zeroed(gpu, (1usize << largest) / size_of::<f32>())?;
    for &log2 in &config.all_reduce_log2 {
        let len = (1usize << log2) / size_of::<f32>();
        let times = timed(config, line, || {
            dist::all_reduce(&mut comm, gpu, buffer.view_mut().slice(0..len), ReduceOp::Sum)
        })?;
        out.push((format!("all_reduce {log2}"), times));
    }
    drop(buffer);
    // Reduce and scan of the shards, beside each GPU alone and its copy.
    let n = config.shard_len(comm.rank());
    let shard = DeviceVec::<f32>::zeroed(gpu, n)?;
    let mut output: DeviceBuffer<f32> = gpu.alloc_zeroed(n)?;
    let mut ws = DeviceWorkspace::new();
    let mut one = DeviceVec::<f32>::zeroed(gpu, 1)?;
    out.push((
        "small round trip (all_reduce of one f32)".into(),
        timed(config, line, || {
            dist::all_reduce(&mut comm, gpu, &mut one, ReduceOp::Sum)
        })?,
    ));
    out.push((
        "copy".into(),
        timed(config, line, || {
            // SAFETY: both buffers hold `n` f32 of this GPU, alive until the synchronisation.
            unsafe {
                gpu.stream().copy_address(
                    shard.view().address(),
                    output.as_device_ptr().as_raw(),
                    n * size_of::<f32>(),
                )?
            };
            Ok(gpu.synchronize()?)
        })?,
    ));
    out.push((
        "one GPU reduce".into(),
        timed(config, line, || {
            device::reduce::<f32, Sum>(gpu, &shard, &mut ws)?;
            Ok(())
        })?,
    ));
    out.push((
        "reduce".into(),
        timed(config, line, || {
            dist::reduce::<f32, Sum>(&mut comm, gpu, &shard, &mut ws)?;
            Ok(())
        })?,
    ));
    out.push((
        "one GPU scan".into(),
        timed(config, line, || {
            device::inclusive_scan::<f32, Sum>(gpu, &shard, &mut output, &mut ws)?;
            Ok(gpu.synchronize()?)
        })?,
    ));
    out.push((
        "scan".into(),
        timed(config, line, || {
            dist::inclusive_scan::<f32, Sum>(&mut comm, gpu, &shard, &mut output, &mut ws)
        })?,
    ));
    drop((shard, output, one, ws));
    if let Some(log2) = config.sort_log2 {
        sort_timings(config, &mut comm, gpu, line, 1usize << log2, &mut out)?;
    }
    Ok(out)
}

/// `n` uniformly random `u32` keys (SplitMix64's high halves from `seed`).
fn random_keys(n: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 32) as u32
        })
        .collect()
}

/// The `k` of the top-k rows beside a sort of `total` keys: 2^10 and 2^20 (CUB's `DeviceTopK`
/// takes k up to 2^20), those within `total`.
fn top_ks(total: usize) -> Vec<usize> {
    [1 << 10, 1 << 20].into_iter().filter(|&k| k <= total).collect()
}

/// The keys GPU 0 sorts alone beside a distributed sort of `all`: as many, up to what one call
/// sorts.
fn alone_keys(all: usize) -> usize {
    all.min(device::SORT_MAX_KEYS)
}

/// The distributed sort of `total` keys, then GPU 0 sorting as many alone (the other ranks
/// wait at the line with nothing to do: the slowest rank is GPU 0).
fn sort_timings(
    config: &DistBenchConfig,
    comm: &mut Communicator,
    gpu: &Gpu,
    line: &StartLine,
    total: usize,
    out: &mut Timings,
) -> Result<(), dist::Error> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let options = SortOptions::ascending();
    let mut ws = DeviceWorkspace::new();
    let keys = DeviceVec::from_slice(gpu, &random_keys(split(total, world, rank), rank as u64 + 1))?;
    let mut sorted = DeviceVec::<u32>::zeroed(gpu, total.div_ceil(world))?;
    let times = timed(config, line, || {
        dist::sort_keys::<u32>(comm, gpu, &keys, &mut sorted, options, &mut ws).map(drop)
    })?;
    out.push(("sort u32".into(), times));
    // One more call with its phases timed (each ends with a synchronisation).
    comm.record_phases(true);
    if !line.wait() {
        return Err(dist::Error::Aborted);
    }
    dist::sort_keys::<u32>(comm, gpu, &keys, &mut sorted, options, &mut ws)?;
    for &(phase, time) in comm.phases() {
        out.push((format!("sort phase: {phase}"), vec![time.as_secs_f64() * 1e6]));
    }
    comm.record_phases(false);
    for k in top_ks(total) {
        let mut values = DeviceVec::<u32>::zeroed(gpu, k)?;
        let mut indices = DeviceVec::<u64>::zeroed(gpu, k)?;
        let times = timed(config, line, || {
            dist::top_k::<u32>(comm, gpu, &keys, k, true, &mut values, &mut indices, &mut ws)
        })?;
        out.push((format!("top_k u32, k = {k}"), times));
    }
    drop((keys, sorted, ws));
    let mut ws = DeviceWorkspace::new();
    let mut alone = if rank == 0 {
        let n = alone_keys(total);
        let keys = DeviceVec::from_slice(gpu, &random_keys(n, 0))?;
        let sorted = DeviceVec::<u32>::zeroed(gpu, n)?;
        Some((keys, sorted))
    } else {
        None
    };
    let times = timed(config, line, || {
        if let Some((keys, sorted)) = &mut alone {
            device::sort_keys::<u32>(gpu, &*keys, sorted, options, &mut ws)?;
            gpu.synchronize()?;
        }
        Ok(())
    })?;
    out.push(("one GPU sort u32 (every key)".into(), times));
    for k in top_ks(total) {
        let mut outputs = if rank == 0 {
            Some((
                DeviceVec::<u32>::zeroed(gpu, k)?,
                DeviceVec::<u64>::zeroed(gpu, k)?,
            ))
        } else {
            None
        };
        let times = timed(config, line, || {
            if let (Some((keys, _)), Some((values, indices))) = (&alone, &mut outputs) {
                device::top_k_of_all::<u32>(gpu, keys, k, true, 0, values, indices, &mut ws)?;
                gpu.synchronize()?;
            }
            Ok(())
        })?;
        out.push((format!("one GPU top_k u32, k = {k} (every key)"), times));
    }
    drop(alone);
    Ok(())
}

/// The table `run` measured, as printed.
pub fn table(config: &DistBenchConfig, gpu_name: &str, rows: &[Row]) -> String {
    let mut text = format!(
        "{} x {gpu_name}; reduce and scan of 2^{} f32 in all ({} a rank); median of {} calls, slowest rank\n",
        config.gpus,
        config.log2,
        config.shard_len(0),
        config.runs
    );
    text += &format!(
        "{:<42} {:>5} {:>14} {:>12} {:>10} {:>10}\n",
        "what", "ranks", "bytes a rank", "µs", "GB/s", "bus GB/s"
    );
    for r in rows {
        text += &format!(
            "{:<42} {:>5} {:>14} {:>12.1} {:>10.1} {:>10}\n",
            r.what,
            r.ranks,
            r.bytes,
            r.micros,
            r.gb_per_s,
            r.bus_gb_per_s.map_or(String::new(), |b| format!("{b:.1}"))
        );
    }
    let speed = |what: &str| rows.iter().find(|r| r.what == what).map(|r| r.gb_per_s);
    if let (Some(log2), Some(many), Some(one)) = (
        config.sort_log2,
        speed("sort u32"),
        speed("one GPU sort u32 (every key)"),
    ) {
        text += &format!(
            "sort of 2^{log2} u32 keys (the sort rows' bytes are the keys each sorts): {} GPUs {:.2}x the keys per second of one\n",
            config.gpus,
            many / one
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DistBenchConfig {
        DistBenchConfig {
            gpus: 3,
            log2: 10,
            all_reduce_log2: vec![20, 30],
            sort_log2: Some(12),
            runs: 5,
        }
    }

    #[test]
    fn shards_split_every_item_evenly() {
        let c = config();
        let lens: Vec<usize> = (0..3).map(|r| c.shard_len(r)).collect();
        assert_eq!(lens, [342, 341, 341]);
        assert_eq!(lens.iter().sum::<usize>(), 1024);
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert!(config().validate().is_ok());
        for bad in [
            DistBenchConfig { gpus: 0, ..config() },
            DistBenchConfig { runs: 0, ..config() },
            DistBenchConfig { log2: 40, ..config() },
            DistBenchConfig {
                all_reduce_log2: vec![1],
                ..config()
            },
            DistBenchConfig {
                sort_log2: Some(35),
                ..config()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_broken_line_lets_every_waiting_rank_go() {
        let line = StartLine::new(3);
        std::thread::scope(|s| {
            let waiting: Vec<_> = (0..2).map(|_| s.spawn(|| line.wait())).collect();
            // The third rank fails instead of coming: the two waiting return false.
            drop(Breaker(&line, true));
            for w in waiting {
                assert!(!w.join().unwrap());
            }
        });
        assert!(!line.wait(), "a broken line stays broken");
        let line = StartLine::new(2);
        std::thread::scope(|s| {
            let other = s.spawn(|| (line.wait(), line.wait()));
            assert!(line.wait() && line.wait(), "two rounds, every rank present");
            assert_eq!(other.join().unwrap(), (true, true));
        });
        drop(Breaker(&line, false)); // disarmed: nothing broken
        assert!(!line.state.lock().unwrap().2);
    }

    #[test]
    fn the_median_is_of_the_slowest_rank_per_call() {
        // Calls 0..4: the slowest rank's times are 9, 2, 7, 4, 5: median 5.
        let times = [vec![9.0, 1.0, 7.0, 4.0, 5.0], vec![1.0, 2.0, 3.0, 4.0, 1.0]];
        assert_eq!(median_of_slowest(&times), 5.0);
    }
}
