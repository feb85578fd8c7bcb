#!/usr/bin/env bash
# Records the probe's figures on a GPU and confirms `probe --script` findings
# in live CUDA runs, in one pass that keeps partial results if it is cut short.
#
#   scripts/gpu_probe.sh [BIN] [OUTDIR] [BUNDLE]
#       BIN     the oomlint to run (default build/release/oomlint: it needs only
#               the C library, so it runs on a machine with no build tools)
#       OUTDIR  where the results go (default gpu-results)
#       BUNDLE  a tarball of OUTDIR, made again after each step (default OUTDIR/all.tgz)
#   PROBE_GROUPS  the scenarios, one `--rules` list per probe run, space-separated
#                 (default: all of them in four runs)
#
# Writes to OUTDIR:
#   env.txt            the GPU, its driver, the torch, CUDA and cuDNN versions
#   probe-N.json/.svg  one probe run per group, each under its own time limit;
#                      scripts/probe_merge.py joins them with env.txt into
#                      probe/results/<gpu>-torch<version>.json
#   NAME.json          `probe --script` on each script of tests/probe_scripts/,
#                      run side by side first: they report memory, which each
#                      process measures for itself, and no times
#   tests.txt          the GPU tests of tests/probe_tests.py
#   log.txt            the exit status and seconds of each step
# Each probe run starts one Python per variant; on an H200 with torch 2.11 a
# start (import and CUDA context) took 9 to 17 s, so all 20 scenarios take
# 6 to 9 minutes.
set -u
BIN=$(realpath "${1:-build/release/oomlint}")
OUTDIR=${2:-gpu-results}
mkdir -p "$OUTDIR"
OUTDIR=$(realpath "$OUTDIR")
BUNDLE=$(realpath "${3:-$OUTDIR/all.tgz}")
PROBE_GROUPS=${PROBE_GROUPS:-"OOM1 OOM2,OOM3 OOM4,OOM5 OOM6,OOM7"}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
LOG=$OUTDIR/log.txt
: > "$LOG"

bundle() {
    tar czf "$BUNDLE.part" -C "$OUTDIR" --exclude "$(basename "$BUNDLE")*" . && mv "$BUNDLE.part" "$BUNDLE"
}

step() {  # step NAME LIMIT COMMAND...: run with a time limit, log status and seconds
    local name=$1 limit=$2 t0=$SECONDS
    shift 2
    timeout -k 10 "$limit" "$@"
    echo "$name: exit $? in $((SECONDS - t0)) s" >> "$LOG"
}

{
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv
    python3 - <<'PY'
import platform, torch
p = torch.cuda.get_device_properties(0)
print("python", platform.python_version())
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("gpu", torch.cuda.get_device_name(0), "capability", "%d.%d" % torch.cuda.get_device_capability(0),
      "memory", p.total_memory, "multiprocessors", p.multi_processor_count)
PY
    uname -srm
    grep PRETTY_NAME /etc/os-release
} > "$OUTDIR/env.txt" 2>&1

S=tests/probe_scripts
for s in gpu_eval_leak gpu_eval_fixed gpu_after_backward gpu_after_backward_fixed cuda_leak cuda_fixed; do
    extra=()
    [ "$s" = gpu_eval_leak ] && extra=(--snapshot "$OUTDIR/gpu_eval_leak.pickle")
    step "$s" 120 "$BIN" probe --script "$S/$s.py" --device cuda --steps 8 --output-format json "${extra[@]}" \
        > "$OUTDIR/$s.json" 2> "$OUTDIR/$s.err" &
done
step gpu_eval_leak-text 120 "$BIN" probe --script "$S/gpu_eval_leak.py" --device cuda --steps 8 \
    > "$OUTDIR/gpu_eval_leak.txt" 2>&1 &
wait
bundle

n=0
for g in $PROBE_GROUPS; do
    n=$((n + 1))
    step "probe-$n ($g)" 400 "$BIN" probe --device cuda --rules "$g" --format json --timeout 60 \
        --plot "$OUTDIR/probe-$n.svg" > "$OUTDIR/probe-$n.json" 2> "$OUTDIR/probe-$n.err"
    bundle
done

step tests 300 python3 tests/run.py --bin "$BIN" -v -k "probe: GPU" --exclude "every scenario" \
    > "$OUTDIR/tests.txt" 2>&1
bundle
cat "$LOG"
