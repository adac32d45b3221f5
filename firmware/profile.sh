#!/usr/bin/env bash
# Where the M4F instructions go: runs the `instrument` image (built by scripts/firmware.sh)
# under QEMU with the instruction log of scripts/qemu-firmware.sh (-singlestep -d
# exec,nochain: one line per executed instruction, with its function's symbol) and counts, for
# every stage between its marker and `fw_mark_end`, the instructions per function and per
# address. Prints, per SZp stage, the functions (instructions per value) and the hottest
# instructions with their disassembly. LTO inlines most of the codec into the instrument's
# call sites, so the per-instruction list is where the loops show.
# Usage: firmware/profile.sh [IMAGE] [TOP]   (default target/firmware/.../instrument, 40)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
img=${1:-$root/target/firmware/thumbv7em-none-eabihf/release/instrument}
top=${2:-40}
qroot=$root/target/qemu/root
[ -x "$qroot/usr/bin/qemu-system-arm" ] || { echo "run scripts/firmware.sh first (QEMU)"; exit 1; }
export LD_LIBRARY_PATH="$qroot/usr/lib/x86_64-linux-gnu:$qroot/lib/x86_64-linux-gnu"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkfifo "$work/trace"
awk '$1 == "Trace" {
       s = $NF
       if (s == "fw_mark_end") { cur = ""; next }
       if (substr(s, 1, 8) == "fw_mark_") { cur = substr(s, 9); next }
       if (cur != "") { n[cur]++; fn[cur, s]++; split($4, f, "/"); pc[cur, f[2]]++ }
     }
     END {
       for (k in n) print "TOTAL", k, n[k]
       for (k in fn) { split(k, p, SUBSEP); print "FN", p[1], p[2], fn[k] }
       for (k in pc) { split(k, p, SUBSEP); print "PC", p[1], p[2], pc[k] }
     }' < "$work/trace" > "$work/counts" &
awk_pid=$!
timeout 600 "$qroot/usr/bin/qemu-system-arm" -M mps2-an386 -nographic -monitor none \
  -serial none -semihosting-config enable=on,target=native -singlestep -d exec,nochain \
  -D "$work/trace" -kernel "$img" > "$work/log" 2>&1 || true
wait "$awk_pid"
grep -q '^instrument: ok' "$work/log" || { cat "$work/log"; echo "FAIL: the traced run"; exit 1; }
arm-none-eabi-objdump -d --no-show-raw-insn "$img" > "$work/dis"
# The lists below end in `head`, which closes its pipe early: not a failure.
set +o pipefail
for stage in szp_encode szp_stream_encode szp_decode szp_decode_f32_step; do
  total=$(awk -v s="$stage" '$1 == "TOTAL" && $2 == s {print $3}' "$work/counts")
  echo "== $stage: $total instructions, $(awk -v c="$total" 'BEGIN {printf "%.1f", c / 4096}') per value"
  awk -v s="$stage" '$1 == "FN" && $2 == s {printf "%8.1f  %s\n", $4 / 4096, $3}' "$work/counts" |
    sort -rn | head -12 | c++filt | sed 's/^/  /'
  echo "  hottest instructions (executions, address, instruction):"
  awk -v s="$stage" '$1 == "PC" && $2 == s {print $4, $3}' "$work/counts" | sort -rn | head -"$top" |
    while read -r c a; do
      printf '  %7d  %s  %s\n' "$c" "$a" "$(awk -v a="$(printf '%x' "0x$a"):" '$1 == a {$1 = ""; print; exit}' "$work/dis")"
    done
done
