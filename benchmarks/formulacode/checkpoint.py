"""Mid-sample checkpoints of a FormulaCode episode: the agent's workspace survives a crash.

Inspect's checkpoints (``-T checkpoint=turns``) save the conversation (``react()`` tracks
it), the store and the model usage, but the episode's real state is the repository the
agent edits in the docker sandbox, ``/workspace/repo``. On a resume the sandbox is a new
container and ``prepare_repo`` has just put the repository back at its base commit, so the
agent's edits must be put back on top.

How: before every checkpoint, :func:`save_workspace` (``Task.on_checkpoint``) takes the
workspace's delta against the base commit ``fc-base`` exactly as the grader sees it (the
working tree in a throw-away index with ``git add -A``: tracked edits, new files and
deletions, ``.gitignore``d files left out) as one ``git diff --binary`` patch, plus the
agent's own git index against ``fc-base`` (what it staged), and keeps both compressed in
the store under one SHA-256, which the checkpoint then saves. :func:`restore_workspace`
(``Task.on_resume``) applies the first patch to the freshly prepared working tree and the
second to its index, then takes the delta again: the resume goes on only if it is
byte-identical to the saved one. A patch applied to the base tree deletes what the agent
deleted, so nothing comes back.

Why not Inspect's sandbox snapshot of ``/workspace``: its restic restore writes the saved
files over the prepared tree without deleting the ones the snapshot lacks (a file the agent
deleted would come back), it would also restore ``.git`` over the new clone, and it injects
and runs restic in the task container at every checkpoint. The sandbox snapshot is turned
off for every sample (:data:`SAMPLE_CHECKPOINT`).

Not restored: git-ignored files (build outputs, ``__pycache__``), files outside the
repository (``/tmp``: the agent's timing files, the completion sentinel), commits and
branches the agent made (HEAD is ``fc-base`` again; their content is in the restored
working tree and index, which is all the grader reads), and any process the agent left
running.
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from typing import Any

from inspect_ai.solver import TaskState
from inspect_ai.util import CheckpointSampleConfig, ResumeReport, sandbox, store

from environments.formulacode.images import WORKDIR
from environments.formulacode.pack import BASE_REF

WORKSPACE_KEY = "formulacode:workspace"
"""Store key of the last saved workspace delta: ``{"sha256", "bytes", "files", "patch"}``
(``patch``: the zlib-compressed ``git diff --binary``, base64)."""

MAX_DELTA_BYTES = 32 * 1024 * 1024
"""Largest delta a checkpoint keeps (uncompressed). The patch sits in the store, which
every checkpoint and the sample's log carry, so an agent that writes a large generated
file into the repository stops being checkpointable with a clear error rather than
silently bloating the log."""

_PATCH = "/tmp/fc_checkpoint.patch"
_INDEX = "/tmp/fc_checkpoint.index"
_GIT = ["git", "-c", "core.autocrlf=false", "-c", "diff.noprefix=false",
        "-c", "core.quotepath=false"]

RESUME_MESSAGE = (
    "This session was resumed from a checkpoint after a crash: /workspace/repo holds your "
    "changes as uncommitted edits against fc-base; files outside it (such as /tmp) and "
    "git-ignored files are gone, and commands after the checkpoint were not kept."
)
"""What changed on a resume, for an agent that tells its model (``react()`` does not)."""

SAMPLE_CHECKPOINT = CheckpointSampleConfig(sandbox_paths={"default": []})
"""Whatever layer turns checkpointing on, the task container is not snapshotted by restic:
the workspace travels as a patch in the store (see the module docstring)."""


def _delta_script() -> str:
    """Shell that writes the workspace's delta against the base to ``_PATCH`` (the
    grader's ``agent_patch`` rule, in a throw-away index) and the agent's own index
    against the base to ``_PATCH.index``, and prints both sizes and the number of files
    the first touches."""
    git = " ".join(_GIT)
    diff = "diff --cached --binary --full-index --no-renames --no-ext-diff --no-color"
    return (
        "set -e\n"
        f"rm -f {_INDEX}\n"
        f"GIT_INDEX_FILE={_INDEX} {git} read-tree {BASE_REF}\n"
        f"GIT_INDEX_FILE={_INDEX} {git} add -A -- .\n"
        f"GIT_INDEX_FILE={_INDEX} {git} {diff} {BASE_REF} > {_PATCH}\n"
        f"files=$(GIT_INDEX_FILE={_INDEX} {git} diff --cached --name-only --no-renames "
        f"{BASE_REF} | wc -l)\n"
        f"rm -f {_INDEX}\n"
        f"{git} {diff} {BASE_REF} > {_PATCH}.index\n"
        f"echo $(wc -c < {_PATCH}) $(wc -c < {_PATCH}.index) $files\n"
    )


async def _exec(cmd: list[str], what: str) -> str:
    done = await sandbox().exec(cmd, cwd=WORKDIR, timeout=600)
    if not done.success:
        raise RuntimeError(f"FormulaCode checkpoint: {what} failed: {done.stderr[-2000:]}")
    return done.stdout


async def workspace_delta() -> tuple[bytes, bytes, int]:
    """The workspace's patch against ``fc-base`` (what the grader sees), the agent's
    git index against ``fc-base`` (what it staged), and how many files the first touches."""
    tree_text, index_text, files_text = (
        await _exec(["sh", "-c", _delta_script()], "git diff")).split()
    size = int(tree_text) + int(index_text)
    if size > MAX_DELTA_BYTES:
        await sandbox().exec(["rm", "-f", _PATCH, f"{_PATCH}.index"])
        raise RuntimeError(
            f"FormulaCode checkpoint: the workspace delta is {size} bytes, over the "
            f"{MAX_DELTA_BYTES}-byte limit (a large file in /workspace/repo that is not "
            "git-ignored?); checkpoints of this sample cannot be taken"
        )
    tree = await sandbox().read_file(_PATCH, text=False) if int(tree_text) else b""
    index = await sandbox().read_file(f"{_PATCH}.index", text=False) if int(index_text) else b""
    await sandbox().exec(["rm", "-f", _PATCH, f"{_PATCH}.index"])
    return tree, index, int(files_text)


def _digest(tree: bytes, index: bytes) -> str:
    return hashlib.sha256(hashlib.sha256(tree).digest() + hashlib.sha256(index).digest()
                          ).hexdigest()


def _pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 6)).decode("ascii")


def pack_delta(tree: bytes, index: bytes, files: int) -> dict[str, Any]:
    """The store entry of one delta (both patches compressed, with one digest)."""
    return {"sha256": _digest(tree, index), "bytes": len(tree) + len(index),
            "files": files, "tree": _pack(tree), "index": _pack(index)}


def unpack_delta(entry: dict[str, Any]) -> tuple[bytes, bytes]:
    """The two patches of a store entry, refused if they do not match its digest."""
    tree, index = (zlib.decompress(base64.b64decode(entry[k])) for k in ("tree", "index"))
    if _digest(tree, index) != entry["sha256"]:
        raise RuntimeError("FormulaCode resume: the saved workspace delta is corrupt "
                           "(its SHA-256 does not match)")
    return tree, index


async def save_workspace(state: TaskState) -> None:
    """``Task.on_checkpoint``: put the workspace's current delta in the store (rewritten
    only when it changed, so an idle turn adds no store event)."""
    tree, index, files = await workspace_delta()
    saved = store().get(WORKSPACE_KEY)
    if not saved or saved.get("sha256") != _digest(tree, index):
        store().set(WORKSPACE_KEY, pack_delta(tree, index, files))


async def _apply(patch: bytes, *flags: str) -> None:
    if patch:
        await sandbox().write_file(_PATCH, patch)
        await _exec([*_GIT, "apply", *flags, "--binary", "--whitespace=nowarn", _PATCH],
                    f"git apply {' '.join(flags)}".strip())
        await sandbox().exec(["rm", "-f", _PATCH])


async def restore_workspace(state: TaskState, attempt: str) -> ResumeReport:
    """``Task.on_resume``: re-apply the saved delta to the freshly prepared repository (the
    working tree, then the agent's index) and check that the workspace's delta is now the
    saved one, byte for byte.

    Runs for ``resume`` and ``resume_for_scoring`` alike (the scorer grades the workspace).
    """
    entry = store().get(WORKSPACE_KEY)
    if entry is None:
        raise RuntimeError("FormulaCode resume: the checkpoint holds no workspace delta")
    tree, index = unpack_delta(entry)
    fresh_tree, fresh_index, _ = await workspace_delta()
    reset = bool(fresh_tree or fresh_index)
    if reset:  # the prepared repository differs from fc-base (an image's untracked files)
        await _exec([*_GIT, "reset", "-q", "--hard", BASE_REF], "git reset")
        await _exec([*_GIT, "clean", "-fdq"], "git clean")
    await _apply(tree)
    await _apply(index, "--cached")
    restored_tree, restored_index, files = await workspace_delta()
    digest = _digest(restored_tree, restored_index)
    if digest != entry["sha256"]:
        raise RuntimeError(
            f"FormulaCode resume: the restored workspace's delta "
            f"({len(restored_tree) + len(restored_index)} bytes, sha256 {digest[:12]}) is "
            f"not the saved one ({entry['bytes']} bytes, sha256 {entry['sha256'][:12]})"
        )
    return ResumeReport(transparent=False, message=RESUME_MESSAGE, data={
        "attempt": attempt, "files": files, "bytes": entry["bytes"], "sha256": digest,
        "reset_prepared_tree": reset,
    })
