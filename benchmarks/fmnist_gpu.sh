#!/bin/bash
# A full-size data point of the fmnist profile on one GPU, within a fixed time budget:
#   1. the profile's training cost measured on this device (`ancer-certify checkpoints --profile fmnist --dry-run`);
#   2. one of its models trained to the end: fmnist_l2_resnet18 at sigma = 0.25, the recipe's 30 epochs on the first
#      55,000 training images;
#   3. tests/test_gpu.py;
#   4. Fixed sigma, Isotropic DD and ANCER (`ancer-certify certify`, the command's default step sizes, not chosen on
#      the validation split) on every SKIP-th test image at N = 100,000, each cut off when the budget runs out (the
#      per-input rows done so far stay in OUTFILE.work/).
# Everything lands in OUTDIR (logs, the manifests, the TSVs, stamps.txt with the seconds at each step).
#
# Usage: bash benchmarks/fmnist_gpu.sh OUTDIR [DATA_DIR]
#   DATA_DIR: the data folder (fashion-mnist/ in it, else Debian's /usr/share/datasets/fashion-mnist/); the checkpoint
#   goes to DATA_DIR/checkpoints/fmnist/l2/sigma_0.25/. Environment: DEV (cuda), PREC (bf16), N (100000), SKIP (100),
#   BATCH (10000), BUDGET (seconds, 500), TRAIN_S / TEST_S / CERT_S (caps per step: 300 / 120 / 150), EPOCHS and
#   MAXTRAIN (a CPU smoke run: e.g. DEV=cpu EPOCHS=1 MAXTRAIN=256 N=200 SKIP=2000), PY (python3).
# Measured on an H100 with BUDGET=500: see README, "The fmnist profile on a GPU".
set -u
[ $# -ge 1 ] || { echo "usage: bash benchmarks/fmnist_gpu.sh OUTDIR [DATA_DIR]" >&2; exit 2; }
R=$1; D=${2:-data}; mkdir -p "$R"
DEV=${DEV:-cuda}; PREC=${PREC:-bf16}; EPOCHS=${EPOCHS:-}; MAXTRAIN=${MAXTRAIN:-}; N=${N:-100000}; SKIP=${SKIP:-100}
BATCH=${BATCH:-10000}; BUDGET=${BUDGET:-500}; TRAIN_S=${TRAIN_S:-300}; TEST_S=${TEST_S:-120}; CERT_S=${CERT_S:-150}
export PYTHONUNBUFFERED=1 PYTHONHASHSEED=0
PY=${PY:-python3}
CLI="$PY -m ancer_lite.tooling.cli"
FROM=(); [ -d "$D/fashion-mnist" ] && FROM=(--data-dir "$D")   # else Debian's /usr/share/datasets/fashion-mnist
CK=$D/checkpoints/fmnist/l2/sigma_0.25/checkpoint.pth.tar
T0=$(date +%s)
left() { local l=$(( T0 + BUDGET - $(date +%s) )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$R/stamps.txt"; }
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
  $PY -c "import torch, platform; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), 'python', platform.python_version())"
  nproc; } > "$R/machine.txt" 2>&1
cat "$R/machine.txt"
extra=(); [ -n "$EPOCHS" ] && extra+=(--epochs "$EPOCHS"); [ -n "$MAXTRAIN" ] && extra+=(--max-train "$MAXTRAIN")
stamp "estimate"
timeout 90 $CLI checkpoints --profile fmnist --dry-run --device "$DEV" --precision "$PREC" --data-dir "$D" > "$R/estimate.log" 2>&1
echo "rc=$?" >> "$R/estimate.log"; cat "$R/estimate.log"
stamp "train"
timeout "$(left "$TRAIN_S")" $CLI train fmnist fmnist_l2_resnet18 "$D/checkpoints/fmnist/l2" --sigma 0.25 --device "$DEV" \
  --precision "$PREC" "${FROM[@]}" "${extra[@]}" > "$R/train.log" 2>&1
echo "rc=$?" >> "$R/train.log"; tail -3 "$R/train.log"; cp "$CK.json" "$R/" 2>/dev/null
stamp "tests"
timeout "$(left "$TEST_S")" $PY -m pytest tests/test_gpu.py -q -ra -p no:cacheprovider > "$R/test_gpu.log" 2>&1
echo "rc=$?" >> "$R/test_gpu.log"; tail -3 "$R/test_gpu.log"
stamp "certify"
for m in fixed isotropic ancer; do
  [ -f "$CK" ] || { stamp "no checkpoint: certify $m skipped"; continue; }
  timeout "$(left "$CERT_S")" $CLI certify fmnist "$CK" 0.25 "$R/fmnist_l2_0.25_$m.tsv" --method $m --skip "$SKIP" \
    --N "$N" --batch "$BATCH" --device "$DEV" --precision "$PREC" --data-dir "$D" > "$R/certify_$m.log" 2>&1
  echo "rc=$?" >> "$R/certify_$m.log"; tail -2 "$R/certify_$m.log"; stamp "certify $m done"
done
stamp "end"
