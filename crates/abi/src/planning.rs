//! Pure planning: functions of a call's shape (and of the device's limits) over a policy of
//! [`tuning`](crate::tuning), passed in, and the layouts of [`layout`](crate::layout), which pick a
//! launch: threads, tiles, kernel variant. No GPU is needed to run them; `crates/abi/tests/`
//! tests them so.
//!
//! | module | plans |
//! |---|---|
//! | [`rows`] | the row operations (softmax, norms, cross-entropy and their backward): [`RowShape`](rows::RowShape) -> [`RowPlan`](rows::RowPlan), the norms' summing launches, the chunks of their weight and bias gradients |
//! | [`sort`] | the radix sorts: the onesweep pass's threads, items, blocks per multiprocessor, tile size and look-back; the segmented sort's and the upfront histogram's shapes |

pub mod rows;
pub mod sort;
