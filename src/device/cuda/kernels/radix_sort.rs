//! Launchers of `kernels/radix_sort.cu`.
