#!/usr/bin/env bash
# SCD's TTFT, measured on a GPU (issue 49, item 5). The claim (Semantic Cache Distillation,
# ICML 2026, abstract): "SCD delivers up to 2.65x TTFT speedup over the oracle consumer
# prefill ... in bandwidth-constrained regimes". The CPU study (../study.yaml) measures
# quality (agreement with the consumer's own tokens) and reports TTFT only from a stated
# bandwidth/FLOP model; this times both sides on the device (gpu/ttft.py: the consumer's full
# prefill vs SCD's rebuild of the producer's cache plus one consumer step, with the code's
# transfer at 10 Gbit/s stated), for ~2k and ~8k-token prompts at code ranks 64 and 16, two
# residual-code patch layers, 5 timed repeats after a warm-up.
#
#   PRODUCER=/path/Qwen2.5-7B CONSUMER=/path/Qwen2.5-7B-Instruct \
#       bash methods/studies/kv_scd/gpu/gpu.sh
#   SMOKE=1 bash methods/studies/kv_scd/gpu/gpu.sh   # CPU, the study's SmolLM2 pair, 256 tokens
#
# Needs: a CUDA GPU visible to torch (one H100: two bf16 7B models take ~30 GiB); the project
# installed in PYTHON (default .venv/bin/python: harness, methods, transformers); PRODUCER
# and CONSUMER = local Hugging Face folders of a base model and a fine-tune of it (same
# architecture: RoPE attention with separate k_proj/v_proj, as Llama/Qwen2), e.g.
# Qwen2.5-7B and Qwen2.5-7B-Instruct. The GPU machine has no network: weights on it or in
# the carried tree. Each missing requirement stops the script with one line on stderr and
# exit code 2. Runtime on one H100: not measured yet (no GPU was lent when it was written);
# estimated 2-4 minutes, most of it loading the two models (24 timed configurations of one
# prefill and one rebuild each, each well under a second at 8k tokens).
#
# Writes: methods/studies/kv_scd/logs/gpu_ttft/ttft.json (a run declared in ../study.yaml);
# SMOKE=1 writes under a fresh temporary folder (OUT overrides), never into the study.
# Prints one JSON line per (prompt length, rank) as it goes, then the table's summary line:
#   {"prompt_tokens": 2051, "rank": "64", "patch": 2, "repeats": 5, "prefill_ms": ...,
#    "rebuild_ms": ..., "transfer_ms": ..., "raw_transfer_ms": ..., "code_bytes": ...,
#    "raw_kv_bytes": ..., "speedup": ..., "speedup_ci": [lo, hi]}
#   {"study": "kv_scd", "run": "gpu_ttft", "device_name": ..., "max_speedup": ...,
#    "claimed": 2.65, "out": ...}
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
STUDY=methods/studies/kv_scd
PY="${PYTHON:-.venv/bin/python}"
die() { echo "gpu.sh ($STUDY): $*" >&2; exit 2; }
[ -x "$PY" ] || command -v "$PY" >/dev/null || die "no Python at PYTHON=$PY (the project's venv)"
export HF_HUB_OFFLINE=1
if [ "${SMOKE:-0}" = 1 ]; then
  OUT="${OUT:-$(mktemp -d -t scd-gpu-smoke-XXXXXX)/logs/smoke/ttft.json}"
  ARGS=(--device cpu --dtype float32 --tokens 256 --ranks 16 --repeats 2)
else
  for var in PRODUCER CONSUMER; do
    [ -n "${!var:-}" ] || die "set $var to a local Hugging Face folder"
    [ -f "${!var}/config.json" ] || die "$var=${!var} is not a local Hugging Face folder (no config.json)"
  done
  "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null \
    || die "no CUDA GPU visible to torch in $PY"
  OUT="${OUT:-$STUDY/logs/gpu_ttft/ttft.json}"
  ARGS=(--producer "$PRODUCER" --consumer "$CONSUMER" --device cuda --dtype bfloat16
        --tokens 2048,8192 --ranks 64,16 --repeats 5)
fi
"$PY" -c 'import harness.stats, methods.scd.scd, transformers' 2>/dev/null \
  || die "$PY lacks the project (harness, methods, transformers): install it there"
start=$(date +%s)
"$PY" "$STUDY/gpu/ttft.py" "${ARGS[@]}" --out "$OUT"
echo "gpu.sh ($STUDY): timing took $(( $(date +%s) - start )) s" >&2
"$PY" - "$OUT" <<'PYEOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"study": "kv_scd", "run": os.path.basename(os.path.dirname(sys.argv[1])),
                  "device_name": r["device_name"], "dtype": r["dtype"],
                  "max_speedup": max(row["speedup"] for row in r["rows"]), "claimed": 2.65,
                  "out": sys.argv[1]}))
PYEOF
