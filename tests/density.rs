//! Distributions estimated from order statistics, and their plots: estimates from every
//! quantile method on every backend, the Kolmogorov–Smirnov distance against a brute-force
//! empirical CDF and against its bound, and PNG/SVG files checked byte by byte.

#[macro_use]
mod common;

use std::path::Path;

use common::SplitMix64;
use kselect::density::{Bandwidth, DensityError, DensityEstimate};
use kselect::plot::{plot_cdf, plot_pdf, Histogram, ImageFormat, PlotOptions};
use kselect::{Error, NanPolicy, QuantileMethod, Selector};

/// `m` evenly spaced probabilities from 0 to 1.
fn even(m: usize) -> Vec<f64> {
    (0..m).map(|i| i as f64 / (m - 1) as f64).collect()
}

/// Skewed data with ties: rounded log-normal values, some NaN.
fn delays(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            if rng.chance(0.01) {
                f64::NAN
            } else {
                (rng.normal() * 0.8 + 2.0).exp().round() - 10.0
            }
        })
        .collect()
}

/// `sup |F_est - F_emp|` by brute force: both sides of every value, counted value by value.
fn brute_force_ks(est: &DensityEstimate, numbers: &[f64]) -> f64 {
    let n = numbers.len() as f64;
    let mut d: f64 = 0.0;
    for &y in numbers {
        let at_or_below = numbers.iter().filter(|&&v| v <= y).count() as f64 / n;
        let below = numbers.iter().filter(|&&v| v < y).count() as f64 / n;
        d = d.max((est.cdf(y) - at_or_below).abs());
        d = d.max((est.cdf_left(y) - below).abs());
    }
    d
}

#[test]
fn every_method_gives_an_estimate_within_its_bound() {
    // Within each interval both CDFs rise by the interval's probability, so the distance is
    // at most the widest probability gap plus a few 1/n.
    let data = delays(20_000, 7);
    let numbers: Vec<f64> = data.iter().copied().filter(|x| !x.is_nan()).collect();
    let n = numbers.len() as f64;
    let selector = Selector::new().nan_policy(NanPolicy::Omit);
    for probs in [even(11), even(101), vec![0.05, 0.2, 0.5, 0.8, 0.95]] {
        let gap = probs
            .windows(2)
            .map(|w| w[1] - w[0])
            .chain([probs[0], 1.0 - probs[probs.len() - 1]])
            .fold(0.0, f64::max);
        for method in QuantileMethod::ALL {
            let est = DensityEstimate::from_data(&selector, &data, &probs, method)
                .unwrap_or_else(|e| panic!("{method}: {e}"));
            let d = est.ks_distance(&data, NanPolicy::Omit).unwrap();
            assert!(d <= gap + 3.0 / n, "{method}, m = {}: {d}", probs.len());
            assert!(d > 0.0);
        }
    }
}

#[test]
fn ks_distance_equals_brute_force() {
    let data = delays(600, 11);
    let numbers: Vec<f64> = data.iter().copied().filter(|x| !x.is_nan()).collect();
    let selector = Selector::new().nan_policy(NanPolicy::Omit);
    for m in [2, 5, 11, 101] {
        for method in [QuantileMethod::Linear, QuantileMethod::InvertedCdf] {
            let est = DensityEstimate::from_data(&selector, &data, &even(m), method).unwrap();
            let got = est.ks_distance(&data, NanPolicy::Omit).unwrap();
            let want = brute_force_ks(&est, &numbers);
            assert!(
                (got - want).abs() < 1e-15,
                "m = {m}, {method}: {got} vs {want}"
            );
        }
    }
    // Integers of every width, through f64.
    let ints: Vec<i32> = numbers.iter().map(|&x| x as i32).collect();
    let est =
        DensityEstimate::from_data(&Selector::new(), &ints, &even(11), QuantileMethod::Linear)
            .unwrap();
    let got = est.ks_distance(&ints, NanPolicy::Error).unwrap();
    assert!((got - brute_force_ks(&est, &numbers)).abs() < 1e-15);
}

backend_test!(
    estimate_is_the_same_on_every_backend,
    |selector: Selector| {
        let data: Vec<f32> = delays(50_000, 3).into_iter().map(|x| x as f32).collect();
        let probs = even(101);
        let selector = selector.nan_policy(NanPolicy::Omit);
        let est =
            DensityEstimate::from_data(&selector, &data, &probs, QuantileMethod::Hazen).unwrap();
        let reference = kselect::Selector::on(kselect::Device::Cpu)
            .nan_policy(NanPolicy::Omit)
            .quantiles(&data, &probs, QuantileMethod::Hazen)
            .unwrap();
        assert_eq!(est, DensityEstimate::new(&probs, &reference).unwrap());
    }
);

#[test]
fn mass_and_inverse_are_consistent_on_real_looking_data() {
    let data = delays(10_000, 5);
    let selector = Selector::new().nan_policy(NanPolicy::Omit);
    let est =
        DensityEstimate::from_data(&selector, &data, &even(101), QuantileMethod::Linear).unwrap();
    let total: f64 = est.components().iter().map(|c| c.mass()).sum();
    assert!((total - 1.0).abs() < 1e-12);
    assert!(!est.point_masses().is_empty(), "rounded data has ties");
    for i in 0..=1000 {
        let p = i as f64 / 1000.0;
        let x = est.quantile(p).unwrap();
        // The generalized inverse: F(x) >= p, and F just below x is at most p.
        assert!(est.cdf(x) >= p - 1e-12, "{p}");
        assert!(est.cdf_left(x) <= p + 1e-12, "{p}");
    }
    let smooth = est.smoothed(Bandwidth::default()).unwrap();
    let (lo, hi) = smooth.support();
    assert_eq!(smooth.cdf(lo), 0.0);
    assert_eq!(smooth.cdf(hi), 1.0);
}

// ---------------------------------------------------------------------------------------------
// Plots
// ---------------------------------------------------------------------------------------------

/// The width and height in a PNG file's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 33, "{} bytes", bytes.len());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[8..12], &[0, 0, 0, 13], "IHDR length");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

fn estimate_and_histogram(data: &[f64]) -> (DensityEstimate, Histogram) {
    let selector = Selector::new().nan_policy(NanPolicy::Omit);
    let est =
        DensityEstimate::from_data(&selector, data, &even(101), QuantileMethod::Linear).unwrap();
    let hist = Histogram::over_support(data, &est, 100, NanPolicy::Omit).unwrap();
    (est, hist)
}

#[test]
fn png_files_have_the_requested_size() {
    let dir = tempfile::tempdir().unwrap();
    let data = delays(20_000, 1);
    let (est, hist) = estimate_and_histogram(&data);
    for (width, height) in [(1000, 600), (640, 480), (333, 257)] {
        let options = PlotOptions {
            width,
            height,
            ..PlotOptions::default()
        };
        let pdf = dir.path().join(format!("pdf-{width}.png"));
        let cdf = dir.path().join(format!("cdf-{width}.PNG"));
        plot_pdf(&pdf, &est, &hist, &options).unwrap();
        plot_cdf(&cdf, &est, &hist, &options).unwrap();
        for path in [&pdf, &cdf] {
            let bytes = std::fs::read(path).unwrap();
            assert_eq!(png_size(&bytes), (width, height), "{}", path.display());
            // A drawn picture compresses less than a blank one.
            assert!(
                bytes.len() > 5_000,
                "{}: {} bytes",
                path.display(),
                bytes.len()
            );
        }
    }
}

#[test]
fn svg_files_hold_the_labels() {
    let dir = tempfile::tempdir().unwrap();
    let data = delays(20_000, 2);
    let (est, hist) = estimate_and_histogram(&data);
    let options = PlotOptions {
        title: "Departure delays & more <2013>".to_string(),
        x_label: "delay (minutes)".to_string(),
        bandwidth: Bandwidth::Fixed(2.5),
        ..PlotOptions::default()
    };
    let pdf = dir.path().join("pdf.svg");
    let cdf = dir.path().join("cdf.svg");
    plot_pdf(&pdf, &est, &hist, &options).unwrap();
    plot_cdf(&cdf, &est, &hist, &options).unwrap();
    let pdf = std::fs::read_to_string(pdf).unwrap();
    let cdf = std::fs::read_to_string(cdf).unwrap();
    for svg in [&pdf, &cdf] {
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        assert!(svg.contains("width=\"1000\"") && svg.contains("height=\"600\""));
        assert!(svg.contains("Departure delays &amp; more &lt;2013&gt;"));
        assert!(svg.contains("delay (minutes)"));
        assert!(svg.contains("from 101 order statistics"));
        assert!(svg.contains("half-width 2.5"));
        assert!(svg.contains("sans-serif"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }
    assert!(pdf.contains("probability density") && pdf.contains("point mass"));
    assert!(pdf.contains("histogram of the data, normalized"));
    assert!(cdf.contains("cumulative probability") && cdf.contains("cumulative histogram"));
    assert!(pdf.contains("smoothed PDF") && cdf.contains("smoothed CDF"));

    // Without the smoothed curve.
    let plain = dir.path().join("plain.svg");
    let options = PlotOptions {
        smoothed: false,
        ..options
    };
    plot_pdf(&plain, &est, &hist, &options).unwrap();
    assert!(!std::fs::read_to_string(plain).unwrap().contains("smoothed"));
}

#[test]
fn degenerate_and_extreme_inputs_plot_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<Vec<f64>> = vec![
        vec![5.0; 100],
        vec![0.0, 0.0, 1.0],
        vec![-1e300, 1e300, 0.0],
        vec![1e-300, 2e-300, 3e-300, 4e-300],
        (0..1000).map(|i| (i % 3) as f64 * 0.1).collect(),
    ];
    for (i, data) in cases.iter().enumerate() {
        let (est, hist) = estimate_and_histogram(data);
        for ext in ["png", "svg"] {
            let path = dir.path().join(format!("case{i}.{ext}"));
            plot_pdf(&path, &est, &hist, &PlotOptions::default())
                .unwrap_or_else(|e| panic!("case {i}: {e}"));
            plot_cdf(&path, &est, &hist, &PlotOptions::default())
                .unwrap_or_else(|e| panic!("case {i}: {e}"));
            assert!(std::fs::metadata(&path).unwrap().len() > 0);
        }
    }
}

#[test]
fn bad_plot_requests_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (est, hist) = estimate_and_histogram(&delays(1000, 4));
    let jpg = dir.path().join("pdf.jpg");
    let err = plot_pdf(&jpg, &est, &hist, &PlotOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Density(DensityError::ImageExtension { path }) if *path == jpg),
        "{err}"
    );
    assert!(err.to_string().contains(".png or .svg"), "{err}");
    assert!(!jpg.exists());
    assert!(ImageFormat::from_path(Path::new("x")).is_err());

    for ext in ["png", "svg"] {
        let missing = dir.path().join("no/such/dir").join(format!("cdf.{ext}"));
        match plot_cdf(&missing, &est, &hist, &PlotOptions::default()) {
            Err(Error::Plot { path, .. }) => assert_eq!(path, missing),
            other => panic!("{other:?}"),
        }
    }
    let tiny = PlotOptions {
        width: 20,
        ..PlotOptions::default()
    };
    let err = plot_pdf(dir.path().join("t.png"), &est, &hist, &tiny).unwrap_err();
    assert!(err.to_string().contains("200 to 8000"), "{err}");
    let bad_bandwidth = PlotOptions {
        bandwidth: Bandwidth::Fixed(-1.0),
        ..PlotOptions::default()
    };
    let err = plot_pdf(dir.path().join("b.svg"), &est, &hist, &bad_bandwidth).unwrap_err();
    assert!(err.to_string().contains("bandwidth"), "{err}");
}
