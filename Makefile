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

.PHONY: fixtures all build run test test-go wheel test-wheel test-race fuzz test-python kernels kernels-check gpu-test bench-cpu bench-resident bench bench-devices bench-plot bench-export clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/pathctl

# The main job on the bundled sample graph: all-pairs shortest paths (GPU where
# one is usable, else every CPU core), written as an Arrow IPC file.
run: build
	@mkdir -p out
	$(BIN) run testdata/sample.parquet -o out/sample-apsp.arrow --verbose
	$(BIN) run testdata/sample.parquet --layout stats -o out/sample-stats.csv --quiet
	@echo "the five most central vertices (by harmonic centrality), from out/sample-stats.csv:"
	@head -1 out/sample-stats.csv
	@sort -t, -k6 -g -r out/sample-stats.csv | grep -v '^source' | head -5

test: test-go test-race fuzz kernels-check test-python test-wheel

# The gpu package again with the pathctl_debug tag (a synchronise and check
# after every launch): its tests run on fake drivers without a GPU.
test-go: build
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) vet -tags pathctl_debug ./gpu/...
	$(GO) test -count=1 -tags pathctl_debug ./gpu

# The race detector needs cgo; it runs on the packages with concurrency.
test-race:
	CGO_ENABLED=1 $(GO) test -count=1 -race -short ./cpu/... ./graph/... ./pipeline/... ./arrowio/... ./flight/... ./gpu/internal/plan/...

FUZZ_TARGETS := arrowio:FuzzReadCSV arrowio:FuzzReadIPC arrowio:FuzzIPCMessageBytes arrowio:FuzzReadParquet arrowio:FuzzReadDIMACS graph:FuzzBuild flight:FuzzParseQuery flight:FuzzQueryRanges flight:FuzzParseUploadOptions flight:FuzzValidateName
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$pkg $$fn, $(FUZZTIME)"; \
		$(GO) test ./$$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) || exit 1; \
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
	cp gpu/gpu-test.sh bin/gpu-test.sh

$(VENV)/.installed: VERSION python/setup.py python/pyproject.toml python/requirements-test.txt bench/requirements.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r python/requirements-test.txt -r bench/requirements.txt
	$(PY) -m pip install --quiet -e ./python
	touch $@

test-python: build $(VENV)/.installed
	PATHCTL_BIN=$(CURDIR)/$(BIN) $(PY) -m pytest -q python/tests bench/test_bench_cpu.py bench/test_bench_gpu.py bench/test_bench_queries.py bench/test_bench_flight.py bench/test_plot_scaling.py bench/test_bench_devices.py

# Platform wheels with the binary inside (manylinux_2_17 x86_64 and aarch64)
# in dist/: `pip install dist/pathctl-*-manylinux*_x86_64*.whl` brings the engine.
WHEEL_ARCHS ?= amd64 arm64
wheel: $(VENV)/.installed
	$(PY) python/tools/build_wheels.py --version $(VERSION) --out dist $(WHEEL_ARCHS)

# This machine's wheel, installed in a fresh venv with no Go and no pathctl
# on PATH, runs the README's Python example.
test-wheel: $(VENV)/.installed
	$(MAKE) --no-print-directory wheel WHEEL_ARCHS=$(shell $(GO) env GOARCH)
	$(PY) python/tools/check_wheel.py dist/pathctl-$(VERSION)-py3-none-*$(shell uname -m)*.whl

bench-cpu: build $(VENV)/.installed
	$(PY) bench/bench_cpu.py $(BENCH_ARGS)

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
