#!/usr/bin/env bash
# Runs the firmware `instrument` images (built by scripts/firmware.sh) under QEMU and compares
# their report lines with the host's (tests/tests/firmware_hash.rs, the same instrument source):
#   Cortex-M4F  qemu-system-arm -M mps2-an386            must exit 0 with the host's line
#   RV32IMAC    qemu-system-riscv32 -M virt -bios none    must exit 0 with the host's line
#   control     the M4F image on mps2-an385 (Cortex-M3, no FPU): must fail (fault or time out)
# QEMU is Debian bookworm's 7.2, unpacked into target/qemu with `apt-get download` +
# `dpkg-deb -x` together with the libraries this machine lacks; it is not installed (installing
# qemu-system-* would replace the preinstalled qemu-utils).
# Usage: scripts/qemu-firmware.sh [FIRMWARE_TARGET_DIR]   (default target/firmware)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fw=${1:-$root/target/firmware}
qdir=$root/target/qemu
secs=${QEMU_TIMEOUT:-60}

# --- QEMU 7.2 from Debian, unpacked -------------------------------------------------------
qbin=$qdir/root/usr/bin
if [ ! -x "$qbin/qemu-system-arm" ] || [ ! -x "$qbin/qemu-system-riscv32" ]; then
  rm -rf "$qdir" && mkdir -p "$qdir/debs" && chmod 777 "$qdir/debs"
  installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
  depends() {
    apt-cache depends --no-recommends --no-suggests --no-enhances --no-breaks --no-conflicts \
      --no-replaces "$1" 2>/dev/null | awk '$1 ~ /Depends:$/ && $2 !~ /^</ {print $2}'
  }
  apt-cache show qemu-system-arm >/dev/null 2>&1 || apt-get update -qq
  # The binaries' packages and the closure of their dependencies that are not installed here
  # (an installed package already has its own dependencies).
  want=(qemu-system-arm qemu-system-misc)
  i=0
  while [ $i -lt ${#want[@]} ]; do
    for d in $(depends "${want[$i]}"); do
      d=${d%:amd64}
      installed "$d" && continue
      case " ${want[*]} " in *" $d "*) ;; *) want+=("$d") ;; esac
    done
    i=$((i + 1))
  done
  echo "qemu: downloading ${want[*]}"
  (cd "$qdir/debs" && apt-get download -q "${want[@]}" >/dev/null)
  for d in "$qdir"/debs/*.deb; do dpkg-deb -x "$d" "$qdir/root"; done
fi
export LD_LIBRARY_PATH="$qdir/root/usr/lib/x86_64-linux-gnu:$qdir/root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for b in qemu-system-arm qemu-system-riscv32; do
  if ldd "$qbin/$b" | grep 'not found'; then
    echo "FAIL: $b lacks the libraries above (remove target/qemu to fetch again)"; exit 1
  fi
done
"$qbin/qemu-system-arm" --version | head -1

# --- the host's line ----------------------------------------------------------------------
# Built with the workspace's own toolchain and the feature set of `cargo test --workspace`
# (so CI reuses that step's build), not with the Debian rustc the firmware build exports.
host_log=$fw/host-report.log
mkdir -p "$fw"
if ! (cd "$root" && env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS \
      cargo test -q --workspace --test firmware_hash -- --exact \
      host_report_equals_the_recorded_firmware_report --nocapture) > "$host_log" 2>&1; then
  cat "$host_log"; echo "FAIL: the host test firmware_hash failed"; exit 1
fi
host_line=$(grep -o 'instrument: n=.*' "$host_log" | head -1)
[ -n "$host_line" ] || { cat "$host_log"; echo "FAIL: no report line from the host test"; exit 1; }
echo "host (x86_64):        $host_line"

# --- the images ---------------------------------------------------------------------------
m4=$fw/thumbv7em-none-eabihf/release/instrument
rv=$fw/riscv32imac-unknown-none-elf/release/instrument
common=(-nographic -monitor none -serial none -semihosting-config enable=on,target=native)
fail=0
run() { # NAME CMD...: output in $fw/qemu-NAME.log, status in $rc
  local name=$1; shift
  set +e
  timeout --kill-after=5 "$secs" "$@" > "$fw/qemu-$name.log" 2>&1
  rc=$?
  set -e
}
check() { # NAME LABEL: exit 0, "instrument: ok", and the host's line
  local name=$1 label=$2 line
  line=$(grep -o 'instrument: n=.*' "$fw/qemu-$name.log" | head -1 || true)
  printf '%-21s %s\n' "$label:" "${line:-<no report line>}"
  grep '^stack ' "$fw/qemu-$name.log" | sed 's/^/    /' || true
  if [ "$rc" -ne 0 ] || ! grep -q '^instrument: ok' "$fw/qemu-$name.log"; then
    echo "FAIL: $label: exit status $rc (124 = timed out after ${secs}s)"; cat "$fw/qemu-$name.log"; fail=1
  elif [ "$line" != "$host_line" ]; then
    echo "FAIL: $label: report differs from the host's"; fail=1
  else
    echo "    exit 0, checks passed, report equals the host's"
  fi
}
run m4f "$qbin/qemu-system-arm" -M mps2-an386 "${common[@]}" -kernel "$m4"
check m4f "Cortex-M4F (an386)"
# Instructions per stage (Cortex-M4F): QEMU logs every executed instruction (-singlestep: one
# instruction per translation block; -d exec,nochain: a line per block executed) into a fifo,
# and scripts/stage-counts.awk counts the lines between a stage's marker (`fw_mark_<stage>`)
# and `fw_mark_end`, the markers' own instructions excluded. Writes "<stage> <instructions>"
# lines to $fw/insn-m4f.txt; the run must pass as the one above.
fifo=$fw/qemu-m4f-trace.fifo
rm -f "$fifo" && mkfifo "$fifo"
awk -f "$root/scripts/stage-counts.awk" < "$fifo" > "$fw/insn-m4f.txt" &
awk_pid=$!
secs_saved=$secs; secs=${QEMU_TRACE_TIMEOUT:-600}
run m4f-insn "$qbin/qemu-system-arm" -M mps2-an386 "${common[@]}" -singlestep -d exec,nochain \
  -D "$fifo" -kernel "$m4"
secs=$secs_saved
wait "$awk_pid" || true
rm -f "$fifo"
check m4f-insn "M4F, traced"
sort "$fw/insn-m4f.txt" | sed 's/^/    executed instructions: /'
if [ ! -s "$fw/insn-m4f.txt" ]; then
  echo "FAIL: no instruction counts from the traced M4F run"; fail=1
fi

run rv32 "$qbin/qemu-system-riscv32" -M virt -bios none "${common[@]}" -kernel "$rv"
check rv32 "RV32IMAC (virt)"

# Negative control: the hard-float image on a Cortex-M3 must not pass.
run m3-control "$qbin/qemu-system-arm" -M mps2-an385 "${common[@]}" -kernel "$m4"
if [ "$rc" -ne 0 ] && ! grep -q '^instrument: ok' "$fw/qemu-m3-control.log" \
   && grep -q '^instrument: target' "$fw/qemu-m3-control.log"; then
  echo "control (M3, an385):  failed as it must: exit status $rc; $(grep -o 'FAULT.*' "$fw/qemu-m3-control.log" | head -1 || echo 'no fault message')"
else
  echo "FAIL: control: the M4F image on a Cortex-M3 was not reported as a failure (exit $rc)"
  cat "$fw/qemu-m3-control.log"; fail=1
fi
exit $fail
