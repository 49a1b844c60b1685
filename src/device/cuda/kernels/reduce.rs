//! Launchers of `kernels/reduce.cu`.
