//! The lecture's scans: each algorithm, inclusive and exclusive, over block sizes and lengths at
//! section boundaries, single-level and hierarchical, against the CPU scan.

use crate::support::{GpuTest, check_eq, check_slices, grid_values, ok};
use gpu_primitives::device::ScanKind;
use gpu_primitives::{Error, Gpu, reference};
use gpu_primitives_lessons::lecture_scan::{self, SectionScan};
use libtest_mimic::Failed;

pub const TESTS: &[(&str, GpuTest)] = &[
    ("scans::algorithms_x_kinds_x_block_sizes_x_lengths", sweep),
    ("scans::hierarchical_three_levels_large_n", large),
    ("scans::bad_input", bad_input),
];

fn expected(x: &[f32], kind: ScanKind) -> Vec<f32> {
    let r = match kind {
        ScanKind::Inclusive => reference::inclusive_scan(x),
        ScanKind::Exclusive => reference::exclusive_scan(x),
    };
    r.into_iter().map(|v| v as f32).collect()
}

fn sweep(gpu: &Gpu) -> Result<(), Failed> {
    for algorithm in SectionScan::ALL {
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            for block in [1u32, 7, 32, 65, 128, 256, 1024] {
                if algorithm == SectionScan::BrentKung && !block.is_power_of_two() {
                    continue;
                }
                let s = algorithm.section_len(block);
                let lengths: &[usize] = if s == 1 {
                    &[1]
                } else {
                    &[1, s - 1, s, s + 1, 3 * s + 5, 20_011]
                };
                for &n in lengths {
                    let x = grid_values(n, (n * 7 + s) as u64);
                    let found = ok(lecture_scan::hierarchical_scan(gpu, &x, algorithm, kind, block))?;
                    check_slices(
                        &format!("{algorithm:?} {kind:?} block={block} n={n}"),
                        &found,
                        &expected(&x, kind),
                        |_| false,
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn large(gpu: &Gpu) -> Result<(), Failed> {
    let n = (1 << 20) + 3;
    let x = grid_values(n, 99);
    for algorithm in SectionScan::ALL {
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            // 32-thread blocks: 2^20 / 32 sections -> 1024 -> 32 -> 1: three levels.
            let found = ok(lecture_scan::hierarchical_scan(gpu, &x, algorithm, kind, 32))?;
            check_slices(
                &format!("{algorithm:?} {kind:?} n={n}"),
                &found,
                &expected(&x, kind),
                |_| false,
            )?;
        }
    }
    Ok(())
}

fn bad_input(gpu: &Gpu) -> Result<(), Failed> {
    match lecture_scan::hierarchical_scan(gpu, &[1.0; 10], SectionScan::BrentKung, ScanKind::Inclusive, 96) {
        Err(Error::InvalidLaunch(msg)) if msg.contains("power-of-two") => {}
        other => return Err(format!("Brent-Kung with 96 threads gave {other:?}").into()),
    }
    match lecture_scan::hierarchical_scan(
        gpu,
        &[1.0; 10],
        SectionScan::KoggeStone,
        ScanKind::Inclusive,
        2048,
    ) {
        Err(Error::InvalidLaunch(_)) => {}
        other => return Err(format!("2048 threads gave {other:?}").into()),
    }
    check_eq(
        "empty scan",
        ok(lecture_scan::hierarchical_scan(
            gpu,
            &[],
            SectionScan::KoggeStone,
            ScanKind::Exclusive,
            32,
        ))?
        .len(),
        0,
    )
}
