"""One set of defaults in every Python front end: an SZp bound is required (no default, as in
SZ3 and ZFP; a missing one is a ``TypeError`` with ``fzpack.BOUND_REQUIRED``), the parameter
names are ``eb``, ``mode``, ``block_size`` everywhere, ``mode`` defaults to ``"abs"`` and
``block_size`` to 128 (the CLI's ``--eb``, ``--mode``)."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

import fzpack
from helpers import require, require_module

REQUIRED = "an error bound is required"
X = np.linspace(0.0, 1.0, 500)


def check_signature(f) -> None:
    """``(…, eb, mode="abs", block_size=128, …)`` with ``eb`` required."""
    p = inspect.signature(f).parameters
    assert p["eb"].default is inspect.Parameter.empty, f
    assert p["mode"].default == "abs", f
    assert p["block_size"].default == 128, f


def test_numpy_api_requires_a_bound():
    for f in (fzpack.szp_compress, fzpack.write_fzm):
        check_signature(f)
        with pytest.raises(TypeError, match="eb"):
            f(X)
        with pytest.raises(TypeError, match=REQUIRED):
            f(X, None)
        with pytest.raises(TypeError, match=REQUIRED):
            f(X, eb=None, mode="noa")
    # The native module states the same signature.
    assert fzpack._fzpack.szp_compress.__text_signature__.replace('"', "'") == (
        "(arr, eb, mode='abs', block_size=128, layout='heads', f32_step=False)"
    )
    with pytest.raises(TypeError):
        fzpack._fzpack.szp_compress(X)
    # The default mode is "abs": the bound is absolute.
    assert fzpack.szp_header(fzpack.szp_compress(X, 1e-3))["mode"] == "abs"


def test_numcodecs_requires_a_bound():
    nc = require_module("numcodecs")
    import fzpack.numcodecs as m

    check_signature(m.SZp)
    with pytest.raises(TypeError, match="eb"):
        m.SZp()
    with pytest.raises(TypeError, match=REQUIRED):
        m.SZp(None)
    for config in ({"id": "fzpack_szp"}, {"id": "fzpack_szp", "mode": "noa"},
                   {"id": "fzpack_szp", "eb": None}):
        with pytest.raises(TypeError, match=REQUIRED):
            nc.get_codec(config)
    cfg = nc.get_codec({"id": "fzpack_szp", "eb": 0.5}).get_config()
    assert cfg == {"id": "fzpack_szp", "eb": 0.5, "mode": "abs", "block_size": 128, "layout": "heads"}


def test_zarr_requires_a_bound(tmp_path):
    zarr = require_module("zarr")
    require(int(zarr.__version__.split(".")[0]) >= 3, f"zarr {zarr.__version__}: the codec needs zarr >= 3")
    import fzpack.zarr as m

    check_signature(m.SZp)
    with pytest.raises(TypeError, match="eb"):
        m.SZp()
    with pytest.raises(TypeError, match=REQUIRED):
        m.SZp(eb=None)
    for d in ({"name": "fzpack_szp"}, {"name": "fzpack_szp", "configuration": {"mode": "abs"}}):
        with pytest.raises(TypeError, match=REQUIRED):
            m.SZp.from_dict(d)
    assert m.SZp(0.5).to_dict()["configuration"] == {"eb": 0.5, "mode": "abs", "block_size": 128, "layout": "heads"}
    # A zarr.json whose codec lost its bound does not open with a made-up one.
    path = tmp_path / "a.zarr"
    z = zarr.create_array(str(path), shape=(10,), chunks=(10,), dtype="f8", serializer=m.SZp(0.5))
    z[:] = np.arange(10.0)
    meta = json.loads((path / "zarr.json").read_text())
    del meta["codecs"][0]["configuration"]["eb"]
    (path / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(TypeError, match=REQUIRED):
        zarr.open_array(str(path))[:]


def test_hdf5_requires_a_bound():
    import fzpack.hdf5 as m

    check_signature(m.SZp)
    with pytest.raises(TypeError, match="eb"):
        m.SZp()
    with pytest.raises(TypeError, match=REQUIRED):
        m.SZp(None)
    with pytest.raises(TypeError, match=REQUIRED):
        m.SZp(eb=None, mode="noa")
    # mode "abs" = 0 and block size 128 in the stored cd_values.
    assert m.SZp(0.5)["compression_opts"][:4] == (1, 0, 0, 128)
