#!/usr/bin/env bash
# Grade the FormulaCode pack's wall tasks (parallelism, I/O hiding) on a quiet host, such
# as a GPU machine's dedicated cores (issue 46, item 3). On the shared 2-core VM these tasks
# are reported "not graded: host noise X%"; here validate probes the host before each task
# (environments/formulacode/host_noise.py) and grades it only when the probe is quiet.
#
#   bash benchmarks/formulacode/grade_wall_quiet.sh [OUT_DIR]
#
# Needs the project's venv (.venv, or PYTHON=...) and nothing from the network (--local:
# the same in-container runtime as a subprocess). Sized to fit one 10-minute device command
# (7 tasks, 5 rounds, 0.1 s of sampling per workload per round); not run yet, so its
# duration is an estimate from the 2-core quiet run (55.7 min for 25 tasks at 0.25 s and up
# to 8 rounds). Writes OUT_DIR/validate.json, validate.log, probe.json and raw/ (regrade
# with `harness formulacode validate --regrade OUT_DIR/raw`). The default OUT_DIR is a run
# of the study methods/studies/formulacode_acceptance/: declare it in its study.yaml.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${1:-${OUT:-methods/studies/formulacode_acceptance/logs/wall_quiet_$(date -u +%Y%m%d)}}"
PY="${PYTHON:-.venv/bin/python}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 INSPECT_DISPLAY=plain
WALL="$("$PY" -c 'from environments.formulacode.records import load_records
from environments.formulacode.grader import task_timer
print(",".join(r.extra["pack_slug"] for r in load_records("pack") if task_timer(r.extra) == "wall"))')"
"$PY" -c 'import json; from environments.formulacode import host_noise
print(json.dumps(host_noise.probe()))' > "$OUT/probe.json"
echo "wall tasks: $WALL; probe: $(cat "$OUT/probe.json")" >&2
rc=0
timeout 570 "$PY" -m benchmarks.formulacode.validate --local --json --tasks "$WALL" \
  --rounds 5 --max-rounds 5 --sample-budget 0.1 --raw-dir "$OUT/raw" \
  > "$OUT/validate.json" 2> "$OUT/validate.log" || rc=$?
echo "validate exit code $rc (0: every criterion passed; 124: stopped at 570 s, regrade raw/)" >&2
exit "$rc"
