//! Launchers of `kernels/quick_select.cu`.
