#!/usr/bin/env bash
# Rebuild every report of the lightwm-household-qwen study from its committed logs (one command):
#   bash methods/studies/reports/lightwm_household_qwen/regenerate.sh
# report.{md,html,json}: success (the headline); prompt_tokens/, invalid/, steps/: the same
# engine report for the per-call prompt length, the invalid actions and the actions taken.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
R=methods/studies/reports/lightwm_household_qwen
H=${HARNESS:-.venv/bin/harness}
"$H" study report "$R/study_logs" --out "$R" --score-key household_score/success
for key in prompt_tokens invalid steps; do
  "$H" study report "$R/study_logs" --out "$R/$key" --score-key "household_score/$key"
done
.venv/bin/python -m methods.agents.lightwm.study_summary "$R/study_logs" --out "$R/summary.md"
