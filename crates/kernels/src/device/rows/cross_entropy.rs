//! [`CrossEntropy`]: the loss of each row and, fused with it, the gradient with respect to the
//! logits, from softmax's statistics and the row's target. The mean's extra launches (the count
//! of valid targets, the mean of the losses) are [`device::cross_entropy`](crate::device::cross_entropy).

use super::softmax::{exp_shifted, softmax_combine, softmax_fold};
use super::tile::RowTile;
use super::{RowFacts, RowOp, save};
use crate::device::element::RowElement;
use crate::math::ln_approx;
use gpu_primitives_abi::params::RowParams;

/// Cross-entropy's row: softmax's pair, the row's loss (before the mean's division), and how
/// its gradient is formed.
#[derive(Clone, Copy)]
pub struct CrossEntropyRow {
    max: f32,
    inverse: f32,
    loss: f32,
    /// The gradient's scale: 0 for an ignored row, NaN for a target out of range.
    scale: f32,
    target: u32,
    /// `1 - smoothing`, added at the target.
    keep: f32,
    /// `smoothing / classes`, added at every class.
    spread: f32,
}

/// Cross-entropy from logits (a row per sample, a column per class) and a target class per row,
/// with label smoothing `s` over `C` classes (PyTorch's `cross_entropy`):
/// `loss = ln(sum(exp(x))) - (1 - s) x[target] - s mean(x)`, and fused with it the gradient
/// with respect to the logits, `(softmax(x) - (1 - s) onehot(target) - s / C) * scale`. A row
/// whose target is the ignore index has loss 0 and gradient 0; a target outside `0..C` gives
/// NaN for both.
pub struct CrossEntropy;
impl RowOp for CrossEntropy {
    const PAD: f32 = f32::NEG_INFINITY;
    const OUTPUT_OPTIONAL: bool = true;
    /// (maximum, sum of `exp(x - maximum)`, sum of the row's items)
    type Partial = [f32; 3];
    type Row = CrossEntropyRow;
    fn identity() -> [f32; 3] {
        [f32::NEG_INFINITY, 0.0, 0.0]
    }
    fn fold<T: RowElement, const W: usize>(tile: &RowTile<T, W>, _: &RowFacts) -> [f32; 3] {
        let [max, sum] = softmax_fold(tile);
        [max, sum, tile.fold_valid(0.0, |s, x| s + x)]
    }
    fn combine([ma, sa, xa]: [f32; 3], [mb, sb, xb]: [f32; 3]) -> [f32; 3] {
        let [max, sum] = softmax_combine([ma, sa], [mb, sb]);
        [max, sum, xa + xb]
    }
    fn finish([max, sum, items]: [f32; 3], row: &RowFacts) -> CrossEntropyRow {
        let smoothing = row.smoothing;
        let classes = row.cols as f32;
        let log_sum = max + ln_approx(sum);
        let loss = log_sum - (1.0 - smoothing) * row.target_logit - smoothing * (items / classes);
        CrossEntropyRow {
            max,
            inverse: 1.0 / sum,
            loss: if row.scale == 0.0 { 0.0 } else { loss },
            scale: row.scale,
            target: row.target,
            keep: 1.0 - smoothing,
            spread: smoothing / classes,
        }
    }
    fn output(x: f32, _: f32, _: f32, _: f32, col: u32, row: &CrossEntropyRow) -> f32 {
        if row.scale == 0.0 {
            return 0.0;
        }
        let wanted = if col == row.target {
            row.keep + row.spread
        } else {
            row.spread
        };
        (exp_shifted(x, row.max) * row.inverse - wanted) * row.scale
    }
    #[inline(always)]
    unsafe fn row_facts<T: RowElement>(p: &RowParams<T>, row: usize, facts: RowFacts) -> RowFacts {
        // SAFETY: `targets` holds `rows` values; a target in 0..cols lies in the row; a non-null
        // `valid_targets` is one count (the caller's contract).
        unsafe {
            let target = *p.targets.add(row);
            if target == p.ignore_index {
                RowFacts {
                    target_logit: 0.0,
                    scale: 0.0,
                    ..facts
                }
            } else if target >= 0 && (target as u64) < facts.cols as u64 {
                let scale = if p.valid_targets.is_null() {
                    1.0
                } else {
                    1.0 / *p.valid_targets as f32
                };
                RowFacts {
                    target: target as u32,
                    target_logit: (*p.input.add(row * p.cols + target as usize)).to_acc(),
                    scale,
                    ..facts
                }
            } else {
                RowFacts {
                    target_logit: f32::NAN,
                    scale: f32::NAN,
                    ..facts
                }
            }
        }
    }
    #[inline(always)]
    unsafe fn write_row<T: RowElement>(p: &RowParams<T>, row: usize, stats: &CrossEntropyRow) {
        // SAFETY: a non-null loss holds one value per row (the caller's contract).
        unsafe { save(p.loss, row, stats.loss) };
    }
}
