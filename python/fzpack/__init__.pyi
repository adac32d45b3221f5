from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

class Error(ValueError):
    """Any fzpack failure; the message is the Rust core's."""

MODES: tuple[str, ...]
SZP_LAYOUTS: tuple[str, ...]

BOUND_REQUIRED: str

def check_mode(mode: object) -> str: ...
def check_layout(layout: object) -> str: ...
def require_bound(eb: object) -> object: ...

_Floats = npt.ArrayLike
_Buffer = bytes | bytearray | memoryview | npt.NDArray[Any]

def szp_compress(
    arr: _Floats,
    eb: float,
    mode: str = "abs",
    block_size: int = 128,
    layout: str = "heads",
    f32_step: bool = False,
) -> bytes: ...
def szp_decompress(buf: _Buffer) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
def szp_header(buf: _Buffer) -> dict[str, Any]: ...
def pernix_compress(arr: _Floats, bits: int, block_size: int = 64) -> bytes: ...
def pernix_decompress(buf: _Buffer) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
def pernix_block_bounds(buf: _Buffer) -> tuple[npt.NDArray[np.float64], int]: ...
def write_fzm(
    arr: _Floats,
    eb: float,
    mode: str = "abs",
    block_size: int = 128,
    stage_compatible: bool = False,
) -> bytes: ...
def read_fzm(buf: _Buffer) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
