#!/usr/bin/env bash
# RUSTC_WRAPPER for scripts/firmware.sh: compiles the codec crates (fzpack-core and the
# firmware crate) as a stable rustc compiles them, while -Zbuild-std builds `core` with
# RUSTC_BOOTSTRAP=1. A bootstrapped rustc sets cfg(target_feature) for unstable FPU features
# (`fpregs`, `vfp2` on Arm, `f`/`d` on RISC-V) and a stable one does not, so a bootstrapped
# build alone cannot show what a rustup user with a prebuilt target gets.
# Usage (cargo calls it): stable-rustc.sh RUSTC ARGS...
set -euo pipefail
rustc=$1
shift
case " $* " in
  *" --crate-name fzpack_core "* | *" --crate-name fzpack_firmware "*) ;;
  *) exec "$rustc" "$@" ;;
esac
# Cargo links the build-std crates with `--extern noprelude,nounused:NAME=PATH` and
# `-Z unstable-options`; plain `--extern NAME=PATH` is what a prebuilt sysroot amounts to.
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -Z)
      if [ "${2:-}" != unstable-options ]; then args+=("$1" "${2:-}"); fi
      shift 2
      continue
      ;;
    noprelude,nounused:*) args+=("${1#noprelude,nounused:}") ;;
    *) args+=("$1") ;;
  esac
  shift
done
exec env -u RUSTC_BOOTSTRAP "$rustc" "${args[@]}"
