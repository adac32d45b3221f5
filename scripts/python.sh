#!/usr/bin/env bash
# The Python package (python/) and the HDF5 filter plugin (hdf5/), end to end on a fresh Debian
# machine: installs what is missing (Debian: hdf5-tools for h5dump, libhdf5-dev, python3-venv /
# python3-dev; PyPI into a venv under target/: maturin, numpy, numcodecs, zarr 3, h5py, pytest),
# checks rustfmt and clippy on both separate cargo workspaces (the root `cargo ... --workspace`
# steps do not see them), runs the plugin's unit tests, builds and installs the package with
# `pip install ./python`, runs the pytest suite with FZPACK_REQUIRE_TOOLS=1 (a missing h5dump or
# h5py fails instead of skipping), then a short `python -m fzpack.bench --quick`.
#
# Idempotent: a second run reuses the venv (FZPACK_FRESH_VENV=1 makes a new one) and the cargo
# caches, and reinstalls the package from the tree. Exits non-zero on any failure.
# Env: FZPACK_VENV (default target/python-venv), CARGO_TARGET_DIR (default target/python),
# PYTHON (default python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
START=$SECONDS
step() { printf '\n== python.sh [%ds]: %s\n' "$((SECONDS - START))" "$*"; }

PYTHON=${PYTHON:-python3}
VENV=${FZPACK_VENV:-$ROOT/target/python-venv}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target/python}
# The plugin's own target dir: build.rs builds the plugin there, the unit tests reuse it.
PLUGIN_TARGET=$ROOT/python/target/hdf5-plugin
export CARGO_TERM_COLOR=never

step "system packages (hdf5-tools, libhdf5-dev, python3-venv, python3-dev)"
need=()
command -v h5dump >/dev/null || need+=(hdf5-tools)
dpkg -s libhdf5-dev >/dev/null 2>&1 || need+=(libhdf5-dev)
command -v "$PYTHON" >/dev/null || need+=(python3)
if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then need+=(python3-venv); fi
if ! "$PYTHON" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' >/dev/null 2>&1; then
  need+=(python3-dev)
fi
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "all present"
fi
h5dump --version

step "Python venv $VENV and the PyPI packages"
if [ "${FZPACK_FRESH_VENV:-0}" != 0 ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
export PATH="$VENV/bin:$PATH" # maturin's build backend runs the `maturin` on PATH
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
"$VENV/bin/python" -m pip install -q 'maturin>=1.5,<2' 'numpy>=1.24' 'numcodecs>=0.12' 'zarr>=3' 'h5py>=3.8' pytest
"$VENV/bin/python" - <<'EOF'
import sys, importlib.metadata as m
print(f"Python {sys.version.split()[0]}:", ", ".join(f"{p} {m.version(p)}" for p in
      ("maturin", "numpy", "numcodecs", "zarr", "h5py", "pytest")))
EOF

step "rustfmt (python/, hdf5/: their own cargo workspaces)"
cargo fmt --manifest-path python/Cargo.toml --check
cargo fmt --manifest-path hdf5/Cargo.toml --check

step "clippy -D warnings (python/, hdf5/)"
(cd hdf5 && cargo clippy -q --all-targets --target-dir "$PLUGIN_TARGET" -- -D warnings)
# The extension's clippy run needs no plugin build; PyO3 finds the venv's interpreter.
(cd python && FZPACK_SKIP_HDF5_PLUGIN=1 PYO3_PYTHON="$VENV/bin/python" cargo clippy -q --all-targets -- -D warnings)

step "HDF5 plugin unit tests (cd hdf5 && cargo test --release)"
(cd hdf5 && cargo test -q --release --target-dir "$PLUGIN_TARGET")

step "pip install ./python (maturin: the extension module + the bundled HDF5 plugin)"
"$VENV/bin/python" -m pip install -q --no-build-isolation --force-reinstall --no-deps ./python
"$VENV/bin/python" -c 'import fzpack, fzpack.hdf5 as h, os; print("fzpack", fzpack.__version__, "at", os.path.dirname(fzpack.__file__)); print("plugin:", os.listdir(h.PLUGIN_PATH))'

step "pytest python/tests (FZPACK_REQUIRE_TOOLS=1: missing h5dump/h5py/zarr fails)"
FZPACK_REQUIRE_TOOLS=1 "$VENV/bin/pytest" -q -rs python/tests

step "python -m fzpack.bench --quick"
"$VENV/bin/python" -m fzpack.bench --quick

step "ok ($((SECONDS - START)) s)"
