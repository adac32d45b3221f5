#!/usr/bin/env bash
# The Python package (python/) and the HDF5 filter plugin (hdf5/), end to end on a fresh Debian
# machine: installs what is missing (Debian: hdf5-tools for h5dump, libhdf5-dev, python3-venv /
# python3-dev; PyPI: maturin into a build venv under target/), checks rustfmt and clippy on both
# separate cargo workspaces (the root `cargo ... --workspace` steps do not see them), runs the
# plugin's unit tests, builds the abi3 wheel with `maturin build --release` (the extension module
# plus the bundled HDF5 plugin), then installs that wheel and the test dependencies (numpy,
# numcodecs, zarr 3, h5py, xarray, h5netcdf, netCDF4, dask, pytest) into a FRESH venv and runs the
# pytest suite and a short `python -m fzpack.bench --quick` there, under `env -i` with PATH =
# the venv + the system's programs minus cargo/rust*: no Rust toolchain, nothing of the build
# environment, as a user's `pip install fzpack-*.whl` would. FZPACK_REQUIRE_TOOLS=1 makes a missing h5dump, h5py,
# xarray, netCDF4... fail instead of skipping.
#
# Idempotent: a second run reuses the build venv (FZPACK_FRESH_VENV=1, or a venv without pip,
# e.g. half made by an interrupted run, makes a new one) and the cargo caches; the test venv is
# always made anew. Exits non-zero on any failure.
# Env: FZPACK_VENV (build venv, default target/python-venv), FZPACK_WHEEL_VENV (test venv,
# default target/python-wheel-venv), CARGO_TARGET_DIR (default target/python), PYTHON (default
# python3), FZPACK_SHARED (passed on to the tests: the folder of the real fields).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
START=$SECONDS
step() { printf '\n== python.sh [%ds]: %s\n' "$((SECONDS - START))" "$*"; }

PYTHON=${PYTHON:-python3}
VENV=${FZPACK_VENV:-$ROOT/target/python-venv}
WVENV=${FZPACK_WHEEL_VENV:-$ROOT/target/python-wheel-venv}
WHEELS=$ROOT/target/python-wheels
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

step "build venv $VENV (maturin)"
if [ "${FZPACK_FRESH_VENV:-0}" != 0 ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
"$VENV/bin/python" -m pip install -q 'maturin>=1.5,<2'
"$VENV/bin/maturin" --version

step "rustfmt (python/, hdf5/: their own cargo workspaces)"
cargo fmt --manifest-path python/Cargo.toml --check
cargo fmt --manifest-path hdf5/Cargo.toml --check

step "clippy -D warnings (python/, hdf5/)"
(cd hdf5 && cargo clippy -q --all-targets --target-dir "$PLUGIN_TARGET" -- -D warnings)
# The extension's clippy run needs no plugin build; PyO3 finds the venv's interpreter.
(cd python && FZPACK_SKIP_HDF5_PLUGIN=1 PYO3_PYTHON="$VENV/bin/python" cargo clippy -q --all-targets -- -D warnings)

step "HDF5 plugin unit tests (cd hdf5 && cargo test --release)"
(cd hdf5 && cargo test -q --release --target-dir "$PLUGIN_TARGET")

step "maturin build --release (the abi3 wheel: extension module + bundled HDF5 plugin)"
rm -rf "$WHEELS"
"$VENV/bin/maturin" build --release -q -m python/Cargo.toml -i "$VENV/bin/python" --out "$WHEELS"
WHEEL=$(ls "$WHEELS"/fzpack-*-abi3-*.whl)
echo "$WHEEL ($(du -k "$WHEEL" | cut -f1) KiB)"
"$VENV/bin/python" - "$WHEEL" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert "fzpack/_plugins/libfzpack_hdf5.so" in names, f"the wheel lacks the HDF5 plugin: {names}"
EOF

step "fresh venv $WVENV: pip install the wheel + test deps, with no cargo on PATH"
rm -rf "$WVENV"
"$PYTHON" -m venv "$WVENV"
# The system's programs without the Rust toolchain (Debian images may carry /usr/bin/cargo):
# links to /usr/bin and /bin minus cargo*, rust*.
SYSBIN=$WVENV/sysbin
mkdir -p "$SYSBIN"
for f in /usr/bin/* /bin/*; do
  n=${f##*/}
  case $n in cargo* | rust*) continue ;; esac
  [ -e "$SYSBIN/$n" ] || ln -s "$f" "$SYSBIN/$n"
done
# Only what pip needs to reach its index (PIP_*, proxies, CA bundle) and the tests' own
# FZPACK_SHARED pass into the clean environment.
clean=(HOME="$HOME" PATH="$WVENV/bin:$SYSBIN" LANG=C.UTF-8 FZPACK_REQUIRE_TOOLS=1)
for v in $(compgen -e); do
  case $v in
  PIP_* | http_proxy | https_proxy | no_proxy | HTTP_PROXY | HTTPS_PROXY | NO_PROXY | SSL_CERT_* | REQUESTS_CA_BUNDLE | FZPACK_SHARED)
    clean+=("$v=${!v}") ;;
  esac
done
inwheel() { env -i "${clean[@]}" "$@"; }
if inwheel bash -c 'command -v cargo rustc'; then
  echo "cargo/rustc is reachable in the clean environment" >&2
  exit 1
fi
inwheel "$WVENV/bin/python" -m pip install -q "$WHEEL" 'numcodecs>=0.12' 'zarr>=3' 'h5py>=3.8' \
  xarray h5netcdf netCDF4 dask pytest crc32c
inwheel "$WVENV/bin/python" - <<'EOF'
import sys, os, importlib.metadata as m, fzpack, fzpack.hdf5 as h
print(f"Python {sys.version.split()[0]}:", ", ".join(f"{p} {m.version(p)}" for p in
      ("fzpack", "numpy", "numcodecs", "zarr", "h5py", "xarray", "h5netcdf", "netCDF4", "dask",
       "pytest")))
where = os.path.dirname(fzpack.__file__)
print("fzpack", fzpack.__version__, "at", where, "plugin:", os.listdir(h.PLUGIN_PATH))
assert where.startswith(sys.prefix), (where, sys.prefix)  # the wheel's copy, not the tree
EOF

step "pytest python/tests against the wheel (FZPACK_REQUIRE_TOOLS=1: a missing tool fails)"
inwheel "$WVENV/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests

step "python -m fzpack.bench --quick (the wheel)"
inwheel "$WVENV/bin/python" -m fzpack.bench --quick

step "ok ($((SECONDS - START)) s)"
