#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time on the machine's nightly toolchain.
#   scripts/fuzz.sh [SECONDS]     (default 60: the base; CI passes 60)
# Time per target is a multiple of the base, sized so that at CI speed every decoder target
# (a target that parses untrusted archive bytes) reaches >= 10^6 executions, while the whole
# step stays near 12 minutes at base 60 (sum of the factors below: 12.0 x base = 720 s):
#   target                 factor   exec/s (CI 097abda)   execs expected at base 60
#   szp_decode_untrusted   3.2      ~5.9k                 ~1.1M
#   szp_ops                6.2      ~3.1k (0.94M at 5.0)  ~1.15M
#   fzm_decode_untrusted   1.0      ~19k                  ~1.15M
#   pnx_stream_decode      0.6      ~33k                  ~1.2M
#   cli_container          0.4      ~49k (1.77M at 0.6)   ~1.2M
#   pernix_paths, szp_roundtrip (round trips of generated data, not decoders): 0.3 each
# A crash fails the script and prints the reproducer (also left in fuzz/artifacts/TARGET/).
# The libFuzzer seed is fixed (FUZZ_SEED, default 1) so a CI failure can be replayed.
# At the end: executions per target, and a warning for each decoder target below 10^6.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
secs=${1:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
cargo +nightly fuzz build
# Run the binaries of that one build (`cargo fuzz run` would rebuild whenever the tree changed
# in between, so targets could run different builds).
bins=target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# factor in tenths of the base
tenths() {
  case $1 in
    szp_decode_untrusted) echo 32 ;;
    szp_ops) echo 62 ;;
    fzm_decode_untrusted) echo 10 ;;
    pnx_stream_decode) echo 6 ;;
    cli_container) echo 4 ;;
    *) echo 3 ;;
  esac
}
is_decoder() {
  case $1 in *decode* | szp_ops | cli_container) return 0 ;; *) return 1 ;; esac
}
summary=()
for t in $(cargo +nightly fuzz list); do
  limit=$(((secs * $(tenths "$t") + 9) / 10))
  [ "$limit" -lt 1 ] && limit=1
  mkdir -p "$work/$t"
  [ -d "corpus/$t" ] && cp corpus/"$t"/* "$work/$t/" 2>/dev/null || true
  echo "fuzz: $t for ${limit}s"
  mkdir -p "artifacts/$t"
  if ! "$bins/$t" "$work/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$limit" -seed="${FUZZ_SEED:-1}" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 2>"$work/$t.log"; then
    tail -n 40 "$work/$t.log"
    for a in artifacts/"$t"/*; do
      [ -f "$a" ] && { echo "reproducer $a:"; od -A x -t x1z "$a" | head -n 40; }
    done
    exit 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|Done)' "$work/$t.log" || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t.log" | tail -n 1)
  note=""
  if is_decoder "$t" && [ "${execs:-0}" -lt 1000000 ]; then note="  (decoder below 10^6)"; fi
  summary+=("$(printf '%-22s %5ss %12s execs %8s exec/s%s' "$t" "$limit" "${execs:-?}" "${rate:-?}" "$note")")
done
echo "fuzz summary (base ${secs}s):"
printf '  %s\n' "${summary[@]}"
