#!/usr/bin/env bash
# Runs the GPU suites on the GPU machine, each from its package directory
# (they read testdata). `make gpu-test` builds the static test binaries into
# bin/ and copies this script there as bin/gpu-test.sh; arguments go to
# every test binary (for example -test.v or -test.run 'Batched').
set -eu
cd "$(dirname "$0")/.."
(cd gpu && ../bin/gpu.test -test.count=1 "$@")
(cd pipeline && ../bin/pipeline.test -test.count=1 "$@")
(cd flight && ../bin/flight.test -test.count=1 "$@")
(cd gpu/devices && ../../bin/devices.test -test.count=1 "$@")
