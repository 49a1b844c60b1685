//! Launchers of `kernels/sample_select.cu`.
