"""HDF5 through h5py: keyword arguments for ``create_dataset`` and the bundled filter plugin.

::

    import h5py, fzpack.hdf5
    with h5py.File("data.h5", "w") as f:
        f.create_dataset("t", data=x, chunks=(180, 360), **fzpack.hdf5.SZp(eb=1e-3))

``fzpack.hdf5.SZp(...)`` is a mapping ``{"compression": FILTER_ID, "compression_opts": (...)}``
(the ``hdf5plugin`` convention). Importing this module adds :data:`PLUGIN_PATH` to the plugin
search path of h5py's HDF5 (``h5py.h5pl.prepend``); other programs (h5dump, h5repack, C,
netCDF) find the plugin with ``HDF5_PLUGIN_PATH=$(python -c 'import fzpack.hdf5 as h;
print(h.PLUGIN_PATH)')``.

Filter id :data:`FILTER_ID` = 62025 is in the range HDF5 leaves to unregistered filters
(32768-65535). ``cd_values`` layout version 1: ``(1, codec, mode|bits, block_size, eb_lo,
eb_hi)`` with codec 0 = SZp, 1 = PERNIX; the plugin's ``set_local`` appends the dtype and the
chunk's value count. Each chunk is one fzpack archive plus a CRC-32, so a damaged chunk fails
the read. h5py adds the filter as optional: a chunk the codec cannot encode (NaN or infinity,
a bound below the float precision) is then stored unfiltered by HDF5, its values kept exactly.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping

import fzpack

__all__ = ["SZp", "PERNIX", "FILTER_ID", "PLUGIN_PATH", "register"]

#: The HDF5 filter id of the fzpack plugin.
FILTER_ID = 62025
#: Version of the ``cd_values`` layout.
CD_VERSION = 1
#: Directory of the bundled HDF5 filter plugin (``libfzpack_hdf5.so``).
PLUGIN_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_plugins")


class _Filter(Mapping):
    """A read-only ``{"compression": ..., "compression_opts": ...}`` mapping."""

    filter_name = "fzpack"
    filter_id = FILTER_ID

    def __init__(self, options: tuple[int, ...]):
        self.filter_options = tuple(int(v) for v in options)
        self._kwargs = {"compression": FILTER_ID, "compression_opts": self.filter_options}

    def __getitem__(self, key):
        return self._kwargs[key]

    def __iter__(self):
        return iter(self._kwargs)

    def __len__(self):
        return len(self._kwargs)

    def __repr__(self):
        return f"{type(self).__name__}({self._kwargs!r})"


class SZp(_Filter):
    """``create_dataset`` kwargs for SZp: ``|x - y| <= eb`` (``"abs"``) or
    ``eb * (chunk max - chunk min)`` (``"noa"``), every element."""

    def __init__(self, eb: float, mode: str = "abs", block_size: int = 128):
        mode = fzpack.check_mode(mode)
        codes = {"abs": 0, "noa": 2}
        eb = float(eb)
        if not (eb > 0 and eb != float("inf")):
            raise fzpack.Error(f"invalid argument: eb must be finite and > 0, got {eb}")
        block_size = int(block_size)
        if not 1 <= block_size <= 4096:
            raise fzpack.Error(f"invalid argument: block_size must be 1..=4096, got {block_size}")
        lo, hi = struct.unpack("<II", struct.pack("<d", eb))
        self.eb, self.mode, self.block_size = eb, mode, block_size
        super().__init__((CD_VERSION, 0, codes[mode], block_size, lo, hi))
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


register()
