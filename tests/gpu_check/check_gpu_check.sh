#!/usr/bin/env bash
# tools/gpu-check's up-front checks against a fake nvidia-smi: the old check
# said PASS when the plugin saw no GPU, because every GPU test then skipped.
# Here nvidia-smi claims GPUs and the plugin that must report them is the
# simulated accelerator with a chosen number of devices:
#   1 GPU listed, 0 reported       FAIL, naming both counts and the plugin
#   1 GPU listed, 1 reported       the preflight passes
#   driver 535 for a CUDA 13 build FAIL before building, with the fix
#   CUDA_VISIBLE_DEVICES=""        FAIL (every GPU hidden)
#   SIGTERM while it runs          FAIL, "Interrupted" (a time limit once
#                                  stopped it and the report said PASS)
#
#   check_gpu_check.sh TREE BUILD SIM_PLUGIN_DIR
set -uo pipefail
tree=$1 build=$2 sim_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cp "$tree/tests/gpu_check/fake-nvidia-smi" "$work/bin/nvidia-smi"
export PATH="$work/bin:$PATH"
export XDEV_PLUGIN_PATH=$sim_dir GPU_CHECK_PLUGINS=sim XDEV_LOG_LEVEL=error
export XDG_CACHE_HOME="$work/cache"
unset CUDA_VISIBLE_DEVICES OUT
failures=0

run() {  # NAME EXPECTED_EXIT(0|nonzero) NEEDLE... (environment already set)
  local name=$1 expected=$2
  shift 2
  local report="$work/$name.md" rc=0
  "$tree/tools/gpu-check" --build "$build" --no-build --preflight --logs "$work/logs-$name" \
    "$report" > "$work/$name.out" 2>&1 || rc=$?
  local ok=1
  if [ "$expected" = 0 ] && [ $rc -ne 0 ]; then ok=0; fi
  if [ "$expected" != 0 ] && [ $rc -eq 0 ]; then ok=0; fi
  local needle
  for needle in "$@"; do
    grep -qF -- "$needle" "$report" 2>/dev/null || { ok=0; echo "$name: the report lacks: $needle"; }
  done
  if [ $ok -eq 1 ]; then
    echo "ok   $name (exit $rc)"
  else
    echo "FAIL $name (exit $rc, expected $([ "$expected" = 0 ] && echo 0 || echo 'non-zero'))"
    sed 's/^/    /' "$report" 2>/dev/null | head -60
    sed 's/^/    out: /' "$work/$name.out" | tail -20
    failures=$((failures + 1))
  fi
}

FAKE_GPUS=1 XDEV_SIM_DEVICES=0 run plugin_sees_none 1 \
  "- result: FAIL" "## GPUs: FAILED" "nvidia-smi lists 1 GPU but xdev reports 0" "plugin sim: 0 simulated devices"
FAKE_GPUS=1 XDEV_SIM_DEVICES=1 run plugin_sees_all 0 \
  "- result: PASS" "xdev reports the 1 GPU nvidia-smi lists"
FAKE_GPUS=2 XDEV_SIM_DEVICES=1 run plugin_sees_fewer 1 \
  "nvidia-smi lists 2 GPUs but xdev reports 1"
FAKE_GPUS=1 FAKE_DRIVER=535.104.05 XDEV_SIM_DEVICES=1 run old_driver 1 \
  "## Driver: FAILED" "NVIDIA driver 535.104.05 is too old" "R580 or newer" "Fix:"
CUDA_VISIBLE_DEVICES= FAKE_GPUS=1 XDEV_SIM_DEVICES=1 run all_hidden 1 \
  "CUDA_VISIBLE_DEVICES is set and empty"

# Stopped from outside while nvidia-smi answers (as a machine's time limit
# stopped it mid-run): the report must not say PASS.
hold="$work/hold"
FAKE_GPUS=1 XDEV_SIM_DEVICES=1 FAKE_HOLD_FILE=$hold "$tree/tools/gpu-check" --build "$build" \
  --no-build --preflight --logs "$work/logs-term" "$work/term.md" > "$work/term.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -e "$hold" ] && break; sleep 0.1; done
kill -TERM $pid
rc=0
wait $pid || rc=$?
if [ $rc -eq 6 ] && grep -qF -- "- result: FAIL" "$work/term.md" &&
   grep -qF "## Interrupted: FAILED" "$work/term.md" && grep -qF "SIGTERM" "$work/term.md"; then
  echo "ok   interrupted (exit $rc)"
else
  echo "FAIL interrupted (exit $rc, expected 6 and a FAIL report)"
  sed 's/^/    /' "$work/term.md" 2>/dev/null | head -40
  failures=$((failures + 1))
fi

[ $failures -eq 0 ] && echo "gpu-check preflight behaves" && exit 0
exit 1
