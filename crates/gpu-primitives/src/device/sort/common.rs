//! What every sort shares: [`SortOptions`], the buffers one sort reads and writes
//! ([`SortBuffers`]), which buffer a double-buffered sort ends in ([`SortedIn`]), and the
//! checks of lengths and value sizes.

use super::key::SortKey;
use crate::device::element::{Bound, DeviceView, DeviceViewMut};
use crate::{Error, Result};
use gpu_primitives_abi::layout::{SORT_BLOCK, SORT_MAX_KEYS};
use std::ops::Range;

/// How a radix sort orders its keys: ascending (the default) or descending, and which bits of
/// the keys' ordered bits ([`SortKey::ordered_bits`]) it compares (all by default; CUB's
/// `begin_bit` / `end_bit`). Keys equal in the compared bits keep their input order (stable),
/// in both directions.
///
/// ```
/// use gpu_primitives::device::SortOptions;
/// let low_byte_descending = SortOptions::descending().bits(0..8);
/// assert!(low_byte_descending.is_descending());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SortOptions {
    descending: bool,
    bits: Option<(u32, u32)>,
}

impl SortOptions {
    /// Smallest key first.
    pub fn ascending() -> Self {
        Self::default()
    }

    /// Largest key first (NaNs first for floats).
    pub fn descending() -> Self {
        Self {
            descending: true,
            bits: None,
        }
    }

    /// Descending where `descending` (a top-k's `largest`), ascending otherwise.
    ///
    /// ```
    /// use gpu_primitives::device::SortOptions;
    /// assert_eq!(SortOptions::descending_if(true), SortOptions::descending());
    /// assert_eq!(SortOptions::descending_if(false), SortOptions::ascending());
    /// ```
    pub fn descending_if(descending: bool) -> Self {
        Self {
            descending,
            bits: None,
        }
    }

    /// Compare only bits `range` of the ordered bits (`range.end` at most the key's width).
    /// For floats the ordered bits are not the stored bits (see [`SortKey`]). An empty range
    /// compares nothing: the output is the input, in its order.
    pub fn bits(self, range: Range<u32>) -> Self {
        Self {
            bits: Some((range.start, range.end)),
            ..self
        }
    }

    /// Whether the order is descending.
    pub fn is_descending(&self) -> bool {
        self.descending
    }

    /// The bits of the ordered bits compared for keys of `K` (all of them unless
    /// [`bits`](Self::bits) narrowed it), checked.
    ///
    /// # Errors
    /// [`Error::InvalidBitRange`] when the range is reversed or past the key's width.
    ///
    /// ```
    /// use gpu_primitives::{Error, device::SortOptions};
    /// assert_eq!(SortOptions::ascending().compared_bits::<u16>().unwrap(), 0..16);
    /// let reversed = SortOptions::ascending().bits(9..8).compared_bits::<u32>();
    /// assert!(matches!(reversed, Err(Error::InvalidBitRange { begin: 9, end: 8, bits: 32, .. })));
    /// let past = SortOptions::descending().bits(0..40).compared_bits::<f32>();
    /// assert!(matches!(past, Err(Error::InvalidBitRange { key: "f32", end: 40, .. })));
    /// ```
    pub fn compared_bits<K: SortKey>(&self) -> Result<Range<u32>> {
        self.bit_range::<K>().map(|(begin, end)| begin..end)
    }

    /// The bit range compared for keys of `K`, checked.
    pub(in crate::device) fn bit_range<K: SortKey>(&self) -> Result<(u32, u32)> {
        let (begin, end) = self.bits.unwrap_or((0, K::BITS));
        if begin > end || end > K::BITS {
            return Err(Error::InvalidBitRange {
                what: "sort",
                key: K::NAME,
                begin,
                end,
                bits: K::BITS,
            });
        }
        Ok((begin, end))
    }
}

/// Where a sort's values come from and go.
#[derive(Clone, Copy)]
pub(in crate::device) enum Values {
    /// Keys only.
    None,
    /// Values of `bytes` (4 or 8) each, read from `input` (or the keys' indices when `input`
    /// is `None`), written to `output`.
    Pairs {
        input: Option<u64>,
        output: u64,
        bytes: usize,
    },
}

/// The device memory one sort reads and writes: inputs, final outputs, whether it sorts in
/// place (the input is the output).
#[derive(Clone, Copy)]
pub(in crate::device) struct SortBuffers {
    pub(in crate::device) n: usize,
    pub(in crate::device) keys_in: u64,
    pub(in crate::device) keys_out: u64,
    pub(in crate::device) values: Values,
    /// The bounds of the caller's views, checked before anything is queued: keys in, keys out,
    /// values in, values out (the default where there is none).
    pub(in crate::device) bounds: [Bound; 4],
}

impl SortBuffers {
    /// Bytes a value: 0 for keys alone.
    pub(in crate::device) fn value_bytes(&self) -> usize {
        match self.values {
            Values::None => 0,
            Values::Pairs { bytes, .. } => bytes,
        }
    }

    /// `n` keys at `keys` sorted where they lie, with `values` (their address and bytes per
    /// value) where given, sorted where they lie too; `[keys, values]` are the views' bounds.
    pub(in crate::device) fn in_place(
        n: usize,
        keys: u64,
        values: Option<(u64, usize)>,
        [key_bound, value_bound]: [Bound; 2],
    ) -> Self {
        Self {
            n,
            keys_in: keys,
            keys_out: keys,
            bounds: [key_bound, key_bound, value_bound, value_bound],
            values: match values {
                None => Values::None,
                Some((address, bytes)) => Values::Pairs {
                    input: Some(address),
                    output: address,
                    bytes,
                },
            },
        }
    }
}

/// Check `len` against the keys' number.
pub(in crate::device) fn check_len(what: &'static str, n: usize, len: usize) -> Result<()> {
    if len < n {
        return Err(Error::LengthMismatch {
            what,
            expected: n,
            found: len,
        });
    }
    Ok(())
}

/// `n` keys sorted together (a whole sort, a segment, a top-k's row or array), at most
/// [`SORT_MAX_KEYS`]: else [`Error::TooManyKeys`] naming the call by `what`.
pub(in crate::device) fn check_sort_len(what: &'static str, n: usize) -> Result<()> {
    if n > SORT_MAX_KEYS {
        return Err(Error::TooManyKeys {
            what,
            keys: n,
            max: SORT_MAX_KEYS,
        });
    }
    Ok(())
}

/// The compile-time check that a value type is 4 or 8 bytes.
pub(in crate::device) struct ValueBytes<V>(std::marker::PhantomData<V>);
impl<V> ValueBytes<V> {
    pub(in crate::device) const BYTES: usize = {
        assert!(
            size_of::<V>() == 4 || size_of::<V>() == 8,
            "sort_pairs moves values of 4 or 8 bytes"
        );
        size_of::<V>()
    };
}

/// Which of a double-buffered sort's two buffers holds the sorted keys (and values): CUB's
/// `DoubleBuffer::selector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortedIn {
    /// The buffers the keys (and values) were given in.
    Current,
    /// The alternate buffers.
    Alternate,
}

/// Whether `n` keys of `K` fit one tile of the block radix sort (`SORT_BLOCK * K::ITEMS`
/// keys), which one block sorts in shared memory (CUB's single-tile sort) instead of onesweep.
pub(in crate::device) fn fits_one_tile<K: SortKey>(n: usize) -> bool {
    n <= SORT_BLOCK as usize * K::ITEMS
}

/// A buffer of stored keys as a view of keys.
pub(in crate::device) fn raw_view<K: SortKey>(buffer: &crate::DeviceBuffer<K::Raw>) -> DeviceView<'_, K> {
    // SAFETY: a live buffer of `len` keys as stored, borrowed for the view's lifetime.
    unsafe { DeviceView::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
}

/// A buffer of stored keys as a writable view of keys.
pub(in crate::device) fn raw_view_mut<K: SortKey>(
    buffer: &mut crate::DeviceBuffer<K::Raw>,
) -> DeviceViewMut<'_, K> {
    // SAFETY: a live buffer of `len` keys as stored, borrowed mutably for the view's lifetime.
    unsafe { DeviceViewMut::from_raw_parts(buffer.as_device_ptr().as_raw(), buffer.len()) }
}
