"""A Zarr v3 array-to-bytes codec: ``fzpack.zarr.SZp``.

Use it as the serializer of a float32/float64 array::

    import zarr, fzpack.zarr
    z = zarr.create_array("data.zarr", shape=(721, 1440), chunks=(180, 360), dtype="f4",
                          serializer=fzpack.zarr.SZp(eb=1e-3, mode="abs"))

SZp turns the array's values into bytes, so it is the ``serializer=`` (zarr's one
array-to-bytes codec), never one of the ``compressors=`` (bytes-to-bytes codecs such as zstd,
which may follow it); zarr refuses it there, and the error names ``serializer=``. From xarray::

    ds.to_zarr("data.zarr", encoding={"t": {"serializer": fzpack.zarr.SZp(eb=1e-3)}})

Missing values need nothing special: NaN and infinities are stored exactly (every finite value
within the bound), so xarray's default NaN ``fill_value`` (which zarr puts in the part of an
edge chunk outside the array) and NaN-masked fields (land in an ocean field) just work.

``layout`` picks the SZp layout (:data:`fzpack.SZP_LAYOUTS`): ``"heads"`` (the default, the
fastest) or ``"interp"`` (the best ratio: each chunk is predicted across its dimensions, so
square-ish chunks of the real dimensions compress best), or ``"fzgm"``.

The array's ``zarr.json`` then names the codec ``"fzpack_szp"`` with configuration
``{"eb", "mode", "block_size", "layout"}`` (a configuration without ``"layout"`` means
``"heads"``); fzpack registers that name with zarr's codec registry
through the ``zarr.codecs`` entry point, so ``zarr.open_array("data.zarr")`` in a fresh
process decodes the array from its metadata alone. Each chunk is one fzpack SZp archive
(``docs/szp-archive.md``); with ``mode="noa"`` the bound is relative to each chunk's range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from zarr.abc.codec import ArrayBytesCodec
from zarr.core.common import parse_named_configuration

import fzpack

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

__all__ = ["SZp", "CODEC_NAME"]

#: The codec name stored in zarr.json (and the ``zarr.codecs`` entry-point name).
CODEC_NAME = "fzpack_szp"


class _SerializerOnly(type(ArrayBytesCodec)):
    """The codec class's repr carries the hint: zarr refuses an array-to-bytes codec given in
    ``compressors=`` with ``Expected a BytesBytesCodec. Got {type(codec)} instead.``, so the
    user reads there that it belongs in ``serializer=``."""

    def __repr__(cls) -> str:
        return (
            f"<class '{cls.__module__}.{cls.__qualname__}'> (an array-to-bytes codec: pass it "
            f"as serializer={cls.__qualname__}(...), in xarray encoding={{name: {{'serializer': "
            f"{cls.__qualname__}(...)}}}}, not in compressors=)"
        )


@dataclass(frozen=True)
class SZp(ArrayBytesCodec, metaclass=_SerializerOnly):
    """SZp as a Zarr v3 array-to-bytes codec (see the module docs).

    Args:
        eb: the error bound, finite and > 0.
        mode: ``"abs"`` or ``"noa"`` (relative to each chunk's value range).
        block_size: values per SZp block, 1..=4096 (``"interp"`` ignores it).
        layout: one of :data:`fzpack.SZP_LAYOUTS` (default ``"heads"``).
    """

    is_fixed_size = False

    eb: float
    mode: str
    block_size: int
    layout: str

    def __init__(
        self, eb: float, mode: str = "abs", block_size: int = 128, layout: str = "heads"
    ) -> None:
        mode = fzpack.check_mode(mode)
        layout = fzpack.check_layout(layout)
        eb = float(fzpack.require_bound(eb))
        if not (np.isfinite(eb) and eb > 0):
            raise fzpack.Error(f"invalid argument: eb must be finite and > 0, got {eb}")
        object.__setattr__(self, "eb", eb)
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "block_size", int(block_size))
        object.__setattr__(self, "layout", layout)

    @classmethod
    def from_dict(cls, data: dict) -> Self:
        _, cfg = parse_named_configuration(data, CODEC_NAME, require_configuration=False)
        cfg = dict(cfg or {})
        # A zarr.json without the bound is refused (TypeError): there is no default bound.
        fzpack.require_bound(cfg.get("eb"))
        return cls(**cfg)

    def to_dict(self) -> dict:
        return {
            "name": CODEC_NAME,
            "configuration": {
                "eb": self.eb,
                "mode": self.mode,
                "block_size": self.block_size,
                "layout": self.layout,
            },
        }

    def validate(self, *, shape, dtype, chunk_grid) -> None:
        native = dtype.to_native_dtype() if hasattr(dtype, "to_native_dtype") else np.dtype(dtype)
        if np.dtype(native).kind != "f" or np.dtype(native).itemsize not in (4, 8):
            raise fzpack.Error(f"fzpack.zarr.SZp needs a float32 or float64 array, got {native}")

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        values = fzpack.szp_decompress(chunk_bytes.as_numpy_array())
        dtype = np.dtype(chunk_spec.dtype.to_native_dtype())
        if values.dtype != dtype.newbyteorder("="):
            raise fzpack.Error(f"chunk holds {values.dtype}, the array is {dtype}")
        if values.size != int(np.prod(chunk_spec.shape)):
            raise fzpack.Error(
                f"chunk holds {values.size} values, the chunk shape {chunk_spec.shape} needs "
                f"{int(np.prod(chunk_spec.shape))}"
            )
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(
            values.astype(dtype, copy=False).reshape(chunk_spec.shape)
        )

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        arr = chunk_array.as_numpy_array()
        out = fzpack.szp_compress(arr, self.eb, self.mode, self.block_size, self.layout)
        return chunk_spec.prototype.buffer.from_bytes(out)

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        raise NotImplementedError  # variable size
