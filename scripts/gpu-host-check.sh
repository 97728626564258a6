#!/usr/bin/env bash
# The GPU host check (issue 31, specs/executor.md "GPUs"): on a host with one NVIDIA GPU, no Docker
# and no package registry, within about 5 minutes: starts a devnet whose one provider offers the GPU
# on the process engine (python3 as runtime), runs a CUDA matrix product (PyTorch) as a job, and
# checks that it completed with GPU use above zero in its receipt, that a job asking 2 GPUs is
# declined and that a job asking another model is declined. Prints figures; exits non-zero when a
# check fails; always stops the devnet.
#
# On the GPU host, from the unpacked tarball of scripts/gpu-host-pack.sh:
#   mkdir dms && tar -xJf dms-gpu-host.tar.xz -C dms && bash dms/scripts/gpu-host-check.sh
# Here (no GPU): bash scripts/gpu-host-check.sh --stand-in  (root: mknod; a built dist/)
#   STAND-IN mode: fake device nodes (char 1:5, as test/e2e/executor/process-gpu.spec.ts), a
#   stand-in nvidia-smi with scripted figures, /bin/sh as runtime and a shell command instead of
#   CUDA. It proves the path (devnet, offer, pinning, metering, receipt, declines), not a GPU.
# Options: --stand-in; --keep (keep the devnet's folder and logs). Env: PYTHON (default python3),
#   NVIDIA_SMI (default: the first of /usr/bin, /usr/local/nvidia/bin, /usr/local/bin).
set -uo pipefail

STAND_IN=0
KEEP=0
for a in "$@"; do
  case $a in
    --stand-in) STAND_IN=1 ;;
    --keep) KEEP=1 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-host-check: unknown option $a (--stand-in, --keep)" >&2; exit 2 ;;
  esac
done

TAG=gpu-host-check
[ "$STAND_IN" = 1 ] && TAG="gpu-host-check (stand-in)"
say() { printf '%s: %s\n' "$TAG" "$*"; }
FAILS=0
check() { # check NAME OK DETAIL
  if [ "$2" = 1 ]; then say "PASS $1: $3"; else say "FAIL $1: $3"; FAILS=$((FAILS + 1)); fi
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
NODE=node
[ -x "$ROOT/node/bin/node" ] && NODE="$ROOT/node/bin/node"
command -v "$NODE" >/dev/null 2>&1 || { say "no node: run from the unpacked gpu-host-pack tarball (node/bin/node)"; exit 2; }
[ -d "$ROOT/dist" ] || { say "no dist/ in $ROOT: npm run build first"; exit 2; }
dms() { "$NODE" "$ROOT/bin/dms.js" "$@"; }
# Reads a JSON document on stdin and prints the value of the JS expression $1 over it (`j`).
jq_() { "$NODE" -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const j=JSON.parse(s);const v=($1);console.log(v===undefined?'':typeof v==='object'?JSON.stringify(v):v)})"; }

WORK=$(mktemp -d /tmp/dms-gpu-host-check.XXXXXX)
DEVNET_PID=
cleanup() {
  if [ -n "$DEVNET_PID" ] && kill -0 "$DEVNET_PID" 2>/dev/null; then
    kill -TERM "$DEVNET_PID" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$DEVNET_PID" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$DEVNET_PID" 2>/dev/null; then
      kill -KILL "$DEVNET_PID" 2>/dev/null
      say "devnet killed (it did not stop within 20 s)"
    else
      say "devnet stopped ($(grep -o '"exits":{[^}]*}' "$WORK/devnet.out" 2>/dev/null || echo 'no exit codes'))"
    fi
  fi
  if [ "$KEEP" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
T0=$(date +%s.%N)
since() { "$NODE" -e "console.log(((Date.now()/1000)-$1).toFixed(1))"; }

# --- the GPU: real, or stand-in -------------------------------------------------------------
if [ "$STAND_IN" = 1 ]; then
  [ "$(id -u)" = 0 ] || { say "needs root (mknod)"; exit 2; }
  DEV="$WORK/stand-in-dev"
  mkdir "$DEV"
  for n in nvidia0 nvidiactl nvidia-uvm; do mknod -m 666 "$DEV/$n" c 1 5; done
  SMI="$WORK/stand-in-nvidia-smi"
  # Both queries dms asks: the measurement (index, name, memory, uuid) and the metering
  # (index, utilisation %, memory used MiB), with scripted figures.
  cat >"$SMI" <<'EOF'
#!/bin/sh
case "$1" in
  --query-gpu=index,name,memory.total,uuid) echo "0, NVIDIA H200 stand-in, 143771, GPU-00000000-stand-in" ;;
  --query-gpu=index,utilization.gpu,memory.used) echo "0, 80, 2048" ;;
  *) echo "stand-in nvidia-smi: unexpected $*" >&2; exit 1 ;;
esac
EOF
  chmod 755 "$SMI"
  RUNTIME=/bin/sh
  DEVDIR_JSON=",\"gpuDevDir\":\"$DEV\""
  BINDS_JSON=
  JOB_ARGS=(--runtime /bin/sh -- -c 'echo "stand-in device: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES $(ls /dev | grep nvidia | tr "\n" " ")"; sleep 3; echo "stand-in checksum 42"')
  JOB_MEMORY=64MiB
  OFFER_MEMORY=$((512 * 1024 * 1024))
  OFFER_CPU=1
else
  SMI=${NVIDIA_SMI:-}
  if [ -z "$SMI" ]; then
    for p in /usr/bin/nvidia-smi /usr/local/nvidia/bin/nvidia-smi /usr/local/bin/nvidia-smi; do
      [ -x "$p" ] && { SMI=$p; break; }
    done
  fi
  [ -n "$SMI" ] || { say "no nvidia-smi found (set NVIDIA_SMI)"; exit 2; }
  PY=$(command -v "${PYTHON:-python3}") || { say "no python3 (set PYTHON)"; exit 2; }
  RUNTIME=$(readlink -f "$PY")
  "$RUNTIME" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
    { say "$RUNTIME has no PyTorch with CUDA here"; exit 2; }
  # The sandbox binds /usr, /lib... read-only: a python (or its packages) elsewhere is bound too.
  EXTRA=$("$RUNTIME" -c 'import sys,torch,os;print("\n".join(sorted({sys.prefix,os.path.dirname(os.path.dirname(torch.__file__))})))' |
    grep -vE '^/usr(/|$)' | "$NODE" -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.stringify(s.split('\n').filter(Boolean))))")
  BINDS_JSON=
  if [ "$EXTRA" != "[]" ]; then
    BINDS_JSON=",\"binds\":$("$NODE" -e "console.log(JSON.stringify(['/usr','/bin','/sbin','/lib','/lib64','/lib32','/etc/ssl','/etc/alternatives',...$EXTRA]))")"
  fi
  DEVDIR_JSON=
  JOB_ARGS=(--runtime "$RUNTIME" -e "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/nvidia/lib64}" -e HOME=/tmp -- -c '
import time, torch
d = torch.device("cuda")
print("device:", torch.cuda.get_device_name(0), flush=True)
a = torch.randn(8192, 8192, device=d); b = torch.randn(8192, 8192, device=d)
torch.cuda.synchronize(); t = time.time(); n = 0
while time.time() - t < 5:
    c = a @ b; n += 1
torch.cuda.synchronize()
print("matmuls: %d in %.1f s, %.1f TFLOP/s" % (n, time.time() - t, n * 2 * 8192**3 / (time.time() - t) / 1e12))
print("checksum: %.6e" % c.double().sum().item())
print("peak GPU memory (torch): %d MiB" % (torch.cuda.max_memory_allocated() // 2**20))
')
  # A quarter of the host's memory offered (at most 32 GiB), half of that for the job.
  MEM_KIB=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  OFFER_MEMORY=$((MEM_KIB * 1024 / 4))
  [ "$OFFER_MEMORY" -gt $((32 * 1024 * 1024 * 1024)) ] && OFFER_MEMORY=$((32 * 1024 * 1024 * 1024))
  JOB_MEMORY=$((OFFER_MEMORY / 2 / 1024 / 1024))MiB
  OFFER_CPU=4
fi

# --- what dms measures ------------------------------------------------------------------------
MEASURED=$("$SMI" --query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits 2>&1 | head -1)
MODEL=$(printf '%s' "$MEASURED" | cut -d, -f2 | sed 's/^ *//;s/ *$//')
say "GPU: $MEASURED (through $SMI)"
[ -n "$MODEL" ] || { say "FAIL: nvidia-smi lists no GPU"; exit 1; }
# Another model, chosen from the measured one: a job asking it must be declined.
OTHER=A100
case "$MODEL" in *A100*) OTHER=H100 ;; esac

# --- the devnet -------------------------------------------------------------------------------
cat >"$WORK/provider.json" <<EOF
{"engines":["process"],
 "process":{"runtimes":["$RUNTIME"],"nvidiaSmi":"$SMI"$DEVDIR_JSON$BINDS_JSON},
 "offer":{"cpu":$OFFER_CPU,"memoryBytes":$OFFER_MEMORY,"diskBytes":4294967296,"gpus":1,
  "prices":{"perCpuHour":1200000,"perGiBMemoryHour":10000,"perGiBDiskHour":0,"perGpuHour":1000000,"minJobPrice":1}}}
EOF
say "starting a devnet (1 provider, process engine only, the GPU offered, runtime $RUNTIME)"
# node itself in the background (not the `dms` function, whose subshell would take the signal).
"$NODE" "$ROOT/bin/dms.js" devnet --providers 1 --provider-config "$WORK/provider.json" --dir "$WORK/net" \
  --json >"$WORK/devnet.out" 2>"$WORK/devnet.err" &
DEVNET_PID=$!
for _ in $(seq 1 300); do
  grep -q devnet-ready "$WORK/devnet.out" 2>/dev/null && break
  kill -0 "$DEVNET_PID" 2>/dev/null || break
  sleep 0.2
done
if ! grep -q devnet-ready "$WORK/devnet.out" 2>/dev/null; then
  say "FAIL: the devnet did not start:"
  sed "s/^/$TAG: devnet: /" "$WORK/devnet.err" | tail -20
  exit 1
fi
SOCK=$(grep devnet-ready "$WORK/devnet.out" | jq_ 'j.requester.socket')
PSOCK=$(grep devnet-ready "$WORK/devnet.out" | jq_ 'j.providers[0].socket')
say "devnet ready in $(since "$T0") s"
dms resources --socket "$PSOCK" >"$WORK/resources.txt" 2>&1
grep -iE '^(gpus|engine|offer)' "$WORK/resources.txt" | sed "s/^/$TAG: provider: /"
GPUS_LINE=$(grep -E '^gpus ' "$WORK/resources.txt")
check "GPU measured" "$(printf '%s' "$GPUS_LINE" | grep -qF "#0 $MODEL " && echo 1 || echo 0)" \
  "the provider lists #0 $MODEL, as nvidia-smi does"

# Waits up to $2 s for job $1 to end, its status JSON in $3; prints its last state.
wait_job() {
  local end=$(($(date +%s) + $2)) st=
  while [ "$(date +%s)" -lt "$end" ]; do
    dms job status "$1" --socket "$SOCK" --json >"$3" 2>/dev/null || true
    st=$(jq_ 'j.state' <"$3" 2>/dev/null)
    case $st in completed | failed | cancelled) break ;; esac
    sleep 0.5
  done
  printf '%s' "$st"
}

# --- the GPU job ------------------------------------------------------------------------------
T1=$(date +%s.%N)
dms job run --socket "$SOCK" --json --gpu 1 --cpu 1 --memory "$JOB_MEMORY" --timeout 300 \
  --max-price 5000000 --name gpu-check "${JOB_ARGS[@]}" >"$WORK/job.json" 2>"$WORK/job.err"
JOB=$(jq_ 'j.id' <"$WORK/job.json" 2>/dev/null)
[ -n "$JOB" ] || { say "FAIL: the job was not posted: $(cat "$WORK/job.err")"; exit 1; }
STATE=$(wait_job "$JOB" 240 "$WORK/status.json")
JOB_S=$(since "$T1")
dms job logs "$JOB" --socket "$SOCK" 2>&1 | sed "s/^/$TAG: job: /"
if [ "$STATE" != completed ]; then
  # What the provider saw, for the one chance on a lent GPU host.
  tail -n 30 "$WORK/net/provider-a.log" 2>/dev/null | sed "s/^/$TAG: provider log: /"
fi
# The provider's signed receipt (its signature checked by the requester), not the live figures.
USAGE=$(jq_ 'j.result?.receipt?.receipt?.usage' <"$WORK/status.json")
SIG_OK=$(jq_ 'j.verification?.receiptSignatureOk === true ? 1 : 0' <"$WORK/status.json")
GPU_S=$(printf '%s' "$USAGE" | jq_ 'j?.gpuSeconds ?? 0' 2>/dev/null)
GPU_PEAK=$(printf '%s' "$USAGE" | jq_ 'Math.round((j?.gpuPeakMemoryBytes ?? 0) / 1048576)' 2>/dev/null)
WALL=$(printf '%s' "$USAGE" | jq_ 'j?.wallSeconds ?? 0' 2>/dev/null)
check "job completed" "$([ "$STATE" = completed ] && echo 1 || echo 0)" \
  "job $JOB $STATE in $JOB_S s (post to end; run $WALL s)$([ "$STATE" = completed ] || echo ": $(jq_ 'j.error?.message ?? j.result?.reason ?? ""' <"$WORK/status.json")")"
check "receipt GPU use" "$("$NODE" -e "console.log(Number('${GPU_S:-0}') > 0 && '$SIG_OK' === '1' ? 1 : 0)")" \
  "signed receipt (signature ok: $SIG_OK): gpuSeconds ${GPU_S:-none}, peak GPU memory ${GPU_PEAK:-?} MiB"

# --- the declines -----------------------------------------------------------------------------
declined() { # declined NAME REASON_RE FIXED_TEXT job-run-args... (the reasons match both)
  local name=$1 re=$2 fixed=$3
  shift 3
  dms job run --socket "$SOCK" --json --cpu 1 --memory 64MiB --queue-timeout 0 --timeout 60 \
    --name "$name" "$@" >"$WORK/$name.json" 2>/dev/null
  local id st reasons
  id=$(jq_ 'j.id' <"$WORK/$name.json" 2>/dev/null)
  st=$(wait_job "$id" 60 "$WORK/$name.status")
  reasons=$(jq_ '[...(j.error?.declines ?? []), ...(j.declines ?? []), ...(j.queue?.declines ?? [])].flatMap(d => d.reasons).filter((r, i, a) => a.indexOf(r) === i).join("; ")' <"$WORK/$name.status")
  check "$name" "$([ "$st" = failed ] && printf '%s' "$reasons" | grep -qE "$re" && printf '%s' "$reasons" | grep -qF "$fixed" && echo 1 || echo 0)" \
    "job ${id:-?} $st: ${reasons:-no decline reason}"
}
declined "two-gpus-declined" 'gpus' 'need 2' --gpu 2 --runtime "$RUNTIME" -- -c 'print(1)'
declined "other-model-declined" "$OTHER" "offered here: 1 × $MODEL" --gpu 1 --gpu-model "$OTHER" --runtime "$RUNTIME" -- -c 'print(1)'

say "figures: devnet start to end $(since "$T0") s; GPU job $JOB_S s, run $WALL s, gpuSeconds $GPU_S, peak GPU memory $GPU_PEAK MiB; model $MODEL"
if [ "$FAILS" = 0 ]; then say "ALL CHECKS PASSED"; else say "$FAILS CHECK(S) FAILED"; fi
[ "$FAILS" = 0 ]
