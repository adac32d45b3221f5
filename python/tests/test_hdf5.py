"""HDF5: h5py writes with fzpack.hdf5.SZp/PERNIX, h5dump (Debian's HDF5, another process with
only HDF5_PLUGIN_PATH set) reads back, the bound holds on every element, corruption fails."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import fzpack
import fzpack.hdf5
from helpers import (
    FINITE_FIELDS, MASKED, assert_bound, assert_missing_kept, assert_not_larger_than_zero_filled,
    finite_range, masked_field, require, require_installed, require_module, require_tool, run_python,
)


@pytest.fixture
def h5py():
    return require_module("h5py")


@pytest.fixture
def h5dump():
    return require_tool("h5dump")


def plugin_env() -> dict:
    """An environment with HDF5_PLUGIN_PATH and nothing else."""
    return {"HDF5_PLUGIN_PATH": fzpack.hdf5.PLUGIN_PATH}


def dump(h5dump: str, path: Path, dset: str, out: Path, *flags: str) -> subprocess.CompletedProcess:
    """h5dump the dataset as raw little-endian binary into ``out``."""
    return subprocess.run(
        [h5dump, *flags, "-d", dset, "-b", "LE", "-o", str(out), str(path)],
        capture_output=True, text=True, env=plugin_env(), timeout=120, cwd="/",
    )


def test_plugin_is_bundled():
    lib = Path(fzpack.hdf5.PLUGIN_PATH) / "libfzpack_hdf5.so"
    assert lib.is_file(), f"{lib} missing: the wheel was built without the HDF5 plugin"
    # The plugin links no libhdf5 (it resolves HDF5 in the process that loads it).
    assert b"libhdf5" not in subprocess.run(
        ["ldd", str(lib)], capture_output=True, check=False
    ).stdout


def test_kwargs_mapping():
    kw = fzpack.hdf5.SZp(eb=0.1 + 0.2, mode="noa", block_size=64)
    assert set(kw) == {"compression", "compression_opts"}
    assert kw["compression"] == fzpack.hdf5.FILTER_ID == 62025
    opts = kw["compression_opts"]
    assert opts[:4] == (1, 0, 2, 64)
    eb = np.array([opts[4], opts[5]], dtype="<u4").view("<f8")[0]
    assert eb == 0.1 + 0.2  # the bound's bits, exactly
    assert dict(**fzpack.hdf5.PERNIX(12, 256)) == {
        "compression": 62025, "compression_opts": (1, 1, 12, 256, 0, 0)}


@pytest.mark.parametrize("eb", [0, -1, float("nan"), float("inf")])
def test_bad_bound_kwargs(eb):
    with pytest.raises(fzpack.Error, match="eb must be finite and > 0"):
        fzpack.hdf5.SZp(eb)


def test_layout_kwargs():
    assert fzpack.hdf5.SZp(1e-3, mode="noa", layout="interp")["compression_opts"][2] == 2 | 2 << 8
    assert fzpack.hdf5.SZp(1e-3, layout="HEADS")["compression_opts"][2] == 0
    with pytest.raises(fzpack.Error, match="the HDF5 filter writes the layouts"):
        fzpack.hdf5.SZp(1e-3, layout="fzgm")
    with pytest.raises(fzpack.Error, match="layout must be one of"):
        fzpack.hdf5.SZp(1e-3, layout="x")


def test_interp_chunks_are_smaller_than_heads(h5py, tmp_path):
    x = make((120, 160), "f4")
    sizes = {}
    for layout in ("heads", "interp"):
        path = tmp_path / f"{layout}.h5"
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=x, chunks=(60, 80),
                             **fzpack.hdf5.SZp(1e-4, layout=layout))
        with h5py.File(path, "r") as f:
            y = f["x"][...]
            sizes[layout] = f["x"].id.get_storage_size()
        assert np.max(np.abs(y.astype(np.float64) - x)) <= 1e-4
    assert sizes["interp"] < sizes["heads"], sizes


def test_bad_other_kwargs():
    with pytest.raises(fzpack.Error, match="mode"):
        fzpack.hdf5.SZp(1e-3, mode="x")
    # The one mode rule of every entry point (fzpack.check_mode): "rel" is not an alias.
    with pytest.raises(fzpack.Error, match='mode must be "abs" or "noa"'):
        fzpack.hdf5.SZp(1e-3, mode="rel")
    with pytest.raises(fzpack.Error, match="block_size"):
        fzpack.hdf5.SZp(1e-3, block_size=0)
    with pytest.raises(fzpack.Error, match="bits"):
        fzpack.hdf5.PERNIX(25)
    with pytest.raises(fzpack.Error, match="block_size"):
        fzpack.hdf5.PERNIX(8, 65)


CASES = [
    # name, dtype, shape, chunks, filter kwargs, bound(x)
    ("szp_abs_f32_2d", "f4", (90, 120), (32, 50), dict(eb=1e-3), lambda x: 1e-3),
    ("szp_noa_f64_3d", "f8", (6, 40, 50), (3, 20, 25), dict(eb=1e-4, mode="noa"), None),
    ("szp_abs_f64_1d", "f8", (10_000,), (3000,), dict(eb=1e-6, block_size=32), lambda x: 1e-6),
    ("szp_interp_f32_2d", "f4", (90, 120), (32, 50), dict(eb=1e-3, layout="interp"),
     lambda x: 1e-3),
    ("szp_interp_noa_f64_3d", "f8", (6, 40, 50), (3, 20, 25),
     dict(eb=1e-4, mode="noa", layout="interp"), None),
]


def make(shape, dtype):
    n = int(np.prod(shape))
    v = np.sin(np.arange(n) / 37.0) * 50 + np.cos(np.arange(n) / 5.0)
    return v.reshape(shape).astype(dtype)


def noa_bound_per_chunk(x, chunks, eb):
    """NOA is relative to each chunk's range; the weakest chunk bound bounds all."""
    worst = 0.0
    for idx in np.ndindex(*[-(-s // c) for s, c in zip(x.shape, chunks)]):
        sl = tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunks))
        part = x[sl].astype(np.float64)
        worst = max(worst, float(np.ptp(part)) * eb)
    return worst


@pytest.mark.parametrize("name,dtype,shape,chunks,kw,bound", CASES, ids=[c[0] for c in CASES])
def test_h5py_write_h5dump_read(h5py, h5dump, tmp_path, name, dtype, shape, chunks, kw, bound):
    x = make(shape, dtype)
    path = tmp_path / f"{name}.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("v", data=x, chunks=chunks, **fzpack.hdf5.SZp(**kw))
        fid, flags, cd, fname = d.id.get_create_plist().get_filter(0)
        assert fid == 62025 and b"fzpack" in fname
        assert cd[6] == (1 if dtype == "f4" else 2) and cd[7] == int(np.prod(chunks))
        if kw.get("layout") == "interp":  # set_local adds the chunk's rank and dimensions
            assert cd[8:] == (len(chunks), *chunks)
        else:
            assert len(cd) == 8
        assert flags & 1 == 1  # h5py adds it optional: a chunk it cannot encode is kept raw
    b = bound(x) if bound else noa_bound_per_chunk(x, chunks, kw["eb"])
    with h5py.File(path, "r") as f:
        y = f["v"][...]
    assert y.dtype == np.dtype(dtype)
    assert_bound(x, y, b, name + " h5py")
    assert os.path.getsize(path) < x.nbytes  # it compressed
    out = tmp_path / "dump.bin"
    r = dump(h5dump, path, "/v", out)
    assert r.returncode == 0, r.stdout + r.stderr
    z = np.fromfile(out, dtype="<" + dtype).reshape(shape)
    assert np.array_equal(z, y)  # same decoder, same values
    assert_bound(x, z, b, name + " h5dump")


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=[n for n, _ in FINITE_FIELDS])
def test_real_fields_through_h5dump(h5py, h5dump, tmp_path, name, x):
    eb = 1e-3 * float(np.ptp(x.astype(np.float64))) or 1e-3
    chunks = tuple(max(1, s // 2) if i == 0 else s for i, s in enumerate(x.shape))
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=chunks, **fzpack.hdf5.SZp(eb))
    out = tmp_path / "dump.bin"
    r = dump(h5dump, path, "/v", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_bound(x, np.fromfile(out, dtype=x.dtype.newbyteorder("<")), eb, name)


def test_pernix_through_h5dump(h5py, h5dump, tmp_path):
    x = make((200, 300), "f4")
    path = tmp_path / "p.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("p", data=x, chunks=(50, 300), **fzpack.hdf5.PERNIX(16, 128))
    out = tmp_path / "dump.bin"
    r = dump(h5dump, path, "/p", out)
    assert r.returncode == 0, r.stdout + r.stderr
    z = np.fromfile(out, dtype="<f4")
    # Each chunk is its own stream: check each against its own block bounds.
    for c in range(4):
        xc = x[c * 50:(c + 1) * 50].reshape(-1)
        bounds, per = fzpack.pernix_block_bounds(fzpack.pernix_compress(xc, 16, 128))
        assert_bound(xc, z[c * 15000:(c + 1) * 15000], np.repeat(bounds, per)[: xc.size], "pernix")


def test_h5py_in_fresh_process_with_only_the_plugin_path(h5py, tmp_path):
    # h5py's own bundled libhdf5 loads the plugin from HDF5_PLUGIN_PATH without fzpack imported.
    x = make((64, 64), "f4")
    path = tmp_path / "g.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(32, 32), **fzpack.hdf5.SZp(1e-3))
    out = tmp_path / "g.npy"
    env = dict(plugin_env(), PATH=os.environ.get("PATH", ""))
    r = run_python(
        "import sys, h5py, numpy as np\n"
        f"np.save({str(out)!r}, h5py.File({str(path)!r}, 'r')['v'][...])\n"
        "assert 'fzpack' not in sys.modules\n",
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert_bound(x, np.load(out), 1e-3, "fresh h5py")


def test_debian_hdf5_writes_through_h5repack(h5py, tmp_path):
    # The write side in Debian's HDF5 1.10 (h5repack links it; set_local resolves the HDF5
    # calls in the global scope there), read back by h5py's own HDF5.
    h5repack = require_tool("h5repack")
    x = make((200, 300), "f4")
    raw, packed = tmp_path / "raw.h5", tmp_path / "packed.h5"
    with h5py.File(raw, "w") as f:
        f.create_dataset("v", data=x, chunks=(50, 300))
        f.create_dataset("d", data=x.astype("f8"), chunks=(100, 100))
    opts = fzpack.hdf5.SZp(1e-3)["compression_opts"]
    ud = "UD=62025,0,6," + ",".join(str(v) for v in opts)  # flag 0: mandatory
    r = subprocess.run([h5repack, "-f", ud, str(raw), str(packed)], capture_output=True,
                       text=True, env=plugin_env(), timeout=120, cwd="/")
    assert r.returncode == 0, r.stdout + r.stderr
    assert packed.stat().st_size < raw.stat().st_size / 2
    with h5py.File(packed, "r") as f:
        for name, dtype, code in (("v", "f4", 1), ("d", "f8", 2)):
            d = f[name]
            fid, flags, cd, _ = d.id.get_create_plist().get_filter(0)
            assert fid == 62025 and flags & 1 == 0 and cd[:6] == opts and cd[6] == code
            y = d[...]
            assert y.dtype == np.dtype(dtype)
            assert_bound(x, y, 1e-3, "h5repack " + name)


def chunk_extent(h5py, path, dset):
    with h5py.File(path, "r") as f:
        info = f[dset].id.get_chunk_info(0)
        return info.byte_offset, info.size


@pytest.mark.parametrize("where", ["middle", "last", "first"])
def test_corrupt_chunk_fails_the_read(h5py, h5dump, tmp_path, where):
    x = make((100, 100), "f4")
    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(50, 50), **fzpack.hdf5.SZp(1e-3))
    off, size = chunk_extent(h5py, path, "v")
    pos = off + {"first": 0, "middle": size // 2, "last": size - 1}[where]
    raw = bytearray(path.read_bytes())
    raw[pos] ^= 0x04
    path.write_bytes(bytes(raw))
    with h5py.File(path, "r") as f:
        with pytest.raises(OSError):
            f["v"][...]
        # The other chunks still read.
        assert_bound(x[50:, 50:], f["v"][50:, 50:], 1e-3, "intact chunk")
    r = dump(h5dump, path, "/v", tmp_path / "d.bin", "--enable-error-stack")
    assert r.returncode != 0, "h5dump read a corrupt chunk without failing"
    # The plugin's own message is on HDF5's error stack.
    assert "fzpack filter: chunk CRC-32 mismatch (corrupt chunk)" in r.stderr, r.stderr


def test_nan_chunks_are_compressed_and_only_a_bound_the_data_cannot_meet_is_raw(h5py, h5dump, tmp_path):
    # NaN and infinities are stored exactly inside the SZp archive: their chunk is filtered
    # like any other. h5py adds the filter as optional, so a chunk the codec cannot encode (a
    # bound below the float precision, dataset "w"; PERNIX with NaN, "p") is stored
    # unfiltered by HDF5.
    x = make((150,), "f4") + 1000
    x[17] = np.nan
    x[18] = np.inf
    x[100:150] = np.nan  # a chunk of nothing but missing values
    path = tmp_path / "n.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=x, chunks=(50,), compression=fzpack.hdf5.SZp(1e-3))
        f.create_dataset("w", data=x[50:100], chunks=(50,), **fzpack.hdf5.SZp(1e-9))
        f.create_dataset("p", data=x, chunks=(50,), compression=fzpack.hdf5.PERNIX(16))
    with h5py.File(path, "r") as f:
        # PERNIX cannot hold missing values: those chunks are stored raw, the other filtered.
        p = f["p"]
        assert [p.id.get_chunk_info(i).filter_mask for i in range(3)] == [1, 0, 1]
        assert np.array_equal(p[:50], x[:50], equal_nan=True)
        assert np.array_equal(p[100:], x[100:], equal_nan=True)
        d = f["v"]
        infos = [d.id.get_chunk_info(i) for i in range(3)]
        assert [i.filter_mask for i in infos] == [0, 0, 0]  # every chunk went through the filter
        assert infos[2].size < 100, infos[2]  # an all-missing chunk costs about nothing
        y = d[...]
        assert_missing_kept(x, y, 1e-3, "h5py")
        assert f["w"].id.get_chunk_info(0).filter_mask == 1
        assert np.array_equal(f["w"][...], x[50:100])  # bound below precision: stored raw
    out = tmp_path / "d.bin"
    r = dump(h5dump, path, "/v", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_missing_kept(x, np.fromfile(out, dtype="<f4"), 1e-3, "h5dump")


def test_set_local_refuses_bad_datasets(h5py, tmp_path):
    with h5py.File(tmp_path / "i.h5", "w") as f:
        with pytest.raises((OSError, ValueError), match="float32 or float64 only"):
            f.create_dataset("i", data=np.arange(100, dtype="i4"), chunks=(50,),
                             **fzpack.hdf5.SZp(1e-3))
        with pytest.raises((OSError, ValueError), match="little-endian"):
            f.create_dataset("be", data=np.arange(100, dtype=">f4"), chunks=(50,),
                             **fzpack.hdf5.SZp(1e-3))
        with pytest.raises((OSError, ValueError), match="error bound must be finite and > 0, got 0"):
            f.create_dataset("bad", shape=(100,), dtype="f4", chunks=(50,),
                             compression=62025, compression_opts=(1, 0, 0, 128, 0, 0))


def test_unknown_cd_version_is_refused(h5py, tmp_path):
    with h5py.File(tmp_path / "v.h5", "w") as f:
        with pytest.raises((OSError, ValueError), match="layout version 2"):
            f.create_dataset("v", shape=(100,), dtype="f4", chunks=(50,),
                             compression=62025, compression_opts=(2, 0, 0, 128, 0, 0))


def test_require_tools_semantics(monkeypatch):
    monkeypatch.setenv("FZPACK_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception, match="FZPACK_REQUIRE_TOOLS"):
        require(False, "a tool is missing")
    monkeypatch.setenv("FZPACK_REQUIRE_TOOLS", "")
    with pytest.raises(pytest.skip.Exception, match="^skipped: a tool is missing$"):
        require(False, "a tool is missing")


@pytest.mark.parametrize("make_filter", [
    lambda: fzpack.hdf5.SZp(1e-3), lambda: fzpack.hdf5.SZp(1e-2, mode="noa", block_size=64),
    lambda: fzpack.hdf5.PERNIX(16, 128)], ids=["szp_abs", "szp_noa", "pernix"])
def test_compression_keyword_form(h5py, tmp_path, make_filter):
    # The hdf5plugin form: the filter object itself as compression= (an h5py FilterRefBase),
    # the same dataset creation property list as the ** form.
    filt = make_filter()
    assert isinstance(filt, h5py.filters.FilterRefBase)
    assert hash(filt) == hash(make_filter()) and filt == make_filter() and filt != fzpack.hdf5.SZp(2)
    x = make((100, 120), "f4")
    with h5py.File(tmp_path / "k.h5", "w") as f:
        a = f.create_dataset("a", data=x, chunks=(50, 60), compression=filt)
        b = f.create_dataset("b", data=x, chunks=(50, 60), **filt)
        for d in (a, b):
            fid, flags, cd, _ = d.id.get_create_plist().get_filter(0)
            assert fid == 62025 and cd[:6] == filt.filter_options and flags & 1 == 1
    with h5py.File(tmp_path / "k.h5", "r") as f:  # reopened: not HDF5's chunk cache
        assert [f["a"].id.get_chunk_info(i).filter_mask for i in range(4)] == [0] * 4
        y = f["a"][...]
        assert np.array_equal(y, f["b"][...])
    assert os.path.getsize(tmp_path / "k.h5") < 2 * x.nbytes  # both compressed
    assert not np.array_equal(y, x)  # lossy: the filter really ran
    if isinstance(filt, fzpack.hdf5.SZp):
        bound = filt.eb if filt.mode == "abs" else noa_bound_per_chunk(x, (50, 60), filt.eb)
        assert_bound(x, y, bound, "compression=")


def test_set_plugin_path(monkeypatch):
    p = fzpack.hdf5.PLUGIN_PATH
    monkeypatch.setenv("HDF5_PLUGIN_PATH", os.pathsep.join(["/a", p, "/b"]))
    assert fzpack.hdf5.set_plugin_path() == os.pathsep.join([p, "/a", "/b"])
    assert fzpack.hdf5.set_plugin_path() == os.environ["HDF5_PLUGIN_PATH"] == os.pathsep.join([p, "/a", "/b"])
    monkeypatch.delenv("HDF5_PLUGIN_PATH")
    assert fzpack.hdf5.set_plugin_path() == p == os.environ["HDF5_PLUGIN_PATH"]
    # Importing the module sets it (as hdf5plugin does), in a process that had none.
    r = run_python("import os, fzpack.hdf5 as h\nprint(os.environ['HDF5_PLUGIN_PATH'] == h.PLUGIN_PATH)",
                   env={"PATH": os.environ.get("PATH", "")})
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


def write_netcdf_like(h5py, path, x):
    """An HDF5 file as netCDF-4 readers expect it: coordinate variables as dimension scales,
    the field filtered with compression=fzpack.hdf5.SZp(...)."""
    with h5py.File(path, "w") as f:
        f["lat"] = np.linspace(-89.5, 89.5, x.shape[0])
        f["lon"] = np.linspace(0.0, 359.0, x.shape[1])
        f["lat"].make_scale("lat")
        f["lon"].make_scale("lon")
        d = f.create_dataset("t", data=x, chunks=(32, 50), compression=fzpack.hdf5.SZp(1e-3))
        d.dims[0].attach_scale(f["lat"])
        d.dims[1].attach_scale(f["lon"])
        d.attrs["units"] = "K"


READERS = {
    # xarray through h5netcdf (h5py's HDF5: the import of fzpack.hdf5 registers the plugin).
    "h5netcdf": "import fzpack.hdf5, xarray as xr\n"
                "ds = xr.open_dataset(P, engine='h5netcdf')\n"
                "assert ds.t.dims == ('lat', 'lon') and ds.t.attrs['units'] == 'K', ds\n"
                "v = ds.t.values\n",
    # netCDF4-python (its own HDF5): HDF5_PLUGIN_PATH set before netCDF4 loads HDF5.
    "netCDF4": "import fzpack.hdf5\nfzpack.hdf5.set_plugin_path()\nimport netCDF4\n"
               "ds = netCDF4.Dataset(P)\n"
               "assert ds['t'].dimensions == ('lat', 'lon') and ds['t'].units == 'K'\n"
               "v = ds['t'][...].filled(np.nan)\n",
}


@pytest.mark.parametrize("reader", list(READERS))
def test_netcdf_readers_in_fresh_process(h5py, tmp_path, reader):
    require_installed(*(["xarray", "h5netcdf"] if reader == "h5netcdf" else ["netCDF4"]))
    x = make((90, 120), "f4")
    path, out = tmp_path / "nc.h5", tmp_path / "back.npy"
    write_netcdf_like(h5py, path, x)
    env = {"PATH": os.environ.get("PATH", "")}  # no HDF5_PLUGIN_PATH from outside
    head = f"import numpy as np\nP = {str(path)!r}\n"
    r = run_python(head + READERS[reader] + f"np.save({str(out)!r}, v)\n", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    y = np.load(out)
    assert y.dtype == np.float32 and y.shape == x.shape
    assert_bound(x, y, 1e-3, reader)
    with h5py.File(path, "r") as f:
        assert np.array_equal(f["t"][...], y)  # the same decoder's values
    # Control: without fzpack the same read fails, so the plugin is what made it work.
    bare = READERS[reader].replace("import fzpack.hdf5\nfzpack.hdf5.set_plugin_path()\n", "")
    bare = bare.replace("import fzpack.hdf5, ", "import ")
    assert "fzpack" not in bare
    r = run_python(head + bare, env=env)
    # netCDF4: "undefined filter encountered"; h5py: "can't open directory (<default plugin dir>)"
    assert r.returncode != 0 and ("filter" in r.stderr or "plugin" in r.stderr), r.stdout + r.stderr


MASKED_READERS = {
    "h5py": "import fzpack.hdf5, h5py\nv = h5py.File(P, 'r')['t'][...]\n",
    "h5netcdf": "import fzpack.hdf5, xarray as xr\n"
                "v = xr.open_dataset(P, engine='h5netcdf').t.values\n",
    "netCDF4": "import fzpack.hdf5\nimport netCDF4\n"
               "v = np.ma.filled(netCDF4.Dataset(P)['t'][...], np.nan)\n",
}


@pytest.mark.parametrize("name", MASKED)
def test_masked_field_compressed_and_read_by_every_reader(h5py, tmp_path, name):
    """A field with missing values (NaN land mask) written with compression=SZp: every chunk
    filtered (none stored raw), no bigger than the same field with NaN set to 0, read back by
    h5py, xarray/h5netcdf and netCDF4 in fresh processes with NaN positions identical and every
    finite value within the bound."""
    require_installed("xarray", "h5netcdf", "netCDF4")
    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    chunks = tuple(max(1, (s * 2) // 5) for s in x.shape)
    dims = ("depth", "lat", "lon")[-x.ndim:]
    path, zpath = tmp_path / "nan.h5", tmp_path / "zero.h5"
    sizes = []
    for p, data in ((path, x), (zpath, np.where(np.isnan(x), 0, x).astype(x.dtype))):
        with h5py.File(p, "w") as f:
            for dname, n in zip(dims, x.shape):
                f[dname] = np.arange(n, dtype="f8")
                f[dname].make_scale(dname)
            d = f.create_dataset("t", data=data, chunks=chunks, fillvalue=np.nan,
                                 compression=fzpack.hdf5.SZp(eb))
            for i, dname in enumerate(dims):
                d.dims[i].attach_scale(f[dname])
        with h5py.File(p, "r") as f:
            d = f["t"]
            masks = [d.id.get_chunk_info(i).filter_mask for i in range(d.id.get_num_chunks())]
            assert masks == [0] * len(masks), f"chunks stored unfiltered: {masks}"
            sizes.append(d.id.get_storage_size())
    print(f"{name}: ratio {x.nbytes / sizes[0]:.2f} (NaN -> 0: {x.nbytes / sizes[1]:.2f})")
    assert sizes[0] < x.nbytes / 4, sizes
    env = {"PATH": os.environ.get("PATH", "")}
    for reader, code in MASKED_READERS.items():
        out = tmp_path / f"{reader}.npy"
        r = run_python(f"import numpy as np\nP = {str(path)!r}\n" + code + f"np.save({str(out)!r}, v)\n",
                       env=env)
        assert r.returncode == 0, reader + ": " + r.stdout + r.stderr
        y = np.load(out)
        assert y.dtype == x.dtype, (reader, y.dtype)
        # h5py hands back the stored bits; the netCDF readers may rewrite NaN payloads.
        assert_missing_kept(x, y, eb, f"{name} {reader}", bits=reader == "h5py")
    assert_not_larger_than_zero_filled(name, sizes[0], sizes[1], "HDF5 dataset storage")


@pytest.mark.parametrize("form", ["compression=", "**kwargs"])
@pytest.mark.parametrize("name", ["generated_holes", "levitus_temp"])
def test_xarray_to_netcdf_h5netcdf_then_netcdf4(h5py, tmp_path, name, form):
    """xarray writes a NaN-masked field as netCDF-4 through h5netcdf with the filter in its
    encoding (both forms); netCDF4-python reads it in a fresh process: every chunk filtered,
    NaN positions identical, every finite value within the bound."""
    xr = require_module("xarray")
    require_installed("h5netcdf", "netCDF4")
    x = masked_field(name)
    eb = 1e-3 * finite_range(x)
    dims = ("depth", "lat", "lon")[-x.ndim:]
    chunks = tuple(max(1, (s * 2) // 5) for s in x.shape)
    filt = fzpack.hdf5.SZp(eb)
    enc = {"compression": filt} if form == "compression=" else dict(**filt)
    path = tmp_path / "x.nc"
    xr.Dataset({"t": (dims, x, {"units": "degC"})}).to_netcdf(
        path, engine="h5netcdf", encoding={"t": {**enc, "chunksizes": chunks}})
    with h5py.File(path, "r") as f:
        d = f["t"]
        assert d.id.get_create_plist().get_filter(0)[0] == fzpack.hdf5.FILTER_ID
        masks = [d.id.get_chunk_info(i).filter_mask for i in range(d.id.get_num_chunks())]
        assert masks == [0] * len(masks), masks
        assert d.id.get_storage_size() < x.nbytes / 4
    out = tmp_path / "back.npy"
    r = run_python(
        "import numpy as np, fzpack.hdf5, netCDF4\n"
        f"v = netCDF4.Dataset({str(path)!r})['t']\n"
        "assert v.units == 'degC'\n"
        f"np.save({str(out)!r}, np.ma.filled(v[...], np.nan))\n",
        env={"PATH": os.environ.get("PATH", "")},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert_missing_kept(x, np.load(out), eb, f"{name} to_netcdf -> netCDF4", bits=False)
