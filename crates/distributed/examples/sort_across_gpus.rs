//! Sort 2^32 random `u32` keys (16 GiB) across every visible GPU of this machine, one thread a
//! GPU, and check the result: each rank's part is in order, the parts follow each other in
//! order, each holds its equal share, and the sorted keys are the same multiset as the input
//! (an order-independent fingerprint of every key, before and after).
//!
//! Run: `NCCL_NVLS_ENABLE=0 cargo run --release -p gpu-primitives-distributed --example
//! sort_across_gpus [-- LOG2 [FEWER]]` (2^LOG2 - FEWER keys in all; 2^32 by default). One GPU
//! sorts at most 2^32 - 1 keys in one call, so 2^34 keys on 4 GPUs (parts of 2^32) are run as
//! `34 4`. Each GPU needs about 5 times
//! its share of the keys in memory (its shard, the sorted shard, its part and the sorts'
//! alternate buffers): 2^32 keys take 40 GiB a GPU on two, 20 GiB on four.

use gpu_primitives::Gpu;
use gpu_primitives::device::{DeviceVec, DeviceWorkspace, SortOptions};
use gpu_primitives_distributed::{self as dist, Communicator};
use std::ops::Range;
use std::time::{Duration, Instant};

/// SplitMix64's mixer: the keys' generator and fingerprint.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The multiset's fingerprint: the wrapping sum of every key's mix.
fn fingerprint(keys: &[u32]) -> u64 {
    keys.iter()
        .fold(0u64, |a, &k| a.wrapping_add(mix(u64::from(k) + 1)))
}

/// What one rank saw.
struct Rank {
    part: Range<usize>,
    input: u64,
    output: u64,
    ends: Option<(u32, u32)>,
    in_order: bool,
    seconds: f64,
}

fn rank(
    comm: &mut Communicator,
    gpu: &Gpu,
    shard_len: usize,
    total: usize,
    seed: u64,
) -> Result<Rank, dist::Error> {
    let world = comm.world_size();
    let keys: Vec<u32> = (0..shard_len as u64)
        .map(|i| (mix(seed ^ (i << 8)) >> 32) as u32)
        .collect();
    let input = fingerprint(&keys);
    let shard = DeviceVec::from_slice(gpu, &keys)?;
    drop(keys);
    // This rank's part of the sorted keys is at most ceil(total / world).
    let mut sorted = DeviceVec::<u32>::zeroed(gpu, total.div_ceil(world))?;
    let mut ws = DeviceWorkspace::new();
    let start = Instant::now();
    let part = dist::sort_keys::<u32>(comm, gpu, &shard, &mut sorted, SortOptions::ascending(), &mut ws)?;
    let seconds = start.elapsed().as_secs_f64();
    drop((shard, ws));
    let out = sorted.to_vec(gpu)?;
    let out = &out[..part.len()];
    Ok(Rank {
        in_order: out.windows(2).all(|w| w[0] <= w[1]),
        ends: out.first().zip(out.last()).map(|(&a, &b)| (a, b)),
        output: fingerprint(out),
        input,
        part,
        seconds,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let log2: u32 = match std::env::args().nth(1) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("LOG2: a number of bits, not {a:?}"))?,
        None => 32,
    };
    if !(1..=36).contains(&log2) {
        return Err(format!("LOG2 {log2}: from 1 to 36").into());
    }
    let fewer: usize = match std::env::args().nth(2) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("FEWER: a count of keys, not {a:?}"))?,
        None => 0,
    };
    let total = (1usize << log2)
        .checked_sub(fewer)
        .ok_or_else(|| format!("FEWER {fewer}: more than 2^{log2}"))?;
    let gpus: Vec<Gpu> = (0..16).map_while(|o| gpu_primitives::open_gpu(o).ok()).collect();
    if gpus.is_empty() {
        gpu_primitives::open_gpu(0)?;
    }
    let world = gpus.len();
    let refs: Vec<&Gpu> = gpus.iter().collect();
    let comms = Communicator::local(&refs, Duration::from_secs(600))?;
    println!(
        "sorting 2^{log2} - {fewer} random u32 keys across {world} x {}",
        gpus[0].info().name
    );
    let results: Vec<Result<Rank, dist::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .zip(&gpus)
            .enumerate()
            .map(|(r, (mut comm, gpu))| {
                let len = total / world + usize::from(r < total % world);
                s.spawn(move || rank(&mut comm, gpu, len, total, r as u64 + 1))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank panicked"))
            .collect()
    });
    let ranks: Vec<Rank> = results.into_iter().collect::<Result<_, _>>()?;
    let mut problems = Vec::new();
    for (r, k) in ranks.iter().enumerate() {
        let expected = r * total / world..(r + 1) * total / world;
        if k.part != expected {
            problems.push(format!("rank {r}: part {:?}, expected {expected:?}", k.part));
        }
        if !k.in_order {
            problems.push(format!("rank {r}: its part is not in order"));
        }
        println!(
            "rank {r}: keys {:?} ({}), first and last {:?}, {:.1} ms",
            k.part,
            k.part.len(),
            k.ends,
            k.seconds * 1e3
        );
    }
    let ends: Vec<(u32, u32)> = ranks.iter().filter_map(|k| k.ends).collect();
    if ends.windows(2).any(|w| w[0].1 > w[1].0) {
        problems.push("the parts are not in order across ranks".into());
    }
    let sum = |f: fn(&Rank) -> u64| ranks.iter().fold(0u64, |a, k| a.wrapping_add(f(k)));
    if sum(|k| k.input) != sum(|k| k.output) {
        problems.push("the sorted keys are not the input's (fingerprints differ)".into());
    }
    let slowest = ranks.iter().map(|k| k.seconds).fold(0.0, f64::max);
    if !problems.is_empty() {
        return Err(problems.join("; ").into());
    }
    println!(
        "checked: {total} keys in order over {world} GPUs, the input's multiset; {:.1} ms ({:.2} G keys/s, the slowest rank's call)",
        slowest * 1e3,
        total as f64 / slowest / 1e9
    );
    Ok(())
}
