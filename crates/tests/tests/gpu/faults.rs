//! Fault injection (`gpu_primitives::runtime::fault`): every device algorithm and row operation
//! made to fail at each of its driver calls in turn (allocations, kernel compilations, launches,
//! copies and memsets), each failure an error of the call, the inputs unchanged, and the same call
//! again, on the same workspace (and for compilations the same new `Gpu`), right.
//!
//! The algorithms are one table ([`ALGORITHMS`]) of checks that make a [`Call`]: choose types,
//! operators and layouts from the call's seed, make the inputs, run the algorithm through
//! [`Call::run`] (which arms the failure and counts the driver calls) and compare the result with
//! the CPU references. The soak test (`tests/soak/main.rs`) runs the same table at random sizes.

use crate::support::{GpuTest, check_eq, ok};
use bytemuck::Pod;
use gpu_primitives::device::{
    self, Accumulator, DeviceVec, DeviceWorkspace, DotElement, Element, HistogramCounter, HistogramSample,
    Max, Min, Operator, Predicate, ScanKey, ScanKind, SegmentArgElement, SegmentOffsets, Segments, SortKey,
    SortOptions, Sum, TempStorage,
};
use gpu_primitives::reference::rows::{self as rows_reference, Forward, centring, f32_bound, shift};
use gpu_primitives::reference::{self, sort::key_order};
use gpu_primitives::rows::{self, CrossEntropy, Norm, Reduction, RowElement};
use gpu_primitives::runtime::DeviceCopy;
use gpu_primitives::runtime::fault::{self, Fault};
use gpu_primitives::{DeviceBuffer, Error, Gpu, OnStream};
use half::{bf16, f16};
use libtest_mimic::Failed;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Mutex, PoisonError};

pub const TESTS: &[(&str, GpuTest)] = &[(
    "faults::every_algorithm_fails_cleanly_at_every_driver_call",
    every_step,
)];

/// Elements of each call: many tiles of every algorithm, so that the look-back and the
/// workspace's growth run.
const N: usize = 100_000;

/// For each algorithm of [`ALGORITHMS`] ([`one_algorithm`]), on several threads (each opens a
/// `Gpu` for every compilation it fails, which parses the library's PTX: 0.8 s each in a
/// debug build).
///
/// `FAULTS_SHARD=i/k` runs only the algorithms whose index in the table is `i` modulo `k`
/// (to spread a slow run, such as one under compute-sanitizer racecheck, over several GPUs);
/// `FAULTS_KINDS` (comma-separated: alloc, compile, launch, copy) fails only those kinds of
/// driver calls (without compile, no new `Gpu` is opened: each compiles the library's kernels
/// again, which is slow under a sanitizer); `FAULTS_PROGRESS` (set to anything) prints each
/// algorithm's line to stderr as it finishes, and each failure as it is armed, with the seconds
/// since the start (a run cut short shows where it was); `FAULTS_THREADS=n` runs the algorithms
/// on `n` threads (default: the CPUs, at most 8).
fn every_step(gpu: &Gpu) -> Result<(), Failed> {
    let (shard, shards) = shard()?;
    let kinds = kinds()?;
    let progress = std::env::var_os("FAULTS_PROGRESS").is_some();
    let start = std::time::Instant::now();
    let next = AtomicUsize::new(0);
    let threads = match std::env::var("FAULTS_THREADS") {
        Ok(n) => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("FAULTS_THREADS={n}: expected a count of threads, 1 or more"))?,
        Err(_) => std::thread::available_parallelism().map_or(4, |n| n.get().min(8)),
    };
    let mut done: Vec<(usize, String, Vec<String>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = shard + shards * next.fetch_add(1, AtomicOrdering::Relaxed);
                        let Some(&(name, check)) = ALGORITHMS.get(i) else {
                            break done;
                        };
                        let (line, problems) = one_algorithm(
                            gpu,
                            name,
                            check,
                            0xfa17 + i as u64,
                            &kinds,
                            progress.then_some(start),
                        );
                        if progress {
                            let seconds = start.elapsed().as_secs_f64();
                            eprintln!("faults: {seconds:7.1} s  {line}  ({} problems)", problems.len());
                        }
                        done.push((i, line, problems));
                    }
                })
            })
            .collect();
        let joined = workers.into_iter().map(|w| w.join());
        joined
            .flat_map(|w| {
                w.unwrap_or_else(|_| vec![(usize::MAX, String::new(), vec!["a thread panicked".into()])])
            })
            .collect()
    });
    done.sort_by_key(|(i, ..)| *i);
    println!(
        "{:<56} {:>5} {:>7} {:>6} {:>5}",
        "algorithm (types, operator, layout)", "alloc", "compile", "launch", "copy"
    );
    let mut problems = Vec::new();
    for (_, line, mut found) in done {
        println!("{line}");
        problems.append(&mut found);
    }
    if problems.is_empty() {
        return Ok(());
    }
    let shown = problems.iter().take(30).cloned().collect::<Vec<_>>().join("\n");
    Err(format!("{} problems:\n{shown}", problems.len()).into())
}

/// `$FAULTS_KINDS` as the kinds of driver calls to fail, or every kind when unset.
fn kinds() -> Result<Vec<Fault>, Failed> {
    let Ok(spec) = std::env::var("FAULTS_KINDS") else {
        return Ok(Fault::ALL.to_vec());
    };
    spec.split(',')
        .map(|kind| match kind.trim() {
            "alloc" => Ok(Fault::Alloc),
            "compile" => Ok(Fault::ModuleLoad),
            "launch" => Ok(Fault::Launch),
            "copy" => Ok(Fault::Copy),
            other => Err(format!("FAULTS_KINDS: {other:?} is not alloc, compile, launch or copy").into()),
        })
        .collect()
}

/// `$FAULTS_SHARD` as (i, k), or (0, 1) when unset.
fn shard() -> Result<(usize, usize), Failed> {
    let Ok(spec) = std::env::var("FAULTS_SHARD") else {
        return Ok((0, 1));
    };
    let parsed = spec
        .split_once('/')
        .and_then(|(i, k)| Some((i.parse().ok()?, k.parse().ok()?)));
    match parsed {
        Some((i, k)) if i < k => Ok((i, k)),
        _ => Err(format!("FAULTS_SHARD={spec}: expected i/k with i < k").into()),
    }
}

/// `check`'s call on `gpu` with a new workspace: its driver calls of each kind, and what it ran.
fn count(gpu: &Gpu, check: Check, seed: u64) -> Result<([u64; 4], String), Failed> {
    let mut workspace = DeviceWorkspace::new();
    let mut call = Call::new(gpu.into(), Workspace::Own(&mut workspace), N, seed, Mode::Check);
    check(&mut call)?;
    Ok((call.counts, call.what))
}

/// Count the driver calls of each kind of `check`'s call (kernel compilations in a new `Gpu`,
/// the others in `gpu` once it has run the call), each time with a new workspace; then fail each
/// of them in turn, each time with a new workspace (and for compilations a new `Gpu`), and make
/// the call again on it: the table's line, and the problems found.
fn one_algorithm(
    gpu: &Gpu,
    name: &str,
    check: Check,
    seed: u64,
    kinds: &[Fault],
    progress: Option<std::time::Instant>,
) -> (String, Vec<String>) {
    let mut problems = Vec::new();
    let new_gpu = |problems: &mut Vec<String>| match gpu_primitives::open_gpu(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            problems.push(format!("{name}: opening a Gpu: {e}"));
            None
        }
    };
    // Compilations are counted (and failed) in new `Gpu`s, only where they are asked for.
    let compiles = |problems: &mut Vec<String>| -> Option<Result<u64, Failed>> {
        if !kinds.contains(&Fault::ModuleLoad) {
            return Some(Ok(0));
        }
        let fresh = new_gpu(problems)?;
        Some(count(&fresh, check, seed).map(|(counts, _)| counts[1]))
    };
    let Some(compiles) = compiles(&mut problems) else {
        return (name.into(), problems);
    };
    let counted = compiles.and_then(|compiles| {
        count(gpu, check, seed)?;
        let (warm, what) = count(gpu, check, seed)?;
        Ok(([warm[0], compiles, warm[2], warm[3]], what))
    });
    let (counts, what) = match counted {
        Ok(counted) => counted,
        Err(e) => {
            problems.push(format!("{name}: {}", text(&e)));
            return (name.into(), problems);
        }
    };
    for (kind, &count) in Fault::ALL.into_iter().zip(&counts) {
        if !kinds.contains(&kind) {
            continue;
        }
        for step in 1..=count {
            let one = match kind {
                Fault::ModuleLoad => new_gpu(&mut problems),
                _ => Some(gpu.clone()),
            };
            let Some(one) = one else { continue };
            if let Some(start) = progress {
                let seconds = start.elapsed().as_secs_f64();
                eprintln!("faults: {seconds:7.1} s  {what}: {kind:?} call {step} of {count}");
            }
            let mut workspace = DeviceWorkspace::new();
            let fail = Mode::Fail {
                kind,
                step,
                must_fire: true,
            };
            for (mode, when) in [(fail, "failing"), (Mode::Check, "after it failed")] {
                let mut call = Call::new((&one).into(), Workspace::Own(&mut workspace), N, seed, mode);
                if let Err(e) = check(&mut call) {
                    problems.push(format!(
                        "{what}, {kind:?} call {step} of {count}, {when}: {}",
                        text(&e)
                    ));
                }
            }
        }
    }
    let line = format!(
        "{what:<56} {:>5} {:>7} {:>6} {:>5}",
        counts[0], counts[1], counts[2], counts[3]
    );
    (line, problems)
}

/// A failure's message.
pub fn text(e: &Failed) -> &str {
    e.message().unwrap_or("failed")
}

/// How [`Call::run`] makes the algorithm's call.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// The call must succeed.
    Check,
    /// The `step`-th driver call of `kind` the call makes fails: the call must return that
    /// error. A call that makes fewer calls of the kind succeeds; that is a failure when
    /// `must_fire`, else it is checked as usual (the soak arms failures blindly).
    Fail { kind: Fault, step: u64, must_fire: bool },
    /// The workspace is first sized with the call's [`TempStorage`] ([`Call::need`],
    /// `DeviceWorkspace::reserve_for`): the call must succeed and allocate nothing.
    Reserved,
}

/// What became of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded.
    Ran,
    /// It failed with the injected failure.
    Injected,
    /// A failure was armed, but the call made fewer driver calls of the kind; it succeeded.
    NotReached,
}

/// The workspace of a call: the caller's, or one shared by threads (locked for the call alone,
/// not for its check, so that calls on several threads' streams follow each other on it).
pub enum Workspace<'a> {
    Own(&'a mut DeviceWorkspace),
    #[allow(dead_code)] // the soak test's
    Shared(&'a Mutex<DeviceWorkspace>),
}

/// One call of an algorithm: where it runs, on what, and how it must end.
pub struct Call<'a> {
    pub on: OnStream<'a>,
    pub workspace: Workspace<'a>,
    /// Elements of the input (the check may use fewer: whole rows).
    pub n: usize,
    pub mode: Mode,
    pub outcome: Outcome,
    /// The driver calls of each kind (in `Fault::ALL`'s order) the algorithm's call made.
    pub counts: [u64; 4],
    /// The algorithm, types and operator, for messages.
    pub what: String,
    /// What the call needs of its workspace, as the library's query says ([`Call::need`]).
    need: Option<TempStorage>,
    rng: StdRng,
}

/// A check of one algorithm ([`ALGORITHMS`]): `Err` on a mismatch.
pub type Check = fn(&mut Call<'_>) -> Result<(), Failed>;

type Checked = Result<(), Failed>;

/// The splitmix64 finaliser: a random-looking 64-bit word from a counter.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<'a> Call<'a> {
    pub fn new(on: OnStream<'a>, workspace: Workspace<'a>, n: usize, seed: u64, mode: Mode) -> Self {
        Self {
            on,
            workspace,
            n,
            mode,
            outcome: Outcome::Ran,
            counts: [0; 4],
            what: String::new(),
            need: None,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Say what the call about to run needs of its workspace (the algorithm's [`TempStorage`]
    /// query, asked before the call); [`Mode::Reserved`] sizes the workspace with it.
    fn need(&mut self, need: gpu_primitives::Result<TempStorage>) -> Checked {
        self.need = Some(ok(need)?);
        Ok(())
    }

    /// One of `choices` (from the call's seed).
    pub fn pick(&mut self, choices: usize) -> usize {
        self.rng.random_range(0..choices)
    }

    /// A length in `1..=most`, log-uniform (1 for `most` 0).
    fn length(&mut self, most: usize) -> usize {
        let bits = (most.max(1) as f64).log2();
        ((self.rng.random_range(0.0..=bits)).exp2() as usize).clamp(1, most.max(1))
    }

    fn label(&mut self, part: impl std::fmt::Display) {
        if !self.what.is_empty() {
            self.what.push(' ');
        }
        self.what += &part.to_string();
    }

    fn make<T>(&mut self, n: usize, value: impl Fn(u64) -> T) -> Vec<T> {
        let seed: u64 = self.rng.random();
        (0..n as u64).map(|i| value(mix(seed.wrapping_add(i)))).collect()
    }

    /// `n` values on the grid (integers over their whole range).
    fn values<T: Value>(&mut self, n: usize) -> Vec<T> {
        self.make(n, T::grid)
    }

    /// `n` values in runs of 1 to 1, 3, 40 or 5000 items.
    fn with_runs<T: Value>(&mut self, n: usize) -> Vec<T> {
        let longest = [1u64, 3, 40, 5000][self.pick(4)];
        let seed: u64 = self.rng.random();
        let (mut out, mut run) = (Vec::with_capacity(n), 0u64);
        while out.len() < n {
            let (bits, len) = (mix(seed ^ run), 1 + mix(!seed ^ run) % longest);
            out.extend(std::iter::repeat_n(
                T::grid(bits),
                (len as usize).min(n - out.len()),
            ));
            run += 1;
        }
        out
    }

    /// Sort keys: any bit pattern (NaNs, infinities, signed zeros), or grid values (many ties).
    fn keys<K: Value>(&mut self, n: usize) -> Vec<K> {
        match self.pick(2) {
            0 => self.make(n, K::any),
            _ => self.make(n, K::grid),
        }
    }

    /// CSR offsets into `n` items in one of five layouts (short segments with many empty ones,
    /// up to 10,000 items, one segment of nearly everything between tiny ones, long stretches of
    /// empty segments), sometimes leaving items out before the first and after the last.
    fn offsets(&mut self, n: usize) -> Vec<u64> {
        let layout = self.pick(4);
        let start = if self.pick(3) == 0 {
            self.pick(n.min(50) + 1)
        } else {
            0
        };
        let end = n - if self.pick(3) == 0 {
            self.pick((n - start).min(50) + 1)
        } else {
            0
        };
        let mut offsets = vec![start as u64];
        let mut at = start;
        while at < end {
            let len = match layout {
                0 if self.pick(3) == 0 => 0,
                0 => self.pick(101),
                1 => self.pick(10_001),
                2 if offsets.len() == 4 => (end - at).saturating_sub(5),
                2 => self.pick(3),
                _ if self.pick(10) == 0 => {
                    offsets.extend(std::iter::repeat_n(at as u64, self.pick(1000)));
                    0
                }
                _ => self.pick(1001),
            };
            at = (at + len).min(end);
            offsets.push(at as u64);
        }
        if self.pick(4) == 0 {
            offsets.extend([end as u64; 3]);
        }
        offsets
    }

    fn upload<T: DeviceCopy>(&self, x: &[T]) -> Result<DeviceBuffer<T>, Failed> {
        ok(self.on.gpu().upload(x))
    }

    fn upload_vec<T: Element>(&self, x: &[T]) -> Result<DeviceVec<T>, Failed> {
        ok(DeviceVec::from_slice(self.on.gpu(), x))
    }

    /// Zeroed device memory (cleared on the `Gpu`'s stream, which [`Call::run`] waits for).
    fn zeros<T: DeviceCopy>(&self, n: usize) -> Result<DeviceBuffer<T>, Failed> {
        ok(self.on.gpu().alloc_zeroed(n))
    }

    fn zeros_vec<T: Element>(&self, n: usize) -> Result<DeviceVec<T>, Failed> {
        ok(DeviceVec::zeroed(self.on.gpu(), n))
    }

    /// `buffer`, after the work queued on the call's stream.
    fn read<T: DeviceCopy + Default>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>, Failed> {
        ok(self.on.stream().download(buffer))
    }

    fn read_vec<T: Element>(&self, v: &DeviceVec<T>) -> Result<Vec<T::Raw>, Failed> {
        self.read(v.raw())
    }

    /// An input still holds what was uploaded.
    fn unchanged<T: DeviceCopy + Pod + Debug + Default>(
        &self,
        buffer: &DeviceBuffer<T>,
        host: &[T],
    ) -> Checked {
        same(
            &format!("{}: input changed", self.what),
            &self.read(buffer)?,
            host,
        )
    }

    fn unchanged_vec<T: Element>(&self, v: &DeviceVec<T>, host: &[T]) -> Checked {
        self.unchanged(v.raw(), T::as_raw(host))
    }

    /// Make the algorithm's call `f` as [`Mode`] says, counting its driver calls: its result
    /// (`None` when it failed with the injected failure).
    pub fn run<R>(
        &mut self,
        f: impl FnOnce(OnStream<'_>, &mut DeviceWorkspace) -> gpu_primitives::Result<R>,
    ) -> Result<Option<R>, Failed> {
        // The inputs and zeroed outputs were made on the Gpu's stream.
        ok(self.on.gpu().synchronize())?;
        let result = {
            let mut guard = None;
            let workspace = match &mut self.workspace {
                Workspace::Own(w) => &mut **w,
                Workspace::Shared(m) => &mut **guard.insert(m.lock().unwrap_or_else(PoisonError::into_inner)),
            };
            if let Mode::Reserved = self.mode {
                let Some(need) = self.need else {
                    return Err(format!("{}: the check asks no TempStorage", self.what).into());
                };
                ok(workspace.reserve_for(self.on, &need))?;
                if workspace.bytes() != need.bytes() {
                    return Err(format!(
                        "{}: a new workspace reserved for {need:?} holds {} bytes, TempStorage::bytes says {}",
                        self.what,
                        workspace.bytes(),
                        need.bytes()
                    )
                    .into());
                }
            }
            fault::reset();
            if let Mode::Fail { kind, step, .. } = self.mode {
                fault::fail_nth(kind, step);
            }
            f(self.on, workspace)
        };
        self.counts = Fault::ALL.map(fault::calls);
        let fired = !fault::armed();
        fault::reset();
        let what = &self.what;
        let (kind, step, must_fire) = match self.mode {
            Mode::Check => return result.map(Some).map_err(|e| format!("{what}: {e}").into()),
            Mode::Reserved => {
                let found = result.map_err(|e| format!("{what}: {e}"))?;
                let allocations = self.counts[0];
                if allocations > 0 {
                    return Err(format!(
                        "{what}: {allocations} allocations after reserving {:?}",
                        self.need
                    )
                    .into());
                }
                return Ok(Some(found));
            }
            Mode::Fail {
                kind,
                step,
                must_fire,
            } => (kind, step, must_fire),
        };
        let made = self.counts[Fault::ALL.iter().position(|&k| k == kind).unwrap_or(0)];
        match result {
            Err(e) if fired && injected(kind, &e) => {
                self.outcome = Outcome::Injected;
                Ok(None)
            }
            Err(e) => Err(format!(
                "{what}: {kind:?} call {step} armed (fired: {fired}), but failed with: {e}"
            )
            .into()),
            Ok(_) if fired => {
                Err(format!("{what}: {kind:?} call {step} failed, but the call returned Ok").into())
            }
            Ok(r) if !must_fire => {
                self.outcome = Outcome::NotReached;
                Ok(Some(r))
            }
            Ok(_) => Err(format!("{what}: {kind:?} call {step} armed, but the call made only {made}").into()),
        }
    }
}

/// Whether `e` is the error an injected failure of `kind` gives.
fn injected(kind: Fault, e: &Error) -> bool {
    let status = match kind {
        Fault::Alloc => return matches!(e, Error::OutOfMemory { .. }),
        Fault::ModuleLoad => "CUDA_ERROR_INVALID_PTX",
        Fault::Launch => "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        Fault::Copy => "CUDA_ERROR_INVALID_VALUE",
    };
    e.to_string().contains(status)
}

/// Compare bit for bit; the first difference named.
fn same<R: Pod + Debug>(what: &str, found: &[R], expected: &[R]) -> Checked {
    check_eq(&format!("{what}: length"), found.len(), expected.len())?;
    if bytemuck::cast_slice::<R, u8>(found) == bytemuck::cast_slice::<R, u8>(expected) {
        return Ok(());
    }
    let i = (0..found.len())
        .find(|&i| bytemuck::bytes_of(&found[i]) != bytemuck::bytes_of(&expected[i]))
        .unwrap_or(0);
    Err(format!(
        "{what}: index {i}: found {:?}, expected {:?}",
        found[i], expected[i]
    )
    .into())
}

/// The bits of a value, for comparing results that may be NaN.
fn bits_of<R: Pod>(v: R) -> u64 {
    bytemuck::bytes_of(&v)
        .iter()
        .rev()
        .fold(0, |a, &b| a << 8 | b as u64)
}

/// A type the checks make values of.
pub trait Value: Copy + Send + Sync + Debug + 'static {
    /// From random bits: integers over their whole range; floats on the grid {k/4 : -8 <= k
    /// <= 8}, whose sums (and products' sums) in any order are exact at these sizes.
    fn grid(bits: u64) -> Self;
    /// Any value of the type from random bits (floats: NaN, infinities, signed zeros too).
    fn any(bits: u64) -> Self;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn grid(bits: u64) -> Self { bits as $t }
            fn any(bits: u64) -> Self { bits as $t }
        }
    )*};
}
int_value!(u8, u16, i32, u32, i64, u64);

macro_rules! float_value {
    ($($t:ty => $from_f32:expr, $from_bits:expr;)*) => {$(
        impl Value for $t {
            fn grid(bits: u64) -> Self { $from_f32(((bits % 17) as i32 - 8) as f32 * 0.25) }
            fn any(bits: u64) -> Self { $from_bits(bits) }
        }
    )*};
}
float_value! {
    f32 => |v| v, |b| f32::from_bits(b as u32);
    f64 => |v: f32| v as f64, f64::from_bits;
    f16 => f16::from_f32, |b| f16::from_bits(b as u16);
    bf16 => bf16::from_f32, |b| bf16::from_bits(b as u16);
}

/// Run one of the listed instances of a generic check, picked by the call: `$t` is each type in
/// turn in `$f` (`pick!(c, |T| reduce::<T>, [f32, u32])`); an argument after the list is passed.
macro_rules! pick {
    ($c:ident, |$t:ident| $f:expr, [$($ty:ty),+ $(,)?]) => {{
        let table = [$({
            type $t = $ty;
            $f as fn(&mut Call<'_>) -> Checked
        }),+];
        let i = $c.pick(table.len());
        table[i]($c)
    }};
    ($c:ident, |$t:ident| $f:expr, [$($ty:ty),+ $(,)?], $arg:expr) => {{
        let table = [$({
            type $t = $ty;
            $f as fn(&mut Call<'_>, _) -> Checked
        }),+];
        let i = $c.pick(table.len());
        table[i]($c, $arg)
    }};
}

/// [`pick!`] over the eight element types.
macro_rules! elements {
    ($c:ident, |$t:ident| $f:expr $(, $arg:expr)?) => {
        pick!($c, |$t| $f, [f32, f64, i32, u32, i64, u64, f16, bf16] $(, $arg)?)
    };
}

/// [`pick!`] over the operators.
macro_rules! operators {
    ($c:ident, |$t:ident| $f:expr $(, $arg:expr)?) => {
        pick!($c, |$t| $f, [Sum, Min, Max] $(, $arg)?)
    };
}

/// [`pick!`] over the sort keys of plain types.
macro_rules! keys {
    ($c:ident, |$t:ident| $f:expr $(, $arg:expr)?) => {
        pick!($c, |$t| $f, [u8, u16, u32, i32, f32, u64, i64, f64] $(, $arg)?)
    };
}

/// Every algorithm, by name.
pub const ALGORITHMS: &[(&str, Check)] = &[
    ("reduce", |c| elements!(c, |T| reduce_t::<T>)),
    ("argmin", |c| elements!(c, |T| arg::<T>, false)),
    ("argmax", |c| elements!(c, |T| arg::<T>, true)),
    ("dot", |c| pick!(c, |T| dot::<T>, [f32, f64, f16, bf16])),
    ("inclusive_scan", |c| {
        elements!(c, |T| scan_t::<T>, ScanKind::Inclusive)
    }),
    ("exclusive_scan", |c| {
        elements!(c, |T| scan_t::<T>, ScanKind::Exclusive)
    }),
    ("scan_in_place", |c| {
        pick!(c, |T| in_place_t::<T>, [f32, f64, i32, u32, i64, u64])
    }),
    ("select_if", |c| elements!(c, |T| select::<T>, Select::If)),
    ("select_flagged", |c| {
        elements!(c, |T| select::<T>, Select::Flagged)
    }),
    ("unique", |c| elements!(c, |T| select::<T>, Select::Unique)),
    ("partition_if", |c| {
        elements!(c, |T| select::<T>, Select::PartitionIf)
    }),
    ("partition_flagged", |c| {
        elements!(c, |T| select::<T>, Select::PartitionFlagged)
    }),
    ("run_length_encode", |c| elements!(c, |T| runs::<T>, false)),
    ("non_trivial_runs", |c| elements!(c, |T| runs::<T>, true)),
    ("histogram_even", |c| {
        pick!(
            c,
            |S| histogram_s::<S>,
            [u8, u16, i32, u32, f16, bf16, f32, f64],
            false
        )
    }),
    ("histogram_range", |c| {
        pick!(
            c,
            |S| histogram_s::<S>,
            [u8, u16, i32, u32, f16, bf16, f32, f64],
            true
        )
    }),
    ("segmented_reduce_rows", |c| {
        elements!(c, |T| segmented_reduce_t::<T>, true)
    }),
    ("segmented_reduce_offsets", |c| {
        elements!(c, |T| segmented_reduce_t::<T>, false)
    }),
    ("segmented_inclusive_scan", |c| {
        elements!(c, |T| segmented_scan_t::<T>, ScanKind::Inclusive)
    }),
    ("segmented_exclusive_scan", |c| {
        elements!(c, |T| segmented_scan_t::<T>, ScanKind::Exclusive)
    }),
    ("inclusive_scan_by_key", |c| {
        pick!(c, |K| by_key_k::<K>, [u32, u64, i32, i64], ScanKind::Inclusive)
    }),
    ("exclusive_scan_by_key", |c| {
        pick!(c, |K| by_key_k::<K>, [u32, u64, i32, i64], ScanKind::Exclusive)
    }),
    ("reduce_by_key", |c| {
        pick!(c, |K| reduce_by_key_k::<K>, [u32, u64, i32, i64])
    }),
    ("unique_by_key", |c| {
        pick!(c, |K| unique_by_key_k::<K>, [u32, u64, i32, i64])
    }),
    ("segmented_argmin", |c| {
        pick!(c, |T| segmented_arg::<T>, [f32, i32, u32, f16, bf16], false)
    }),
    ("segmented_argmax", |c| {
        pick!(c, |T| segmented_arg::<T>, [f32, i32, u32, f16, bf16], true)
    }),
    ("sort_keys", |c| keys!(c, |K| sort::<K>, Sort::Keys)),
    ("sort_pairs", |c| keys!(c, |K| sort::<K>, Sort::Pairs)),
    ("argsort", |c| keys!(c, |K| sort::<K>, Sort::Argsort)),
    ("segmented_sort_keys_rows", |c| {
        keys!(c, |K| segmented_sort::<K>, (false, true))
    }),
    ("segmented_sort_keys_offsets", |c| {
        keys!(c, |K| segmented_sort::<K>, (false, false))
    }),
    ("segmented_argsort_rows", |c| {
        keys!(c, |K| segmented_sort::<K>, (true, true))
    }),
    ("segmented_argsort_offsets", |c| {
        keys!(c, |K| segmented_sort::<K>, (true, false))
    }),
    ("top_k", |c| keys!(c, |K| top_k::<K>)),
    ("top_k_of_all", |c| keys!(c, |K| top_k_of_all::<K>)),
    ("softmax", |c| {
        pick!(c, |T| row_op::<T>, [f32, f16, bf16], Forward::Softmax)
    }),
    ("log_softmax", |c| {
        pick!(c, |T| row_op::<T>, [f32, f16, bf16], Forward::LogSoftmax)
    }),
    ("layer_norm", |c| {
        pick!(c, |T| row_op::<T>, [f32, f16, bf16], Forward::LayerNorm)
    }),
    ("rms_norm", |c| {
        pick!(c, |T| row_op::<T>, [f32, f16, bf16], Forward::RmsNorm)
    }),
    ("cross_entropy", |c| {
        pick!(c, |T| cross_entropy::<T>, [f32, f16, bf16])
    }),
];

fn reduce_t<T: Element + Value>(c: &mut Call<'_>) -> Checked {
    operators!(c, |Op| reduce::<T, Op>)
}

fn reduce<T: Element + Value, Op: Operator>(c: &mut Call<'_>) -> Checked {
    c.label(format_args!("reduce {} {}", T::NAME, Op::NAME));
    let x: Vec<T> = c.values(c.n);
    let d_x = c.upload_vec(&x)?;
    c.need(Ok(TempStorage::reduce::<T>(c.on.gpu(), x.len())))?;
    let found = c.run(|on, ws| device::reduce::<T, Op>(on, &d_x, ws))?;
    c.unchanged_vec(&d_x, &x)?;
    let Some(found) = found else { return Ok(()) };
    same(&c.what, &[found], &[reference::reduce::<T, Op>(&x)])
}

fn arg<T: Element + Value>(c: &mut Call<'_>, max: bool) -> Checked {
    c.label(format_args!("arg{} {}", if max { "max" } else { "min" }, T::NAME));
    let x: Vec<T> = c.values(c.n);
    let d_x = c.upload_vec(&x)?;
    c.need(Ok(TempStorage::arg_reduce::<T>(c.on.gpu(), x.len())))?;
    let found = c.run(|on, ws| match max {
        true => device::argmax::<T>(on, &d_x, ws),
        false => device::argmin::<T>(on, &d_x, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    let Some(found) = found else { return Ok(()) };
    let expected = if max {
        reference::argmax(&x)
    } else {
        reference::argmin(&x)
    };
    let as_bits = |r: Option<(T::Acc, usize)>| r.map(|(v, i)| (bits_of(v), i));
    check_eq(&c.what, as_bits(found), as_bits(expected))
}

fn dot<T: DotElement + Value>(c: &mut Call<'_>) -> Checked {
    c.label(format_args!("dot {}", T::NAME));
    let (a, b): (Vec<T>, Vec<T>) = (c.values(c.n), c.values(c.n));
    let (d_a, d_b) = (c.upload_vec(&a)?, c.upload_vec(&b)?);
    c.need(Ok(TempStorage::dot::<T>(c.on.gpu(), a.len())))?;
    let found = c.run(|on, ws| device::dot::<T>(on, &d_a, &d_b, ws))?;
    c.unchanged_vec(&d_a, &a)?;
    c.unchanged_vec(&d_b, &b)?;
    let Some(found) = found else { return Ok(()) };
    same(&c.what, &[found], &[reference::dot(&a, &b)])
}

fn scan_t<T: Element + Value>(c: &mut Call<'_>, kind: ScanKind) -> Checked {
    operators!(c, |Op| scan::<T, Op>, kind)
}

fn scan<T: Element + Value, Op: Operator>(c: &mut Call<'_>, kind: ScanKind) -> Checked {
    c.label(format_args!("{kind:?} scan {} {}", T::NAME, Op::NAME));
    let x: Vec<T> = c.values(c.n);
    let d_x = c.upload_vec(&x)?;
    let mut d_y = c.zeros::<T::Acc>(x.len())?;
    c.need(TempStorage::scan::<T>(x.len()))?;
    let done = c.run(|on, ws| match kind {
        ScanKind::Inclusive => device::inclusive_scan::<T, Op>(on, &d_x, &mut d_y, ws),
        ScanKind::Exclusive => device::exclusive_scan::<T, Op>(on, &d_x, &mut d_y, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    if done.is_none() {
        return Ok(());
    }
    same(&c.what, &c.read(&d_y)?, &reference::scan::<T, Op>(&x, kind))
}

fn in_place_t<T: Element<Acc = T> + Value>(c: &mut Call<'_>) -> Checked {
    operators!(c, |Op| in_place::<T, Op>)
}

/// In place: after a failure the data may be partly scanned, so only the call after it is checked.
fn in_place<T: Element<Acc = T> + Value, Op: Operator>(c: &mut Call<'_>) -> Checked {
    let kind = [ScanKind::Inclusive, ScanKind::Exclusive][c.pick(2)];
    c.label(format_args!("{kind:?} scan in place {} {}", T::NAME, Op::NAME));
    let x: Vec<T> = c.values(c.n);
    let mut d_x = c.upload_vec(&x)?;
    c.need(TempStorage::scan::<T>(x.len()))?;
    if c.run(|on, ws| device::scan_in_place::<T, Op>(on, &mut d_x, kind, ws))?
        .is_none()
    {
        return Ok(());
    }
    let expected = reference::scan::<T, Op>(&x, kind);
    same(&c.what, &c.read_vec(&d_x)?, T::as_raw(&expected))
}

#[derive(Clone, Copy, Debug)]
enum Select {
    If,
    Flagged,
    Unique,
    PartitionIf,
    PartitionFlagged,
}

fn select<T: Element + Value>(c: &mut Call<'_>, which: Select) -> Checked {
    c.label(format_args!("{which:?} {}", T::NAME));
    let x: Vec<T> = c.with_runs(c.n);
    let density = c.pick(101) as u64;
    let flags: Vec<u8> = c.make(x.len(), |b| {
        if b % 100 < density {
            1 + (b >> 32) as u8 % 255
        } else {
            0
        }
    });
    let (a, b) = (x.get(c.pick(x.len().max(1))), x.get(c.pick(x.len().max(1))));
    let predicate = match (a, b, c.pick(5)) {
        (Some(&a), _, 0) => Predicate::less(a),
        (Some(&a), _, 1) => Predicate::greater_equal(a),
        (Some(&a), _, 2) => Predicate::equal(a),
        (Some(&a), _, 3) => Predicate::not_equal(a),
        (Some(&a), Some(&b), _) => Predicate::in_range(a, b),
        _ => Predicate::not_nan(),
    };
    let (d_x, d_flags) = (c.upload_vec(&x)?, c.upload(&flags)?);
    let mut d_out = c.zeros_vec::<T>(x.len())?;
    let mut d_count = c.zeros::<u64>(1)?;
    c.need(TempStorage::select::<T>(x.len()))?;
    let done = c.run(|on, ws| {
        let (out, count) = (&mut d_out, &mut d_count);
        match which {
            Select::If => device::select_if(on, &d_x, predicate, out, count, ws),
            Select::Flagged => device::select_flagged(on, &d_x, &d_flags, out, count, ws),
            Select::Unique => device::unique(on, &d_x, out, count, ws),
            Select::PartitionIf => device::partition_if(on, &d_x, predicate, out, count, ws),
            Select::PartitionFlagged => device::partition_flagged(on, &d_x, &d_flags, out, count, ws),
        }
    })?;
    c.unchanged_vec(&d_x, &x)?;
    c.unchanged(&d_flags, &flags)?;
    if done.is_none() {
        return Ok(());
    }
    let (expected, kept, written) = match which {
        Select::If => (reference::select_if(&x, predicate), None, None),
        Select::Flagged => (reference::select_flagged(&x, &flags), None, None),
        Select::Unique => (reference::unique(&x), None, None),
        Select::PartitionIf => {
            let (y, kept) = reference::partition(&x, |_, v| predicate.keep(v));
            (y, Some(kept), Some(x.len()))
        }
        Select::PartitionFlagged => {
            let (y, kept) = reference::partition(&x, |i, _| flags[i] != 0);
            (y, Some(kept), Some(x.len()))
        }
    };
    let count = kept.unwrap_or(expected.len());
    check_eq(&format!("{}: count", c.what), c.read(&d_count)?[0], count as u64)?;
    let out = c.read_vec(&d_out)?;
    let written = written.unwrap_or(count);
    same(&c.what, &out[..written], T::as_raw(&expected))?;
    untouched(&c.what, &out[written..])
}

/// Outputs past what is written still hold the zeros they were made with.
fn untouched<R: Pod + Debug>(what: &str, rest: &[R]) -> Checked {
    same(
        &format!("{what}: past the output"),
        rest,
        &vec![R::zeroed(); rest.len()],
    )
}

fn runs<T: Element + Value>(c: &mut Call<'_>, non_trivial: bool) -> Checked {
    c.label(format_args!(
        "{} {}",
        if non_trivial { "non_trivial_runs" } else { "rle" },
        T::NAME
    ));
    let x: Vec<T> = c.with_runs(c.n);
    let d_x = c.upload_vec(&x)?;
    let size = if non_trivial { x.len() / 2 } else { x.len() };
    let mut d_items = c.zeros_vec::<T>(x.len())?;
    let (mut d_offsets, mut d_lengths) = (c.zeros::<u32>(size)?, c.zeros::<u32>(size)?);
    let mut d_count = c.zeros::<u64>(1)?;
    c.need(TempStorage::run_length_encode::<T>(x.len()))?;
    let done = c.run(|on, ws| match non_trivial {
        true => device::non_trivial_runs(on, &d_x, &mut d_offsets, &mut d_lengths, &mut d_count, ws),
        false => device::run_length_encode(on, &d_x, &mut d_items, &mut d_lengths, &mut d_count, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    if done.is_none() {
        return Ok(());
    }
    let (items, offsets, lengths) = if non_trivial {
        let (offsets, lengths) = reference::non_trivial_runs(&x);
        (vec![], offsets, lengths)
    } else {
        let (items, lengths) = reference::run_length_encode(&x);
        (items, vec![], lengths)
    };
    let runs = lengths.len();
    check_eq(&format!("{}: runs", c.what), c.read(&d_count)?[0], runs as u64)?;
    let (found_lengths, found_offsets) = (c.read(&d_lengths)?, c.read(&d_offsets)?);
    same(&format!("{}: lengths", c.what), &found_lengths[..runs], &lengths)?;
    untouched(&c.what, &found_lengths[runs..])?;
    if non_trivial {
        same(&format!("{}: offsets", c.what), &found_offsets[..runs], &offsets)
    } else {
        let found = c.read_vec(&d_items)?;
        same(&format!("{}: items", c.what), &found[..runs], T::as_raw(&items))?;
        untouched(&c.what, &found[runs..])
    }
}

/// A histogram sample type: the span of the values [`Value::grid`] makes, and levels in it.
pub trait Sample: HistogramSample + Value {
    /// The lowest and highest level (as `f64`) of the generated samples, and a little past for floats.
    const SPAN: (f64, f64);
    /// The level at `v` (rounded down for integers).
    fn level_at(v: f64) -> Self::Level;
}

macro_rules! sample {
    ($($t:ty => $lo:expr, $hi:expr, $level:expr;)*) => {$(
        impl Sample for $t {
            const SPAN: (f64, f64) = ($lo, $hi);
            fn level_at(v: f64) -> Self::Level { $level(v) }
        }
    )*};
}
sample! {
    u8 => 0.0, 256.0, |v: f64| v.floor() as i64;
    u16 => 0.0, 65536.0, |v: f64| v.floor() as i64;
    i32 => -2147483648.0, 2147483648.0, |v: f64| v.floor() as i64;
    u32 => 0.0, 4294967296.0, |v: f64| v.floor() as i64;
    f16 => -2.5, 2.5, |v: f64| v as f32;
    bf16 => -2.5, 2.5, |v: f64| v as f32;
    f32 => -2.5, 2.5, |v: f64| v as f32;
    f64 => -2.5, 2.5, |v: f64| v;
}

fn histogram_s<S: Sample>(c: &mut Call<'_>, range: bool) -> Checked {
    pick!(c, |C| histogram::<S, C>, [u32, u64], range)
}

fn histogram<S: Sample, C: HistogramCounter + Into<u64> + Debug>(c: &mut Call<'_>, range: bool) -> Checked {
    let bins = (if c.pick(6) == 0 {
        12_289 + c.pick(8000)
    } else {
        1 + c.pick(300)
    }) as u32;
    let kind = if range { "range" } else { "even" };
    c.label(format_args!(
        "histogram_{kind} {} {} bins={bins}",
        S::NAME,
        C::NAME
    ));
    let x: Vec<S> = c.values(c.n);
    let (lo, hi) = S::SPAN;
    let lower = lo + (hi - lo) * c.rng.random_range(0.0..0.5);
    let upper = lower + (hi - lower) * c.rng.random_range(0.05..=1.0);
    let (lower, upper) = (S::level_at(lower), S::level_at(upper));
    let mut levels: Vec<S::Level> = (0..=bins)
        .map(|_| S::level_at(c.rng.random_range(lo..hi)))
        .collect();
    levels.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    let d_x = c.upload(S::as_raw(&x))?;
    let mut d_h = c.zeros::<C>(bins as usize)?;
    c.need(Ok(match range {
        true => TempStorage::histogram_range::<S>(levels.len()),
        false => TempStorage::default(),
    }))?;
    let done = c.run(|on, ws| match range {
        true => device::histogram_range::<S, C>(on, S::view(&d_x), &levels, &mut d_h, ws),
        false => device::histogram_even::<S, C>(on, S::view(&d_x), bins, lower, upper, &mut d_h),
    })?;
    c.unchanged(&d_x, S::as_raw(&x))?;
    if done.is_none() {
        return Ok(());
    }
    let expected = match range {
        true => reference::histogram_range(&x, &levels),
        false => reference::histogram_even(&x, bins, lower, upper),
    };
    let found: Vec<u64> = c.read(&d_h)?.into_iter().map(Into::into).collect();
    same(&c.what, &found, &expected)
}

/// The segments of `n` items: rows of a random length (and the items of whole rows), or offsets.
fn segments(c: &mut Call<'_>, rows: bool) -> (Vec<u64>, usize, usize) {
    if !rows {
        let offsets = c.offsets(c.n);
        return (offsets, 0, c.n);
    }
    let row_len = c.length(c.n);
    let n = c.n / row_len * row_len;
    let offsets = (0..=n / row_len).map(|r| (r * row_len) as u64).collect();
    (offsets, row_len, n)
}

fn segmented_reduce_t<T: Element + Value>(c: &mut Call<'_>, rows: bool) -> Checked {
    operators!(c, |Op| segmented_reduce::<T, Op>, rows)
}

fn segmented_reduce<T: Element + Value, Op: Operator>(c: &mut Call<'_>, rows: bool) -> Checked {
    let (offsets, row_len, n) = segments(c, rows);
    let layout = if rows {
        format!("rows of {row_len}")
    } else {
        format!("{} segments", offsets.len() - 1)
    };
    c.label(format_args!("segmented_reduce {} {} {layout}", T::NAME, Op::NAME));
    let x: Vec<T> = c.values(n);
    let (d_x, d_offsets) = (c.upload_vec(&x)?, c.upload(&offsets)?);
    let checked = ok(SegmentOffsets::new(c.on, &d_offsets))?;
    let mut d_y = c.zeros::<T::Acc>(offsets.len() - 1)?;
    c.need(match rows {
        true => Ok(TempStorage::default()),
        false => TempStorage::segmented_reduce::<T>(x.len()),
    })?;
    let done = c.run(|on, ws| match rows {
        true => device::segmented_reduce::<T, Op>(on, &d_x, row_len, &mut d_y, ws),
        false => device::segmented_reduce::<T, Op>(on, &d_x, &checked, &mut d_y, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    if done.is_none() {
        return Ok(());
    }
    same(
        &c.what,
        &c.read(&d_y)?,
        &reference::segmented_reduce_by_offsets::<T, Op>(&x, &offsets),
    )
}

fn segmented_scan_t<T: Element + Value>(c: &mut Call<'_>, kind: ScanKind) -> Checked {
    operators!(c, |Op| segmented_scan::<T, Op>, kind)
}

fn segmented_scan<T: Element + Value, Op: Operator>(c: &mut Call<'_>, kind: ScanKind) -> Checked {
    let offsets = c.offsets(c.n);
    c.label(format_args!(
        "segmented {kind:?} scan {} {} {} segments",
        T::NAME,
        Op::NAME,
        offsets.len() - 1
    ));
    let x: Vec<T> = c.values(c.n);
    let (d_x, d_offsets) = (c.upload_vec(&x)?, c.upload(&offsets)?);
    let checked = ok(SegmentOffsets::new(c.on, &d_offsets))?;
    let mut d_y = c.zeros::<T::Acc>(x.len())?;
    c.need(TempStorage::segmented_scan::<T>(x.len()))?;
    let done = c.run(|on, ws| match kind {
        ScanKind::Inclusive => device::segmented_inclusive_scan::<T, Op>(on, &d_x, &checked, &mut d_y, ws),
        ScanKind::Exclusive => device::segmented_exclusive_scan::<T, Op>(on, &d_x, &checked, &mut d_y, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    if done.is_none() {
        return Ok(());
    }
    let mut expected = vec![T::Acc::default(); x.len()];
    reference::segmented_scan_into::<T, Op>(&x, &offsets, kind, &mut expected);
    same(&c.what, &c.read(&d_y)?, &expected)
}

fn reduce_by_key_k<K: ScanKey + Value + PartialEq + Debug + Default>(c: &mut Call<'_>) -> Checked {
    elements!(c, |T| reduce_by_key_t::<K, T>)
}

fn reduce_by_key_t<K: ScanKey + Value + PartialEq + Debug + Default, T: Element + Value>(
    c: &mut Call<'_>,
) -> Checked {
    operators!(c, |Op| runs_by_key::<K, T, Op>, false)
}

fn unique_by_key_k<K: ScanKey + Value + PartialEq + Debug + Default>(c: &mut Call<'_>) -> Checked {
    elements!(c, |T| runs_by_key::<K, T, Sum>, true)
}

/// Reduce by key with `Op` (or unique by key) against the reference: values on the grid of
/// quarters, so that every sum is exact and compares by bits.
fn runs_by_key<K: ScanKey + Value + PartialEq + Debug + Default, T: Element + Value, Op: Operator>(
    c: &mut Call<'_>,
    unique: bool,
) -> Checked {
    let (call, op) = if unique {
        ("unique_by_key", "")
    } else {
        ("reduce_by_key", Op::NAME)
    };
    c.label(format_args!(
        "{call} {} {} {op}",
        std::any::type_name::<K>(),
        T::NAME
    ));
    let keys: Vec<K> = c.with_runs(c.n);
    let x: Vec<T> = c.values(c.n);
    let (d_keys, d_x) = (c.upload(&keys)?, c.upload_vec(&x)?);
    let mut d_unique = c.zeros::<K>(c.n)?;
    let (mut d_sums, mut d_firsts) = (c.zeros::<T::Acc>(c.n)?, c.zeros_vec::<T>(c.n)?);
    let mut d_count = c.zeros::<u64>(1)?;
    c.need(TempStorage::reduce_by_key::<K, T>(x.len()))?;
    let done = c.run(|on, ws| match unique {
        true => {
            device::unique_by_key::<K, T>(on, &d_keys, &d_x, &mut d_unique, &mut d_firsts, &mut d_count, ws)
        }
        false => {
            device::reduce_by_key::<K, T, Op>(on, &d_keys, &d_x, &mut d_unique, &mut d_sums, &mut d_count, ws)
        }
    })?;
    c.unchanged_vec(&d_x, &x)?;
    c.unchanged(&d_keys, &keys)?;
    if done.is_none() {
        return Ok(());
    }
    let (runs, checked) = if unique {
        let (unique, firsts) = reference::unique_by_key(&keys, T::as_raw(&x));
        let found = c.read_vec(&d_firsts)?;
        (
            unique,
            same(&format!("{}: values", c.what), &found[..firsts.len()], &firsts),
        )
    } else {
        let (unique, sums) = reference::reduce_by_key::<K, T, Op>(&keys, &x);
        let found = c.read(&d_sums)?;
        (
            unique,
            same(&format!("{}: reductions", c.what), &found[..sums.len()], &sums),
        )
    };
    check_eq(
        &format!("{}: runs", c.what),
        c.read(&d_count)?[0],
        runs.len() as u64,
    )?;
    same(
        &format!("{}: keys", c.what),
        &c.read(&d_unique)?[..runs.len()],
        &runs,
    )?;
    checked
}

fn by_key_k<K: ScanKey + Value + PartialEq + Debug + Default>(c: &mut Call<'_>, kind: ScanKind) -> Checked {
    elements!(c, |T| by_key_t::<K, T>, kind)
}

fn by_key_t<K: ScanKey + Value + PartialEq + Debug + Default, T: Element + Value>(
    c: &mut Call<'_>,
    kind: ScanKind,
) -> Checked {
    operators!(c, |Op| by_key::<K, T, Op>, kind)
}

fn by_key<K: ScanKey + Value + PartialEq + Debug + Default, T: Element + Value, Op: Operator>(
    c: &mut Call<'_>,
    kind: ScanKind,
) -> Checked {
    c.label(format_args!(
        "{kind:?} scan by {} key {} {}",
        std::any::type_name::<K>(),
        T::NAME,
        Op::NAME
    ));
    let keys: Vec<K> = c.with_runs(c.n);
    let x: Vec<T> = c.values(c.n);
    let (d_keys, d_x) = (c.upload(&keys)?, c.upload_vec(&x)?);
    let mut d_y = c.zeros::<T::Acc>(x.len())?;
    c.need(TempStorage::scan_by_key::<K, T>(x.len()))?;
    let done = c.run(|on, ws| match kind {
        ScanKind::Inclusive => device::inclusive_scan_by_key::<K, T, Op>(on, &d_keys, &d_x, &mut d_y, ws),
        ScanKind::Exclusive => device::exclusive_scan_by_key::<K, T, Op>(on, &d_keys, &d_x, &mut d_y, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    c.unchanged(&d_keys, &keys)?;
    if done.is_none() {
        return Ok(());
    }
    same(
        &c.what,
        &c.read(&d_y)?,
        &reference::scan_by_key::<K, T, Op>(&keys, &x, kind),
    )
}

fn segmented_arg<T: SegmentArgElement + Value>(c: &mut Call<'_>, max: bool) -> Checked {
    let offsets = c.offsets(c.n);
    let what = if max { "argmax" } else { "argmin" };
    c.label(format_args!(
        "segmented_{what} {} {} segments",
        T::NAME,
        offsets.len() - 1
    ));
    let x: Vec<T> = c.values(c.n);
    let (d_x, d_offsets) = (c.upload_vec(&x)?, c.upload(&offsets)?);
    let checked = ok(SegmentOffsets::new(c.on, &d_offsets))?;
    let segments = offsets.len() - 1;
    let (mut d_values, mut d_indices) = (c.zeros::<T::Acc>(segments)?, c.zeros::<u32>(segments)?);
    c.need(TempStorage::segmented_arg::<T>(x.len()))?;
    let done = c.run(|on, ws| match max {
        true => device::segmented_argmax(on, &d_x, &checked, &mut d_values, &mut d_indices, ws),
        false => device::segmented_argmin(on, &d_x, &checked, &mut d_values, &mut d_indices, ws),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    if done.is_none() {
        return Ok(());
    }
    let empty = if max { T::Acc::LOWEST } else { T::Acc::HIGHEST };
    let (values, indices): (Vec<T::Acc>, Vec<u32>) = offsets
        .windows(2)
        .map(|w| {
            let segment = &x[w[0] as usize..w[1] as usize];
            let best = if max {
                reference::argmax(segment)
            } else {
                reference::argmin(segment)
            };
            best.map_or((empty, u32::MAX), |(v, i)| (v, i as u32))
        })
        .unzip();
    same(&format!("{}: values", c.what), &c.read(&d_values)?, &values)?;
    same(&format!("{}: indices", c.what), &c.read(&d_indices)?, &indices)
}

/// A sort key of a plain type (uploaded as it is).
pub trait Key: SortKey + Value + DeviceCopy + Default + Pod {}
impl<K: SortKey + Value + DeviceCopy + Default + Pod> Key for K {}

/// Ascending or descending, over all bits or (one time in four) a random range of them.
fn sort_options<K: SortKey>(c: &mut Call<'_>) -> SortOptions {
    let options = [SortOptions::ascending(), SortOptions::descending()][c.pick(2)];
    if c.pick(4) > 0 {
        return options;
    }
    let low = c.pick(K::BITS as usize) as u32;
    let high = low + 1 + c.pick((K::BITS - low) as usize) as u32;
    options.bits(low..high)
}

/// Order-free digests of keys: equal for a permutation (and, but for a collision, only then).
fn digest<K: SortKey>(keys: &[K]) -> (u64, u64) {
    keys.iter().fold((0, 0), |(sum, xor), k| {
        let h = mix(k.ordered_bits());
        (sum.wrapping_add(h), xor ^ mix(h))
    })
}

/// `out` is the first `out.len()` keys of a stable sort of `input` under `order`, `index`
/// (where given) each one's position in `input`.
fn check_stable<K: SortKey>(
    what: &str,
    order: &impl Fn(&K, &K) -> Ordering,
    input: &[K],
    out: &[K],
    index: Option<&[u32]>,
) -> Checked {
    let fail = |m: String| Err(Failed::from(format!("{what}: {m}")));
    for j in 1..out.len() {
        let o = order(&out[j - 1], &out[j]);
        if o == Ordering::Greater || (o == Ordering::Equal && index.is_some_and(|ix| ix[j - 1] > ix[j])) {
            return fail(format!("out of order at {j}: {:?} then {:?}", out[j - 1], out[j]));
        }
    }
    let Some(index) = index else {
        if out.len() != input.len() || digest(out) != digest(input) {
            return fail("the keys out are not the keys in".into());
        }
        return Ok(());
    };
    check_eq(&format!("{what}: indices"), index.len(), out.len())?;
    let mut taken = vec![false; input.len()];
    for (j, (&i, key)) in index.iter().zip(out).enumerate() {
        let i = i as usize;
        if i >= input.len() || taken[i] || input[i].ordered_bits() != key.ordered_bits() {
            return fail(format!(
                "at {j}: index {i}, key {key:?}: not a distinct input position holding it"
            ));
        }
        taken[i] = true;
    }
    // A prefix (top-k): every key left out comes after the last one taken.
    if let (Some(last), Some(&at)) = (out.last(), index.last()) {
        let wrong = (0..input.len()).find(|&i| {
            let o = order(last, &input[i]);
            !taken[i] && (o == Ordering::Greater || (o == Ordering::Equal && (i as u32) < at))
        });
        if let Some(i) = wrong {
            return fail(format!(
                "key {:?} at {i} belongs among the first {}",
                input[i],
                out.len()
            ));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug)]
enum Sort {
    Keys,
    Pairs,
    Argsort,
}

fn sort<K: Key>(c: &mut Call<'_>, which: Sort) -> Checked {
    let options = sort_options::<K>(c);
    let wide = c.pick(2) == 0;
    c.label(format_args!(
        "{which:?} {} {options:?} wide values={wide}",
        K::NAME
    ));
    let keys: Vec<K> = c.keys(c.n);
    let n = keys.len();
    // Values that name their key's position: u32, or u64 with it in both halves.
    let narrow: Vec<u32> = (0..n as u32).collect();
    let wide_values: Vec<u64> = narrow.iter().map(|&i| i as u64 * 0x1_0000_0001).collect();
    let (d_keys, d_narrow, d_wide) = (c.upload(&keys)?, c.upload(&narrow)?, c.upload(&wide_values)?);
    let mut d_out = c.zeros::<K>(n)?;
    let (mut d_narrow_out, mut d_wide_out) = (c.zeros::<u32>(n)?, c.zeros::<u64>(n)?);
    c.need(match (which, wide) {
        (Sort::Keys, _) => TempStorage::sort_keys::<K>(c.on.gpu(), n, options),
        (Sort::Pairs, true) => TempStorage::sort_pairs::<K, u64>(c.on.gpu(), n, options),
        _ => TempStorage::sort_pairs::<K, u32>(c.on.gpu(), n, options),
    })?;
    let done = c.run(|on, ws| match (which, wide) {
        (Sort::Keys, _) => device::sort_keys(on, &d_keys, &mut d_out, options, ws),
        (Sort::Pairs, false) => {
            device::sort_pairs(on, &d_keys, &d_narrow, &mut d_out, &mut d_narrow_out, options, ws)
        }
        (Sort::Pairs, true) => {
            device::sort_pairs(on, &d_keys, &d_wide, &mut d_out, &mut d_wide_out, options, ws)
        }
        (Sort::Argsort, _) => device::argsort(on, &d_keys, &mut d_out, &mut d_narrow_out, options, ws),
    })?;
    c.unchanged(&d_keys, &keys)?;
    c.unchanged(&d_narrow, &narrow)?;
    c.unchanged(&d_wide, &wide_values)?;
    if done.is_none() {
        return Ok(());
    }
    let index = match (which, wide) {
        (Sort::Keys, _) => None,
        (Sort::Pairs, true) => {
            let values = c.read(&d_wide_out)?;
            if let Some(v) = values.iter().find(|&&v| v != (v as u32) as u64 * 0x1_0000_0001) {
                return Err(format!("{}: value {v:#x} is not one of the values in", c.what).into());
            }
            Some(values.iter().map(|&v| v as u32).collect())
        }
        _ => Some(c.read(&d_narrow_out)?),
    };
    check_stable(
        &c.what,
        &key_order::<K>(options),
        &keys,
        &c.read(&d_out)?,
        index.as_deref(),
    )
}

fn segmented_sort<K: Key>(c: &mut Call<'_>, (argsort, rows): (bool, bool)) -> Checked {
    let (offsets, row_len, n) = segments(c, rows);
    let options = sort_options::<K>(c);
    let name = if argsort {
        "segmented_argsort"
    } else {
        "segmented_sort_keys"
    };
    let layout = if rows {
        format!("rows of {row_len}")
    } else {
        format!("{} segments", offsets.len() - 1)
    };
    c.label(format_args!("{name} {} {options:?} {layout}", K::NAME));
    let keys: Vec<K> = c.keys(n);
    let (d_keys, d_offsets) = (c.upload(&keys)?, c.upload(&offsets)?);
    let checked = ok(SegmentOffsets::new(c.on, &d_offsets))?;
    let (mut d_out, mut d_index) = (c.zeros::<K>(n)?, c.zeros::<u32>(n)?);
    let segments = if rows {
        Segments::Rows(row_len)
    } else {
        Segments::from(&checked)
    };
    c.need(match argsort {
        true => TempStorage::segmented_sort_pairs::<K, u32>(c.on.gpu(), n, options),
        false => TempStorage::segmented_sort_keys::<K>(c.on.gpu(), n, options),
    })?;
    let done = c.run(|on, ws| match argsort {
        true => device::segmented_argsort(on, &d_keys, &mut d_out, &mut d_index, segments, options, ws),
        false => device::segmented_sort_keys(on, &d_keys, &mut d_out, segments, options, ws),
    })?;
    c.unchanged(&d_keys, &keys)?;
    if done.is_none() {
        return Ok(());
    }
    let (out, index) = (c.read(&d_out)?, c.read(&d_index)?);
    let order = key_order::<K>(options);
    for w in offsets.windows(2) {
        let range = w[0] as usize..w[1] as usize;
        let ix = argsort.then(|| &index[range.clone()]);
        check_stable(&c.what, &order, &keys[range.clone()], &out[range], ix)?;
    }
    let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    untouched(&c.what, &out[..first])?;
    untouched(&c.what, &out[last..])?;
    untouched(&c.what, &index[..first])?;
    untouched(&c.what, &index[last..])
}

fn top_k<K: Key>(c: &mut Call<'_>) -> Checked {
    let row_len = c.length(c.n.min(1 << 16));
    let rows = c.n / row_len;
    let most = [16, 64, 600][c.pick(3)].min(row_len);
    let (k, largest) = (c.pick(most + 1), c.pick(2) == 0);
    c.label(format_args!(
        "top_k {} rows of {row_len} k={k} largest={largest}",
        K::NAME
    ));
    let keys: Vec<K> = c.keys(rows * row_len);
    let d_keys = c.upload(&keys)?;
    let (mut d_values, mut d_index) = (c.zeros::<K>(rows * k)?, c.zeros::<u32>(rows * k)?);
    c.need(TempStorage::top_k::<K>(rows * row_len, row_len, k))?;
    let done =
        c.run(|on, ws| device::top_k(on, &d_keys, row_len, k, largest, &mut d_values, &mut d_index, ws))?;
    c.unchanged(&d_keys, &keys)?;
    if done.is_none() || k == 0 {
        return Ok(());
    }
    let (values, index) = (c.read(&d_values)?, c.read(&d_index)?);
    let order = key_order::<K>([SortOptions::ascending(), SortOptions::descending()][largest as usize]);
    for ((row, out), ix) in keys.chunks(row_len).zip(values.chunks(k)).zip(index.chunks(k)) {
        check_stable(&c.what, &order, row, out, Some(ix))?;
    }
    Ok(())
}

fn top_k_of_all<K: Key>(c: &mut Call<'_>) -> Checked {
    // At most the n keys (more is refused, `Error::KPastInput`: top_k_of_all's bad-input test).
    let k = [0, 1, 100, c.n][c.pick(4)].min(c.n);
    let largest = c.pick(2) == 0;
    c.label(format_args!("top_k_of_all {} k={k} largest={largest}", K::NAME));
    let keys: Vec<K> = c.keys(c.n);
    let d_keys = c.upload(&keys)?;
    let (mut d_values, mut d_indices) = (c.zeros::<K>(k)?, c.zeros::<u64>(k)?);
    c.need(TempStorage::top_k_of_all::<K>(c.on.gpu(), k))?;
    let done =
        c.run(|on, ws| device::top_k_of_all(on, &d_keys, k, largest, 0, &mut d_values, &mut d_indices, ws))?;
    c.unchanged(&d_keys, &keys)?;
    if done.is_none() || k == 0 {
        return Ok(());
    }
    let (expected_values, expected_indices) = reference::sort::top_k(&keys, c.n, k, largest);
    let expected_indices: Vec<u64> = expected_indices.iter().map(|&i| u64::from(i)).collect();
    check_eq(
        &format!("{}: indices", c.what),
        c.read(&d_indices)?,
        expected_indices,
    )?;
    let values = c.read(&d_values)?;
    // As bits: a NaN key is never equal to itself.
    check_eq(
        &format!("{}: values", c.what),
        bytemuck::cast_slice::<K, u8>(&values),
        bytemuck::cast_slice::<K, u8>(&expected_values),
    )
}

/// What a half output's rounding adds to a bound at `expected`.
fn rounding<T: Element>(expected: f64) -> f64 {
    match T::NAME {
        "f16" => expected.abs() / 2048.0 + 2f64.powi(-24),
        "bf16" => expected.abs() / 256.0,
        _ => 0.0,
    }
}

/// Each found value within `bound(i)` (and its type's rounding) of `expected[i]`, NaN where it is NaN.
fn within<T: Element<Acc = f32>>(
    what: &str,
    found: &[T::Raw],
    expected: &[f64],
    bound: impl Fn(usize) -> f64,
) -> Checked {
    check_eq(&format!("{what}: length"), found.len(), expected.len())?;
    for (i, (f, &e)) in T::from_raw(found).iter().zip(expected).enumerate() {
        let f = f.to_acc() as f64;
        let close = f == e || (f - e).abs() <= bound(i) + rounding::<T>(e) || (f.is_nan() && e.is_nan());
        if !close {
            return Err(format!("{what}: index {i}: found {f}, expected {e} (bound {})", bound(i)).into());
        }
    }
    Ok(())
}

/// Rows of a random number of columns (up to 2^17) of `c.n` items: (rows, cols, input).
fn matrix<T: RowElement + Value>(c: &mut Call<'_>) -> (usize, usize, Vec<T>) {
    let cols = c.length(c.n.min(1 << 17));
    let rows = c.n / cols;
    (rows, cols, c.values(rows * cols))
}

fn widen<T: Element<Acc = f32>>(x: &[T]) -> Vec<f64> {
    x.iter().map(|v| v.to_acc() as f64).collect()
}

fn row_op<T: RowElement + Value>(c: &mut Call<'_>, op: Forward) -> Checked {
    let (rows, cols, x) = matrix::<T>(c);
    c.label(format_args!("{op:?} {} {rows}x{cols}", T::NAME));
    let eps = 1e-5;
    let d_x = c.upload_vec(&x)?;
    let mut d_y = c.zeros_vec::<T>(x.len())?;
    c.need(Ok(TempStorage::default()))?;
    let done = c.run(|on, _| match op {
        Forward::Softmax => rows::softmax(on, &d_x, cols, &mut d_y),
        Forward::LogSoftmax => rows::log_softmax(on, &d_x, cols, &mut d_y),
        Forward::LayerNorm => rows::layer_norm(on, &d_x, cols, Norm::new(eps), &mut d_y, None, None),
        Forward::RmsNorm => rows::rms_norm(on, &d_x, cols, Norm::new(eps), &mut d_y, None),
    })?;
    c.unchanged_vec(&d_x, &x)?;
    if done.is_none() {
        return Ok(());
    }
    let wide = widen(&x);
    let shifts: Vec<f64> = wide.chunks(cols).map(shift).collect();
    let (expected, row_terms) = match op {
        Forward::Softmax => (rows_reference::softmax(&wide, cols), shifts),
        Forward::LogSoftmax => (rows_reference::log_softmax(&wide, cols), shifts),
        Forward::LayerNorm => {
            let y = rows_reference::layer_norm(&wide, cols, None, None, eps as f64);
            let terms = (0..rows).map(|r| centring(y.mean[r], y.rstd[r], cols)).collect();
            (y.y, terms)
        }
        Forward::RmsNorm => (
            rows_reference::rms_norm(&wide, cols, None, eps as f64).y,
            vec![0.0; rows],
        ),
    };
    let y = c.read_vec(&d_y)?;
    within::<T>(&c.what, &y, &expected, |i| {
        f32_bound(op, expected[i], 0.0, row_terms[i / cols])
    })
}

fn cross_entropy<T: RowElement + Value>(c: &mut Call<'_>) -> Checked {
    let (rows, cols, x) = matrix::<T>(c);
    let reduction = [Reduction::Mean, Reduction::Sum, Reduction::None][c.pick(3)];
    let (smoothing, with_grad) = ([0.0f32, 0.1][c.pick(2)], c.pick(3) > 0);
    c.label(format_args!(
        "cross_entropy {} {rows}x{cols} {reduction:?} smoothing={smoothing} grad={with_grad}",
        T::NAME
    ));
    let ignore_index = -100;
    let targets: Vec<i64> = c.make(rows, |b| {
        if b % 10 == 0 {
            ignore_index
        } else {
            ((b >> 8) % cols as u64) as i64
        }
    });
    let (d_x, d_targets) = (c.upload_vec(&x)?, c.upload(&targets)?);
    let per_row = reduction == Reduction::None;
    let mut d_loss = c.zeros::<f32>(if per_row { rows } else { 1 })?;
    let mut d_grad = c.zeros_vec::<T>(x.len())?;
    let options = CrossEntropy {
        reduction,
        ignore_index,
        label_smoothing: smoothing,
    };
    c.need(Ok(match per_row {
        true => TempStorage::default(),
        false => TempStorage::cross_entropy(c.on.gpu(), rows),
    }))?;
    let done = c.run(|on, ws| {
        let grad = with_grad.then(|| d_grad.view_mut());
        rows::cross_entropy(on, &d_x, cols, &d_targets, options, &mut d_loss, grad, ws)
    })?;
    c.unchanged_vec(&d_x, &x)?;
    c.unchanged(&d_targets, &targets)?;
    if done.is_none() {
        return Ok(());
    }
    // As rows::cross_entropy's test: per-row bounds, summed (and scaled) for a reduction.
    let wide = widen(&x);
    let expected = rows_reference::cross_entropy(&wide, cols, &targets, ignore_index, smoothing as f64);
    let row_bound: Vec<f64> = wide
        .chunks(cols)
        .map(rows_reference::cross_entropy_bound)
        .collect();
    let scale = if reduction == Reduction::Mean {
        1.0 / expected.valid as f64
    } else {
        1.0
    };
    let loss = c.read(&d_loss)?;
    if per_row {
        within::<f32>(&c.what, &loss, &expected.loss, |i| row_bound[i])?;
    } else {
        let total = expected.loss.iter().sum::<f64>() * scale;
        let abs = expected.loss.iter().map(|l| l.abs()).sum::<f64>() * scale;
        let bound = row_bound.iter().sum::<f64>() * scale + rows as f64 / (1u64 << 24) as f64 * abs;
        within::<f32>(&c.what, &loss, &[total], |_| bound)?;
    }
    let grad = c.read_vec(&d_grad)?;
    if !with_grad {
        return untouched(&format!("{}: gradient", c.what), &grad);
    }
    let bounds =
        rows_reference::cross_entropy_grad_bounds(&wide, cols, &expected, &targets, ignore_index, scale);
    let expected_grad =
        rows_reference::cross_entropy_scaled_grad(&expected, cols, &targets, ignore_index, scale);
    within::<T>(&format!("{}: gradient", c.what), &grad, &expected_grad, |i| {
        bounds[i]
    })
}
