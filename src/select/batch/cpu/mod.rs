//! The CPU backend of batched selection and top-k: the same operations as the CUDA backend,
//! on host memory.
//!
//! Spans shorter than [`LONG_SPAN`] are shared out among threads (when the selector allows
//! threads and the batch holds enough values), each handled by one thread with a reused
//! workspace; longer spans are handled one after another, each by several threads.

mod select;
mod top_k;

use crate::element::Element;
use crate::error::Result;
use crate::select::batch::spans::{KeyOrder, SpanRanks, SpanSelection, Spans, TopKSpans};
use crate::select::host::use_parallel;
use crate::select::input::Input;
use crate::select::PARALLEL_THRESHOLD;

/// Spans at least this long are handled one at a time, each by several threads.
pub(crate) const LONG_SPAN: usize = PARALLEL_THRESHOLD;

/// Spans shared out among threads go in groups of about this many values (fewer, longer
/// tasks for short spans).
const VALUES_PER_TASK: usize = 1 << 13;

/// The values of `ranks` in every span of `input` (spans and ranks checked: every rank below
/// its span's length), with each span's NaN count. A device buffer is copied to the host first.
pub(crate) fn select_spans<T: Element>(
    input: Input<'_, T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
    parallel: bool,
) -> Result<SpanSelection<T>> {
    with_host(input, |data| {
        select::select_spans(data, spans, ranks, parallel)
    })
}

/// The first `k` values of every span in `order` (ties by index), with their indices inside
/// their spans: sorted by the order, or (`sorted == false`) by index; and each span's NaN count.
/// Every span holds at least `k` values. A device buffer is copied to the host first.
pub(crate) fn top_k_spans<T: Element>(
    input: Input<'_, T>,
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
    sorted: bool,
    parallel: bool,
) -> Result<TopKSpans<T>> {
    with_host(input, |data| {
        top_k::top_k_spans(data, spans, k, order, sorted, parallel)
    })
}

/// Runs `f` on the values of `input`, copied to the host when they are on a device.
fn with_host<T: Element, R>(input: Input<'_, T>, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    match input {
        Input::Host(data) => Ok(f(data)),
        Input::Device(buf) => Ok(f(&buf.to_host()?)),
    }
}

/// The number of values the spans cover.
fn total_len(spans: &Spans<'_>) -> usize {
    match *spans {
        Spans::Rows { rows, cols, .. } => rows.saturating_mul(cols),
        Spans::Offsets(offsets) => match (offsets.first(), offsets.last()) {
            (Some(first), Some(last)) => last - first,
            _ => 0,
        },
    }
}

/// The least number of spans a thread takes at once: all of them when the spans are not shared
/// out among threads (a parallel iterator that cannot split runs on the calling thread), else
/// enough for about [`VALUES_PER_TASK`] values.
fn spans_per_task(spans: &Spans<'_>, parallel: bool) -> usize {
    let count = spans.count();
    let total = total_len(spans);
    if count < 2 || !use_parallel(parallel, total) {
        return usize::MAX;
    }
    let mean = total / count;
    (VALUES_PER_TASK / mean.max(1)).max(1)
}

/// Whether a span of `len` values is handled by several threads.
fn long(len: usize, parallel: bool) -> bool {
    len >= LONG_SPAN && use_parallel(parallel, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_shared_out_only_when_the_batch_is_large() {
        let few = Spans::Rows {
            rows: 4,
            cols: 10,
            stride: 10,
        };
        assert_eq!(spans_per_task(&few, true), usize::MAX);
        let many = Spans::Rows {
            rows: 10_000,
            cols: 100,
            stride: 100,
        };
        assert_eq!(spans_per_task(&many, false), usize::MAX);
        if rayon::current_num_threads() > 1 {
            assert_eq!(spans_per_task(&many, true), VALUES_PER_TASK / 100);
        }
        let offsets = [5, 5, 9];
        assert_eq!(total_len(&Spans::Offsets(&offsets)), 4);
        assert_eq!(total_len(&Spans::Offsets(&[])), 0);
    }
}
