//! [`TempStorage`]: what one call needs of a [`DeviceWorkspace`](super::DeviceWorkspace), asked
//! before the call (CUB's `temp_storage_bytes` query).
//!
//! Each algorithm's size is computed next to its launch, from the same functions the launch
//! uses to plan its grid (`impl TempStorage` blocks in the algorithms' modules).

/// Alignment of every region carved from a workspace's scratch arena, in bytes (CUB's
/// `AliasTemporaries` aligns its allocations to 256 bytes). The arena itself is a driver
/// allocation, aligned at least as much.
pub const SCRATCH_ALIGN: usize = 256;

/// Bytes of a workspace's control block: the look-back tile counter (8 bytes at 0), the
/// single-launch reduce's block counter (4 bytes at 8) and the result slot (16 bytes at 16).
pub(crate) const CONTROL_BYTES: usize = 32;

/// The most regions one call's [`Scratch`] lists.
const MAX_REGIONS: usize = 4;

/// The largest multiple of [`SCRATCH_ALIGN`]: where sizes past the address space saturate
/// (an allocation of it fails: out of memory).
const MOST_ALIGNED: usize = usize::MAX - (SCRATCH_ALIGN - 1);

/// `bytes` rounded up to a multiple of [`SCRATCH_ALIGN`] (saturating at [`MOST_ALIGNED`]).
fn aligned(bytes: usize) -> usize {
    bytes
        .checked_next_multiple_of(SCRATCH_ALIGN)
        .unwrap_or(MOST_ALIGNED)
}

/// The place of one region in a call's scratch arena: `bytes` bytes at `offset` (a multiple
/// of [`SCRATCH_ALIGN`]) from the arena's start, as [`Scratch::push`] laid it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) offset: usize,
    pub(crate) bytes: usize,
}

impl Region {
    /// One past the region's last byte.
    pub(crate) fn end(&self) -> usize {
        self.offset.saturating_add(self.bytes)
    }
}

/// The scratch one call carves from the workspace's arena (CUB's `AliasTemporaries`): its
/// regions in order, each at the first multiple of [`SCRATCH_ALIGN`] past the one before,
/// so that regions a call uses at the same time never overlap. Parts of a call that run one
/// after another in stream order (each writing its regions before reading them) may share the
/// same bytes instead: the call then needs the larger of their scratches
/// ([`TempStorage::max`]), each part laid out from the arena's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scratch {
    sizes: [usize; MAX_REGIONS],
    len: usize,
}

impl Scratch {
    /// Add a region of `bytes` bytes after the others: its place.
    ///
    /// # Panics
    /// Past [`MAX_REGIONS`] regions (a defect of the library's planning, found by its tests).
    pub(crate) fn push(&mut self, bytes: usize) -> Region {
        assert!(
            self.len < MAX_REGIONS,
            "a call's scratch of more than {MAX_REGIONS} regions"
        );
        let offset = self.bytes();
        self.sizes[self.len] = bytes;
        self.len += 1;
        Region { offset, bytes }
    }

    /// The regions, in order, with their places.
    pub(crate) fn regions(&self) -> impl Iterator<Item = Region> + '_ {
        let mut offset = 0;
        self.sizes[..self.len].iter().map(move |&bytes| {
            let region = Region { offset, bytes };
            offset = aligned(region.end());
            region
        })
    }

    /// The arena bytes the regions take: one past the last, rounded up to [`SCRATCH_ALIGN`].
    pub(crate) fn bytes(&self) -> usize {
        self.regions().last().map_or(0, |last| aligned(last.end()))
    }
}

/// The temporary device storage of one call of a
/// [`DeviceWorkspace`](super::DeviceWorkspace): ask it with the algorithm's constructor
/// (`TempStorage::scan::<f32>(n)`, `TempStorage::sort_pairs::<u32, u32>(&gpu, n, options)`,
/// ...), combine the calls a workspace will serve with [`max`](Self::max), then
/// [`DeviceWorkspace::reserve_for`](super::DeviceWorkspace::reserve_for): those calls then
/// allocate nothing. [`bytes`](Self::bytes) is the device memory that takes (CUB's
/// `temp_storage_bytes`).
///
/// Two kinds of memory: the **persistent** parts, kept between calls because the kernels rely
/// on what the last call left there (the look-back status slots and their tile counter, whose
/// epochs run across calls; the single-launch reduce's block counter, 0 between launches; the
/// result slot), and the **scratch**: regions carved per call from one arena (partials, tile
/// starts, a copy of the levels, per-row values, digit counts, alternate keys and values), whose
/// contents no call relies on. Each call states its whole need when it starts, and the
/// workspace grows then, before anything of the call is queued.
///
/// Sizes are exact for the call described, except where a constructor says "at most" (the
/// sort's single-tile and double-buffer paths need less than it says; a segmented sort's need
/// depends on its segments' lengths). A call the constructor does not describe (a longer
/// input, another type) may still grow the workspace: it stays correct, it allocates.
/// Calls that need no temporary storage ([`histogram_even`](super::histogram_even),
/// [`top_k`](super::top_k()) up to its selection's k, a
/// [`segmented_reduce`](super::segmented_reduce) by rows, the rows' forward operations) have
/// none: [`TempStorage::default()`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TempStorage {
    /// The control block ([`CONTROL_BYTES`]): the tile counter of the look-back, the block
    /// counter and the result slot of the reductions.
    pub(crate) control: bool,
    /// Look-back status words of 4-byte values and of the radix sort's digits (8 bytes each).
    pub(crate) word_slots: usize,
    /// Look-back status words of 8-byte values and pairs (8 bytes each, two a tile).
    pub(crate) pair_slots: usize,
    /// The regions carved per call from the arena.
    pub(crate) scratch: Scratch,
}

impl TempStorage {
    /// Device memory a workspace holds for this need, in bytes: the control block, the status
    /// slots (8 bytes each) and the scratch arena (its regions, each aligned to
    /// [`SCRATCH_ALIGN`]).
    pub fn bytes(&self) -> usize {
        [
            if self.control { CONTROL_BYTES } else { 0 },
            self.word_slots.saturating_mul(8),
            self.pair_slots.saturating_mul(8),
            self.scratch.bytes(),
        ]
        .into_iter()
        .fold(0usize, usize::saturating_add)
    }

    /// The storage that serves either call: each persistent part the larger of the two, and
    /// the larger scratch (a call carves its own regions from the arena's start, so the arena
    /// of the larger one holds the other's).
    #[must_use]
    pub fn max(mut self, other: Self) -> Self {
        self.persistent_max(&other);
        if other.scratch.bytes() > self.scratch.bytes() {
            self.scratch = other.scratch;
        }
        self
    }

    /// Each persistent part the larger of this one's and `other`'s.
    fn persistent_max(&mut self, other: &Self) {
        self.control |= other.control;
        self.word_slots = self.word_slots.max(other.word_slots);
        self.pair_slots = self.pair_slots.max(other.pair_slots);
    }

    /// A need of one scratch region of `bytes` bytes, and that region.
    pub(crate) fn region(bytes: usize) -> (Self, Region) {
        let mut need = Self::default();
        let region = need.scratch.push(bytes);
        (need, region)
    }

    /// Add `part`, a part of the call used at the same time as this one's regions: its
    /// persistent needs (the larger of each), and its scratch as one more region, where the
    /// part carves its own regions (`arena.part(region)`).
    pub(crate) fn nest(&mut self, part: Self) -> Region {
        self.persistent_max(&part);
        self.scratch.push(part.scratch.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::{CONTROL_BYTES, MOST_ALIGNED, Region, SCRATCH_ALIGN, Scratch, TempStorage};
    use crate::device::workspace::StatusLayout;

    #[test]
    fn nothing_needs_no_bytes() {
        assert_eq!(TempStorage::default().bytes(), 0);
    }

    #[test]
    fn bytes_count_each_buffer_as_allocated() {
        let mut need = TempStorage {
            control: true,
            pair_slots: 4,
            ..TempStorage::default()
        };
        need.scratch.push(24);
        need.scratch.push(9);
        // The control block, 4 status words, two regions of the arena, each aligned to 256.
        assert_eq!(need.bytes(), CONTROL_BYTES + 32 + 2 * SCRATCH_ALIGN);
    }

    #[test]
    fn regions_are_aligned_disjoint_and_in_order() {
        let sizes = [0, 1, 255, 256, 257, 3000];
        for first in sizes {
            for second in sizes {
                for third in sizes {
                    let mut scratch = Scratch::default();
                    let pushed = [first, second, third].map(|bytes| scratch.push(bytes));
                    let regions: Vec<Region> = scratch.regions().collect();
                    assert_eq!(regions, pushed);
                    let mut end = 0;
                    for (region, bytes) in regions.iter().zip([first, second, third]) {
                        assert_eq!(region.bytes, bytes);
                        assert_eq!(region.offset % SCRATCH_ALIGN, 0, "{regions:?}");
                        assert!(region.offset >= end, "overlap: {regions:?}");
                        // No more padding than the alignment needs.
                        assert_eq!(region.offset, end.next_multiple_of(SCRATCH_ALIGN));
                        end = region.end();
                    }
                    // The total: the last region's end, aligned; at least the bytes asked for.
                    assert_eq!(scratch.bytes(), end.next_multiple_of(SCRATCH_ALIGN));
                    assert!(scratch.bytes() >= first + second + third);
                    let need = TempStorage {
                        scratch,
                        ..TempStorage::default()
                    };
                    assert_eq!(need.bytes(), scratch.bytes());
                }
            }
        }
    }

    #[test]
    fn sizes_past_the_address_space_saturate_aligned() {
        let mut scratch = Scratch::default();
        scratch.push(usize::MAX - 3);
        let last = scratch.push(10);
        assert_eq!(scratch.bytes(), MOST_ALIGNED);
        assert_eq!(last.offset % SCRATCH_ALIGN, 0);
        assert_eq!(scratch.bytes() % 8, 0); // whole words: the arena's length in u64
    }

    #[test]
    fn a_nested_part_is_one_region_after_the_others() {
        let (mut need, first) = TempStorage::region(100);
        let mut part = TempStorage::look_back_words(StatusLayout::Pair, 6);
        let inner = [part.scratch.push(40), part.scratch.push(300)];
        let nested = need.nest(part);
        assert_eq!(
            first,
            Region {
                offset: 0,
                bytes: 100
            }
        );
        assert_eq!(nested.offset, SCRATCH_ALIGN);
        assert_eq!(nested.bytes, part.scratch.bytes());
        // The part's regions, placed in its region, stay aligned and inside it.
        for region in inner {
            assert_eq!((nested.offset + region.offset) % SCRATCH_ALIGN, 0);
            assert!(region.end() <= nested.bytes);
        }
        // Its persistent needs join the call's.
        assert!(need.control && need.pair_slots == 6);
        assert_eq!(
            need.bytes(),
            CONTROL_BYTES + 48 + SCRATCH_ALIGN + part.scratch.bytes()
        );
    }

    #[test]
    fn queries_without_a_gpu_refuse_what_the_call_would() {
        // Tiles past the grid limit, lengths past the u32 offsets: the call's own errors.
        let past_grid = |r: crate::Result<TempStorage>, call: &str| match r {
            Err(crate::Error::PastGridLimit {
                what,
                items,
                tiles,
                max_tiles,
            }) => {
                assert_eq!((what, items), (call, usize::MAX / 2));
                assert!(tiles > max_tiles && max_tiles == crate::LaunchConfig::MAX_GRID as usize);
            }
            other => panic!("{call}: {other:?}"),
        };
        past_grid(TempStorage::scan::<f32>(usize::MAX / 2), "scan");
        past_grid(TempStorage::select::<u32>(usize::MAX / 2), "select");
        assert!(TempStorage::run_length_encode::<i32>(1 << 32).is_err());
        past_grid(
            TempStorage::segmented_scan::<f64>(usize::MAX / 2),
            "segmented_scan",
        );
        past_grid(
            TempStorage::scan_by_key::<u32, f32>(usize::MAX / 2),
            "scan by key",
        );
        past_grid(
            TempStorage::segmented_reduce::<f32>(usize::MAX / 2),
            "segmented_reduce_by_offsets",
        );
        past_grid(
            TempStorage::segmented_arg::<f32>(usize::MAX / 2),
            "segmented_argmin / argmax",
        );
        let message = TempStorage::scan::<f32>(usize::MAX / 2).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("scan: {} elements need ", usize::MAX / 2))
                && message.contains("grid limit"),
            "{message}"
        );
        // Empty inputs need nothing; a range histogram needs a copy of its levels.
        assert_eq!(TempStorage::scan::<f32>(0).ok(), Some(TempStorage::default()));
        assert_eq!(TempStorage::select::<i64>(0).ok(), Some(TempStorage::default()));
        assert_eq!(TempStorage::histogram_range::<f32>(5).bytes(), SCRATCH_ALIGN);
        assert_eq!(
            TempStorage::top_k::<f32>(1 << 20, 1 << 10, 8).ok(),
            Some(TempStorage::default())
        );
    }

    #[test]
    fn a_scan_needs_one_status_pair_a_tile_in_its_layout() {
        // 4-byte accumulators keep their status in the word slots, 8-byte ones in the pairs.
        let narrow = TempStorage::scan::<u32>(1 << 20).expect("fits the grid");
        let wide = TempStorage::scan::<f64>(1 << 20).expect("fits the grid");
        assert!(narrow.word_slots > 0 && narrow.pair_slots == 0);
        assert!(wide.pair_slots > 0 && wide.word_slots == 0);
        assert_eq!(narrow.word_slots % 2, 0);
        assert_eq!(narrow.scratch.bytes(), 0); // persistent only
        let both = narrow.max(wide);
        assert_eq!(both.bytes(), narrow.bytes() + wide.bytes() - CONTROL_BYTES); // one control block
    }

    #[test]
    fn max_takes_each_persistent_part_apart_and_the_larger_arena() {
        let (mut a, _) = TempStorage::region(1000);
        a.word_slots = 1;
        let (mut b, _) = TempStorage::region(10);
        b.scratch.push(10);
        b.scratch.push(10);
        b.control = true;
        b.pair_slots = 6;
        let both = a.max(b);
        assert_eq!((both.control, both.word_slots, both.pair_slots), (true, 1, 6));
        // The arena of the larger scratch (1000 bytes: 1024; b's three regions: 768) holds
        // either call's regions, each laid out from the arena's start.
        assert_eq!(both.scratch, a.scratch);
        assert_eq!(both.scratch.bytes(), a.scratch.bytes().max(b.scratch.bytes()));
        assert_eq!(b.max(a).scratch, a.scratch);
        assert_eq!(both.max(TempStorage::default()), both);
        assert_eq!(TempStorage::default().max(both), both);
        // Commutative in the bytes, whichever scratch is kept.
        assert_eq!(a.max(b).bytes(), b.max(a).bytes());
        assert_eq!(both.bytes(), CONTROL_BYTES + 8 + 48 + 1024);
    }
}
