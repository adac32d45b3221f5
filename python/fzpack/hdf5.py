"""HDF5 through h5py: keyword arguments for ``create_dataset`` and the bundled filter plugin.

::

    import h5py, fzpack.hdf5
    with h5py.File("data.h5", "w") as f:
        f.create_dataset("t", data=x, chunks=(180, 360), compression=fzpack.hdf5.SZp(eb=1e-3))
        f.create_dataset("u", data=x, chunks=(180, 360), **fzpack.hdf5.SZp(eb=1e-3))

``fzpack.hdf5.SZp(...)`` is an ``h5py.filters.FilterRefBase`` (the ``hdf5plugin`` convention):
pass it as ``compression=``, or unpack it as the mapping ``{"compression": FILTER_ID,
"compression_opts": (...)}``. Importing this module adds :data:`PLUGIN_PATH` to the plugin
search path of h5py's HDF5 (``h5py.h5pl.prepend``).

Other HDF5 libraries in the process (netCDF4-python's, h5netcdf goes through h5py) and other
programs (h5dump, h5repack, C, netCDF) find the plugin through the ``HDF5_PLUGIN_PATH``
environment variable. :func:`set_plugin_path` sets it for this process, as ``hdf5plugin`` does
on import; HDF5 reads the variable once, when the library initializes (netCDF4-python's: on
``import netCDF4``), so call it (or import this module, which calls it) before ``import
netCDF4``; imported later, the read fails with "NetCDF: Filter error: undefined filter
encountered". Child processes inherit it. From a shell: ``HDF5_PLUGIN_PATH=$(python -c
'import fzpack.hdf5 as h; print(h.PLUGIN_PATH)')``.

Filter id :data:`FILTER_ID` = 62025 is in the range HDF5 leaves to unregistered filters
(32768-65535). ``cd_values`` layout version 1: ``(1, codec, mode|bits, block_size, eb_lo,
eb_hi)`` with codec 0 = SZp, 1 = PERNIX; for SZp ``mode`` carries the layout in bits 8..15
(0 block heads, 2 the interpolation layout: ``SZp(eb, layout="interp")``); the plugin's
``set_local`` appends the dtype and the chunk's value count (and, for the interpolation
layout, the chunk's rank and dimensions, so each chunk is predicted over its own shape). Each chunk is one fzpack archive plus a CRC-32, so a damaged chunk fails
the read. SZp keeps NaN and infinities (missing values) exactly, so chunks holding them are
compressed like any other. h5py adds the filter as optional: a chunk the codec cannot encode
(an SZp bound below the float precision; PERNIX with NaN or infinity) is then stored
unfiltered by HDF5, its values kept exactly.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping

import fzpack

__all__ = ["SZp", "PERNIX", "FILTER_ID", "PLUGIN_PATH", "register", "set_plugin_path"]

#: The HDF5 filter id of the fzpack plugin.
FILTER_ID = 62025
#: Version of the ``cd_values`` layout.
CD_VERSION = 1
#: Directory of the bundled HDF5 filter plugin (``libfzpack_hdf5.so``).
PLUGIN_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_plugins")


try:  # h5py's base class: ``compression=SZp(...)`` then works, not only ``**SZp(...)``.
    import h5py as _h5py

    _Base = _h5py.filters.FilterRefBase  # h5py >= 3.0 (the module is h5py._hl.filters)
except (ImportError, AttributeError):  # without h5py the objects are still the kwargs mapping

    class _Base(Mapping):
        """The parts of ``h5py.filters.FilterRefBase`` used here (h5py not installed)."""

        filter_id = None
        filter_options = ()

        @property
        def _kwargs(self):
            return {"compression": self.filter_id, "compression_opts": self.filter_options}

        def __hash__(self):
            return hash((self.filter_id, self.filter_options))

        def __eq__(self, other):
            return (
                isinstance(other, _Base)
                and self.filter_id == other.filter_id
                and self.filter_options == other.filter_options
            )

        def __len__(self):
            return len(self._kwargs)

        def __iter__(self):
            return iter(self._kwargs)

        def __getitem__(self, item):
            return self._kwargs[item]


class _Filter(_Base):
    """``compression=`` value and read-only ``{"compression": ..., "compression_opts": ...}``
    mapping (hashable, compared by filter id and options)."""

    filter_name = "fzpack"
    filter_id = FILTER_ID

    def __init__(self, options: tuple[int, ...]):
        self.filter_options = tuple(int(v) for v in options)

    def __repr__(self):
        return f"{type(self).__name__}({dict(self)!r})"


class SZp(_Filter):
    """``create_dataset`` kwargs for SZp: ``|x - y| <= eb`` (``"abs"``) or
    ``eb * (chunk max - chunk min)`` (``"noa"``), every element."""

    #: The layouts the plugin writes (``cd_values[2]`` bits 8..15: 0 block heads, 2 the
    #: interpolation layout, each chunk predicted over its own shape).
    LAYOUTS = {"heads": 0, "interp": 2}

    def __init__(self, eb: float, mode: str = "abs", block_size: int = 128, layout: str = "heads"):
        mode = fzpack.check_mode(mode)
        layout = fzpack.check_layout(layout)
        if layout not in self.LAYOUTS:
            names = ", ".join(f'"{n}"' for n in self.LAYOUTS)
            raise fzpack.Error(
                f"invalid argument: the HDF5 filter writes the layouts {names}, got {layout!r}"
            )
        codes = {"abs": 0, "noa": 2}
        eb = float(fzpack.require_bound(eb))
        if not (eb > 0 and eb != float("inf")):
            raise fzpack.Error(f"invalid argument: eb must be finite and > 0, got {eb}")
        block_size = int(block_size)
        if not 1 <= block_size <= 4096:
            raise fzpack.Error(f"invalid argument: block_size must be 1..=4096, got {block_size}")
        lo, hi = struct.unpack("<II", struct.pack("<d", eb))
        self.eb, self.mode, self.block_size, self.layout = eb, mode, block_size, layout
        cd2 = codes[mode] | self.LAYOUTS[layout] << 8
        super().__init__((CD_VERSION, 0, cd2, block_size, lo, hi))
        register()


class PERNIX(_Filter):
    """``create_dataset`` kwargs for PERNIX block packing (``bits`` 1..=24, ``block_size``
    64/128/256/512/1024 bytes)."""

    def __init__(self, bits: int, block_size: int = 64):
        bits, block_size = int(bits), int(block_size)
        if not 1 <= bits <= 24:
            raise fzpack.Error(f"invalid argument: bits must be 1..=24, got {bits}")
        if block_size not in (64, 128, 256, 512, 1024):
            raise fzpack.Error(
                f"invalid argument: block_size must be 64, 128, 256, 512 or 1024, got {block_size}"
            )
        self.bits, self.block_size = bits, block_size
        super().__init__((CD_VERSION, 1, bits, block_size, 0, 0))
        register()


def set_plugin_path() -> str:
    """Puts :data:`PLUGIN_PATH` first in this process's ``HDF5_PLUGIN_PATH`` (kept if already
    there; other entries stay) and returns the new value. Called on import of this module.

    HDF5 reads the variable when the library initializes, so it only reaches an HDF5 library
    loaded afterwards: call it before ``import netCDF4`` (or anything else that loads its own
    HDF5), or set the variable in the environment of a subprocess. h5py's HDF5 does not need it (:func:`register` adds the path directly).
    """
    old = os.environ.get("HDF5_PLUGIN_PATH", "")
    parts = [p for p in old.split(os.pathsep) if p and p != PLUGIN_PATH]
    os.environ["HDF5_PLUGIN_PATH"] = os.pathsep.join([PLUGIN_PATH, *parts])
    return os.environ["HDF5_PLUGIN_PATH"]


_registered = False


def register() -> bool:
    """Adds :data:`PLUGIN_PATH` to h5py's HDF5 plugin search path (once). Returns whether
    h5py is available. Called on import and by :class:`SZp`/:class:`PERNIX`."""
    global _registered
    if _registered:
        return True
    try:
        import h5py
    except ImportError:
        return False
    path = PLUGIN_PATH.encode()
    if path not in [h5py.h5pl.get(i) for i in range(h5py.h5pl.size())]:
        h5py.h5pl.prepend(path)
    _registered = True
    return True


set_plugin_path()
register()
