#!/usr/bin/env bash
# Firmware proof. With Debian's rustc and -Zbuild-std=core, for Cortex-M4F
# (thumbv7em-none-eabihf) and RV32 (riscv32imac-unknown-none-elf), builds firmware/:
#  * a fat-LTO, panic=abort, opt-level "s" staticlib of the core entry points of both codecs:
#    each entry point is linked alone with --gc-sections; the script fails if any panic symbol
#    survives, and measures its linked .text and its largest stack frame (-Z emit-stack-sizes);
#  * the `instrument` example image (its panic handler references an undefined symbol, so a
#    reachable panic fails the link), which scripts/qemu-firmware.sh then runs under QEMU:
#    report lines compared with the host's, painted stack peaks, instructions per value on
#    Cortex-M4F (`insn-per-value M4F <entry>: <n>`), and a negative control;
#  * the same M4F entry points without feature layout-heads (what that layout costs);
#  * examples/cortex-m4f (cortex-m-rt), run under QEMU against the host's report line;
#  * the instrument again with the codec compiled as a stable rustc compiles it (its
#    instruction counts must equal the first build's), and so for RV32IMAC with F
#    (riscv32imafc, run under QEMU against the host's report line);
#  * the exhaustive f32-quantizer test and the core's tests without default features.
# Writes the table to target/firmware.sizes.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
start=$SECONDS
need=()
for p in rustc-web cargo-web rust-web-src binutils-arm-none-eabi binutils-riscv64-unknown-elf; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
target_dir="$root/target/firmware"
targets=(thumbv7em-none-eabihf riscv32imac-unknown-none-elf)
entries=(fw_pernix_compress fw_pernix_decompress fw_szp_encode fw_szp_stream_encode fw_szp_decode)
# The instrument's stage measured for each entry point (painted stack peak under QEMU).
declare -A stage=( [fw_pernix_compress]=pernix_compress [fw_pernix_decompress]=pernix_decompress
  [fw_szp_encode]=szp_encode [fw_szp_stream_encode]=szp_stream_encode [fw_szp_decode]=szp_decode )
declare -A label=( [fw_pernix_compress]="PERNIX compress" [fw_pernix_decompress]="PERNIX decompress"
  [fw_szp_encode]="SZp encode, one-shot" [fw_szp_stream_encode]="SZp encode, streaming"
  [fw_szp_decode]="SZp decode" )
declare -A ld=( [thumbv7em-none-eabihf]="arm-none-eabi-ld" [riscv32imac-unknown-none-elf]="riscv64-unknown-elf-ld -m elf32lriscv" )
declare -A pre=( [thumbv7em-none-eabihf]="arm-none-eabi" [riscv32imac-unknown-none-elf]="riscv64-unknown-elf" )
declare -A qlog=( [thumbv7em-none-eabihf]=m4f [riscv32imac-unknown-none-elf]=rv32 )

# stack_frames ELF PREFIX: "bytes function" for every function in ELF's .stack_sizes (address,
# then ULEB128 size, per function), largest first.
stack_frames() {
  local elf=$1 p=$2
  "$p-readelf" -x .stack_sizes "$elf" 2>/dev/null | awk '
    function hex(x) { return (index("0123456789abcdef", substr(x, 1, 1)) - 1) * 16 + index("0123456789abcdef", substr(x, 2, 1)) - 1 }
    /^  0x/ { h = h substr($0, 14, 35) }
    END {
      gsub(/ /, "", h); n = length(h) / 2; i = 0
      while (i + 5 <= n) {
        a = 0; for (k = 3; k >= 0; k--) a = a * 256 + hex(substr(h, 2 * (i + k) + 1, 2)); i += 4
        s = 0; m = 1
        do { b = hex(substr(h, 2 * i + 1, 2)); i++; s += (b % 128) * m; m *= 128 } while (b >= 128 && i < n)
        printf "%d %d\n", a - a % 2, s
      }
    }' > "$elf.frames"
  "$p-nm" -C "$elf" | awk -v f="$elf.frames" '
    BEGIN { while ((getline l < f) > 0) { split(l, q, " "); sz[q[1]] = q[2] } }
    $2 ~ /^[tTwW]$/ {
      a = 0; x = tolower($1)
      for (k = 1; k <= length(x); k++) a = a * 16 + index("0123456789abcdef", substr(x, k, 1)) - 1
      a = a - a % 2
      if ((a in sz) && !(a in done)) { done[a] = 1; name = $0; sub(/^[^ ]+ [^ ]+ /, "", name); print sz[a], name }
    }' | sort -rn
}

fail=0
declare -A text frame
(
  export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
  # Only the target crates get this (cargo does not pass RUSTFLAGS to build scripts with
  # --target); it adds the .stack_sizes section and changes no code.
  export RUSTFLAGS="-Z emit-stack-sizes"
  for t in "${targets[@]}"; do
    (cd "$root/firmware" && /usr/bin/cargo build -q -Zbuild-std=core --target "$t" --release --target-dir "$target_dir")
  done
)
# What the block-head layout costs: the M4F entry points again without feature layout-heads.
declare -A text_noheads
(
  export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
  cd "$root/firmware" && /usr/bin/cargo build -q -Zbuild-std=core --target thumbv7em-none-eabihf \
    --release --lib --no-default-features --target-dir "$target_dir-noheads"
)
for e in "${entries[@]}"; do
  one="$target_dir-noheads/$e.elf"
  arm-none-eabi-ld --gc-sections -u "$e" -e "$e" --unresolved-symbols=ignore-all -o "$one" \
    "$target_dir-noheads/thumbv7em-none-eabihf/release/libfzpack_firmware.a"
  text_noheads[$e]=$(arm-none-eabi-size -A "$one" | awk '$1==".text"{print $2}')
done
for t in "${targets[@]}"; do
  p=${pre[$t]}
  lib="$target_dir/$t/release/libfzpack_firmware.a"
  all=()
  for e in "${entries[@]}"; do all+=(-u "$e"); done
  elf="$target_dir/$t/all.elf"
  ${ld[$t]} --gc-sections "${all[@]}" -e fw_pernix_compress --unresolved-symbols=ignore-all -o "$elf" "$lib"
  if "$p-nm" -C "$elf" | grep -i -E 'panic' ; then
    echo "FAIL: $t: panic symbols in the linked image (above)"; fail=1
  else
    echo "$t: no panic symbol in the image of all entry points"
  fi
  # Only portable code on these targets: no x86_64/aarch64 kernel may be compiled in.
  if "$p-nm" -C "$lib" 2>/dev/null | grep -i -E 'fzpack_core::arch::(x86_64|aarch64)|avx|neon|sse[0-9]|bmi2' ; then
    echo "FAIL: $t: SIMD code in the staticlib (above)"; fail=1
  else
    echo "$t: no SIMD kernel compiled (portable paths only)"
  fi
  # The public API must pick the scalar path at compile time: no portable (SIMD-fallback)
  # kernel, with its block buffers on the stack, may be linked.
  if "$p-nm" -C "$elf" | grep -E 'generic::Portable'; then
    echo "FAIL: $t: the portable SZp kernels are linked (above)"; fail=1
  else
    echo "$t: szp::compress/decompress linked the scalar path only"
  fi
  img="$target_dir/$t/release/instrument"
  if "$p-nm" -C "$img" | grep -i -E 'panic|fzpack_panic_reached'; then
    echo "FAIL: $t: panic symbols in the instrument image (above)"; fail=1
  else
    echo "$t: instrument image linked without a panic path; .text $("$p-size" -A "$img" | awk '$1==".text"{print $2}') bytes"
  fi
  for e in "${entries[@]}"; do
    one="$target_dir/$t/$e.elf"
    ${ld[$t]} --gc-sections -u "$e" -e "$e" --unresolved-symbols=ignore-all -o "$one" "$lib"
    text[$t,$e]=$("$p-size" -A "$one" | awk '$1==".text"{print $2}')
    top=$(stack_frames "$one" "$p" | head -1)
    frame[$t,$e]="${top%% *} (\`${top#* }\`)"
    # No frame near the portable kernels' block buffers (32 KiB and more).
    if [ "${top%% *}" -gt 2048 ]; then
      echo "FAIL: $t $e: a ${top%% *}-byte stack frame (\`${top#* }\`)"; fail=1
    fi
  done
done

# QEMU runs: report lines against the host's, painted stack peaks, negative control.
if ! "$root/scripts/qemu-firmware.sh" "$target_dir"; then
  fail=1
fi

# The copyable example (examples/cortex-m4f: cortex-m-rt, panic-halt, semihosting): built for
# Cortex-M4F (GNU ld: Debian's rustc has no rust-lld; rustup users need neither override) and
# for the host; its QEMU report line must equal the host's.
ex="$root/examples/cortex-m4f"
ex_dir="$root/target/cortex-m4f"
if ! (cd "$ex" && RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
      CARGO_TARGET_THUMBV7EM_NONE_EABIHF_LINKER=arm-none-eabi-ld \
      /usr/bin/cargo build -q --release -Zbuild-std=core --target-dir "$ex_dir"); then
  echo "FAIL: examples/cortex-m4f does not build for thumbv7em-none-eabihf"; fail=1
fi
# Cargo's default release profile (no LTO, 16 codegen units, opt-level 3), as a user's firmware
# may build: szp::compress/decompress must still link no portable SZp kernel (with LTO the
# optimizer drops an unreachable one anyway; without it only the compile-time choice does).
if ! (cd "$ex" && RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="-C link-arg=-Tlink.x" \
      CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      CARGO_PROFILE_RELEASE_OPT_LEVEL=3 CARGO_TARGET_THUMBV7EM_NONE_EABIHF_LINKER=arm-none-eabi-ld \
      /usr/bin/cargo build -q --release -Zbuild-std=core --target-dir "$ex_dir-nolto"); then
  echo "FAIL: examples/cortex-m4f does not build without LTO"; fail=1
elif arm-none-eabi-nm -C "$ex_dir-nolto/thumbv7em-none-eabihf/release/capture" | grep 'generic::Portable'; then
  echo "FAIL: examples/cortex-m4f without LTO links the portable SZp kernels (above)"; fail=1
else
  echo "examples/cortex-m4f without LTO: no portable SZp kernel linked"
fi
ex_host=$(cd "$ex" && RUSTC=/usr/bin/rustc /usr/bin/cargo run -q --release \
  --target x86_64-unknown-linux-gnu --target-dir "$ex_dir" 2>&1 | grep '^capture: ' || true)
qroot=$root/target/qemu/root
ex_m4f=$(LD_LIBRARY_PATH="$qroot/usr/lib/x86_64-linux-gnu:$qroot/lib/x86_64-linux-gnu" \
  timeout 60 "$qroot/usr/bin/qemu-system-arm" -M mps2-an386 -nographic -monitor none \
  -serial none -semihosting-config enable=on,target=native \
  -kernel "$ex_dir/thumbv7em-none-eabihf/release/capture" 2>&1 | grep '^capture: ' || true)
echo "example host:         $ex_host"
echo "example M4F (an386):  $ex_m4f"
if [ -z "$ex_host" ] || [ "$ex_host" != "$ex_m4f" ] || [[ "$ex_host" == *FAIL* ]]; then
  echo "FAIL: examples/cortex-m4f: the QEMU report differs from the host's"; fail=1
else
  echo "    equal; image .text $(arm-none-eabi-size -A "$ex_dir/thumbv7em-none-eabihf/release/capture" | awk '$1==".text"{print $2}') bytes"
fi

# What a stable toolchain builds (rustup's prebuilt thumbv7em-none-eabihf): the codec crates
# compiled without RUSTC_BOOTSTRAP (scripts/stable-rustc.sh), where rustc sets no
# cfg(target_feature) for the FPU. The core's build script names the f32-only FPU from the
# target instead; the instrument must execute exactly the instructions of the build above in
# every stage (before the build script, the one-shot encoder took 55 times as many: soft f64).
st_dir="$target_dir-stable"
if ! (cd "$root/firmware" && RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
      RUSTC_WRAPPER="$root/scripts/stable-rustc.sh" /usr/bin/cargo build -q -Zbuild-std=core \
      --target thumbv7em-none-eabihf --release --bin instrument --target-dir "$st_dir"); then
  echo "FAIL: the instrument does not build as a stable rustc compiles the codec"; fail=1
else
  bash "$root/firmware/profile.sh" "$st_dir/thumbv7em-none-eabihf/release/instrument" 1 \
    > "$st_dir/profile.txt" 2>&1 || true
  st_bad=0
  for s in szp_encode szp_stream_encode szp_decode szp_decode_f32_step; do
    a=$(awk -v s="$s" '$1 == s {print $2}' "$target_dir/insn-m4f.txt" 2>/dev/null | head -1)
    b=$(awk -v s="== $s:" 'index($0, s) == 1 {print $3}' "$st_dir/profile.txt" | head -1)
    echo "M4F $s: ${a:-n/a} instructions (bootstrapped rustc), ${b:-n/a} (stable rustc)"
    if [ -z "$a" ] || [ "$a" != "$b" ]; then st_bad=1; fi
  done
  if [ $st_bad = 1 ]; then
    grep "^==" "$st_dir/profile.txt" || tail -5 "$st_dir/profile.txt"
    echo "FAIL: a stable rustc builds a different codec for Cortex-M4F (above)"; fail=1
  fi
fi

# RV32 with F (riscv32imafc: an f32-only FPU, like Cortex-M4F's): the instrument with the codec
# compiled as a stable rustc compiles it, so that only the core's build script can turn the
# f32 paths on. It must link them (the f32 quantizer's loop), and its QEMU report must equal
# the host's.
rvf_dir="$target_dir-rv32f"
rvf="$rvf_dir/riscv32imafc-unknown-none-elf/release/instrument"
if ! (cd "$root/firmware" && RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
      RUSTC_WRAPPER="$root/scripts/stable-rustc.sh" /usr/bin/cargo build -q -Zbuild-std=core \
      --target riscv32imafc-unknown-none-elf --release --bin instrument --target-dir "$rvf_dir"); then
  echo "FAIL: the instrument does not build for riscv32imafc-unknown-none-elf"; fail=1
else
  rvf_host=$(grep -o 'instrument: n=.*' "$target_dir/host-report.log" 2>/dev/null | head -1 || true)
  rvf_line=$(LD_LIBRARY_PATH="$qroot/usr/lib/x86_64-linux-gnu:$qroot/lib/x86_64-linux-gnu" \
    timeout 60 "$qroot/usr/bin/qemu-system-riscv32" -M virt -bios none -nographic -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$rvf" 2>&1 \
    | grep -o 'instrument: n=.*' | head -1 || true)
  echo "RV32IMAFC (virt):     ${rvf_line:-<no report line>}"
  # (The symbol list whole, not piped into `grep -q`: under pipefail an early exit of grep
  # would fail the pipeline through nm's broken pipe.)
  rvf_syms=$(riscv64-unknown-elf-nm -C "$rvf" 2>/dev/null || true)
  if [[ $rvf_syms != *quantize_f32_block* ]]; then
    echo "FAIL: RV32IMAFC: the f32 paths are not linked (the build script did not name the FPU)"; fail=1
  elif [ -z "$rvf_host" ] || [ "$rvf_line" != "$rvf_host" ]; then
    echo "FAIL: RV32IMAFC: the QEMU report differs from the host's"; fail=1
  else
    echo "    equal to the host's; the f32 quantizer linked; .text $(riscv64-unknown-elf-size -A "$rvf" | awk '$1==".text"{print $2}') bytes"
    # Instructions per value of the SZp stages, counted as for Cortex-M4F.
    rvf_trace=$(mktemp -d)
    mkfifo "$rvf_trace/fifo"
    awk -f "$root/scripts/stage-counts.awk" < "$rvf_trace/fifo" > "$rvf_trace/counts" &
    rvf_awk=$!
    LD_LIBRARY_PATH="$qroot/usr/lib/x86_64-linux-gnu:$qroot/lib/x86_64-linux-gnu" \
      timeout 600 "$qroot/usr/bin/qemu-system-riscv32" -M virt -bios none -nographic \
      -monitor none -serial none -semihosting-config enable=on,target=native -singlestep \
      -d exec,nochain -D "$rvf_trace/fifo" -kernel "$rvf" > "$rvf_trace/log" 2>&1 || true
    wait "$rvf_awk" || true
    if ! grep -q '^instrument: ok' "$rvf_trace/log"; then
      cat "$rvf_trace/log"; echo "FAIL: RV32IMAFC: the traced run"; fail=1
    fi
    for s in szp_encode szp_stream_encode szp_decode szp_decode_f32_step; do
      awk -v s="$s" '$1 == s {printf "insn-per-value RV32IMAFC %s: %.1f\n", s, $2 / 4096}' "$rvf_trace/counts"
    done
    rm -rf "$rvf_trace"
  fi
fi

# Core checks for MCU builds, with the workspace's toolchain: the f32 quantizer against the
# f64 rule on every f32 for two bounds (release: about a minute of CPU), the f32
# reconstruction on every level in [-2^25, 2^25] for 24 bounds (about 20 s), the core's
# unit tests without default features (no block-head layout), and the stream's with the
# block-head layout alone.
if ! (cd "$root" && env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS cargo test -q \
      --release -p fzpack-core --lib quant32 -- --include-ignored) > "$target_dir/quant32.log" 2>&1; then
  cat "$target_dir/quant32.log"; echo "FAIL: the exhaustive f32 quantizer test"; fail=1
else
  echo "f32 quantizer: equal to the f64 rule on every f32 for the exhaustive bounds"
fi
if ! (cd "$root" && env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS cargo test -q \
      --release -p fzpack-core --lib recon32 -- --include-ignored) > "$target_dir/recon32.log" 2>&1; then
  cat "$target_dir/recon32.log"; echo "FAIL: the exhaustive f32 reconstruction test"; fail=1
else
  echo "f32 reconstruction: equal to the f64 rule on every level in [-2^25, 2^25] for 24 bounds, and the f32-step multiply on every level in [-2^24, 2^24] for 12"
fi
if ! (cd "$root" && env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS cargo test -q \
      -p fzpack-core --no-default-features) > "$target_dir/no-default.log" 2>&1; then
  cat "$target_dir/no-default.log"; echo "FAIL: core tests without default features"; fail=1
else
  echo "core tests and doc examples without default features (no layout-heads): passed"
fi
# The stream's tests with the block-head layout and without missing values, as firmware
# builds it: the fused one-pass path, seeded with the blocks' heads.
if ! (cd "$root" && env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS cargo test -q \
      -p fzpack-core --lib --no-default-features --features layout-heads szp::stream) \
      > "$target_dir/heads-stream.log" 2>&1; then
  cat "$target_dir/heads-stream.log"; echo "FAIL: the stream's tests with layout-heads only"; fail=1
else
  echo "stream tests with layout-heads and without missing values: passed"
fi

peak() { # TARGET ENTRY: painted peak from the QEMU log, or "n/a"
  local v
  v=$(awk -v s="stack ${stage[$2]}:" 'index($0, s) == 1 {print $3}' "$target_dir/qemu-${qlog[$1]}.log" 2>/dev/null | head -1)
  echo "${v:-n/a}"
}
# Instructions per value on Cortex-M4F (QEMU's count of executed instructions per stage, see
# scripts/qemu-firmware.sh) over the values each stage handles in firmware/src/instrument.rs:
# N = 4096 samples for SZp, 98 blocks of 42 values for PERNIX (the last block padded).
declare -A values=( [fw_pernix_compress]=4116 [fw_pernix_decompress]=4116 [fw_szp_encode]=4096
  [fw_szp_stream_encode]=4096 [fw_szp_decode]=4096 )
declare -A ipv
for e in "${entries[@]}"; do
  c=$(awk -v s="${stage[$e]}" '$1 == s {print $2}' "$target_dir/insn-m4f.txt" 2>/dev/null | head -1)
  if [ -n "$c" ]; then
    ipv[$e]=$(awk -v c="$c" -v n="${values[$e]}" 'BEGIN { printf "%.1f", c / n }')
  else
    ipv[$e]=n/a; fail=1
  fi
  echo "insn-per-value M4F $e: ${ipv[$e]}"
done
# The same decoder on an archive written with an f32 step (`Config::with_f32_step`).
c=$(awk '$1 == "szp_decode_f32_step" {print $2}' "$target_dir/insn-m4f.txt" 2>/dev/null | head -1)
if [ -n "$c" ]; then
  ipv_step=$(awk -v c="$c" 'BEGIN { printf "%.1f", c / 4096 }')
else
  ipv_step=n/a; fail=1
fi
echo "insn-per-value M4F fw_szp_decode (f32 step): $ipv_step"
out="$target_dir.sizes.md"
{
  echo "| entry point | .text M4F | .text M4F without layout-heads | .text RV32 | largest frame M4F (function) | largest frame RV32 (function) | painted peak M4F | painted peak RV32 | insn/value M4F |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for e in "${entries[@]}"; do
    a=thumbv7em-none-eabihf; r=riscv32imac-unknown-none-elf
    echo "| ${label[$e]} (\`$e\`) | ${text[$a,$e]} B | ${text_noheads[$e]} B | ${text[$r,$e]} B | ${frame[$a,$e]} | ${frame[$r,$e]} | $(peak $a $e) B | $(peak $r $e) B | ${ipv[$e]} |"
  done
  e=fw_szp_decode; stage[step]=szp_decode_f32_step
  echo "| SZp decode, f32 step (\`$e\`) | ${text[$a,$e]} B | ${text_noheads[$e]} B | ${text[$r,$e]} B | ${frame[$a,$e]} | ${frame[$r,$e]} | $(peak $a step) B | $(peak $r step) B | $ipv_step |"
} > "$out"
cat "$out"
echo "firmware step: $((SECONDS - start)) s"
exit $fail
