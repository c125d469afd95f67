//! Row tiles: where a thread's items lie in a tile of its row ([`RowMapping`]), one thread's
//! part of a tile in registers ([`RowTile`]) and its folds, the loads of a tile and of the
//! norms' weight and bias (16-byte vectors where the row allows, else one element a load), the
//! store of a tile's outputs, and how many tiles a row takes ([`row_tiles`]).

use super::RowOp;
use crate::device::element::{
    MAX_WORDS, RowElement, load_words_read_only, load_words_read_only_kept, store_words,
    store_words_streaming,
};
use crate::unroll::unrolled_for;
use gpu_primitives_abi::params::RowParams;

/// Where a thread's items lie in a tile of its row: 16-byte chunk `c` of the thread starts at
/// column `first + base + c * step` of the row (`base` = rank x elements per chunk, `step` =
/// threads x elements per chunk). Columns are `u32` (rows of fewer than 2^31 elements).
#[derive(Clone, Copy)]
pub struct RowMapping {
    pub(super) base: u32,
    pub(super) step: u32,
    pub(super) vector: bool,
}

impl RowMapping {
    /// First column of chunk `c` of the tile starting at column `first`.
    #[inline(always)]
    pub(super) fn chunk(&self, first: u32, c: usize) -> u32 {
        first + self.base + c as u32 * self.step
    }
}

/// Elements of `T` per 16 bytes.
pub(super) const fn per_chunk<T>() -> usize {
    16 / core::mem::size_of::<T>()
}

/// Item `j` of a 16-byte chunk, widened to `f32` (again at every call).
#[inline(always)]
fn chunk_item<T: RowElement>(chunk: &[u32], j: usize) -> f32 {
    T::widen_each_time(chunk, j)
}

/// One thread's part of one tile of a row: `W` words of the input (and of the gradient, where
/// `grad`).
pub struct RowTile<T, const W: usize> {
    pub(super) x: [u32; W],
    pub(super) dy: [u32; W],
    pub(super) grad: bool,
    /// The norms' `cols` weights, or null (1).
    pub(super) weight: *const T,
    pub(super) first: u32,
    pub(super) cols: u32,
    pub(super) map: RowMapping,
    /// Made by a kernel of rows of one tile only (which has the registers for
    /// [`fold_valid`](Self::fold_valid)'s second loop).
    pub(super) one_tile: bool,
    pub(super) _element: core::marker::PhantomData<T>,
}

impl<T: RowElement, const W: usize> RowTile<T, W> {
    /// Fold `f(acc, x, dy)` over every item of this thread, those past the row's end holding the
    /// operation's [`RowOp::PAD`] (and `dy` 0; 0 throughout without a gradient).
    #[inline(always)]
    pub fn fold<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32, f32) -> A) -> A {
        let mut acc = init;
        unrolled_for(W / 4, |c| {
            unrolled_for(per_chunk::<T>(), |j| {
                let x = chunk_item::<T>(&self.x[4 * c..], j);
                // Halves widen through asm the compiler cannot drop: only where there is a dy.
                let dy = if self.grad {
                    chunk_item::<T>(&self.dy[4 * c..], j)
                } else {
                    0.0
                };
                acc = f(acc, x, dy);
            });
        });
        acc
    }

    /// As [`fold`](Self::fold), with each item's weight (1 where there is none, and past the
    /// row's end).
    #[inline(always)]
    pub fn fold_weighted<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32, f32, f32) -> A) -> A {
        let mut acc = init;
        unrolled_for(W / 4, |c| {
            let col = self.map.chunk(self.first, c);
            // SAFETY: a non-null weight holds `cols` elements nothing writes during the launch,
            // aligned as the row inputs when `map.vector` (the kernel's contract).
            let weight = unsafe { chunk_words(self.weight, col, self.cols, self.map.vector, 1.0, false) };
            unrolled_for(per_chunk::<T>(), |j| {
                let x = chunk_item::<T>(&self.x[4 * c..], j);
                let dy = chunk_item::<T>(&self.dy[4 * c..], j);
                acc = f(acc, x, dy, chunk_item::<T>(&weight, j));
            });
        });
        acc
    }

    /// As [`fold`](Self::fold), over this thread's items that lie in the row only: in kernels of
    /// one tile without a test per item where all of this thread's items lie in the row (its
    /// last chunk ends within it), a second copy of the loop (H100: LayerNorm `f32` 16384 x
    /// 16384 4 % faster, cross-entropy `f32` 262144 x 1024 7 %; in kernels of tiles the
    /// cross-entropy measured 3 to 9 % slower with it, `bf16` from 65536 columns).
    #[inline(always)]
    pub fn fold_valid<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32) -> A) -> A {
        let last = self.map.chunk(self.first, W / 4 - 1) + per_chunk::<T>() as u32;
        if self.one_tile && last <= self.cols {
            self.fold(init, |acc, x, _| f(acc, x))
        } else {
            self.fold_valid_each(init, f)
        }
    }

    /// As [`fold`](Self::fold), over this thread's items that lie in the row only (a test per
    /// item).
    #[inline(always)]
    fn fold_valid_each<A: Copy>(&self, init: A, mut f: impl FnMut(A, f32) -> A) -> A {
        let mut acc = init;
        unrolled_for(W / 4, |c| {
            let col = self.map.chunk(self.first, c);
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < self.cols {
                    acc = f(acc, chunk_item::<T>(&self.x[4 * c..], j));
                }
            });
        });
        acc
    }

    /// `f(k, x, dy)` for each item `k` of this thread (its index among the thread's items: chunk
    /// by chunk), pads included (`x` the pad, `dy` 0).
    #[inline(always)]
    pub fn for_each_item(&self, mut f: impl FnMut(usize, f32, f32)) {
        unrolled_for(W / 4, |c| {
            unrolled_for(per_chunk::<T>(), |j| {
                let x = chunk_item::<T>(&self.x[4 * c..], j);
                let dy = chunk_item::<T>(&self.dy[4 * c..], j);
                f(c * per_chunk::<T>() + j, x, dy);
            });
        });
    }

    /// How many of this thread's items lie in the row.
    #[inline(always)]
    pub fn valid_items(&self) -> u32 {
        let mut count = 0;
        unrolled_for(W / 4, |c| {
            let room = self.cols.saturating_sub(self.map.chunk(self.first, c));
            count += room.min(per_chunk::<T>() as u32);
        });
        count
    }
}

/// Read this thread's part of the tile at column `first` of a row of `cols` elements at `row`
/// (nothing when `cols` is 0): a 16-byte load per chunk, or with `map.vector` false one load
/// per element; items past the row hold `pad`.
///
/// # Safety
/// `row[0..cols]` is readable and not written during the launch; with `map.vector`, `row` is
/// 16-byte aligned and `cols` a multiple of [`per_chunk`].
#[inline(always)]
pub(super) unsafe fn load_tile<T: RowElement, const W: usize>(
    row: *const T,
    cols: u32,
    first: u32,
    map: RowMapping,
    pad: T,
) -> [u32; W] {
    let mut padding = [0u32; MAX_WORDS];
    unrolled_for(per_chunk::<T>(), |j| pad.pack(&mut padding, j));
    let mut words = [0u32; W];
    unrolled_for(W / 4, |c| {
        let col = map.chunk(first, c);
        if map.vector {
            let chunk = if col < cols {
                // SAFETY: the chunk's columns are < cols (a whole number of chunks), aligned.
                unsafe { load_words_read_only(row.add(col as usize) as *const u8) }
            } else {
                [padding[0], padding[1], padding[2], padding[3]]
            };
            words[4 * c..4 * c + 4].copy_from_slice(&chunk);
        } else {
            let mut chunk = padding;
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < cols {
                    // SAFETY: the column is < cols.
                    unsafe { *row.add(col as usize + j) }.pack(&mut chunk, j);
                }
            });
            words[4 * c..4 * c + 4].copy_from_slice(&chunk[..4]);
        }
    });
    words
}

/// Whether `ptr` is null or 16-byte aligned.
#[inline(always)]
pub(super) fn aligned_or_null<T>(ptr: *const T) -> bool {
    (ptr as usize).is_multiple_of(16)
}

/// `values[col ..]` for the items of the chunk at column `col`, packed as `T` (`default` where
/// `values` is null or past `cols`): read an item with [`chunk_item`] where it is used, so that
/// halves take 4 registers a chunk, not 8 widened. `kept` (the forward norms' kernels of rows of
/// several tiles): 16-byte chunks are marked last to be evicted from L2
/// ([`load_words_read_only_kept`]), so that the streamed rows do not push the weight and bias
/// every row reads out of L2 (H100, `f32` RMSNorm 1024 x 262144: DRAM reads 1.109 -> 1.075 GB,
/// 1014 -> 835 µs under Nsight Compute).
///
/// # Safety
/// A non-null `values` holds `cols` readable elements; with `vector`, aligned as [`load_tile`].
#[inline(always)]
unsafe fn chunk_words<T: RowElement>(
    values: *const T,
    col: u32,
    cols: u32,
    vector: bool,
    default: f32,
    kept: bool,
) -> [u32; 4] {
    let mut words = [0u32; MAX_WORDS];
    unrolled_for(per_chunk::<T>(), |j| T::from_f32(default).pack(&mut words, j));
    if !values.is_null() {
        if vector {
            if col < cols {
                // SAFETY: a whole chunk below cols, aligned, not written during the launch (the
                // caller's contract).
                return unsafe {
                    let at = values.add(col as usize) as *const u8;
                    if kept {
                        load_words_read_only_kept(at)
                    } else {
                        load_words_read_only(at)
                    }
                };
            }
        } else {
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < cols {
                    // SAFETY: the column is < cols.
                    unsafe { *values.add(col as usize + j) }.pack(&mut words, j);
                }
            });
        }
    }
    [words[0], words[1], words[2], words[3]]
}

/// Write this thread's outputs of one tile (`cluster`: made by a cluster kernel). In the forward
/// norms' kernels of rows of several tiles the weight and bias are read `kept` ([`chunk_words`]),
/// and in their cluster kernels the outputs stored marked first to be evicted from L2
/// ([`store_words_streaming`]), which leaves L2 to the weight, the bias and the tiles read
/// again.
///
/// # Safety
/// `out[0..cols]` is writable; as [`load_tile`] for alignment; `weight` / `bias` as
/// [`chunk_words`].
#[inline(always)]
pub(super) unsafe fn store_tile<T: RowElement, Op: RowOp, const W: usize>(
    p: &RowParams<T>,
    out: *mut T,
    tile: &RowTile<T, W>,
    row: &Op::Row,
    cluster: bool,
) {
    let vector = tile.map.vector;
    // The forward operations' weight and bias in tiled kernels (in the backward kernels the hint
    // measured 1-2 % slower for halves, H100 `bf16` 4096 x 65536, and no faster for `f32`).
    let kept = !tile.one_tile && !Op::GRAD;
    let streaming = cluster && Op::AFFINE && kept;
    unrolled_for(W / 4, |c| {
        let col = tile.map.chunk(tile.first, c);
        let (weight, bias) = if Op::AFFINE {
            // SAFETY: forwarded.
            unsafe {
                (
                    Some(chunk_words(p.weight, col, tile.cols, vector, 1.0, kept)),
                    Some(chunk_words(p.bias, col, tile.cols, vector, 0.0, kept)),
                )
            }
        } else {
            (None, None)
        };
        let item =
            |words: Option<[u32; 4]>, j: usize, none: f32| words.map_or(none, |w| chunk_item::<T>(&w, j));
        // The chunk's outputs in f32: at most a 16-byte chunk of 2-byte elements.
        let mut ys = [0.0f32; per_chunk::<u16>()];
        unrolled_for(per_chunk::<T>(), |j| {
            let x = chunk_item::<T>(&tile.x[4 * c..], j);
            let dy = if Op::GRAD {
                chunk_item::<T>(&tile.dy[4 * c..], j)
            } else {
                0.0
            };
            ys[j] = Op::output(
                x,
                dy,
                item(weight, j, 1.0),
                item(bias, j, 0.0),
                col + j as u32,
                row,
            );
        });
        let mut words = [0u32; MAX_WORDS];
        unrolled_for(4, |w| words[w] = T::narrow_word(&ys, w));
        if vector {
            if col < tile.cols {
                let chunk = [words[0], words[1], words[2], words[3]];
                // SAFETY: a whole chunk below cols, aligned.
                unsafe {
                    let at = out.add(col as usize) as *mut u8;
                    if streaming {
                        store_words_streaming(at, chunk)
                    } else {
                        store_words(at, chunk)
                    }
                };
            }
        } else {
            unrolled_for(per_chunk::<T>(), |j| {
                if col + (j as u32) < tile.cols {
                    // SAFETY: the column is < cols.
                    unsafe { *out.add(col as usize + j) = T::unpack(&words, j) };
                }
            });
        }
    });
}

/// Items of a row in one tile of `W` words per thread of a group of `group` threads.
#[inline(always)]
pub(super) fn row_tile_items<T: RowElement, const W: usize>(group: u32) -> u32 {
    group * (W as u32 / 4) * per_chunk::<T>() as u32
}

/// Tiles of `W` words per thread in which a group of `p.group` threads reads a row of `p` (1: the
/// row stays in registers).
#[inline(always)]
pub fn row_tiles<T: RowElement, const W: usize>(p: &RowParams<T>) -> u32 {
    (p.cols as u32).div_ceil(row_tile_items::<T, W>(p.group))
}
