#!/usr/bin/env bash
# Make each pack task's repo/ a git repository with the base commit tagged fc-base.
# Usage: prepare_repos.sh PACK_DIR OUT_DIR   (fixed identity and dates: reproducible shas)
set -euo pipefail
pack="$1"; out="$2"
export GIT_AUTHOR_NAME=formulacode GIT_AUTHOR_EMAIL=pack@formulacode.invalid
export GIT_COMMITTER_NAME=formulacode GIT_COMMITTER_EMAIL=pack@formulacode.invalid
export GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z
mkdir -p "$out"
for task in "$pack"/*/; do
  slug="$(basename "$task")"
  [ -f "$task/task.json" ] || continue
  cp -a "$task/repo" "$out/$slug"
  find "$out/$slug" -name __pycache__ -prune -exec rm -rf {} +
  git -C "$out/$slug" init -q -b main
  git -C "$out/$slug" add -A
  git -C "$out/$slug" commit -q -m base
  git -C "$out/$slug" tag fc-base
done
# the agent may run as any user: let git accept these repositories
git config --system --add safe.directory '*'
