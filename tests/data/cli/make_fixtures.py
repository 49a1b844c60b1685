"""Writes the .npy fixtures of tests/cli.rs with numpy (run from this folder; numpy >= 1.17).

The files are committed, so the tests do not need numpy: this script only documents and
reproduces them.
"""
import gzip

import numpy as np

arrays = {
    "f32": np.array([3.5, -1.25, 0.1, 1e-45, 3.4028235e38, -np.inf, -0.0, 16777217.0], dtype="<f4"),
    "f64": np.array([0.1, 1e300, -5e-324, 2.0, -np.inf, np.inf, 1.2345678901234567e-7], dtype="<f8"),
    "i32": np.array([-(2**31), -7, 0, 42, 2**31 - 1], dtype="<i4"),
    "i64": np.array([-(2**63), -1, 2**53 + 1, 2**63 - 1, 5], dtype="<i8"),
    "u32": np.array([0, 2**32 - 1, 7], dtype="<u4"),
    "u64": np.array([2**64 - 1, 2**53 + 1, 2**53, 0, 12345678901234567891], dtype="<u8"),
}
for name, a in arrays.items():
    np.save(f"{name}.npy", a)

np.save("f64_be.npy", arrays["f64"].astype(">f8"))
np.save("i64_be.npy", arrays["i64"].astype(">i8"))
np.save("u32_be.npy", arrays["u32"].astype(">u4"))
with open("f32_v2.npy", "wb") as f:
    np.lib.format.write_array(f, arrays["f32"], version=(2, 0))
with open("i32_v3.npy", "wb") as f:
    np.lib.format.write_array(f, arrays["i32"], version=(3, 0))
with gzip.open("u64.npy.gz", "wb") as f:
    np.save(f, arrays["u64"])

np.save("nan_f64.npy", np.array([1.0, np.nan, 3.0, np.nan, 2.0], dtype="<f8"))
np.save("nan_f32.npy", np.array([np.nan, -2.5, np.inf], dtype="<f4"))
np.save("empty_f64.npy", np.array([], dtype="<f8"))

np.save("f16.npy", np.array([1, 2, 3], dtype="<f2"))
np.save("c64.npy", np.array([1 + 2j], dtype="<c8"))
np.save("f64_2d.npy", np.zeros((2, 3), dtype="<f8"))
