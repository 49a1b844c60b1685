//! The selection algorithms: the registry that names them and the trait each implements.
//!
//! Every algorithm lives in its own folder under `select/` and implements [`Selection`] on a
//! unit struct: the backends it has, and its multiselection on each (a backend it lacks keeps
//! the trait's default, an `UnsupportedAlgorithm` error). The registry below has one line an
//! algorithm: its variant of [`Algorithm`] with the doc comment, its implementation, its name
//! and its other names. The enum, [`Algorithm::ALL`], the names, parsing, the backends' lists,
//! the CLI's help and the dispatch to the backends are all generated from it.

use std::fmt::{self, Display};
use std::str::FromStr;

use crate::device::cuda::MemoryNeed;
use crate::device::{CudaDevice, DeviceBuffer};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::{
    auto, bucket, bucket_multi, cutting_plane, floyd_rivest, introselect, quick, quick_multiselect,
    radix, randomized, sample, sort_choose,
};

/// Which backends have an algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backends {
    /// Both.
    CpuAndCuda,
    /// The CPU only.
    CpuOnly,
    /// CUDA only.
    CudaOnly,
}

/// What a backend's selection returns: the elements of the ranks, and the number of NaNs of the
/// input when the algorithm counted them in its own pass.
pub(crate) type Found<T> = Result<(Vec<T>, Option<usize>)>;

/// A selection algorithm's implementation: the elements of many ranks (each below the input's
/// length; NaNs order last) on each backend it has, and the number of NaNs of the input when
/// the algorithm counted them in its own pass (`None` when the caller must scan for them).
pub(crate) trait Selection {
    /// The backends that implement their method below.
    const BACKENDS: Backends;

    /// The selection on the CPU (`parallel`: threads allowed).
    fn cpu<T: Element>(
        algorithm: Algorithm,
        data: &[T],
        ranks: &[usize],
        parallel: bool,
    ) -> Found<T> {
        let _ = (data, ranks, parallel);
        Err(algorithm.unsupported_on("cpu"))
    }

    /// The selection on the device holding `buf`.
    fn cuda<T: Element>(algorithm: Algorithm, buf: &DeviceBuffer<T>, ranks: &[usize]) -> Found<T> {
        let _ = (buf, ranks);
        Err(algorithm.unsupported_on("cuda"))
    }

    /// The most device memory [`Selection::cuda`] allocates for the query's values of `T` and
    /// ranks.
    fn cuda_workspace<T: Element>(algorithm: Algorithm, query: &Query<'_>) -> Result<MemoryNeed> {
        let _ = query;
        Err(algorithm.unsupported_on("cuda"))
    }
}

/// What the workspace of a CUDA selection depends on.
pub(crate) struct Query<'a> {
    /// The device.
    pub dev: &'a CudaDevice,
    /// The number of values.
    pub n: usize,
    /// The ranks (any order, repeats allowed).
    pub ranks: &'a [usize],
}

/// The elements of `ranks` by a single-rank CPU selection, one call a rank (no NaN count).
pub(crate) fn each_rank<T: Element>(
    select: fn(&[T], usize, bool) -> T,
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T>, Option<usize>) {
    let values = ranks.iter().map(|&k| select(data, k, parallel)).collect();
    (values, None)
}

/// Implements [`Selection`] for an algorithm of the common shape: a CPU form that selects one
/// rank at a time (`cpu: each_rank(select)`) and/or a CUDA form that counts the NaNs in its own
/// pass and bounds its workspace by a function of the device, `n` and the number of ranks
/// (`cuda: counting_nans(multiselect), workspace(bound)`).
macro_rules! selection {
    (
        $(#[$meta:meta])*
        $name:ident: $backends:ident
        $(, cpu: each_rank($cpu:path))?
        $(, cuda: counting_nans($cuda:path), workspace($($workspace:ident)::+))?
        $(,)?
    ) => {
        $(#[$meta])*
        pub(crate) struct $name;

        impl $crate::select::algorithm::Selection for $name {
            const BACKENDS: $crate::select::algorithm::Backends =
                $crate::select::algorithm::Backends::$backends;
            $(
                fn cpu<T: $crate::element::Element>(
                    _: $crate::select::Algorithm,
                    data: &[T],
                    ranks: &[usize],
                    parallel: bool,
                ) -> $crate::select::algorithm::Found<T> {
                    Ok($crate::select::algorithm::each_rank($cpu, data, ranks, parallel))
                }
            )?
            $(
                fn cuda<T: $crate::element::Element>(
                    _: $crate::select::Algorithm,
                    buf: &$crate::device::DeviceBuffer<T>,
                    ranks: &[usize],
                ) -> $crate::select::algorithm::Found<T> {
                    let (values, nans) = $cuda(buf, ranks)?;
                    Ok((values, Some(nans)))
                }

                fn cuda_workspace<T: $crate::element::Element>(
                    _: $crate::select::Algorithm,
                    q: &$crate::select::algorithm::Query<'_>,
                ) -> $crate::error::Result<$crate::device::cuda::MemoryNeed> {
                    Ok($($workspace)::+::<T>(q.dev, q.n, q.ranks.len()))
                }
            )?
        }
    };
}

/// Generates [`Algorithm`], the registry and the dispatch from one line an algorithm.
macro_rules! registry {
    ($(
        $(#[$meta:meta])*
        $variant:ident => $implementation:ty, $name:literal, [$($alias:literal),* $(,)?];
    )*) => {
        /// A selection algorithm.
        ///
        /// `Auto` lets the backend choose its fastest exact algorithm. Every algorithm returns exactly
        /// the same value (the element of the asked rank); they differ only in speed and workspace.
        ///
        /// ```
        /// use kselect::Algorithm;
        /// let a: Algorithm = "radix".parse().unwrap();
        /// assert_eq!(a, Algorithm::Radix);
        /// assert_eq!(a.name(), "radix");
        /// assert!("heapsort".parse::<Algorithm>().is_err());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub enum Algorithm {
            $($(#[$meta])* $variant,)*
        }

        /// Every algorithm, in the enum's order, so that an algorithm's line is
        /// `REGISTRY[a as usize]`.
        const REGISTRY: [Entry; [$(Algorithm::$variant),*].len()] = [$(
            Entry {
                algorithm: Algorithm::$variant,
                name: $name,
                aliases: &[$($alias),*],
                backends: <$implementation as Selection>::BACKENDS,
            },
        )*];

        /// The elements of `ranks` of `data` by `algorithm` on the CPU (see [`Selection::cpu`]).
        pub(crate) fn run_cpu<T: Element>(
            algorithm: Algorithm,
            data: &[T],
            ranks: &[usize],
            parallel: bool,
        ) -> Found<T> {
            match algorithm {
                $(Algorithm::$variant => {
                    <$implementation as Selection>::cpu(algorithm, data, ranks, parallel)
                })*
            }
        }

        /// The elements of `ranks` of `buf` by `algorithm` on its device (see
        /// [`Selection::cuda`]).
        pub(crate) fn run_cuda<T: Element>(
            algorithm: Algorithm,
            buf: &DeviceBuffer<T>,
            ranks: &[usize],
        ) -> Found<T> {
            match algorithm {
                $(Algorithm::$variant => {
                    <$implementation as Selection>::cuda(algorithm, buf, ranks)
                })*
            }
        }

        /// The most device memory `algorithm` allocates on CUDA for the query (see
        /// [`Selection::cuda_workspace`]).
        pub(crate) fn cuda_workspace<T: Element>(
            algorithm: Algorithm,
            query: &Query<'_>,
        ) -> Result<MemoryNeed> {
            match algorithm {
                $(Algorithm::$variant => {
                    <$implementation as Selection>::cuda_workspace::<T>(algorithm, query)
                })*
            }
        }
    };
}

/// One algorithm's line of the registry: its name, the other names it answers to, and the
/// backends that have it.
struct Entry {
    algorithm: Algorithm,
    name: &'static str,
    aliases: &'static [&'static str],
    backends: Backends,
}

registry! {
    /// The backend's fastest exact algorithm.
    #[default]
    Auto => auto::Auto, "auto", [];
    /// Sort a copy and index it (the reference).
    SortChoose => sort_choose::SortChoose, "sort-choose", ["sort", "sort&choose", "sortchoose"];
    /// Introselect: the standard library's `select_nth_unstable`.
    Introselect => introselect::Introselect, "introselect", [];
    /// Floyd–Rivest: pivots from a sample bracket the rank.
    FloydRivest => floyd_rivest::FloydRivest, "floyd-rivest", ["floydrivest"];
    /// MSD radix select on order-preserving keys (Alabi et al.); copies the candidates to a
    /// workspace once they fit in `n / 16`.
    Radix => radix::Radix, "radix", ["radixselect", "radix-select"];
    /// MSD radix select in place (Alabi et al.'s `inplace radixSelect`): every pass reads the
    /// whole input and no candidate is copied, so it needs no workspace (the input is not
    /// changed: keys outside the prefix are skipped, not overwritten). CUDA only.
    RadixInPlace => radix::RadixInPlace, "radix-inplace", ["inplace-radixselect", "radix-in-place", "inplace-radix"];
    /// Bucket select: linear projection of values onto buckets (Alabi et al.), once for each
    /// rank.
    Bucket => bucket::Bucket, "bucket", ["bucketselect", "bucket-select"];
    /// SampleSelect: sorted splitters from a sample, a search tree, bucket counts (Ribizel & Anzt).
    Sample => sample::Sample, "sample", ["sampleselect", "sample-select"];
    /// Kelley's cutting-plane method on the convex objective of the order statistic (Beliakov).
    CuttingPlane => cutting_plane::CuttingPlane, "cutting-plane", ["cuttingplane"];
    /// quickMultiSelect: one partitioning recursion shared by many ranks (Blanchard et al.).
    QuickMultiselect => quick_multiselect::QuickMultiselect, "quick-multiselect", ["quickmultiselect", "multiselect"];
    /// randomizedSelect: two sampled splitters bracket the rank, one pass counts and copies
    /// the values between them (Monroe et al.).
    Randomized => randomized::Randomized, "randomized", ["randomizedselect", "randomized-select"];
    /// QuickSelect (Hoare): one sampled pivot per level, the side holding the rank is kept
    /// (on CUDA, Ribizel & Anzt's bipartitioning reference).
    Quick => quick::Quick, "quick", ["quickselect", "quick-select"];
    /// bucketMultiSelect (Blanchard, Chen & Kim): kernel density intervals from a sample, a
    /// linear projection onto thousands of buckets, one count, the buckets holding a rank
    /// written out and sorted. For many ranks at once (on the CPU: two passes whatever their
    /// number, or one fused pass for a few ranks).
    BucketMultiselect => bucket_multi::BucketMultiselect, "bucket-multiselect", ["bucketmultiselect", "bucket-multi-select", "bms"];
    /// Iterative bucket multiselection (the second phase of Blanchard et al.'s DIBMS): as
    /// bucketMultiSelect, but the written buckets are split again, level after level, instead
    /// of sorted. CUDA only.
    IterativeBucketMultiselect => bucket_multi::IterativeBucketMultiselect, "iterative-bucket-multiselect", ["iterativebucketmultiselect", "iterative-bucket-multi-select", "ibms", "dibms"];
    /// Fused bucket multiselection: bucketMultiSelect's count and write in one pass over the
    /// input, the buckets to write predicted by a count over a subset of it (a quarter to a
    /// sixteenth); then the ranks' buckets gathered from the written keys and selected on chip,
    /// one block a rank. For up to 256 ranks on large inputs; up to 2048, or where the
    /// prediction cannot pay, an exact count then a scatter of the ranks' buckets (others run
    /// iterative bucket multiselection). CUDA only; the CPU's bucketMultiSelect fuses its passes
    /// the same way for a few ranks.
    FusedMultiselect => bucket_multi::FusedMultiselect, "fused-multiselect", ["fusedmultiselect", "fused-multi-select", "fused"];
}

/// A choice of the registry's lines by backend.
#[derive(Clone, Copy)]
enum On {
    Any,
    Cpu,
    Cuda,
}

impl On {
    /// Whether an algorithm with `backends` is chosen.
    const fn accepts(self, backends: Backends) -> bool {
        match self {
            On::Any => true,
            On::Cpu => !matches!(backends, Backends::CudaOnly),
            On::Cuda => !matches!(backends, Backends::CpuOnly),
        }
    }
}

/// How many algorithms of the registry `on` chooses.
const fn count(on: On) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < REGISTRY.len() {
        if on.accepts(REGISTRY[i].backends) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The algorithms of the registry that `on` chooses, in its order.
const fn chosen<const N: usize>(on: On) -> [Algorithm; N] {
    let mut out = [Algorithm::Auto; N];
    let (mut i, mut j) = (0, 0);
    while i < REGISTRY.len() {
        if on.accepts(REGISTRY[i].backends) {
            out[j] = REGISTRY[i].algorithm;
            j += 1;
        }
        i += 1;
    }
    out
}

const CPU: [Algorithm; count(On::Cpu)] = chosen(On::Cpu);
const CUDA: [Algorithm; count(On::Cuda)] = chosen(On::Cuda);

impl Algorithm {
    /// Every algorithm, `Auto` first.
    ///
    /// ```
    /// assert!(kselect::Algorithm::ALL.contains(&kselect::Algorithm::Bucket));
    /// ```
    pub const ALL: [Algorithm; REGISTRY.len()] = chosen(On::Any);

    /// The algorithm's line of the registry.
    fn entry(self) -> &'static Entry {
        &REGISTRY[self as usize]
    }

    /// The algorithm's name as the CLI spells it.
    ///
    /// ```
    /// assert_eq!(kselect::Algorithm::SortChoose.name(), "sort-choose");
    /// ```
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The algorithms the CPU backend has.
    ///
    /// ```
    /// assert_eq!(kselect::Algorithm::cpu_algorithms().len(), 12);
    /// ```
    pub fn cpu_algorithms() -> &'static [Algorithm] {
        &CPU
    }

    /// The algorithms the CUDA backend has.
    ///
    /// ```
    /// use kselect::Algorithm;
    /// assert!(Algorithm::cuda_algorithms().contains(&Algorithm::Radix));
    /// ```
    pub fn cuda_algorithms() -> &'static [Algorithm] {
        &CUDA
    }

    /// The error for this algorithm asked of `backend` (`"cpu"` or `"cuda"`), which lacks it:
    /// it names the backends that have it and what `backend` has.
    pub(crate) fn unsupported_on(self, backend: &str) -> Error {
        let (available, has_it) = match backend {
            "cpu" => (Algorithm::cpu_algorithms(), "cuda"),
            _ => (Algorithm::cuda_algorithms(), "cpu"),
        };
        Error::UnsupportedAlgorithm {
            algorithm: self.name().to_string(),
            backend: backend.to_string(),
            runs_on: has_it.to_string(),
            available: Algorithm::names(available),
        }
    }

    /// Names of a list of algorithms, comma separated.
    pub(crate) fn names(list: &[Algorithm]) -> String {
        list.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
    }
}

impl Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    /// An algorithm by its name or one of its other names (case, `_` for `-` and surrounding
    /// spaces aside).
    fn from_str(s: &str) -> Result<Self> {
        let names = REGISTRY.iter().flat_map(|e| {
            let others = e.aliases.iter().map(|&alias| (alias, e.algorithm));
            std::iter::once((e.name, e.algorithm)).chain(others)
        });
        crate::names::parse(s, "algorithm", names, REGISTRY.iter().map(|e| e.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_reads_back_as_its_algorithm() {
        let mut seen = std::collections::HashSet::new();
        for entry in &REGISTRY {
            for name in std::iter::once(&entry.name).chain(entry.aliases) {
                assert!(seen.insert(*name), "{name} names two algorithms");
                assert_eq!(name.parse::<Algorithm>().unwrap(), entry.algorithm);
            }
        }
        assert_eq!(
            " Radix_Select ".parse::<Algorithm>().unwrap(),
            Algorithm::Radix
        );
        let err = "heapsort".parse::<Algorithm>().unwrap_err();
        assert!(
            matches!(&err, Error::UnknownName { kind: "algorithm", given, known }
                if given == "heapsort" && known.len() == Algorithm::ALL.len()),
            "{err:?}"
        );
        assert!(err
            .to_string()
            .starts_with("invalid argument: unknown algorithm `heapsort` (known: auto, "));
    }

    #[test]
    fn every_algorithm_runs_on_a_backend_and_auto_on_both() {
        for a in Algorithm::ALL {
            let (cpu, cuda) = (CPU.contains(&a), CUDA.contains(&a));
            assert!(cpu || cuda, "{a}");
            assert_eq!(
                a == Algorithm::Auto || a.entry().backends == Backends::CpuAndCuda,
                cpu && cuda,
                "{a}"
            );
        }
        assert!(matches!(
            Algorithm::RadixInPlace.unsupported_on("cpu"),
            Error::UnsupportedAlgorithm { runs_on, .. } if runs_on == "cuda"
        ));
    }
}
