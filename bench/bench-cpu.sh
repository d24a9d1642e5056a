#!/usr/bin/env bash
# CPU benchmark: builds bin/pathctl, makes .venv with bench/requirements.txt
# if it is missing, and runs bench/bench_cpu.py with the given arguments
# (for example --quick). The table lands in bench/results/bench-cpu.md.
set -euo pipefail
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go build -o bin/pathctl ./cmd/pathctl
if [ ! -x .venv/bin/python ]; then
	python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import numpy, scipy, pyarrow, networkx' 2>/dev/null; then
	.venv/bin/pip install -q -r bench/requirements.txt
fi
exec .venv/bin/python bench/bench_cpu.py "$@"
