#!/usr/bin/env bash
# Installs NVRTC (the CUDA runtime compiler library; no GPU needed) from Debian's non-free
# component, so fzpack-gpu's test can compile every kernel to PTX: packages libnvrtc11.2 (the
# library, NVRTC 11.8 under its 11.2 soname) and libnvrtc-builtins11.8. Idempotent: does nothing
# when the library already loads.
#
# non-free is enabled through a separate source file of our own
# (/etc/apt/sources.list.d/fzpack-nvrtc-non-free.sources); the system's sources are not edited.
# The library is not redistributable: it is installed on the machine, never committed.
#
# cudarc loads "libnvrtc.so" (or libnvrtc.so.<major>) by name; Debian ships only the versioned
# libnvrtc.so.11.2, so the unversioned link is added next to it.
set -euo pipefail
start=$(date +%s)
arch_dir=/usr/lib/x86_64-linux-gnu
have() { ldconfig -p | grep -q 'libnvrtc\.so '; }
if have && ldconfig -p | grep -q 'libnvrtc-builtins'; then
  echo "nvrtc: already installed ($(ldconfig -p | grep -o 'libnvrtc\.so\.[0-9.]*' | head -1))"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "nvrtc: needs root (apt-get)" >&2
  exit 1
fi
. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}
uri=http://deb.debian.org/debian
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  # The system's own Debian mirror (first URIs line), so the same mirror serves non-free.
  u=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  [ -n "$u" ] && uri=$u
fi
src=/etc/apt/sources.list.d/fzpack-nvrtc-non-free.sources
if [ ! -f "$src" ]; then
  cat >"$src" <<EOS
# Added by fzpack scripts/nvrtc.sh: Debian non-free, for libnvrtc11.2 / libnvrtc-builtins11.8.
Types: deb
URIs: $uri
Suites: $codename $codename-updates
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  libnvrtc11.2 libnvrtc-builtins11.8
lib=$(ls "$arch_dir"/libnvrtc.so.* 2>/dev/null | grep -v builtins | head -1)
if [ -z "$lib" ]; then
  echo "nvrtc: libnvrtc.so.* not found after install" >&2
  exit 1
fi
[ -e "$arch_dir/libnvrtc.so" ] || ln -s "$(basename "$lib")" "$arch_dir/libnvrtc.so"
ldconfig
have || { echo "nvrtc: libnvrtc.so still not loadable" >&2; exit 1; }
echo "nvrtc: installed $(basename "$lib") in $(( $(date +%s) - start )) s"
