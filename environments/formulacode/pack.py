"""The offline task pack: small scientific-Python packages written by this project.

Each ``taskpack/<slug>/`` holds ``repo/`` (the package at its "base commit": source, an
asv-style ``benchmarks/`` suite, ``tests/``, ``asv.conf.json``), ``solution/`` (the files the
expert's change rewrites, in full) and ``task.json`` (problem statement and labels). This
module turns a folder into a record of the real dataset's schema (``records.py``): the
expert ``patch`` is the unified diff repo -> solution, and the base/merge "shas" are content
digests, so a record changes exactly when its files do.

The same folders are baked into the task-family image (``docker/Dockerfile``), where
``prepare_repos.sh`` makes each one a git repository with the base commit tagged
``fc-base``; :func:`materialize` does the same on the host for docker-free tests.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

PACK_DIR = Path(__file__).parent / "taskpack"
BASE_REF = "fc-base"
FAMILY = "evalsuite-pack"
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "formulacode", "GIT_AUTHOR_EMAIL": "pack@formulacode.invalid",
    "GIT_COMMITTER_NAME": "formulacode", "GIT_COMMITTER_EMAIL": "pack@formulacode.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
}


def pack_slugs(pack_dir: Path = PACK_DIR) -> list[str]:
    """Folder names of the pack's tasks, sorted."""
    return sorted(p.name for p in pack_dir.iterdir() if (p / "task.json").is_file())


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def expert_patch(task_dir: Path) -> str:
    """Unified diff (``a/``/``b/`` prefixes, git-applicable) from repo/ to repo/ + solution/."""
    base, solution = _files(task_dir / "repo"), _files(task_dir / "solution")
    chunks: list[str] = []
    for rel in sorted(solution):
        old = base.get(rel)
        new = solution[rel]
        header = f"diff --git a/{rel} b/{rel}\n"
        if old is None:
            header += "new file mode 100644\n"
        diff = difflib.unified_diff(
            (old or "").splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile=f"a/{rel}" if old is not None else "/dev/null", tofile=f"b/{rel}", n=3,
        )
        body = "".join(diff)
        if body:
            chunks.append(header + body)
    return "".join(chunks)


def _digest(*parts: str) -> str:
    h = hashlib.sha1()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def pack_record(slug: str, counter: int, pack_dir: Path = PACK_DIR) -> dict[str, Any]:
    """One pack task as a row of the paper-era schema (``formulacode-all`` columns)."""
    task_dir = pack_dir / slug
    meta = json.loads((task_dir / "task.json").read_text())
    files = _files(task_dir / "repo")
    base_sha = _digest(*(f"{k}\n{v}" for k, v in files.items()))
    patch = expert_patch(task_dir)
    repo_name = meta["repo_name"]
    container = f"{repo_name.replace('/', '-').lower()}-{base_sha}:final"
    owner, repo = repo_name.split("/")
    # how the task is measured (task.json): "measure" ("cycles" | "wall"), the older
    # "timer" ("process_cpu" | "wall") and, for the wall clock, "cpus" (a count or a CPU
    # list); only present when declared
    timing = {k: meta[k] for k in ("measure", "timer", "cpus") if k in meta}
    # what the optimisation is (parallelism, io, caching, ...): validate's acceptance
    # checks that parallel tasks are wall-timed
    if "kind" in meta:
        timing["kind"] = meta["kind"]
    return {
        "task_id": f"{owner}_{repo}_{counter}",
        "repo_name": repo_name,
        "container_name": container,
        "image_name": f"formulacode/all:{container.replace(':', '--')}",
        "difficulty": meta["difficulty"],
        "classification": meta["classification"],
        "patch": patch,
        "final_md": meta["final_md"],
        "pr_merged_at": meta["pr_merged_at"],
        "pr_merge_commit_sha": _digest(base_sha, patch),
        "pr_base_sha": base_sha,
        "pr_number": int(meta["pr_number"]),
        "pack_slug": slug,
        **timing,
    }


def pack_records(pack_dir: Path = PACK_DIR) -> list[dict[str, Any]]:
    """Every pack task as a record, sorted by merge date like the published dataset."""
    rows = [pack_record(slug, 1, pack_dir) for slug in pack_slugs(pack_dir)]
    return sorted(rows, key=lambda r: (r["pr_merged_at"], r["pack_slug"]))


def pack_digest(pack_dir: Path = PACK_DIR) -> str:
    """Content digest of the whole pack (names the family image, so edits rebuild it)."""
    parts = []
    for slug in pack_slugs(pack_dir):
        for rel, text in _files(pack_dir / slug).items():
            parts.append(f"{slug}/{rel}\n{text}")
    docker_dir = Path(__file__).parent / "docker"
    parts += [f"{p.name}\n{p.read_text()}" for p in sorted(docker_dir.glob("*")) if p.is_file()]
    return _digest(*parts)[:12]


def materialize(slug: str, dest: Path, pack_dir: Path = PACK_DIR) -> Path:
    """Copy a task's repo to ``dest`` as a git repository whose base commit is tagged
    ``fc-base`` (what the image's ``prepare_repos.sh`` does); returns ``dest``."""
    shutil.copytree(pack_dir / slug / "repo", dest, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, **_GIT_ENV}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "commit", "-q", "-m", "base"], ["git", "tag", BASE_REF]):
        subprocess.run(cmd, cwd=dest, env=env, check=True, capture_output=True)
    return dest
