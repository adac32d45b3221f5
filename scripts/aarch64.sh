#!/usr/bin/env bash
# aarch64: builds and tests the workspace for aarch64-unknown-linux-gnu on an x86_64
# machine, with Debian's own Rust (rustc-web/cargo-web 1.96) and its arm64 standard library,
# and runs the tests under qemu-user.
#
# 1. Installs the toolchain (idempotent, ~20 s on a fresh machine): rustc-web, cargo-web,
#    rust-web-clippy, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user (all host
#    packages), plus the rlibs of libstd-rust-web-dev:arm64 of the *same* version, extracted
#    into a private sysroot under target/ — the arm64 package itself is never installed, so no
#    system library is upgraded or replaced.
# 2. Tests: `cargo test --workspace` for the target under qemu-aarch64, except
#    * the capi tests that compile and run C/C++/Fortran/CMake consumers (they drive the host's
#      x86_64 gcc/g++/gfortran/cmake and execute what they build: not an aarch64 test); the
#      rest of the capi tests run;
#    * fzpack-gpu (the CUDA executor: needs a GPU, and its host-kernel emulation a C++
#      compiler for the target);
#    * nothing else needs x86 or a GPU (the x86-only checks skip themselves on aarch64 and
#      say so).
#    The CLI tests spawn the aarch64 `fzpack` binary; without a binfmt_misc handler for
#    aarch64 the kernel cannot exec it, so `std-ext`'s CLI tests are run only when one is
#    registered (else the script says they were skipped).
# 3. clippy for the target (`--all-targets -D warnings`, Debian's clippy 1.96).
# 4. Instruction counts per 64-byte block of the main NEON kernels (PERNIX compress and
#    decompress, f32/f64): static (the hot loop in `aarch64-linux-gnu-objdump -d` of the
#    release build) and executed (counted by qemu -singlestep), next to the scalar path's.
#    Timings under qemu are NOT a performance measure (qemu translates every instruction; a
#    NEON/scalar time ratio under emulation says nothing about hardware), so none is printed.
#
# Environment: CARGO_TARGET_DIR (default target/aarch64), FZPACK_AARCH64_SYSROOT (default
# target/aarch64-sysroot), AARCH64_PROFILE (test profile, default "release": emulated
# unoptimized test code is several times slower; `dev` also works).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
T=aarch64-unknown-linux-gnu
sysroot=${FZPACK_AARCH64_SYSROOT:-$root/target/aarch64-sysroot}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/aarch64}
profile=${AARCH64_PROFILE:-release}
t0=$(date +%s)

# --- 1. toolchain -------------------------------------------------------------------------
need=()
for p in rustc-web cargo-web rust-web-clippy gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  binutils-aarch64-linux-gnu qemu-user; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  updated=0
else
  updated=1
fi
if [ ${#need[@]} -gt 0 ] || [ "$updated" = 0 ]; then
  apt-get update -qq
  updated=1
fi
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
V=$(dpkg-query -W -f='${Version}' rustc-web)
stamp="$sysroot/.libstd-rust-web-dev-arm64-version"
if [ "$(cat "$stamp" 2>/dev/null)" != "$V" ]; then
  dl=$(mktemp -d)
  # apt-get download as root in a private temp dir (chmod so the _apt user may write there).
  chmod 777 "$dl"
  (cd "$dl" && apt-get download -qq "libstd-rust-web-dev:arm64=$V") || {
    apt-get update -qq
    (cd "$dl" && apt-get download -qq "libstd-rust-web-dev:arm64=$V")
  }
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  dpkg-deb --fsys-tarfile "$dl"/libstd-rust-web-dev_*_arm64.deb |
    tar -x -C "$sysroot" ./usr/lib/rustlib/$T
  rm -rf "$dl"
  echo "$V" >"$stamp"
fi
t1=$(date +%s)
echo "aarch64 toolchain ready in $((t1 - t0)) s (rustc-web $V, sysroot $sysroot)"

# Debian's cargo/rustc/clippy, not rustup's (~/.cargo/bin comes first in PATH, and cargo looks
# for subcommands in $CARGO_HOME/bin first: clippy is called as /usr/bin/cargo-clippy).
unset RUSTFLAGS RUSTDOCFLAGS CARGO_BUILD_TARGET
export PATH="/usr/bin:$PATH" CARGO=/usr/bin/cargo RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="--sysroot=$sysroot/usr"
export RUSTDOCFLAGS="--sysroot=$sysroot/usr"
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
cargo=/usr/bin/cargo
prof=()
[ "$profile" = release ] && prof=(--release)

# --- 2. tests under qemu ------------------------------------------------------------------
binfmt=0
if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  binfmt=1
fi
# fzpack-gpu: CUDA executor (its host-kernel emulation needs a C++ compiler for the target);
# capi: run separately below, without its consumer-build tests.
excl=(--exclude fzpack-capi --exclude fzpack-gpu)
if [ "$binfmt" = 0 ]; then
  excl+=(--exclude fzpack-cli)
fi
echo "== aarch64: cargo test --workspace ${excl[*]} (profile $profile, under qemu-aarch64)"
$cargo test -q --target $T "${prof[@]}" --workspace "${excl[@]}"
if [ "$binfmt" = 0 ]; then
  # Only the CLI's tests (cli/tests/cli.rs), which exec the aarch64 binary, need binfmt_misc;
  # its unit tests still run.
  echo "== aarch64: fzpack-cli without tests/cli.rs: no binfmt_misc handler for aarch64"
  $cargo test -q --target $T "${prof[@]}" -p fzpack-cli --bins
  echo "skipped: cli/tests/cli.rs (execs the aarch64 fzpack binary; no binfmt_misc qemu-aarch64 handler here)"
fi
echo "== aarch64: fzpack-capi without the C/C++/Fortran/CMake consumer tests (x86_64 host tools)"
$cargo test -q --target $T "${prof[@]}" -p fzpack-capi -- \
  --skip documentation_examples_build_unmodified_and_exit_0 --skip c_validation_statuses \
  --skip c_szp_round_trip_and_statuses --skip header_compiles_as_c_and_cpp_with_strict_flags \
  --skip fortran_round_trip --skip install_then_find_package_and_pkg_config
echo "skipped: capi C/C++/Fortran/CMake consumer tests (they build with the host's x86_64 tools)"
echo "== aarch64: Auto is the scalar path with fzpack-core/force-scalar"
$cargo test -q --target $T "${prof[@]}" -p fzpack-tests --features fzpack-core/force-scalar \
  --test pernix_backends
t2=$(date +%s)
echo "aarch64 tests passed in $((t2 - t1)) s"

# --- 3. clippy ----------------------------------------------------------------------------
echo "== aarch64: clippy --workspace --exclude fzpack-gpu --all-targets -D warnings"
/usr/bin/cargo-clippy clippy -q --target $T --workspace --exclude fzpack-gpu --all-targets -- -D warnings
t3=$(date +%s)
echo "aarch64 clippy clean in $((t3 - t2)) s"

# --- 4. instruction counts ----------------------------------------------------------------
# Two counts per kernel and 64-byte block, neither of them a timing:
#  * static: the instructions of the kernel's innermost loop (the one holding `fcvtns` resp.
#    `tbl`) in `objdump -d` of the release build, times the 8-value groups of a 64-byte block
#    (per-block setup, the tail group and the zero fill are not in it);
#  * executed: qemu-aarch64 -singlestep -d exec logs every executed instruction; a probe
#    program runs the kernel once and twice on 100 blocks, the difference / 100 is what one
#    64-byte block costs, everything included. The scalar path's count is printed next to it.
cdir="$CARGO_TARGET_DIR/insn-counts"
mkdir -p "$cdir"
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="--sysroot=$sysroot/usr -C symbol-mangling-version=v0" \
  $cargo build -q --target $T --release -p fzpack-core --target-dir "$cdir"
deps="$cdir/$T/release/deps"
rlib=$(ls -t "$deps"/libfzpack_core-*.rlib | head -1)
dis="$cdir/fzpack_core.dis"
aarch64-linux-gnu-objdump -d --no-show-raw-insn -C "$rlib" >"$dis"
cat >"$cdir/probe.rs" <<'RUST'
//! Runs one PERNIX kernel `reps` times over `k` 64-byte blocks (for instruction counting).
use fzpack_core::pernix::{Backend, BitWidth, BlockSize, Dispatcher, elements_per_block};
use std::hint::black_box;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize| a.get(i).map(String::as_str).unwrap_or("");
    let (op, ty, be) = (arg(1), arg(2), arg(5));
    let n: u8 = arg(3).parse().unwrap();
    let k: usize = arg(4).parse().unwrap();
    let reps: usize = arg(6).parse().unwrap();
    let backend = if be == "neon" { Backend::Arm64Neon } else { Backend::Fallback };
    let d = Dispatcher::new(backend).unwrap();
    let bits = BitWidth::new(n).unwrap();
    let bs = BlockSize::B64;
    let e = elements_per_block(bits, bs);
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let base: Vec<f64> = (0..e)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    let x64: Vec<f64> = (0..k).flat_map(|_| base.iter().copied()).collect();
    let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
    let mut bytes = vec![0u8; 64 * k];
    let inv = ((1u64 << (n - 1)) as f64 - 1.0).max(1.0);
    d.compress_blocks(bits, bs, &x64, inv, &mut bytes, k).unwrap();
    let mut y32 = vec![0f32; e * k];
    let mut y64 = vec![0f64; e * k];
    for _ in 0..reps {
        match (op, ty) {
            ("c", "f32") => d.compress_blocks(bits, bs, black_box(&x32), inv as f32, &mut bytes, k),
            ("c", _) => d.compress_blocks(bits, bs, black_box(&x64), inv, &mut bytes, k),
            ("d", "f32") => {
                d.decompress_blocks(bits, bs, black_box(&bytes), 0.001f32, &mut y32, k, true)
            }
            _ => d.decompress_blocks(bits, bs, black_box(&bytes), 0.001f64, &mut y64, k, true),
        }
        .unwrap();
    }
    black_box((&bytes, &y32, &y64));
}
RUST
/usr/bin/rustc --edition 2024 -O --target $T --sysroot "$sysroot/usr" -C linker=aarch64-linux-gnu-gcc \
  --extern fzpack_core="$rlib" -L "$deps" "$cdir/probe.rs" -o "$cdir/probe"
executed() { # op ty n backend -> executed instructions per 64-byte block
  local c1 c2
  qemu-aarch64 -singlestep -d exec,nochain -D "$cdir/trace" "$cdir/probe" "$1" "$2" "$3" 100 "$4" 1
  c1=$(grep -c '^Trace' "$cdir/trace")
  qemu-aarch64 -singlestep -d exec,nochain -D "$cdir/trace" "$cdir/probe" "$1" "$2" "$3" 100 "$4" 2
  c2=$(grep -c '^Trace' "$cdir/trace")
  rm -f "$cdir/trace"
  echo $(((c2 - c1) / 100))
}
rows="$cdir/rows"
: >"$rows"
for n in 4 8 12 16 20 24; do
  for op in c d; do
    for ty in f32 f64; do
      echo "$op $ty $n $(executed $op $ty $n neon) $(executed $op $ty $n fallback)" >>"$rows"
    done
  done
done
echo "== NEON PERNIX kernels: instructions per 64-byte block (release build; not a timing)"
python3 - "$dis" "$rows" <<'PY'
import re, sys
funcs, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^[0-9a-f]+ <(.*)>:$', line)
    if m:
        cur = m.group(1); funcs[cur] = []; continue
    m = re.match(r'^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$', line)
    if m and cur is not None:
        funcs[cur].append((int(m.group(1), 16), m.group(2), m.group(3)))

def loop_body(ins, mark):
    """Instructions of the smallest loop (backward branch range) that contains `mark`."""
    best = None
    for a, op, args in ins:
        if op in ('b', 'cbz', 'cbnz', 'tbz', 'tbnz') or op.startswith('b.'):
            m = re.search(r'\b([0-9a-f]+) <', args)
            if m and int(m.group(1), 16) <= a:
                t = int(m.group(1), 16)
                body = [i for i in ins if t <= i[0] <= a]
                if any(i[1] == mark for i in body) and (best is None or len(body) < len(best)):
                    best = body
    return best or []

def static(op, ty, n):
    if op == 'c':
        names = [f for f in funcs if f.endswith(f'pernix::compress_n_{ty}::<{n}>')]
        mark = 'fcvtns'
    else:
        names = [f for f in funcs if f'pernix::decompress_blocks::<true, {ty},' in f]
        mark = 'tbl'
    if not names:
        return None
    return len(loop_body(funcs[names[0]], mark))

print('| kernel | N | hot loop per 8 values (objdump) | × groups per 64 B | executed per 64-byte block, NEON | executed, scalar path |')
print('|---|---|---|---|---|---|')
for line in open(sys.argv[2]):
    op, ty, n, neon, scal = line.split()
    n = int(n)
    groups = 64 * 8 // n // 8
    b = static(op, ty, n)
    kind = ('compress ' if op == 'c' else 'decompress (signed) ') + ty
    st = '-' if b is None else str(b)
    tot = '-' if b is None else str(b * groups)
    print(f'| {kind} | {n} | {st} | {tot} | {neon} | {scal} |')
PY
t4=$(date +%s)
echo "aarch64: install $((t1 - t0)) s, tests $((t2 - t1)) s, clippy $((t3 - t2)) s, counts $((t4 - t3)) s, total $((t4 - t0)) s"
