#!/bin/sh
# xdev-smi for people (tools/smi): `doctor --expect TYPE` exits 1 and says
# why a type is missing; `--query ... --format csv` prints one parsable row
# per device; `-l` repeats it.
#   check_smi.sh XDEV_SMI CUDA_PLUGIN_BUILT(true|false)
# The environment names the sim plugin's directory (XDEV_PLUGIN_PATH) and
# XDEV_SIM_DEVICES=2.
set -eu
smi="$1"
cuda_built="$2"
fail() { echo "FAIL: $*"; exit 1; }

run() {  # run ARGS...: sets $out and $rc
  set +e
  out=$("$@" 2>&1)
  rc=$?
  set -e
}

# --- doctor -------------------------------------------------------------------
# Only the cpu plugin may load: no GPU, and the doctor says which variable hid it.
run env XDEV_PLUGINS=cpu "$smi" doctor --expect GPU
echo "$out"
[ "$rc" = 1 ] || fail "doctor --expect GPU exited $rc, not 1"
echo "$out" | grep -q "^Expected GPU: MISSING" || fail "no 'Expected GPU: MISSING'"
echo "$out" | grep -q "^Likely fix:" || fail "no likely fix"
echo "$out" | grep -q 'XDEV_PLUGINS="cpu"' || fail "the environment does not list XDEV_PLUGINS"
if [ "$cuda_built" = true ]; then
  echo "$out" | grep -q 'xdev_plugin_cuda.so is not loaded because XDEV_PLUGINS="cpu" does not name it' ||
    fail "the fix does not name XDEV_PLUGINS as what hides the cuda plugin"
else
  echo "$out" | grep -q "no plugin file that offers GPU" || fail "the fix does not say no GPU plugin exists"
fi
echo "$out" | grep -q "libtbb" || fail "the cpu plugin's libraries (oneTBB) are not listed"

if [ "$cuda_built" = true ]; then
  # The cuda plugin itself: on a machine without a GPU, the doctor explains.
  run env XDEV_PLUGINS=cpu,cuda "$smi" doctor --expect GPU
  echo "$out"
  echo "$out" | grep -q "libcuda.so.1 - the NVIDIA driver" || fail "the driver is not checked"
  if [ "$rc" = 0 ]; then
    echo "$out" | grep -q "^Expected GPU: present" || fail "exit 0 without 'present'"
  else
    [ "$rc" = 1 ] || fail "doctor exited $rc"
    echo "$out" | grep -q 'plugin "cuda" loaded but reports no device' ||
      fail "the fix does not say the cuda plugin found no device"
  fi
fi

run env XDEV_PLUGINS=cpu,sim "$smi" doctor --expect gpu
[ "$rc" = 0 ] || fail "doctor --expect gpu with the sim exited $rc: $out"
echo "$out" | grep -q "^Expected GPU: present (2 physical device(s))" || fail "sim GPUs not present: $out"

# --- query --------------------------------------------------------------------
run env XDEV_PLUGINS=cpu,sim "$smi" --query index,name,device_type,memory.total,memory.used_by_others --format csv
echo "$out"
[ "$rc" = 0 ] || fail "--query exited $rc"
echo "$out" | awk -F', ' '
  NR == 1 { if ($0 != "index, name, device_type, memory.total [MiB], memory.used_by_others [MiB]") { print "bad header: " $0; exit 1 } next }
  NF != 5 { print "row " NR " has " NF " fields: " $0; exit 1 }
  $1 != NR - 2 { print "row " NR ": index " $1; exit 1 }
  $4 !~ /^[0-9]+ MiB$/ { print "row " NR ": memory.total " $4; exit 1 }
  $5 != "[N/A]" { print "row " NR ": memory.used_by_others " $5 " (no NVML for these devices)"; exit 1 }
  $3 == "GPU" { gpus++ }
  END { if (NR != 4 || gpus != 2) { print NR - 1 " rows, " gpus " GPUs; expected 3 and 2"; exit 1 } }' ||
  fail "the csv does not parse as expected"
echo "$out" | grep -q "^0, /physical_device:GPU:0, GPU, 256 MiB, \[N/A\]$" || fail "the first sim GPU's row"

run env XDEV_PLUGINS=cpu,sim "$smi" --query device_type,memory.total --format csv,noheader,nounits
[ "$rc" = 0 ] || fail "noheader,nounits exited $rc"
[ "$(echo "$out" | head -n 1)" = "GPU, 256" ] || fail "noheader,nounits first line: $out"

run env XDEV_PLUGINS=cpu,sim "$smi" --query index,bogus --format csv
[ "$rc" = 2 ] || fail "an unknown field exited $rc, not 2"
echo "$out" | grep -q 'unknown field "bogus"' || fail "the unknown field is not named: $out"

# --- the refresh loop: the header once, the rows every time ---------------------
run env XDEV_PLUGINS=cpu,sim "$smi" --query index,name --format csv -l 0.05 --count 3
[ "$rc" = 0 ] || fail "-l exited $rc"
[ "$(echo "$out" | grep -c '^index, name$')" = 1 ] || fail "the header is not printed once: $out"
[ "$(echo "$out" | grep -c '/physical_device:GPU:0')" = 3 ] || fail "not 3 reports: $out"
echo "ok"

# --- --ops: the op x dtype table of kernels ---------------------------------------
gpu0=/job:localhost/replica:0/task:0/device:GPU:0
cpu0=/job:localhost/replica:0/task:0/device:CPU:0
run env XDEV_PLUGINS=cpu,sim "$smi" --ops
echo "$out" | head -n 12
[ "$rc" = 0 ] || fail "--ops exited $rc: $out"
[ "$(echo "$out" | grep -c ': kernels for [0-9]* of [0-9]* ops$')" = 3 ] ||
  fail "--ops does not list the three logical devices"
echo "$out" | grep -q "^$cpu0: kernels for" || fail "--ops does not list CPU:0"

run env XDEV_PLUGINS=cpu,sim "$smi" --ops /gpu:0
[ "$rc" = 0 ] || fail "--ops /gpu:0 exited $rc: $out"
[ "$(echo "$out" | grep -c ': kernels for')" = 1 ] || fail "--ops /gpu:0 lists other devices: $out"
echo "$out" | grep -q "^$gpu0: kernels for" || fail "--ops /gpu:0 does not name GPU:0: $out"
echo "$out" | grep -q '^  op  *float32  *float64  *int32  *int64  *bool  *float16  *bfloat16  *uint8  *int8$' ||
  fail "no header row: $out"
# The sim has MatMul and Add on float32/float64 only; the other dtypes fall back.
echo "$out" | grep -q '^  MatMul  *yes  *yes  *no  *no  *-  *no  *no  *-  *-$' || fail "GPU:0's MatMul row: $out"
echo "$out" | grep -q '^  Add  *yes  *yes  *no  *no  *no  *no  *no  *no  *no$' || fail "GPU:0's Add row: $out"

run env XDEV_PLUGINS=cpu,sim "$smi" --ops CPU:0
[ "$rc" = 0 ] || fail "--ops CPU:0 exited $rc"
echo "$out" | grep -q '^  Exp  *yes  *yes  *-  *-  *-  *yes  *yes  *-  *-$' || fail "CPU:0's Exp row: $out"
echo "$out" | grep -q '^  Cast  *yes  *yes  *yes  *yes  *yes  *yes  *yes  *yes  *yes$' ||
  fail "CPU:0's Cast row: $out"
if echo "$out" | grep -Eq '^  [A-Za-z]+ .*(no|some)'; then fail "the cpu plugin lacks a kernel: $out"; fi

run env XDEV_PLUGINS=cpu,sim "$smi" --ops GPU:9
[ "$rc" = 1 ] || fail "--ops GPU:9 exited $rc, not 1"
echo "$out" | grep -q 'device:GPU:9 unknown device' || fail "the unknown device is not named: $out"

run env XDEV_PLUGINS=cpu,sim "$smi" --ops GPU:0 --json
[ "$rc" = 0 ] || fail "--ops --json exited $rc: $out"
if command -v python3 >/dev/null; then
  echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert [d["name"] for d in j["devices"]] == [sys.argv[1]], j["devices"]
ops = {o["op"]: o for o in j["devices"][0]["ops"]}
f32 = {"input": "float32", "output": "float32"}
i32 = {"input": "int32", "output": "int32"}
assert f32 in ops["MatMul"]["kernels"] and i32 in ops["MatMul"]["missing"], ops["MatMul"]
assert i32 not in ops["MatMul"]["kernels"], ops["MatMul"]
assert {"input": "float32", "output": "bool"} in ops["Less"]["kernels"] + ops["Less"]["missing"]
print("--ops --json:", len(ops), "ops on", sys.argv[1])
' "$gpu0" || fail "--ops --json does not parse as expected: $out"
fi
run env XDEV_PLUGINS=cpu,sim "$smi" --ops --json
[ "$rc" = 0 ] || fail "--ops --json (every device) exited $rc"
[ "$(echo "$out" | grep -c '"device_type"')" = 3 ] || fail "--ops --json does not list 3 devices"

echo "xdev-smi --ops as expected"
