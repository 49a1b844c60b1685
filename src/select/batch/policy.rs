//! The NaN policy of a batch, applied to what a backend returns: backends select and take in the
//! full key order (NaN last, or below every number where the order says so) and count each
//! span's NaNs; this decides whether the result stands.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::batch::error::{BatchError, Place};
use crate::select::batch::spans::{SpanRanks, Spans};
use crate::select::input::Input;
use crate::select::NanPolicy;

/// Checks a selection under `policy`: under `Error` no span may hold a NaN; under `Omit` every
/// rank must be below the number of non-NaN values of its span (the values of such ranks in the
/// full order are the answers, since NaNs order last).
pub(crate) fn check_selection<T: Element>(
    policy: NanPolicy,
    input: Input<'_, T>,
    spans: &Spans<'_>,
    ranks: &SpanRanks<'_>,
    nan_counts: &[usize],
) -> Result<()> {
    apply(policy, input, spans, nan_counts, |s, nans| {
        if nans == 0 {
            return Ok(());
        }
        let n = spans.len_of(s) - nans;
        let too_high = match *ranks {
            SpanRanks::OnePerSpan(ranks) => Some(ranks[s]).filter(|&k| k >= n),
            SpanRanks::Same(ranks) => ranks.iter().copied().find(|&k| k >= n),
        };
        match too_high {
            Some(k) => Err(Error::RankOutOfRange { k, n }),
            None => Ok(()),
        }
    })
}

/// Checks a top-k (or the support of a threshold) under `policy`: under `Error` no span may
/// hold a NaN; under `Omit` every span must hold at least `k` values that are not NaN (so that
/// no NaN was taken).
pub(crate) fn check_taken<T: Element>(
    policy: NanPolicy,
    input: Input<'_, T>,
    spans: &Spans<'_>,
    k: usize,
    nan_counts: &[usize],
) -> Result<()> {
    apply(policy, input, spans, nan_counts, |s, nans| {
        let numbers = spans.len_of(s) - nans;
        if numbers < k {
            return Err(too_few(spans, s, k, numbers, true));
        }
        Ok(())
    })
}

/// Applies `policy` to a batch whose span `s` holds `nan_counts[s]` NaNs: under `Error` no span
/// may hold one; under `Omit` each span, in order, must pass `omit(s, nans)`; `Last` takes all.
fn apply<T: Element>(
    policy: NanPolicy,
    input: Input<'_, T>,
    spans: &Spans<'_>,
    nan_counts: &[usize],
    mut omit: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    match policy {
        NanPolicy::Error => refuse_nans(input, spans, nan_counts),
        NanPolicy::Omit => nan_counts
            .iter()
            .enumerate()
            .try_for_each(|(s, &nans)| omit(s, nans)),
        NanPolicy::Last => Ok(()),
    }
}

/// Checks that `k` values can be taken from every span: `k >= 1` and no span shorter.
pub(crate) fn check_k(spans: &Spans<'_>, k: usize) -> Result<()> {
    if k == 0 {
        return Err(BatchError::ZeroK.into());
    }
    if spans.count() > 0 && spans.min_len() < k {
        let s = (0..spans.count())
            .find(|&s| spans.len_of(s) < k)
            .expect("a span shorter than k");
        return Err(too_few(spans, s, k, spans.len_of(s), false));
    }
    Ok(())
}

/// The error for span `s` holding only `have` values (those that are not NaN when `not_nan`)
/// where `k` are taken.
fn too_few(spans: &Spans<'_>, s: usize, k: usize, have: usize, not_nan: bool) -> Error {
    let place = match spans {
        Spans::Rows { rows: 1, .. } => Place::Input,
        Spans::Rows { .. } => Place::Row(s),
        Spans::Offsets(_) => Place::Segment(s),
    };
    BatchError::TooFewValues {
        k,
        place,
        have,
        not_nan,
    }
    .into()
}

/// `Error::NanInInput` when any span holds a NaN.
fn refuse_nans<T: Element>(
    input: Input<'_, T>,
    spans: &Spans<'_>,
    nan_counts: &[usize],
) -> Result<()> {
    let count: usize = nan_counts.iter().sum();
    if count == 0 {
        return Ok(());
    }
    Err(Error::NanInInput {
        count,
        first_index: first_nan(input, spans, nan_counts)?,
    })
}

/// The index in the data of the first NaN of the spans (`usize::MAX` if there is none); a
/// device buffer is copied to the host to find it.
fn first_nan<T: Element>(
    input: Input<'_, T>,
    spans: &Spans<'_>,
    nan_counts: &[usize],
) -> Result<usize> {
    let host;
    let data = match input {
        Input::Host(data) => data,
        Input::Device(buf) => {
            host = buf.to_host()?;
            &host[..]
        }
    };
    let Some(s) = nan_counts.iter().position(|&c| c > 0) else {
        return Ok(usize::MAX);
    };
    let range = spans.span(s);
    Ok(data[range.clone()]
        .iter()
        .position(|x| x.is_nan())
        .map_or(usize::MAX, |i| range.start + i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omit_checks_ranks_against_the_numbers() {
        let data = [1.0, f64::NAN, 2.0, 3.0, f64::NAN, f64::NAN];
        let offsets = [0, 3, 6];
        let spans = Spans::Offsets(&offsets);
        let nans = [1, 2];
        let input = Input::Host(&data);
        let ok = SpanRanks::OnePerSpan(&[1, 0]);
        assert!(check_selection(NanPolicy::Omit, input, &spans, &ok, &nans).is_ok());
        assert!(check_selection(NanPolicy::Last, input, &spans, &ok, &nans).is_ok());
        let high = SpanRanks::Same(&[0, 1]);
        assert!(matches!(
            check_selection(NanPolicy::Omit, input, &spans, &high, &nans),
            Err(Error::RankOutOfRange { k: 1, n: 1 })
        ));
        assert!(matches!(
            check_selection(NanPolicy::Error, input, &spans, &ok, &nans),
            Err(Error::NanInInput {
                count: 3,
                first_index: 1
            })
        ));
        assert!(matches!(
            check_selection(NanPolicy::Error, input, &spans, &ok, &[0, 2]),
            Err(Error::NanInInput {
                count: 2,
                first_index: 4
            })
        ));
        assert!(check_taken(NanPolicy::Omit, input, &spans, 1, &nans).is_ok());
        let e = check_taken(NanPolicy::Omit, input, &spans, 2, &nans).unwrap_err();
        assert!(e.to_string().contains("segment 1"), "{e}");
    }

    #[test]
    fn k_is_one_to_every_length() {
        let rows = Spans::Rows {
            rows: 2,
            cols: 3,
            stride: 3,
        };
        assert!(check_k(&rows, 0).is_err());
        assert!(check_k(&rows, 3).is_ok());
        let e = check_k(&rows, 4).unwrap_err();
        assert!(e.to_string().contains("row 0 holds 3"), "{e}");
        let one = Spans::Rows {
            rows: 1,
            cols: 2,
            stride: 2,
        };
        assert!(check_k(&one, 5)
            .unwrap_err()
            .to_string()
            .contains("the input holds 2"));
        assert!(check_k(&Spans::Offsets(&[0]), 5).is_ok());
    }
}
