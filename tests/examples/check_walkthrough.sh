#!/usr/bin/env bash
# The walkthrough program prints the placement log and the results of
# the walkthrough of docs/behaviour.md (run on the CPU here, split into two logical CPUs).
# With "small-gpu" as second argument: on one simulated GPU of 512 MiB (the
# guide's two 1 GiB halves do not fit), the tour still runs; "one-gpu"
# expects the same of any one GPU (the opencl plugin's PoCL device).
set -euo pipefail
out=$("$1" 2>&1)
echo "$out"
expect() { grep -qF -- "$1" <<<"$out" || { echo "FAIL: missing: $1"; exit 1; }; }
if [ "${2:-}" = one-gpu ] && grep -qF "Num GPUs Available: 0" <<<"$out"; then
  echo "SKIP: no GPU (for the opencl plugin: no OpenCL device)"
  exit 77
fi
if [ "${2:-}" = small-gpu ] || [ "${2:-}" = one-gpu ]; then
  expect "Num GPUs Available: 1"
  expect "1 Physical GPU, 2 Logical GPUs"
  expect "Executing op MatMul in device /job:localhost/replica:0/task:0/device:GPU:1"
  expect "tf.Tensor([[44. 56.] [98. 128.]], shape=(2, 2), dtype=float32)"
  echo "walkthrough on one GPU ($2) as expected"
  exit 0
fi
expect "Num GPUs Available: 0"
expect "1 Physical CPU, 2 Logical CPUs"
expect "Executing op _EagerConst in device /job:localhost/replica:0/task:0/device:CPU:0"
expect "Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0"
expect "tf.Tensor([[22. 28.] [49. 64.]], shape=(2, 2), dtype=float32)"
expect "Memory growth cannot be modified after being initialized"
expect "/job:localhost/replica:0/task:0/device:GPU:2 unknown device"
expect "Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:1"
expect "tf.Tensor([[44. 56.] [98. 128.]], shape=(2, 2), dtype=float32)"
echo "walkthrough output as expected"
