//! Block scope: every thread of a block cooperates, through shared memory and barriers.
//!
//! Each collective takes its shared memory as a *temp-storage* value that the kernel owns and
//! passes in (CUB's `TempStorage`): the kernel declares it once, e.g. with
//! [`shared_array!`](crate::shared_array), sized by the collective's `SLOTS` constant.

pub mod reduce;

pub use reduce::{BlockReduceStorage, block_reduce};
