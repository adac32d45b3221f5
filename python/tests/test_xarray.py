"""xarray → Zarr v3 as users write it: ``fzpack.zarr.SZp`` as the ``serializer`` in
``to_zarr(encoding=...)`` with a finite ``fill_value``, reopened with ``xr.open_zarr`` in a
fresh process and reduced with dask; ``compressors=`` is refused with a hint to
``serializer=``. (The HDF5 side, h5netcdf and netCDF4, is in test_hdf5.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import FINITE_FIELDS, assert_bound, require, require_module, run_python

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


# dask chunks that do not divide the shape (edge chunks are partial), and no chunking at all
# (xarray then leaves the chunk shape to zarr's default).
@pytest.mark.parametrize("chunks", [{"y": 97, "x": 130}, None], ids=["dask_uneven", "zarr_default"])
def test_to_zarr_serializer_open_zarr_dask_fresh_process(xr, fz_zarr, tmp_path, chunks):
    x = FIELD
    eb = 1e-3 * float(np.ptp(x.astype(np.float64))) or 1e-3
    ds = dataset(xr, x)
    if chunks:
        ds = ds.chunk(chunks)
    path = tmp_path / "a.zarr"
    ds.to_zarr(str(path), zarr_format=3, encoding={
        "v": {"serializer": fz_zarr.SZp(eb=eb), "fill_value": 0.0}})
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
                       encoding={"v": {"compressors": compressors, "fill_value": 0.0}})
    with pytest.raises(TypeError, match=r"array-to-bytes codec: pass it as serializer="):
        zarr.create_array(str(tmp_path / "d.zarr"), shape=(10,), dtype="f4",
                          compressors=[fz_zarr.SZp(1e-3).to_dict()])
    # The codec's own repr is unchanged.
    assert repr(fz_zarr.SZp(1e-3)) == "SZp(eb=0.001, mode='abs', block_size=128)"
