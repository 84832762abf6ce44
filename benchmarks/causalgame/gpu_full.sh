#!/bin/bash
# The full validation (14 scenarios x 3 trials, agentic and prompting, protocol=published)
# with a served 7B-class model on one GPU (issue 48 item 2). Needs vLLM and the model's
# weights on the GPU machine (it has no network: copy them there, or point MODEL at a local
# folder). Resumable: rerun with the same LOGS and Inspect's eval-set skips finished work.
#   bash benchmarks/causalgame/gpu_full.sh [MODEL] [LOGS]
set -euo pipefail
MODEL=${1:-Qwen/Qwen2.5-7B-Instruct}
LOGS=${2:-leaderboards/causalgame_validation/logs/causalgame/gpu-published}
PORT=${PORT:-8000}
python -m vllm.entrypoints.openai.api_server --model "$MODEL" --port "$PORT" \
    --enable-auto-tool-choice --tool-call-parser hermes --max-model-len 32768 &
SERVER=$!
trap 'kill $SERVER' EXIT
until curl -sf "http://localhost:$PORT/v1/models" >/dev/null; do sleep 5; done
export LOCAL_BASE_URL="http://localhost:$PORT/v1" LOCAL_API_KEY=local  # openai-api/local/...
for MODE in agentic prompting; do
  inspect eval-set harness/causalgame --model "openai-api/local/$MODEL" \
      -T protocol=published -T mode=$MODE -T epochs=3 -T seed=0 \
      --max-samples 8 --log-dir "$LOGS-$MODE"
  harness causalgame rescore "$LOGS-$MODE"
done
