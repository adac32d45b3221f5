#!/usr/bin/env bash
# Runs every cargo-fuzz target on the machine's nightly toolchain, each bounded in time.
#   scripts/fuzz.sh [SECONDS]     (default 60: the base; CI passes 60)
# A decoder target (one that parses untrusted archive bytes) runs until it has executed
# FUZZ_RUNS inputs (default 10^6) or its time cap, whichever comes first; the two round-trip
# targets (generated data, not decoders) run for their cap. Caps are multiples of the base,
# sized so that an AVX2-only Zen 1 (the slowest CI machine so far) reaches 10^6 everywhere:
#   target                 cap     exec/s Zen 1 (15 s runs, 2026-12-04)   time to 10^6 there
#   szp_ops                6.2     ~5.0k (1.9k before one-op-per-input)    ~200 s
#   szp_decode_untrusted   3.2     ~18.6k (4.9k before reused outputs)     ~55 s
#   pnx_stream_decode      1.6     ~18.8k                                  ~55 s
#   fzm_decode_untrusted   1.0     ~48k (12.5k before reused outputs)      ~21 s
#   cli_container          1.0     ~30k                                    ~33 s
#   pernix_paths, szp_roundtrip, szp_interp_tile    0.3 each
# So the step takes ~7 min there and less on faster machines (at most 13.6 x base = 816 s).
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
    pnx_stream_decode) echo 16 ;;
    cli_container) echo 10 ;;
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
  runs=-1
  is_decoder "$t" && runs=${FUZZ_RUNS:-1000000}
  if [ "$runs" -gt 0 ]; then echo "fuzz: $t for $runs inputs or ${limit}s"; else echo "fuzz: $t for ${limit}s"; fi
  mkdir -p "artifacts/$t"
  if ! "$bins/$t" "$work/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$limit" -runs="$runs" \
      -seed="${FUZZ_SEED:-1}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 2>"$work/$t.log"; then
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
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/$t.log" | tail -n 1)
  summary+=("$(printf '%-22s cap %4ss took %4ss %10s execs %8s exec/s%s' "$t" "$limit" "${took:-$limit}" "${execs:-?}" "${rate:-?}" "$note")")
done
echo "fuzz summary (base ${secs}s):"
printf '  %s\n' "${summary[@]}"
