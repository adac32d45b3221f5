"""numcodecs: entry-point registration, get_codec, get_config JSON round trip, encode/decode."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import numpy as np
import pytest

import fzpack
from helpers import (
    FINITE_FIELDS, MASKED, assert_bound, assert_missing_kept, finite_range, masked_field,
    require_module, run_python,
)



@pytest.fixture
def nc():
    return require_module("numcodecs")


@pytest.fixture
def fz_nc(nc):
    import fzpack.numcodecs as m

    return m


def test_entry_points_are_registered():
    eps = {e.name: e.value for e in entry_points(group="numcodecs.codecs")}
    assert eps.get("fzpack_szp") == "fzpack.numcodecs:SZp"
    assert eps.get("fzpack_pernix") == "fzpack.numcodecs:PERNIX"


@pytest.mark.parametrize(
    "config",
    [
        {"id": "fzpack_szp", "eb": 1e-3, "mode": "abs"},
        {"id": "fzpack_szp", "eb": 0.1 + 0.2, "mode": "noa", "block_size": 32},
        {"id": "fzpack_szp", "eb": 1.2345678901234567e-2, "mode": "abs", "block_size": 4096},
        {"id": "fzpack_szp", "eb": 1e-3, "mode": "abs", "layout": "interp"},
        {"id": "fzpack_szp", "eb": 0.1 + 0.2, "mode": "noa", "layout": "fzgm"},
        {"id": "fzpack_pernix", "bits": 12},
        {"id": "fzpack_pernix", "bits": 24, "block_size": 1024},
    ],
)
def test_get_codec_and_json_round_trip(nc, fz_nc, config):
    codec = nc.get_codec(dict(config))
    assert isinstance(codec, (fz_nc.SZp, fz_nc.PERNIX))
    cfg = codec.get_config()
    assert cfg["id"] == config["id"]
    for k, v in config.items():
        assert cfg[k] == v, k
    text = json.dumps(cfg)
    again = nc.get_codec(json.loads(text))
    assert type(again) is type(codec)
    assert again.get_config() == cfg  # bit-identical floats through JSON (repr round trip)
    assert again == codec
    x = np.cumsum(np.random.default_rng(5).normal(size=5000)).astype(np.float32)
    assert again.encode(x) == codec.encode(x)


def test_get_codec_in_a_fresh_process_without_importing_fzpack(nc):
    # Only the entry point can find the class there.
    r = run_python(
        "import numcodecs, numpy as np, sys\n"
        "c = numcodecs.get_codec({'id': 'fzpack_szp', 'eb': 0.01, 'mode': 'abs'})\n"
        "assert 'fzpack' not in sys.modules or type(c).__module__ == 'fzpack.numcodecs'\n"
        "x = np.linspace(0, 10, 1000)\n"
        "y = c.decode(c.encode(x))\n"
        "assert np.max(np.abs(x - y)) <= 0.01\n"
        "print(type(c).__module__, type(c).__name__)\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "fzpack.numcodecs SZp"


@pytest.mark.parametrize("name,x", FINITE_FIELDS[:4], ids=[n for n, _ in FINITE_FIELDS[:4]])
def test_szp_codec_bound_every_element(fz_nc, name, x):
    eb = 1e-3 * float(x.max() - x.min()) or 1e-3
    c = fz_nc.SZp(eb)
    enc = c.encode(x)
    dec = c.decode(enc)
    assert dec.dtype == x.dtype and dec.size == x.size
    assert_bound(x, dec, eb, name)
    out = np.empty_like(x)
    res = c.decode(enc, out=out)
    assert res is out or np.shares_memory(res, out)
    assert_bound(x, out, eb, name + " out=")


def test_noa_codec_bound_per_buffer(fz_nc):
    x = np.linspace(-3, 7, 10_000)
    c = fz_nc.SZp(1e-4, mode="NOA")
    assert c.mode == "noa"
    assert_bound(x, c.decode(c.encode(x)), 1e-4 * 10, "noa")


def test_pernix_codec(fz_nc):
    x = np.sin(np.linspace(0, 20, 10_000))
    c = fz_nc.PERNIX(16, block_size=256)
    enc = c.encode(x)
    dec = c.decode(enc)
    bounds, per = fzpack.pernix_block_bounds(enc)
    assert_bound(x, dec, np.repeat(bounds, per)[: x.size], "pernix codec")


def test_codec_accepts_buffers_numcodecs_passes(fz_nc):
    x = np.arange(1000, dtype=np.float64) / 7
    c = fz_nc.SZp(1e-6)
    enc = c.encode(x)
    for b in (enc, bytearray(enc), memoryview(enc), np.frombuffer(enc, dtype=np.uint8)):
        assert_bound(x, c.decode(b), 1e-6, type(b).__name__)
    # A 2-D input (any layout) is compressed in C order; decode gives back its shape.
    assert c.decode(c.encode(x.reshape(10, 100))).shape == (10, 100)
    f = np.asfortranarray(x.reshape(10, 100))
    y = c.decode(c.encode(f))
    assert y.shape == (10, 100)
    assert_bound(f, y, 1e-6, "fortran")


@pytest.mark.parametrize("eb", [0, -1, float("nan"), float("inf")])
def test_bad_codec_arguments(nc, fz_nc, eb):
    with pytest.raises(fzpack.Error, match="eb must be finite and > 0"):
        fz_nc.SZp(eb)
    with pytest.raises(fzpack.Error):
        nc.get_codec({"id": "fzpack_szp", "eb": eb})


def test_bad_codec_arguments_other(fz_nc):
    with pytest.raises(fzpack.Error, match="mode"):
        fz_nc.SZp(1e-3, mode="rel2")
    # The one mode rule of every entry point (fzpack.check_mode): "rel" is not an alias.
    with pytest.raises(fzpack.Error, match='mode must be "abs" or "noa"'):
        fz_nc.SZp(1e-3, mode="rel")
    with pytest.raises(fzpack.Error, match="bits"):
        fz_nc.PERNIX(0)
    with pytest.raises(fzpack.Error, match="block_size"):
        fz_nc.PERNIX(8, block_size=96)


def test_codec_errors_are_fzpack_errors(fz_nc):
    c = fz_nc.SZp(1e-3)
    with pytest.raises(fzpack.Error, match="float32 or float64"):
        c.encode(np.arange(10))
    with pytest.raises(fzpack.Error):
        c.decode(b"garbage!" * 10)
    enc = c.encode(np.ones(100))
    with pytest.raises(fzpack.Error, match="truncated"):
        c.decode(enc[:-3])


# ---------------------------------------------------------------------------------------------
# The layout option (fzpack.SZP_LAYOUTS), the interpolation layout per chunk
# ---------------------------------------------------------------------------------------------


def test_layout_in_the_config(nc, fz_nc):
    # A configuration without "layout" (written before the option) means the block-head layout.
    c = nc.get_codec({"id": "fzpack_szp", "eb": 0.5})
    assert c.layout == "heads" and c.get_config()["layout"] == "heads"
    for name in fzpack.SZP_LAYOUTS:
        c = nc.get_codec({"id": "fzpack_szp", "eb": 0.5, "layout": name.upper()})
        assert c.layout == name
        again = nc.get_codec(json.loads(json.dumps(c.get_config())))
        assert again == c and again.layout == name
        assert repr(c) == f"SZp(eb=0.5, mode='abs', block_size=128, layout='{name}')"
    assert fz_nc.SZp(0.5) != fz_nc.SZp(0.5, layout="interp")
    with pytest.raises(fzpack.Error, match='layout must be one of "heads", "fzgm", "interp"'):
        fz_nc.SZp(1e-3, layout="zfp")
    with pytest.raises(ValueError, match="layout must be one of"):
        nc.get_codec({"id": "fzpack_szp", "eb": 1e-3, "layout": "sz3"})


@pytest.mark.parametrize("layout", ["heads", "fzgm", "interp"])
def test_codec_writes_its_layout_and_the_chunk_shape(fz_nc, layout):
    y, x = np.mgrid[0:90, 0:120].astype(np.float64)
    chunk = (np.sin(x / 9.0) * np.cos(y / 7.0) * 10.0).astype(np.float32)
    c = fz_nc.SZp(1e-3, layout=layout)
    enc = c.encode(chunk)
    h = fzpack.szp_header(enc)
    assert h["layout"] == layout and h["shape"] == [90, 120]
    assert enc == fzpack.szp_compress(chunk, 1e-3, layout=layout)
    dec = c.decode(enc)
    assert dec.shape == chunk.shape and dec.dtype == chunk.dtype
    assert_bound(chunk, dec, 1e-3, layout)
    # decode into the caller's buffer (zarr v2 passes out=), flat or shaped
    for out in (np.empty_like(chunk), np.empty(chunk.size, dtype=chunk.dtype)):
        res = c.decode(enc, out=out)
        assert np.shares_memory(res, out)
        assert_bound(chunk, out, 1e-3, f"{layout} out={out.shape}")


@pytest.mark.parametrize("name,x", FINITE_FIELDS[:4], ids=[n for n, _ in FINITE_FIELDS[:4]])
def test_interp_codec_bound_every_element(fz_nc, name, x):
    eb = 1e-3 * float(x.max() - x.min()) or 1e-3
    c = fz_nc.SZp(eb, layout="interp")
    enc = c.encode(x)
    assert fzpack.szp_header(enc)["shape"] == list(x.shape)
    dec = c.decode(enc)
    assert dec.dtype == x.dtype and dec.shape == x.shape
    assert_bound(x, dec, eb, name)
    out = np.empty_like(x)
    c.decode(enc, out=out)
    assert_bound(x, out, eb, name + " out=")


@pytest.mark.parametrize("name", MASKED)
def test_interp_codec_keeps_missing_values(fz_nc, name):
    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    for mode, bound in (("abs", eb), ("noa", 1e-3 * finite_range(x))):
        c = fz_nc.SZp(eb if mode == "abs" else 1e-3, mode=mode, layout="interp")
        enc = c.encode(x)
        assert fzpack.szp_header(enc)["missing"] is True
        assert_missing_kept(x, c.decode(enc), bound * (1 + 1e-12), f"{name} {mode}")
