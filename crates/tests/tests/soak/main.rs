//! Soak test: `SOAK_CALLS` (default 10,000; 500 in an unoptimised build) random calls of every algorithm of the GPU tests'
//! table (`tests/gpu/faults.rs`, `ALGORITHMS`) from 2 to 4 threads sharing one `Gpu`: random
//! element types, operators, segment layouts and sizes (0 to 2^24, log-uniform; and, unless
//! `SOAK_HUGE=0` (or, unoptimised, unless `SOAK_HUGE=1`), four calls past 2^28 on the first
//! thread), on the `Gpu`'s stream or two more
//! of each thread's, with the thread's workspace, one shared by all threads or a new one; about
//! one call in 50 is armed to fail at a random driver call and must then return that error.
//! Every call that does not fail is checked against the CPU references.
//!
//! Seeded: `SOAK_SEED=<u64>` repeats a run (the seed is printed). Reported as ignored, with the
//! reason, without a CUDA device. Run it optimised (the CPU references take most of the time):
//! `cargo test --release -p gpu-primitives-tests --test soak -- --nocapture`.

#![warn(clippy::undocumented_unsafe_blocks)]

#[allow(dead_code)]
#[path = "../gpu/faults.rs"]
mod faults;
#[allow(dead_code)]
#[path = "../gpu/support.rs"]
mod support;

use faults::{ALGORITHMS, Call, Mode, Outcome, Workspace, mix, text};
use gpu_primitives::device::DeviceWorkspace;
use gpu_primitives::runtime::fault::Fault;
use gpu_primitives::{Gpu, OnStream};
use libtest_mimic::{Arguments, Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Mutex;

fn main() {
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    let trial = Trial::ignorable_test("soak::random_calls_threads_streams_faults", || {
        support::run_on_gpu("soak::random_calls_threads_streams_faults", soak)
    });
    libtest_mimic::run(&args, vec![trial]).exit();
}

/// The algorithms of the calls past 2^28 elements: their CPU checks are linear.
const HUGE: &[&str] = &["reduce", "inclusive_scan", "sort_keys", "select_if"];

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Per algorithm: calls checked, failed as injected, armed but not reached, and wrong.
#[derive(Default, Clone, Copy)]
struct Tally {
    ran: u64,
    injected: u64,
    not_reached: u64,
    failed: u64,
}

type Tallies = BTreeMap<&'static str, Tally>;

fn soak(gpu: &Gpu) -> Result<(), Failed> {
    // Unoptimised (`cargo test --workspace`), the CPU checks are many times slower: fewer calls
    // and none past 2^28 unless asked for.
    let debug = cfg!(debug_assertions);
    let calls = env_u64("SOAK_CALLS").unwrap_or(if debug { 500 } else { 10_000 }) as usize;
    let seed = env_u64("SOAK_SEED").unwrap_or_else(|| rand::rng().random());
    let huge = std::env::var("SOAK_HUGE").map_or(!debug, |v| v != "0");
    let threads = env_u64("SOAK_THREADS").map_or(2 + (mix(seed) % 3) as usize, |t| t.max(1) as usize);
    // Narrowing a failure down: SOAK_FAULTS=0 injects none, SOAK_STREAMS=0 uses only the Gpu's
    // stream, SOAK_WORKSPACES=own|fresh|shared uses only that kind.
    let knobs = Knobs {
        faults: std::env::var("SOAK_FAULTS").map_or(true, |v| v != "0"),
        streams: std::env::var("SOAK_STREAMS").map_or(true, |v| v != "0"),
        workspaces: std::env::var("SOAK_WORKSPACES").ok(),
    };
    println!("soak: {calls} calls on {threads} threads, SOAK_SEED={seed}, huge calls: {huge}");
    if debug {
        println!("soak: an unoptimised build (500 calls, none huge, by default): use --release");
    }
    let shared = Mutex::new(DeviceWorkspace::new());
    let start = std::time::Instant::now();
    let results: Vec<Result<Tallies, Failed>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (gpu, shared) = (gpu.clone(), &shared);
                let share = calls / threads + usize::from(t < calls % threads);
                let knobs = &knobs;
                s.spawn(move || worker(&gpu, t, share, seed, huge && t == 0, shared, knobs))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect()
    });
    let mut total = Tallies::new();
    for tallies in results {
        for (name, t) in tallies? {
            let sum = total.entry(name).or_default();
            sum.ran += t.ran;
            sum.injected += t.injected;
            sum.not_reached += t.not_reached;
            sum.failed += t.failed;
        }
    }
    println!(
        "{:<28} {:>6} {:>9} {:>12} {:>6}",
        "algorithm", "calls", "injected", "not reached", "failed"
    );
    for (name, t) in &total {
        let calls = t.ran + t.injected + t.not_reached + t.failed;
        println!(
            "{name:<28} {calls:>6} {:>9} {:>12} {:>6}",
            t.injected, t.not_reached, t.failed
        );
    }
    let failed: u64 = total.values().map(|t| t.failed).sum();
    let passed: u64 = total.values().map(|t| t.ran + t.injected + t.not_reached).sum();
    println!("soak: {:.1} s, SOAK_SEED={seed}", start.elapsed().as_secs_f64());
    println!("{passed} passed, {failed} failed");
    match failed {
        0 => Ok(()),
        _ => Err(format!("{failed} calls failed (SOAK_SEED={seed})").into()),
    }
}

/// What the soak may vary (all of it by default).
struct Knobs {
    faults: bool,
    streams: bool,
    workspaces: Option<String>,
}

/// A size from 0 to 2^24: 0, a few items, or log-uniform.
fn size(r: &mut StdRng) -> usize {
    match r.random_range(0..20) {
        0 => 0,
        1 => r.random_range(1..=64),
        _ => r.random_range(0.0..24.0f64).exp2() as usize,
    }
}

/// Thread `t`'s `calls` calls; with `huge`, also the calls of [`HUGE`] past 2^28 elements.
fn worker(
    gpu: &Gpu,
    t: usize,
    calls: usize,
    seed: u64,
    huge: bool,
    shared: &Mutex<DeviceWorkspace>,
    knobs: &Knobs,
) -> Result<Tallies, Failed> {
    let mut r = StdRng::seed_from_u64(mix(seed ^ mix(t as u64)));
    let streams = [
        support::ok(gpu.create_stream())?,
        support::ok(gpu.create_stream())?,
    ];
    let mut own = DeviceWorkspace::new();
    let mut tallies = Tallies::new();
    // Which calls are the huge ones (an index into HUGE), spread over the thread's calls.
    let mut plan: Vec<Option<usize>> = vec![None; calls];
    for h in (0..HUGE.len()).filter(|_| huge) {
        plan.insert((h + 1) * plan.len() / (HUGE.len() + 1), Some(h));
    }
    let mut shown = 0;
    for (i, big) in plan.into_iter().enumerate() {
        let (name, check) = match big {
            Some(h) => *ALGORITHMS
                .iter()
                .find(|(name, _)| *name == HUGE[h])
                .expect("a huge algorithm"),
            None => ALGORITHMS[r.random_range(0..ALGORITHMS.len())],
        };
        let n = match big {
            Some(h) => (1 << 28) + 1 + h * 4099,
            None => size(&mut r),
        };
        let mode = match big.is_none() && r.random_ratio(1, 50) && knobs.faults {
            true => Mode::Fail {
                kind: Fault::ALL[r.random_range(0..4)],
                step: r.random_range(1..=3),
                must_fire: false,
            },
            false => Mode::Check,
        };
        // Kernels compile once per Gpu: a compilation fails only in a new one. A new
        // workspace allocates during the call.
        let fresh_gpu = match mode {
            Mode::Fail {
                kind: Fault::ModuleLoad,
                ..
            } => Some(support::ok(gpu_primitives::open_gpu(0))?),
            _ => None,
        };
        let one = fresh_gpu.as_ref().unwrap_or(gpu);
        let on: OnStream<'_> = match r.random_range(0..3) {
            _ if !knobs.streams => one.into(),
            0 => one.into(),
            k => support::ok(one.on(&streams[k - 1]))?,
        };
        let mut fresh = DeviceWorkspace::new();
        let new_workspace = big.is_some()
            || matches!(
                mode,
                Mode::Fail {
                    kind: Fault::Alloc,
                    ..
                }
            );
        let pick = match knobs.workspaces.as_deref() {
            Some("own") => 0,
            Some("shared") => 1,
            Some("fresh") => 2,
            _ => r.random_range(0..3),
        };
        let workspace = match pick {
            _ if new_workspace => Workspace::Own(&mut fresh),
            0 => Workspace::Own(&mut own),
            1 => Workspace::Shared(shared),
            _ => Workspace::Own(&mut fresh),
        };
        let mut call = Call::new(on, workspace, n, r.random(), mode);
        let result = check(&mut call);
        let tally = tallies.entry(name).or_default();
        match (result, call.outcome) {
            (Ok(()), Outcome::Ran) => tally.ran += 1,
            (Ok(()), Outcome::Injected) => tally.injected += 1,
            (Ok(()), Outcome::NotReached) => tally.not_reached += 1,
            (Err(e), _) => {
                tally.failed += 1;
                if shown < 20 {
                    shown += 1;
                    eprintln!("thread {t}, call {i} ({mode:?}, n = {n}): {}", text(&e));
                }
            }
        }
    }
    Ok(tallies)
}
