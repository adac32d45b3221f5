#!/usr/bin/env bash
# Compressed MPI collectives (fzpack feature `mpi`): installs OpenMPI and libclang (bindgen),
# builds, runs the MPI tests (compressed allreduce vs MPI_Allreduce of the raw floats, bound
# per element, identical on every rank, uniform errors) under mpirun -np 2 and -np 4, and the
# allreduce example. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mpirun >/dev/null || ! [ -e /usr/include/x86_64-linux-gnu/openmpi/mpi.h -o -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] || ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev >/dev/null
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/mpi}"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
export OMPI_MCA_rmaps_base_oversubscribe=1
cargo build -q -p fzpack --features mpi --tests
TEST_BIN=$(cargo test -q -p fzpack --features mpi --test mpi --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$TEST_BIN" ] || { echo "mpi.sh: MPI test binary not found"; exit 1; }
for np in 2 4; do
  echo "mpi.sh: tests at -np $np"
  timeout 600 "${MPIRUN[@]}" -np "$np" "$TEST_BIN" --test-threads=1
done
cargo build -q --release -p fzpack --features mpi --example allreduce
EX="$CARGO_TARGET_DIR/release/examples/allreduce"
for np in 2 4; do
  timeout 600 "${MPIRUN[@]}" -np "$np" "$EX" --eb 1e-3 --mode abs --n "${MPI_N:-4194304}"
done
echo "mpi.sh: ok"
