//! [`TempStorage`]: what one call needs of a [`DeviceWorkspace`](super::DeviceWorkspace), asked
//! before the call (CUB's `temp_storage_bytes` query).
//!
//! Each algorithm's size is computed next to its launch, from the same functions the launch
//! uses to plan its grid (`impl TempStorage` blocks in the algorithms' modules).

/// The temporary device storage of one call, per buffer of a
/// [`DeviceWorkspace`](super::DeviceWorkspace): ask it with the algorithm's constructor
/// (`TempStorage::scan::<f32>(n)`, `TempStorage::sort_pairs::<u32, u32>(&gpu, n, options)`,
/// ...), combine the calls a workspace will serve with [`max`](Self::max), then
/// [`DeviceWorkspace::reserve_for`](super::DeviceWorkspace::reserve_for): those calls then
/// allocate nothing. [`bytes`](Self::bytes) is the device memory that takes (CUB's
/// `temp_storage_bytes`).
///
/// Sizes are exact for the call described, except where a constructor says "at most" (the
/// sort's single-tile and double-buffer paths need less than it says; a segmented sort's need
/// depends on its segments' lengths). A call the constructor does not describe (a longer
/// input, another type) may still grow the workspace: it stays correct, it allocates.
/// Calls that need no temporary storage ([`histogram_even`](super::histogram_even),
/// [`top_k`](super::top_k), a [`segmented_reduce`](super::segmented_reduce) by rows, the rows'
/// forward operations) have none: [`TempStorage::default()`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TempStorage {
    /// Reductions' per-block partials (8-byte slots); with them the single-launch reduce's
    /// block counter (4 bytes).
    pub(crate) partials: usize,
    /// The 16-byte result slot of the reductions that return to the host.
    pub(crate) result: bool,
    /// Look-back status words of 4-byte values and of the radix sort's digits (8 bytes each).
    pub(crate) word_slots: usize,
    /// Look-back status words of 8-byte values and pairs (8 bytes each, two a tile).
    pub(crate) pair_slots: usize,
    /// A segmented call's tile starts (4 bytes each).
    pub(crate) tile_starts: usize,
    /// Cross-entropy's valid-target count and per-row losses (4 bytes each).
    pub(crate) row_values: usize,
    /// The radix sort's digit counts (4 bytes each).
    pub(crate) sort_counts: usize,
    /// The radix sort's alternate keys and values, in bytes.
    pub(crate) sort_scratch: usize,
    /// A range histogram's levels, in bytes.
    pub(crate) levels: usize,
}

impl TempStorage {
    /// Device memory a workspace holds for this need, in bytes (each buffer as the workspace
    /// allocates it: whole 8-byte words, the look-back's 8-byte tile counter included).
    pub fn bytes(&self) -> usize {
        let words = |bytes: usize| bytes.div_ceil(8).saturating_mul(8);
        let counter = if self.word_slots > 0 || self.pair_slots > 0 {
            8
        } else {
            0
        };
        [
            self.partials.saturating_mul(8) + if self.partials > 0 { 4 } else { 0 },
            if self.result { 16 } else { 0 },
            self.word_slots.saturating_mul(8),
            self.pair_slots.saturating_mul(8),
            counter,
            self.tile_starts.saturating_mul(4),
            self.row_values.saturating_mul(4),
            self.sort_counts.saturating_mul(4),
            words(self.sort_scratch),
            words(self.levels),
        ]
        .into_iter()
        .fold(0usize, usize::saturating_add)
    }

    /// The storage that serves either call (each buffer the larger of the two).
    #[must_use]
    pub fn max(self, other: Self) -> Self {
        Self {
            partials: self.partials.max(other.partials),
            result: self.result || other.result,
            word_slots: self.word_slots.max(other.word_slots),
            pair_slots: self.pair_slots.max(other.pair_slots),
            tile_starts: self.tile_starts.max(other.tile_starts),
            row_values: self.row_values.max(other.row_values),
            sort_counts: self.sort_counts.max(other.sort_counts),
            sort_scratch: self.sort_scratch.max(other.sort_scratch),
            levels: self.levels.max(other.levels),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TempStorage;

    #[test]
    fn nothing_needs_no_bytes() {
        assert_eq!(TempStorage::default().bytes(), 0);
    }

    #[test]
    fn bytes_count_each_buffer_as_allocated() {
        let need = TempStorage {
            partials: 3,
            result: true,
            pair_slots: 4,
            sort_scratch: 9,
            ..TempStorage::default()
        };
        // 3 partials + the block counter, the result slot, 4 status words + the tile
        // counter, 9 scratch bytes in two words.
        assert_eq!(need.bytes(), (24 + 4) + 16 + (32 + 8) + 16);
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
        assert_eq!(TempStorage::histogram_range::<f32>(5).bytes(), 24);
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
        let both = narrow.max(wide);
        assert_eq!(both.bytes(), narrow.bytes() + wide.bytes() - 8); // one tile counter
    }

    #[test]
    fn max_takes_each_buffer_apart() {
        let a = TempStorage {
            partials: 10,
            word_slots: 1,
            ..TempStorage::default()
        };
        let b = TempStorage {
            partials: 2,
            result: true,
            pair_slots: 6,
            ..TempStorage::default()
        };
        let both = a.max(b);
        assert_eq!(
            (both.partials, both.result, both.word_slots, both.pair_slots),
            (10, true, 1, 6)
        );
        assert_eq!(both.max(TempStorage::default()), both);
    }
}
