//! The selection algorithms, by name.

use std::fmt::{self, Display};
use std::str::FromStr;

use crate::error::{Error, Result};

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
    /// The backend's fastest exact algorithm.
    #[default]
    Auto,
    /// Sort a copy and index it (the reference).
    SortChoose,
    /// Introselect: the standard library's `select_nth_unstable`.
    Introselect,
    /// Floyd–Rivest: pivots from a sample bracket the rank.
    FloydRivest,
    /// MSD radix select on order-preserving keys (Alabi et al.); copies the candidates to a
    /// workspace once they fit in `n / 16`.
    Radix,
    /// MSD radix select in place (Alabi et al.'s `inplace radixSelect`): every pass reads the
    /// whole input and no candidate is copied, so it needs no workspace (the input is not
    /// changed: keys outside the prefix are skipped, not overwritten). CUDA only.
    RadixInPlace,
    /// Bucket select: linear projection of values onto buckets (Alabi et al.), once for each
    /// rank.
    Bucket,
    /// SampleSelect: sorted splitters from a sample, a search tree, bucket counts (Ribizel & Anzt).
    Sample,
    /// Kelley's cutting-plane method on the convex objective of the order statistic (Beliakov).
    CuttingPlane,
    /// quickMultiSelect: one partitioning recursion shared by many ranks (Blanchard et al.).
    QuickMultiselect,
    /// randomizedSelect: two sampled splitters bracket the rank, one pass counts and copies
    /// the values between them (Monroe et al.).
    Randomized,
    /// QuickSelect (Hoare): one sampled pivot per level, the side holding the rank is kept
    /// (on CUDA, Ribizel & Anzt's bipartitioning reference).
    Quick,
    /// bucketMultiSelect (Blanchard, Chen & Kim): kernel density intervals from a sample, a
    /// linear projection onto thousands of buckets, one count, the buckets holding a rank
    /// written out and sorted. For many ranks at once (on the CPU: two passes whatever their
    /// number, or one fused pass for a few ranks).
    BucketMultiselect,
    /// Iterative bucket multiselection (the second phase of Blanchard et al.'s DIBMS): as
    /// bucketMultiSelect, but the written buckets are split again, level after level, instead
    /// of sorted. CUDA only.
    IterativeBucketMultiselect,
    /// Fused bucket multiselection: bucketMultiSelect's count and write in one pass over the
    /// input, the buckets to write predicted by a count over a subset of it (a quarter to a
    /// sixteenth); then the ranks' buckets gathered from the written keys and selected on chip,
    /// one block a rank. For up to 256 ranks on large inputs (others run iterative bucket
    /// multiselection). CUDA only; the CPU's bucketMultiSelect fuses its passes the same way for
    /// a few ranks.
    FusedMultiselect,
}

impl Algorithm {
    /// Every algorithm, `Auto` first.
    ///
    /// ```
    /// assert!(kselect::Algorithm::ALL.contains(&kselect::Algorithm::Bucket));
    /// ```
    pub const ALL: [Algorithm; 15] = [
        Algorithm::Auto,
        Algorithm::SortChoose,
        Algorithm::Introselect,
        Algorithm::FloydRivest,
        Algorithm::Radix,
        Algorithm::RadixInPlace,
        Algorithm::Bucket,
        Algorithm::Sample,
        Algorithm::CuttingPlane,
        Algorithm::QuickMultiselect,
        Algorithm::Randomized,
        Algorithm::Quick,
        Algorithm::BucketMultiselect,
        Algorithm::IterativeBucketMultiselect,
        Algorithm::FusedMultiselect,
    ];

    /// The algorithm's name as the CLI spells it.
    ///
    /// ```
    /// assert_eq!(kselect::Algorithm::SortChoose.name(), "sort-choose");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::SortChoose => "sort-choose",
            Algorithm::Introselect => "introselect",
            Algorithm::FloydRivest => "floyd-rivest",
            Algorithm::Radix => "radix",
            Algorithm::RadixInPlace => "radix-inplace",
            Algorithm::Bucket => "bucket",
            Algorithm::Sample => "sample",
            Algorithm::CuttingPlane => "cutting-plane",
            Algorithm::QuickMultiselect => "quick-multiselect",
            Algorithm::Randomized => "randomized",
            Algorithm::Quick => "quick",
            Algorithm::BucketMultiselect => "bucket-multiselect",
            Algorithm::IterativeBucketMultiselect => "iterative-bucket-multiselect",
            Algorithm::FusedMultiselect => "fused-multiselect",
        }
    }

    /// The algorithms the CPU backend has.
    ///
    /// ```
    /// assert_eq!(kselect::Algorithm::cpu_algorithms().len(), 12);
    /// ```
    pub fn cpu_algorithms() -> &'static [Algorithm] {
        &[
            Algorithm::Auto,
            Algorithm::SortChoose,
            Algorithm::Introselect,
            Algorithm::FloydRivest,
            Algorithm::Radix,
            Algorithm::Bucket,
            Algorithm::Sample,
            Algorithm::CuttingPlane,
            Algorithm::QuickMultiselect,
            Algorithm::Randomized,
            Algorithm::Quick,
            Algorithm::BucketMultiselect,
        ]
    }

    /// The algorithms the CUDA backend has.
    ///
    /// ```
    /// use kselect::Algorithm;
    /// assert!(Algorithm::cuda_algorithms().contains(&Algorithm::Radix));
    /// ```
    pub fn cuda_algorithms() -> &'static [Algorithm] {
        &[
            Algorithm::Auto,
            Algorithm::SortChoose,
            Algorithm::Radix,
            Algorithm::RadixInPlace,
            Algorithm::Bucket,
            Algorithm::Randomized,
            Algorithm::Sample,
            Algorithm::Quick,
            Algorithm::CuttingPlane,
            Algorithm::BucketMultiselect,
            Algorithm::IterativeBucketMultiselect,
            Algorithm::FusedMultiselect,
        ]
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

    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match wanted.as_str() {
            "sort" | "sort&choose" | "sortchoose" => "sort-choose",
            "radixselect" | "radix-select" => "radix",
            "inplace-radixselect" | "radix-in-place" | "inplace-radix" => "radix-inplace",
            "bucketselect" | "bucket-select" => "bucket",
            "sampleselect" | "sample-select" => "sample",
            "floydrivest" => "floyd-rivest",
            "cuttingplane" => "cutting-plane",
            "quickmultiselect" | "multiselect" => "quick-multiselect",
            "randomizedselect" | "randomized-select" => "randomized",
            "quickselect" | "quick-select" => "quick",
            "bucketmultiselect" | "bucket-multi-select" | "bms" => "bucket-multiselect",
            "iterativebucketmultiselect" | "iterative-bucket-multi-select" | "ibms" | "dibms" => {
                "iterative-bucket-multiselect"
            }
            "fusedmultiselect" | "fused-multi-select" | "fused" => "fused-multiselect",
            other => other,
        };
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == alias)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown algorithm `{s}` (known: {})",
                    Algorithm::names(&Algorithm::ALL)
                ))
            })
    }
}
