#!/usr/bin/env bash
# The base install alone: a fresh venv with `pip install -e .` and no extras (no web, cpu,
# gpu, lmeval, distributed) must list the suite, run `harness doctor` and a benchmark that
# needs no extra. Optional extras stay optional.
#   bash .ci/base-install.sh     (about a minute with pip's cache warm from .ci/setup.sh)
# Environment: PYTHON (default: the interpreter behind ./.venv, else python3.11 / python3),
# KEEP=1 keeps the temporary folder (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ -n "${PYTHON:-}" ]; then
  PY=$PYTHON
elif [ -x .venv/bin/python ]; then
  PY=$(.venv/bin/python -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
else
  PY=$(command -v python3.11 || command -v python3)
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/evalsuite-base-install.XXXXXX")
# setuptools' editable build writes harness.egg-info into the source tree; left there, it
# shadows the .venv's dist-info for anything that puts the repo root on sys.path (`python -m
# pytest`), and Inspect then registers the suite's names without their `harness/` prefix
leftover=""
[ -e "$repo/harness.egg-info" ] || leftover="$repo/harness.egg-info"
cleanup() {
  if [ -n "$leftover" ]; then rm -rf "$leftover"; fi
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
if [ "${KEEP:-0}" = 1 ]; then
  echo "== keeping $tmp"
fi
start=$(date +%s)

echo "== fresh venv with $("$PY" --version) in $tmp"
"$PY" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
echo "== pip install -e . (base only)"
# --no-compile: byte-compiling every installed package is ~15 s of CPU that checks nothing
# here (pip does not fail on it); Python compiles what the checks below import
"$py" -m pip install -q --no-compile -e "$repo"

# nothing optional came in through a base dependency (else this would not test the base case)
"$py" - <<'EOF'
import importlib.util
import sys

optional = ("playwright", "torch", "transformers", "accelerate", "vllm", "lm_eval", "ray")
present = [m for m in optional if importlib.util.find_spec(m) is not None]
if present:
    sys.exit(f"the base install pulled optional packages: {', '.join(present)}")
EOF

# run from outside the checkout: the installed package, not the working directory, answers
cd "$tmp"
export INSPECT_DISPLAY=plain HF_HUB_OFFLINE=1

echo "== harness list --json"
"$tmp/venv/bin/harness" list --json > list.json
"$py" - <<'EOF'
import json

inv = json.load(open("list.json"))
bench = {row["name"]: row for row in inv["benchmarks"]}
for name in ("arithmetic", "causalgame", "worldtravel"):
    assert bench.get(name, {}).get("status") == "available", (name, bench.get(name))
web = bench.get("worldtravel_webscape")
assert web is not None and web.get("extra") == "web", web
assert "harness[web]" in str(web.get("status")), web
print(f"   {len(bench)} benchmarks, {len(inv.get('methods', []))} methods listed; "
      f"webscape: {web['status']}")
EOF

echo "== harness doctor (informational: exits 0 whatever it finds)"
"$tmp/venv/bin/harness" doctor --json > doctor.json
"$py" -c 'import json; d = json.load(open("doctor.json")); print("   extra:web =", d["extra:web"])'

echo "== inspect eval harness/arithmetic --model scripted/arith-oracle --limit 5"
"$tmp/venv/bin/inspect" eval harness/arithmetic --model scripted/arith-oracle --limit 5 \
  --display plain --log-dir "$tmp/logs" --log-format json > eval.out 2>&1 \
  || { cat eval.out; exit 1; }
"$py" - "$tmp/logs" <<'EOF'
import json
import sys
from pathlib import Path

logs = sorted(Path(sys.argv[1]).glob("*.json"))
assert len(logs) == 1, logs
log = json.loads(logs[0].read_text())
assert log["status"] == "success", log.get("error")
samples = log["results"]["completed_samples"]
assert samples == 5, samples
accuracy = log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
print(f"   status success, {samples} samples, accuracy {accuracy}")
EOF

echo "== base install OK in $(( $(date +%s) - start )) s"
