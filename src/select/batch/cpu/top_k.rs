//! Top-k on the CPU: per span, the k-th priority by selection on a copy of the priorities, then
//! one pass in index order that takes every value of a higher priority and the first of equal
//! priority until `k` are taken (so ties go to the lower index); a sort of the `k` taken when
//! sorted output is asked for.

use rayon::prelude::*;

use super::{long, spans_per_task};
use crate::element::{Element, RadixKey};
use crate::select::batch::priority::priority;
use crate::select::batch::spans::{KeyOrder, Spans, TopKSpans};
use crate::select::cpu;
use crate::select::host::chunk_len;

/// The workspace of one thread, reused from span to span.
struct Scratch<K> {
    /// The priorities of a span.
    keys: Vec<K>,
    /// The taken values' priorities and indices, for sorting.
    pairs: Vec<(K, usize)>,
}

impl<K> Default for Scratch<K> {
    fn default() -> Self {
        Scratch {
            keys: Vec::new(),
            pairs: Vec::new(),
        }
    }
}

/// The first `k` values of every span of `data` in `order`, with their indices inside their
/// spans (checked spans, each at least `k` long), row-major; and each span's NaN count.
pub(super) fn top_k_spans<T: Element>(
    data: &[T],
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
    sorted: bool,
    parallel: bool,
) -> TopKSpans<T> {
    let count = spans.count();
    let mut values = vec![T::default(); count * k];
    let mut indices = vec![0usize; count * k];
    let mut nan_counts = vec![0usize; count];
    if k == 0 {
        for (s, nans) in nan_counts.iter_mut().enumerate() {
            *nans = data[spans.span(s)].iter().filter(|x| x.is_nan()).count();
        }
        return TopKSpans {
            values,
            indices,
            nan_counts,
        };
    }
    // Short spans, shared out among threads when the batch is large (long ones are skipped).
    values
        .par_chunks_mut(k)
        .zip(indices.par_chunks_mut(k))
        .zip(nan_counts.par_iter_mut())
        .enumerate()
        .with_min_len(spans_per_task(&spans, parallel))
        .for_each_init(Scratch::default, |scratch, (s, ((out_v, out_i), nans))| {
            let span = &data[spans.span(s)];
            if !long(span.len(), parallel) {
                *nans = top_k_short(span, k, order, sorted, scratch, out_v, out_i);
            }
        });
    // Long spans, one after another, each by several threads.
    for s in 0..count {
        let span = &data[spans.span(s)];
        if long(span.len(), parallel) {
            let out = s * k..(s + 1) * k;
            nan_counts[s] = top_k_long(
                span,
                k,
                order,
                sorted,
                &mut values[out.clone()],
                &mut indices[out],
            );
        }
    }
    TopKSpans {
        values,
        indices,
        nan_counts,
    }
}

/// Orders `(priority, index)` pairs as the values are taken: priority descending, then index.
fn taken_first<K: Ord>(a: &(K, usize), b: &(K, usize)) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Top-k of one span by one thread into `out_v` and `out_i`; returns its NaN count.
fn top_k_short<T: Element>(
    span: &[T],
    k: usize,
    order: KeyOrder,
    sorted: bool,
    scratch: &mut Scratch<T::Key>,
    out_v: &mut [T],
    out_i: &mut [usize],
) -> usize {
    debug_assert!(k >= 1 && k <= span.len());
    let keys = &mut scratch.keys;
    keys.clear();
    let mut nans = 0;
    for &x in span {
        nans += x.is_nan() as usize;
        keys.push(priority(x, order));
    }
    // The k-th priority from the top, and how many values of that priority are taken.
    let (_, &mut threshold, above) = keys.select_nth_unstable(span.len() - k);
    let equal = k - above.iter().filter(|&&p| p > threshold).count();
    let taken = take(span, 0, order, threshold, equal, out_v, out_i);
    debug_assert_eq!(taken, k);
    if sorted {
        let pairs = &mut scratch.pairs;
        pairs.clear();
        pairs.extend(out_i.iter().map(|&i| (priority(span[i], order), i)));
        pairs.sort_unstable_by(taken_first);
        for (j, &(_, i)) in pairs.iter().enumerate() {
            out_i[j] = i;
            out_v[j] = span[i];
        }
    }
    nans
}

/// Takes, in index order, the values of `values` of a priority above `threshold` and the first
/// `equal` of priority `threshold` into `out_v`, their indices (from `base`) into `out_i`, until
/// these are full; returns how many it took.
fn take<T: Element>(
    values: &[T],
    base: usize,
    order: KeyOrder,
    threshold: T::Key,
    mut equal: usize,
    out_v: &mut [T],
    out_i: &mut [usize],
) -> usize {
    let mut j = 0;
    for (i, &x) in values.iter().enumerate() {
        let p = priority(x, order);
        if p > threshold || (p == threshold && equal > 0) {
            if p == threshold {
                equal -= 1;
            }
            out_v[j] = x;
            out_i[j] = base + i;
            j += 1;
            if j == out_v.len() {
                break;
            }
        }
    }
    j
}

/// The priority of ascending rank `rank` among the priorities of a long `span` (which holds
/// `nans` NaNs), by the CPU's automatic selection (Floyd–Rivest: one pass, several threads).
///
/// For the orders by value the priority is a monotone function of the key, so the value of
/// the matching rank is selected in the span itself; magnitudes are first computed by several
/// threads as unsigned integers of the key's width.
fn kth_priority<T: Element>(
    span: &[T],
    rank: usize,
    order: KeyOrder,
    nans: usize,
    chunk: usize,
) -> T::Key {
    let n = span.len();
    let value_of_rank = |r: usize| cpu::auto_multiselect(span, &[r], true)[0];
    match order {
        KeyOrder::Largest { nan_low: false } => value_of_rank(rank).to_key(),
        // The NaNs, with the lowest priority, are the first `nans` ranks of the priorities and
        // the last of the key order.
        KeyOrder::Largest { nan_low: true } if rank < nans => T::Key::MIN,
        KeyOrder::Largest { nan_low: true } => value_of_rank(rank - nans).to_key(),
        KeyOrder::Smallest => priority(value_of_rank(n - 1 - rank), order),
        KeyOrder::LargestMagnitude { .. } => {
            if T::Key::BITS == 32 {
                kth_magnitude::<T, u32>(span, rank, order, chunk)
            } else {
                kth_magnitude::<T, u64>(span, rank, order, chunk)
            }
        }
    }
}

/// [`kth_priority`] of a magnitude order, the priorities held as `W` (the unsigned integer of
/// the key's width, whose key is itself, so that `W` orders like the priorities).
fn kth_magnitude<T: Element, W: Element>(
    span: &[T],
    rank: usize,
    order: KeyOrder,
    chunk: usize,
) -> T::Key {
    let priorities: Vec<W> = span
        .par_iter()
        .with_min_len(chunk)
        .map(|&x| W::from_key(W::Key::from_u64(priority(x, order).to_u64())))
        .collect();
    let kth = cpu::auto_multiselect(&priorities, &[rank], true)[0];
    T::Key::from_u64(kth.to_key().to_u64())
}

/// Top-k of one long span by several threads into `out_v` and `out_i`; returns its NaN count.
///
/// The k-th priority is selected ([`kth_priority`]); chunks of the span count the values above
/// and equal to it; the equal values are allotted to the chunks in index order, and every chunk
/// writes its part of the output.
fn top_k_long<T: Element>(
    span: &[T],
    k: usize,
    order: KeyOrder,
    sorted: bool,
    out_v: &mut [T],
    out_i: &mut [usize],
) -> usize {
    let n = span.len();
    let chunk = chunk_len(n);
    let nans = if T::DTYPE.is_float() {
        span.par_chunks(chunk)
            .map(|c| c.iter().filter(|x| x.is_nan()).count())
            .sum()
    } else {
        0
    };
    let threshold = kth_priority(span, n - k, order, nans, chunk);
    let counts: Vec<(usize, usize)> = span
        .par_chunks(chunk)
        .map(|c| {
            c.iter().fold((0, 0), |(above, equal), &x| {
                let p = priority(x, order);
                (
                    above + (p > threshold) as usize,
                    equal + (p == threshold) as usize,
                )
            })
        })
        .collect();
    let above: usize = counts.iter().map(|c| c.0).sum();
    let mut equal_left = k - above;
    // Per chunk: the equal values it takes, and its part of the output.
    let mut takes = Vec::with_capacity(counts.len());
    let mut parts = Vec::with_capacity(counts.len());
    let (mut rest_v, mut rest_i) = (&mut *out_v, &mut *out_i);
    for &(above, equal) in &counts {
        let equal_taken = equal.min(equal_left);
        equal_left -= equal_taken;
        takes.push(equal_taken);
        let (part_v, tail_v) = std::mem::take(&mut rest_v).split_at_mut(above + equal_taken);
        let (part_i, tail_i) = std::mem::take(&mut rest_i).split_at_mut(above + equal_taken);
        parts.push((part_v, part_i));
        rest_v = tail_v;
        rest_i = tail_i;
    }
    span.par_chunks(chunk)
        .zip(parts)
        .zip(takes)
        .enumerate()
        .for_each(|(c, ((values, (part_v, part_i)), equal))| {
            let taken = take(values, c * chunk, order, threshold, equal, part_v, part_i);
            debug_assert_eq!(taken, part_v.len());
        });
    if sorted {
        let mut pairs: Vec<(T::Key, usize)> = out_i
            .par_iter()
            .map(|&i| (priority(span[i], order), i))
            .collect();
        pairs.par_sort_unstable_by(taken_first);
        out_v
            .par_iter_mut()
            .zip(out_i.par_iter_mut())
            .zip(pairs.par_iter())
            .for_each(|((v, i), &(_, index))| {
                *i = index;
                *v = span[index];
            });
    }
    nans
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;
    use crate::select::batch::cpu::LONG_SPAN;
    use crate::select::host::testing::nans_and_zeros;

    /// The sort-based top-k of one span: (priority, index) pairs sorted as taken.
    fn reference<T: Element>(span: &[T], k: usize, order: KeyOrder, sorted: bool) -> Vec<usize> {
        let mut pairs: Vec<(T::Key, usize)> = span
            .iter()
            .enumerate()
            .map(|(i, &x)| (priority(x, order), i))
            .collect();
        pairs.sort_unstable_by(taken_first);
        let mut taken: Vec<usize> = pairs[..k].iter().map(|p| p.1).collect();
        if !sorted {
            taken.sort_unstable();
        }
        taken
    }

    fn check<T: Element>(data: &[T], spans: Spans<'_>, k: usize, parallel: bool) {
        let orders = [
            KeyOrder::Largest { nan_low: false },
            KeyOrder::Largest { nan_low: true },
            KeyOrder::Smallest,
            KeyOrder::LargestMagnitude { nan_low: false },
            KeyOrder::LargestMagnitude { nan_low: true },
        ];
        for order in orders {
            for sorted in [false, true] {
                let got = top_k_spans(data, spans, k, order, sorted, parallel);
                for s in 0..spans.count() {
                    let span = &data[spans.span(s)];
                    let want = reference(span, k, order, sorted);
                    let out = s * k..(s + 1) * k;
                    assert_eq!(
                        &got.indices[out.clone()],
                        &want[..],
                        "{order:?} {sorted} {s}"
                    );
                    for (v, &i) in got.values[out].iter().zip(&want) {
                        assert_eq!(v.to_key(), span[i].to_key());
                    }
                    let nans = span.iter().filter(|x| x.is_nan()).count();
                    assert_eq!(got.nan_counts[s], nans);
                }
            }
        }
    }

    #[test]
    fn ties_go_to_the_lower_index() {
        let data = [2.0f32, -2.0, 2.0, f32::NAN, 0.0, -0.0, 2.0, f32::NAN];
        let spans = Spans::Rows {
            rows: 1,
            cols: 8,
            stride: 8,
        };
        let magnitude = KeyOrder::LargestMagnitude { nan_low: true };
        let cases: [(usize, KeyOrder, bool, &[usize]); 5] = [
            (2, KeyOrder::Largest { nan_low: true }, false, &[0, 2]),
            (3, KeyOrder::Largest { nan_low: false }, true, &[3, 7, 0]),
            (5, KeyOrder::Smallest, true, &[1, 5, 4, 0, 2]),
            (4, magnitude, true, &[0, 1, 2, 6]),
            (8, magnitude, true, &[0, 1, 2, 6, 4, 5, 3, 7]),
        ];
        for (k, order, sorted, want) in cases {
            let got = top_k_spans(&data, spans, k, order, sorted, false);
            assert_eq!(got.indices, want, "k {k}, {order:?}, sorted {sorted}");
            assert_eq!(got.nan_counts, vec![2]);
        }
        for k in 1..=8 {
            check(&data, spans, k, false);
        }
    }

    #[test]
    fn short_spans_of_every_kind() {
        let mut rng = SplitMix64::new(11);
        let data: Vec<i64> = (0..5000)
            .map(|_| match rng.below(6) {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => rng.below(20) as i64 - 10,
            })
            .collect();
        let spans = Spans::Rows {
            rows: 40,
            cols: 100,
            stride: 120,
        };
        for k in [1, 7, 100] {
            check(&data, spans, k, true);
        }
        let offsets = [0, 30, 60, 100];
        check(&data, Spans::Offsets(&offsets), 30, false);
    }

    #[test]
    fn long_spans_on_threads() {
        let n = LONG_SPAN + 12_345;
        let data: Vec<f32> = nans_and_zeros(n, 1000, 4000, 5);
        let spans = Spans::Rows {
            rows: 1,
            cols: n,
            stride: n,
        };
        for k in [1000, n - 5] {
            check(&data, spans, k, true);
        }
    }
}
