#!/usr/bin/env bash
# Firmware proof (issue 10, part): builds fzpack-core's entry points of both codecs as a
# fat-LTO, panic=abort, opt-level "s" staticlib (firmware/) for Cortex-M4F (thumbv7em-none-eabihf)
# and RV32 (riscv32imac-unknown-none-elf) with Debian's rustc and -Zbuild-std=core, links each
# entry point alone with --gc-sections, fails if any panic symbol survives, and prints the
# linked .text bytes per entry point.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
need=()
for p in rustc-web cargo-web rust-web-src binutils-arm-none-eabi binutils-riscv64-unknown-elf; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
unset RUSTFLAGS
target_dir="$root/target/firmware"
entries=(fw_pernix_compress fw_pernix_decompress fw_szp_encode fw_szp_stream_encode fw_szp_decode)
declare -A ld=( [thumbv7em-none-eabihf]="arm-none-eabi-ld" [riscv32imac-unknown-none-elf]="riscv64-unknown-elf-ld -m elf32lriscv" )
declare -A nm=( [thumbv7em-none-eabihf]="arm-none-eabi-nm" [riscv32imac-unknown-none-elf]="riscv64-unknown-elf-nm" )
declare -A size=( [thumbv7em-none-eabihf]="arm-none-eabi-size" [riscv32imac-unknown-none-elf]="riscv64-unknown-elf-size" )
fail=0
mkdir -p "$root/target"
printf '| target | entry point | linked .text bytes |\n|---|---|---|\n' > "$target_dir.sizes.md"
for t in thumbv7em-none-eabihf riscv32imac-unknown-none-elf; do
  (cd "$root/firmware" && /usr/bin/cargo build -q -Zbuild-std=core --target "$t" --release --target-dir "$target_dir")
  lib="$target_dir/$t/release/libfzpack_firmware.a"
  all=()
  for e in "${entries[@]}"; do all+=(-u "$e"); done
  elf="$target_dir/$t/all.elf"
  ${ld[$t]} --gc-sections "${all[@]}" -e fw_pernix_compress --unresolved-symbols=ignore-all -o "$elf" "$lib"
  if ${nm[$t]} -C "$elf" | grep -i -E 'panic' ; then
    echo "FAIL: $t: panic symbols in the linked image (above)"; fail=1
  else
    echo "$t: no panic symbol in the image of all entry points"
  fi
  for e in "${entries[@]}"; do
    one="$target_dir/$t/$e.elf"
    ${ld[$t]} --gc-sections -u "$e" -e "$e" --unresolved-symbols=ignore-all -o "$one" "$lib"
    text=$(${size[$t]} -A "$one" | awk '$1==".text"{print $2}')
    printf '| %s | %s | %s |\n' "$t" "$e" "$text" >> "$target_dir.sizes.md"
  done
done
cat "$target_dir.sizes.md"
exit $fail
