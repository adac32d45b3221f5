#!/usr/bin/env bash
# Miri, the Rust undefined-behaviour checker, over the portable code: bounded in time, fails
# on any UB (out-of-bounds or misaligned access, use after free, invalid values, aliasing
# violations, data races, memory leaks) or any failed assertion.
#   scripts/miri.sh [--asan] [BUDGET_SECONDS]     (default 480: the whole run, builds included)
# With --asan, afterwards (420 s more budget): the cross-path tests, which run every SIMD kernel
# this CPU has against the scalar reference, built with AddressSanitizer over a rebuilt
# standard library (-Zbuild-std, needs rust-src; target/asan): ~3.5 min fresh on 2 cores.
#
# What it runs (each with the `force-scalar` feature; under Miri `CpuFeatures::detect()` also
# reports no SIMD features, so `Auto` and `Path::best()` resolve to the portable paths):
#   1. fzpack-core's unit tests (--lib): CPU detection, CRC-32, quantizer rounding, PERNIX
#      scalar ties, the `.fzm` CRC; tests too heavy for Miri are `#[cfg_attr(miri, ignore)]`
#      with the reason (every-width sweeps, 10^4-case loops) and run natively in `cargo test`.
#   2. tests/tests/miri.rs (Stacked Borrows): PERNIX scalar blocks; the SZp engine on the scalar
#      and portable paths, both block layouts, ABS/NOA/stage-compatible, streaming encoder;
#      the archive parsers (SZp header and blocks, `.fzm`, `.pnx` streams of the `fzpack`
#      crate) on valid, every truncated and bit-flipped input; the SZp operations; the fuzz
#      targets' seed corpora for the decoders.
#   3. capi/tests/rust_callers.rs: every `extern "C"` function of the C ABI (PERNIX and SZp)
#      called from Rust with raw pointers: handles created and destroyed, out-parameters,
#      null, misaligned and short arguments.
#
# What it does not cover: the `core::arch` SIMD kernels (AVX2, BMI2, AVX-512 VBMI, NEON) and
# CPU detection (`cpuid`/`xgetbv`): Miri cannot execute those intrinsics or inline assembly.
# They are held to the scalar reference instead: byte-for-byte equality tests on every path
# (tests/tests/pernix_backends.rs, szp_paths.rs, szp_heads.rs, szp_avx2.rs), the differential
# fuzz targets with sanitizer instrumentation (scripts/fuzz.sh: cargo-fuzz builds with
# AddressSanitizer by default), the --asan step below, and the aarch64 run under QEMU
# (scripts/aarch64.sh).
# Also not here: the rayon driver (safe code; rayon's crossbeam-epoch fails Stacked Borrows, a
# known upstream limitation, and a thread pool per fuzz input takes minutes under Miri), so
# neither the fuzz checks `pernix_paths` and `szp_roundtrip` that run it (tests/tests/
# parallel_*.rs and fuzz_checks.rs run them natively); the CLI; the C programs
# (capi/tests/c_abi.rs compiles real C natively); the GPU crate; and the full-size tests (Miri
# is ~1000x slower than native code).
#
# A missing nightly toolchain, Miri component or rust-src is a skip with the reason, and a
# failure when FZPACK_REQUIRE_TOOLS=1 (CI).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
asan=0
if [ "${1:-}" = --asan ]; then
  asan=1
  shift
fi
budget=${1:-480}
start=$SECONDS

missing() {
  echo "miri.sh: $1" >&2
  if [ "${FZPACK_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "miri.sh: FAIL (FZPACK_REQUIRE_TOOLS=1)" >&2
    exit 1
  fi
  echo "miri.sh: SKIPPED" >&2
  exit 0
}
# As scripts/fuzz.sh installs cargo-fuzz: fetch the components when they are missing (a failed
# download leaves the checks below to report it).
if ! cargo +nightly miri --version >/dev/null 2>&1 ||
  [ ! -d "$(rustc +nightly --print sysroot 2>/dev/null)/lib/rustlib/src/rust/library" ]; then
  rustup component add --toolchain nightly miri rust-src || true
fi
cargo +nightly miri --version >/dev/null 2>&1 ||
  missing "no Miri on the nightly toolchain (rustup +nightly component add miri rust-src)"
[ -d "$(rustc +nightly --print sysroot)/lib/rustlib/src/rust/library" ] ||
  missing "no rust-src on the nightly toolchain (rustup +nightly component add rust-src)"
echo "== $(cargo +nightly miri --version); budget ${budget} s"
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup

# Isolation off: tests/tests/miri.rs reads the fuzz seed corpora from disk.
base_flags="-Zmiri-disable-isolation"
summary=()
# step NAME MIRIFLAGS CARGO-COMMAND... (a `cargo +nightly` subcommand and its arguments)
step() {
  local name=$1 flags=$2
  shift 2
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -le 0 ]; then
    echo "miri.sh: FAIL: time budget of ${budget} s used up before: $name" >&2
    exit 1
  fi
  echo "== $name (MIRIFLAGS=$flags; ${left} s left)"
  local t0=$SECONDS log
  log=$(mktemp)
  set +e
  MIRIFLAGS="$flags ${MIRIFLAGS:-}" timeout -k 10 "$left" cargo +nightly "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  local counts
  counts=$(grep -E '^test result:' "$log" | sed 's/; finished in .*//' | tr '\n' ' ')
  rm -f "$log"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "miri.sh: FAIL: $name ran past the time budget (${budget} s)" >&2
    exit 1
  elif [ "$rc" != 0 ]; then
    echo "miri.sh: FAIL: $name (exit $rc): undefined behaviour or a failed test, see above" >&2
    exit 1
  fi
  summary+=("$(printf '%-44s %4d s  %s' "$name" $((SECONDS - t0)) "$counts")")
}

step "core unit tests" "$base_flags" miri test \
  -p fzpack-core --lib --features force-scalar
step "tests/tests/miri.rs (portable paths, parsers)" "$base_flags" miri test \
  -p fzpack-tests --features fzpack-core/force-scalar --test miri
step "capi/tests/rust_callers.rs (C ABI)" "$base_flags" miri test \
  -p fzpack-capi --features fzpack-core/force-scalar --test rust_callers
echo "== miri.sh: no undefined behaviour found by Miri"

if [ "$asan" = 1 ]; then
  budget=$((budget + 420))
  host=$(rustc +nightly -vV | sed -n 's/^host: //p')
  export RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address"
  export CARGO_TARGET_DIR=target/asan
  step "AddressSanitizer: SIMD kernels vs scalar" "" \
    test -Zbuild-std --target "$host" -p fzpack-tests --test szp_paths --test pernix_backends \
    --test szp_kernels --test szp_avx2 --test szp_ops
fi

printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - start)) s (budget ${budget} s)"
