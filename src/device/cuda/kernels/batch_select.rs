//! Launchers of `kernels/batch_select.cu`.
