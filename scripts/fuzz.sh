#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time on the machine's nightly toolchain.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60; decoders get twice that)
# A crash fails the script and prints the reproducer (also left in fuzz/artifacts/TARGET/).
# The libFuzzer seed is fixed (FUZZ_SEED, default 1) so a CI failure can be replayed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
secs=${1:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
cargo +nightly fuzz build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in $(cargo +nightly fuzz list); do
  limit=$secs
  case $t in *decode*) limit=$((secs * 2)) ;; esac
  mkdir -p "$work/$t"
  [ -d "corpus/$t" ] && cp corpus/"$t"/* "$work/$t/" 2>/dev/null || true
  echo "fuzz: $t for ${limit}s"
  if ! cargo +nightly fuzz run "$t" "$work/$t" -- -max_total_time="$limit" -seed="${FUZZ_SEED:-1}" -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 2>"$work/$t.log"; then
    tail -n 40 "$work/$t.log"
    for a in artifacts/"$t"/*; do
      [ -f "$a" ] && { echo "reproducer $a:"; od -A x -t x1z "$a" | head -n 40; }
    done
    exit 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|Done)' "$work/$t.log" || true
done
