//! The temporary-storage queries (`device::TempStorage`, CUB's `temp_storage_bytes`): a
//! workspace sized with a call's query beforehand (`DeviceWorkspace::reserve_for`) holds exactly
//! `TempStorage::bytes`, and the call then allocates nothing (the runtime's count of
//! allocations, `fault::calls`) and is right. Every algorithm of the fault-injection table at
//! several sizes, and the norms' backward with their parameters' gradients, whose sums take the
//! workspace in three ways (in the dx kernel, one block or a cluster a row, or apart). And the
//! workspace's growth once a call: every call grows it before its first launch, never in the
//! middle of its work (where growth would free memory an earlier launch of the call was given).

use crate::faults::{ALGORITHMS, Call, Mode, Outcome, Workspace, text};
use crate::support::{GpuTest, check_eq, ok, rng};
use gpu_primitives::Gpu;
use gpu_primitives::device::{DeviceVec, DeviceWorkspace, TempStorage};
use gpu_primitives::rows::{self, NormGrads};
use gpu_primitives::runtime::fault::{self, Fault};
use half::bf16;
use libtest_mimic::Failed;
use rand::Rng;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("temp_storage::reserved_calls_allocate_nothing", every_algorithm),
    (
        "temp_storage::norm_backward_reserved_allocates_nothing",
        norm_backward,
    ),
    (
        "temp_storage::every_call_grows_the_workspace_before_its_first_launch",
        grows_before_the_first_launch,
    ),
];

/// Input lengths: one tile or less, many tiles, and enough for every multiprocessor's share
/// (the sort's onesweep passes, the reduce's full first pass).
const SIZES: [usize; 3] = [1_000, 100_000, 1 << 21];

/// Each algorithm of [`ALGORITHMS`] at each of [`SIZES`] with two seeds, each call on a new
/// workspace reserved with its query ([`Mode::Reserved`]).
fn every_algorithm(gpu: &Gpu) -> Result<(), Failed> {
    let mut problems = Vec::new();
    let mut calls = 0;
    for (i, &(name, check)) in ALGORITHMS.iter().enumerate() {
        for (j, &n) in SIZES.iter().enumerate() {
            for seed in 0..2u64 {
                let mut workspace = DeviceWorkspace::new();
                let seed = 0x7e3b + (i * 16 + j * 2) as u64 + seed;
                let mut call = Call::new(
                    gpu.into(),
                    Workspace::Own(&mut workspace),
                    n,
                    seed,
                    Mode::Reserved,
                );
                calls += 1;
                if let Err(e) = check(&mut call) {
                    problems.push(format!("{name} (n = {n}): {}", text(&e)));
                }
            }
        }
    }
    println!(
        "{calls} calls of {} algorithms on reserved workspaces, {} problems",
        ALGORITHMS.len(),
        problems.len()
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Each algorithm of [`ALGORITHMS`] at each of [`SIZES`], twice on new workspaces with the
/// same seed: once whole, once failing at its first kernel launch. A call grows its workspace
/// once, before anything of it is queued, so the workspace the failed call leaves holds as many
/// bytes as the whole call's; a call that grew it in the middle of its work (after its first
/// launch: a second scratch region, the sort's counts after its scratch, cross-entropy's reduce
/// after the losses) would leave less.
fn grows_before_the_first_launch(gpu: &Gpu) -> Result<(), Failed> {
    let mut problems = Vec::new();
    let mut cut = 0;
    for (i, &(name, check)) in ALGORITHMS.iter().enumerate() {
        for (j, &n) in SIZES.iter().enumerate() {
            let seed = 0x9a0e + (i * 16 + j) as u64;
            let run = |mode: Mode| -> Result<(usize, Outcome, String), Failed> {
                let mut workspace = DeviceWorkspace::new();
                let mut call = Call::new(gpu.into(), Workspace::Own(&mut workspace), n, seed, mode);
                check(&mut call)?;
                let (outcome, what) = (call.outcome, call.what.clone());
                drop(call);
                Ok((workspace.bytes(), outcome, what))
            };
            let first_launch = Mode::Fail {
                kind: Fault::Launch,
                step: 1,
                must_fire: false,
            };
            match (run(Mode::Check), run(first_launch)) {
                (Ok((whole, ..)), Ok((failed, outcome, what))) => {
                    cut += usize::from(outcome == Outcome::Injected);
                    if failed != whole {
                        problems.push(format!(
                            "{what} (n = {n}): {failed} bytes of workspace when its first launch \
                             failed, {whole} after the whole call"
                        ));
                    }
                }
                (Err(e), _) | (_, Err(e)) => problems.push(format!("{name} (n = {n}): {}", text(&e))),
            }
        }
    }
    println!(
        "{} algorithms at {} sizes, {cut} calls cut at their first launch, {} problems",
        ALGORITHMS.len(),
        SIZES.len(),
        problems.len()
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// LayerNorm's and RMSNorm's backward with `dweight` (and LayerNorm's `dbias`), f32 and bf16, at
/// shapes whose parameter sums take each path: in the dx kernel's blocks (1024 columns), in
/// clusters where the GPU has them (32768 `f32` columns), apart (200,000 columns), and short
/// rows of many per block (64 columns). On a reserved workspace the call allocates nothing and
/// writes what the same call on a new workspace writes, bit for bit (the sums' order depends only
/// on the shape and the GPU).
fn norm_backward(gpu: &Gpu) -> Result<(), Failed> {
    for (rows, cols) in [(512, 1024), (16, 32_768), (4, 200_000), (3000, 64)] {
        norm_backward_shape::<f32>(gpu, rows, cols, true, |v| v)?;
        norm_backward_shape::<f32>(gpu, rows, cols, false, |v| v)?;
        norm_backward_shape::<bf16>(gpu, rows, cols, true, bf16::from_f32)?;
    }
    Ok(())
}

/// What a norm's backward wrote (dx, dweight, dbias as raw bits) and the allocations it made.
type Written<T> = ([Vec<T>; 3], u64);

/// One shape of [`norm_backward`], the values made with `from`.
fn norm_backward_shape<T: rows::RowElement>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    layer_norm: bool,
    from: fn(f32) -> T,
) -> Result<(), Failed> {
    let what = format!(
        "{} backward {} {rows}x{cols}",
        if layer_norm { "layer_norm" } else { "rms_norm" },
        T::NAME
    );
    let mut r = rng((rows * 31 + cols) as u64);
    let mut values = |n: usize| -> Vec<T> { (0..n).map(|_| from(r.random_range(-1.0f32..1.0))).collect() };
    let (x, dy) = (values(rows * cols), values(rows * cols));
    let stats: Vec<f32> = (0..rows).map(|i| 0.5 + (i % 7) as f32 / 8.0).collect();
    let (d_x, d_dy) = (
        ok(DeviceVec::from_slice(gpu, &x))?,
        ok(DeviceVec::from_slice(gpu, &dy))?,
    );
    let (d_mean, d_rstd) = (
        ok(DeviceVec::from_slice(gpu, &stats))?,
        ok(DeviceVec::from_slice(gpu, &stats))?,
    );
    let need = ok(if layer_norm {
        TempStorage::layer_norm_backward::<T>(gpu, rows, cols)
    } else {
        TempStorage::rms_norm_backward::<T>(gpu, rows, cols)
    })?;
    let run = |workspace: &mut DeviceWorkspace| -> Result<Written<T::Raw>, Failed> {
        let mut dx = ok(DeviceVec::<T>::zeroed(gpu, rows * cols))?;
        let mut dweight = ok(DeviceVec::<T>::zeroed(gpu, cols))?;
        let mut dbias = ok(DeviceVec::<T>::zeroed(gpu, cols))?;
        ok(gpu.synchronize())?;
        fault::reset();
        let grads = NormGrads::new(&mut dx).dweight(&mut dweight);
        let done = if layer_norm {
            let grads = grads.dbias(&mut dbias);
            rows::layer_norm_backward(gpu, &d_x, &d_dy, cols, None, &d_mean, &d_rstd, grads, workspace)
        } else {
            rows::rms_norm_backward(gpu, &d_x, &d_dy, cols, None, &d_rstd, grads, workspace)
        };
        let allocations = fault::calls(Fault::Alloc);
        fault::reset();
        ok(done)?;
        let written = [
            ok(dx.to_vec(gpu))?,
            ok(dweight.to_vec(gpu))?,
            ok(dbias.to_vec(gpu))?,
        ];
        Ok((written, allocations))
    };
    let expected = run(&mut DeviceWorkspace::new())?;
    let mut reserved = DeviceWorkspace::new();
    ok(reserved.reserve_for(gpu, &need))?;
    check_eq(&format!("{what}: bytes reserved"), reserved.bytes(), need.bytes())?;
    let found = run(&mut reserved)?;
    check_eq(
        &format!("{what}: allocations after reserving {need:?}"),
        found.1,
        0,
    )?;
    for (name, (found, expected)) in ["dx", "dweight", "dbias"]
        .iter()
        .zip(found.0.iter().zip(&expected.0))
    {
        check_eq(&format!("{what}: {name}"), found, expected)?;
    }
    Ok(())
}
