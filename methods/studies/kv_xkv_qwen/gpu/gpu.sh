#!/usr/bin/env bash
# xKV at 7B on passkey, the 8x setting (issue 49, item 5). The claim (xKV, ICML 2026,
# abstract): "Across widely used LLMs, xKV achieves up to 8x KV-Cache compression while
# preserving accuracy on long-context tasks"; the study tests it as xkv_g5 (one SVD per group
# of 5 layers) vs per-layer SVD at the same byte ratio, on passkey_match. The CPU study
# (../study.yaml) ran it on the 0.5B rung with ~182-token prompts; this runs the same methods
# at ratio 8 on a 7B-class model with ~2k-token prompts (n_filler 400: 1,973 tokens before
# the chat template with Qwen2.5's tokenizer, against 149 at the study's 20), 100 items a cell.
#
#   MODEL=/path/to/Qwen2.5-7B-Instruct bash methods/studies/kv_xkv_qwen/gpu/gpu.sh
#   SMOKE=1 bash methods/studies/kv_xkv_qwen/gpu/gpu.sh     # CPU, SmolLM2-135M, 2 items
#
# Needs: a CUDA GPU visible to torch (one H100: bf16 7B weights take ~15 GiB); the project
# installed in the Python that runs it (PYTHON, default .venv/bin/python: harness,
# inspect_ai, transformers); MODEL = a local Hugging Face folder (config.json + safetensors)
# of a 7B-class chat model with RoPE attention (Qwen2.5-7B-Instruct, as the paper's Qwen
# rows); the GPU machine has no network, so the weights must be on it or in the carried
# tree. Each missing requirement stops the script with one line on stderr and exit code 2.
# Runtime on one H100: not measured yet (no GPU was lent when it was written); estimated
# 5-10 minutes (300 item-cells, each a ~2k-token bf16 prefill, float64 SVDs of 5-layer
# groups and <= 16 greedy tokens; N=50 halves it). Resumable: rerun with the same LOGS and finished cells
# are skipped.
#
# Writes: the run's logs to methods/studies/kv_xkv_qwen/logs/gpu_7b/ (a run declared in
# ../study.yaml; the rendered study file is kept there as study.yaml) and its report to
# methods/studies/kv_xkv_qwen/gpu/report/ (harness study report ... --out). SMOKE=1 writes
# both under a fresh temporary folder (LOGS/REPORT override either), never into the study.
# Prints at the end one JSON line (the report's computed verdict):
#   {"study": "kv_xkv_qwen", "run": "gpu_7b", "model": ..., "device": "cuda", "smoke": false,
#    "score": "passkey_match", "treatment": {"level": "xkv_g5", "mean": ..., "ci": [..]},
#    "baseline": {"level": "svd", ...}, "contrast": {"estimate": ..., "ci": [..],
#    "n_items": 100}, "mdd": ..., "verdict": "reproduces|partly|contradicted|untestable",
#    "why": "...", "logs": ..., "report": ...}
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
STUDY=methods/studies/kv_xkv_qwen
PY="${PYTHON:-.venv/bin/python}"
die() { echo "gpu.sh ($STUDY): $*" >&2; exit 2; }
[ -x "$PY" ] || command -v "$PY" >/dev/null || die "no Python at PYTHON=$PY (the project's venv)"
export HF_HUB_OFFLINE=1 INSPECT_DISPLAY=plain
if [ "${SMOKE:-0}" = 1 ]; then
  TMP="$(mktemp -d -t xkv-gpu-smoke-XXXXXX)"
  LOGS="${LOGS:-$TMP/logs/smoke}" REPORT="${REPORT:-$TMP/report}"
  MODEL_NAME=whitebox/smollm2-135m MODEL_ARGS='{"device": "cpu"}'
  TASK_ARGS='{"n": 2, "n_filler": 20}' DEVICE=cpu
else
  [ -n "${MODEL:-}" ] || die "set MODEL to a local Hugging Face folder of the 7B model"
  [ -f "$MODEL/config.json" ] || die "MODEL=$MODEL is not a local Hugging Face folder (no config.json)"
  "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
    || die "no CUDA GPU visible to torch in $PY"
  LOGS="${LOGS:-$STUDY/logs/gpu_7b}" REPORT="${REPORT:-$STUDY/gpu/report}"
  MODEL_NAME=whitebox/gpu-7b DEVICE=cuda
  MODEL_ARGS="{\"model_path\": \"$MODEL\", \"device\": \"cuda\", \"dtype\": \"bfloat16\"}"
  TASK_ARGS="{\"n\": ${N:-100}, \"n_filler\": 400}"
fi
"$PY" -c 'import harness.cli, inspect_ai, transformers' 2>/dev/null \
  || die "$PY lacks the project (harness, inspect_ai, transformers): install it there"
mkdir -p "$LOGS"
# The GPU study: ../study.yaml with the model, the device and the prompt length replaced and
# the ratio kept at 8 (the design, scores and claim are the committed study's).
"$PY" - "$STUDY/study.yaml" "$LOGS/study.yaml" "$MODEL_NAME" "$MODEL_ARGS" "$TASK_ARGS" <<'PYEOF'
import json, sys
import yaml
src, dst, model, model_args, task_args = sys.argv[1:6]
study = yaml.safe_load(open(src))
study["runs"] = {"main": "the committed study", "gpu_7b": "this GPU run"}
study["response"]["tasks"][0]["args"].update(json.loads(task_args))
for factor in study["factors"]:
    if factor["name"] == "model":
        factor["levels"] = [{"label": "gpu", "value": model}]
    if factor["name"] == "precision":
        factor["levels"] = [{"label": "gpu", "value": json.loads(model_args)}]
    if factor["name"] == "ratio":
        factor["levels"] = [8]
text = yaml.safe_dump(study, sort_keys=False)
if not __import__("os").path.exists(dst) or open(dst).read() != text:
    open(dst, "w").write(text)
PYEOF
start=$(date +%s)
"$PY" -m harness.cli study run "$LOGS/study.yaml" --log-dir "$LOGS"
"$PY" -m harness.cli study report "$LOGS" --out "$REPORT"
echo "gpu.sh ($STUDY): run and report took $(( $(date +%s) - start )) s" >&2
"$PY" -m harness.cli study verdict "$REPORT" \
    --set study=kv_xkv_qwen --set run="$(basename "$LOGS")" \
    --set model="${MODEL:-$MODEL_NAME}" --set device="$DEVICE" \
    --set smoke="$([ "${SMOKE:-0}" = 1 ] && echo true || echo false)" --set logs="$LOGS"
