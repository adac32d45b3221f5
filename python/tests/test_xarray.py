"""xarray → Zarr v3 as users write it: ``fzpack.zarr.SZp`` as the ``serializer`` in
``to_zarr(encoding=...)`` with xarray's defaults (NaN fill value, its own or dask's chunking),
fields with missing values (NaN land masks), reopened with ``xr.open_zarr`` in a fresh process
and reduced with dask; ``compressors=`` is refused with a hint to ``serializer=``. (The HDF5
side, h5netcdf and netCDF4, is in test_hdf5.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import (
    FINITE_FIELDS, MASKED, assert_bound, assert_missing_kept, assert_not_larger_than_zero_filled,
    finite_range, masked_field, require, require_module, run_python,
)

# The smallest finite 2-D field (real when ../shared/data is there, generated otherwise).
FIELD_NAME, FIELD = min(((n, a) for n, a in FINITE_FIELDS if a.ndim == 2), key=lambda f: f[1].size)


@pytest.fixture
def xr():
    require_module("dask")
    z = require_module("zarr")
    require(int(z.__version__.split(".")[0]) >= 3, f"zarr {z.__version__}: the codec needs zarr >= 3")
    return require_module("xarray")


@pytest.fixture
def fz_zarr(xr):
    import fzpack.zarr as m

    return m


def dataset(xr, x):
    ny, nx = x.shape
    return xr.Dataset(
        {"v": (("y", "x"), x, {"units": "m"})},
        coords={"y": np.arange(ny, dtype="f8"), "x": np.arange(nx, dtype="f8")},
    )


# dask chunks that do not divide the shape (2/5 of each dimension: edge chunks are partial),
# and no chunking at all (xarray then leaves the chunk shape to zarr's default).
@pytest.mark.parametrize("chunks", ["dask_uneven", None], ids=["dask_uneven", "zarr_default"])
def test_to_zarr_serializer_open_zarr_dask_fresh_process(xr, fz_zarr, tmp_path, chunks):
    x = FIELD
    eb = 1e-3 * float(np.ptp(x.astype(np.float64))) or 1e-3
    ds = dataset(xr, x)
    if chunks:
        ds = ds.chunk({"y": max(1, x.shape[0] * 2 // 5), "x": max(1, x.shape[1] * 2 // 5)})
    path = tmp_path / "a.zarr"
    # xarray's default fill value for floats, NaN, pads the edge chunks.
    ds.to_zarr(str(path), zarr_format=3, encoding={"v": {"serializer": fz_zarr.SZp(eb=eb)}})
    meta = json.loads((path / "v" / "zarr.json").read_text())
    assert meta["codecs"][0]["name"] == "fzpack_szp" and meta["codecs"][0]["configuration"]["eb"] == eb
    out = tmp_path / "back.npz"
    # A fresh process that never imports fzpack: zarr resolves the codec by its entry point.
    r = run_python(
        "import sys, numpy as np, xarray as xr, dask.array as da\n"
        f"ds = xr.open_zarr({str(path)!r})\n"
        "v = ds.v\n"
        "assert isinstance(v.data, da.Array), type(v.data)\n"
        "assert v.dims == ('y', 'x') and v.attrs['units'] == 'm'\n"
        "mean, vmax = float(v.mean().compute()), float(v.max().compute())\n"
        f"np.savez({str(out)!r}, v=v.values, mean=mean, vmax=vmax, nchunks=v.data.npartitions)\n"
        "assert 'fzpack' in sys.modules  # loaded by zarr for the codec, not imported here\n"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    back = np.load(out)
    y = back["v"]
    assert y.dtype == x.dtype and y.shape == x.shape
    assert_bound(x, y, eb, FIELD_NAME)
    if chunks:
        assert int(back["nchunks"]) > 1
    # The dask reductions, against the original field: the bound carries over to them.
    x64 = x.astype(np.float64)
    assert abs(float(back["vmax"]) - x64.max()) <= eb
    assert abs(float(back["mean"]) - x64.mean()) <= eb * (1 + 1e-6) + 1e-6 * abs(x64.mean())


def test_compressors_is_refused_with_a_hint(xr, fz_zarr, tmp_path):
    # SZp turns values into bytes (an array-to-bytes codec): it is the serializer, and the
    # error for compressors= says so, from xarray and from zarr directly.
    import zarr

    ds = dataset(xr, FIELD[:40, :50])
    for compressors in (fz_zarr.SZp(1e-3), [fz_zarr.SZp(1e-3)]):
        with pytest.raises(TypeError, match=r"serializer=SZp\(\.\.\.\)"):
            ds.to_zarr(str(tmp_path / "c.zarr"), zarr_format=3, mode="w",
                       encoding={"v": {"compressors": compressors}})
    with pytest.raises(TypeError, match=r"array-to-bytes codec: pass it as serializer="):
        zarr.create_array(str(tmp_path / "d.zarr"), shape=(10,), dtype="f4",
                          compressors=[fz_zarr.SZp(1e-3).to_dict()])
    # The codec's own repr is unchanged.
    assert repr(fz_zarr.SZp(1e-3)) == "SZp(eb=0.001, mode='abs', block_size=128, layout='heads')"


def chunk_bytes(path) -> int:
    return sum(p.stat().st_size for p in (path / "v" / "c").rglob("*") if p.is_file())


@pytest.mark.parametrize("name", MASKED)
@pytest.mark.parametrize("chunks", ["dask_uneven", "zarr_default"])
def test_masked_field_to_zarr_open_zarr_dask(xr, fz_zarr, tmp_path, name, chunks):
    """A field with missing values (NaN) through xarray's defaults: NaN positions identical,
    every finite value within the bound, the dask reductions over the finite values match,
    and the store is no bigger than that of the same field with NaN set to 0."""
    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    dims = ("z", "y", "x")[-x.ndim:]

    def write(data, path):
        ds = xr.Dataset({"v": (dims, data)})
        if chunks == "dask_uneven":
            ds = ds.chunk({d: max(1, (s * 2) // 5) for d, s in zip(dims, data.shape)})
        ds.to_zarr(str(path), zarr_format=3, encoding={"v": {"serializer": fz_zarr.SZp(eb=eb)}})

    path, zpath = tmp_path / "nan.zarr", tmp_path / "zero.zarr"
    write(x, path)
    write(np.where(np.isnan(x), 0, x).astype(x.dtype), zpath)
    sizes = chunk_bytes(path), chunk_bytes(zpath)
    print(f"{name} {chunks}: ratio {x.nbytes / sizes[0]:.2f} (NaN -> 0: {x.nbytes / sizes[1]:.2f})")
    assert sizes[0] < x.nbytes / 4, sizes  # compressed, not stored raw
    out = tmp_path / "back.npz"
    r = run_python(
        "import numpy as np, xarray as xr, dask.array as da\n"
        f"v = xr.open_zarr({str(path)!r}).v\n"
        "assert isinstance(v.data, da.Array), type(v.data)\n"
        "np.savez(" + repr(str(out)) + ", v=v.values, mean=float(v.mean().compute()),\n"
        "         vmax=float(v.max().compute()), nnan=int(v.isnull().sum().compute()),\n"
        "         nchunks=v.data.npartitions)\n"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    back = np.load(out)
    # xarray's CF decoding may rewrite NaN payloads: positions and values, not NaN bits.
    assert_missing_kept(x, back["v"], eb, f"{name} {chunks}", bits=False)
    assert int(back["nnan"]) == int(np.isnan(x).sum())
    x64 = x.astype(np.float64)
    assert abs(float(back["vmax"]) - np.nanmax(x64)) <= eb
    assert abs(float(back["mean"]) - np.nanmean(x64)) <= eb * (1 + 1e-6) + 1e-6 * abs(np.nanmean(x64))
    if chunks == "dask_uneven":
        assert int(back["nchunks"]) > 1
    assert_not_larger_than_zero_filled(name, sizes[0], sizes[1], f"zarr store ({chunks})")


@pytest.mark.parametrize("name", MASKED)
def test_interp_layout_to_zarr_open_zarr_dask(xr, fz_zarr, tmp_path, name):
    """The interpolation layout through xarray with dask's uneven chunks and xarray's NaN fill:
    every chunk an interp archive of its shape, NaN positions identical, every finite value
    within the bound, reopened by ``xr.open_zarr`` in a fresh process; the store is smaller
    than the block-head layout's (ETOPO5 land excepted, see the end)."""
    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    dims = ("z", "y", "x")[-x.ndim:]

    def write(layout, path):
        ds = xr.Dataset({"v": (dims, x)})
        ds = ds.chunk({d: max(1, (s * 2) // 5) for d, s in zip(dims, x.shape)})
        ds.to_zarr(str(path), zarr_format=3,
                   encoding={"v": {"serializer": fz_zarr.SZp(eb=eb, layout=layout)}})

    path, hpath = tmp_path / "interp.zarr", tmp_path / "heads.zarr"
    write("interp", path)
    write("heads", hpath)
    meta = json.loads((path / "v" / "zarr.json").read_text())
    assert meta["codecs"][0]["configuration"]["layout"] == "interp"
    import fzpack

    # xarray's default compressor (zstd) follows the serializer: undo it to read the archive.
    after = [c["name"] for c in meta["codecs"][1:]]
    assert after in ([], ["zstd"]), after
    unzstd = require_module("numcodecs").Zstd().decode if after else bytes
    chunk_files = [p for p in (path / "v" / "c").rglob("*") if p.is_file()]
    assert len(chunk_files) > 1
    for p in chunk_files:
        h = fzpack.szp_header(bytes(unzstd(p.read_bytes())))
        assert h["layout"] == "interp" and len(h["shape"]) == x.ndim, p
    sizes = chunk_bytes(path), chunk_bytes(hpath)
    print(f"{name} interp: ratio {x.nbytes / sizes[0]:.2f} (heads: {x.nbytes / sizes[1]:.2f})")
    out = tmp_path / "back.npz"
    r = run_python(
        "import numpy as np, xarray as xr, dask.array as da\n"
        f"v = xr.open_zarr({str(path)!r}).v\n"
        "assert isinstance(v.data, da.Array), type(v.data)\n"
        "np.savez(" + repr(str(out)) + ", v=v.values, nnan=int(v.isnull().sum().compute()),\n"
        "         vmax=float(v.max().compute()))\n"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    back = np.load(out)
    assert_missing_kept(x, back["v"], eb, f"{name} interp", bits=False)
    assert int(back["nnan"]) == int(np.isnan(x).sum())
    assert abs(float(back["vmax"]) - np.nanmax(x.astype(np.float64))) <= eb
    # Smaller than the block-head layout's store, except where zstd after the block layout
    # squeezes the mask's long zero runs (ETOPO5 land, 71 % NaN ocean: the block-head archive
    # is 2.2x the interp one, but zstd takes it to 0.92x): an expected failure naming both.
    if sizes[0] >= sizes[1]:
        msg = f"interp store {sizes[0]} bytes, heads + zstd {sizes[1]}"
        if name == "etopo5_land":
            pytest.xfail("known: " + msg)
        raise AssertionError(msg)
