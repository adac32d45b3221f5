# The native module; use the `fzpack` package (its functions normalize their inputs first).
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

class Error(ValueError): ...

SZP_LAYOUTS: tuple[str, ...]

_U8 = npt.NDArray[np.uint8]
_F = npt.NDArray[np.float32] | npt.NDArray[np.float64]

def szp_compress(
    arr: _F,
    eb: float,
    mode: str = "abs",
    block_size: int = 128,
    layout: str = "heads",
    f32_step: bool = False,
) -> bytes: ...
def szp_decompress(buf: _U8) -> _F: ...
def szp_header(buf: _U8) -> dict[str, Any]: ...
def pernix_compress(arr: _F, bits: int, block_size: int = 64) -> bytes: ...
def pernix_decompress(buf: _U8) -> _F: ...
def pernix_block_bounds(buf: _U8) -> tuple[npt.NDArray[np.float64], int]: ...
def write_fzm(
    arr: _F, eb: float, mode: str = "abs", block_size: int = 128, stage_compatible: bool = False
) -> bytes: ...
def read_fzm(buf: _U8) -> _F: ...
