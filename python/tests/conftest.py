"""pytest hooks and fixtures; the helpers live in helpers.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

try:
    import fzpack
except ImportError as e:  # the source tree's fzpack/ has no compiled _fzpack
    raise ImportError(
        f"{e}: install the package first (pip install ./python, or scripts/python.sh) and run "
        "pytest from outside python/ (not `python -m pytest` inside it)"
    ) from e

from helpers import data_dir


def pytest_report_header(config):
    d = data_dir()
    src = f"real fields from {d}" if d else "generated fields (no shared/data found)"
    return [f"fzpack {fzpack.__version__} from {Path(fzpack.__file__).parent}; {src}"]


@pytest.fixture
def small_field() -> np.ndarray:
    """A small smooth 2-D float32 field (3 zarr/HDF5 chunks in each direction)."""
    y, x = np.mgrid[0:90, 0:120].astype(np.float64)
    return (np.sin(x / 9.0) * np.cos(y / 7.0) * 10.0 + 0.001 * x * y).astype(np.float32)


