//! Launchers of `kernels/cutting_plane.cu`.
