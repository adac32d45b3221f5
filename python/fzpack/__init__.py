"""fzpack: error-bounded lossy compression of scientific floats (SZp, PERNIX).

The functions take numpy arrays of ``float32`` or ``float64`` (any shape, compressed in C
order) and return ``bytes``. SZp archives record the array's shape (1 to 8 dimensions), and
``szp_decompress`` gives it back; NaN and infinities (missing values) are stored exactly, every
finite value within the bound. The other decompressors return a 1-D array (the caller
reshapes). The dtype always comes from the archive. C-contiguous native-endian arrays are read
in place (zero-copy); anything else is copied once, in C order. The GIL is released while the
Rust code runs, and large inputs are split across a rayon thread pool. Every failure raises
:class:`Error`, a subclass of :class:`ValueError`, with the message of the Rust core; a missing
bound raises ``TypeError`` (there is no default bound).

Submodules: :mod:`fzpack.numcodecs` (codecs ``fzpack_szp``/``fzpack_pernix``),
:mod:`fzpack.zarr` (a Zarr v3 array-to-bytes codec), :mod:`fzpack.hdf5` (h5py keyword
arguments and the bundled HDF5 filter plugin), ``python -m fzpack.bench`` (speed table).
"""

from __future__ import annotations

import numpy as np

from . import _fzpack
from ._fzpack import SZP_LAYOUTS, Error, __version__

__all__ = [
    "Error",
    "MODES",
    "SZP_LAYOUTS",
    "BOUND_REQUIRED",
    "check_mode",
    "check_layout",
    "require_bound",
    "__version__",
    "szp_compress",
    "szp_decompress",
    "szp_header",
    "pernix_compress",
    "pernix_decompress",
    "pernix_block_bounds",
    "read_fzm",
    "write_fzm",
]


#: The SZp bound modes every entry point accepts (case-insensitive): ``"abs"`` (absolute) and
#: ``"noa"`` (relative to the value range). Anything else raises :class:`Error` (a
#: ``ValueError``), in ``szp_compress``, ``write_fzm`` and the numcodecs, Zarr and HDF5 codecs.
MODES = ("abs", "noa")


def check_mode(mode) -> str:
    """``mode`` lower-cased if it is one of :data:`MODES`; else :class:`Error` listing them."""
    m = str(mode).lower()
    if m not in MODES:
        raise Error(
            'invalid argument: mode must be "abs" or "noa" (case-insensitive; "noa" is relative '
            f"to the value range), got {mode!r}"
        )
    return m


# SZP_LAYOUTS (from the native module): the SZp layouts every SZp front end accepts by name
# (case-insensitive), ``layout=`` of ``szp_compress`` and of the numcodecs and Zarr codecs:
# ``"heads"`` (the default: block heads stored apart, the fastest), ``"fzgm"`` (the
# FZGPUModules stage layout) and ``"interp"`` (values predicted by interpolation across the
# array's dimensions, entropy-coded: 2-4x smaller than ``"heads"`` on smooth grids at 1e-3 of
# the range, about 10x slower to compress). Anything else raises :class:`Error` (a
# ``ValueError``) listing them.


def check_layout(layout) -> str:
    """``layout`` lower-cased if it is one of :data:`SZP_LAYOUTS`; else :class:`Error` listing
    them (the native module checks the same rule against the same names)."""
    name = str(layout).lower()
    if name not in SZP_LAYOUTS:
        names = ", ".join(f'"{n}"' for n in SZP_LAYOUTS)
        raise Error(
            f"invalid argument: layout must be one of {names} (fzpack.SZP_LAYOUTS, "
            f"case-insensitive), got {layout!r}"
        )
    return name


#: The message of the ``TypeError`` every SZp front end raises when no bound is given.
BOUND_REQUIRED = (
    "an error bound is required: eb=<float> (absolute with mode=\"abs\", the default; a "
    "fraction of the value range with mode=\"noa\"); fzpack has no default bound, as SZ3 and "
    "ZFP have none"
)


def require_bound(eb):
    """``eb`` unchanged unless it is missing (``None``): then a ``TypeError`` with
    :data:`BOUND_REQUIRED`. The one rule of every SZp front end (``szp_compress``,
    ``write_fzm``, the numcodecs, Zarr and HDF5 codecs and their configurations); the value
    itself is checked by each (finite and > 0)."""
    if eb is None:
        raise TypeError(BOUND_REQUIRED)
    return eb


def _floats(arr) -> np.ndarray:
    """The input as a C-contiguous, native-endian float32/float64 array (copied only if needed)."""
    a = np.asarray(arr)
    if a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        raise Error(f"expected a float32 or float64 array, got dtype {a.dtype}")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return np.ascontiguousarray(a)


def _bytes(buf) -> np.ndarray:
    """Any buffer (bytes, bytearray, memoryview, numpy array) as a 1-D uint8 view, no copy."""
    if isinstance(buf, np.ndarray):
        a = np.ascontiguousarray(buf).reshape(-1)
        return a.view(np.uint8)
    try:
        return np.frombuffer(buf, dtype=np.uint8)
    except (TypeError, ValueError) as e:
        raise Error(f"expected a bytes-like archive, got {type(buf).__name__}: {e}") from None


def szp_compress(
    arr,
    eb: float,
    mode: str = "abs",
    block_size: int = 128,
    layout: str = "heads",
    f32_step: bool = False,
) -> bytes:
    """Compress ``arr`` into an fzpack SZp archive in the layout ``layout`` (default the
    block-head layout, as ``fzpack compress`` writes; ``szp_header(buf)["layout"]`` says which
    one a buffer holds, and :func:`szp_decompress` reads every one).

    Every decoded finite value ``y`` satisfies ``|x - y| <= eb`` (``mode="abs"``) or
    ``|x - y| <= eb * (max(x) - min(x))`` over the finite values (``mode="noa"``), or the call
    raises. NaN and infinities (missing values) come back exactly, bit for bit, at their
    positions. The archive records ``arr.shape`` (a 0-d array as one dimension of 1); the
    ``"interp"`` layout predicts along every dimension of that shape, so give the array its
    real shape (a flattened field compresses worse).

    Args:
        arr: float32 or float64 array of 1 to 8 dimensions, any layout (compressed in C order).
        eb: the error bound, finite and > 0 (relative to the value range for ``"noa"``);
            required: ``None`` or leaving it out raises ``TypeError``.
        mode: ``"abs"`` (the default) or ``"noa"`` (:data:`MODES`, case-insensitive).
        block_size: values per block, 1..=4096 (checked in every layout; ``"interp"`` has no
            blocks and ignores it).
        layout: one of :data:`SZP_LAYOUTS` (case-insensitive): ``"heads"`` (the default, the
            fastest), ``"fzgm"`` (the FZGPUModules stage layout) or ``"interp"`` (the best
            ratio, slower).
        f32_step: float32 data quantized with a step that is itself a float32 (the bound
            rounded down to 24 significant bits: the same ratio), so that microcontrollers
            without an f64 FPU decode the archive with one f32 multiply per value; every
            decoder reads it. Block layouts only; float64 data ignore it.

    Raises:
        Error: non-float input, more than 8 dimensions, a bad bound, mode, block size or
            layout, or a bound the data cannot meet.
        TypeError: no bound.
    """
    return _fzpack.szp_compress(
        _floats(arr),
        float(require_bound(eb)),
        check_mode(mode),
        int(block_size),
        check_layout(layout),
        bool(f32_step),
    )


def szp_decompress(buf) -> np.ndarray:
    """Decompress an fzpack SZp archive into a new array of the shape it records (1-D for
    archives written before the shape field); the dtype comes from the archive.

    Raises:
        Error: the archive is truncated, has a bad magic/version or inconsistent fields.
    """
    return _fzpack.szp_decompress(_bytes(buf))


def szp_header(buf) -> dict:
    """The header of an SZp archive: ``version`` (format), ``dtype`` (numpy name), ``n``,
    ``shape`` (list of dimensions; empty for archives without one), ``missing`` (whether it
    holds NaN/infinities), ``mode``, ``block_size``, ``bound``
    (the absolute bound every value meets), ``requested``, ``quant_eb``, ``value_base``,
    ``strict``, ``layout`` (one of :data:`SZP_LAYOUTS`: ``"heads"``, ``"fzgm"`` or
    ``"interp"``; an ``"interp"`` archive reports ``block_size`` 1, it has no blocks)."""
    return _fzpack.szp_header(_bytes(buf))


def pernix_compress(arr, bits: int, block_size: int = 64) -> bytes:
    """Compress ``arr`` into a PERNIX block stream (``.pnx``): ``bits``-bit codes (1..=24) in
    blocks of ``block_size`` bytes (64, 128, 256, 512 or 1024), one scale per block.

    Raises:
        Error: non-float input, NaN/inf (naming the index), bad bits or block size.
    """
    return _fzpack.pernix_compress(_floats(arr), int(bits), int(block_size))


def pernix_decompress(buf) -> np.ndarray:
    """Decompress a PERNIX block stream into a new 1-D array (dtype from the stream); the
    stream's chunk checksums are verified.

    Raises:
        Error: a truncated, corrupt or checksum-failing stream.
    """
    return _fzpack.pernix_decompress(_bytes(buf))


def pernix_block_bounds(buf) -> tuple[np.ndarray, int]:
    """``(bounds, values_per_block)``: the guaranteed absolute error bound of every block of
    a PERNIX stream, and how many values each block holds."""
    return _fzpack.pernix_block_bounds(_bytes(buf))


def write_fzm(
    arr,
    eb: float,
    mode: str = "abs",
    block_size: int = 128,
    stage_compatible: bool = False,
) -> bytes:
    """Compress ``arr`` into a single-stage FZGPUModules ``.fzm`` archive (FZM v3.1, CRCs).

    ``stage_compatible=True`` quantizes with the bound itself, as the FZGPUModules stage does
    (its guarantee then is the bound plus half an ulp); the default uses fzpack's tightened
    bound so every value meets ``eb`` exactly. The stage format holds neither a shape nor
    missing values: NaN or infinity raises :class:`Error` naming the first index (use
    :func:`szp_compress` for such data).
    """
    return _fzpack.write_fzm(
        _floats(arr),
        float(require_bound(eb)),
        check_mode(mode),
        int(block_size),
        bool(stage_compatible),
    )


def read_fzm(buf) -> np.ndarray:
    """Decompress a single-stage SZp ``.fzm`` archive into a new 1-D array.

    Raises:
        Error: bad magic/version, CRC mismatch, wrong stage layout, truncation.
    """
    return _fzpack.read_fzm(_bytes(buf))
