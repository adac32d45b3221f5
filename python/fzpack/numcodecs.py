"""numcodecs codecs for fzpack: ``SZp`` (id ``"fzpack_szp"``) and ``PERNIX`` (``"fzpack_pernix"``).

Both are registered through the ``numcodecs.codecs`` entry point, so after installing fzpack::

    import numcodecs
    codec = numcodecs.get_codec({"id": "fzpack_szp", "eb": 1e-3, "mode": "abs"})

works in any process (Zarr v2 arrays, ``numcodecs.zarr3`` wrappers, xarray, ...).
``encode`` takes a float32/float64 array (any shape and layout, compressed in C order) and
returns ``bytes``; ``decode`` returns an array of the encoded shape for SZp (1-D for PERNIX), or
fills ``out``. SZp keeps NaN and infinities exactly (missing values), every finite value within
the bound. The bound ``eb`` is required: ``SZp()`` and a configuration without ``"eb"`` raise
``TypeError``. ``layout`` picks the SZp layout (:data:`fzpack.SZP_LAYOUTS`; ``"interp"`` for the
best ratio, predicting across the chunk's dimensions: each chunk's shape goes into its archive);
a configuration without it means ``"heads"``.
"""

from __future__ import annotations

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray, ndarray_copy

import fzpack

__all__ = ["SZp", "PERNIX"]


class SZp(Codec):
    """Error-bounded SZp: every decoded value is within ``eb`` (``mode="abs"``) or
    ``eb * (max - min)`` of the chunk's values (``mode="noa"``, range of each encoded buffer).

    Args:
        eb: the bound, finite and > 0.
        mode: ``"abs"`` or ``"noa"``.
        block_size: values per SZp block, 1..=4096 (``"interp"`` ignores it).
        layout: one of :data:`fzpack.SZP_LAYOUTS` (default ``"heads"``, the fastest;
            ``"interp"``, the smallest).
    """

    codec_id = "fzpack_szp"

    def __init__(self, eb: float, mode: str = "abs", block_size: int = 128, layout: str = "heads"):
        mode = fzpack.check_mode(mode)
        self.layout = fzpack.check_layout(layout)
        eb = float(fzpack.require_bound(eb))
        if not (np.isfinite(eb) and eb > 0):
            raise fzpack.Error(f"invalid argument: eb must be finite and > 0, got {eb}")
        self.eb = eb
        self.mode = mode
        self.block_size = int(block_size)

    @classmethod
    def from_config(cls, config):
        """The codec of a configuration (``numcodecs.get_codec``); one without ``eb`` raises
        ``TypeError`` (:data:`fzpack.BOUND_REQUIRED`): there is no default bound."""
        config = dict(config)
        config.pop("id", None)
        fzpack.require_bound(config.get("eb"))
        return cls(**config)

    def encode(self, buf):
        return fzpack.szp_compress(
            ensure_ndarray(buf), self.eb, self.mode, self.block_size, self.layout
        )

    def decode(self, buf, out=None):
        dec = fzpack.szp_decompress(ensure_contiguous_ndarray(buf))
        if out is not None:
            return ndarray_copy(dec, out)
        return dec

    def get_config(self):
        return {
            "id": self.codec_id,
            "eb": self.eb,
            "mode": self.mode,
            "block_size": self.block_size,
            "layout": self.layout,
        }

    def __repr__(self):
        return (
            f"SZp(eb={self.eb!r}, mode={self.mode!r}, block_size={self.block_size}, "
            f"layout={self.layout!r})"
        )


class PERNIX(Codec):
    """PERNIX block packing: ``bits``-bit codes (1..=24) in ``block_size``-byte blocks
    (64/128/256/512/1024), one scale per block; the error of each value is at most half its
    block's step (``max|x| / (2**(bits-1) - 1)``) plus rounding."""

    codec_id = "fzpack_pernix"

    def __init__(self, bits: int, block_size: int = 64):
        self.bits = int(bits)
        self.block_size = int(block_size)
        if not 1 <= self.bits <= 24:
            raise fzpack.Error(f"invalid argument: bits must be 1..=24, got {self.bits}")
        if self.block_size not in (64, 128, 256, 512, 1024):
            raise fzpack.Error(
                f"invalid argument: block_size must be 64, 128, 256, 512 or 1024, got {self.block_size}"
            )

    def encode(self, buf):
        return fzpack.pernix_compress(ensure_ndarray(buf), self.bits, self.block_size)

    def decode(self, buf, out=None):
        dec = fzpack.pernix_decompress(ensure_contiguous_ndarray(buf))
        if out is not None:
            return ndarray_copy(dec, out)
        return dec

    def get_config(self):
        return {"id": self.codec_id, "bits": self.bits, "block_size": self.block_size}

    def __repr__(self):
        return f"PERNIX(bits={self.bits}, block_size={self.block_size})"
