#!/usr/bin/env bash
# GPU check for fzpack-gpu, in two halves:
#
#   scripts/gpu-check.sh --prepare   here, on a development machine (no GPU needed): builds the
#       workspace with the `cuda` feature, builds the GPU test binary and the benchmark (release),
#       compiles the kernels to PTX with NVRTC (scripts/nvrtc.sh installs it), and puts all of it
#       plus the real fields of ../shared/data (files <= 10 MB; the tree that travels is limited
#       to 64 MiB) into .gpu-bin/, which the repository's info/exclude ignores.
#
#   scripts/gpu-check.sh             on the GPU machine, with `.gpu-bin` carried: one call of at
#       most 8 minutes. Runs the GPU tests (archives byte-identical to fzpack-core on generated
#       and real fields in both block layouts, chunk CRCs sealed on the device, bound held, same
#       errors for damaged archives of both layouts, the > 4 GiB input) and the benchmark: both
#       layouts on a 1 GiB f32 random walk and on every carried field, NOA eb = 1e-3 of the
#       range, block size 128, CUDA events, median of the timed runs after warm-up; compress and
#       decompress GB/s device-resident, with the pageable host transfers, and decompress without
#       the device CRC pass, each next to a device-to-device copy of the same bytes in the same
#       run; every timed archive checked byte-identical to fzpack-core. Writes $OUT/gpu-check.md
#       (summary + the results table, ready for BENCHMARKS.md), $OUT/gpu-bench.md (the table
#       alone), $OUT/gpu-tests.log, $OUT/gpu-bench.log.
#
# What the GPU machine is assumed to have (the device tool's H200 image): the NVIDIA driver
# (libcuda.so.1 on the loader path), no network, no crates registry, and maybe no Rust
# toolchain — hence the prebuilt binaries (x86-64, built on Debian 12: glibc 2.36, so they run
# on any newer glibc). cudarc loads libcuda and libnvrtc at run time; the script looks for an
# NVRTC of the image's CUDA toolkit or Python wheels and links it as libnvrtc.so (the name
# cudarc tries first) in a temporary folder; without one it sets FZPACK_GPU_PTX to the PTX
# compiled here (the driver JIT-compiles it). If cargo is there and .gpu-bin is not, it tries an
# offline build.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=.gpu-bin

if [ "${1:-}" = "--prepare" ]; then
  set -e
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
  excl=$(git rev-parse --git-path info/exclude) # a worktree's .git is a file
  mkdir -p "$(dirname "$excl")"
  grep -qx '/.gpu-bin/' "$excl" 2>/dev/null || echo '/.gpu-bin/' >>"$excl"
  rm -rf "$BIN" && mkdir -p "$BIN/data"
  scripts/nvrtc.sh
  cargo build --release --workspace --features fzpack/cuda
  json=$(cargo test --release -p fzpack-gpu --test device --no-run --message-format=json)
  exe=$(printf '%s\n' "$json" | jq -r 'select(.profile.test == true and .target.name == "device") | .executable' | tail -1)
  cp "$exe" "$BIN/gpu_tests"
  cargo build --release -p fzpack-gpu --example gpu_bench
  cp "$CARGO_TARGET_DIR/release/examples/gpu_bench" "$BIN/gpu_bench"
  strip "$BIN/gpu_tests" "$BIN/gpu_bench"
  FZPACK_PTX_OUT="$PWD/$BIN" FZPACK_REQUIRE_TOOLS=1 \
    cargo test --release -p fzpack-gpu --test ptx -- --nocapture
  data=../shared/data
  if [ -d "$data" ]; then
    find "$data" -maxdepth 1 -type f \( -name '*.f32' -o -name '*.f64' \) -size -10M \
      -exec cp {} "$BIN/data/" \;
  fi
  du -sh "$BIN"
  echo "prepared $BIN: run scripts/gpu-check.sh on the GPU machine with carry [\"$BIN\"]"
  exit 0
fi

OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
summary=$OUT/gpu-check.md
t0=$(date +%s)
{
  echo "# fzpack-gpu check ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | head -3
  echo '```'
} >"$summary"

# NVRTC: the toolkit's or a wheel's, exposed as libnvrtc.so; else the PTX built by --prepare.
nvdir=/tmp/fzpack-nvrtc
mkdir -p "$nvdir"
nv=$(ls /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so* \
  /usr/lib/x86_64-linux-gnu/libnvrtc.so* /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib/libnvrtc.so* \
  /usr/local/lib/python3*/dist-packages/nvidia/*/lib/libnvrtc.so* 2>/dev/null | grep -v builtins | head -1)
if [ -n "$nv" ]; then
  ln -sf "$nv" "$nvdir/libnvrtc.so"
  for b in "$(dirname "$nv")"/libnvrtc-builtins.so*; do [ -e "$b" ] && ln -sf "$b" "$nvdir/"; done
  export LD_LIBRARY_PATH="$nvdir:$(dirname "$nv")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "NVRTC: $nv" | tee -a "$summary"
elif [ -f "$BIN/szp_compute_90.ptx" ]; then
  export FZPACK_GPU_PTX="$PWD/$BIN/szp_compute_90.ptx"
  echo "NVRTC: none found; loading the PTX compiled by --prepare ($FZPACK_GPU_PTX)" | tee -a "$summary"
else
  echo "NVRTC: none found and no prepared PTX" | tee -a "$summary"
fi

tests=$BIN/gpu_tests
bench=$BIN/gpu_bench
if [ ! -x "$tests" ] && command -v cargo >/dev/null; then
  echo "no $BIN: building offline with cargo" | tee -a "$summary"
  cargo build --offline --release --workspace --features fzpack/cuda 2>&1 | tail -3
  json=$(cargo test --offline --release -p fzpack-gpu --test device --no-run --message-format=json)
  tests=$(printf '%s\n' "$json" | jq -r 'select(.profile.test == true and .target.name == "device") | .executable' | tail -1)
  cargo build --offline --release -p fzpack-gpu --example gpu_bench && bench=target/release/examples/gpu_bench
fi
if [ ! -x "$tests" ]; then
  echo "FAIL: no test binary (run scripts/gpu-check.sh --prepare first and carry $BIN)" | tee -a "$summary"
  exit 1
fi

export FZPACK_REQUIRE_GPU=1 FZPACK_GPU_BIG=1
[ -d "$BIN/data" ] && export FZPACK_DATA="$PWD/$BIN/data"
echo | tee -a "$summary"
echo "## GPU tests" >>"$summary"
timeout 280 "$tests" --test-threads=1 --nocapture 2>&1 | tee "$OUT/gpu-tests.log"
trc=${PIPESTATUS[0]}
{
  echo
  echo '```'
  grep -E '^test |test result|GPU archives|real-field|skipped' "$OUT/gpu-tests.log"
  echo '```'
  echo "tests exit code $trc"
} >>"$summary"

echo >>"$summary"
echo "## Benchmark" >>"$summary"
timeout 170 "$bench" 1024 10 128 "$OUT/gpu-bench.md" 2>&1 | tee "$OUT/gpu-bench.log"
brc=${PIPESTATUS[0]}
{
  echo
  [ -f "$OUT/gpu-bench.md" ] && cat "$OUT/gpu-bench.md"
  echo "benchmark exit code $brc; whole check $(($(date +%s) - t0)) s"
} >>"$summary"
cat "$summary"
[ "$trc" = 0 ] && [ "$brc" = 0 ]
