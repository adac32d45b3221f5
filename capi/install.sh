#!/usr/bin/env bash
# Builds libpernix (release) and installs headers, libraries, the Fortran module source, a
# pkg-config file and a CMake package config under PREFIX.
#   capi/install.sh PREFIX            (CARGO_TARGET_DIR is honoured)
set -euo pipefail
prefix=${1:?usage: capi/install.sh PREFIX}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
target=${CARGO_TARGET_DIR:-$root/target}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
cargo build --release --quiet -p fzpack-capi --manifest-path "$root/Cargo.toml" --target-dir "$target"
mkdir -p "$prefix"/{include/pernix,lib/pkgconfig,lib/cmake/pernix,share/pernix/fortran}
prefix=$(cd "$prefix" && pwd)
install -m 644 "$here"/include/pernix/*.h "$here"/include/pernix/*.hpp "$prefix/include/pernix/"
mkdir -p "$prefix/include/fzpack" && install -m 644 "$here"/include/fzpack/*.h "$prefix/include/fzpack/"
# The shared library carries the SONAME libpernix.so.0 (capi/build.rs): install the file under
# its full version and the two usual links.
install -m 755 "$target/release/libpernix.so" "$prefix/lib/libpernix.so.$version"
ln -sf "libpernix.so.$version" "$prefix/lib/libpernix.so.0"
ln -sf libpernix.so.0 "$prefix/lib/libpernix.so"
install -m 644 "$target/release/libpernix.a" "$prefix/lib/"
install -m 644 "$here/fortran/pernix.f90" "$prefix/share/pernix/fortran/"
sed "s|@PREFIX@|$prefix|; s|@VERSION@|$version|" "$here/cmake/pernix.pc.in" > "$prefix/lib/pkgconfig/pernix.pc"
sed "s|@VERSION@|$version|" "$here/cmake/pernixConfig.cmake.in" > "$prefix/lib/cmake/pernix/pernixConfig.cmake"
sed "s|@VERSION@|$version|" "$here/cmake/pernixConfigVersion.cmake.in" > "$prefix/lib/cmake/pernix/pernixConfigVersion.cmake"
echo "installed libpernix $version to $prefix"
