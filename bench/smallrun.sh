#!/usr/bin/env bash
# smallrun.sh: issue 18's small run, on the GPU machine: the wall time of
# `pathctl run rmat16.parquet --undirected --layout stats -o s.arrow`, from
# the shell's clock around the process (start to exit) and from -v's own
# line (start to the output closed), after a warm-up run.
#
#   bash bench/smallrun.sh            # from the repository root, after
#                                     # CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl
#
# Environment (all optional):
#   PATHCTL  the binary (bin/pathctl)
#   DIR      where the graph and the outputs go (/dev/shm/pathctl-smallrun)
#   RUNS     runs (5)
#   SCALE    the R-MAT scale (16), edge factor 16, made by pathctl gen
#
# It prints one line per run (seconds to exit, -v's wall time), then the
# last run's -v lines: where the CSR was built, the blocks' times and the
# wall-time split.
set -euo pipefail
PATHCTL=${PATHCTL:-bin/pathctl}
DIR=${DIR:-/dev/shm/pathctl-smallrun}
RUNS=${RUNS:-5}
SCALE=${SCALE:-16}
mkdir -p "$DIR"
graph=$DIR/rmat$SCALE.parquet
[ -f "$graph" ] || "$PATHCTL" gen rmat --scale "$SCALE" --edge-factor 16 -o "$graph" >/dev/null 2>&1

once() { # log file: one run; prints the seconds to exit
	local t0 t1
	t0=$(date +%s.%N)
	"$PATHCTL" run "$graph" --undirected --layout stats -o "$DIR/s.arrow" -v 2>"$1"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
once "$DIR/warm.txt" >/dev/null
for i in $(seq "$RUNS"); do
	secs=$(once "$DIR/v.txt")
	wall=$(grep -o 'wall time [^ ]*' "$DIR/v.txt" || echo 'wall time ?')
	echo "run $i: ${secs} s to exit; -v: $wall"
done
echo "--- last run:"
grep -E '^pathctl: (CSR built|time |wall time)' "$DIR/v.txt" || true
