//! Batched selection on the CPU: per span, a selection on a copy of its keys (short spans), or
//! the crate's CPU multiselection on the span itself (long spans).

use rayon::prelude::*;

use super::{long, spans_per_task, LONG_SPAN};
use crate::element::Element;
use crate::select::batch::spans::{SpanRanks, SpanSelection, Spans};
use crate::select::quick_multiselect::multiselect_keys;
use crate::select::{cpu, nan};

/// The ranks of every span, prepared once for the whole batch.
enum Plan<'a> {
    /// `ranks[s]` of span `s`.
    One(&'a [usize]),
    /// The same ranks in every span: as given, sorted without repeats, and the position in
    /// `unique` of each rank given.
    Same {
        ranks: &'a [usize],
        unique: Vec<usize>,
        slot: Vec<usize>,
    },
}

impl<'a> Plan<'a> {
    fn new(ranks: SpanRanks<'a>) -> Plan<'a> {
        match ranks {
            SpanRanks::OnePerSpan(ranks) => Plan::One(ranks),
            SpanRanks::Same(ranks) => {
                let mut unique = ranks.to_vec();
                unique.sort_unstable();
                unique.dedup();
                let slot = ranks
                    .iter()
                    .map(|k| unique.binary_search(k).expect("a rank of the list"))
                    .collect();
                Plan::Same {
                    ranks,
                    unique,
                    slot,
                }
            }
        }
    }

    /// The ranks of span `s`, as given.
    fn ranks_of(&self, s: usize) -> &[usize] {
        match self {
            Plan::One(ranks) => &ranks[s..s + 1],
            Plan::Same { ranks, .. } => ranks,
        }
    }
}

/// The values of `ranks` in every span of `data` (checked spans, every rank below its span's
/// length), row-major, and each span's NaN count.
pub(super) fn select_spans<T: Element>(
    data: &[T],
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
    parallel: bool,
) -> SpanSelection<T> {
    let count = spans.count();
    let m = ranks.per_span();
    let mut nan_counts = vec![0usize; count];
    if m == 0 {
        // No ranks: only the NaN counts (for the caller's NaN policy).
        nan_counts
            .par_iter_mut()
            .enumerate()
            .with_min_len(spans_per_task(&spans, parallel))
            .for_each(|(s, nans)| {
                *nans = nan::scan_host(&data[spans.span(s)], false).count;
            });
        return SpanSelection {
            values: Vec::new(),
            nan_counts,
        };
    }
    let plan = Plan::new(ranks);
    let mut values = vec![T::default(); count * m];
    // Short spans, shared out among threads when the batch is large (long ones are skipped).
    values
        .par_chunks_mut(m)
        .zip(nan_counts.par_iter_mut())
        .enumerate()
        .with_min_len(spans_per_task(&spans, parallel))
        .for_each_init(Vec::new, |keys, (s, (out, nans))| {
            let span = &data[spans.span(s)];
            if span.len() < LONG_SPAN {
                *nans = select_short(span, &plan, s, keys, out);
            }
        });
    // Long spans, one after another, each by the crate's multiselection (several threads when
    // allowed).
    for s in 0..count {
        let span = &data[spans.span(s)];
        if span.len() >= LONG_SPAN {
            let out = &mut values[s * m..(s + 1) * m];
            nan_counts[s] = select_long(span, plan.ranks_of(s), parallel, out);
        }
    }
    SpanSelection { values, nan_counts }
}

/// The values of span `s`'s ranks in `span` into `out`, selected on a copy of its keys in
/// `keys` (reused); returns the span's NaN count.
fn select_short<T: Element>(
    span: &[T],
    plan: &Plan<'_>,
    s: usize,
    keys: &mut Vec<T::Key>,
    out: &mut [T],
) -> usize {
    keys.clear();
    let mut nans = 0;
    for &x in span {
        nans += x.is_nan() as usize;
        keys.push(x.to_key());
    }
    match plan {
        Plan::One(ranks) => {
            let (_, kth, _) = keys.select_nth_unstable(ranks[s]);
            out[0] = T::from_key(*kth);
        }
        Plan::Same { unique, .. } if unique.len() == 1 => {
            let (_, kth, _) = keys.select_nth_unstable(unique[0]);
            out.fill(T::from_key(*kth));
        }
        Plan::Same { unique, slot, .. } => {
            let found = multiselect_keys(keys, unique, false);
            for (o, &j) in out.iter_mut().zip(slot) {
                *o = T::from_key(found[j]);
            }
        }
    }
    nans
}

/// The values of `ranks` (as given) in a long `span` into `out`, by the CPU's automatic
/// multiselection; returns the span's NaN count.
fn select_long<T: Element>(span: &[T], ranks: &[usize], parallel: bool, out: &mut [T]) -> usize {
    let (values, counted) =
        cpu::auto_multiselect_counting_nans(span, ranks, long(span.len(), parallel));
    out.copy_from_slice(&values);
    counted.unwrap_or_else(|| nan::scan_host(span, parallel).count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;
    use crate::select::host::testing::nans_and_zeros;

    /// The sort-based values of `ranks` of every span.
    fn reference<T: Element>(data: &[T], spans: Spans<'_>, ranks: SpanRanks<'_>) -> Vec<T> {
        let mut out = Vec::new();
        for s in 0..spans.count() {
            let mut keys: Vec<T::Key> = data[spans.span(s)].iter().map(|x| x.to_key()).collect();
            keys.sort_unstable();
            let list: Vec<usize> = match ranks {
                SpanRanks::OnePerSpan(r) => vec![r[s]],
                SpanRanks::Same(r) => r.to_vec(),
            };
            out.extend(list.iter().map(|&k| T::from_key(keys[k])));
        }
        out
    }

    fn same_bits(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    #[test]
    fn short_and_long_spans_match_the_sort() {
        let n = LONG_SPAN + 1000;
        let data: Vec<f64> = nans_and_zeros(n, 97, 1000, 7);
        // Segments: empty, short, one long, short.
        let offsets = [0, 0, 10, 10 + LONG_SPAN, n];
        let spans = Spans::Offsets(&offsets);
        for parallel in [false, true] {
            let got = select_spans(&data, spans, SpanRanks::Same(&[]), parallel);
            assert!(got.values.is_empty());
            let want_nans: Vec<usize> = (0..4)
                .map(|s| data[spans.span(s)].iter().filter(|x| x.is_nan()).count())
                .collect();
            assert_eq!(got.nan_counts, want_nans);
            let row_spans = Spans::Rows {
                rows: 3,
                cols: 700,
                stride: 800,
            };
            for ranks in [
                SpanRanks::OnePerSpan(&[0, 699, 350]),
                SpanRanks::Same(&[5, 0, 699, 5]),
                SpanRanks::Same(&[3]),
            ] {
                let got = select_spans(&data, row_spans, ranks, parallel);
                assert!(same_bits(&got.values, &reference(&data, row_spans, ranks)));
            }
            let segs = Spans::Offsets(&offsets[1..]);
            for ranks in [
                SpanRanks::OnePerSpan(&[9, LONG_SPAN - 1, 0]),
                SpanRanks::Same(&[9, 0, 4, 4]),
            ] {
                let got = select_spans(&data, segs, ranks, parallel);
                assert!(same_bits(&got.values, &reference(&data, segs, ranks)));
                assert_eq!(got.nan_counts, want_nans[1..].to_vec());
            }
        }
    }

    #[test]
    fn many_short_rows_on_threads() {
        let mut rng = SplitMix64::new(3);
        let (rows, cols) = (3000, 50);
        let data: Vec<i32> = (0..rows * cols)
            .map(|_| rng.below(1 << 20) as i32 - (1 << 19))
            .collect();
        let spans = Spans::Rows {
            rows,
            cols,
            stride: cols,
        };
        let per_row: Vec<usize> = (0..rows).map(|r| r % cols).collect();
        for ranks in [
            SpanRanks::OnePerSpan(&per_row),
            SpanRanks::Same(&[49, 0, 25]),
        ] {
            let got = select_spans(&data, spans, ranks, true);
            assert_eq!(got.values, reference(&data, spans, ranks));
            assert!(got.nan_counts.iter().all(|&c| c == 0));
        }
    }
}
