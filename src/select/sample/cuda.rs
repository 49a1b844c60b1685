//! SampleSelect on CUDA (`kernels/sample_select.cu`).
