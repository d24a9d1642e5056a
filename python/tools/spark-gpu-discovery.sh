#!/bin/sh
# Spark GPU discovery script for pathctl.spark (spark.executor.resource.gpu.discoveryScript,
# or spark.driver.resource.gpu.discoveryScript in local mode). Prints the GPUs of this
# machine as Spark's resource JSON: {"name": "gpu", "addresses": ["0", "1"]}. The
# addresses are nvidia-smi's indices, which are CUDA's device ordinals under
# CUDA_DEVICE_ORDER=PCI_BUS_ID: pathctl.spark sets it and passes a task's addresses to
# the binary's --devices. No nvidia-smi, or no GPU: an empty list (Spark then refuses
# an executor that asks for a GPU, saying so).
set -u
ids=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | tr -d ' \r' | grep -E '^[0-9]+$')
if [ -z "$ids" ]; then
    echo '{"name": "gpu", "addresses": []}'
    exit 0
fi
list=$(printf '%s\n' "$ids" | sed 's/.*/"&"/' | paste -sd, - | sed 's/,/, /g')
echo "{\"name\": \"gpu\", \"addresses\": [$list]}"
