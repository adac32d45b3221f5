"""The numpy functions: bound on every element, dtypes, layouts, and every error case."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import fzpack
from helpers import REPO, ALL_FIELDS, FINITE_FIELDS, NONFINITE_FIELDS, assert_bound, max_err

IDS = [n for n, _ in FINITE_FIELDS]


def value_range(a: np.ndarray) -> float:
    a = a.astype(np.float64)
    return float(a.max() - a.min())


# ---------------------------------------------------------------------------------------------
# Bound on every element
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=IDS)
@pytest.mark.parametrize("rel", [1e-2, 1e-4])
def test_szp_abs_bound_every_element(name, x, rel):
    eb = rel * value_range(x) or rel
    buf = fzpack.szp_compress(x, eb)
    assert isinstance(buf, bytes)
    y = fzpack.szp_decompress(buf)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert_bound(x, y, eb, f"{name} abs eb={eb}")
    h = fzpack.szp_header(buf)
    assert h["n"] == x.size and h["mode"] == "abs" and np.dtype(h["dtype"]) == x.dtype
    # Format 3: the archive records the shape (and would hold missing values; none here).
    assert h["version"] == 3 and h["shape"] == list(x.shape) and h["missing"] is False
    assert h["bound"] <= eb
    # Archives written from Python use the block-head layout (the better ratio).
    assert h["version"] == 1 or h["layout"] == "heads"


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=IDS)
def test_szp_noa_bound_every_element(name, x):
    if value_range(x) == 0:
        with pytest.raises(fzpack.Error, match="constant field"):
            fzpack.szp_compress(x, 1e-3, mode="noa")
        return
    buf = fzpack.szp_compress(x, 1e-3, mode="noa", block_size=64)
    h = fzpack.szp_header(buf)
    assert h["mode"] == "noa" and h["block_size"] == 64
    # The archive's absolute bound is the requested fraction of the value range.
    assert h["bound"] <= 1e-3 * value_range(x) * (1 + 1e-12)
    assert_bound(x, fzpack.szp_decompress(buf), h["bound"], f"{name} noa")


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=IDS)
def test_szp_as_float64_bound_every_element(name, x):
    x = x.astype(np.float64)
    eb = 1e-6 * value_range(x) or 1e-6
    y = fzpack.szp_decompress(fzpack.szp_compress(x, eb))
    assert y.dtype == np.float64
    assert_bound(x, y, eb, f"{name} as f64")


@pytest.mark.parametrize("name,x", FINITE_FIELDS, ids=IDS)
@pytest.mark.parametrize("bits", [8, 16])
def test_pernix_block_bound_every_element(name, x, bits):
    buf = fzpack.pernix_compress(x, bits, block_size=128)
    y = fzpack.pernix_decompress(buf)
    assert y.dtype == x.dtype and y.size == x.size
    bounds, per_block = fzpack.pernix_block_bounds(buf)
    assert bounds.size == -(-x.size // per_block)
    # Each value is within its own block's guaranteed bound.
    assert_bound(x, y, np.repeat(bounds, per_block)[: x.size], f"{name} pernix {bits}")


@pytest.mark.parametrize("name,x", FINITE_FIELDS[:3], ids=IDS[:3])
def test_fzm_bound_every_element(name, x):
    eb = 1e-3 * value_range(x) or 1e-3
    buf = fzpack.write_fzm(x, eb)
    y = fzpack.read_fzm(buf)
    assert y.dtype == x.dtype
    assert_bound(x, y, eb, f"{name} fzm")


def test_bound_is_tight_not_trivial():
    # A check that could fail: the codec must actually lose information at a coarse bound
    # (so the bound checks above are not comparing identical arrays) and compress.
    x = np.sin(np.linspace(0, 60, 100_000)).astype(np.float32) * 100
    buf = fzpack.szp_compress(x, 0.5)
    y = fzpack.szp_decompress(buf)
    assert 0.1 < max_err(x, y) <= 0.5
    assert len(buf) < x.nbytes / 4


def test_large_input_parallel_path_matches_serial_result():
    # Large inputs go through the rayon driver; its archive decodes within the bound.
    x = np.cumsum(np.random.default_rng(1).normal(size=3_000_000)).astype(np.float32)
    buf = fzpack.szp_compress(x, 0.01)
    assert_bound(x, fzpack.szp_decompress(buf), 0.01, "3M values")


def test_threads_share_the_module():
    # The GIL is released while compressing: several Python threads at once give the
    # same archives as one thread.
    x = np.cumsum(np.random.default_rng(2).normal(size=400_000))
    want = fzpack.szp_compress(x, 1e-3)
    got: list[bytes] = []
    ts = [threading.Thread(target=lambda: got.append(fzpack.szp_compress(x, 1e-3))) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == [want] * 4


# ---------------------------------------------------------------------------------------------
# Dtypes and layouts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_and_shapes(dtype):
    x = np.linspace(-5, 5, 2 * 3 * 4 * 5, dtype=dtype).reshape(2, 3, 4, 5)
    for f, args in [
        (fzpack.szp_compress, (1e-4,)),
        (fzpack.pernix_compress, (20,)),
        (fzpack.write_fzm, (1e-4,)),
    ]:
        buf = f(x, *args)
        dec = {fzpack.szp_compress: fzpack.szp_decompress, fzpack.pernix_compress: fzpack.pernix_decompress,
               fzpack.write_fzm: fzpack.read_fzm}[f]
        y = dec(buf)
        # SZp archives record the shape; .pnx and .fzm hold a flat run of values.
        want = x.shape if f is fzpack.szp_compress else (x.size,)
        assert y.dtype == dtype and y.shape == want
        assert max_err(x, y) <= 1e-3


def test_contiguous_native_input_is_not_copied():
    x = np.arange(100, dtype=np.float32)
    assert fzpack._floats(x) is x  # read in place by the Rust code
    assert fzpack._floats(x[::2]).flags.c_contiguous  # a strided view is copied once


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a[:, ::3],  # strided
        lambda a: a.T,  # transposed (Fortran order)
        lambda a: np.asfortranarray(a),
        lambda a: a[::-1, ::-1],  # negative strides
        lambda a: a.astype(a.dtype.newbyteorder(">")),  # big-endian
    ],
    ids=["strided", "transposed", "fortran", "reversed", "big-endian"],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_input_is_copied_once_in_c_order(make, dtype):
    base = np.random.default_rng(3).normal(size=(60, 90)).astype(dtype)
    v = make(base)
    c = np.ascontiguousarray(v, dtype=np.dtype(dtype))
    assert not (v.flags.c_contiguous and v.dtype.isnative)
    assert fzpack.szp_compress(v, 1e-3) == fzpack.szp_compress(c, 1e-3)
    assert fzpack.pernix_compress(v, 12) == fzpack.pernix_compress(c, 12)
    y = fzpack.szp_decompress(fzpack.szp_compress(v, 1e-3))
    assert_bound(c, y, 1e-3, "non-contiguous")
    assert y.dtype == np.dtype(dtype)  # native order out


def test_read_only_and_buffer_inputs():
    x = np.linspace(0, 1, 1000)
    x.setflags(write=False)
    buf = fzpack.szp_compress(x, 1e-6)
    for b in (buf, bytearray(buf), memoryview(buf), np.frombuffer(buf, np.uint8)):
        assert_bound(x, fzpack.szp_decompress(b), 1e-6, type(b).__name__)


def test_empty_input():
    x = np.zeros(0, dtype=np.float32)
    try:
        buf = fzpack.szp_compress(x, 1e-3)
    except fzpack.Error as e:  # refusing empty input is allowed, crashing is not
        assert str(e)
        return
    y = fzpack.szp_decompress(buf)
    assert y.size == 0 and y.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Error cases: fzpack.Error (a ValueError) with the core's message, never a crash
# ---------------------------------------------------------------------------------------------


def test_error_is_a_value_error():
    assert issubclass(fzpack.Error, ValueError)
    assert fzpack.Error is fzpack._fzpack.Error


NON_FLOATS = [
    np.arange(10, dtype=np.int32),
    np.arange(10, dtype=np.int64),
    np.arange(10, dtype=np.uint8),
    np.ones(10, dtype=np.float16),
    np.ones(10, dtype=np.complex64),
    np.ones(10, dtype=bool),
    np.array(["a", "b"]),
    np.array([1.0, None], dtype=object),
    [1, 2, 3],
    "not an array",
]


@pytest.mark.parametrize("bad", NON_FLOATS, ids=lambda b: getattr(getattr(b, "dtype", None), "name", type(b).__name__))
def test_non_float_input(bad):
    for f, args in [(fzpack.szp_compress, (1e-3,)), (fzpack.pernix_compress, (8,)), (fzpack.write_fzm, (1e-3,))]:
        with pytest.raises(fzpack.Error, match="float32 or float64"):
            f(bad, *args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("index", [0, 1, 127, 128, 4999])
def test_non_finite_values(dtype, bad, index):
    # SZp stores them exactly (test_missing.py has the rest); PERNIX and .fzm cannot hold
    # them and name the first one's index.
    x = np.linspace(-1, 1, 5000, dtype=dtype)
    x[index] = bad
    for mode in ("abs", "noa"):
        buf = fzpack.szp_compress(x, 1e-3, mode)
        assert fzpack.szp_header(buf)["missing_count"] == 1
        y = fzpack.szp_decompress(buf)
        assert y[index].tobytes() == x[index].tobytes()
        assert_bound(np.delete(x, index), np.delete(y, index), 1e-3 * (2 if mode == "noa" else 1))
    msg = f"non-finite value \\(NaN or infinity\\) at index {index}\\b"
    for f, args in [(fzpack.pernix_compress, (8,)), (fzpack.write_fzm, (1e-3,))]:
        with pytest.raises(fzpack.Error, match=msg):
            f(x, *args)


def test_non_finite_index_is_the_c_order_index():
    x = np.zeros((40, 50), dtype=np.float32)
    x[7, 3] = np.nan
    with pytest.raises(fzpack.Error, match=f"at index {7 * 50 + 3}\\b"):
        fzpack.write_fzm(x, 1e-3)
    # A transposed view is compressed in its own C order.
    with pytest.raises(fzpack.Error, match=f"at index {3 * 40 + 7}\\b"):
        fzpack.pernix_compress(x.T, 8)
    y = fzpack.szp_decompress(fzpack.szp_compress(x.T, 1e-3))
    assert y.shape == (50, 40) and np.isnan(y[3, 7]) and np.isnan(y).sum() == 1


@pytest.mark.parametrize("name,x", NONFINITE_FIELDS, ids=[n for n, _ in NONFINITE_FIELDS])
def test_real_field_with_nan(name, x):
    first = int(np.flatnonzero(~np.isfinite(x.reshape(-1)))[0])
    with pytest.raises(fzpack.Error, match=f"at index {first}\\b"):
        fzpack.pernix_compress(x, 12)
    eb = 1e-2
    y = fzpack.szp_decompress(fzpack.szp_compress(x, eb))
    assert y.shape == x.shape
    np.testing.assert_array_equal(np.isnan(y), np.isnan(x))
    ok = np.isfinite(x)
    assert_bound(x[ok], y[ok], eb, name)


@pytest.mark.parametrize("eb", [0.0, -1e-3, -0.0, np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("mode", ["abs", "noa"])
def test_bad_bound(eb, mode):
    x = np.linspace(0, 1, 100)
    with pytest.raises(fzpack.Error, match="error bound"):
        fzpack.szp_compress(x, eb, mode)
    with pytest.raises(fzpack.Error, match="error bound"):
        fzpack.write_fzm(x, eb, mode)


def test_bound_below_float_precision():
    x = np.linspace(1000, 2000, 1000, dtype=np.float32)
    with pytest.raises(fzpack.Error, match="below the float precision"):
        fzpack.szp_compress(x, 1e-12)


def test_one_mode_rule_for_compress_and_fzm():
    """``szp_compress`` and ``write_fzm`` (and the Rust entry points behind them) accept exactly
    ``fzpack.MODES``, case-insensitive; ``"rel"`` is not a silent alias of ``"noa"``."""
    x = np.linspace(0, 1, 100)
    assert fzpack.MODES == ("abs", "noa")
    for mode in ("rel", "pw_rel", "", "absolute"):
        for f in (fzpack.szp_compress, fzpack.write_fzm, fzpack._fzpack.szp_compress):
            with pytest.raises(fzpack.Error, match='mode must be "abs" or "noa"') as e:
                f(x, 1e-3, mode)
            assert repr(mode) in str(e.value) or f'"{mode}"' in str(e.value)
        with pytest.raises(ValueError, match='"noa" is relative to the value range'):
            fzpack.check_mode(mode)
    for mode, want in (("ABS", "abs"), ("Noa", "noa")):
        assert fzpack.check_mode(mode) == want
        assert fzpack.szp_header(fzpack.szp_compress(x, 1e-3, mode))["mode"] == want
        assert fzpack.read_fzm(fzpack.write_fzm(x, 1e-3, mode)).size == x.size


def test_bad_mode_block_size_bits():
    x = np.linspace(0, 1, 100)
    with pytest.raises(fzpack.Error, match="mode"):
        fzpack.szp_compress(x, 1e-3, mode="pw_rel")
    for bs in (0, 4097):
        with pytest.raises(fzpack.Error, match="block size"):
            fzpack.szp_compress(x, 1e-3, block_size=bs)
    for bits in (0, 25, 1000):
        with pytest.raises(fzpack.Error, match="bits"):
            fzpack.pernix_compress(x, bits)
    with pytest.raises(fzpack.Error):
        fzpack.pernix_compress(x, 8, block_size=100)
    with pytest.raises((fzpack.Error, OverflowError)):
        fzpack.szp_compress(x, 1e-3, block_size=-1)


def test_noa_constant_field():
    with pytest.raises(fzpack.Error, match="constant field"):
        fzpack.szp_compress(np.full(100, 3.0), 1e-3, "noa")


GARBAGE = [b"", b"\x00", b"SZp", b"\xff" * 64, bytes(range(256)) * 4]


@pytest.mark.parametrize("g", GARBAGE, ids=lambda g: f"{len(g)}B")
def test_garbage_archives(g):
    for dec in (fzpack.szp_decompress, fzpack.pernix_decompress, fzpack.read_fzm, fzpack.szp_header):
        with pytest.raises(fzpack.Error):
            dec(g)


def test_not_a_buffer():
    for bad in ("text", 5, None, [1, 2]):
        with pytest.raises((fzpack.Error, TypeError)):
            fzpack.szp_decompress(bad)


def _archives():
    x = np.cumsum(np.random.default_rng(4).normal(size=3000)).astype(np.float32)
    return x, [
        ("szp", fzpack.szp_compress(x, 1e-2), fzpack.szp_decompress),
        ("pernix", fzpack.pernix_compress(x, 10), fzpack.pernix_decompress),
        ("fzm", fzpack.write_fzm(x, 1e-2), fzpack.read_fzm),
    ]


def test_truncated_archives_fail_with_the_core_message():
    x, archives = _archives()
    for name, buf, dec in archives:
        for cut in list(range(0, 80)) + list(range(len(buf) - 40, len(buf))):
            with pytest.raises(fzpack.Error) as e:
                dec(buf[:cut])
            assert str(e.value), (name, cut)
        # and one trailing byte too many
        with pytest.raises(fzpack.Error):
            dec(buf + b"\x00")
    # Format 3 ends with its extension's footer (length, CRC-32): one byte short reads as a
    # corrupt footer. Format 2 (no extension) says truncated.
    with pytest.raises(fzpack.Error, match="truncated|checksum mismatch in the extension"):
        fzpack.szp_decompress(archives[0][1][:-1])
    v2 = (REPO / "tests" / "golden" / "szp" / "heads_abs_f32_bs128.v2.szp").read_bytes()
    with pytest.raises(fzpack.Error, match="truncated"):
        fzpack.szp_decompress(v2[:-1])


def test_wrong_container_fails():
    x, archives = _archives()
    (_, szp, _), (_, pnx, _), (_, fzm, _) = archives
    with pytest.raises(fzpack.Error, match="magic"):
        fzpack.szp_decompress(pnx)
    with pytest.raises(fzpack.Error):
        fzpack.pernix_decompress(szp)
    with pytest.raises(fzpack.Error):
        fzpack.read_fzm(szp)


def test_bit_flips_never_crash_and_checksummed_ones_fail():
    x, archives = _archives()
    for name, buf, dec in archives:
        failed = 0
        positions = sorted(set(range(0, min(len(buf), 96))) | set(range(96, len(buf), 37)))
        for i in positions:
            for bit in (0, 7):
                bad = bytearray(buf)
                bad[i] ^= 1 << bit
                try:
                    y = dec(bytes(bad))
                except fzpack.Error as e:
                    assert str(e)
                    failed += 1
                    continue
                # A flip the container cannot detect still yields an array of the stored type.
                assert isinstance(y, np.ndarray) and y.dtype in (np.float32, np.float64)
        # CRC-protected containers (.pnx v2, .fzm, SZp archive v2): every flip fails. The SZp
        # v1 archive has no checksum: some flips must be caught (header fields), none crash.
        if name in ("pernix", "fzm") or fzpack.szp_header(buf)["version"] >= 2:
            assert failed == 2 * len(positions), name
        else:
            assert failed > 0, name


def test_header_flip_messages_come_from_the_core():
    x, archives = _archives()
    buf = bytearray(archives[0][1])
    buf[0] ^= 0xFF
    with pytest.raises(fzpack.Error, match="^SZp: not an fzpack SZp archive \\(bad magic\\)$"):
        fzpack.szp_decompress(bytes(buf))


# ---------------------------------------------------------------------------------------------
# Shapes: the archive records the array's dimensions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(7,), (30, 41), (2, 3, 4, 5), (1, 2, 1, 3, 1, 2, 1, 2), (3, 1), (0, 5)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shape_round_trip(shape, dtype):
    x = np.sin(np.arange(int(np.prod(shape))) / 7.0).astype(dtype).reshape(shape)
    buf = fzpack.szp_compress(x, 1e-4)
    assert fzpack.szp_header(buf)["shape"] == list(shape)
    y = fzpack.szp_decompress(buf)
    assert y.shape == shape and y.dtype == dtype and y.flags.c_contiguous
    assert_bound(x, y, 1e-4, str(shape))


def test_zero_dimensional_input_is_one_value():
    buf = fzpack.szp_compress(np.float64(2.5), 1e-3)
    assert fzpack.szp_header(buf)["shape"] == [1]
    y = fzpack.szp_decompress(buf)
    assert y.shape == (1,) and abs(y[0] - 2.5) <= 1e-3


@pytest.mark.parametrize("order", ["fortran", "transposed", "strided"])
def test_non_c_order_input_keeps_values_and_shape(order):
    base = np.cumsum(np.random.default_rng(8).normal(size=(40, 30, 6)), axis=1).astype(np.float32)
    v = {"fortran": np.asfortranarray(base), "transposed": base.transpose(2, 0, 1),
         "strided": base[::2, :, ::-1]}[order]
    y = fzpack.szp_decompress(fzpack.szp_compress(v, 1e-3))
    assert y.shape == v.shape
    assert_bound(v, y, 1e-3, order)  # element by element in index space, whatever the layout
    assert np.abs(np.asarray(y, dtype=np.float64) - v).max() <= 1e-3


def test_more_dimensions_than_an_archive_holds():
    x = np.zeros((1,) * 9 + (4,), dtype=np.float32)
    with pytest.raises(fzpack.Error, match="dimensions"):
        fzpack.szp_compress(x, 1e-3)
    # the caller's way out: compress it flat, reshape on the way back
    assert fzpack.szp_decompress(fzpack.szp_compress(x.reshape(-1), 1e-3)).shape == (4,)


def test_archive_without_a_shape_decodes_flat():
    # A format-2 archive (before the shape field): a 1-D array, as it was written.
    p = REPO / "tests" / "golden" / "szp" / "heads_abs_f32_bs128.v2.szp"
    buf = p.read_bytes()
    h = fzpack.szp_header(buf)
    assert h["version"] == 2 and h["shape"] == [] and h["missing"] is False
    y = fzpack.szp_decompress(buf)
    assert y.ndim == 1 and y.size == h["n"]


def test_f32_step_records_a_float32_step_at_the_same_size():
    x = (np.sin(np.arange(20_000) * 0.01) * 40).astype(np.float32)
    plain = fzpack.szp_compress(x, 1e-3)
    step = fzpack.szp_compress(x, 1e-3, f32_step=True)
    q, p = fzpack.szp_header(step)["quant_eb"], fzpack.szp_header(plain)["quant_eb"]
    assert float(np.float32(2 * q)) == 2 * q
    assert p * (1 - 2.0**-23) < q < p
    assert abs(len(step) - len(plain)) <= len(plain) // 1000
    y = fzpack.szp_decompress(step)
    assert np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))) <= 1e-3
    # float64 data ignore it; the interpolation layout refuses it
    x64 = x.astype(np.float64)
    assert fzpack.szp_compress(x64, 1e-3, f32_step=True) == fzpack.szp_compress(x64, 1e-3)
    with pytest.raises(fzpack.Error, match="f32_step"):
        fzpack.szp_compress(x, 1e-3, layout="interp", f32_step=True)
