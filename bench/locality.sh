#!/usr/bin/env bash
# locality.sh: issue 18's comparison, on one GPU machine, of the batched
# kernel's settings and of float weights against int32 on the same R-MAT
# graphs. Every row is `pathctl bench`, GPU engine, auto, stats layout,
# every source, checked against the serial oracle on 4 sampled sources (a
# mismatch fails the row and is reported as WRONG). Settings reach the
# engine through `--tune` (keys and defaults in docs/engine.md), so one
# binary compares them all.
#
#   bench/locality.sh                 # from the repository root, after
#                                     # CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl
#
# Environment (all optional):
#   PATHCTL   the binary (bin/pathctl)
#   DIR       where graphs and reports go (a new temporary directory)
#   SCALES    R-MAT scales of the settings' rows ("16 18")
#   VARIANTS  --tune settings compared on every scale, "base" for
#             the default ("base oneslot=0 order=id";
#             oneslot=0 sizes and allocates the stats blocks with two
#             result slots, as before plan.Config.OneSlotStats: blocks a
#             third smaller (R-MAT 18 on an 80 GB device: 17.5 % of the
#             vertices instead of 26.3 %); hubrows=N keeps the rows of the
#             N vertices of highest degree on the device for blocks of
#             less than half the vertices (plan.Config.HubRows, off by
#             default; try 256 to 4096 on R-MAT 18 and 20); blockorder=0
#             runs a stats run's sources as given, not in breadth-first
#             order (plan.Config.BlockOrder); scratchmb=X
#             gives the stats blocks X MiB of working distances instead of
#             a row per source, run in slices (plan.Config.ScratchBytes,
#             off by default): blocks about twice as large (R-MAT 18 with
#             scratchmb=8192: 45 % of the vertices); seedsmin=X sets
#             the least share of the vertices a block must hold to run
#             phases, 0.1 by default)
#   FLOATS    R-MAT scales of the float rows ("16"; empty for none; R-MAT 18 with
#             fractional floats takes minutes)
#   FLOAT_VARIANTS  settings of the float rows ("base")
#   PARTIAL   R-MAT scales also run with --mem set for blocks of about a
#             sixth of the vertices ("16"; empty for none)
#   EXTRA     edge files (undirected, read by pathctl bench) run with
#             every VARIANTS setting after the R-MAT rows (none)
#   LIMIT     seconds one row may take before it is cut off (60)
#   SAMPLE    sources of every row, sampled and extrapolated (pathctl bench
#             --sample; empty: every source). R-MAT 20 every source takes
#             minutes; SAMPLE=65536 runs it in several blocks, so that
#             hubrows=N pays its hub rows once over them as a full run does
#             (one block of 8,192 would pay them in full)
#   ENGINE    the engine of the rows (gpu; cpu checks the script without a GPU)
#   PYTHON    a python3 with pyarrow (python3)
#
# Graphs (Graph500 parameters, edge factor 16, seed 1, undirected):
#   rmatS      integer weights 1..100 (int32 distances)
#   rmatSf64   float64 weights uniform in [0.1, 10] (fractional: no exact sums)
#   rmatSf32   the same weights cast to float32
#   rmatSx64, rmatSx32  the integer weights 1..100 stored as float64 and
#             float32: exact sums (plan.ExactSumsOf) where n·100 fits
#             the mantissa, so they run the integer reductions
#             (exactfloats=0 turns that off for comparison)
#   VERBOSE_RUN  0 skips the closing `pathctl run --verbose` of the largest
#             graph (its block plan and host planning time; about one row's
#             time), run under VERBOSE_SETTING (none)
# Each row prints: graph, setting, seconds, the base row's seconds over
# its own (for the float graphs, the int32 graph's base row), pairs/s,
# checked sources; the JSON reports stay in $DIR.
set -uo pipefail

bin=${PATHCTL:-bin/pathctl}
dir=${DIR:-$(mktemp -d)}
scales=${SCALES:-"16 18"}
variants=${VARIANTS:-"base oneslot=0 order=id"}
floats=${FLOATS-16}
float_variants=${FLOAT_VARIANTS:-"base"}
limit=${LIMIT:-60}
partial=${PARTIAL-16}
engine=${ENGINE:-gpu}
py=${PYTHON:-python3}
mkdir -p "$dir"
[ -x "$bin" ] || { echo "locality.sh: no binary at $bin (CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl)" >&2; exit 2; }

# cast SRC DST TYPE: SRC's weight column as TYPE (float32 or float64).
cast() {
  "$py" - "$1" "$2" "$3" <<'PY'
import sys
import pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
i = t.schema.get_field_index("weight")
t = t.set_column(i, "weight", t.column(i).cast(getattr(pa, sys.argv[3])()))
pq.write_table(t, sys.argv[2])
PY
}

for s in $(echo "$scales $floats" | tr ' ' '\n' | sort -un); do
  g="$dir/rmat$s.parquet"
  [ -f "$g" ] || "$bin" gen rmat --scale "$s" --edge-factor 16 --seed 1 --weights 1:100 -o "$g" || exit 1
done
for s in $floats; do
  f="$dir/rmat${s}f64.parquet"
  [ -f "$f" ] || "$bin" gen rmat --scale "$s" --edge-factor 16 --seed 1 --float-weights --weights 0.1:10 -o "$f" || exit 1
  [ -f "$dir/rmat${s}f32.parquet" ] || cast "$f" "$dir/rmat${s}f32.parquet" float32 || exit 1
  [ -f "$dir/rmat${s}x64.parquet" ] || cast "$dir/rmat$s.parquet" "$dir/rmat${s}x64.parquet" float64 || exit 1
  [ -f "$dir/rmat${s}x32.parquet" ] || cast "$dir/rmat$s.parquet" "$dir/rmat${s}x32.parquet" float32 || exit 1
done

# row GRAPH SETTING [FILE]: one pathctl bench row under
# --tune SETTING, of FILE (default $dir/GRAPH.parquet).
row() {
  local name=$1 setting=$2 spec=$2 file=${3:-$dir/$1.parquet} mem=${4:-} base=${5:-$dir/$1.base}
  [ "$spec" = base ] && spec=""
  local out="$dir/$name.$(echo "$setting$mem" | tr ',=' '_-').json"
  local began=$SECONDS
  local args=()
  [ -n "$mem" ] && args=(--mem "$mem")
  [ -n "${SAMPLE:-}" ] && args+=(--sample "$SAMPLE")
  [ -n "$spec" ] && args+=(--tune "$spec")
  if timeout "$limit" "$bin" bench --graphs "$file" --undirected --engine "$engine" \
      --algos auto --layout stats --check 4 --disk-graph none --json -q "${args[@]}" >"$out" 2>"$out.err"; then
    "$py" - "$out" "$name" "$setting${mem:+ --mem $mem}" "$base" <<'PY'
import json, os, sys
rep = json.load(open(sys.argv[1]))
for r in rep["rows"]:
    vs = ""
    if sys.argv[3] == "base" and os.path.basename(sys.argv[4]) == sys.argv[2] + ".base":
        open(sys.argv[4], "w").write(str(r["seconds"]))
    elif os.path.exists(sys.argv[4]):
        vs = f"{float(open(sys.argv[4]).read()) / r['seconds']:.2f}×"
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {r['n']} | {r['arcs']} | {r['seconds']:.3f} | {vs} | {r['pairs_per_second']/1e9:.2f} G | {r['checked_sources']} | {r['chosen']} |")
PY
  else
    echo "| $name | $setting${mem:+ --mem $mem} | | | FAILED after $((SECONDS - began)) s | | | | $(tail -c 300 "$out.err" | tr '\n' ' ') |"
  fi
}

echo "# bench/locality.sh on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%FT%TZ); reports in $dir"
echo
echo "| graph | setting | n | arcs | seconds | speed-up vs base | pairs/s | checked | kernel |"
echo "|---|---|---|---|---|---|---|---|---|"
for s in $scales; do
  for v in $variants; do row "rmat$s" "$v"; done
done
# Partial blocks: R-MAT 16 under --mem for blocks of about a sixth of its
# vertices with two result slots (12 bytes per source and vertex, as
# R-MAT 18's stats blocks were on an 80 GB device) and a quarter with one
# (8 bytes): what the smaller blocks cost (few minimums), and whether
# phases help them (seedsmin=0.5 keeps them to blocks of half the
# vertices, the default before 0.1), and what hub rows kept on the device
# add (hubrows=1024).
for m in $partial; do
  for v in base oneslot=0 seedsmin=0.5 hubrows=1024; do row "rmat$m" "$v" "" "$(( (1 << m) * (1 << m) / 1000000 ))MB"; done
done
for f in ${EXTRA:-}; do
  for v in $variants; do row "$(basename "${f%.*}")" "$v" "$f"; done
done
for s in $floats; do
  # Speed-ups against the int32 graph's base row: float time within 1.5×
  # of int32 reads 0.67× or more.
  for g in "rmat${s}f32" "rmat${s}f64"; do
    for v in $float_variants; do row "$g" "$v" "" "" "$dir/rmat$s.base"; done
  done
  for g in "rmat${s}x32" "rmat${s}x64"; do
    row "$g" base "" "" "$dir/rmat$s.base"
    row "$g" exactfloats=0 "" "" "$dir/rmat$s.base"
  done
done

big=$(echo "$scales" | tr ' ' '\n' | sort -n | tail -1)
if [ "${VERBOSE_RUN:-1}" = 1 ]; then
  # The block plan of the stats run: blocks holding fewer than half the
  # vertices run one phase and few minimums (gpu/internal/plan).
  echo
  vs=${VERBOSE_SETTING-}
  echo "pathctl run --verbose, --tune '$vs', rmat$big (block plan, host planning, wall-time breakdown):"
  timeout "$limit" "$bin" run "$dir/rmat$big.parquet" --undirected --layout stats -o "$dir/stats$big.arrow" --verbose ${vs:+--tune "$vs"} 2>&1 | tail -25
fi
