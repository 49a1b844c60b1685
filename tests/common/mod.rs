//! Helpers shared by the integration tests: a deterministic PRNG, the element types' test
//! constructors, the adversarial corpus, the sort-based reference, bit-exact assertions, and the
//! [`backend_test!`] macro that runs one test body on every backend.
//!
//! Include it with `#[macro_use] mod common;` at the top of a test file. The helpers of the
//! tests that run the `kselect` binary are in `cli` (with the `cli` feature).

#![allow(dead_code)]

#[cfg(feature = "cli")]
pub mod cli;
pub mod json;
pub mod recovery;
pub mod sklearn;

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use kselect::{Algorithm, Device, Element, Selector};

/// A file or folder of the repository, by its path from the repository's root: under the
/// working directory when it is there (cargo runs the tests from the root, and so does
/// `run-tests.sh` on another machine), otherwise in the source tree the tests were built from.
pub fn repository_file(relative: &str) -> PathBuf {
    let here = Path::new(relative);
    if here.exists() {
        here.to_path_buf()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
    }
}

// ---------------------------------------------------------------------------------------------
// Backends
// ---------------------------------------------------------------------------------------------

/// Emits `mod $name { #[test] fn cpu() ..; #[test] fn cuda() .. }`: one test body, run with a
/// CPU selector and with a selector on CUDA device 0.
///
/// Without a usable GPU the `cuda` test prints a note and passes, unless `KSELECT_REQUIRE_GPU=1`
/// is set, in which case it fails with the error `Device::cuda(0)` returned.
///
/// ```ignore
/// backend_test!(smallest, |selector: kselect::Selector| {
///     assert_eq!(selector.select(&[3, 1, 2], 0).unwrap(), 1);
/// });
/// ```
#[allow(unused_macros)]
macro_rules! backend_test {
    ($name:ident, |$selector:ident : $ty:ty| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body($selector: $ty) $body

            #[test]
            fn cpu() {
                body($crate::common::cpu_selector());
            }

            #[test]
            fn cuda() {
                if let Some(selector) = $crate::common::cuda_selector() {
                    body(selector);
                }
            }
        }
    };
}

/// Per element type, a module of [`backend_test!`]s, each calling a generic check with the
/// selector: `typed_backend_tests!([small_sizes: check_small] type_f32: f32)` declares the
/// module `type_f32` with the test `small_sizes`, which calls `check_small::<f32>(&selector)`.
#[allow(unused_macros)]
macro_rules! typed_backend_tests {
    ($tests:tt $($module:ident: $t:ty),* $(,)?) => {
        $(typed_backend_tests!(@module $tests $module $t);)*
    };
    (@module [$($test:ident: $check:ident),* $(,)?] $module:ident $t:ty) => {
        mod $module {
            use super::*;

            $(
                backend_test!($test, |selector: Selector| {
                    $check::<$t>(&selector);
                });
            )*
        }
    };
}

/// Whether `KSELECT_REQUIRE_GPU=1` is set: CUDA tests then fail instead of skipping.
pub fn require_gpu() -> bool {
    std::env::var("KSELECT_REQUIRE_GPU").is_ok_and(|v| v.trim() == "1")
}

/// A selector on the CPU with the default settings.
pub fn cpu_selector() -> Selector {
    Selector::on(Device::Cpu)
}

/// CUDA device 0, or `None` (after printing why) when there is none; panics instead of
/// returning `None` when [`require_gpu`] is set.
pub fn cuda_device() -> Option<Device> {
    match Device::cuda(0) {
        Ok(device) => Some(device),
        Err(e) if require_gpu() => panic!("KSELECT_REQUIRE_GPU=1 but CUDA device 0 failed: {e}"),
        Err(e) => {
            eprintln!("note: skipping a CUDA test, no usable GPU: {e}");
            None
        }
    }
}

/// A selector on CUDA device 0 (see [`cuda_device`]).
pub fn cuda_selector() -> Option<Selector> {
    cuda_device().map(Selector::on)
}

/// The algorithms the backend of `device` offers (`Auto` included).
pub fn algorithms(device: &Device) -> &'static [Algorithm] {
    match device {
        Device::Cpu => Algorithm::cpu_algorithms(),
        Device::Cuda(_) => Algorithm::cuda_algorithms(),
    }
}

/// The algorithms of the selector's backend.
pub fn algorithms_of(selector: &Selector) -> &'static [Algorithm] {
    algorithms(selector.device())
}

// ---------------------------------------------------------------------------------------------
// PRNG
// ---------------------------------------------------------------------------------------------

/// splitmix64 (Steele, Lea & Flood): tiny, fast and good enough for test data. Deterministic, so
/// every failure reproduces.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A generator whose seed is derived from a label and a number (FNV-1a of both), so that
    /// each (case, type, size) gets its own stream.
    pub fn from_label(label: &str, n: u64) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in label.bytes().chain(n.to_le_bytes()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        SplitMix64(h)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for our `n`).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`, 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A standard normal variate (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------

/// The test constructors of an element type: from `f64`, from raw bits, and its special values.
pub trait TestElement: Element {
    /// Width in bits.
    const BITS: u32;
    /// Whether the type is a float.
    const FLOAT: bool;
    /// Whether the type is a signed integer or a float.
    const SIGNED: bool;
    /// Where integer data of "normal" shape is centred: `2^(BITS-1)` for unsigned types, 0
    /// otherwise.
    const CENTER: f64;

    /// The value nearest to `x`, saturating at the type's range (Rust's `as`).
    fn from_f64(x: f64) -> Self;
    /// The value with the low `BITS` bits of `bits` (for floats any pattern, NaNs included).
    fn from_bits(bits: u64) -> Self;
    /// The value's bits, widened.
    fn bits(self) -> u64;
    /// The smallest value (`-inf` for floats).
    fn min_value() -> Self;
    /// The largest value (`+inf` for floats).
    fn max_value() -> Self;
    /// A huge finite value for the "outliers" case: `1e300` for `f64`, the maximum otherwise.
    fn huge() -> Self;

    /// A uniformly random bit pattern that is not NaN (floats: any exponent, so infinities,
    /// zeros and subnormals appear too).
    fn random_bits(rng: &mut SplitMix64) -> Self {
        loop {
            let x = Self::from_bits(rng.next_u64());
            if !x.is_nan() {
                return x;
            }
        }
    }

    /// A random NaN: random sign and payload, quiet or signalling (floats only).
    fn random_nan(rng: &mut SplitMix64) -> Self {
        assert!(Self::FLOAT, "integers have no NaN");
        let mantissa_bits = if Self::BITS == 32 { 23 } else { 52 };
        let mantissa_mask = (1u64 << mantissa_bits) - 1;
        let exponent = ((1u64 << (Self::BITS - 1)) - 1) & !mantissa_mask;
        let sign = (rng.next_u64() & 1) << (Self::BITS - 1);
        let mut mantissa = rng.next_u64() & mantissa_mask;
        if mantissa == 0 {
            mantissa = 1;
        }
        let x = Self::from_bits(sign | exponent | mantissa);
        debug_assert!(x.is_nan());
        x
    }

    /// A random subnormal (or zero) of random sign (floats only).
    fn random_subnormal(rng: &mut SplitMix64) -> Self {
        assert!(Self::FLOAT, "integers have no subnormals");
        let mantissa_bits = if Self::BITS == 32 { 23 } else { 52 };
        let sign = (rng.next_u64() & 1) << (Self::BITS - 1);
        Self::from_bits(sign | (rng.next_u64() & ((1u64 << mantissa_bits) - 1)))
    }

    /// `-0.0` (floats only).
    fn neg_zero() -> Self {
        assert!(Self::FLOAT, "integers have no -0");
        Self::from_bits(1u64 << (Self::BITS - 1))
    }
}

macro_rules! test_float {
    ($t:ty, $bits:ty, $huge:expr) => {
        impl TestElement for $t {
            const BITS: u32 = <$bits>::BITS;
            const FLOAT: bool = true;
            const SIGNED: bool = true;
            const CENTER: f64 = 0.0;
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn min_value() -> Self {
                <$t>::NEG_INFINITY
            }
            fn max_value() -> Self {
                <$t>::INFINITY
            }
            fn huge() -> Self {
                $huge
            }
        }
    };
}

macro_rules! test_int {
    ($t:ty, $signed:expr) => {
        impl TestElement for $t {
            const BITS: u32 = <$t>::BITS;
            const FLOAT: bool = false;
            const SIGNED: bool = $signed;
            const CENTER: f64 = if $signed {
                0.0
            } else {
                (1u64 << (<$t>::BITS - 1)) as f64
            };
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
            fn bits(self) -> u64 {
                // Zero-extended, so that the same value always has the same bits.
                (self as u64) & (u64::MAX >> (64 - <$t>::BITS))
            }
            fn min_value() -> Self {
                <$t>::MIN
            }
            fn max_value() -> Self {
                <$t>::MAX
            }
            fn huge() -> Self {
                <$t>::MAX
            }
        }
    };
}

test_float!(f32, u32, f32::MAX);
test_float!(f64, u64, 1e300);
test_int!(i32, true);
test_int!(i64, true);
test_int!(u32, false);
test_int!(u64, false);

/// Whether two slices hold the same bits, element by element.
pub fn same_bits<T: TestElement>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

// ---------------------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------------------

/// The sizes of the corpus: around warp, block and tile boundaries, and one above the parallel
/// threshold (`1 << 17`). `0` is in the list; most tests treat it apart (it is an error).
pub const SIZES: &[usize] = &[
    0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537,
    300_000,
];

/// The names of the corpus cases, in order. Some apply to float types only (see [`generate`]).
pub const CASES: &[&str] = &[
    "sorted",
    "reversed",
    "all_equal",
    "distinct_2",
    "distinct_16",
    "distinct_1024",
    "bucket_killer",
    "ones_and_twos",
    "huge_outliers",
    "denormals",
    "infinities",
    "signed_zeros",
    "nan_mixed",
    "uniform",
    "random_bits",
    "normal",
    "half_normal",
];

/// One input of the corpus.
#[derive(Clone, Debug)]
pub struct Case<T> {
    /// The case's name (one of [`CASES`]).
    pub name: &'static str,
    /// The values.
    pub data: Vec<T>,
}

impl<T: TestElement> Case<T> {
    /// Whether the data holds a NaN (then only `NanPolicy::Last`/`Omit` may select from it).
    pub fn has_nan(&self) -> bool {
        self.data.iter().any(|x| x.is_nan())
    }

    /// `type/case/n`, for failure messages.
    pub fn label(&self) -> String {
        format!("{}/{}/n={}", T::DTYPE, self.name, self.data.len())
    }
}

/// Every case of the corpus that applies to `T`, with `n` values each.
pub fn corpus<T: TestElement>(n: usize) -> Vec<Case<T>> {
    CASES
        .iter()
        .filter_map(|&name| generate::<T>(name, n).map(|data| Case { name, data }))
        .collect()
}

/// The case `name` with `n` values of type `T`, or `None` when it does not apply to `T`
/// (denormals, infinities, signed zeros, NaN and random bit patterns are float-only cases).
/// Deterministic: the same arguments give the same values.
pub fn generate<T: TestElement>(name: &str, n: usize) -> Option<Vec<T>> {
    let mut rng = SplitMix64::from_label(&format!("{}/{name}", T::DTYPE), n as u64);
    let rng = &mut rng;
    let float_only = matches!(
        name,
        "denormals" | "infinities" | "signed_zeros" | "nan_mixed" | "random_bits"
    );
    if float_only && !T::FLOAT {
        return None;
    }
    let data: Vec<T> = match name {
        "sorted" => {
            let mut v = uniform::<T>(rng, n);
            v.sort_by_key(|x| x.to_key());
            v
        }
        "reversed" => {
            let mut v = uniform::<T>(rng, n);
            v.sort_by_key(|x| std::cmp::Reverse(x.to_key()));
            v
        }
        "all_equal" => {
            let x = uniform::<T>(rng, 1)[0];
            vec![x; n]
        }
        "distinct_2" => few_distinct(rng, n, 2),
        "distinct_16" => few_distinct(rng, n, 16),
        "distinct_1024" => few_distinct(rng, n, 1024),
        "bucket_killer" => bucket_killer(rng, n),
        "ones_and_twos" => (0..n)
            .map(|_| T::from_f64(if rng.chance(0.95) { 1.0 } else { 2.0 }))
            .collect(),
        "huge_outliers" => {
            let mut v: Vec<T> = (0..n).map(|_| T::from_f64(rng.unit() * 100.0)).collect();
            let outliers = if n == 0 { 0 } else { (n / 100).max(1) };
            for _ in 0..outliers {
                let i = rng.below(n);
                v[i] = if T::SIGNED && rng.chance(0.5) {
                    if T::FLOAT {
                        T::from_f64(-T::huge().to_f64())
                    } else {
                        T::min_value()
                    }
                } else {
                    T::huge()
                };
            }
            v
        }
        "denormals" => (0..n)
            .map(|_| match rng.below(10) {
                0 => T::from_f64(0.0),
                1 => T::neg_zero(),
                2 => T::from_f64(if T::BITS == 32 {
                    f32::MIN_POSITIVE as f64
                } else {
                    f64::MIN_POSITIVE
                }),
                _ => T::random_subnormal(rng),
            })
            .collect(),
        "infinities" => (0..n)
            .map(|_| match rng.below(10) {
                0 => T::max_value(),
                1 => T::min_value(),
                _ => T::from_f64(rng.normal() * 1e3),
            })
            .collect(),
        "signed_zeros" => (0..n)
            .map(|_| match rng.below(20) {
                0..=8 => T::neg_zero(),
                9..=17 => T::from_f64(0.0),
                18 => T::from_f64(-rng.unit()),
                _ => T::from_f64(rng.unit()),
            })
            .collect(),
        "nan_mixed" => (0..n)
            .map(|_| {
                if rng.chance(0.1) {
                    T::random_nan(rng)
                } else {
                    T::from_f64(rng.normal() * 10.0)
                }
            })
            .collect(),
        "uniform" => uniform(rng, n),
        "random_bits" => (0..n).map(|_| T::random_bits(rng)).collect(),
        "normal" => (0..n)
            .map(|_| T::from_f64(T::CENTER + rng.normal() * scale::<T>()))
            .collect(),
        "half_normal" => (0..n)
            .map(|_| T::from_f64(rng.normal().abs() * scale::<T>()))
            .collect(),
        other => panic!("unknown corpus case `{other}`"),
    };
    debug_assert_eq!(data.len(), n);
    Some(data)
}

/// The spread of "normal" data: 1 for floats, 10^6 for integers (so that values are mostly
/// distinct).
fn scale<T: TestElement>() -> f64 {
    if T::FLOAT {
        1.0
    } else {
        1e6
    }
}

/// Uniform values: in `[-1000, 1000)` for floats, over the whole range for integers.
fn uniform<T: TestElement>(rng: &mut SplitMix64, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            if T::FLOAT {
                T::from_f64(rng.unit() * 2000.0 - 1000.0)
            } else {
                T::from_bits(rng.next_u64())
            }
        })
        .collect()
}

/// `n` values drawn from `distinct` random values.
fn few_distinct<T: TestElement>(rng: &mut SplitMix64, n: usize, distinct: usize) -> Vec<T> {
    let values = uniform::<T>(rng, distinct);
    (0..n).map(|_| values[rng.below(distinct)]).collect()
}

/// Alabi et al.'s bucket killer: the 65 values `2^p` for `p` in `-32..=32`, the other values
/// random near `2^-32`, so that a linear projection of the range onto buckets sends almost
/// everything into one bucket at every level. Integers get the analogue: the powers of two of
/// their range and both extremes, the other values within 1024 of the minimum. Shuffled; for
/// `n` below the number of powers, a random subset of them.
fn bucket_killer<T: TestElement>(rng: &mut SplitMix64, n: usize) -> Vec<T> {
    let mut v: Vec<T> = if T::FLOAT {
        (-32..=32).map(|p| T::from_f64(2f64.powi(p))).collect()
    } else {
        let top = if T::SIGNED { T::BITS - 1 } else { T::BITS };
        let mut p: Vec<T> = (0..top).map(|p| T::from_bits(1u64 << p)).collect();
        p.push(T::min_value());
        p.push(T::max_value());
        p
    };
    rng.shuffle(&mut v);
    v.truncate(n);
    while v.len() < n {
        v.push(if T::FLOAT {
            T::from_f64(2f64.powi(-32) * (1.0 + rng.unit() * 1e-3))
        } else {
            T::from_bits(T::min_value().bits().wrapping_add(rng.below(1024) as u64))
        });
    }
    rng.shuffle(&mut v);
    v
}

// ---------------------------------------------------------------------------------------------
// Reference and assertions
// ---------------------------------------------------------------------------------------------

/// The sort-based reference: the keys of the input, sorted (NaNs last, `-0.0` before `+0.0`).
#[derive(Clone, Debug)]
pub struct Reference<T: Element> {
    keys: Vec<T::Key>,
}

impl<T: Element> Reference<T> {
    /// The reference of `data`, NaNs included (ordered last, as under `NanPolicy::Last`).
    pub fn new(data: &[T]) -> Self {
        let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
        keys.sort_unstable();
        Reference { keys }
    }

    /// The reference of `data` without its NaNs (as under `NanPolicy::Omit`).
    pub fn without_nan(data: &[T]) -> Self {
        let filtered: Vec<T> = data.iter().copied().filter(|x| !x.is_nan()).collect();
        Reference::new(&filtered)
    }

    /// The number of values ranks refer to.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key of rank `k`.
    pub fn key(&self, k: usize) -> T::Key {
        self.keys[k]
    }

    /// The value of rank `k`.
    pub fn value(&self, k: usize) -> T {
        T::from_key(self.keys[k])
    }

    /// Checks that `got` is, bit for bit (through its key), the value of rank `k`.
    #[track_caller]
    pub fn check(&self, got: T, k: usize, context: &dyn Fn() -> String) {
        assert_key_eq(got, self.keys[k], &|| {
            format!("{} (rank {k} of {})", context(), self.len())
        });
    }

    /// Checks that `got[i]` is the value of rank `ranks[i]` for every `i`.
    #[track_caller]
    pub fn check_all(&self, got: &[T], ranks: &[usize], context: &dyn Fn() -> String) {
        assert_eq!(got.len(), ranks.len(), "{}: one value per rank", context());
        for (i, (&x, &k)) in got.iter().zip(ranks).enumerate() {
            self.check(x, k, &|| format!("{} [result {i}]", context()));
        }
    }
}

/// Asserts that `got` has the key `want` (so the same bits, NaNs being one key).
#[track_caller]
pub fn assert_key_eq<T: Element>(got: T, want: T::Key, context: &dyn Fn() -> String) {
    if got.to_key() != want {
        panic!(
            "{}: got {got:?} (key {:?}), expected {:?} (key {want:?})",
            context(),
            got.to_key(),
            T::from_key(want),
        );
    }
}

/// The ranks `0, 1, n/2, n-2, n-1` that exist for `n` values, without repeats.
pub fn edge_ranks(n: usize) -> Vec<usize> {
    let mut ranks: Vec<usize> = [
        Some(0),
        Some(1),
        Some(n / 2),
        n.checked_sub(2),
        n.checked_sub(1),
    ]
    .into_iter()
    .flatten()
    .filter(|&k| k < n)
    .collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// Unsorted ranks with repeats for a multiselect of `n` values (all `< n`; `n > 0`).
pub fn scrambled_ranks(n: usize) -> Vec<usize> {
    assert!(n > 0);
    let ranks = [n - 1, 0, n / 2, (2 * n) / 3, n / 2, 1, n - 1];
    ranks.into_iter().filter(|&k| k < n).collect()
}

/// One test a type, each calling a generic check with its arguments: `typed_tests!(check:
/// corpus_f32 = f32(&[33, 257]))` declares the test `corpus_f32`, which calls
/// `check::<f32>(&[33, 257])`.
#[allow(unused_macros)]
macro_rules! typed_tests {
    ($check:ident: $($name:ident = $t:ident($($arg:expr),*)),+ $(,)?) => {
        $(
            #[test]
            fn $name() {
                $check::<$t>($($arg),*);
            }
        )+
    };
}

/// Asserts that a result is the error `pattern` (a `kselect::Error` pattern, with guards).
#[allow(unused_macros)]
macro_rules! assert_err {
    ($result:expr, $pattern:pat $(if $guard:expr)?, $($context:tt)+) => {
        match $result {
            Err($pattern) $(if $guard)? => {}
            other => panic!(
                "{}: expected Err({}), got {:?}",
                format!($($context)+),
                stringify!($pattern $(if $guard)?),
                other
            ),
        }
    };
}

/// Asserts that `result` is `Error::RankOutOfRange` for rank `k` of `n` values; `what` names
/// the call.
pub fn assert_rank_out_of_range<T: Debug>(
    result: kselect::Result<T>,
    k: usize,
    n: usize,
    what: &str,
) {
    assert_err!(
        result,
        kselect::Error::RankOutOfRange { k: got, n: len } if got == k && len == n,
        "{what}"
    );
}

/// `Debug` for a short slice, the first and last elements of a long one.
pub fn preview<T: Debug>(data: &[T]) -> String {
    if data.len() <= 12 {
        format!("{data:?}")
    } else {
        format!(
            "[{:?}, ... {} more ..., {:?}]",
            &data[..6],
            data.len() - 12,
            &data[data.len() - 6..]
        )
    }
}
