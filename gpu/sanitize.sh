#!/usr/bin/env bash
# Runs the GPU suite's small-graph sets under compute-sanitizer's memcheck
# (with leak checking) and racecheck, every set in its own process so the
# twenty-six runs share the host's cores (gather and select: the narrowed
# queries' gather.cu, stats_narrow_* and select.cu, over the rows of the
# simple dijkstra kernel, which the sanitizer runs fast), with -test.short (the batched oracle
# checks then run fewer block sizes). Needs bin/gpu.test (make gpu-test).
#
#   bash gpu/sanitize.sh [seconds per run, default 520] [log directory, default sanitize-logs]
#   SANITIZE_SETS="nearfar statsslot" bash gpu/sanitize.sh   # only those sets
#
# Exits non-zero when a run fails, reports an error or hazard, or does not
# finish in time; the logs name the test and the kernel.
set -u
limit=${1:-520}
logs=$(realpath -m "${2:-sanitize-logs}")
san=${COMPUTE_SANITIZER:-compute-sanitizer}
command -v "$san" >/dev/null || san=/usr/local/cuda/bin/compute-sanitizer
cd "$(dirname "$0")"
mkdir -p "$logs"
declare -A sets=(
	[cutoff]='TestBatchedCutoff$/n=37/(int32|float64)/undirected=true'
	[cutoffplan]='TestBatchedCutoffPlan/int32'
	[small]='TestSmallCases'
	# The batched oracle checks in three runs by weight type: whole, their
	# racecheck did not finish in 440 s beside the other runs (H100, 16 CPUs),
	# nor the float half alone in 530 s (H200, 16 CPUs).
	[batched]='TestBatchedAgainstOracles/n=(1|37)/(int32|int64|unweighted)/'
	[batchedf32]='TestBatchedAgainstOracles/n=(1|37)/float32'
	[batchedf64]='TestBatchedAgainstOracles/n=(1|37)/float64'
	[leaves]='TestBatchedLeaves/int32'
	[start]='TestStartAhead|TestStartCancelled'
	[gather]='TestNarrowedAgainstCPU/n=(3|301)/(int32|int64|float32|float64)/.*/.*/dijkstra'
	[select]='TestNearestOnDevice/n=301/(int32|int64|float32|float64)/.*/.*/.*/dijkstra'
	[nearest]='TestNearestSmallCases|TestNearestDeltas|TestNearestResident|TestNearestErrors'
	[statsslot]='TestOneSlotStatsBesideStart|TestHubRowsStatsAgainstOracle/rmat11-int/|TestOneSlotStatsAgainstOracle/rmat11-int/scratch-phases'
	[nearfar]='TestBatchedNearFar$'
)
if [ -n "${SANITIZE_SETS:-}" ]; then
	for k in "${!sets[@]}"; do
		[[ " $SANITIZE_SETS " == *" $k "* ]] || unset "sets[$k]"
	done
	[ "${#sets[@]}" -gt 0 ] || { echo "sanitize.sh: no set named in SANITIZE_SETS=$SANITIZE_SETS" >&2; exit 2; }
fi
for tool in memcheck racecheck; do
	for k in "${!sets[@]}"; do
		extra=()
		[ "$tool" = memcheck ] && extra=(--leak-check full)
		timeout "$limit" "$san" --tool "$tool" "${extra[@]}" --error-exitcode 3 \
			../bin/gpu.test -test.count=1 -test.short -test.v -test.run "${sets[$k]}" >"$logs/$tool-$k.txt" 2>&1 &
	done
done
bad=0
for job in $(jobs -p); do wait "$job" || bad=1; done
for f in "$logs"/*.txt; do
	errs=$(grep -E '^========= ' "$f" | grep -cvE 'COMPUTE-SANITIZER|SUMMARY: 0 ')
	done_=$(grep -cE '^(PASS|ok)$' "$f")
	echo "$(basename "$f" .txt): $( [ "$done_" -gt 0 ] && echo finished || echo 'DID NOT FINISH') , $errs sanitizer lines beyond the summary"
	[ "$errs" -eq 0 ] && [ "$done_" -gt 0 ] || bad=1
done
exit $bad
