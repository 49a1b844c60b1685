//! Tests of the CUDA runtime layer. They skip without a GPU and fail when
//! `KSELECT_REQUIRE_GPU=1`.

use super::kernels::KernelSource;
use super::*;
use crate::device::DeviceBuffer;

/// CUDA device 0, or `None` (a skip) when there is none and no GPU is required.
pub(crate) fn gpu() -> Option<CudaDevice> {
    match CudaDevice::new(0) {
        Ok(dev) => Some(dev),
        Err(e) if std::env::var("KSELECT_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("KSELECT_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped (no GPU): {e}");
            None
        }
    }
}

/// Whether a library the tests may skip without can be loaded (`present`); missing while the
/// environment variable `require` is `1`, the test fails instead.
pub(crate) fn library_present(present: bool, require: &str, library: &str) -> bool {
    if !present && std::env::var(require).as_deref() == Ok("1") {
        panic!("{require}=1 but {library} cannot be loaded");
    }
    present
}

/// Whether NVRTC can be loaded (it compiles kernels without a GPU). Missing, the test skips,
/// unless `KSELECT_REQUIRE_NVRTC=1` (CI installs NVRTC and sets it).
fn nvrtc_present() -> bool {
    // SAFETY: only tries to load the shared library.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    library_present(present, "KSELECT_REQUIRE_NVRTC", "libnvrtc")
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    if !nvrtc_present() {
        eprintln!("skipped (no NVRTC)");
        return;
    }
    for source in kernels::ALL {
        for arch in ["sm_80", "sm_90"] {
            let cubin = compile::compile(source.name, &source.program(), arch)
                .unwrap_or_else(|e| panic!("{} for {arch}: {e}", source.name));
            assert!(!cubin.is_empty());
        }
    }
}

#[test]
fn discovery_never_panics() {
    // With or without CUDA: either a device or a clear error.
    match CudaDevice::count() {
        Ok(n) => {
            assert!(
                CudaDevice::new(n).is_err(),
                "ordinal {n} of {n} must be refused"
            );
        }
        Err(e) => assert!(matches!(e, Error::CudaUnavailable(_)), "{e}"),
    }
    let _ = crate::device::Device::auto();
}

#[test]
fn handles_share_one_device() {
    let Some(dev) = gpu() else { return };
    let again = CudaDevice::new(0).unwrap();
    assert!(Arc::ptr_eq(&dev.inner, &again.inner));
    assert!(dev.arch().starts_with("sm_"));
    assert!(dev.multiprocessors() > 0);
}

#[test]
fn compile_errors_carry_the_nvrtc_log() {
    let Some(dev) = gpu() else { return };
    static BROKEN: KernelSource = KernelSource {
        name: "broken.cu",
        text: "extern \"C\" __global__ void broken_f32(float* x) { x[0] = undefined_name; }",
    };
    match compile::cubin(&BROKEN, &dev.arch()) {
        Err(Error::KernelCompile {
            log, source_name, ..
        }) => {
            assert_eq!(source_name, "broken.cu");
            assert!(log.contains("undefined_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn out_of_memory_is_an_error() {
    let Some(dev) = gpu() else { return };
    let (_, total) = dev.memory_info().unwrap();
    match dev.alloc::<f32>(total, "a test buffer") {
        Err(Error::OutOfDeviceMemory {
            bytes, total: t, ..
        }) => {
            assert_eq!(bytes, total * 4);
            assert_eq!(t, total);
        }
        other => panic!(
            "expected OutOfDeviceMemory, got {:?}",
            other.map(|s| s.len())
        ),
    }
    // The device still works afterwards.
    let buf = DeviceBuffer::from_host_on(&dev, &[1.0f32, 2.0]).unwrap();
    assert_eq!(buf.to_host().unwrap(), vec![1.0, 2.0]);
}

#[test]
fn buffers_round_trip_and_sum() {
    let Some(dev) = gpu() else { return };
    let data: Vec<i64> = (0..100_003).map(|i| i * 3 - 7).collect();
    let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
    assert_eq!(buf.to_host().unwrap(), data);
    assert_eq!(buf.sum().unwrap(), data.iter().sum::<i64>() as f64);
    let empty = DeviceBuffer::<f32>::from_host_on(&dev, &[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.sum().unwrap(), 0.0);
}

#[test]
fn large_copies_go_through_the_staging_buffer_both_ways() {
    let Some(dev) = gpu() else { return };
    // Halves of the staging buffer hold 4 Mi u64: one chunk, one and a bit, and several of
    // them, the last one short.
    let half = staging::STAGE / 2 / size_of::<u64>();
    for len in [staging::STAGED_BYTES / 8 - 1, half + 5, 3 * half + 777] {
        let data: Vec<u64> = (0..len as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
        assert_eq!(buf.to_host().unwrap(), data, "{len} values");
        // Into part of a larger buffer, and again: the halves are reused.
        let mut slice = dev.alloc::<u64>(len + 3, "a test").unwrap();
        upload::upload_into(&dev, &data, &mut slice.slice_mut(2..len + 2), "a test").unwrap();
        let back = dev.stream().clone_dtoh(&slice.slice(2..len + 2)).unwrap();
        assert!(back == data, "{len} values into a part");
    }
}

#[test]
fn filled_uploads_write_whole_units_at_their_place() {
    let Some(dev) = gpu() else { return };
    // Rows of 11 f64: fewer than the staging threshold, one half and a bit (a half is no whole
    // number of rows), and several halves.
    let unit = 11;
    let half_rows = staging::STAGE / 2 / (unit * size_of::<f64>());
    for rows in [7, 1000, half_rows + 3, 3 * half_rows + 50] {
        let value = |i: usize| (i as f64).mul_add(0.5, -3.0);
        let mut slice = dev.alloc::<f64>(rows * unit + 2, "a test").unwrap();
        let pieces = std::sync::atomic::AtomicUsize::new(0);
        upload::upload_filled(
            &dev,
            &mut slice.slice_mut(1..rows * unit + 1),
            unit,
            "a test",
            |first, out| {
                assert_eq!((first % unit, out.len() % unit), (0, 0), "whole rows");
                pieces.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                for (k, v) in out.iter_mut().enumerate() {
                    *v = value(first + k);
                }
            },
        )
        .unwrap();
        let back = dev
            .stream()
            .clone_dtoh(&slice.slice(1..rows * unit + 1))
            .unwrap();
        assert!(
            back.iter().enumerate().all(|(i, &v)| v == value(i)),
            "{rows} rows"
        );
        assert!(pieces.into_inner() >= 1);
    }
}

#[test]
fn timer_measures_work() {
    let Some(dev) = gpu() else { return };
    let buf = DeviceBuffer::from_host_on(&dev, &vec![1.0f32; 1 << 20]).unwrap();
    // A first sum compiles the kernel (NVRTC, seconds on a cold cache while other tests compile
    // theirs): the timer measures a second one.
    buf.sum().unwrap();
    let timer = GpuTimer::start(&dev).unwrap();
    assert_eq!(buf.sum().unwrap(), (1 << 20) as f64);
    let ms = timer.stop().unwrap();
    // Tests running beside this one queue their work on the same stream, between the timer's
    // events: the time is positive and finite, with no upper bound that holds under load.
    assert!(ms > 0.0 && ms.is_finite(), "{ms}");
}

#[test]
fn gpu_sort_matches_the_cpu() {
    let Some(dev) = gpu() else { return };
    let mut state = 7u64;
    let data: Vec<f64> = (0..300_001)
        .map(|i| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            match i % 97 {
                0 => f64::NAN,
                1 => -0.0,
                2 => f64::NEG_INFINITY,
                _ => ((state >> 20) % 5000) as f64 - 2500.0,
            }
        })
        .collect();
    let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
    let sorted = crate::select::sort_device(&buf).unwrap().to_host().unwrap();
    let mut keys: Vec<u64> = data.iter().map(|x| crate::Element::to_key(*x)).collect();
    keys.sort_unstable();
    let got: Vec<u64> = sorted.iter().map(|x| crate::Element::to_key(*x)).collect();
    assert_eq!(got, keys);
    // Pairs: a stable sort carrying indices.
    let idx: Vec<u32> = (0..data.len() as u32).collect();
    let vals = DeviceBuffer::from_host_on(&dev, &idx).unwrap();
    let (k, v) = crate::select::sort_pairs_device(&buf, &vals).unwrap();
    let (k, v) = (k.to_host().unwrap(), v.to_host().unwrap());
    let mut expected: Vec<(u64, u32)> = data
        .iter()
        .zip(&idx)
        .map(|(x, &i)| (crate::Element::to_key(*x), i))
        .collect();
    expected.sort_by_key(|&(key, _)| key); // stable
    let got: Vec<(u64, u32)> = k
        .iter()
        .map(|x| crate::Element::to_key(*x))
        .zip(v)
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_launch_shape_its_kernel_cannot_take_is_an_error() {
    use super::kernels::bucket_multiselect::{bms_sample, SAMPLE};
    let Some(dev) = gpu() else { return };
    let data: Vec<f32> = (0..SAMPLE * 4).map(|i| i as f32).collect();
    let buf = DeviceBuffer::from_host_on(&dev, &data).unwrap();
    let mut out = dev.alloc_zeros::<u32>(SAMPLE, "the sample").unwrap();
    let n = data.len() as u64;
    let half = launch::config(1, SAMPLE as u32 / 2);
    let err = bms_sample(&dev, half, &buf.as_slice().as_view(), n, 7, &mut out).unwrap_err();
    assert!(
        err.to_string()
            .contains("shape.block_dim == (SAMPLE as u32, 1, 1)"),
        "{err}"
    );
    let whole = launch::config(1, SAMPLE as u32);
    bms_sample(&dev, whole, &buf.as_slice().as_view(), n, 7, &mut out).unwrap();
    let sample = dev.read(&out, "the sample").unwrap();
    assert!(
        sample.windows(2).all(|w| w[0] <= w[1]),
        "the sample is sorted"
    );
}

#[test]
fn result_words_come_back_from_a_mailbox_or_device_memory() {
    let Some(dev) = gpu() else { return };
    for len in [1, 3, results::MAILBOX_WORDS, results::MAILBOX_WORDS + 1] {
        let words: Vec<u64> = (0..len as u64).map(|i| i * 3 + 1).collect();
        let src = dev.stream().clone_htod(&words).unwrap();
        let mut out = dev.result_words(len, "the words").unwrap();
        dev.stream()
            .memcpy_dtod(&src, &mut out.view_mut(0..len))
            .unwrap();
        assert_eq!(out.read().unwrap(), words, "{len} words");
    }
    // Lent and dropped unread, a mailbox comes back for the next call; several threads at once
    // each get their own.
    drop(dev.result_words(2, "unread").unwrap());
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let dev = &dev;
            s.spawn(move || {
                for i in 0..200u64 {
                    let src = dev.stream().clone_htod(&[t, i]).unwrap();
                    let mut out = dev.result_words(2, "the words").unwrap();
                    dev.stream()
                        .memcpy_dtod(&src, &mut out.view_mut(0..2))
                        .unwrap();
                    assert_eq!(out.read().unwrap(), [t, i]);
                }
            });
        }
    });
}
