//! The CUDA batch kernels against a sort of (order key, index) pairs on the host. They skip
//! without a GPU and fail when `KSELECT_REQUIRE_GPU=1`.

use super::*;
use crate::device::cuda::tests::gpu;
use crate::element::DType;
use crate::select::nan::NanPolicy;

/// splitmix64, for test data.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Floats with repeats, signed zeros, infinities and (with `nans`) NaN.
fn floats(n: usize, seed: u64, nans: bool) -> Vec<f32> {
    let mut mix = Mix(seed);
    (0..n)
        .map(|_| match mix.next() % 64 {
            0 if nans => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => -0.0,
            4 => 0.0,
            5..=20 => (mix.next() % 7) as f32 - 3.0,
            _ => (mix.next() % 2_000_001) as f32 / 1000.0 - 1000.0,
        })
        .collect()
}

fn ints(n: usize, seed: u64) -> Vec<i64> {
    let mut mix = Mix(seed);
    (0..n)
        .map(|_| match mix.next() % 16 {
            0 => i64::MIN,
            1 => i64::MAX,
            2..=5 => (mix.next() % 5) as i64 - 2,
            _ => mix.next() as i64,
        })
        .collect()
}

/// The host's order key, as the kernels compute it.
fn order_key<T: Element>(x: T, order: KeyOrder) -> u128 {
    let key = x.to_key().to_u64() as u128;
    let top = u128::MAX;
    match order {
        KeyOrder::Smallest => key,
        KeyOrder::Largest { nan_low } if x.is_nan() => {
            if nan_low {
                top
            } else {
                0
            }
        }
        KeyOrder::Largest { .. } => u64::MAX as u128 - key + 1,
        KeyOrder::LargestMagnitude { nan_low } if x.is_nan() => {
            if nan_low {
                top
            } else {
                0
            }
        }
        KeyOrder::LargestMagnitude { .. } => {
            let v = x.to_f64();
            let magnitude = if T::DTYPE.is_float() {
                v.abs()
            } else {
                // Integers exactly: the value back from its key (signed keys are biased by
                // half their range), compared by |i128|.
                let key = x.to_key().to_u64() as i128;
                let value = match T::DTYPE {
                    DType::I32 => key - (1i128 << 31),
                    DType::I64 => key - (1i128 << 63),
                    _ => key,
                };
                return u128::MAX / 2 - value.unsigned_abs();
            };
            u128::MAX / 2 - magnitude.to_bits() as u128
        }
    }
}

/// The reference: the first k of the span by (order key, index), sorted or by index.
fn reference<T: Element>(
    span: &[T],
    k: usize,
    order: KeyOrder,
    sorted: bool,
) -> (Vec<u64>, Vec<usize>) {
    let mut pairs: Vec<(u128, usize)> = span
        .iter()
        .enumerate()
        .map(|(i, &x)| (order_key(x, order), i))
        .collect();
    pairs.sort();
    let mut chosen: Vec<(u128, usize)> = pairs[..k].to_vec();
    if !sorted {
        chosen.sort_by_key(|&(_, i)| i);
    }
    let bits = chosen
        .iter()
        .map(|&(_, i)| span[i].to_key().to_u64())
        .collect();
    (bits, chosen.iter().map(|&(_, i)| i).collect())
}

fn check_top_k<T: Element>(dev: &CudaDevice, data: &[T], spans: Spans<'_>, k: usize) {
    let orders = [
        KeyOrder::Smallest,
        KeyOrder::Largest { nan_low: false },
        KeyOrder::Largest { nan_low: true },
        KeyOrder::LargestMagnitude { nan_low: false },
        KeyOrder::LargestMagnitude { nan_low: true },
    ];
    for order in orders {
        for sorted in [false, true] {
            let got = top_k_spans(dev, Input::Host(data), spans, k, order, sorted).unwrap();
            for s in 0..spans.count() {
                let span = &data[spans.span(s)];
                let (bits, idx) = reference(span, k, order, sorted);
                let got_bits: Vec<u64> = got.values[s * k..(s + 1) * k]
                    .iter()
                    .map(|v| v.to_key().to_u64())
                    .collect();
                let context = format!("{order:?} sorted {sorted} k {k} span {s} of {spans:?}");
                assert_eq!(&got.indices[s * k..(s + 1) * k], &idx[..], "{context}");
                assert_eq!(got_bits, bits, "{context}");
                let nans = span.iter().filter(|x| x.is_nan()).count();
                assert_eq!(got.nan_counts[s], nans, "{context}");
            }
        }
    }
}

fn check_select<T: Element>(dev: &CudaDevice, data: &[T], spans: Spans<'_>, ranks: SpanRanks<'_>) {
    let got = select_spans(dev, Input::Host(data), spans, ranks).unwrap();
    let m = ranks.per_span();
    for s in 0..spans.count() {
        let nans = data[spans.span(s)].iter().filter(|x| x.is_nan()).count();
        assert_eq!(got.nan_counts[s], nans, "NaNs of span {s} of {spans:?}");
        let mut keys: Vec<u64> = data[spans.span(s)]
            .iter()
            .map(|x| x.to_key().to_u64())
            .collect();
        keys.sort_unstable();
        let wanted: Vec<usize> = match ranks {
            SpanRanks::OnePerSpan(r) => vec![r[s]],
            SpanRanks::Same(r) => r.to_vec(),
        };
        for (j, &k) in wanted.iter().enumerate() {
            assert_eq!(
                got.values[s * m + j].to_key().to_u64(),
                keys[k],
                "rank {k} of span {s} of {spans:?}"
            );
        }
    }
}

#[test]
fn short_rows_select_and_top_k() {
    let Some(dev) = gpu() else { return };
    let (rows, cols) = (37, 1000);
    let data = floats(rows * (cols + 5), 1, true);
    let spans = Spans::Rows {
        rows,
        cols,
        stride: cols + 5,
    };
    let per_row: Vec<usize> = (0..rows).map(|r| (r * 131) % cols).collect();
    check_select(&dev, &data, spans, SpanRanks::OnePerSpan(&per_row));
    check_select(&dev, &data, spans, SpanRanks::Same(&[0, 999, 500, 500]));
    let many: Vec<usize> = (0..20).map(|j| (j * 53) % cols).collect();
    check_select(&dev, &data, spans, SpanRanks::Same(&many));
    for k in [1, 16, 999, 1000] {
        check_top_k(&dev, &data, spans, k);
    }
    let wide = ints(8 * 2048, 2);
    let spans = Spans::Rows {
        rows: 8,
        cols: 2048,
        stride: 2048,
    };
    check_top_k(&dev, &wide, spans, 300);
    check_select(&dev, &wide, spans, SpanRanks::Same(&[0, 1, 2047]));
}

#[test]
fn warp_spans_of_every_shape() {
    let Some(dev) = gpu() else { return };
    // Segments of 1 to 1024 values (a warp a span): partial strips, a strip exactly, full.
    let lengths = [1usize, 2, 31, 32, 33, 100, 255, 256, 257, 700, 1023, 1024];
    let mut offsets = vec![0usize];
    for &len in &lengths {
        offsets.push(offsets.last().unwrap() + len);
    }
    let total = *offsets.last().unwrap();
    let data = floats(total, 31, true);
    check_top_k(&dev, &data, Spans::Offsets(&offsets), 1);
    // Every k from 1 to the span, around the in-warp sort's limit, by rows of each length.
    // Wide integers, one value, two values, a descending run.
    let mixes: [Vec<i64>; 4] = [
        ints(4 * 1024, 32),
        vec![-7; 4 * 1024],
        (0..4 * 1024).map(|i| (i % 3 == 0) as i64).collect(),
        (0..4 * 1024).map(|i| 5000 - i as i64).collect(),
    ];
    for values in &mixes {
        for cols in [33usize, 256, 300, 1024] {
            let spans = Spans::Rows {
                rows: 3,
                cols,
                stride: cols + 1,
            };
            for k in [1, 2, cols / 2, 255, 256, 257, cols - 1, cols] {
                if (1..=cols).contains(&k) {
                    check_top_k(&dev, &values[..3 * (cols + 1)], spans, k);
                }
            }
        }
    }
    // 32-bit keys at the ends of their range, and f64 with NaN.
    let unsigned: Vec<u32> = ints(3 * 1024, 33).iter().map(|&v| v as u32).collect();
    let rows = Spans::Rows {
        rows: 3,
        cols: 1024,
        stride: 1024,
    };
    for k in [1, 17, 256, 1000] {
        check_top_k(&dev, &unsigned, rows, k);
    }
    let doubles: Vec<f64> = floats(3 * 1024, 34, true)
        .iter()
        .map(|&v| v as f64)
        .collect();
    for k in [3, 256, 1024] {
        check_top_k(&dev, &doubles, rows, k);
    }
    // Enough spans for the NaN counts to be summed on the device first: with NaN and without.
    let many = Spans::Rows {
        rows: NAN_SUM_SPANS + 1,
        cols: 40,
        stride: 40,
    };
    for nans in [true, false] {
        let data = floats(40 * (NAN_SUM_SPANS + 1), 35, nans);
        assert_eq!(data.iter().any(|x| x.is_nan()), nans);
        check_top_k(&dev, &data, many, 5);
        let ranks: Vec<usize> = (0..=NAN_SUM_SPANS).map(|s| s % 40).collect();
        check_select(&dev, &data, many, SpanRanks::OnePerSpan(&ranks));
    }
}

#[test]
fn segments_of_uneven_lengths() {
    let Some(dev) = gpu() else { return };
    let data = floats(30_000, 3, true);
    let offsets = [0, 7, 7, 100, 4000, 4096, 9000, 30_000];
    let spans = Spans::Offsets(&offsets);
    let ranks: Vec<usize> = (0..7).map(|s| spans.len_of(s) / 2).collect();
    let ranks: Vec<usize> = ranks.iter().map(|&r| r.min(1)).collect();
    // Every segment but the empty one has rank 0 or 1 in range; skip the empty one.
    let nonempty = [0, 7, 100, 4000, 4096, 9000, 30_000];
    check_select(
        &dev,
        &data,
        Spans::Offsets(&nonempty),
        SpanRanks::Same(&[0, 6]),
    );
    check_top_k(&dev, &data, Spans::Offsets(&nonempty), 7);
    assert_eq!(ranks.len(), 7);
    assert!(top_k_spans(
        &dev,
        Input::Host(&data),
        spans,
        1,
        KeyOrder::Smallest,
        false
    )
    .is_err());
}

/// One long row, whose ranks go to the single-array radix selection where it lies: the same
/// values and NaN counts as a sort, for one rank and two, floats with NaN and repeats and
/// 64-bit integers, in one launch and by digit passes, at the start of the data, 16 bytes after
/// it, and 17 values after it (not on 16 bytes: the batch's passes).
#[test]
fn one_long_row_selects_like_a_sort() {
    let Some(dev) = gpu() else { return };
    for cols in [short_limit::<f32>() + 1, 100_003, 3_000_001] {
        let data = floats(cols + 17, 11, true);
        for spans in [
            Spans::Offsets(&[0, cols]),
            Spans::Offsets(&[4, cols + 4]),
            Spans::Offsets(&[17, cols + 17]),
        ] {
            check_select(&dev, &data, spans, SpanRanks::OnePerSpan(&[cols / 2]));
            check_select(&dev, &data, spans, SpanRanks::Same(&[cols - 1, 3]));
        }
        let wide = ints(cols, 12);
        let spans = Spans::Rows {
            rows: 1,
            cols,
            stride: cols,
        };
        check_select(&dev, &wide, spans, SpanRanks::Same(&[0, cols / 3]));
    }
}

#[test]
fn long_rows_select_and_top_k() {
    let Some(dev) = gpu() else { return };
    let (rows, cols) = (3, 100_003);
    let data = floats(rows * cols, 4, true);
    let spans = Spans::Rows {
        rows,
        cols,
        stride: cols,
    };
    check_select(
        &dev,
        &data,
        spans,
        SpanRanks::OnePerSpan(&[0, 50_000, 100_002]),
    );
    check_select(&dev, &data, spans, SpanRanks::Same(&[7, 99_999, 7]));
    let many: Vec<usize> = (0..12).map(|j| j * 8000).collect();
    check_select(&dev, &data, spans, SpanRanks::Same(&many));
    for k in [1, 100, 5000, cols] {
        check_top_k(&dev, &data, spans, k);
    }
    let wide = ints(2 * 70_000, 5);
    let spans = Spans::Rows {
        rows: 2,
        cols: 70_000,
        stride: 70_000,
    };
    check_top_k(&dev, &wide, spans, 3000);
    check_top_k(&dev, &wide, spans, 6000);
    check_select(&dev, &wide, spans, SpanRanks::OnePerSpan(&[3, 69_999]));
}

#[test]
fn sorted_results_of_many_spans_take_a_block_each() {
    let Some(dev) = gpu() else { return };
    // At least a span a multiprocessor, k above the one-block limit: one block sorts a span.
    let rows = dev.multiprocessors() + 3;
    let cols = 6000;
    assert!(span_sort::suits(&dev, rows));
    let data = floats(rows * cols, 21, true);
    let spans = Spans::Rows {
        rows,
        cols,
        stride: cols,
    };
    check_top_k(&dev, &data, spans, 4500);
    check_top_k(&dev, &data, spans, cols);
    // Keys of 64 bits whose high digits differ (none skipped) or agree (skipped).
    let wide = ints(rows * 2600, 22);
    let spans = Spans::Rows {
        rows,
        cols: 2600,
        stride: 2600,
    };
    check_top_k(&dev, &wide, spans, 2100);
    let small: Vec<i64> = (0..rows * 2600).map(|i| (i * 7919 % 5003) as i64).collect();
    check_top_k(&dev, &small, spans, 2600);
    // Segments of uneven lengths, each at least k.
    let offsets: Vec<usize> = (0..=rows).map(|s| s * 6000 + s * s % 977).collect();
    let segs = floats(offsets[rows], 23, false);
    check_top_k(&dev, &segs, Spans::Offsets(&offsets), 4097);
}

#[test]
fn hard_threshold_keeps_the_largest_magnitudes() {
    let Some(dev) = gpu() else { return };
    for n in [1000, 300_001] {
        let data = floats(n, 6, false);
        for k in [1, n / 100, n] {
            let mut buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
            let got = hard_threshold_in_place(&mut buf, k, NanPolicy::Error)
                .unwrap()
                .to_host()
                .unwrap();
            let order = KeyOrder::LargestMagnitude { nan_low: false };
            let (_, want) = reference(&data, k, order, false);
            assert_eq!(got.support, want, "n {n} k {k}");
            let cpu = crate::Selector::new().threshold(&data, k).unwrap();
            assert_eq!(
                (got.index, got.value.to_bits()),
                (cpu.index, cpu.value.to_bits())
            );
            let after = buf.to_host().unwrap();
            for (i, (&a, &d)) in after.iter().zip(&data).enumerate() {
                let kept = want.binary_search(&i).is_ok();
                let expect = if kept { d.to_bits() } else { 0 };
                assert_eq!(a.to_bits(), expect, "n {n} k {k} index {i}");
            }
        }
    }
    let with_nan = floats(5000, 7, true);
    let mut buf = DeviceBuffer::from_host_on(&dev, &with_nan).unwrap();
    assert!(hard_threshold_in_place(&mut buf, 10, NanPolicy::Error).is_err());
    let untouched = buf.to_host().unwrap();
    assert!(untouched
        .iter()
        .zip(&with_nan)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn long_rows_of_repeats_take_the_full_passes() {
    let Some(dev) = gpu() else { return };
    let (rows, cols) = (2, 50_000);
    let mut mix = Mix(8);
    // Three values: every first digit keeps about a third of a row, past the candidates' share.
    let few: Vec<f64> = (0..rows * cols).map(|_| (mix.next() % 3) as f64).collect();
    let spans = Spans::Rows {
        rows,
        cols,
        stride: cols,
    };
    check_select(&dev, &few, spans, SpanRanks::OnePerSpan(&[0, 25_000]));
    check_top_k(&dev, &few, spans, 17);
    check_top_k(&dev, &few, spans, 20_000);
    let equal = vec![2.5f32; rows * cols];
    check_select(&dev, &equal, spans, SpanRanks::OnePerSpan(&[49_999, 3]));
    check_top_k(&dev, &equal, spans, 4097);
}

/// Values spread over a wide range (few repeats), a NaN now and then when `nans`.
fn spread<T: Element>(n: usize, seed: u64, nans: bool, of: fn(f64) -> T) -> Vec<T> {
    let mut mix = Mix(seed);
    (0..n)
        .map(|_| {
            let r = mix.next();
            if nans && r.is_multiple_of(997) {
                of(f64::NAN)
            } else {
                of((r >> 11) as f64 / (1u64 << 53) as f64 * 2.0e6 - 1.0e6)
            }
        })
        .collect()
}

/// The sampled top-k takes `data` (it must not decline) and equals the reference in every
/// order, sorted or not.
fn check_sampled_top_k<T: Element>(dev: &CudaDevice, data: &[T], spans: Spans<'_>, k: usize) {
    let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
    let orders = [
        KeyOrder::Smallest,
        KeyOrder::Largest { nan_low: false },
        KeyOrder::Largest { nan_low: true },
        KeyOrder::LargestMagnitude { nan_low: true },
    ];
    for order in orders {
        for sorted in [false, true] {
            let context = format!("{order:?} sorted {sorted} k {k} of {spans:?}");
            let top = sampled::top_k(dev, buf.as_slice(), spans, k, mode_of(order), sorted)
                .unwrap()
                .unwrap_or_else(|| panic!("the sampled path declined: {context}"));
            let count = spans.count();
            let values = download(dev, &top.values, count * k, "values").unwrap();
            let indices = download(dev, &top.indices, count * k, "indices").unwrap();
            let nans = download(dev, &top.nans, count, "nans").unwrap();
            for s in 0..count {
                let span = &data[spans.span(s)];
                let (bits, idx) = reference(span, k, order, sorted);
                let got_idx: Vec<usize> = indices[s * k..(s + 1) * k]
                    .iter()
                    .map(|&i| i as usize)
                    .collect();
                assert_eq!(got_idx, idx, "span {s}: {context}");
                let got_bits: Vec<u64> = values[s * k..(s + 1) * k]
                    .iter()
                    .map(|v| v.to_key().to_u64())
                    .collect();
                assert_eq!(got_bits, bits, "span {s}: {context}");
                let want_nans = span.iter().filter(|x| x.is_nan()).count() as u64;
                assert_eq!(nans[s], want_nans, "span {s}: {context}");
            }
        }
    }
}

/// The sampled selection takes `data` and equals the sorted keys at `ranks`.
fn check_sampled_select<T: Element>(
    dev: &CudaDevice,
    data: &[T],
    spans: Spans<'_>,
    ranks: &[usize],
) {
    let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
    let got = sampled::select(dev, buf.as_slice(), spans, ranks)
        .unwrap()
        .unwrap_or_else(|| panic!("the sampled selection declined ranks {ranks:?} of {spans:?}"));
    for (s, &r) in ranks.iter().enumerate() {
        let mut keys: Vec<u64> = data[spans.span(s)]
            .iter()
            .map(|x| x.to_key().to_u64())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            got.values[s].to_key().to_u64(),
            keys[r],
            "rank {r} of span {s}"
        );
        let nans = data[spans.span(s)].iter().filter(|x| x.is_nan()).count();
        assert_eq!(got.nan_counts[s], nans, "span {s}");
    }
}

#[test]
fn sampled_path_on_spread_rows() {
    let Some(dev) = gpu() else { return };
    let (rows, cols) = (5, 200_000);
    let data = spread(rows * (cols + 3), 9, true, |v| v as f32);
    // Aligned rows take 16-byte loads; a stride of cols + 3 takes the scalar loads.
    for stride in [cols, cols + 3] {
        let spans = Spans::Rows { rows, cols, stride };
        for k in [1, 32, 1000, 2048, 2049, 30_000] {
            check_sampled_top_k(&dev, &data, spans, k);
        }
        let ranks = [0, 1, cols / 2, cols - 2, 123_457];
        check_sampled_select(&dev, &data, spans, &ranks);
    }
    let offsets = [0, 100_000, 100_000 + 77_777, 3 * 100_000 + 5];
    check_sampled_top_k(&dev, &data, Spans::Offsets(&offsets), 700);
    check_sampled_select(&dev, &data, Spans::Offsets(&offsets), &[5, 77_776, 1000]);
    let wide = spread(3 * 150_000, 10, true, |v| v);
    let spans = Spans::Rows {
        rows: 3,
        cols: 150_000,
        stride: 150_000,
    };
    for k in [3, 5000] {
        check_sampled_top_k(&dev, &wide, spans, k);
    }
    check_sampled_select(&dev, &wide, spans, &[0, 75_000, 149_999]);
    let ints = spread(2 * 100_000, 11, false, |v| (v * 1.0e6) as i64);
    let spans = Spans::Rows {
        rows: 2,
        cols: 100_000,
        stride: 100_000,
    };
    check_sampled_top_k(&dev, &ints, spans, 40);
    check_sampled_select(&dev, &ints, spans, &[99_999, 50_000]);
}

/// One long span finishes from its bracket's pairs: k past the one-block top-k, NaNs in
/// every order, a length that fills no vector; with heavy repeats the answer is the same
/// whichever path takes it.
#[test]
fn one_long_span_finishes_from_its_pairs() {
    let Some(dev) = gpu() else { return };
    let cols = 1_000_003;
    let data = spread(cols, 12, true, |v| v as f32);
    let spans = Spans::Rows {
        rows: 1,
        cols,
        stride: cols,
    };
    let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
    for k in [2049, 30_000, 100_000] {
        let pairs = sampled::top_k_from_pairs(&dev, buf.as_slice(), spans, k, 0, true).unwrap();
        assert!(pairs.is_some(), "k {k}: the pairs declined");
        check_sampled_top_k(&dev, &data, spans, k);
    }
    let repeats: Vec<f32> = data.iter().map(|v| (v / 1000.0).round()).collect();
    for k in [5000, 50_000] {
        check_top_k(&dev, &repeats, spans, k);
    }
}

/// The pairs come in index order whatever the order of the data: sorted spans (every copied
/// pair in the first or the last tiles) and a span that starts off a vector's alignment.
#[test]
fn pairs_keep_index_order_on_sorted_and_unaligned_spans() {
    let Some(dev) = gpu() else { return };
    let cols = 300_007;
    let ascending: Vec<f32> = (0..cols).map(|i| i as f32).collect();
    let descending: Vec<f32> = ascending.iter().rev().copied().collect();
    let one = Spans::Rows {
        rows: 1,
        cols,
        stride: cols,
    };
    for data in [&ascending, &descending] {
        for k in [3000, 40_000] {
            check_sampled_top_k(&dev, data, one, k);
        }
    }
    let mut shifted = vec![0.0f32; 3];
    shifted.extend(spread(cols, 5, true, |v| v as f32));
    let bounds = [3, 3 + cols];
    let span = Spans::Offsets(&bounds);
    let buf = DeviceBuffer::from_host_on(&dev, &shifted).unwrap();
    for k in [2049, 20_000] {
        let pairs = sampled::top_k_from_pairs(&dev, buf.as_slice(), span, k, 0, true).unwrap();
        assert!(pairs.is_some(), "k {k}: the pairs declined");
        check_sampled_top_k(&dev, &shifted, span, k);
    }
}

#[test]
fn sampled_path_on_sorted_rows_and_declines_repeats() {
    let Some(dev) = gpu() else { return };
    let (rows, cols) = (2, 131_072);
    let ascending: Vec<f32> = (0..rows * cols).map(|i| (i % cols) as f32).collect();
    let descending: Vec<f32> = (0..rows * cols).map(|i| (cols - i % cols) as f32).collect();
    let spans = Spans::Rows {
        rows,
        cols,
        stride: cols,
    };
    for data in [&ascending, &descending] {
        for k in [1, 64, 2048, 10_000] {
            check_sampled_top_k(&dev, data, spans, k);
        }
        check_sampled_select(&dev, data, spans, &[0, cols / 2]);
    }
    // Heavy repeats overflow the brackets: the sampled path declines, the exact path answers.
    let equal = vec![1.5f32; rows * cols];
    let buf = DeviceBuffer::from_host_on(&dev, &equal).unwrap();
    assert!(sampled::top_k(&dev, buf.as_slice(), spans, 10, 0, false)
        .unwrap()
        .is_none());
    assert!(sampled::select(&dev, buf.as_slice(), spans, &[3, 7])
        .unwrap()
        .is_none());
    check_top_k(&dev, &equal, spans, 10);
    check_select(&dev, &equal, spans, SpanRanks::OnePerSpan(&[3, 7]));
}

#[test]
fn largest_magnitudes_match_the_host_in_and_out_of_l2() {
    let Some(dev) = gpu() else { return };
    // One block a vector up to 32768 f32 (16384 f64) values, the digit passes up to half the
    // L2, then sampling; repeats, signed zeros, infinities and NaN among the values.
    let cases: [(usize, usize, usize); 10] = [
        (1, 5000, 1),
        (1, 16384, 819),
        (1, 16384, 16384),
        (2, 32768, 3000),
        (1, 32769, 3000),
        (1, 1 << 20, 13107),
        (1, 1 << 20, 1),
        (3, 300_001, 2999),
        (200, 5000, 50),
        (1, (dev.l2_bytes() / 4).max(1 << 20) + 12_345, 40_000),
    ];
    for (c, &(rows, cols, k)) in cases.iter().enumerate() {
        for nans in [false, true] {
            let data = floats(rows * cols, 40 + c as u64, nans);
            check_largest_magnitudes(&dev, &data, rows, cols, k);
            if cols <= 1 << 20 {
                let wide: Vec<f64> = data.iter().map(|&v| v as f64).collect();
                check_largest_magnitudes(&dev, &wide, rows, cols, k);
            }
        }
    }
    let data = floats(20_000, 9, false);
    let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
    assert!(largest_magnitudes(&dev, buf.as_slice(), 1, 20_000, 0).is_err());
    assert!(largest_magnitudes(&dev, buf.as_slice(), 1, 20_000, 20_001).is_err());
}

fn check_largest_magnitudes<T: Element>(
    dev: &CudaDevice,
    data: &[T],
    rows: usize,
    cols: usize,
    k: usize,
) {
    let order = KeyOrder::LargestMagnitude { nan_low: false };
    let buf = DeviceBuffer::from_host_on(dev, data).unwrap();
    let got = largest_magnitudes(dev, buf.as_slice(), rows, cols, k).unwrap();
    let got = download(dev, &got, rows * k, "the indices").unwrap();
    for (r, row) in data.chunks(cols).enumerate() {
        let (_, want) = reference(row, k, order, false);
        let want: Vec<u64> = want.iter().map(|&i| i as u64).collect();
        assert_eq!(
            got[r * k..(r + 1) * k],
            want[..],
            "{} {rows} x {cols}, k {k}, row {r}",
            T::DTYPE
        );
    }
}
