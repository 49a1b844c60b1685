//! The typed GPU layer: the CUDA C++ sources of `kernels/`, embedded in the binary, and one
//! typed Rust function per kernel.
//!
//! Each source is compiled on its own with `kernels/common.cuh` placed in front of it, so
//! kernels need no toolkit headers and only libnvrtc is needed at run time.
//!
//! Each submodule is named after its source and holds that source's launchers (declared with
//! [`launchers!`]) and the `#[repr(C)]` state structs the kernels share with the host. A
//! launcher takes the device, the launch shape and the kernel's parameters in the kernel's
//! order and types; its preconditions on the sizes are checked before the launch. Launchers are
//! the only place in the crate that launches a kernel, hence the only `unsafe` of a launch.

#[macro_use]
pub(crate) mod launcher;

pub(crate) use launcher::{as_u32_words, NullPtr, OrNull, NULL};

pub(crate) mod batch_select;
pub(crate) mod bucket_multiselect;
pub(crate) mod bucket_select;
pub(crate) mod cutting_plane;
pub(crate) mod distributed;
pub(crate) mod fused_multiselect;
pub(crate) mod knn;
pub(crate) mod quick_select;
pub(crate) mod radix_select;
pub(crate) mod radix_sort;
pub(crate) mod randomized_select;
pub(crate) mod recovery;
pub(crate) mod reduce;
pub(crate) mod regression;
pub(crate) mod sample_select;

/// One `.cu` file of `kernels/`.
#[derive(Debug)]
pub(crate) struct KernelSource {
    /// The file name, e.g. `radix_select.cu`.
    pub name: &'static str,
    /// Its text.
    pub text: &'static str,
}

/// The shared header every source starts with.
pub(crate) const COMMON: &str = include_str!("../../../../kernels/common.cuh");

/// Reductions: NaN counts, sums (the one-read floor), key conversion.
pub(crate) static REDUCE: KernelSource = KernelSource {
    name: "reduce.cu",
    text: include_str!("../../../../kernels/reduce.cu"),
};

/// LSD radix sort of keys and key–value pairs.
pub(crate) static RADIX_SORT: KernelSource = KernelSource {
    name: "radix_sort.cu",
    text: include_str!("../../../../kernels/radix_sort.cu"),
};

/// randomizedSelect: sample gather and the fused count-and-copy pass.
pub(crate) static RANDOMIZED_SELECT: KernelSource = KernelSource {
    name: "randomized_select.cu",
    text: include_str!("../../../../kernels/randomized_select.cu"),
};

/// Beliakov's cutting plane: census, fused objective pass, combination, bracket copy.
pub(crate) static CUTTING_PLANE: KernelSource = KernelSource {
    name: "cutting_plane.cu",
    text: include_str!("../../../../kernels/cutting_plane.cu"),
};

/// MSD radix select.
pub(crate) static RADIX_SELECT: KernelSource = KernelSource {
    name: "radix_select.cu",
    text: include_str!("../../../../kernels/radix_select.cu"),
};

/// bucketSelect: min/max, shared-memory bucket counts, the k-bucket choice, the copy.
pub(crate) static BUCKET_SELECT: KernelSource = KernelSource {
    name: "bucket_select.cu",
    text: include_str!("../../../../kernels/bucket_select.cu"),
};

/// SampleSelect: sample sort, count (search tree, oracles), scan, choose, filter.
pub(crate) static SAMPLE_SELECT: KernelSource = KernelSource {
    name: "sample_select.cu",
    text: include_str!("../../../../kernels/sample_select.cu"),
};

/// bucketMultiSelect and its iterative form: sample, per-interval projections, per-block bucket
/// counts, the active buckets' choice, the segmented and flag-based writes, small sorts.
pub(crate) static BUCKET_MULTISELECT: KernelSource = KernelSource {
    name: "bucket_multiselect.cu",
    text: include_str!("../../../../kernels/bucket_multiselect.cu"),
};

/// Fused bucket multiselection: the plan, the subset count, the fused count-and-write pass, the
/// second level and the final sorts.
pub(crate) static FUSED_MULTISELECT: KernelSource = KernelSource {
    name: "fused_multiselect.cu",
    text: include_str!("../../../../kernels/fused_multiselect.cu"),
};

/// QuickSelect: the sampled pivot and the fused bipartition pass.
pub(crate) static QUICK_SELECT: KernelSource = KernelSource {
    name: "quick_select.cu",
    text: include_str!("../../../../kernels/quick_select.cu"),
};

/// Batched selection, top-k and hard thresholding over rows and segments: one block a short
/// span, tiled digit histograms and an index-ordered compaction for long ones.
pub(crate) static BATCH_SELECT: KernelSource = KernelSource {
    name: "batch_select.cu",
    text: include_str!("../../../../kernels/batch_select.cu"),
};

/// Robust regression: residuals of many candidate fits, the C-step sums over each candidate's
/// `h`-subset and their reduction, the shortest window of sorted residuals.
pub(crate) static REGRESSION: KernelSource = KernelSource {
    name: "regression.cu",
    text: include_str!("../../../../kernels/regression.cu"),
};

/// Exact k-nearest neighbours: tiles of canonical distances, the merge of running lists.
pub(crate) static KNN: KernelSource = KernelSource {
    name: "knn.cu",
    text: include_str!("../../../../kernels/knn.cu"),
};

/// Sparse recovery: the solvers' vector steps and reductions, the sparse operator's products.
pub(crate) static RECOVERY: KernelSource = KernelSource {
    name: "recovery.cu",
    text: include_str!("../../../../kernels/recovery.cu"),
};

/// Distributed selection's local passes: statistics, the sample gather, a pass's bucket counts
/// and the reduction to the active buckets.
pub(crate) static DISTRIBUTED: KernelSource = KernelSource {
    name: "distributed.cu",
    text: include_str!("../../../../kernels/distributed.cu"),
};

/// Every source of `kernels/`, for checks that compile them all.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) static ALL: &[&KernelSource] = &[
    &REDUCE,
    &RADIX_SORT,
    &RADIX_SELECT,
    &RANDOMIZED_SELECT,
    &BUCKET_SELECT,
    &SAMPLE_SELECT,
    &QUICK_SELECT,
    &BATCH_SELECT,
    &CUTTING_PLANE,
    &BUCKET_MULTISELECT,
    &FUSED_MULTISELECT,
    &REGRESSION,
    &KNN,
    &RECOVERY,
    &DISTRIBUTED,
];

impl KernelSource {
    /// The full program text: the common header, then the file without its include line.
    pub(crate) fn program(&self) -> String {
        let body: String = self
            .text
            .lines()
            .filter(|line| line.trim() != "#include \"common.cuh\"")
            .collect::<Vec<_>>()
            .join("\n");
        format!("{COMMON}\n#line 1 \"{}\"\n{body}\n", self.name)
    }
}

/// The kernel name for an operation and an element type: `{op}_{dtype}`.
pub(crate) fn kernel_name(op: &str, dtype: crate::element::DType) -> String {
    format!("{op}_{}", dtype.name())
}

/// The suffix of kernels over keys of `K`'s width, which serve every element type of that
/// width: `k32` or `k64`.
pub(crate) fn key_suffix<K: crate::element::RadixKey>() -> &'static str {
    if K::BITS == 32 {
        "k32"
    } else {
        "k64"
    }
}
