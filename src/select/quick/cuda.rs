//! QuickSelect on CUDA (`kernels/quick_select.cu`).
