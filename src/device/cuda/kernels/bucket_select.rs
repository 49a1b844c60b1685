//! Launchers of `kernels/bucket_select.cu`.
