"""Missing values (NaN, ±inf) through the numpy API, numcodecs and Zarr v3: stored exactly
(positions and bit patterns), every finite value within the bound, compressed (never raw), and
no bigger than the same field with its missing values set to 0. The xarray and HDF5 paths are
in test_xarray.py and test_hdf5.py."""

from __future__ import annotations

import numpy as np
import pytest

import fzpack
from helpers import (
    MASKED, assert_missing_kept, assert_not_larger_than_zero_filled, finite_range, masked_field,
    require, require_module, run_python,
)

F32_SPECIALS = np.array(
    [0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0x7F800000, 0xFF800000], dtype="<u4"
).view("<f4")  # NaN, -NaN, NaN with a payload, signalling NaN, +inf, -inf
F64_SPECIALS = np.array(
    [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001, 0x7FF0000000000001,
     0x7FF0000000000000, 0xFFF0000000000000], dtype="<u8"
).view("<f8")


def zero_filled(x: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(x), x, 0).astype(x.dtype)


@pytest.mark.parametrize("name", MASKED)
def test_masked_field_abs(name):
    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    buf = fzpack.szp_compress(x, eb)
    h = fzpack.szp_header(buf)
    assert h["missing"] is True and h["shape"] == list(x.shape), h
    y = fzpack.szp_decompress(buf)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert_missing_kept(x, y, eb, name)
    zero = fzpack.szp_compress(zero_filled(x), eb)
    print(f"{name}: {np.isnan(x).mean():.1%} NaN, ratio {x.nbytes / len(buf):.2f} "
          f"(NaN -> 0: {x.nbytes / len(zero):.2f})")
    assert len(buf) < x.nbytes / 4  # compressed, not stored raw
    assert_not_larger_than_zero_filled(name, len(buf), len(zero), "numpy")


@pytest.mark.parametrize("name", MASKED)
def test_masked_field_noa_range_is_over_finite_values(name):
    x = masked_field(name)
    buf = fzpack.szp_compress(x, 1e-3, mode="noa")
    h = fzpack.szp_header(buf)
    assert h["mode"] == "noa" and h["missing"] is True
    assert h["bound"] <= 1e-3 * finite_range(x) * (1 + 1e-12)
    assert h["bound"] > 0.5e-3 * finite_range(x)  # the range was not inflated or lost
    assert_missing_kept(x, fzpack.szp_decompress(buf), h["bound"], name + " noa")


@pytest.mark.parametrize("dtype,specials", [("f4", F32_SPECIALS), ("f8", F64_SPECIALS)],
                         ids=["f32", "f64"])
@pytest.mark.parametrize("mode", ["abs", "noa"])
def test_nan_and_inf_bit_patterns_are_kept(dtype, specials, mode):
    x = np.linspace(-50, 50, 5000).astype(dtype)
    where = [0, 1, 127, 128, 2500, 4999]
    x[where] = specials
    buf = fzpack.szp_compress(x, 1e-3, mode)
    h = fzpack.szp_header(buf)
    bound = 1e-3 if mode == "abs" else h["bound"]
    if mode == "noa":
        assert bound <= 1e-3 * finite_range(x) * (1 + 1e-12)
    y = fzpack.szp_decompress(buf)
    assert_missing_kept(x, y, bound, f"{dtype} {mode}")
    # and an array of nothing but missing values costs about nothing
    allnan = np.full(100_000, np.nan, dtype=dtype)
    b = fzpack.szp_compress(allnan, 1e-3)
    assert_missing_kept(allnan, fzpack.szp_decompress(b), 1e-3, "all NaN")
    assert len(b) < allnan.nbytes / 100, len(b)


def test_missing_flag_only_when_missing():
    x = np.linspace(0, 1, 1000)
    assert fzpack.szp_header(fzpack.szp_compress(x, 1e-3))["missing"] is False
    x[5] = np.nan
    assert fzpack.szp_header(fzpack.szp_compress(x, 1e-3))["missing"] is True


@pytest.mark.parametrize("name", MASKED)
def test_numcodecs_masked_field(name):
    require_module("numcodecs")
    import fzpack.numcodecs as m

    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    c = m.SZp(eb)
    enc = c.encode(x)
    dec = c.decode(enc)
    assert_missing_kept(x, dec, eb, name + " numcodecs")
    out = np.empty_like(x)
    c.decode(enc, out=out)
    assert_missing_kept(x, out, eb, name + " numcodecs out=")
    assert_not_larger_than_zero_filled(name, len(enc), len(c.encode(zero_filled(x))), "numcodecs")


@pytest.fixture
def zarr():
    z = require_module("zarr")
    require(int(z.__version__.split(".")[0]) >= 3, f"zarr {z.__version__}: the codec needs zarr >= 3")
    return z


def chunk_bytes(path) -> int:
    """Total bytes of an array's stored chunks (zarr v3 default key encoding ``c/...``)."""
    return sum(p.stat().st_size for p in (path / "c").rglob("*") if p.is_file())


@pytest.mark.parametrize("name", MASKED)
def test_zarr_masked_field_nan_fill_fresh_process(zarr, tmp_path, name):
    import fzpack.zarr as m

    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    chunks = tuple(max(1, (s * 2) // 5) for s in x.shape)  # uneven: edge chunks are padded
    sizes = {}
    for what, data in (("nan", x), ("zero", zero_filled(x))):
        path = tmp_path / f"{what}.zarr"
        z = zarr.create_array(str(path), shape=x.shape, chunks=chunks, dtype=x.dtype,
                              fill_value=np.nan, serializer=m.SZp(eb), compressors=None)
        z[:] = data
        sizes[what] = chunk_bytes(path)
    assert sizes["nan"] < x.nbytes / 4, sizes
    out = tmp_path / "back.npy"
    r = run_python(
        "import numpy as np, zarr\n"
        f"np.save({str(out)!r}, zarr.open_array({str(tmp_path / 'nan.zarr')!r}, mode='r')[:])\n"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert_missing_kept(x, np.load(out), eb, name + " zarr")
    assert_not_larger_than_zero_filled(name, sizes["nan"], sizes["zero"], "zarr chunks")
