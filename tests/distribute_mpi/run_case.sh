#!/bin/sh
# One multi-worker test case (meson.build names them): starts the workers
# under mpirun (2 processes on this machine, --oversubscribe) or alone, and
# checks what they print.
#
#   run_case.sh MPIRUN WORKER_OR_TRAIN CASE [PLUGIN_DIR]
#
# A case named sim_X runs case X on the sim plugin's devices (two per
# worker, /GPU:0 and /GPU:1), whose device collectives (ABI 1.7) replace
# MPI over host memory between the workers: the same checks hold, and the
# path logged is the sim's. sim_host_path runs the collectives on the sim's
# devices with XDEV_DEVICE_COLLECTIVES=0 (the host path), the same checks.
# cuda_X runs case X on GPUs through the cuda plugin's NCCL collectives
# (tools/gpu-check runs them): worker k on /GPU:2k and /GPU:2k+1, so 4 GPUs
# (NCCL takes one GPU per rank); cuda_one_worker needs 1 (one rank on
# /GPU:0); skipped, saying why, without NCCL or GPUs.
set -u
mpirun=$1 prog=$2 case=$3
out=$(mktemp) dir=$(mktemp -d)
trap 'rm -rf "$out" "$dir"' EXIT
run2() { "$mpirun" --oversubscribe -np 2 "$@" >"$out" 2>&1; }
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
count() { grep -c -- "$1" "$out"; }

# The path every worker's collectives take, as the strategy logs it.
path="in-process via shared memory, across workers via MPI over host memory"
start_line="across workers via host memory (no device collectives: "
case $case in
sim_*)
  export XDEV_PLUGIN_PATH=$4 XDEV_PLUGINS=cpu,sim XDEV_TEST_DEVICE_TYPE=GPU
  case=${case#sim_}
  if [ "$case" = host_path ]; then
    export XDEV_DEVICE_COLLECTIVES=0
    case=collectives
    path="in-process via direct copies, across workers via MPI over host memory"
    start_line="across workers via host memory (no device collectives: XDEV_DEVICE_COLLECTIVES=0)"
  else
    path="via sim device collectives"
    start_line="across workers via sim device collectives"
  fi ;;
cuda_*)
  if [ "${XDEV_TEST_CUDA_NCCL:-0}" != 1 ]; then
    echo "skipped: the cuda plugin was built without NCCL (plugins/cuda/README.md: -Dnccl_root=DIR or a system NCCL)"
    exit 77
  fi
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  need="4" what="2 workers x 2 GPUs need 4 GPUs (NCCL takes one GPU per rank)"
  [ "$case" = cuda_one_worker ] && need="1" what="one worker needs a GPU"
  if [ "$gpus" -lt "$need" ]; then
    echo "skipped: $what; this machine has $gpus"
    exit 77
  fi
  export XDEV_PLUGIN_PATH=$4 XDEV_PLUGINS=cpu,cuda XDEV_TEST_DEVICE_TYPE=GPU XDEV_TEST_GPUS_BY_RANK=1
  case=${case#cuda_}
  path="via cuda device collectives"
  start_line="across workers via cuda device collectives" ;;
esac
# Two workers for the lost-worker cases (mpi_worker.cpp, lost()): on the
# sim, task 1's device collectives start 2 s late, so that it dies or stops
# inside one (harmless on the host path).  run_lost MODE [MPIRUN OPTIONS]
run_lost() {
  mode=$1; shift
  ${wrap:-} "$mpirun" --oversubscribe "$@" -np 1 "$prog" "$mode" : \
    -np 1 -x XDEV_SIM_COLLECTIVE_DELAY_US=2000000 "$prog" "$mode" >"$out" 2>&1
}
# On the device path task 0 waited in the device collective's deadline loop.
check_lost_where() {
  [ "$path" != "via sim device collectives" ] ||
    grep -q "^task 0 caught .*(XDEV_COLLECTIVE_TIMEOUT_S) waiting for the device collective; lost task 1" "$out" ||
    fail "task 0 did not time out in the device collective"
}
# Every worker (2, or N) says which path its collectives take between workers.
check_start_line() {
  [ "$(count "Using MultiWorkerMirroredStrategy.*$start_line")" = "${1:-2}" ] ||
    fail "each worker's start-up line names the path: $start_line"
}

case $case in
collectives)
  # Each worker its own checkpoint directory (task 0 must write, task 1 not).
  mkdir "$dir/0" "$dir/1"
  XDEV_COLLECTIVE_CHUNK_MIB=1 "$mpirun" --oversubscribe \
    -np 1 -x XDEV_TEST_CHECKPOINT_DIR="$dir/0" "$prog" collectives : \
    -np 1 -x XDEV_TEST_CHECKPOINT_DIR="$dir/1" "$prog" collectives >"$out" 2>&1 ||
    fail "mpirun exited $?"
  [ "$(count '^PASS collectives')" = 2 ] || fail "both workers must pass"
  grep -q "Using MultiWorkerMirroredStrategy with cluster_spec = {'worker': \[" "$out" ||
    fail "no strategy line"
  check_start_line
  [ "$(count "Collective all_reduce SUM of 'sum' (2,) float32 (8 B) over 2 workers x 2 local replicas: $path\$")" = 2 ] ||
    fail "each worker logs the path of the logged all-reduce: $path" ;;
mismatch)
  run2 "$prog" mismatch || fail "mpirun exited $?"
  check_start_line
  [ "$(count '^PASS mismatch')" = 2 ] || fail "both workers must report the mismatch" ;;
killed)
  # mpirun's default when a worker dies: it tears the others down at once
  # (exit status 137, "mpirun noticed that process rank 1 ... exited on signal 9").
  start=$(date +%s)
  XDEV_COLLECTIVE_TIMEOUT_S=5 run_lost killed && fail "mpirun exited 0 after a worker died"
  grep -q "exited on signal 9" "$out" || fail "no word from mpirun about the killed worker"
  echo "default mpirun: torn down after $(( $(date +%s) - start )) s"; cat "$out"
  # With --enable-recovery mpirun lets the survivor run on: it must report
  # the lost task within the timeout instead of hanging.
  XDEV_COLLECTIVE_TIMEOUT_S=5 run_lost killed --enable-recovery
  check_start_line
  grep -q '^PASS lost worker (task 0)' "$out" || fail "task 0 did not report the lost task"
  check_lost_where ;;
hung)
  # A worker that hangs (SIGSTOP) is no death for mpirun: plain mpirun, and the
  # survivor must name it within the timeout; its failure (exit 3) makes mpirun
  # end the job, the stopped worker included.
  start=$(date +%s)
  XDEV_COLLECTIVE_TIMEOUT_S=5 wrap="timeout 60" run_lost hung
  rc=$?
  echo "mpirun exited $rc after $(( $(date +%s) - start )) s"
  [ $rc = 124 ] && fail "mpirun did not end within 60 s"
  check_start_line
  grep -q '^PASS lost worker (task 0)' "$out" || fail "task 0 did not report the hung task"
  check_lost_where ;;
one_worker)
  # mpirun -np 1, one device: on a device with collectives a communicator of
  # one rank (NCCL allows it), so one GPU runs the cuda plugin's NCCL path.
  "$mpirun" --oversubscribe -np 1 "$prog" one_worker >"$out" 2>&1 || fail "mpirun exited $?"
  grep -q '^PASS one_worker' "$out" || fail "no PASS"
  check_start_line 1
  logged="Collective all_reduce SUM of 'sum' (2,) float32 (8 B) over 1 workers x 1 local replicas"
  [ "$(count "$logged: $path\$")" = 1 ] || fail "the logged all-reduce names the path: $path" ;;
single)
  "$prog" single >"$out" 2>&1 || fail "exited $?"
  [ "$(count 'running as a single worker')" = 1 ] || fail "one line must say: single worker"
  grep -q '^PASS single' "$out" || fail "no PASS"
  # XDEV_CONFIG without mpirun: one worker is fine, several are an error that
  # says how to start them; a malformed one names the variable.
  two='{"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}'
  XDEV_CONFIG=$two "$prog" single >"$out" 2>&1 && fail "two workers without mpirun ran"
  grep -q "XDEV_CONFIG names 2 workers, but this process was not started by mpirun.*mpirun -np 2" \
    "$out" || fail "no error about starting the workers with mpirun"
  XDEV_CONFIG='{"cluster": {"worker": ["a:1"]}, "task": {"index": 0}}' "$prog" single >"$out" 2>&1 ||
    fail "a one-worker XDEV_CONFIG failed"
  XDEV_CONFIG='{"cluster": {"ps": ["a:1"]}}' "$prog" single >"$out" 2>&1 && fail "a ps job ran"
  grep -q 'XDEV_CONFIG: job "ps" is not supported' "$out" || fail "no error naming the ps job"
  XDEV_CONFIG='{"cluster": ' "$prog" single >"$out" 2>&1 && fail "malformed JSON ran"
  grep -q 'XDEV_CONFIG: not JSON' "$out" || fail "no error naming XDEV_CONFIG" ;;
config)
  # MPMD: rank 0 is task 1 and rank 1 is task 0; the ranks follow XDEV_CONFIG.
  c='{"cluster": {"worker": ["alpha:2222", "beta:2222"]}, "task": {"type": "worker", "index": '
  "$mpirun" --oversubscribe -np 1 -x XDEV_CONFIG="${c}1}}" "$prog" config 1 : \
    -np 1 -x XDEV_CONFIG="${c}0}}" "$prog" config 0 >"$out" 2>&1 || fail "mpirun exited $?"
  [ "$(count '^PASS config')" = 2 ] || fail "both workers must pass" ;;
optimizer)
  # Adam and SGD with momentum on MirroredVariables, 2 workers x 2 logical CPUs:
  # each worker checks its weights against one process training on the whole batch.
  run2 "$prog" optimizer || fail "mpirun exited $?"
  [ "$(count '^PASS optimizer')" = 2 ] || fail "both workers must pass" ;;
train)
  # 2 processes x 1 logical CPU and 1 process x 2 logical CPUs, global batch 64.
  run2 "$prog" --multi-worker --local-replicas 1 --steps 30 --weights-out "$dir/two" ||
    fail "2 x 1 exited $?"
  "$prog" --multi-worker --local-replicas 2 --steps 30 --weights-out "$dir/one" >>"$out" 2>&1 ||
    fail "1 x 2 exited $?"
  paste "$dir/two" "$dir/one" | awk '
    { d = $1 - $2; if (d < 0) d = -d; if (d > worst) worst = d; n++ }
    END { printf "2 workers x 1 vs 1 worker x 2: %d weights, largest difference %g\n", n, worst;
          exit (n == 4 && worst <= 1e-6) ? 0 : 1 }' || fail "the weights differ" ;;
*) echo "unknown case $case"; exit 2 ;;
esac
cat "$out"
