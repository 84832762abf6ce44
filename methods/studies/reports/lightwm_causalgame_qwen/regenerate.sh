#!/usr/bin/env bash
# Rebuild every report of the lightwm-causalgame-qwen study from its committed logs (one command):
#   bash methods/studies/reports/lightwm_causalgame_qwen/regenerate.sh
# report.{md,html,json}: prompt tokens per call (the headline: every agent survives 0);
# survival/, model_calls/, tool_calls/: the same engine report for Stage-2 survival, the
# model calls and the tool calls an episode made; summary.md: every key side by side.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
R=methods/studies/reports/lightwm_causalgame_qwen
H=${HARNESS:-.venv/bin/harness}
"$H" study report "$R/study_logs" --out "$R" --score-key prompt_cost/prompt_tokens
"$H" study report "$R/study_logs" --out "$R/survival" --score-key causalgame_scorer/survival
"$H" study report "$R/study_logs" --out "$R/model_calls" --score-key prompt_cost/model_calls
"$H" study report "$R/study_logs" --out "$R/tool_calls" --score-key tool_call_validity/calls
.venv/bin/python -m methods.agents.lightwm.study_summary "$R/study_logs" --out "$R/summary.md" \
  --keys causalgame_scorer/victory causalgame_scorer/survival tool_call_validity/calls \
  tool_call_validity/rate prompt_cost/prompt_tokens prompt_cost/prompt_tokens_max \
  prompt_cost/model_calls
