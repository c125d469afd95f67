//! Multi-GPU tests against the library's CPU references over the concatenated shards: a world of
//! one rank on one GPU; every visible GPU (up to 4) in one process, a thread a rank; one process
//! a rank, started as torchrun would (this binary again, with `RANK`, `WORLD_SIZE`, ...); and
//! ranks that fail or never join. A custom harness (libtest-mimic): where the GPUs a test needs
//! are missing, it is reported as ignored, by name, with the reason. Each test runs in a process
//! of its own, killed and failed where it hangs past a watchdog.
//!
//! Run: `NCCL_NVLS_ENABLE=0 cargo test -p gpu-primitives-distributed --test gpus`.

use gpu_primitives::device::{
    DeviceVec, DeviceView, DeviceViewMut, DeviceWorkspace, Element, Max, Min, Operator, Predicate, ScanKind,
    SortKey, SortOptions, Sum,
};
use gpu_primitives::{Gpu, half};
use gpu_primitives_distributed::{self as dist, Communicator, Error, NcclType, ReduceOp, World};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::process::Command;
use std::time::Duration;

/// Why a test did not run or what failed.
enum Stop {
    Skip(String),
    Failed(Failed),
}

impl<E: std::fmt::Display> From<E> for Stop {
    fn from(e: E) -> Self {
        Stop::Failed(e.to_string().into())
    }
}

type Test = fn() -> Result<(), Stop>;

/// The GPUs of this machine, up to 4, or why there are fewer than `needed`.
fn gpus(needed: usize) -> Result<Vec<Gpu>, Stop> {
    let mut gpus = Vec::new();
    let mut why = String::new();
    for ordinal in 0..4 {
        match gpu_primitives::open_gpu(ordinal) {
            Ok(gpu) => gpus.push(gpu),
            Err(e) => {
                why = e.to_string();
                break;
            }
        }
    }
    if gpus.len() < needed {
        return Err(Stop::Skip(format!(
            "needs {needed} CUDA GPU{}, found {} ({why})",
            if needed > 1 { "s" } else { "" },
            gpus.len()
        )));
    }
    Ok(gpus)
}

/// A deterministic stream of numbers (SplitMix64).
fn numbers(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Shard lengths of `ranks` ranks: uneven, rank 1 (where there is one) empty.
fn lengths(ranks: usize, seed: u64) -> Vec<usize> {
    let mut next = numbers(seed);
    (0..ranks)
        .map(|r| {
            if r == 1 {
                0
            } else {
                (next() % 300_000) as usize + 1
            }
        })
        .collect()
}

/// Run `work(rank, communicator, gpu)` on a thread a rank; every rank's result.
fn on_every_rank<R: Send>(
    gpus: &[Gpu],
    timeout: Duration,
    work: impl Fn(usize, &mut Communicator, &Gpu) -> R + Sync,
) -> Result<Vec<R>, Stop> {
    let refs: Vec<&Gpu> = gpus.iter().collect();
    let comms = Communicator::local(&refs, timeout)?;
    Ok(std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = comms
            .into_iter()
            .zip(gpus)
            .enumerate()
            .map(|(rank, (mut comm, gpu))| s.spawn(move || work(rank, &mut comm, gpu)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank panicked"))
            .collect()
    }))
}

/// The accumulators, compared exactly but for a float sum.
trait Acc: Copy + PartialEq + std::fmt::Debug {
    const FLOAT: bool;
    fn f64(self) -> f64;
}

macro_rules! acc {
    ($($ty:ty => $float:literal;)*) => {
        $(impl Acc for $ty {
            const FLOAT: bool = $float;
            fn f64(self) -> f64 {
                self as f64
            }
        })*
    };
}
acc! { f32 => true; f64 => true; i32 => false; u32 => false; i64 => false; u64 => false; }

/// Whether two accumulators agree: exactly (NaN with NaN), or for a float sum within `n`
/// roundings of the sum of magnitudes.
fn close<A: Acc>(got: A, expected: A, sum: bool, magnitude: f64, n: usize) -> bool {
    let (g, e) = (got.f64(), expected.f64());
    if g.is_nan() || e.is_nan() {
        return g.is_nan() && e.is_nan();
    }
    if !(sum && A::FLOAT) {
        return got == expected;
    }
    (g - e).abs() <= magnitude * (n as f64 + 2.0) * f64::from(f32::EPSILON)
}

fn reduce_case<T: Element, Op: Operator>(gpus: &[Gpu], make: fn(u64) -> T) -> Result<(), Stop>
where
    T::Acc: NcclType + Acc,
{
    let lens = lengths(gpus.len(), 11);
    let shards: Vec<Vec<T>> = lens
        .iter()
        .enumerate()
        .map(|(r, &n)| {
            let mut next = numbers(r as u64 * 101 + 7);
            (0..n).map(|_| make(next())).collect()
        })
        .collect();
    let all: Vec<T> = shards.concat();
    let expected = gpu_primitives::reference::reduce::<T, Op>(&all);
    let magnitude: f64 = all
        .iter()
        .map(|v| v.to_acc().f64().abs())
        .filter(|a| a.is_finite())
        .sum();
    let got = on_every_rank(gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let shard = DeviceVec::from_slice(gpu, &shards[rank])?;
        dist::reduce::<T, Op>(comm, gpu, &shard, &mut DeviceWorkspace::new())
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        let g = g?;
        if !close(g, expected, Op::NAME == "sum", magnitude, all.len()) {
            return Err(format!(
                "reduce {} {} over {lens:?}: rank {rank} got {g:?}, the reference {expected:?}",
                T::NAME,
                Op::NAME
            )
            .into());
        }
    }
    Ok(())
}

fn reduce_every_type<Op: Operator>(gpus: &[Gpu]) -> Result<(), Stop> {
    // Floats in [-8, 8) by sixteenths, a NaN in about one in 50,000 for Min / Max; integers
    // over their whole range (sums wrap).
    fn float(bits: u64) -> f32 {
        if bits.is_multiple_of(50_000) {
            f32::NAN
        } else {
            ((bits >> 8) % 256) as f32 / 16.0 - 8.0
        }
    }
    reduce_case::<f32, Op>(gpus, float)?;
    reduce_case::<f64, Op>(gpus, |b| f64::from(float(b)))?;
    reduce_case::<half::f16, Op>(gpus, |b| half::f16::from_f32(float(b)))?;
    reduce_case::<half::bf16, Op>(gpus, |b| half::bf16::from_f32(float(b)))?;
    reduce_case::<i32, Op>(gpus, |b| b as i32)?;
    reduce_case::<u32, Op>(gpus, |b| b as u32)?;
    reduce_case::<i64, Op>(gpus, |b| (b % 1_000_000_007) as i64 - 500_000_000)?;
    reduce_case::<u64, Op>(gpus, |b| b % 1_000_000_007)?;
    Ok(())
}

fn reduce_every_type_and_operator() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    reduce_every_type::<Sum>(&gpus)?;
    reduce_every_type::<Min>(&gpus)?;
    reduce_every_type::<Max>(&gpus)
}

fn argmin_and_argmax_give_global_indices() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let lens = lengths(gpus.len(), 5);
    // Ties across ranks (the value 0 appears in every shard), a NaN in the last shard.
    let shards: Vec<Vec<f32>> = lens
        .iter()
        .enumerate()
        .map(|(r, &n)| {
            let mut next = numbers(r as u64 + 99);
            let mut shard: Vec<f32> = (0..n).map(|_| (next() % 1000) as f32).collect();
            if r + 1 == lens.len() && n > 10 {
                shard[n / 2] = f32::NAN;
            }
            shard
        })
        .collect();
    let all = shards.concat();
    let without_nan: Vec<f32> = all.iter().map(|v| if v.is_nan() { 500.0 } else { *v }).collect();
    for (what, data) in [("with a NaN", &all), ("without", &without_nan)] {
        let mut offset = 0;
        let shards: Vec<&[f32]> = lens
            .iter()
            .map(|&n| {
                let s = &data[offset..offset + n];
                offset += n;
                s
            })
            .collect();
        let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
            let shard = DeviceVec::from_slice(gpu, shards[rank])?;
            let mut ws = DeviceWorkspace::new();
            Ok::<_, Error>((
                dist::argmin::<f32>(comm, gpu, &shard, &mut ws)?,
                dist::argmax::<f32>(comm, gpu, &shard, &mut ws)?,
            ))
        })?;
        let bits = |r: Option<(f32, usize)>| r.map(|(v, i)| (v.to_bits(), i));
        let expected = (
            bits(gpu_primitives::reference::argmin(data)),
            bits(gpu_primitives::reference::argmax(data)),
        );
        for (rank, g) in got.into_iter().enumerate() {
            let (min, max) = g?;
            if (bits(min), bits(max)) != expected {
                return Err(format!("{what}: rank {rank} got {min:?} {max:?}, expected {expected:?}").into());
            }
        }
    }
    Ok(())
}

/// The shards of `lens` with `make`'s items, seeded by rank.
fn shards_of<T>(lens: &[usize], make: impl Fn(u64) -> T) -> Vec<Vec<T>> {
    lens.iter()
        .enumerate()
        .map(|(r, &n)| {
            let mut next = numbers(r as u64 * 31 + 3);
            (0..n).map(|_| make(next())).collect()
        })
        .collect()
}

/// Every rank's part of the whole array's scans, inclusive and exclusive, against the
/// reference's scan of the concatenation, bit for bit (values on a grid where every grouping of
/// a float sum is exact); the outputs' slots past the shard keep their sentinel.
fn scan_case<T: Element, Op: Operator>(gpus: &[Gpu], make: fn(u64) -> T) -> Result<(), Stop>
where
    T::Acc: NcclType,
{
    let lens = lengths(gpus.len(), 17);
    let shards = shards_of(&lens, make);
    let all: Vec<T> = shards.concat();
    // Bytes 0x5a: a value no scan here gives.
    let sentinel: T::Acc = bytemuck::pod_read_unaligned(&[0x5au8; 8][..size_of::<T::Acc>()]);
    let got = on_every_rank(gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let shard = DeviceVec::from_slice(gpu, &shards[rank])?;
        let mut ws = DeviceWorkspace::new();
        let mut scans = Vec::new();
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let mut out = gpu.upload(&vec![sentinel; shards[rank].len() + 3])?;
            match kind {
                ScanKind::Inclusive => dist::inclusive_scan::<T, Op>(comm, gpu, &shard, &mut out, &mut ws)?,
                ScanKind::Exclusive => dist::exclusive_scan::<T, Op>(comm, gpu, &shard, &mut out, &mut ws)?,
            }
            scans.push(gpu.download(&out)?);
        }
        Ok::<_, Error>(scans)
    })?;
    let mut offset = 0;
    for (rank, g) in got.into_iter().enumerate() {
        let scans = g?;
        let n = lens[rank];
        for (kind, found) in [ScanKind::Inclusive, ScanKind::Exclusive].into_iter().zip(scans) {
            let mut expected =
                gpu_primitives::reference::scan::<T, Op>(&all, kind)[offset..offset + n].to_vec();
            expected.extend_from_slice(&[sentinel; 3]);
            if bytemuck::cast_slice::<_, u8>(&found) != bytemuck::cast_slice::<_, u8>(&expected) {
                let i = found
                    .iter()
                    .zip(&expected)
                    .position(|(f, e)| bytemuck::bytes_of(f) != bytemuck::bytes_of(e))
                    .unwrap_or(0);
                return Err(format!(
                    "{kind:?} scan {} {} over {lens:?}: rank {rank} index {i}: {:?}, the reference {:?}",
                    T::NAME,
                    Op::NAME,
                    found.get(i),
                    expected.get(i)
                )
                .into());
            }
        }
        offset += n;
    }
    Ok(())
}

fn scan_every_type<Op: Operator>(gpus: &[Gpu]) -> Result<(), Stop> {
    // Sixteenths in [-8, 8): every partial sum of these shards is exact in f32.
    fn grid(bits: u64) -> f32 {
        ((bits >> 8) % 256) as f32 / 16.0 - 8.0
    }
    scan_case::<f32, Op>(gpus, grid)?;
    scan_case::<f64, Op>(gpus, |b| f64::from(grid(b)))?;
    scan_case::<half::f16, Op>(gpus, |b| half::f16::from_f32(grid(b)))?;
    scan_case::<half::bf16, Op>(gpus, |b| half::bf16::from_f32(grid(b)))?;
    scan_case::<i32, Op>(gpus, |b| b as i32)?;
    scan_case::<u32, Op>(gpus, |b| b as u32)?;
    scan_case::<i64, Op>(gpus, |b| b as i64)?;
    scan_case::<u64, Op>(gpus, |b| b)?;
    Ok(())
}

fn scans_every_type_and_operator() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    scan_every_type::<Sum>(&gpus)?;
    scan_every_type::<Min>(&gpus)?;
    scan_every_type::<Max>(&gpus)
}

/// Every rank's part of the whole array's select_if, partition_if and unique (their placements
/// and items) against the reference's over the concatenated shards; each output's slots past
/// what the call wrote keep their sentinel where it writes only the kept items.
fn compactions_with_global_positions() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let mut lens = lengths(gpus.len(), 29);
    if lens.len() == 2 {
        lens[1] = 100_003; // two ranks: both hold items, so that a run crosses their boundary
    }
    // Runs of equal values (lengths 1 to 8); each non-empty shard but the first starts with
    // the value the nearest earlier non-empty shard ends with (across the empty rank 1 where
    // there are more than two ranks).
    let mut next = numbers(41);
    let mut all: Vec<u32> = Vec::new();
    let total: usize = lens.iter().sum();
    while all.len() < total {
        let value = (next() % 50) as u32;
        let run = (next() % 8 + 1) as usize;
        all.extend(std::iter::repeat_n(value, run.min(total - all.len())));
    }
    let mut shards = Vec::new();
    let mut offset = 0;
    for &n in &lens {
        shards.push(all[offset..offset + n].to_vec());
        offset += n;
    }
    for r in 1..shards.len() {
        if let Some(p) = (0..r).rev().find(|&p| !shards[p].is_empty()) {
            let last = *shards[p].last().unwrap();
            let n = shards[r].len().min(2);
            shards[r][..n].fill(last);
        }
    }
    let all: Vec<u32> = shards.concat();
    let predicate = Predicate::less(20u32);
    const SENTINEL: u32 = 0xdead_beef;
    let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let shard = DeviceVec::from_slice(gpu, &shards[rank])?;
        let mut ws = DeviceWorkspace::new();
        let n = shards[rank].len();
        let mut selected = DeviceVec::from_slice(gpu, &vec![SENTINEL; n + 1])?;
        let s = dist::select_if(comm, gpu, &shard, predicate, &mut selected, &mut ws)?;
        let mut parted = DeviceVec::from_slice(gpu, &vec![SENTINEL; n])?;
        let p = dist::partition_if(comm, gpu, &shard, predicate, &mut parted, &mut ws)?;
        let mut uniq = DeviceVec::from_slice(gpu, &vec![SENTINEL; n + 1])?;
        let u = dist::unique(comm, gpu, &shard, &mut uniq, &mut ws)?;
        Ok::<_, Error>((
            s,
            selected.to_vec(gpu)?,
            p,
            parted.to_vec(gpu)?,
            u,
            uniq.to_vec(gpu)?,
        ))
    })?;
    let kept = gpu_primitives::reference::select_if(&all, predicate);
    let uniques = gpu_primitives::reference::unique(&all);
    let rejected: Vec<u32> = all.iter().copied().filter(|&x| !predicate.keep(x)).collect();
    for (rank, g) in got.into_iter().enumerate() {
        let (s, selected, p, parted, u, uniq) = g?;
        let n = shards[rank].len();
        let part = |v: &[u32], at: usize, len: usize| v.get(at..at + len).map(<[u32]>::to_vec);
        let ok = s.total == kept.len()
            && part(&selected, 0, s.kept) == part(&kept, s.offset, s.kept)
            && selected[s.kept..] == vec![SENTINEL; n + 1 - s.kept][..]
            && p.selected == s
            && p.rejected.total == rejected.len()
            && p.selected.kept + p.rejected.kept == n
            && part(&parted, 0, p.selected.kept) == part(&kept, p.selected.offset, p.selected.kept)
            && part(&parted, p.selected.kept, p.rejected.kept)
                == part(&rejected, p.rejected.offset - kept.len(), p.rejected.kept)
            && u.total == uniques.len()
            && part(&uniq, 0, u.kept) == part(&uniques, u.offset, u.kept)
            && uniq[u.kept..] == vec![SENTINEL; n + 1 - u.kept][..];
        if !ok {
            return Err(format!(
                "rank {rank} over {lens:?}: select {s:?}, partition {p:?}, unique {u:?} (the reference keeps {}, rejects {}, has {} unique)",
                kept.len(),
                rejected.len(),
                uniques.len()
            )
            .into());
        }
    }
    Ok(())
}

/// The items of uneven shards (rank 1 empty), then of one rank only, rebalanced: each rank's
/// part is its equal range of the concatenation, and its input is unchanged.
fn rebalance_gives_equal_parts_in_order() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let uneven = lengths(gpus.len(), 37);
    let mut on_rank_0 = vec![0; gpus.len()];
    on_rank_0[0] = 250_001;
    for lens in [uneven, on_rank_0] {
        let shards = shards_of(&lens, |b| b as u32);
        let all = shards.concat();
        let world = gpus.len();
        let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
            let items = DeviceVec::from_slice(gpu, &shards[rank])?;
            let part = all.len().div_ceil(world);
            let mut output = DeviceVec::<u32>::zeroed(gpu, part)?;
            let range = dist::rebalance(comm, gpu, &items, &mut output)?;
            Ok::<_, Error>((range, output.to_vec(gpu)?, items.to_vec(gpu)?))
        })?;
        for (rank, g) in got.into_iter().enumerate() {
            let (range, output, items) = g?;
            let expected = rank * all.len() / world..(rank + 1) * all.len() / world;
            if range != expected || output[..range.len()] != all[range.clone()] || items != shards[rank] {
                return Err(format!("rank {rank} over {lens:?}: range {range:?} (expected {expected:?}), its items or input differ").into());
            }
        }
    }
    Ok(())
}

/// Keys of type `K` on a device, as a view (the sort's keys are stored as their raw bits).
fn keys_view<K: SortKey>(buffer: &gpu_primitives::DeviceBuffer<K::Raw>) -> DeviceView<'_, K> {
    // SAFETY: a live buffer of `len` stored keys, borrowed for the view's lifetime.
    unsafe { DeviceView::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
}

/// As [`keys_view`], writable.
fn keys_view_mut<K: SortKey>(buffer: &mut gpu_primitives::DeviceBuffer<K::Raw>) -> DeviceViewMut<'_, K> {
    // SAFETY: a live buffer of `len` stored keys, borrowed mutably for the view's lifetime.
    unsafe { DeviceViewMut::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
}

/// One distributed sort of `shards` (keys with their global index as `u32` values, or keys
/// alone) against the reference's stable sort of the concatenation, bit for bit: each rank's
/// range, keys and values, its input unchanged, and the output past its part untouched.
fn sort_case<K: SortKey>(
    gpus: &[Gpu],
    shards: &[Vec<K>],
    options: SortOptions,
    pairs: bool,
) -> Result<(), Stop> {
    let all: Vec<K> = shards.concat();
    let indices: Vec<u32> = (0..all.len() as u32).collect();
    let (keys, values) = gpu_primitives::reference::sort::sort_pairs(&all, &indices, options);
    let world = gpus.len();
    let lens: Vec<usize> = shards.iter().map(Vec::len).collect();
    let got = on_every_rank(gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let first: usize = lens[..rank].iter().sum();
        let input = gpu.upload(K::as_raw(&shards[rank]))?;
        let input_values = gpu.upload(&indices[first..first + lens[rank]])?;
        // One slot more than the largest part: it must keep its sentinel.
        let room = all.len().div_ceil(world) + 1;
        let mut output = gpu.upload(&vec![K::Raw::default(); room])?;
        let mut output_values = gpu.upload(&vec![u32::MAX; room])?;
        let mut ws = DeviceWorkspace::new();
        let range = if pairs {
            dist::sort_pairs::<K, u32>(
                comm,
                gpu,
                keys_view::<K>(&input),
                &input_values,
                keys_view_mut::<K>(&mut output),
                &mut output_values,
                options,
                &mut ws,
            )?
        } else {
            dist::sort_keys::<K>(
                comm,
                gpu,
                keys_view::<K>(&input),
                keys_view_mut::<K>(&mut output),
                options,
                &mut ws,
            )?
        };
        // The input's first changed item, how many changed (compared as bits: NaN keys too).
        let after = gpu.download(&input)?;
        let before = K::as_raw(&shards[rank]);
        let bits = |k: &K::Raw| bytemuck::bytes_of(k).to_vec();
        let changed: Vec<usize> = (0..after.len())
            .filter(|&i| bits(&after[i]) != bits(&before[i]))
            .collect();
        let unchanged = changed.first().map(|&i| {
            format!(
                "{} of {} input keys changed, first at {i}: {:?} -> {:?}, last at {}",
                changed.len(),
                after.len(),
                before[i],
                after[i],
                changed[changed.len() - 1]
            )
        });
        Ok::<_, Error>((
            range,
            K::from_raw(&gpu.download(&output)?).to_vec(),
            gpu.download(&output_values)?,
            unchanged,
        ))
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        let (range, out, out_values, unchanged) = g?;
        let expected = rank * all.len() / world..(rank + 1) * all.len() / world;
        let what = format!(
            "sort_{} {} {options:?} over {lens:?}, rank {rank}",
            if pairs { "pairs" } else { "keys" },
            K::NAME
        );
        if range != expected {
            return Err(format!("{what}: range {range:?}, expected {expected:?}").into());
        }
        let n = range.len();
        // Compared as bits: NaN keys are equal to themselves there.
        let (got_raw, expected_raw): (&[u8], &[u8]) = (
            bytemuck::cast_slice(K::as_raw(&out[..n])),
            bytemuck::cast_slice(K::as_raw(&keys[range.clone()])),
        );
        if got_raw != expected_raw {
            let width = size_of::<K::Raw>();
            let at = (0..n)
                .find(|&i| got_raw[i * width..(i + 1) * width] != expected_raw[i * width..(i + 1) * width])
                .unwrap_or(0);
            return Err(format!(
                "{what}: keys differ first at {at}: {:?}, expected {:?}",
                out[at],
                keys[range.start + at]
            )
            .into());
        }
        if pairs && out_values[..n] != values[range.clone()] {
            return Err(format!("{what}: values (global indices) differ: not stable").into());
        }
        if bytemuck::cast_slice::<K::Raw, u8>(K::as_raw(&out[n..]))
            .iter()
            .any(|&b| b != 0)
            || (pairs && out_values[n..].iter().any(|&v| v != u32::MAX))
        {
            return Err(format!("{what}: the output past the part was written").into());
        }
        if let Some(changed) = unchanged {
            return Err(format!("{what}: the input was modified: {changed}").into());
        }
    }
    Ok(())
}

/// One distributed top-k of `shards` against the reference (the first k of the
/// concatenation's stable sort), bit for bit, on every rank: keys and global indices, the
/// outputs past k untouched, the input unchanged.
fn top_k_case<K: SortKey>(gpus: &[Gpu], shards: &[Vec<K>], k: usize, largest: bool) -> Result<(), Stop> {
    let all: Vec<K> = shards.concat();
    let (keys, indices) = gpu_primitives::reference::sort::top_k(&all, all.len(), k, largest);
    let indices: Vec<u64> = indices.into_iter().map(u64::from).collect();
    let got = on_every_rank(gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let input = gpu.upload(K::as_raw(&shards[rank]))?;
        let mut values = gpu.upload(&vec![K::Raw::default(); k + 1])?;
        let mut positions = gpu.upload(&vec![u64::MAX; k + 1])?;
        let mut ws = DeviceWorkspace::new();
        dist::top_k::<K>(
            comm,
            gpu,
            keys_view::<K>(&input),
            k,
            largest,
            keys_view_mut::<K>(&mut values),
            &mut positions,
            &mut ws,
        )?;
        // Compared as bits: a NaN key is not equal to itself as a float.
        let unchanged = bytemuck::cast_slice::<K::Raw, u8>(&gpu.download(&input)?)
            == bytemuck::cast_slice::<K::Raw, u8>(K::as_raw(&shards[rank]));
        Ok::<_, Error>((
            K::from_raw(&gpu.download(&values)?).to_vec(),
            gpu.download(&positions)?,
            unchanged,
        ))
    })?;
    let lens: Vec<usize> = shards.iter().map(Vec::len).collect();
    for (rank, g) in got.into_iter().enumerate() {
        let (values, positions, unchanged) = g?;
        let what = format!(
            "top_k {} k = {k} largest {largest} over {lens:?}, rank {rank}",
            K::NAME
        );
        let bits = |v: &[K]| bytemuck::cast_slice::<K::Raw, u8>(K::as_raw(v)).to_vec();
        if bits(&values[..k]) != bits(&keys) {
            return Err(format!("{what}: keys differ").into());
        }
        if positions[..k] != indices[..] {
            return Err(format!("{what}: global indices differ").into());
        }
        if bits(&values[k..]).iter().any(|&b| b != 0) || positions[k] != u64::MAX {
            return Err(format!("{what}: the outputs past k were written").into());
        }
        if !unchanged {
            return Err(format!("{what}: the input was modified").into());
        }
    }
    Ok(())
}

/// The whole array's top-k on every rank: uneven shards (rank 1 empty), k from 1 to past one
/// shard's length, both directions, ties across ranks (few distinct keys: the lower global
/// index first), floats with NaNs; every key on one rank; different k on two ranks, k past
/// the whole array and a short output on one rank refused on every rank, at once.
fn top_k_of_sharded_keys() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let lens = lengths(gpus.len(), 47);
    let total: usize = lens.iter().sum();
    let few = shards_of(&lens, |b| (b % 13) as u32);
    let spread = shards_of(&lens, |b| (b >> 32) as u32);
    for k in [1, 100, 5000, lens[0] + 3, total] {
        for largest in [true, false] {
            top_k_case(&gpus, &few, k.min(total), largest)?;
        }
    }
    top_k_case(&gpus, &spread, 777, true)?;
    top_k_case(
        &gpus,
        &shards_of(&lens, |b| (b % 100_003) as i64 - 50_000),
        2000,
        false,
    )?;
    let float = |b: u64| match b % 97 {
        0 => f32::NAN,
        1 => -f32::NAN,
        2 => f32::INFINITY,
        3 => -0.0,
        _ => ((b >> 20) % 3000) as f32 / 8.0,
    };
    top_k_case(&gpus, &shards_of(&lens, float), 3000, true)?;
    top_k_case(
        &gpus,
        &shards_of(&lens, |b| half::bf16::from_f32(float(b))),
        3000,
        false,
    )?;
    top_k_case(&gpus, &shards_of(&lens, |b| (b >> 7) as u8), 4000, true)?;
    let mut on_rank_0 = vec![0; gpus.len()];
    on_rank_0[0] = 100_000;
    top_k_case(&gpus, &shards_of(&on_rank_0, |b| b), 1000, true)?;
    // Refusals: k past the whole array, and k = 3 on rank 0 against 2 elsewhere; each rank
    // learns of them from the all-gather, at once (the communicator's timeout is 60 s).
    let started = std::time::Instant::now();
    let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let shard = DeviceVec::from_slice(gpu, &[5u32, 1, 4])?;
        let mut values = DeviceVec::<u32>::zeroed(gpu, 9)?;
        let mut positions = DeviceVec::<u64>::zeroed(gpu, 9)?;
        let mut ws = DeviceWorkspace::new();
        let world = comm.world_size();
        let past = dist::top_k::<u32>(
            comm,
            gpu,
            &shard,
            3 * world + 1,
            true,
            &mut values,
            &mut positions,
            &mut ws,
        );
        let k = if rank == 0 { 3 } else { 2 };
        let differ = dist::top_k::<u32>(comm, gpu, &shard, k, true, &mut values, &mut positions, &mut ws);
        // Rank 1's outputs hold 1 place, k is 2: its own refusal, learned by every rank.
        let mut short = DeviceVec::<u64>::zeroed(gpu, if rank == 1 { 1 } else { 2 })?;
        let refused = dist::top_k::<u32>(comm, gpu, &shard, 2, true, &mut values, &mut short, &mut ws);
        let after = dist::top_k::<u32>(comm, gpu, &shard, 2, true, &mut values, &mut positions, &mut ws);
        Ok::<_, Error>((past, differ, refused, after, positions.to_vec(gpu)?))
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        let (past, differ, refused, after, positions) = g?;
        if !matches!(past, Err(Error::InvalidArgument(_)))
            || !matches!(differ, Err(Error::InvalidArgument(_)))
            || !matches!(refused, Err(Error::InvalidArgument(_)))
        {
            return Err(format!(
                "rank {rank}: k past the array gave {past:?}, differing k {differ:?}, a short output on rank 1 {refused:?}"
            )
            .into());
        }
        // A refusal every rank agrees on leaves the communicator usable: the top 2 are the
        // 5s of ranks 0 and 1.
        if after.is_err() || positions[..2] != [0, 3] {
            return Err(format!(
                "rank {rank}: the top 2 after the refusals: {after:?}, at {:?}",
                &positions[..2]
            )
            .into());
        }
    }
    if started.elapsed() > Duration::from_secs(30) {
        return Err(format!(
            "the refusals took {:?}: a rank waited for a timeout",
            started.elapsed()
        )
        .into());
    }
    Ok(())
}

/// Sort every case of `shards` ascending and descending as pairs, ascending as keys alone.
fn sort_each<K: SortKey>(gpus: &[Gpu], lens: &[usize], make: impl Fn(u64) -> K) -> Result<(), Stop> {
    let shards = shards_of(lens, make);
    for options in [SortOptions::ascending(), SortOptions::descending()] {
        sort_case(gpus, &shards, options, true)?;
    }
    sort_case(gpus, &shards, SortOptions::ascending(), false)
}

/// Every integer key type, ascending and descending, pairs and keys alone, over uneven shards
/// (rank 1 empty) of few distinct keys (long runs of equal keys across ranks: stability); then
/// every key on one rank, a bit range, two top digits split evenly (no digit straddles the
/// boundary), and one key.
fn sorts_integer_keys_stably() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let lens = lengths(gpus.len(), 41);
    sort_each::<u8>(&gpus, &lens, |b| (b >> 13) as u8)?;
    sort_each::<u16>(&gpus, &lens, |b| (b % 5000) as u16)?;
    sort_each::<u32>(&gpus, &lens, |b| (b >> 32) as u32)?;
    sort_each::<i32>(&gpus, &lens, |b| (b % 20_001) as i32 - 10_000)?;
    sort_each::<u64>(&gpus, &lens, |b| b % 100_003)?;
    sort_each::<i64>(&gpus, &lens, |b| b as i64)?;
    // Every key on rank 0, many equal; a bit range (the low byte, descending).
    let mut on_rank_0 = vec![0; gpus.len()];
    on_rank_0[0] = 400_001;
    let shards = shards_of(&on_rank_0, |b| (b % 7) as u32);
    sort_case(&gpus, &shards, SortOptions::ascending(), true)?;
    let shards = shards_of(&lens, |b| b as u32);
    sort_case(&gpus, &shards, SortOptions::descending().bits(0..8), true)?;
    // Two top digits, the boundary between them (the splits in the digit's order are exact).
    let mut two = vec![Vec::new(); gpus.len()];
    two[0] = vec![1u32 << 24; 250_000];
    two[1] = vec![0u32; 250_000];
    sort_case(&gpus, &two, SortOptions::ascending(), true)?;
    let mut one = vec![0; gpus.len()];
    one[gpus.len() - 1] = 1;
    sort_case(
        &gpus,
        &shards_of(&one, |b| b as u32),
        SortOptions::ascending(),
        true,
    )
}

/// Every float key type as [`sorts_integer_keys_stably`], with NaNs of both signs, infinities
/// and both zeros among few distinct values.
fn sorts_float_keys_stably() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let lens = lengths(gpus.len(), 43);
    fn float(b: u64) -> f64 {
        match b % 997 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => 0.0,
            5 => -f64::NAN,
            _ => ((b >> 20) % 3000) as f64 / 8.0 - 180.0,
        }
    }
    sort_each::<f32>(&gpus, &lens, |b| float(b) as f32)?;
    sort_each::<f64>(&gpus, &lens, float)?;
    sort_each::<half::f16>(&gpus, &lens, |b| half::f16::from_f64(float(b)))?;
    sort_each::<half::bf16>(&gpus, &lens, |b| half::bf16::from_f64(float(b)))
}

/// One communicator sorting three times, small, large, small again (its kept scratch memory
/// grown, then reused), pairs and keys alone: each result against the reference.
fn a_communicator_sorts_again_with_its_kept_memory() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let world = gpus.len();
    let rounds: Vec<(Vec<Vec<u32>>, bool)> =
        [(3_000usize, 11u64, true), (200_000, 12, false), (5_000, 13, true)]
            .into_iter()
            .map(|(n, seed, pairs)| {
                (
                    shards_of(&vec![n; world], move |b| ((b ^ seed) >> 40) as u32),
                    pairs,
                )
            })
            .collect();
    let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let mut ws = DeviceWorkspace::new();
        let mut outs = Vec::new();
        for (shards, pairs) in &rounds {
            let all_len: usize = shards.iter().map(Vec::len).sum();
            let keys = DeviceVec::from_slice(gpu, &shards[rank])?;
            let values = DeviceVec::from_slice(gpu, &vec![rank as u32; shards[rank].len()])?;
            let mut out = DeviceVec::<u32>::zeroed(gpu, all_len.div_ceil(world))?;
            let mut out_values = DeviceVec::<u32>::zeroed(gpu, all_len.div_ceil(world))?;
            let options = SortOptions::ascending();
            let range = if *pairs {
                dist::sort_pairs::<u32, u32>(
                    comm,
                    gpu,
                    &keys,
                    &values,
                    &mut out,
                    &mut out_values,
                    options,
                    &mut ws,
                )?
            } else {
                dist::sort_keys::<u32>(comm, gpu, &keys, &mut out, options, &mut ws)?
            };
            outs.push((range.clone(), out.to_vec(gpu)?[..range.len()].to_vec()));
        }
        comm.release_memory();
        Ok::<_, Error>(outs)
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        for (i, (range, keys)) in g?.into_iter().enumerate() {
            let mut all = rounds[i].0.concat();
            all.sort_unstable();
            if keys != all[range.clone()] {
                return Err(format!(
                    "sort {i} on rank {rank}: the part {range:?} differs from the reference"
                )
                .into());
            }
        }
    }
    Ok(())
}

fn histograms_even_and_range() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let lens = lengths(gpus.len(), 23);
    // u8 samples, 7 even bins over [10, 250) (some samples outside); f32 samples with NaN and
    // infinities, range bins between uneven levels, u64 counters.
    let bytes = shards_of(&lens, |b| b as u8);
    let floats = shards_of(&lens, |b| match b % 1000 {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        _ => ((b >> 16) % 2000) as f32 / 100.0 - 10.0,
    });
    let levels = [-5.0f32, -1.0, 0.0, 0.5, 3.0, 9.5];
    let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let samples = gpu.upload(&bytes[rank])?;
        // One counter more than the bins: the last must be left alone.
        let mut even = DeviceVec::from_slice(gpu, &[u32::MAX; 8])?;
        dist::histogram_even::<u8, u32>(comm, gpu, &samples, 7, 10, 250, &mut even)?;
        let samples = DeviceVec::from_slice(gpu, &floats[rank])?;
        let mut range = DeviceVec::<u64>::zeroed(gpu, levels.len() - 1)?;
        let mut ws = DeviceWorkspace::new();
        dist::histogram_range::<f32, u64>(comm, gpu, &samples, &levels, &mut range, &mut ws)?;
        Ok::<_, Error>((even.to_vec(gpu)?, range.to_vec(gpu)?))
    })?;
    let mut expected_even: Vec<u32> =
        gpu_primitives::reference::histogram_even::<u8>(&bytes.concat(), 7, 10, 250)
            .into_iter()
            .map(|c| c as u32)
            .collect();
    expected_even.push(u32::MAX);
    let expected_range = gpu_primitives::reference::histogram_range::<f32>(&floats.concat(), &levels);
    for (rank, g) in got.into_iter().enumerate() {
        let (even, range) = g?;
        if even != expected_even || range != expected_range {
            return Err(format!(
                "rank {rank} over {lens:?}: even {even:?} (expected {expected_even:?}), range {range:?} (expected {expected_range:?})"
            )
            .into());
        }
    }
    Ok(())
}

fn all_reduce_and_all_gather() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let n = 1 << 20;
    let ranks = gpus.len();
    let data = |rank: usize| -> Vec<u32> {
        (0..n)
            .map(|i| (i as u32).wrapping_mul(rank as u32 + 1) % 1000)
            .collect()
    };
    // Each rank's data made once (made again for every element, the references took hours).
    let shards: Vec<Vec<u32>> = (0..ranks).map(data).collect();
    let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let mut sum = DeviceVec::from_slice(gpu, &shards[rank])?;
        dist::all_reduce(comm, gpu, &mut sum, ReduceOp::Sum)?;
        let mut max = DeviceVec::from_slice(gpu, &shards[rank])?;
        dist::all_reduce(comm, gpu, &mut max, ReduceOp::Max)?;
        let mine = DeviceVec::from_slice(gpu, &shards[rank][..1000])?;
        let mut all = DeviceVec::<u32>::zeroed(gpu, 1000 * ranks)?;
        dist::all_gather(comm, gpu, &mine, &mut all)?;
        Ok::<_, Error>((sum.to_vec(gpu)?, max.to_vec(gpu)?, all.to_vec(gpu)?))
    })?;
    let expected_sum: Vec<u32> = (0..n).map(|i| shards.iter().map(|s| s[i]).sum()).collect();
    let expected_max: Vec<u32> = (0..n)
        .map(|i| shards.iter().map(|s| s[i]).max().unwrap())
        .collect();
    let expected_all: Vec<u32> = shards.iter().flat_map(|s| s[..1000].to_vec()).collect();
    for (rank, g) in got.into_iter().enumerate() {
        let (sum, max, all) = g?;
        if sum != expected_sum || max != expected_max || all != expected_all {
            return Err(format!("rank {rank}: all_reduce / all_gather differ from the reference").into());
        }
    }
    Ok(())
}

fn a_rank_that_never_joins_makes_every_rank_fail() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let timeout = Duration::from_secs(3);
    let started = std::time::Instant::now();
    let got = on_every_rank(&gpus, timeout, |rank, comm, gpu| {
        let shard = DeviceVec::from_slice(gpu, &[1u32, 2, 3])?;
        let mut ws = DeviceWorkspace::new();
        if rank != 0 {
            // The others come only after rank 0 has given up.
            std::thread::sleep(timeout + Duration::from_secs(1));
        }
        let first = dist::reduce::<u32, Sum>(comm, gpu, &shard, &mut ws);
        let again = dist::reduce::<u32, Sum>(comm, gpu, &shard, &mut ws);
        Ok::<_, Error>((first, again))
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        let (first, again) = g?;
        if !matches!(first, Err(Error::Timeout { .. })) {
            return Err(format!("rank {rank}: the first reduce gave {first:?}, not a timeout").into());
        }
        if !matches!(again, Err(Error::Aborted)) {
            return Err(format!("rank {rank}: the call after the timeout gave {again:?}").into());
        }
    }
    let took = started.elapsed();
    if took > Duration::from_secs(30) {
        return Err(format!("the ranks took {took:?} to give up").into());
    }
    Ok(())
}

/// A rank whose argument is refused (a short scan output) returns that error and aborts its
/// communicator: its next call returns `Aborted` rather than meeting the other rank's pending
/// collective, and the other rank times out, then returns `Aborted`.
fn an_argument_refused_on_one_rank_fails_every_rank() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let timeout = Duration::from_secs(3);
    let got = on_every_rank(&gpus, timeout, |rank, comm, gpu| {
        let shard = DeviceVec::from_slice(gpu, &[1u32, 2, 3])?;
        let mut ws = DeviceWorkspace::new();
        let mut output = DeviceVec::<u32>::zeroed(gpu, if rank == 1 { 2 } else { 3 })?;
        let first = dist::inclusive_scan::<u32, Sum>(comm, gpu, &shard, &mut output, &mut ws);
        let again = dist::reduce::<u32, Sum>(comm, gpu, &shard, &mut ws);
        Ok::<_, Error>((first, again))
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        let (first, again) = g?;
        let first_ok = if rank == 1 {
            matches!(
                first,
                Err(Error::Gpu(gpu_primitives::Error::LengthMismatch { .. }))
            )
        } else {
            matches!(first, Err(Error::Timeout { .. }))
        };
        if !first_ok || !matches!(again, Err(Error::Aborted)) {
            return Err(
                format!("rank {rank}: the scan gave {first:?}, the reduce after it {again:?}").into(),
            );
        }
    }
    Ok(())
}

/// A sort whose output is too short on rank 1 (its part is 2 of the 4 keys; it gives room for
/// 1): every rank returns an error at once, from the first all-gather, and the communicator
/// sorts again after it.
fn a_sort_refused_on_one_rank_fails_every_rank_at_once() -> Result<(), Stop> {
    let gpus = gpus(2)?;
    let started = std::time::Instant::now();
    let got = on_every_rank(&gpus, Duration::from_secs(60), |rank, comm, gpu| {
        let world = comm.world_size();
        let shard = DeviceVec::from_slice(gpu, &[4u32 - rank as u32, 9])?;
        let mut ws = DeviceWorkspace::new();
        let mut short = DeviceVec::<u32>::zeroed(gpu, if rank == 1 { 1 } else { 2 })?;
        let refused =
            dist::sort_keys::<u32>(comm, gpu, &shard, &mut short, SortOptions::ascending(), &mut ws);
        let mut output = DeviceVec::<u32>::zeroed(gpu, 2 * world)?;
        let again = dist::sort_keys::<u32>(comm, gpu, &shard, &mut output, SortOptions::ascending(), &mut ws);
        Ok::<_, Error>((refused, again))
    })?;
    for (rank, g) in got.into_iter().enumerate() {
        let (refused, again) = g?;
        if !matches!(refused, Err(Error::InvalidArgument(_))) || again.is_err() {
            return Err(format!("rank {rank}: the refused sort gave {refused:?}, the next {again:?}").into());
        }
    }
    if started.elapsed() > Duration::from_secs(30) {
        return Err(format!(
            "the refusal took {:?}: a rank waited for a timeout",
            started.elapsed()
        )
        .into());
    }
    Ok(())
}

fn a_world_of_one_is_the_single_gpu_library() -> Result<(), Stop> {
    let gpus = gpus(1)?;
    let gpu = &gpus[0];
    let mut comm = Communicator::single(gpu);
    let x: Vec<i64> = (0..100_000).map(|i| (i * 37) % 1001 - 500).collect();
    let shard = DeviceVec::from_slice(gpu, &x)?;
    let mut ws = DeviceWorkspace::new();
    let sum = dist::reduce::<i64, Sum>(&mut comm, gpu, &shard, &mut ws)?;
    let min = dist::argmin::<i64>(&mut comm, gpu, &shard, &mut ws)?;
    let mut copy = DeviceVec::<i64>::zeroed(gpu, x.len())?;
    dist::all_gather(&mut comm, gpu, &shard, &mut copy)?;
    let mut same = DeviceVec::from_slice(gpu, &x)?;
    dist::all_reduce(&mut comm, gpu, &mut same, ReduceOp::Sum)?;
    if sum != x.iter().sum::<i64>()
        || min != gpu_primitives::reference::argmin(&x)
        || copy.to_vec(gpu)? != x
        || same.to_vec(gpu)? != x
    {
        return Err("a world of one differs from the single-GPU results".into());
    }
    // A stream of another GPU is refused before anything runs.
    if let Ok(others) = gpus_if_two() {
        let err = dist::reduce::<i64, Sum>(
            &mut comm,
            &others[1],
            &DeviceVec::from_slice(&others[1], &x)?,
            &mut ws,
        );
        if !matches!(err, Err(Error::InvalidArgument(_))) {
            return Err(format!("another GPU's stream gave {err:?}").into());
        }
        // Memory of another GPU on this rank's stream is refused before NCCL sees its address.
        let mut elsewhere = DeviceVec::from_slice(&others[1], &x)?;
        let err = dist::all_reduce(&mut comm, gpu, &mut elsewhere, ReduceOp::Sum);
        if !matches!(err, Err(Error::Gpu(gpu_primitives::Error::WrongContext(_)))) {
            return Err(format!("another GPU's memory gave {err:?}").into());
        }
    }
    Ok(())
}

fn gpus_if_two() -> Result<Vec<Gpu>, Stop> {
    gpus(2)
}

/// The variable that makes this binary one rank of a test started by [`process_per_rank`].
const CHILD: &str = "GPU_PRIMITIVES_DISTRIBUTED_TEST_CHILD";

/// One rank of a process-per-GPU test: its job by [`CHILD`]'s value, its place from torchrun's
/// variables. Prints one line, `result ...` or `error ...`.
fn child(job: &str) -> ! {
    let world = World::from_vars(|name| std::env::var(name).ok()).expect("torchrun's variables");
    let run = || -> Result<String, Error> {
        let gpu = gpu_primitives::open_gpu(world.local_rank as u32)?;
        // Short where a rank dies (the others' wait for it), long enough for compute-sanitizer
        // otherwise.
        let timeout = Duration::from_secs(if job == "die" { 5 } else { 120 });
        let mut comm = Communicator::from_world(&gpu, &world, timeout)?;
        if job == "die" && world.rank == 1 {
            // A rank that stops after joining: the others' next collective must not hang.
            std::process::exit(3);
        }
        let n = 1000 * (world.rank + 1);
        let x: Vec<u64> = (0..n as u64).map(|i| i + 1_000_000 * world.rank as u64).collect();
        let shard = DeviceVec::from_slice(&gpu, &x)?;
        let mut ws = DeviceWorkspace::new();
        let sum = dist::reduce::<u64, Sum>(&mut comm, &gpu, &shard, &mut ws)?;
        let max = dist::argmax::<u64>(&mut comm, &gpu, &shard, &mut ws)?;
        // The whole array sorted descending: this rank's part's range, first and last keys.
        let mut sorted = DeviceVec::<u64>::zeroed(&gpu, n * world.world_size)?;
        let options = SortOptions::descending();
        let part = dist::sort_keys::<u64>(&mut comm, &gpu, &shard, &mut sorted, options, &mut ws)?;
        let keys = sorted.to_vec(&gpu)?;
        let ends = (keys[0], keys[part.len() - 1]);
        Ok(format!("{sum} {max:?} {part:?} {ends:?}"))
    };
    match run() {
        Ok(line) => println!("result {line}"),
        Err(e) => println!("error {e}"),
    }
    std::process::exit(0)
}

/// Start this binary once a rank, as torchrun would, with `job`; each rank's exit code and line.
fn process_per_rank(ranks: usize, job: &str) -> Result<Vec<(Option<i32>, String)>, Stop> {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port();
    let exe = std::env::current_exe()?;
    // Every rank started before any is waited for (they meet in the rendezvous).
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            Command::new(&exe)
                .env(CHILD, job)
                .env("RANK", rank.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("WORLD_SIZE", ranks.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", "1")
                .env("GPU_PRIMITIVES_RENDEZVOUS_PORT", port.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
        })
        .collect::<std::io::Result<_>>()?;
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output()?;
            Ok((
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).trim().to_owned()
                    + &String::from_utf8_lossy(&out.stderr),
            ))
        })
        .collect()
}

fn one_process_a_rank_as_torchrun_starts_them() -> Result<(), Stop> {
    let ranks = gpus(2)?.len();
    let outs = process_per_rank(ranks, "reduce")?;
    let sizes: Vec<u64> = (0..ranks as u64).map(|r| 1000 * (r + 1)).collect();
    let sum: u64 = (0..ranks as u64)
        .map(|r| (0..sizes[r as usize]).map(|i| i + 1_000_000 * r).sum::<u64>())
        .sum();
    let total: u64 = sizes.iter().sum();
    let mut all: Vec<u64> = (0..ranks as u64)
        .flat_map(|r| (0..sizes[r as usize]).map(move |i| i + 1_000_000 * r))
        .collect();
    all.sort_unstable_by(|a, b| b.cmp(a));
    for (rank, (code, line)) in outs.iter().enumerate() {
        let part = rank * all.len() / ranks..(rank + 1) * all.len() / ranks;
        let expected = format!(
            "result {sum} Some(({}, {})) {part:?} {:?}",
            1_000_000 * (ranks as u64 - 1) + sizes[ranks - 1] - 1,
            total - 1,
            (all[part.start], all[part.end - 1])
        );
        if *code != Some(0) || !line.starts_with(&expected) {
            return Err(format!("rank {rank}: exit {code:?}, {line:?}; expected {expected:?}").into());
        }
    }
    Ok(())
}

fn a_rank_process_that_dies_makes_the_others_fail() -> Result<(), Stop> {
    let ranks = gpus(2)?.len();
    let started = std::time::Instant::now();
    let outs = process_per_rank(ranks, "die")?;
    for (rank, (code, line)) in outs.iter().enumerate() {
        let ok = if rank == 1 {
            *code == Some(3)
        } else {
            *code == Some(0) && line.starts_with("error ")
        };
        if !ok {
            return Err(format!("rank {rank}: exit {code:?}, {line:?}").into());
        }
    }
    let took = started.elapsed();
    if took > Duration::from_secs(60) {
        return Err(format!("the ranks took {took:?}").into());
    }
    Ok(())
}

const TESTS: &[(&str, Test)] = &[
    (
        "world_of_one::is_the_single_gpu_library",
        a_world_of_one_is_the_single_gpu_library,
    ),
    (
        "one_process::reduce_every_type_and_operator",
        reduce_every_type_and_operator,
    ),
    (
        "one_process::argmin_and_argmax_give_global_indices",
        argmin_and_argmax_give_global_indices,
    ),
    (
        "one_process::scans_every_type_and_operator",
        scans_every_type_and_operator,
    ),
    (
        "one_process::compactions_with_global_positions",
        compactions_with_global_positions,
    ),
    (
        "one_process::rebalance_gives_equal_parts_in_order",
        rebalance_gives_equal_parts_in_order,
    ),
    ("one_process::top_k_of_sharded_keys", top_k_of_sharded_keys),
    (
        "one_process::a_sort_refused_on_one_rank_fails_every_rank_at_once",
        a_sort_refused_on_one_rank_fails_every_rank_at_once,
    ),
    (
        "one_process::histograms_even_and_range",
        histograms_even_and_range,
    ),
    (
        "one_process::sorts_integer_keys_stably",
        sorts_integer_keys_stably,
    ),
    ("one_process::sorts_float_keys_stably", sorts_float_keys_stably),
    (
        "one_process::a_communicator_sorts_again_with_its_kept_memory",
        a_communicator_sorts_again_with_its_kept_memory,
    ),
    (
        "one_process::all_reduce_and_all_gather",
        all_reduce_and_all_gather,
    ),
    (
        "one_process::a_rank_that_never_joins_makes_every_rank_fail",
        a_rank_that_never_joins_makes_every_rank_fail,
    ),
    (
        "one_process::an_argument_refused_on_one_rank_fails_every_rank",
        an_argument_refused_on_one_rank_fails_every_rank,
    ),
    (
        "process_per_gpu::as_torchrun_starts_them",
        one_process_a_rank_as_torchrun_starts_them,
    ),
    (
        "process_per_gpu::a_rank_that_dies_makes_the_others_fail",
        a_rank_process_that_dies_makes_the_others_fail,
    ),
];

/// The variable that makes this binary run one test alone (the parent's watchdog kills it where
/// it hangs: a multi-GPU bug must fail the suite, not hang it).
const ONE: &str = "GPU_PRIMITIVES_DISTRIBUTED_TEST_ONE";

/// How long one test may run in its own process.
const WATCHDOG: Duration = Duration::from_secs(180);

/// Run test `name` in a child process of this binary, killed past [`WATCHDOG`]. The child's
/// exit code: 0 passed, 2 ignored (its reason on stdout), anything else failed.
fn in_child(name: &str) -> Result<Completion, Failed> {
    let mut child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .env(ONE, name)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            return match status.code() {
                Some(0) => Ok(Completion::Completed),
                Some(2) => Ok(Completion::ignored_with(text)),
                code => {
                    Err(format!("exit {code:?}: {text}\n{}", String::from_utf8_lossy(&out.stderr)).into())
                }
            };
        }
        if started.elapsed() > WATCHDOG {
            let _ = child.kill();
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            return Err(format!(
                "hung: killed after {WATCHDOG:?}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn main() {
    if let Ok(job) = std::env::var(CHILD) {
        child(&job);
    }
    if let Ok(name) = std::env::var(ONE) {
        let test = TESTS.iter().find(|(n, _)| *n == name).expect("a test of TESTS").1;
        match test() {
            Ok(()) => std::process::exit(0),
            Err(Stop::Skip(why)) => {
                println!("{why}");
                std::process::exit(2)
            }
            Err(Stop::Failed(f)) => {
                println!("{}", f.message().unwrap_or("failed"));
                std::process::exit(1)
            }
        }
    }
    let mut args = Arguments::from_args();
    // The tests take every GPU: one at a time, each in a process of its own.
    args.test_threads = Some(1);
    let trials = TESTS
        .iter()
        .map(|&(name, _)| Trial::ignorable_test(name, move || in_child(name)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
