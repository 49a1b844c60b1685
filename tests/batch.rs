//! Batched selection, top-k with indices and hard thresholding, on every backend, against a
//! sort-based reference written here: per row or segment, the keys sorted for selection, and
//! `(key, index)` or `(magnitude, index)` pairs sorted for top-k and thresholding.
//!
//! Every element type; rows that are the cases of the adversarial corpus (all equal, few
//! distinct, ±inf, signed zeros, NaN, ...), rows of length 0 and 1, strides longer than rows
//! (the padding holds NaN or the type's maximum, never to be seen), segments of uneven lengths
//! (empty ones too); every NaN policy; k = 1 and k = n; the errors. On CUDA every operation also
//! runs on a device buffer and must agree with the host form.

#[macro_use]
mod common;

use std::fmt::Debug;
use std::ops::Range;

use common::*;
use kselect::select::batch::Place;
use kselect::{
    BatchError, BatchRank, DeviceBuffer, Element, Error, Matrix, NanPolicy, RadixKey, Result,
    Segments, Selector, Threshold, TopK, TopKOptions, TopKOrder, Values,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const POLICIES: [NanPolicy; 3] = [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last];
const ORDERS: [TopKOrder; 2] = [TopKOrder::Largest, TopKOrder::Smallest];

// ---------------------------------------------------------------------------------------------
// Layouts and the reference
// ---------------------------------------------------------------------------------------------

/// The shape of a matrix's rows: `rows` rows of `cols` values, `stride` apart.
#[derive(Clone, Copy, Debug)]
struct Rows {
    rows: usize,
    cols: usize,
    stride: usize,
}

impl Rows {
    fn new(rows: usize, cols: usize) -> Rows {
        Rows {
            rows,
            cols,
            stride: cols,
        }
    }

    fn with_stride(self, stride: usize) -> Rows {
        Rows { stride, ..self }
    }

    /// The matrix of this shape over `data`.
    fn of<'a, T: Element>(&self, data: impl Into<Values<'a, T>>) -> Matrix<'a, T> {
        Matrix::new(data, self.rows, self.cols).with_stride(self.stride)
    }
}

/// Rows of a matrix or segments given by offsets.
#[derive(Clone, Debug)]
enum Layout {
    Rows(Rows),
    Segments(Vec<usize>),
}

impl Layout {
    /// The ranges of the rows or segments in the data.
    fn spans(&self) -> Vec<Range<usize>> {
        match self {
            Layout::Rows(rows) => (0..rows.rows)
                .map(|r| r * rows.stride..r * rows.stride + rows.cols)
                .collect(),
            Layout::Segments(offsets) => offsets.windows(2).map(|w| w[0]..w[1]).collect(),
        }
    }
}

/// What an operation must return.
#[derive(Clone, Debug, PartialEq)]
enum Expect<V> {
    Ok(V),
    /// `Error::NanInInput` with this many NaNs, the first at this index of the data.
    Nan {
        count: usize,
        first: usize,
    },
    /// `Error::RankOutOfRange { k, n }`.
    Rank {
        k: usize,
        n: usize,
    },
    /// `Error::Batch`.
    Invalid,
}

/// The NaNs of the spans: how many, and the index of the first.
fn nans_in<T: Element>(data: &[T], spans: &[Range<usize>]) -> Option<(usize, usize)> {
    let count: usize = spans
        .iter()
        .map(|r| data[r.clone()].iter().filter(|x| x.is_nan()).count())
        .sum();
    let first = spans.iter().find_map(|r| {
        data[r.clone()]
            .iter()
            .position(|x| x.is_nan())
            .map(|i| r.start + i)
    })?;
    Some((count, first))
}

/// One span over all of `n` values.
fn whole(n: usize) -> Vec<Range<usize>> {
    std::iter::once(0..n).collect()
}

/// The values ranks refer to in a span under `policy` (its numbers under `Omit`).
fn available<T: Element>(span: &[T], policy: NanPolicy) -> usize {
    match policy {
        NanPolicy::Omit => span.iter().filter(|x| !x.is_nan()).count(),
        _ => span.len(),
    }
}

/// The sort-based reference of a batch under one NaN policy, sorted once: per span the keys
/// ranks refer to, and the indices of the values top-k may take (NaNs left out under `Omit`)
/// sorted by `(key, index)`, largest first and smallest first.
struct Sorted<T: Element> {
    spans: Vec<Range<usize>>,
    policy: NanPolicy,
    /// The NaNs of the spans: how many, and the index in the data of the first.
    nans: Option<(usize, usize)>,
    keys: Vec<Reference<T>>,
    largest: Vec<Vec<usize>>,
    smallest: Vec<Vec<usize>>,
}

impl<T: TestElement> Sorted<T> {
    fn new(data: &[T], spans: Vec<Range<usize>>, policy: NanPolicy) -> Self {
        let mut keys = Vec::new();
        let (mut largest, mut smallest) = (Vec::new(), Vec::new());
        for r in &spans {
            let span = &data[r.clone()];
            keys.push(if policy == NanPolicy::Omit {
                Reference::without_nan(span)
            } else {
                Reference::new(span)
            });
            let mut pairs: Vec<(u64, usize)> = span
                .iter()
                .enumerate()
                .filter(|(_, x)| !(policy == NanPolicy::Omit && x.is_nan()))
                .map(|(i, x)| (x.to_key().to_u64(), i))
                .collect();
            pairs.sort_unstable();
            smallest.push(pairs.iter().map(|p| p.1).collect());
            for p in &mut pairs {
                p.0 = u64::MAX - p.0;
            }
            pairs.sort_unstable();
            largest.push(pairs.iter().map(|p| p.1).collect());
        }
        Sorted {
            nans: nans_in(data, &spans),
            spans,
            policy,
            keys,
            largest,
            smallest,
        }
    }

    /// The expected keys of `ranks[s]` of every span `s`: ranks are checked against the spans'
    /// lengths first, then NaN under `Error`, then the numbers under `Omit`.
    fn select(&self, ranks: &[Vec<usize>]) -> Expect<Vec<T::Key>> {
        for (span, list) in self.spans.iter().zip(ranks) {
            if let Some(&k) = list.iter().find(|&&k| k >= span.len()) {
                return Expect::Rank { k, n: span.len() };
            }
        }
        if let (NanPolicy::Error, Some((count, first))) = (self.policy, self.nans) {
            return Expect::Nan { count, first };
        }
        let mut keys = Vec::new();
        for (reference, list) in self.keys.iter().zip(ranks) {
            if let Some(&k) = list.iter().find(|&&k| k >= reference.len()) {
                return Expect::Rank {
                    k,
                    n: reference.len(),
                };
            }
            keys.extend(list.iter().map(|&k| reference.key(k)));
        }
        Expect::Ok(keys)
    }

    /// The expected indices of a top-k of every span: `k` is checked against the spans'
    /// lengths first, then NaN under `Error`, then the numbers under `Omit`.
    fn top_k(&self, k: usize, options: TopKOptions) -> Expect<Vec<Vec<usize>>> {
        if k == 0 || self.spans.iter().any(|r| r.len() < k) {
            return Expect::Invalid;
        }
        if let (NanPolicy::Error, Some((count, first))) = (self.policy, self.nans) {
            return Expect::Nan { count, first };
        }
        let orders = match options.order {
            TopKOrder::Largest => &self.largest,
            TopKOrder::Smallest => &self.smallest,
        };
        if orders.iter().any(|o| o.len() < k) {
            return Expect::Invalid;
        }
        Expect::Ok(
            orders
                .iter()
                .map(|o| {
                    let mut taken = o[..k].to_vec();
                    if !options.sorted {
                        taken.sort_unstable();
                    }
                    taken
                })
                .collect(),
        )
    }
}

/// The magnitude of a value as an unsigned number: `|x|` (as the bits of a non-negative `f64`,
/// which order like the values) for floats, NaN above all; the absolute value for integers.
fn magnitude<T: TestElement>(x: T) -> u128 {
    if T::FLOAT {
        if x.is_nan() {
            u128::MAX
        } else {
            x.to_f64().abs().to_bits() as u128
        }
    } else if T::SIGNED {
        let shift = 64 - T::BITS;
        (((x.bits() << shift) as i64 >> shift) as i128).unsigned_abs()
    } else {
        x.bits() as u128
    }
}

/// The indices of an array that thresholding may keep, by magnitude descending then index
/// (NaNs left out under `Omit`).
fn magnitude_order<T: TestElement>(data: &[T], policy: NanPolicy) -> Vec<usize> {
    let mut pairs: Vec<(u128, usize)> = data
        .iter()
        .enumerate()
        .filter(|(_, x)| !(policy == NanPolicy::Omit && x.is_nan()))
        .map(|(i, &x)| (u128::MAX - magnitude(x), i))
        .collect();
    pairs.sort_unstable();
    pairs.into_iter().map(|p| p.1).collect()
}

/// The expected support (ascending) and threshold index of hard thresholding, from the
/// array's [`magnitude_order`].
fn expect_threshold<T: TestElement>(
    data: &[T],
    order: &[usize],
    k: usize,
    policy: NanPolicy,
) -> Expect<(Vec<usize>, usize)> {
    if k == 0 || k > data.len() {
        return Expect::Invalid;
    }
    if policy == NanPolicy::Error {
        if let Some((count, first)) = nans_in(data, &whole(data.len())) {
            return Expect::Nan { count, first };
        }
    }
    if order.len() < k {
        return Expect::Invalid;
    }
    let mut support = order[..k].to_vec();
    support.sort_unstable();
    Expect::Ok((support, order[k - 1]))
}

/// Asserts that `got` is what `want` says; `check` compares an `Ok` value.
#[track_caller]
fn assert_expected<V: Debug, W: Debug>(
    got: Result<V>,
    want: &Expect<W>,
    check: impl FnOnce(&V, &W),
    context: &dyn Fn() -> String,
) {
    match (got, want) {
        (Ok(v), Expect::Ok(w)) => check(&v, w),
        (Err(Error::NanInInput { count, first_index }), Expect::Nan { count: c, first })
            if count == *c && first_index == *first => {}
        (Err(Error::RankOutOfRange { k, n }), Expect::Rank { k: k2, n: n2 })
            if k == *k2 && n == *n2 => {}
        (Err(Error::Batch(_)), Expect::Invalid) => {}
        (got, want) => panic!("{}: got {got:?}, expected {want:?}", context()),
    }
}

// ---------------------------------------------------------------------------------------------
// The operations, on host data and (on CUDA) on a device buffer
// ---------------------------------------------------------------------------------------------

/// [`Batch::both`] of the call `rows` (the layout's rows bound to `$rows`) or `segments` (its
/// segments bound to `$segs`), each written once for the selector `$s` and the data `$d`: the
/// host data, then the device buffer.
macro_rules! by_layout {
    ($batch:expr, |$s:ident, $d:ident, $rows:ident, $segs:ident|
        rows: $on_rows:expr, segments: $on_segs:expr) => {
        match $batch.layout {
            Layout::Rows($rows) => $batch.both(|$s, $d| $on_rows, |$s, $d| $on_rows),
            Layout::Segments(offsets) => {
                let $segs = Segments::new(offsets);
                $batch.both(|$s, $d| $on_segs, |$s, $d| $on_segs)
            }
        }
    };
}

/// A selector, data and layout; on CUDA also the data in a device buffer.
struct Batch<'a, T: TestElement> {
    sel: Selector,
    data: &'a [T],
    buf: Option<DeviceBuffer<T>>,
    layout: &'a Layout,
}

impl<'a, T: TestElement> Batch<'a, T> {
    fn new(sel: &Selector, data: &'a [T], layout: &'a Layout) -> Self {
        let buf = sel
            .device()
            .is_cuda()
            .then(|| DeviceBuffer::from_host(sel.device(), data).expect("upload the data"));
        Batch {
            sel: sel.clone(),
            data,
            buf,
            layout,
        }
    }

    fn policy(&mut self, policy: NanPolicy) {
        self.sel = self.sel.clone().nan_policy(policy);
    }

    /// The host form's result; on CUDA the device form must give the same.
    fn both<R: Debug>(
        &self,
        host: impl FnOnce(&Selector, &[T]) -> Result<R>,
        device: impl FnOnce(&Selector, &DeviceBuffer<T>) -> Result<R>,
    ) -> Result<R> {
        let got = host(&self.sel, self.data);
        if let Some(buf) = &self.buf {
            let on_device = device(&self.sel, buf);
            let same = match (&got, &on_device) {
                (Ok(a), Ok(b)) => format!("{a:?}") == format!("{b:?}"),
                (Err(a), Err(b)) => a.to_string() == b.to_string(),
                _ => false,
            };
            assert!(same, "host {got:?} != device {on_device:?}");
            assert!(
                same_bits(&buf.to_host().expect("download"), self.data),
                "the device buffer was modified"
            );
        }
        got
    }

    fn select(&self, ranks: BatchRank<'_>) -> Result<Vec<T>> {
        by_layout!(self, |s, d, rows, segs|
            rows: s.select_rows(rows.of(d), ranks),
            segments: s.select_segments(d, segs, ranks))
    }

    fn multiselect(&self, ranks: &[usize]) -> Result<Vec<T>> {
        by_layout!(self, |s, d, rows, segs|
            rows: s.multiselect_rows(rows.of(d), ranks),
            segments: s.multiselect_segments(d, segs, ranks))
    }

    fn top_k(&self, k: usize, options: TopKOptions) -> Result<TopK<T>> {
        match self.layout {
            Layout::Rows(rows) => self.both(
                |s, d| s.top_k_rows(rows.of(d), k, options),
                |s, b| s.top_k_rows_device(rows.of(b), k, options)?.to_host(),
            ),
            Layout::Segments(offsets) => {
                let segs = Segments::new(offsets);
                self.both(
                    |s, d| s.top_k_segments(d, segs, k, options),
                    |s, b| s.top_k_segments_device(b, segs, k, options)?.to_host(),
                )
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/// Checks a top-k result against the expected indices of each span.
#[track_caller]
fn check_top_k<T: TestElement>(
    got: &TopK<T>,
    want: &[Vec<usize>],
    data: &[T],
    spans: &[Range<usize>],
    k: usize,
    context: &dyn Fn() -> String,
) {
    assert_eq!((got.rows(), got.k()), (spans.len(), k), "{}", context());
    assert_eq!(got.values().len(), spans.len() * k, "{}", context());
    for (s, (span, want)) in spans.iter().zip(want).enumerate() {
        let (values, indices) = got.row(s);
        assert_eq!(indices, &want[..], "{}: span {s}", context());
        for (&v, &i) in values.iter().zip(want) {
            assert_key_eq(v, data[span.start + i].to_key(), &|| {
                format!("{}: span {s} index {i}", context())
            });
        }
    }
}

/// Checks every batched operation on a layout under `policy`: selection of `each[s]` in span
/// `s`, of each rank of `same` in every span and of all of `same` at once, and top-k for each
/// of `ks` in both orders, sorted and not.
fn check_ops<T: TestElement>(
    batch: &Batch<'_, T>,
    reference: &Sorted<T>,
    each: &[usize],
    same: &[usize],
    ks: &[usize],
    label: &str,
) {
    let data = batch.data;
    let spans = &reference.spans;
    let policy = reference.policy;
    let context = |what: &str| format!("{label} {:?} {policy:?}: {what}", batch.layout);
    let check_keys = |got: &Vec<T>, want: &Vec<T::Key>| {
        assert_eq!(got.len(), want.len(), "{}", context("length"));
        for (i, (&v, &w)) in got.iter().zip(want).enumerate() {
            assert_key_eq(v, w, &|| context(&format!("value {i}")));
        }
    };

    let lists: Vec<Vec<usize>> = each.iter().map(|&k| vec![k]).collect();
    let want = reference.select(&lists);
    let got = batch.select(BatchRank::Each(each));
    assert_expected(got, &want, check_keys, &|| {
        context(&format!("each {each:?}"))
    });

    for &k in same {
        let want = reference.select(&vec![vec![k]; spans.len()]);
        let got = batch.select(BatchRank::Same(k));
        assert_expected(got, &want, check_keys, &|| context(&format!("same {k}")));
    }
    let want = reference.select(&vec![same.to_vec(); spans.len()]);
    let got = batch.multiselect(same);
    assert_expected(got, &want, check_keys, &|| {
        context(&format!("multi {same:?}"))
    });

    for &k in ks {
        for order in ORDERS {
            for sorted in [false, true] {
                let options = TopKOptions { order, sorted };
                let want = reference.top_k(k, options);
                let what = || context(&format!("top {k} {options:?}"));
                let got = batch.top_k(k, options);
                assert_expected(
                    got,
                    &want,
                    |got, want| check_top_k(got, want, data, spans, k, &what),
                    &what,
                );
            }
        }
    }
}

/// Checks a layout under every policy with ranks and `k` chosen from what every span offers
/// (so that most operations succeed; spans without values make them fail as they must).
fn check_layout<T: TestElement>(sel: &Selector, data: &[T], layout: &Layout, label: &str) {
    let mut batch = Batch::new(sel, data, layout);
    let spans = layout.spans();
    for policy in POLICIES {
        batch.policy(policy);
        let avail: Vec<usize> = spans
            .iter()
            .map(|r| available(&data[r.clone()], policy))
            .collect();
        let min = avail.iter().copied().min().unwrap_or(0);
        let each: Vec<usize> = avail
            .iter()
            .enumerate()
            .map(|(s, &a)| match s % 3 {
                _ if a == 0 => 0,
                0 => 0,
                1 => a - 1,
                _ => a / 2,
            })
            .collect();
        let (mut same, mut ks) = if min == 0 {
            (vec![0], vec![1])
        } else {
            (scrambled_ranks(min), vec![1, min.div_ceil(2), min])
        };
        same.dedup();
        ks.dedup();
        let reference = Sorted::new(data, spans.clone(), policy);
        check_ops(&batch, &reference, &each, &same, &ks, label);
    }
}

/// A batch whose first span, `place`, is empty (on the host): its rank 0 is out of range, a
/// multiselection of no ranks is empty, and its top-1 has too few values.
fn check_first_empty<T: TestElement>(sel: &Selector, data: &[T], layout: &Layout, place: Place) {
    let batch = Batch {
        sel: sel.clone(),
        data,
        buf: None,
        layout,
    };
    assert_err!(
        batch.select(BatchRank::Same(0)),
        Error::RankOutOfRange { k: 0, n: 0 },
        "rank 0 of {place:?}, empty"
    );
    assert_eq!(batch.multiselect(&[]).unwrap(), Vec::<T>::new());
    assert_too_few_values(
        batch.top_k(1, TopKOrder::Largest.into()),
        (1, place, 0, false),
        &format!("top-1 of {place:?}, empty"),
    );
}

/// Asserts that `result` is `BatchError::TooFewValues` for `k` values of `place`, which holds
/// `have` values (numbers, where `not_nan`); `what` names the call.
#[track_caller]
fn assert_too_few_values<R: Debug>(
    result: Result<R>,
    (k, place, have, not_nan): (usize, Place, usize, bool),
    what: &str,
) {
    assert_err!(
        result,
        Error::Batch(BatchError::TooFewValues {
            k: got_k,
            place: got_place,
            have: got_have,
            not_nan: got_not_nan,
        }) if (got_k, got_place, got_have, got_not_nan) == (k, place, have, not_nan),
        "{what}"
    );
}

/// The pad value of strided rows: NaN for floats, the maximum for integers (so a row that read
/// its padding would select or take it).
fn pad<T: TestElement>() -> T {
    T::nan().unwrap_or_else(T::max_value)
}

/// `rows` laid out with `stride`, the padding filled with [`pad`]; no padding after the last.
fn strided<T: TestElement>(rows: &[Vec<T>], cols: usize, stride: usize) -> Vec<T> {
    let len = match rows.len() {
        0 => 0,
        n => (n - 1) * stride + cols,
    };
    let mut data = vec![pad::<T>(); len];
    for (r, row) in rows.iter().enumerate() {
        data[r * stride..r * stride + cols].copy_from_slice(row);
    }
    data
}

/// The corpus as rows: one case a row, for several row lengths and strides.
fn corpus_rows<T: TestElement>(sel: &Selector) {
    for cols in [1, 2, 3, 33, 100] {
        let cases = corpus::<T>(cols);
        let rows: Vec<Vec<T>> = cases.iter().map(|c| c.data.clone()).collect();
        for stride in [cols, cols + 3] {
            let data = strided(&rows, cols, stride);
            let layout = Layout::Rows(Rows::new(rows.len(), cols).with_stride(stride));
            check_layout(sel, &data, &layout, &format!("{} corpus rows", T::DTYPE));
        }
        // Rows without NaN, so that `Error` selects too.
        let clean: Vec<Vec<T>> = cases
            .iter()
            .filter(|c| !c.has_nan())
            .map(|c| c.data.clone())
            .collect();
        let data = strided(&clean, cols, cols + 1);
        let layout = Layout::Rows(Rows::new(clean.len(), cols).with_stride(cols + 1));
        check_layout(sel, &data, &layout, &format!("{} clean rows", T::DTYPE));
    }
}

/// The corpus as segments of uneven lengths (none empty), after some values that are not in
/// any segment.
fn corpus_segments<T: TestElement>(sel: &Selector) {
    let lengths = [1, 2, 3, 31, 33, 100, 7, 64, 5, 2];
    let mut data: Vec<T> = vec![pad::<T>(); 3];
    let mut offsets = vec![data.len()];
    for (i, name) in CASES.iter().enumerate() {
        if let Some(values) = generate::<T>(name, lengths[i % lengths.len()]) {
            data.extend(values);
            offsets.push(data.len());
        }
    }
    data.push(pad::<T>());
    let layout = Layout::Segments(offsets);
    check_layout(
        sel,
        &data,
        &layout,
        &format!("{} corpus segments", T::DTYPE),
    );
}

/// Top-k of a whole array and (hard) thresholding, for each case of the corpus.
fn corpus_arrays<T: TestElement>(sel: &Selector) {
    for n in [1, 2, 33, 257] {
        for case in corpus::<T>(n) {
            let label = case.label();
            check_array(sel, &case.data, &[1, n / 2, n], &label);
        }
    }
}

/// Checks `top_k` and thresholding of one array for each of `ks`, under every policy.
fn check_array<T: TestElement>(sel: &Selector, data: &[T], ks: &[usize], label: &str) {
    let buf = sel
        .device()
        .is_cuda()
        .then(|| DeviceBuffer::from_host(sel.device(), data).expect("upload"));
    let all = whole(data.len());
    for policy in POLICIES {
        let sel = sel.clone().nan_policy(policy);
        let reference = Sorted::new(data, all.clone(), policy);
        let magnitudes = magnitude_order(data, policy);
        for &k in ks {
            for order in ORDERS {
                for sorted in [false, true] {
                    let options = TopKOptions { order, sorted };
                    let what = || format!("{label} {policy:?}: top {k} {options:?}");
                    let want = reference.top_k(k, options);
                    let check = |got: &TopK<T>, want: &Vec<Vec<usize>>| {
                        check_top_k(got, want, data, &all, k, &what)
                    };
                    if let Some(buf) = &buf {
                        let got = sel.top_k_device(buf, k, options).and_then(|t| t.to_host());
                        assert_expected(got, &want, check, &what);
                    }
                    assert_expected(sel.top_k(data, k, options), &want, check, &what);
                }
            }
            let want = expect_threshold(data, &magnitudes, k, policy);
            check_threshold(&sel, data, buf.as_ref(), k, &want, label);
        }
    }
}

/// Checks `threshold` and `hard_threshold` (and their device forms on CUDA) of `data`.
fn check_threshold<T: TestElement>(
    sel: &Selector,
    data: &[T],
    buf: Option<&DeviceBuffer<T>>,
    k: usize,
    want: &Expect<(Vec<usize>, usize)>,
    label: &str,
) {
    let what = || format!("{label} {sel:?}: threshold k = {k}");
    let check = |got: &Threshold<T>, want: &(Vec<usize>, usize)| {
        assert_eq!(got.support, want.0, "{}: support", what());
        assert_eq!(got.k(), k, "{}", what());
        assert_eq!(got.index, want.1, "{}: threshold index", what());
        assert_eq!(
            got.value.to_key(),
            data[want.1].to_key(),
            "{}: threshold value",
            what()
        );
    };
    assert_expected(sel.threshold(data, k), want, check, &what);
    // In place: the support keeps its values, every other entry becomes zero; on an error the
    // data stay as they were.
    let mut copy = data.to_vec();
    let got = sel.hard_threshold(&mut copy, k);
    let zeroed = match want {
        Expect::Ok((support, _)) => {
            let mut z = vec![T::default(); data.len()];
            for &i in support {
                z[i] = data[i];
            }
            z
        }
        _ => data.to_vec(),
    };
    assert!(
        same_bits(&copy, &zeroed),
        "{}: after hard_threshold {} instead of {}",
        what(),
        preview(&copy),
        preview(&zeroed)
    );
    assert_expected(got, want, check, &what);
    if let Some(buf) = buf {
        let on_device = sel.threshold_device(buf, k);
        assert_expected(on_device.and_then(|t| t.to_host()), want, check, &what);
        assert!(same_bits(&buf.to_host().expect("download"), data));
        let mut on_device = DeviceBuffer::from_host(sel.device(), data).expect("upload");
        let got = sel
            .hard_threshold_device(&mut on_device, k)
            .and_then(|t| t.to_host());
        assert!(
            same_bits(&on_device.to_host().expect("download"), &zeroed),
            "{}: device buffer after hard_threshold_device",
            what()
        );
        assert_expected(got, want, check, &what);
    }
}

/// Runs a generic check for every element type.
macro_rules! every_type {
    ($check:ident, $sel:expr) => {
        $check::<f32>($sel);
        $check::<f64>($sel);
        $check::<i32>($sel);
        $check::<i64>($sel);
        $check::<u32>($sel);
        $check::<u64>($sel);
    };
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

backend_test!(corpus_as_rows, |selector: Selector| {
    every_type!(corpus_rows, &selector);
});

backend_test!(corpus_as_segments, |selector: Selector| {
    every_type!(corpus_segments, &selector);
});

backend_test!(corpus_arrays_top_k_and_threshold, |selector: Selector| {
    every_type!(corpus_arrays, &selector);
});

backend_test!(nan_rows_under_each_policy, |selector: Selector| {
    // A row of NaNs only, a row with one NaN, a clean row; NaN in the padding is not seen.
    let nan = f64::NAN;
    let data = [
        nan, nan, nan, nan, nan, // row 0
        1.0, nan, -1.0, 0.0, nan, // row 1 (the padding NaN at the end is not in the row)
        3.0, 2.0, 1.0, 0.0,
    ];
    let layout = Layout::Rows(Rows::new(3, 4).with_stride(5));
    check_layout(&selector, &data, &layout, "nan rows");
    let rows = Rows::new(3, 4).with_stride(5);
    let err = Selector::on(selector.device().clone()).select_rows(rows.of(&data), 0);
    assert_err!(
        err,
        Error::NanInInput {
            count: 5,
            first_index: 0
        },
        "four NaNs in row 0, one in row 1"
    );
    let omit = selector.clone().nan_policy(NanPolicy::Omit);
    let clean = Rows::new(2, 4).with_stride(5);
    let got = omit.select_rows(clean.of(&data[5..]), &[2, 3]).unwrap();
    assert_eq!(got, vec![1.0, 3.0]);
    assert_err!(
        omit.select_rows(clean.of(&data[5..]), 3),
        Error::RankOutOfRange { k: 3, n: 3 },
        "row 0 holds three numbers"
    );
    let top = omit
        .top_k_rows(clean.of(&data[5..]), 3, TopKOptions::largest().sorted(true))
        .unwrap();
    assert_eq!(top.row(0), (&[1.0, 0.0, -1.0][..], &[0, 3, 2][..]));
    let last = selector.clone().nan_policy(NanPolicy::Last);
    let top = last
        .top_k_rows(clean.of(&data[5..]), 2, TopKOptions::largest().sorted(true))
        .unwrap();
    assert!(top.row(0).0[0].is_nan());
    assert_eq!(top.row(0).1, &[1, 0]);
    let low = last
        .top_k_rows(
            clean.of(&data[5..]),
            4,
            TopKOptions::smallest().sorted(true),
        )
        .unwrap();
    assert_eq!(low.row(0).1, &[2, 3, 0, 1]);
    assert_eq!(low.row(1).1, &[3, 2, 1, 0]);
});

backend_test!(
    rows_of_length_zero_and_one_and_empty_batches,
    |selector: Selector| {
        let data = [4u32, 7, 1];
        // Rows of one value: every rank 0, every top-1 the value itself.
        let layout = Layout::Rows(Rows::new(3, 1));
        check_layout(&selector, &data, &layout, "one-value rows");
        // Rows of no values: no rank and no top-k, but a multiselection of no ranks.
        let empty_rows = Layout::Rows(Rows::new(3, 0));
        check_first_empty(&selector, &data, &empty_rows, Place::Row(0));
        // No rows, no segments: empty results.
        for rows in [Rows::new(0, 5), Rows::new(0, 0)] {
            assert!(selector.select_rows(rows.of(&data), 3).unwrap().is_empty());
            assert!(selector
                .select_rows(rows.of(&data), &[])
                .unwrap()
                .is_empty());
            assert!(selector
                .multiselect_rows(rows.of(&data), &[9])
                .unwrap()
                .is_empty());
            let top = selector
                .top_k_rows(rows.of(&data), 4, TopKOrder::Largest)
                .unwrap();
            assert_eq!((top.rows(), top.k(), top.values().len()), (0, 4, 0));
        }
        let no_data: [f32; 0] = [];
        assert!(selector
            .select_rows(Matrix::new(&no_data, 0, 3), 0)
            .unwrap()
            .is_empty());
        for offsets in [&[0][..], &[2][..]] {
            let segs = Segments::new(offsets);
            assert!(selector.select_segments(&data, segs, 0).unwrap().is_empty());
            assert!(selector
                .multiselect_segments(&data, segs, &[1])
                .unwrap()
                .is_empty());
            let top = selector
                .top_k_segments(&data, segs, 1, TopKOrder::Smallest)
                .unwrap();
            assert_eq!(top.rows(), 0);
        }
        // One array of one value.
        let one = [-3i64];
        assert_eq!(
            selector
                .top_k(&one, 1, TopKOrder::Smallest)
                .unwrap()
                .indices(),
            &[0]
        );
        let t = selector.threshold(&one, 1).unwrap();
        assert_eq!((t.support, t.index, t.value), (vec![0], 0, -3));
        assert_err!(
            selector.threshold(&no_data, 1),
            Error::Batch(BatchError::TooFewValues { k: 1, have: 0, .. }),
            "threshold of nothing"
        );
    }
);

backend_test!(segments_with_empty_ones, |selector: Selector| {
    let data: Vec<i32> = vec![9, 5, 7, 1, 3, 3, 8, -2, 6];
    let offsets = [1, 1, 4, 4, 4, 9, 9];
    let segs = Segments::new(&offsets);
    assert_eq!(segs.count(), 6);
    let layout = Layout::Segments(offsets.to_vec());
    check_first_empty(&selector, &data, &layout, Place::Segment(0));
    assert_err!(
        selector.select_segments(&data, segs, &[0, 2, 0, 0, 4, 0]),
        Error::RankOutOfRange { k: 0, n: 0 },
        "segment 0 is empty"
    );
    // The non-empty segments alone.
    let nonempty = [1, 4, 9];
    let got = selector
        .select_segments(&data, Segments::new(&nonempty), &[1, 4])
        .unwrap();
    assert_eq!(got, vec![5, 8]);
    let top = selector
        .top_k_segments(
            &data,
            Segments::new(&nonempty),
            3,
            TopKOptions::smallest().sorted(true),
        )
        .unwrap();
    assert_eq!(top.row(0), (&[1, 5, 7][..], &[2, 0, 1][..]));
    assert_eq!(top.row(1), (&[-2, 3, 3][..], &[3, 0, 1][..]));
    let layout = Layout::Segments(nonempty.to_vec());
    check_layout(&selector, &data, &layout, "nonempty segments");
});

backend_test!(
    multiselect_with_repeated_unordered_ranks,
    |selector: Selector| {
        let mut rng = SplitMix64::new(42);
        let (rows, cols) = (7, 50);
        let data: Vec<f32> = (0..rows * cols)
            .map(|_| (rng.below(20) as f32 - 10.0) * 0.5)
            .collect();
        let ranks = [49, 0, 25, 25, 3, 49, 0];
        let got = selector
            .multiselect_rows(Matrix::new(&data, rows, cols), &ranks)
            .unwrap();
        assert_eq!(got.len(), rows * ranks.len());
        for r in 0..rows {
            let reference = Reference::new(&data[r * cols..(r + 1) * cols]);
            reference.check_all(
                &got[r * ranks.len()..(r + 1) * ranks.len()],
                &ranks,
                &|| format!("row {r}"),
            );
        }
    }
);

backend_test!(ties_go_to_the_lower_index, |selector: Selector| {
    // All equal: top-k is the first k indices, sorted or not, largest or smallest.
    let data = [2.5f64; 10];
    for options in [TopKOptions::largest(), TopKOptions::smallest().sorted(true)] {
        let top = selector.top_k(&data, 4, options).unwrap();
        assert_eq!(top.indices(), &[0, 1, 2, 3]);
    }
    let t = selector.threshold(&data, 3).unwrap();
    assert_eq!((t.support, t.index), (vec![0, 1, 2], 2));
    // Equal magnitudes of both signs; -0.0 and +0.0 are equal magnitudes but distinct values.
    let x = [-1.0f32, 0.0, 1.0, -0.0, -1.0];
    let t = selector.threshold(&x, 4).unwrap();
    assert_eq!((t.support.clone(), t.index), (vec![0, 1, 2, 4], 1));
    let top = selector
        .top_k(&x, 2, TopKOptions::smallest().sorted(true))
        .unwrap();
    assert_eq!(top.indices(), &[0, 4]);
    let top = selector
        .top_k(&x, 4, TopKOptions::largest().sorted(true))
        .unwrap();
    // +0.0 above -0.0.
    assert_eq!(top.indices(), &[2, 1, 3, 0]);

    // i32::MIN has the largest magnitude; the threshold value keeps its sign.
    let mut y = [i32::MIN, i32::MAX, -i32::MAX, 5];
    let t = selector.hard_threshold(&mut y, 2).unwrap();
    assert_eq!(y, [i32::MIN, i32::MAX, 0, 0]);
    assert_eq!((t.index, t.value), (1, i32::MAX));
    let t = selector.threshold(&[u64::MAX, 1, u64::MAX], 3).unwrap();
    assert_eq!((t.index, t.value), (1, 1));
});

backend_test!(errors, |selector: Selector| {
    let data: Vec<f64> = (0..12).map(|i| i as f64).collect();
    let rows = Rows::new(3, 4);
    // k out of range.
    assert_err!(
        selector.top_k(&data, 0, TopKOrder::Largest),
        Error::Batch(BatchError::ZeroK),
        "k = 0"
    );
    assert_too_few_values(
        selector.top_k(&data, 13, TopKOrder::Largest),
        (13, Place::Input, 12, false),
        "k > n",
    );
    assert_too_few_values(
        selector.top_k_rows(rows.of(&data), 5, TopKOrder::Smallest),
        (5, Place::Row(0), 4, false),
        "k > cols",
    );
    assert_err!(
        selector.top_k_rows(Matrix::new(&data, 0, 4), 0, TopKOrder::Smallest),
        Error::Batch(BatchError::ZeroK),
        "k = 0 of no rows"
    );
    let mut copy = data.clone();
    assert_err!(
        selector.hard_threshold(&mut copy, 0),
        Error::Batch(BatchError::ZeroK),
        "threshold k = 0"
    );
    assert_too_few_values(
        selector.threshold(&data, 13),
        (13, Place::Input, 12, false),
        "threshold k > n",
    );
    assert_eq!(copy, data);
    // Ranks out of range.
    assert_err!(
        selector.select_rows(rows.of(&data), 4),
        Error::RankOutOfRange { k: 4, n: 4 },
        "rank = cols"
    );
    assert_err!(
        selector.select_rows(rows.of(&data), &[0, 9, 1]),
        Error::RankOutOfRange { k: 9, n: 4 },
        "rank 9 of row 1"
    );
    assert_err!(
        selector.multiselect_rows(rows.of(&data), &[1, 4]),
        Error::RankOutOfRange { k: 4, n: 4 },
        "rank 4 of every row"
    );
    assert_err!(
        selector.select_rows(rows.of(&data), &[0, 1]),
        Error::Batch(BatchError::RankCount {
            given: 2,
            spans: 3,
            kind: "row"
        }),
        "two ranks for three rows"
    );
    assert_err!(
        selector.select_segments(&data, Segments::new(&[0, 5, 7]), &[4, 2]),
        Error::RankOutOfRange { k: 2, n: 2 },
        "rank 2 of a segment of 2"
    );
    // Bad layouts.
    assert_err!(
        selector.select_rows(Matrix::new(&data, 2, 4).with_stride(3), 0),
        Error::Batch(BatchError::StrideBelowColumns { stride: 3, cols: 4 }),
        "stride < cols"
    );
    assert_err!(
        selector.top_k_rows(
            Matrix::new(&data, 3, 4).with_stride(5),
            1,
            TopKOrder::Largest
        ),
        Error::Batch(BatchError::RowsPastData {
            rows: 3,
            cols: 4,
            stride: 5,
            needed: 14,
            len: 12
        }),
        "rows past the end"
    );
    assert_err!(
        selector.select_rows(Matrix::new(&data, usize::MAX, 2).with_stride(usize::MAX), 0),
        Error::Batch(BatchError::RowsOverflow {
            rows: usize::MAX,
            stride: usize::MAX
        }),
        "rows overflowing"
    );
    assert_err!(
        selector.select_segments(&data, Segments::new(&[0, 5, 3]), 0),
        Error::Batch(BatchError::OffsetsDecrease {
            segment: 1,
            start: 5,
            end: 3
        }),
        "decreasing offsets"
    );
    assert_err!(
        selector.multiselect_segments(&data, Segments::new(&[0, 5, 13]), &[0]),
        Error::Batch(BatchError::OffsetsPastData { last: 13, len: 12 }),
        "offsets past the end"
    );
    assert_err!(
        selector.top_k_segments(&data, Segments::new(&[]), 1, TopKOrder::Largest),
        Error::Batch(BatchError::NoOffsets),
        "no offsets"
    );
    // NaN under Error, with the first NaN's index in the data.
    let mut nan_data = data.clone();
    nan_data[6] = f64::NAN;
    nan_data[9] = f64::NAN;
    assert_err!(
        selector.select_rows(rows.of(&nan_data), 0),
        Error::NanInInput {
            count: 2,
            first_index: 6
        },
        "NaN in rows 1 and 2"
    );
    assert_err!(
        selector.select_segments(&nan_data, Segments::new(&[7, 12]), 0),
        Error::NanInInput {
            count: 1,
            first_index: 9
        },
        "NaN in the one segment"
    );
    // Spans that leave the NaNs out are selected from.
    let v = selector
        .select_rows(Matrix::new(&nan_data, 2, 2).with_stride(7), &[1, 0])
        .unwrap();
    assert_eq!(v, vec![1.0, 7.0]);
    let v = selector
        .select_segments(&nan_data, Segments::new(&[0, 6]), 5)
        .unwrap();
    assert_eq!(v, vec![5.0]);
    assert_err!(
        selector.top_k(&nan_data, 1, TopKOrder::Smallest),
        Error::NanInInput {
            count: 2,
            first_index: 6
        },
        "top-k of data with NaN"
    );
    let mut copy = nan_data.clone();
    assert_err!(
        selector.hard_threshold(&mut copy, 2),
        Error::NanInInput { count: 2, .. },
        "threshold of data with NaN"
    );
    assert!(same_bits(&copy, &nan_data), "unchanged after the refusal");
    // Omit with too few numbers.
    let omit = selector.clone().nan_policy(NanPolicy::Omit);
    assert_too_few_values(
        omit.top_k_rows(rows.of(&nan_data), 4, TopKOrder::Largest),
        (4, Place::Row(1), 3, true),
        "row 1 holds 3 numbers",
    );
    assert_eq!(
        omit.top_k_rows(rows.of(&nan_data), 3, TopKOrder::Largest)
            .unwrap()
            .row(1)
            .1,
        &[0, 1, 3]
    );
    assert_err!(
        omit.multiselect_rows(rows.of(&nan_data), &[0, 3]),
        Error::RankOutOfRange { k: 3, n: 3 },
        "rank 3 of row 1's three numbers"
    );
    assert_too_few_values(
        omit.hard_threshold(&mut copy, 11),
        (11, Place::Input, 10, true),
        "10 numbers",
    );
    assert!(same_bits(&copy, &nan_data), "unchanged after the refusal");
    let t = omit.hard_threshold(&mut copy, 10).unwrap();
    assert_eq!(t.support, vec![0, 1, 2, 3, 4, 5, 7, 8, 10, 11]);
    assert_eq!((t.index, t.value), (0, 0.0));
    assert_eq!(copy[6].to_bits(), 0.0f64.to_bits());
    assert_eq!(copy[9].to_bits(), 0.0f64.to_bits());
});

backend_test!(device_buffers_need_their_device, |selector: Selector| {
    if !selector.device().is_cuda() {
        return; // a DeviceBuffer needs a GPU
    }
    let buf = DeviceBuffer::from_host(selector.device(), &[3.0f32, 1.0, 2.0]).unwrap();
    let cpu = Selector::new();
    assert_err!(
        cpu.select_rows(Matrix::new(&buf, 1, 3), 0),
        Error::Batch(BatchError::DeviceBufferOnCpu { .. }),
        "a CPU selector with a device buffer"
    );
    assert_err!(
        cpu.top_k_device(&buf, 1, TopKOrder::Largest),
        Error::Batch(BatchError::DeviceBufferOnCpu { .. }),
        "a CPU selector with a device buffer"
    );
    assert_err!(
        cpu.threshold_device(&buf, 1),
        Error::Batch(BatchError::DeviceBufferOnCpu { .. }),
        "a CPU selector with a device buffer"
    );
    let mut buf = buf;
    assert_err!(
        cpu.hard_threshold_device(&mut buf, 1),
        Error::Batch(BatchError::DeviceBufferOnCpu { .. }),
        "a CPU selector with a device buffer"
    );
    assert_eq!(buf.to_host().unwrap(), vec![3.0, 1.0, 2.0]);
});

/// Values with many ties, both zeros, infinities and (for floats) NaN.
fn tie_heavy<T: TestElement>(rng: &mut SplitMix64, n: usize, nan_rate: f64) -> Vec<T> {
    (0..n)
        .map(|_| {
            if T::FLOAT && rng.chance(nan_rate) {
                T::random_nan(rng)
            } else if rng.chance(0.01) {
                if rng.chance(0.5) {
                    T::min_value()
                } else {
                    T::max_value()
                }
            } else {
                T::from_f64(T::CENTER + (rng.below(2001) as f64 - 1000.0))
            }
        })
        .collect()
}

/// Long rows (several threads a row on the CPU; the long-span paths on CUDA) and many rows.
/// The CPU runs fewer variants (debug builds sort slowly; the CPU's long-span paths are also
/// covered by its unit tests).
fn large_shape<T: TestElement>(sel: &Selector, rows: usize, cols: usize, label: &str) {
    let mut rng = SplitMix64::from_label(label, (rows * cols) as u64);
    let data: Vec<T> = tie_heavy(&mut rng, rows * cols, 0.001);
    let layout = Layout::Rows(Rows::new(rows, cols));
    let spans = layout.spans();
    let cuda = sel.device().is_cuda();
    let policies: &[NanPolicy] = if cuda {
        &[NanPolicy::Omit, NanPolicy::Last]
    } else {
        &[NanPolicy::Omit]
    };
    let mut batch = Batch::new(sel, &data, &layout);
    for &policy in policies {
        batch.policy(policy);
        let min = spans
            .iter()
            .map(|r| available(&data[r.clone()], policy))
            .min()
            .unwrap_or(0);
        let each: Vec<usize> = (0..rows).map(|r| (r * 7919) % min).collect();
        let same = [min - 1, 0, min / 3, min - 1];
        let ks: &[usize] = if cuda { &[1, 100, min] } else { &[1, 100] };
        let reference = Sorted::new(&data, spans.clone(), policy);
        check_ops(&batch, &reference, &each, &same, ks, label);
    }
}

backend_test!(large_shapes, |selector: Selector| {
    large_shape::<f32>(&selector, 64, 5000, "f32 64x5000");
    if selector.device().is_cuda() {
        large_shape::<f64>(&selector, 3, 300_000, "f64 3x300000");
        large_shape::<i64>(&selector, 2, 200_000, "i64 2x200000");
        large_shape::<u32>(&selector, 1000, 700, "u32 1000x700");
        let mut rng = SplitMix64::new(9);
        let x: Vec<f32> = tie_heavy(&mut rng, 300_000, 0.0);
        check_array(&selector, &x, &[1, 1000, 300_000], "f32 array of 300000");
    } else {
        // Just above the length from which the CPU gives a row several threads.
        large_shape::<f64>(&selector, 2, 140_000, "f64 2x140000");
        let mut rng = SplitMix64::new(9);
        let x: Vec<f32> = tie_heavy(&mut rng, 140_000, 0.0);
        check_array(&selector, &x, &[1000], "f32 array of 140000");
    }
});

// ---------------------------------------------------------------------------------------------
// Property test
// ---------------------------------------------------------------------------------------------

/// A random batch: its element type (0..6), rows or segments, and the data's seed.
#[derive(Clone, Debug)]
struct RandomBatch {
    dtype: usize,
    layout: Layout,
    len: usize,
    seed: u64,
    nan_rate: f64,
    policy: NanPolicy,
    each: Vec<usize>,
    same: Vec<usize>,
    k: usize,
}

fn random_batches() -> impl Strategy<Value = RandomBatch> {
    let rows = (0usize..6, 0usize..40, 0usize..4).prop_map(|(rows, cols, pad)| {
        let layout = Layout::Rows(Rows::new(rows, cols).with_stride(cols + pad));
        let len = if rows == 0 {
            0
        } else {
            (rows - 1) * (cols + pad) + cols
        };
        (layout, len)
    });
    let segments = (
        0usize..4,
        proptest::collection::vec(0usize..40, 0..6),
        0usize..3,
    )
        .prop_map(|(start, lengths, tail)| {
            let mut offsets = vec![start];
            for l in lengths {
                offsets.push(offsets.last().unwrap() + l);
            }
            let len = offsets.last().unwrap() + tail;
            (Layout::Segments(offsets), len)
        });
    (
        0usize..6,
        prop_oneof![rows, segments],
        any::<u64>(),
        prop_oneof![Just(0.0), Just(0.05), Just(0.5), Just(1.0)],
        prop_oneof![
            Just(NanPolicy::Error),
            Just(NanPolicy::Omit),
            Just(NanPolicy::Last)
        ],
        proptest::collection::vec(0usize..45, 6),
        proptest::collection::vec(0usize..45, 0..4),
        0usize..45,
    )
        .prop_map(
            |(dtype, (layout, len), seed, nan_rate, policy, picks, same, k)| {
                let spans = layout.spans();
                // Ranks mostly inside their spans, sometimes past them.
                let each = spans
                    .iter()
                    .zip(picks.iter().cycle())
                    .map(|(r, &p)| {
                        if r.is_empty() {
                            p % 2
                        } else {
                            p % (r.len() + 1)
                        }
                    })
                    .collect();
                RandomBatch {
                    dtype,
                    layout,
                    len,
                    seed,
                    nan_rate,
                    policy,
                    each,
                    same,
                    k,
                }
            },
        )
}

/// Values of a small set with extremes and ties (NaN at `nan_rate` for floats).
fn random_data<T: TestElement>(b: &RandomBatch) -> Vec<T> {
    let mut rng = SplitMix64::new(b.seed);
    (0..b.len)
        .map(|_| {
            if T::FLOAT && rng.chance(b.nan_rate) {
                return T::random_nan(&mut rng);
            }
            match rng.below(8) {
                0 => T::min_value(),
                1 => T::max_value(),
                2 if T::FLOAT => T::neg_zero(),
                3 => T::from_f64(0.0),
                _ => T::from_f64(T::CENTER + rng.below(7) as f64 - 3.0),
            }
        })
        .collect()
}

fn check_random<T: TestElement>(sel: &Selector, b: &RandomBatch) {
    let data = random_data::<T>(b);
    let mut batch = Batch::new(sel, &data, &b.layout);
    batch.policy(b.policy);
    let mut ks = vec![b.k, 1];
    ks.dedup();
    let reference = Sorted::new(&data, b.layout.spans(), b.policy);
    check_ops(&batch, &reference, &b.each, &b.same, &ks, "random");
    if b.layout.spans().len() == 1 {
        let all = &data[b.layout.spans()[0].clone()];
        let want = expect_threshold(all, &magnitude_order(all, b.policy), b.k, b.policy);
        check_threshold(&batch.sel, all, None, b.k, &want, "random");
    }
}

fn check_random_batch(sel: &Selector, b: &RandomBatch) -> std::result::Result<(), TestCaseError> {
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match b.dtype {
        0 => check_random::<f32>(sel, b),
        1 => check_random::<f64>(sel, b),
        2 => check_random::<i32>(sel, b),
        3 => check_random::<i64>(sel, b),
        4 => check_random::<u32>(sel, b),
        _ => check_random::<u64>(sel, b),
    }));
    run.map_err(|e| {
        let message = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        TestCaseError::fail(message)
    })
}

backend_test!(random_shapes_types_and_k, |selector: Selector| {
    let cases = if selector.device().is_cuda() { 48 } else { 512 };
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(e) = runner.run(&random_batches(), |b| check_random_batch(&selector, &b)) {
        panic!("{e}");
    }
});

backend_test!(
    matrices_from_anywhere_give_the_same_rows,
    |selector: Selector| {
        let data = [4.0f64, 1.0, 7.0, 0.5, 9.0, 2.0, 8.0, 3.0];
        let want = vec![0.5, 2.0];
        let host = Matrix::new(&data, 2, 4);
        assert_eq!(selector.select_rows(host, 0).unwrap(), want);
        let array = ndarray::Array2::from_shape_vec((2, 4), data.to_vec()).unwrap();
        assert_eq!(selector.select_rows(&array, 0).unwrap(), want);
        // The transposed view: its rows are the columns of `array`.
        let columns = selector.select_rows(array.t(), 1).unwrap();
        assert_eq!(columns, vec![9.0, 2.0, 8.0, 3.0]);
        let top = selector
            .top_k_rows(Matrix::new(&data, 2, 4), 1, TopKOrder::Largest)
            .unwrap();
        let device_results =
            selector.top_k_rows_device(Matrix::new(&data, 2, 4), 1, TopKOrder::Largest);
        if let kselect::Device::Cuda(device) = selector.device() {
            // A host matrix is copied to the selector's device; the results stay there.
            assert_eq!(device_results.unwrap().to_host().unwrap(), top);
            let buf = DeviceBuffer::from_host_on(device, &data).unwrap();
            assert_eq!(
                selector.select_rows(Matrix::new(&buf, 2, 4), 0).unwrap(),
                want
            );
        } else {
            assert!(
                device_results.is_err(),
                "a CPU selector has no device for the results"
            );
        }
    }
);
