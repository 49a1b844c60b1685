//! Launchers of `kernels/bucket_multiselect.cu`.
