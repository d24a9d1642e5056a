# pathctl — build, run, test. `make run` and `make test` are the quick start.
GO        ?= go
BIN       := bin/pathctl
VENV      := .venv
PY        := $(VENV)/bin/python
# Each fuzz target runs a count of inputs, not a duration: with a duration,
# Go's fuzz coordinator (go1.26, golang/go#75804, fixed in go1.27) can
# fail a target with "context deadline exceeded" and no failing input when
# its deadline races a worker (seen in CI on FuzzReadParquet). 20000
# inputs take about as long as the 8 s a target did (2-core machine).
FUZZTIME  ?= 20000x
# The one version of the binary and of the Python package (python/setup.py reads it too).
VERSION   := $(shell cat VERSION)
export CGO_ENABLED := 0
# bash for pipefail: a recipe's pipeline fails when its first command does.
SHELL     := /bin/bash

.PHONY: fixtures all build run test test-go venv wheel test-wheel test-race fuzz test-python kernels kernels-check gpu-test bench-cpu bench-resident bench-betweenness bench-betweenness-gpu bench-dataset bench-road bench bench-devices bench-plot bench-export clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/pathctl

# The main job on the bundled sample graph: all-pairs shortest paths (GPU where
# one is usable, else every CPU core), written as an Arrow IPC file.
# It prints four lines: the run's summary (pathctl's one line, cut after the
# figures and after the algorithm) and the five most central vertices.
run: build
	@mkdir -p out
	@set -o pipefail; $(BIN) run testdata/sample.parquet -o out/sample-apsp.arrow 2>&1 \
		| sed -e 's/, engine /\n  engine /' -e 's/; \([0-9]* rows\)/\n  \1/'
	@$(BIN) run testdata/sample.parquet --layout stats -o out/sample-stats.csv --quiet
	@sort -t, -k6 -g -r out/sample-stats.csv | awk -F, '$$1 != "source" && n < 5 \
		{ printf "%s%s (%.1f)", n++ ? ", " : "top 5 by harmonic centrality (out/sample-stats.csv): ", $$1, $$6 } \
		END { print "" }'

# make test: the binary and the venv first, then the steps two at a time (the
# machine's two cores: one step alone leaves a core idle while it waits on
# its subprocesses, links or downloads), longest first. Each step's lines
# come out as they are printed, prefixed with its name (and go to
# out/test/STEP.log); a line says what is still running when all is quiet
# for 50 s; the last two lines give the GPU tests skipped for want of a GPU,
# and each step's time and the total (.ci/steps.py). TEST_JOBS=1 runs the
# steps one after the other.
TEST_JOBS  ?= 2
TEST_STEPS := test-race test-python test-go fuzz kernels-check test-wheel
test:
	@MAKE="$(MAKE)" python3 .ci/steps.py --jobs $(TEST_JOBS) --first build --first venv $(TEST_STEPS)

# go test through .ci/gotest.py: the lines plain go test prints, then a count
# of the tests passed, failed and skipped, GPU tests skipped for want of a
# GPU named apart; GO_SKIPS (set by make test) collects the skipped tests.
GOTEST = python3 .ci/gotest.py $(if $(GO_SKIPS),--skips $(GO_SKIPS)) --label

# The gpu package again with the pathctl_debug tag (a synchronise and check
# after every launch): its tests run on fake drivers without a GPU.
test-go: build
	$(GO) vet ./...
	@echo "go test -count=1 ./... (a line per package as it finishes)"
	@$(GOTEST) "go test ./..." -- $(GO) test -count=1 ./...
	$(GO) vet -tags pathctl_debug ./gpu/...
	@echo "go test -count=1 -tags pathctl_debug ./gpu"
	@$(GOTEST) "go test -tags pathctl_debug ./gpu" -- $(GO) test -count=1 -tags pathctl_debug ./gpu

# The race detector needs cgo; it runs on the packages with concurrency.
RACE_PKGS := ./cpu/... ./graph/... ./pipeline/... ./arrowio/... ./flight/... ./gpu/internal/plan/... ./gpu/devices/...
test-race:
	@echo "go test -race -short $(RACE_PKGS) (a line per package as it finishes)"
	@CGO_ENABLED=1 $(GOTEST) "go test -race" -- $(GO) test -count=1 -race -short $(RACE_PKGS)

FUZZ_TARGETS := arrowio:FuzzReadCSV arrowio:FuzzReadIPC arrowio:FuzzIPCMessageBytes arrowio:FuzzReadParquet arrowio:FuzzReadDIMACS graph:FuzzBuild flight:FuzzParseQuery flight:FuzzQueryRanges flight:FuzzParseUploadOptions flight:FuzzValidateName
# One instrumented test binary per package (go test -fuzz would link it again
# for each target), run from the package's directory as go test runs it: the
# seeds and any failing input in testdata/fuzz/, the generated corpus in go's
# fuzz cache.
fuzz:
	@mod=$$($(GO) list -m); cache=$$($(GO) env GOCACHE)/fuzz; mkdir -p bin/fuzz; \
	for pkg in $(sort $(foreach t,$(FUZZ_TARGETS),$(firstword $(subst :, ,$(t))))); do \
		targets=$$(for t in $(FUZZ_TARGETS); do [ "$${t%%:*}" = $$pkg ] && echo "$${t##*:}"; done); \
		echo "fuzz $$pkg: building the instrumented test binary for" $$targets; \
		$(GO) test -c -fuzz . -o bin/fuzz/$$pkg.test ./$$pkg || exit 1; \
		for fn in $$targets; do \
			echo "fuzz $$pkg $$fn, $(FUZZTIME)"; \
			(cd $$pkg && ../bin/fuzz/$$pkg.test -test.run '^$$' -test.fuzz "^$$fn\$$" -test.fuzztime $(FUZZTIME) \
				-test.fuzzcachedir "$$cache/$$mod/$$pkg" -test.paniconexit0 -test.timeout 10m) || exit 1; \
		done; \
	done

# Kernel image: `make kernels` rebuilds gpu/kernels/kernels.fatbin and the
# kernel table gpu/kernels_gen.go; `kernels-check` compiles the sources without
# touching the committed image, so a broken .cu fails CI. The compiler (CUDA
# 11.8 and g++-11, from Debian's packages) is fetched into .cache/cuda, not
# installed; without root and without a way to fetch it, the check is skipped
# with a line saying why.
kernels:
	bash gpu/kernels/build.sh

kernels-check:
	bash gpu/kernels/build.sh --check

# Test binaries (without cgo, as bin/pathctl) for the GPU machine (see ../shared/gpu.md): send bin/
# there and run bin/gpu-test.sh.
gpu-test: build
	$(GO) test -c -o bin/gpu.test ./gpu
	$(GO) test -c -o bin/pipeline.test ./pipeline
	$(GO) test -c -o bin/flight.test ./flight
	$(GO) test -c -o bin/devices.test ./gpu/devices
	cp gpu/gpu-test.sh bin/gpu-test.sh

# The test venv (about 1.4 GB with pyspark), made once: the stamp is newer
# than what it installs from until one of those changes.
PIP = -m pip install --progress-bar off --disable-pip-version-check
venv: $(VENV)/.installed
	@:
$(VENV)/.installed: VERSION python/setup.py python/pyproject.toml python/requirements-test.txt bench/requirements.txt
	python3 -m venv $(VENV)
	$(PY) $(PIP) --quiet --upgrade pip
	@echo "pip: installing python/requirements-test.txt and bench/requirements.txt into $(VENV) (minutes on the first run)"
	$(PY) $(PIP) -r python/requirements-test.txt -r bench/requirements.txt
	$(PY) $(PIP) -e ./python
	touch $@

# make wheel needs only setuptools (python/requirements-wheel.txt), in a venv
# of its own: not the test venv.
WHEEL_VENV := .cache/venv-wheel
WHEEL_PY   := $(WHEEL_VENV)/bin/python
$(WHEEL_VENV)/.installed: python/requirements-wheel.txt
	python3 -m venv $(WHEEL_VENV)
	$(WHEEL_PY) $(PIP) -r python/requirements-wheel.txt
	touch $@

test-python: build $(VENV)/.installed
	PATHCTL_BIN=$(CURDIR)/$(BIN) $(PY) -m pytest -q python/tests bench/test_bench_cpu.py bench/test_bench_gpu.py bench/test_bench_queries.py bench/test_bench_flight.py bench/test_plot_scaling.py bench/test_bench_devices.py bench/test_bench_betweenness.py bench/test_bench_betweenness_gpu.py bench/test_bench_dataset.py bench/test_bench_road.py .ci/test_make.py

# Platform wheels with the binary inside (manylinux_2_17 x86_64 and aarch64)
# in dist/: `pip install dist/pathctl-*-manylinux*_x86_64*.whl` brings the engine.
WHEEL_ARCHS ?= amd64 arm64
wheel: $(WHEEL_VENV)/.installed
	$(WHEEL_PY) python/tools/build_wheels.py --version $(VERSION) --out dist $(WHEEL_ARCHS)

# This machine's wheel, installed in a fresh venv with no Go and no pathctl
# on PATH, runs the README's Python example.
test-wheel: $(WHEEL_VENV)/.installed
	$(MAKE) --no-print-directory wheel WHEEL_ARCHS=$(shell $(GO) env GOARCH)
	$(WHEEL_PY) python/tools/check_wheel.py dist/pathctl-$(VERSION)-py3-none-*$(shell uname -m)*.whl

bench-cpu: build $(VENV)/.installed
	$(PY) bench/bench_cpu.py $(BENCH_ARGS)

# Exact weighted betweenness of R-MAT 14 (weights 1..100) on the CPU engine
# against NetworKit's Betweenness, both on 2 threads, 3 interleaved rounds,
# checked against each other. NetworKit comes from the ignored venv .peers
# (python3 -m venv .peers && .peers/bin/pip install networkit); without it
# the run says so in one line and times pathctl alone.
bench-betweenness: build $(VENV)/.installed
	$(PY) bench/bench_betweenness.py $(BENCH_ARGS)

# Betweenness on the GPU engine: R-MAT 16 and 18 exact, R-MAT 20 from 1,024
# sampled sources, a 1000² grid from 4,096 (its exact time extrapolated),
# each checked in the same run against networkx (R-MAT 16) or the CPU
# engine on sampled sources.
bench-betweenness-gpu: build $(VENV)/.installed
	$(PY) bench/bench_betweenness_gpu.py --pathctl $(BIN) $(BENCH_ARGS)

# Results larger than one file: the disk's sequential write, R-MAT 16's
# pairs as one Parquet file and as a dataset, and the dataset killed at
# half and resumed, in a temporary folder of the current directory
# (--dir elsewhere; GPU engine, BENCH_ARGS="--engine cpu" without one).
bench-dataset: build $(VENV)/.installed
	$(PY) bench/bench_dataset.py --pathctl $(BIN) $(BENCH_ARGS)

# Road networks: pathctl's contraction hierarchy (index, OD 4096 × 4096 with
# and without it, one pair) against RoutingKit's CCH (routingkit-cch, where
# it imports: pip install --target DIR routingkit-cch, then PYTHONPATH=DIR)
# on a 1000² grid, every answer checked against scipy.
bench-road: build $(VENV)/.installed
	PATHCTL_BIN=$(CURDIR)/$(BIN) $(PY) bench/bench_road.py $(BENCH_ARGS)

# A graph that stays loaded (pathctl.load): a repeated g.sssp(s) on a
# 30,000-vertex grid, CPU engine, against pathctl.sssp and scipy.
bench-resident: build $(VENV)/.installed
	PATHCTL_BIN=$(CURDIR)/$(BIN) $(PY) bench/bench_resident.py $(BENCH_ARGS)

# The bundled sample graphs in testdata/, rebuilt deterministically.
fixtures:
	$(GO) run ./internal/cmd/mkfixtures

# On a GPU machine: the GPU engine's algorithms against the CPU engine and scipy,
# with every row also in bench/results/bench-gpu.csv, then the scaling curve.
bench: build $(VENV)/.installed
	PATHCTL_BIN=$(CURDIR)/$(BIN) $(PY) bench/bench_gpu.py $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-plot

# On a machine of several GPUs: R-MAT 18 stats of every source on every
# device and on the first alone, in turn (issue 19's ratio), checked.
bench-devices: build $(VENV)/.installed
	$(PY) bench/bench_devices.py --pathctl $(BIN) --out bench/results/bench-devices.md $(BENCH_ARGS)

# The scaling curve (seconds against n × arcs, log-log) from the records of
# make bench; where the GPU machine has no matplotlib, copy its
# bench/results/bench-gpu.csv here and run this.
BENCH_RECORDS ?= bench/results/bench-gpu.csv
bench-plot: $(VENV)/.installed
	$(PY) bench/plot_scaling.py $(BENCH_RECORDS) -o bench/results/scaling.png

# The real graphs of make bench (graph-tool's collection), with Debian's
# python3-graph-tool installed: bench/results/data/NAME.{parquet,csv,json}.
bench-export:
	/usr/bin/python3 bench/export_graph_tool.py

clean:
	rm -rf bin out dist
