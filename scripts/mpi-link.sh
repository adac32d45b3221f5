#!/usr/bin/env bash
# Compressed MPI allreduce vs raw MPI_Allreduce on a real, shaped link on one machine.
#
# As root: a private network namespace whose loopback is shaped with tc (token bucket:
# `tbf rate R burst 4mb latency 50ms`); both ranks run inside it with OpenMPI's TCP transport
# restricted to that loopback, so all traffic stays on the namespace's lo. Both directions share
# lo's one queue: a stricter link than a full-duplex NIC of the same rate. The namespace is
# deleted on exit.
#
#   scripts/mpi-link.sh            1, 2.5 and 10 Gb/s; 2 ranks (4 too where the machine has
#                                  4 or more cores), one core each; then the bandwidth model
#                                  driven by codec speeds measured in this run
#   scripts/mpi-link.sh --ci       one rate (2.5 Gb/s), a small field, 2 ranks (~1 minute)
#
# Field: $FZPACK_DATA (default ../shared/data) /ferret_etopo5_2161x4320.f32 (the CI mode: the
# geoid field), at ABS 1e-4 of its value range (`--mode noa --eb 1e-4`); a generated field of
# the same size when the file is absent. Every run checks the bound on every element of every
# rank's result (the example exits non-zero otherwise). Environment: MPI_LINK_RATES (e.g.
# "2500mbit 10gbit"), MPI_LINK_NP, MPI_LINK_CHUNKS (pipeline chunk sweep, values),
# MPI_LINK_REPS. Without namespaces (no root, no CAP_NET_ADMIN) it prints why and exits 0,
# or 1 under FZPACK_REQUIRE_TOOLS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
CI=0
[ "${1:-}" = "--ci" ] && CI=1
skip() {
  echo "mpi-link.sh: SKIP: $*"
  [ "${FZPACK_REQUIRE_TOOLS:-0}" = 1 ] && exit 1
  exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (network namespace and tc)"
need_apt=()
command -v ip >/dev/null && command -v tc >/dev/null || need_apt+=(iproute2)
if ! command -v mpirun >/dev/null || ! [ -e /usr/include/x86_64-linux-gnu/openmpi/mpi.h -o -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  need_apt+=(libopenmpi-dev openmpi-bin libclang-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || skip "missing ${need_apt[*]} and no apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
NS="fzpack-mpi-$$"
ip netns add "$NS" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip -n "$NS" link set lo up
ip netns exec "$NS" tc qdisc replace dev lo root tbf rate 1gbit burst 4mb latency 50ms \
  || skip "cannot shape the namespace's loopback with tc tbf"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/mpi}"
cargo build -q --release -p fzpack --features mpi --example allreduce --example codec_speeds
EX="$CARGO_TARGET_DIR/release/examples/allreduce"
CODEC="$CARGO_TARGET_DIR/release/examples/codec_speeds"

DATA="${FZPACK_DATA:-../shared/data}"
if [ "$CI" = 1 ]; then
  FILE="$DATA/proj_egm96_geoid_721x1440.f32"; N=1038240
  RATES=(${MPI_LINK_RATES:-2500mbit}); NPS=(${MPI_LINK_NP:-2}); REPS=${MPI_LINK_REPS:-3}
else
  FILE="$DATA/ferret_etopo5_2161x4320.f32"; N=9335520
  RATES=(${MPI_LINK_RATES:-1gbit 2500mbit 10gbit}); REPS=${MPI_LINK_REPS:-5}
  if [ -n "${MPI_LINK_NP:-}" ]; then NPS=($MPI_LINK_NP)
  elif [ "$(nproc)" -ge 4 ]; then NPS=(2 4)
  else NPS=(2); fi
fi
if [ -f "$FILE" ]; then SRC=(--input "$FILE"); NAME=$(basename "$FILE")
else SRC=(--n "$N"); NAME="generated field, n=$N (no $FILE)"; fi
CHUNKS=(${MPI_LINK_CHUNKS:-default})
echo "mpi-link.sh: $NAME, ABS 1e-4 of its range, machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$(nproc)" -ge 4 ] || echo "mpi-link.sh: $(nproc) cores: 4 ranks not run (one core per rank)"

rows=()
for rate in "${RATES[@]}"; do
  ip netns exec "$NS" tc qdisc replace dev lo root tbf rate "$rate" burst 4mb latency 50ms
  for np in "${NPS[@]}"; do
    bind=(--bind-to core)
    [ "$(nproc)" -ge "$np" ] || bind=(--oversubscribe --bind-to none)
    for ch in "${CHUNKS[@]}"; do
      chunk=()
      [ "$ch" = default ] || chunk=(--chunk "$ch")
      line=$(timeout 600 ip netns exec "$NS" mpirun --allow-run-as-root -np "$np" "${bind[@]}" \
        --mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        "$EX" "${SRC[@]}" --eb 1e-4 --mode noa --reps "$REPS" "${chunk[@]}")
      echo "$rate np=$np chunk=$ch: $line"
      rows+=("$(echo "$line" | sed -E "s/.*ranks=([0-9]+) n=[0-9]+ max_err=([^ ]+) bound=([^ ]+) raw_ms=([^ ]+) compressed_ms=([^ ]+) ratio=([^ ]+)/| $rate | \1 | $ch | \4 | \5 | \6 | \3 | \2 |/")")
    done
  done
done
echo
echo "| link (tc tbf on lo) | ranks | chunk | raw ms | compressed ms | raw/compressed | bound | max error |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"

if [ "$CI" = 0 ]; then
  echo
  # Codec speeds on one core (this run's), then the bandwidth model driven by them.
  speeds=$(taskset -c 0 "$CODEC" "${SRC[@]}" --eb 1e-4 --mode noa)
  echo "$speeds"
  python3 scripts/mpi-model.py --codec "$speeds"
fi
echo "mpi-link.sh: ok"
