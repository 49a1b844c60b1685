//! Reading and writing data files: `.npy` arrays and CSV columns.
