#!/usr/bin/env bash
# LightWM on vLLM (issue 49, item 5). The claim (LightWM, ICML 2026, abstract): "On ALFWorld
# valid_unseen, Qwen3-4B reaches 0.910 success, whereas representative prompting and prior
# working-memory baselines under the same setting remain below 0.320"; the study tests it as
# lightwm_rule vs react on household_score/success (claimed size 0.59). The CPU study
# (../study.yaml) ran the 0.5B rung, where every agent sat at the floor; this runs the same
# four agents, schemas, budgets and episodes (step limit 9, <= 9 turns, 48-token replies) with
# a 4B-7B model served by vLLM behind its OpenAI-compatible API (Inspect's openai-api
# provider, as for any served deployment), on 50 unseen test episodes per agent.
#
#   MODEL=/path/to/Qwen2.5-7B-Instruct bash methods/studies/lightwm_household_qwen/gpu/gpu.sh
#   SMOKE=1 bash methods/studies/lightwm_household_qwen/gpu/gpu.sh
#       # CPU: the same pipeline against `harness serve smollm2-135m` (the ladder's GGUF on
#       # loopback, tool calls on the wire), 2 episodes per agent
#
# Needs: a CUDA GPU visible to torch; vLLM importable by VLLM_PYTHON (default: PYTHON) with
# `--tool-call-parser hermes` (Qwen2.5/Qwen3 tool-call format); the project installed in
# PYTHON (default .venv/bin/python); MODEL = a local Hugging Face folder of a chat model with
# hermes-style tool calls (Qwen2.5-7B-Instruct, or Qwen3-4B, the paper's model, with
# thinking off: 48-token replies leave no room for a thought). The GPU machine has no
# network: weights on it or in the carried tree. Each missing requirement stops the script
# with one line on stderr and exit code 2. Runtime on one H100: not measured yet (no GPU was
# lent when it was written); estimated 5-10 minutes after the server is up (200 episodes of
# <= 9 short calls; vLLM batches Inspect's concurrent requests; N sets the episodes). Resumable: rerun with the
# same LOGS and finished cells are skipped.
#
# Writes: logs to methods/studies/lightwm_household_qwen/logs/gpu_vllm/ (a run declared in
# ../study.yaml; the rendered study file is kept there as study.yaml), the report to
# methods/studies/lightwm_household_qwen/gpu/report/; the server's output to a fresh
# temporary folder (not kept). SMOKE=1 writes everything under that temporary folder
# (LOGS/REPORT override), never into the study. Prints at the end one JSON line (the report's computed verdict):
#   {"study": "lightwm_household_qwen", "run": "gpu_vllm", "model": ..., "smoke": false,
#    "score": "household_score/success", "treatment": {"level": "lightwm_rule", "mean": ...,
#    "ci": [..], "n": 50}, "baseline": {"level": "react", ...}, "contrast": {"estimate": ...,
#    "ci": [..], "n_items": 50}, "mdd": ..., "verdict": "...", "why": "...", "logs": ...,
#    "report": ...}
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
STUDY=methods/studies/lightwm_household_qwen
PY="${PYTHON:-.venv/bin/python}"
die() { echo "gpu.sh ($STUDY): $*" >&2; exit 2; }
[ -x "$PY" ] || command -v "$PY" >/dev/null || die "no Python at PYTHON=$PY (the project's venv)"
export HF_HUB_OFFLINE=1 INSPECT_DISPLAY=plain
if [ "${SMOKE:-0}" = 1 ]; then
  LOGS="${LOGS:-}" REPORT="${REPORT:-}"
  SERVED=smollm2-135m TASK_ARGS='{"n": 2}'
else
  [ -n "${MODEL:-}" ] || die "set MODEL to a local Hugging Face folder of the served model"
  [ -f "$MODEL/config.json" ] || die "MODEL=$MODEL is not a local Hugging Face folder (no config.json)"
  "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
    || die "no CUDA GPU visible to torch in $PY"
  VPY="${VLLM_PYTHON:-$PY}"
  "$VPY" -c 'import vllm' 2>/dev/null || die "vllm is not importable by $VPY (set VLLM_PYTHON)"
  LOGS="${LOGS:-$STUDY/logs/gpu_vllm}" REPORT="${REPORT:-$STUDY/gpu/report}"
  SERVED=lightwm-gpu TASK_ARGS="{\"n\": ${N:-50}}"
fi
"$PY" -c 'import harness.cli, inspect_ai, openai' 2>/dev/null \
  || die "$PY lacks the project (harness, inspect_ai, openai): install it there"
TMP="$(mktemp -d -t lightwm-gpu-XXXXXX)"
LOGS="${LOGS:-$TMP/logs/smoke}" REPORT="${REPORT:-$TMP/report}"
PORT="${PORT:-8000}"
if [ "${SMOKE:-0}" = 1 ]; then
  "$PY" -m harness.cli serve smollm2-135m --port 0 > "$TMP/server.log" 2>&1 &
else
  "$VPY" -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name "$SERVED" \
    --port "$PORT" --enable-auto-tool-choice --tool-call-parser hermes --max-model-len 16384 \
    > "$TMP/server.log" 2>&1 &
fi
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
# The server's base URL: `harness serve --port 0` prints the one it bound; vLLM uses PORT.
for _ in $(seq 600); do
  kill -0 "$SERVER" 2>/dev/null || die "the server exited: $(tail -n 1 "$TMP/server.log")"
  if [ "${SMOKE:-0}" = 1 ]; then
    BASE="$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$TMP/server.log" | head -n 1 || true)"
  else
    BASE="http://127.0.0.1:$PORT/v1"
  fi
  if [ -n "$BASE" ] && "$PY" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/models", timeout=2)' "$BASE" 2>/dev/null; then
    break
  fi
  BASE=""; sleep 1
done
[ -n "$BASE" ] || die "the server did not answer in 600 s: $(tail -n 1 "$TMP/server.log")"
export EVALSUITE_BASE_URL="$BASE" EVALSUITE_API_KEY=local
mkdir -p "$LOGS"
# The GPU study: ../study.yaml with the model replaced by the served one and n episodes
# (agents, schemas, budgets, scores and claim are the committed study's).
"$PY" - "$STUDY/study.yaml" "$LOGS/study.yaml" "openai-api/evalsuite/$SERVED" "$TASK_ARGS" <<'PYEOF'
import json, os, sys
import yaml
src, dst, model, task_args = sys.argv[1:5]
study = yaml.safe_load(open(src))
study["runs"] = {"main": "the committed study", "gpu_vllm": "this GPU run"}
study.pop("summaries", None)
study["response"]["tasks"][0]["args"].update(json.loads(task_args))
for factor in study["factors"]:
    if factor["name"] == "model":
        factor["levels"] = [{"label": "served", "value": model}]
text = yaml.safe_dump(study, sort_keys=False)
if not os.path.exists(dst) or open(dst).read() != text:
    open(dst, "w").write(text)
PYEOF
start=$(date +%s)
"$PY" -m harness.cli study run "$LOGS/study.yaml" --log-dir "$LOGS"
"$PY" -m harness.cli study report "$LOGS" --out "$REPORT"
echo "gpu.sh ($STUDY): run and report took $(( $(date +%s) - start )) s" >&2
"$PY" -m harness.cli study verdict "$REPORT" \
    --set study=lightwm_household_qwen --set run="$(basename "$LOGS")" \
    --set model="${MODEL:-$SERVED}" \
    --set smoke="$([ "${SMOKE:-0}" = 1 ] && echo true || echo false)" --set logs="$LOGS"
