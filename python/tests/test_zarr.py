"""Zarr v3: fzpack.zarr.SZp as the array-to-bytes codec, reopened from metadata alone."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import numpy as np
import pytest

import fzpack
from helpers import (
    FINITE_FIELDS, assert_bound, assert_missing_kept, require, require_module, run_python,
)


@pytest.fixture
def zarr():
    z = require_module("zarr")
    major = int(z.__version__.split(".")[0])
    require(major >= 3, f"zarr {z.__version__} is installed, the codec needs zarr >= 3")
    return z


@pytest.fixture
def fz_zarr(zarr):
    import fzpack.zarr as m

    return m


def test_entry_point_is_registered():
    eps = {e.name: e.value for e in entry_points(group="zarr.codecs")}
    assert eps.get("fzpack_szp") == "fzpack.zarr:SZp"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["abs", "noa"])
def test_create_write_reopen_in_fresh_process(zarr, fz_zarr, tmp_path, small_field, dtype, mode):
    x = small_field.astype(dtype)
    path = tmp_path / "a.zarr"
    eb = 1e-3
    z = zarr.create_array(
        store=str(path),
        shape=x.shape,
        chunks=(32, 50),  # edge chunks are partial
        dtype=dtype,
        serializer=fz_zarr.SZp(eb=eb, mode=mode),
        compressors=None,
    )
    z[:] = x
    # In this process
    y = zarr.open_array(str(path))[:]
    assert y.dtype == np.dtype(dtype) and y.shape == x.shape
    bound = eb if mode == "abs" else eb * float(np.ptp(x.astype(np.float64)))
    assert_bound(x, y, bound, f"zarr {dtype} {mode}")
    # The metadata names the codec and its configuration.
    meta = json.loads((path / "zarr.json").read_text())
    codecs = meta["codecs"]
    assert codecs[0] == {
        "name": "fzpack_szp",
        "configuration": {"eb": eb, "mode": mode, "block_size": 128, "layout": "heads"},
    }
    # In a fresh process that never imports fzpack itself: zarr finds the codec by name.
    out = tmp_path / "back.npy"
    r = run_python(
        "import sys, numpy as np, zarr\n"
        f"z = zarr.open_array({str(path)!r}, mode='r')\n"
        f"np.save({str(out)!r}, z[:])\n"
        "print(type(z.metadata.codecs[0]).__module__)\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "fzpack.zarr"
    back = np.load(out)
    assert back.dtype == np.dtype(dtype)
    assert np.array_equal(back, y)
    assert_bound(x, back, bound, "fresh process")


@pytest.mark.parametrize("name,x", FINITE_FIELDS[:3], ids=[n for n, _ in FINITE_FIELDS[:3]])
def test_real_fields_with_default_compressor(zarr, fz_zarr, tmp_path, name, x):
    # SZp serializer followed by zarr's default bytes-to-bytes compressor (zstd).
    eb = 1e-3 * float(np.ptp(x.astype(np.float64))) or 1e-3
    chunks = tuple(max(1, s // 2) for s in x.shape)
    z = zarr.create_array(
        store=str(tmp_path / "f.zarr"), shape=x.shape, chunks=chunks, dtype=x.dtype,
        serializer=fz_zarr.SZp(eb),
    )
    z[:] = x
    y = zarr.open_array(str(tmp_path / "f.zarr"))[:]
    assert_bound(x, y, eb, name)


def test_to_dict_from_dict_round_trip(fz_zarr):
    c = fz_zarr.SZp(eb=0.1 + 0.2, mode="NOA", block_size=64)
    d = json.loads(json.dumps(c.to_dict()))
    assert d == {
        "name": "fzpack_szp",
        "configuration": {"eb": 0.1 + 0.2, "mode": "noa", "block_size": 64, "layout": "heads"},
    }
    assert fz_zarr.SZp.from_dict(d) == c


@pytest.mark.parametrize("eb", [0, -1, float("nan"), float("inf")])
def test_bad_bound(fz_zarr, eb):
    with pytest.raises(fzpack.Error, match="eb must be finite and > 0"):
        fz_zarr.SZp(eb)


def test_rejects_non_float_arrays(zarr, fz_zarr, tmp_path):
    with pytest.raises(fzpack.Error, match="float32 or float64"):
        zarr.create_array(
            store=str(tmp_path / "i.zarr"), shape=(10,), chunks=(5,), dtype="int32",
            serializer=fz_zarr.SZp(1e-3),
        )


def test_nan_is_stored_exactly(zarr, fz_zarr, tmp_path):
    z = zarr.create_array(
        store=str(tmp_path / "n.zarr"), shape=(100,), chunks=(50,), dtype="float32",
        serializer=fz_zarr.SZp(1e-3), compressors=None,
    )
    x = np.linspace(-1, 1, 100, dtype=np.float32)
    x[[0, 60]] = np.nan
    x[61] = -np.inf
    z[:] = x
    y = zarr.open_array(str(tmp_path / "n.zarr"))[:]
    assert_missing_kept(x, y, 1e-3, "zarr NaN")


def test_corrupt_chunk_fails_the_read(zarr, fz_zarr, tmp_path, small_field):
    path = tmp_path / "c.zarr"
    z = zarr.create_array(
        store=str(path), shape=small_field.shape, chunks=(45, 60), dtype="float32",
        serializer=fz_zarr.SZp(1e-3), compressors=None,
    )
    z[:] = small_field
    chunk = path / "c" / "0" / "0"
    data = chunk.read_bytes()
    chunk.write_bytes(data[: len(data) // 2])  # truncated chunk
    with pytest.raises(fzpack.Error):
        zarr.open_array(str(path))[:]


def test_mode_rule_is_the_one_of_every_entry_point(fz_zarr):
    with pytest.raises(fzpack.Error, match='mode must be "abs" or "noa"'):
        fz_zarr.SZp(eb=1e-3, mode="rel")
    assert fz_zarr.SZp(eb=1e-3, mode="NOA").mode == "noa"


def test_nan_fill_value_with_partial_edge_chunks(zarr, fz_zarr, tmp_path):
    """A NaN fill value (xarray's default for floats) pads the edge chunks: they are encoded
    like any other (the padding is outside the array and never read back)."""
    x = np.arange(70, dtype="float32").reshape(10, 7)
    path = tmp_path / "nan.zarr"
    z = zarr.create_array(
        store=str(path),
        shape=x.shape,
        chunks=(4, 4),  # edge chunks are partial
        dtype="float32",
        fill_value=np.nan,
        serializer=fz_zarr.SZp(eb=1e-3),
        compressors=None,
    )
    z[:] = x
    assert len([p for p in (path / "c").rglob("*") if p.is_file()]) == 6  # all 3 x 2 chunks
    y = zarr.open_array(str(path))[:]
    assert y.shape == x.shape and np.isfinite(y).all()
    assert_bound(x, y, 1e-3, "NaN fill")
    # an unwritten region reads as the fill value
    z2 = zarr.create_array(store=str(tmp_path / "part.zarr"), shape=(10, 7), chunks=(4, 4),
                           dtype="float32", fill_value=np.nan, serializer=fz_zarr.SZp(eb=1e-3))
    z2[:4, :4] = x[:4, :4]
    y2 = zarr.open_array(str(tmp_path / "part.zarr"))[:]
    assert_bound(x[:4, :4], y2[:4, :4], 1e-3, "written chunk")
    assert np.isnan(y2[4:]).all() and np.isnan(y2[:, 4:]).all()


# ---------------------------------------------------------------------------------------------
# The layout option: the interpolation layout per chunk
# ---------------------------------------------------------------------------------------------


def test_layout_round_trip_and_rule(fz_zarr):
    for name in fzpack.SZP_LAYOUTS:
        c = fz_zarr.SZp(eb=1e-3, layout=name.upper())
        assert c.layout == name
        d = json.loads(json.dumps(c.to_dict()))
        assert d["configuration"]["layout"] == name
        assert fz_zarr.SZp.from_dict(d) == c
    # A zarr.json written before the option (no "layout") opens with the block-head layout.
    old = {"name": "fzpack_szp", "configuration": {"eb": 0.5, "mode": "abs", "block_size": 128}}
    assert fz_zarr.SZp.from_dict(old).layout == "heads"
    with pytest.raises(fzpack.Error, match='layout must be one of "heads", "fzgm", "interp"'):
        fz_zarr.SZp(eb=1e-3, layout="lorenzo")
    bad = {"name": "fzpack_szp", "configuration": {"eb": 0.5, "layout": "nope"}}
    with pytest.raises(ValueError, match="layout must be one of"):
        fz_zarr.SZp.from_dict(bad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interp_array_with_nan_reopened_in_fresh_process(zarr, fz_zarr, tmp_path, small_field, dtype):
    """Every chunk an interp archive of the chunk's shape (edge chunks padded by zarr with the
    NaN fill value), NaN in the data kept, the bound on every element, in this process and in
    a fresh one that finds the codec by name."""
    x = small_field.astype(dtype)
    x[10:14, 20:60] = np.nan
    x[50, 5] = np.inf
    path = tmp_path / "i.zarr"
    eb = 1e-3
    z = zarr.create_array(
        store=str(path), shape=x.shape, chunks=(32, 50), dtype=dtype, fill_value=np.nan,
        serializer=fz_zarr.SZp(eb=eb, layout="interp"), compressors=None,
    )
    z[:] = x
    meta = json.loads((path / "zarr.json").read_text())
    assert meta["codecs"][0]["configuration"]["layout"] == "interp"
    chunks = sorted(p for p in (path / "c").rglob("*") if p.is_file())
    assert len(chunks) == 3 * 3
    for p in chunks:
        h = fzpack.szp_header(p.read_bytes())
        assert h["layout"] == "interp" and h["shape"] == [32, 50], p
    y = zarr.open_array(str(path))[:]
    assert y.dtype == np.dtype(dtype)
    assert_missing_kept(x, y, eb, f"zarr interp {dtype}")
    out = tmp_path / "back.npy"
    r = run_python(
        "import numpy as np, zarr\n"
        f"np.save({str(out)!r}, zarr.open_array({str(path)!r}, mode='r')[:])\n"
    )
    assert r.returncode == 0, r.stderr
    back = np.load(out)
    assert_missing_kept(x, back, eb, "fresh process")
    # The same smooth field in the block-head layout takes more chunk bytes.
    hz = zarr.create_array(
        store=str(tmp_path / "h.zarr"), shape=x.shape, chunks=(32, 50), dtype=dtype,
        fill_value=np.nan, serializer=fz_zarr.SZp(eb=eb), compressors=None,
    )
    hz[:] = x
    size = {p: sum(f.stat().st_size for f in (p / "c").rglob("*") if f.is_file())
            for p in (path, tmp_path / "h.zarr")}
    assert size[path] * 2 < size[tmp_path / "h.zarr"], size


@pytest.mark.parametrize("name,x", FINITE_FIELDS[:3], ids=[n for n, _ in FINITE_FIELDS[:3]])
def test_interp_real_fields_with_default_compressor(zarr, fz_zarr, tmp_path, name, x):
    eb = 1e-3 * float(np.ptp(x.astype(np.float64))) or 1e-3
    chunks = tuple(max(1, s // 2) for s in x.shape)
    sizes = {}
    for layout in ("heads", "interp"):
        path = tmp_path / f"{layout}.zarr"
        z = zarr.create_array(
            store=str(path), shape=x.shape, chunks=chunks, dtype=x.dtype,
            serializer=fz_zarr.SZp(eb, layout=layout),
        )
        z[:] = x
        assert_bound(x, zarr.open_array(str(path))[:], eb, f"{name} {layout}")
        sizes[layout] = sum(p.stat().st_size for p in (path / "c").rglob("*") if p.is_file())
    # No size claim here: on a field that is no smooth grid (Chebyshev coefficients) zstd after
    # the block layout can beat the interpolation layout; the smooth case is checked above.
    print(f"{name}: zarr store {sizes} bytes")
