//! Launchers of `kernels/fused_multiselect.cu`.
