#!/usr/bin/env bash
# smallrun.sh: issue 18's small run, on the GPU machine: the wall time of
# `pathctl run rmat16.parquet --undirected --layout stats -o s.arrow`, from
# the shell's clock around the process (start to exit) and from -v's own
# line (start to the output closed), with the GPU kernel's plan made beside
# the device's opening and without it (PATHCTL_PLAN_AHEAD=off), in
# alternating runs after a warm-up of each.
#
#   bash bench/smallrun.sh            # from the repository root, after
#                                     # CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl
#
# Environment (all optional):
#   PATHCTL  the binary (bin/pathctl)
#   DIR      where the graph and the outputs go (/dev/shm/pathctl-smallrun)
#   RUNS     runs of each setting (5)
#   SCALE    the R-MAT scale (16), edge factor 16, made by pathctl gen
#
# It prints one line per run (setting, seconds to exit, -v's wall time),
# then each setting's last -v lines: where the CSR was built, the blocks'
# times and the wall-time split.
set -euo pipefail
PATHCTL=${PATHCTL:-bin/pathctl}
DIR=${DIR:-/dev/shm/pathctl-smallrun}
RUNS=${RUNS:-5}
SCALE=${SCALE:-16}
mkdir -p "$DIR"
graph=$DIR/rmat$SCALE.parquet
[ -f "$graph" ] || "$PATHCTL" gen rmat --scale "$SCALE" --edge-factor 16 -o "$graph" >/dev/null 2>&1

settings=(on off)
once() { # setting, log file: one run; prints the seconds to exit
	local t0 t1
	t0=$(date +%s.%N)
	PATHCTL_PLAN_AHEAD=$1 "$PATHCTL" run "$graph" --undirected --layout stats -o "$DIR/s-$1.arrow" -v 2>"$2"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
for s in "${settings[@]}"; do
	once "$s" "$DIR/warm-$s.txt" >/dev/null
done
for i in $(seq "$RUNS"); do
	for s in "${settings[@]}"; do
		secs=$(once "$s" "$DIR/v-$s.txt")
		wall=$(grep -o 'wall time [^ ]*' "$DIR/v-$s.txt" || echo 'wall time ?')
		echo "PATHCTL_PLAN_AHEAD=$s run $i: ${secs} s to exit; -v: $wall"
	done
done
for s in "${settings[@]}"; do
	echo "--- PATHCTL_PLAN_AHEAD=$s, last run:"
	grep -E '^pathctl: (CSR built|time |wall time)' "$DIR/v-$s.txt" || true
done
cmp -s "$DIR/s-on.arrow" "$DIR/s-off.arrow" && echo "the two settings wrote the same file" || { echo "the two settings wrote different files"; exit 1; }
