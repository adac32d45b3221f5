"""SZp layouts by name: ``fzpack.SZP_LAYOUTS``, ``szp_compress(..., layout=NAME)`` and the
interpolation layout (``"interp"``) through the numpy API: the bound on every element, the
shape in the archive and back, missing values, the header, every error case. (The numcodecs,
Zarr and xarray codecs' ``layout`` are in their own test files.)"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import fzpack
from helpers import (
    ALL_FIELDS, FINITE_FIELDS, MASKED, assert_bound, assert_missing_kept, finite_range,
    masked_field,
)

IDS = [n for n, _ in FINITE_FIELDS]


def rel_bound(x: np.ndarray, rel: float) -> float:
    return rel * finite_range(x) or rel


def smooth_2d(ny: int = 181, nx: int = 360) -> np.ndarray:
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    return (np.sin(x / 23.0) * np.cos(y / 17.0) * 40.0 + 0.01 * x * y).astype(np.float32)


def test_layout_names():
    assert isinstance(fzpack.SZP_LAYOUTS, tuple)
    assert fzpack.SZP_LAYOUTS == ("heads", "fzgm", "interp")
    assert "SZP_LAYOUTS" in fzpack.__all__ and "check_layout" in fzpack.__all__
    # The native module is the one source of the names.
    assert fzpack._fzpack.SZP_LAYOUTS is fzpack.SZP_LAYOUTS
    assert inspect.signature(fzpack.szp_compress).parameters["layout"].default == "heads"


@pytest.mark.parametrize("layout", ["heads", "fzgm", "interp"])
def test_every_name_compresses_and_the_header_names_it(layout):
    x = smooth_2d(60, 90)
    for name in (layout, layout.upper(), layout.capitalize()):
        buf = fzpack.szp_compress(x, 1e-3, layout=name)
        h = fzpack.szp_header(buf)
        assert h["layout"] == layout, name
        assert h["shape"] == [60, 90] and h["version"] == 3
        y = fzpack.szp_decompress(buf)
        assert y.shape == x.shape and y.dtype == x.dtype
        assert_bound(x, y, 1e-3, f"{name}")
    assert fzpack.check_layout(layout.upper()) == layout


def test_default_layout_is_heads():
    x = smooth_2d(30, 40)
    assert fzpack.szp_compress(x, 1e-3) == fzpack.szp_compress(x, 1e-3, layout="heads")
    assert fzpack.szp_header(fzpack.szp_compress(x, 1e-3))["layout"] == "heads"


@pytest.mark.parametrize("bad", ["rel", "", "interp2", "stage", "1", None, 2])
def test_unknown_layout_is_a_value_error_listing_the_names(bad):
    x = smooth_2d(10, 10)
    for f in (lambda: fzpack.szp_compress(x, 1e-3, layout=bad), lambda: fzpack.check_layout(bad)):
        with pytest.raises(ValueError, match="layout must be one of") as e:
            f()
        assert isinstance(e.value, fzpack.Error)
        for name in fzpack.SZP_LAYOUTS:
            assert f'"{name}"' in str(e.value)
        assert repr(bad) in str(e.value)
    if isinstance(bad, str):
        # The native module checks the same rule itself, with the same list.
        with pytest.raises(fzpack.Error, match='layout must be one of "heads", "fzgm", "interp"'):
            fzpack._fzpack.szp_compress(x, 1e-3, "abs", 128, bad)


# ---------------------------------------------------------------------------------------------
# The interpolation layout: bound, shape, missing values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=IDS)
@pytest.mark.parametrize("rel", [1e-2, 1e-4])
def test_interp_abs_bound_every_element_and_shape(name, x, rel):
    eb = rel_bound(x, rel)
    buf = fzpack.szp_compress(x, eb, layout="interp")
    y = fzpack.szp_decompress(buf)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert_bound(x, y, eb, f"{name} interp eb={eb}")
    h = fzpack.szp_header(buf)
    assert h["layout"] == "interp" and h["version"] == 3 and h["shape"] == list(x.shape)
    assert h["n"] == x.size and h["mode"] == "abs" and np.dtype(h["dtype"]) == x.dtype
    assert h["strict"] is True and h["missing"] is False and h["bound"] <= eb
    # No blocks: the header says block size 1 whatever the argument was.
    assert h["block_size"] == 1


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=IDS)
def test_interp_noa_and_float64(name, x):
    if finite_range(x) == 0:
        with pytest.raises(fzpack.Error, match="constant field"):
            fzpack.szp_compress(x, 1e-3, mode="noa", layout="interp")
        return
    buf = fzpack.szp_compress(x, 1e-3, mode="noa", layout="interp")
    h = fzpack.szp_header(buf)
    assert h["mode"] == "noa" and h["bound"] <= 1e-3 * finite_range(x) * (1 + 1e-12)
    assert_bound(x, fzpack.szp_decompress(buf), h["bound"], f"{name} interp noa")
    x64 = x.astype(np.float64)
    eb = rel_bound(x64, 1e-6)
    y = fzpack.szp_decompress(fzpack.szp_compress(x64, eb, layout="interp"))
    assert y.dtype == np.float64 and y.shape == x.shape
    assert_bound(x64, y, eb, f"{name} interp as f64")


def test_interp_uses_the_shape():
    """The layout predicts across the array's dimensions: the same values as a 2-D array come
    out much smaller than flattened, and smaller than the block-head layout."""
    x = smooth_2d()
    eb = rel_bound(x, 1e-3)
    two_d = len(fzpack.szp_compress(x, eb, layout="interp"))
    flat = len(fzpack.szp_compress(x.reshape(-1), eb, layout="interp"))
    heads = len(fzpack.szp_compress(x, eb, layout="heads"))
    assert two_d * 2 < flat, (two_d, flat)
    assert two_d * 4 < heads, (two_d, heads)
    # The real fields, when present: smaller than the block-head layout at 1e-3 of the range.
    for name, f in FINITE_FIELDS:
        if f.ndim >= 2 and f.size >= 100_000:
            eb = rel_bound(f, 1e-3)
            a, b = (len(fzpack.szp_compress(f, eb, layout=lay)) for lay in ("interp", "heads"))
            assert a < b, (name, a, b)


@pytest.mark.parametrize(
    "shape", [(0,), (0, 5), (), (1,), (7,), (3, 4, 5, 6), (2,) * 8, (1, 1, 300), (300, 1)]
)
def test_interp_odd_shapes(shape):
    x = np.random.default_rng(3).normal(size=shape).cumsum(axis=-1 if shape else None)
    x = np.asarray(x, dtype=np.float32).reshape(shape)
    buf = fzpack.szp_compress(x, 1e-3, layout="interp")
    y = fzpack.szp_decompress(buf)
    want = shape if shape else (1,)  # a 0-d array is one dimension of 1
    assert y.shape == want and fzpack.szp_header(buf)["shape"] == list(want)
    assert_bound(x, y, 1e-3, str(shape))


def test_interp_any_memory_layout():
    x = smooth_2d(90, 120).astype(np.float64)
    for a in (np.asfortranarray(x), x.T, x[::2, ::3], x.astype(">f8")):
        y = fzpack.szp_decompress(fzpack.szp_compress(a, 1e-4, layout="interp"))
        assert y.shape == a.shape and y.dtype == np.float64
        assert_bound(a, y, 1e-4, f"{a.shape} {a.strides} {a.dtype}")


def test_interp_more_than_8_dimensions_is_refused():
    with pytest.raises(fzpack.Error, match="1 to 8 dimensions"):
        fzpack.szp_compress(np.zeros((1,) * 9), 1e-3, layout="interp")


def test_interp_checks_the_block_size_like_every_layout():
    x = np.linspace(0, 1, 100)
    for bs in (0, 4097):
        with pytest.raises(fzpack.Error, match="block size"):
            fzpack.szp_compress(x, 1e-3, block_size=bs, layout="interp")
    # Any valid block size writes the same archive (the layout has no blocks).
    assert fzpack.szp_compress(x, 1e-3, block_size=7, layout="interp") == fzpack.szp_compress(
        x, 1e-3, layout="interp"
    )


@pytest.mark.parametrize("eb", [0.0, -1.0, float("nan"), float("inf")])
def test_interp_bad_bound(eb):
    with pytest.raises(fzpack.Error):
        fzpack.szp_compress(np.linspace(0, 1, 100), eb, layout="interp")


@pytest.mark.parametrize("name", MASKED)
def test_interp_missing_values_kept(name):
    x = masked_field(name)
    eb = rel_bound(x, 1e-3)
    buf = fzpack.szp_compress(x, eb, layout="interp")
    h = fzpack.szp_header(buf)
    assert h["missing"] is True and h["missing_count"] == int((~np.isfinite(x)).sum())
    assert h["layout"] == "interp" and h["shape"] == list(x.shape)
    assert_missing_kept(x, fzpack.szp_decompress(buf), eb, f"{name} interp")
    # Smaller than the block-head archive of the same masked field.
    heads = len(fzpack.szp_compress(x, eb))
    assert len(buf) < heads, (len(buf), heads)
    # NOA: the range is over the finite values.
    nb = fzpack.szp_compress(x, 1e-3, mode="noa", layout="interp")
    assert_missing_kept(x, fzpack.szp_decompress(nb), fzpack.szp_header(nb)["bound"], f"{name} noa")


def test_interp_every_missing_kind_bit_for_bit():
    x = smooth_2d(40, 50)
    x[3, :] = np.nan
    x[10:20, 5] = np.inf
    x[0, 0] = -np.inf
    ints = x.view(np.uint32)
    ints[30, 30] = 0x7FC0_1234  # a NaN with a payload
    ints[31, 31] = 0xFFC0_0001  # a negative NaN
    x_all_nan = np.full((8, 9), np.nan, dtype=np.float64)
    for a in (x, x_all_nan):
        y = fzpack.szp_decompress(fzpack.szp_compress(a, 1e-3, layout="interp"))
        assert_missing_kept(a, y, 1e-3, f"{a.dtype} {a.shape}")
    for name, a in ALL_FIELDS:
        if not np.isfinite(a).all():
            eb = rel_bound(a, 1e-2)
            y = fzpack.szp_decompress(fzpack.szp_compress(a, eb, layout="interp"))
            assert_missing_kept(a, y, eb, name)


# ---------------------------------------------------------------------------------------------
# Damaged interp archives fail cleanly in every reader
# ---------------------------------------------------------------------------------------------


def test_interp_truncated_or_flipped_archives_raise():
    x = np.cumsum(np.random.default_rng(1).normal(size=(120, 150)), axis=1).astype(np.float32)
    x[5:9, 7:30] = np.nan
    buf = fzpack.szp_compress(x, 1e-2, layout="interp")
    for cut in sorted({*range(0, 80), *range(80, len(buf), 37), len(buf) - 1}):
        with pytest.raises(fzpack.Error):
            fzpack.szp_decompress(buf[:cut])
    rng = np.random.default_rng(2)
    for _ in range(200):
        b = bytearray(buf)
        p = int(rng.integers(len(b)))
        b[p] ^= 1 << int(rng.integers(8))
        with pytest.raises(fzpack.Error):
            fzpack.szp_decompress(bytes(b))
    # Trailing bytes are refused, as in the other layouts.
    with pytest.raises(fzpack.Error):
        fzpack.szp_decompress(buf + b"\0")


def test_interp_archive_in_the_fzm_reader_is_refused():
    buf = fzpack.szp_compress(np.linspace(0, 1, 1000), 1e-3, layout="interp")
    with pytest.raises(fzpack.Error):
        fzpack.read_fzm(buf)
    with pytest.raises(fzpack.Error):
        fzpack.pernix_decompress(buf)
