"""Kind folders hold shared machinery only; a paper's code lives in ``methods/<paper>/``.

Issue 45: a paper has one folder name in every layer (``environments/<p>/``,
``methods/<p>/``, ``benchmarks/paper_tasks/<p>/``), and the kind folders (``agents/``,
``editors/``, ``kv/``, ``recipes/``, ``rl/``) keep what several papers share. Two checks,
so neither a new file nor a renamed one slips through: every module in a kind folder is in
:data:`SHARED` with the reason it is shared, and no name there is a paper's (a paper folder
in any layer, or a module that already moved out: :data:`harness.plugins.aliases.MOVED`).
"""

from __future__ import annotations

from pathlib import Path

from harness.plugins.aliases import MOVED

ROOT = Path(__file__).resolve().parents[2]

KIND_FOLDERS = ("agents", "editors", "kv", "models", "recipes", "rl")
"""``methods/`` folders named by what their code is, not by whose (``models/`` emptied when
ESamp and MVR-cache moved; a module reappearing there is checked too)."""

DOCS = {"README.md", "RESULTS.md", "__init__.py"}

SHARED: dict[str, str] = {
    "agents/bridged.py": "any external agent through Inspect's agent bridge (issue 52)",
    "agents/memory_react.py": "react and react-memory: baselines any agent study runs",
    "editors/simple.py": "none and ike: the reference editors every editing study compares with",
    "editors/retrieval.py": "key-aware retrieval editor, a baseline for MedREK and the others",
    "editors/parametric": "FT-L, ROME, MEMIT, GRACE, WISE: other papers' editors as baselines",
    "kv/cache.py": "cache plumbing, RoPE undo/redo, byte accounting for every KV method",
    "kv/curves.py": "memory-vs-quality table of any KV study",
    "recipes/tinylm.py": "the tiny byte-level LM trainer several recipes build on",
    "recipes/synthetic.py": "synthetic training streams for skill-probing recipes",
    "rl/curves.py": "training curves of any built rl product",
    "rl/losses.py": "GRPO and PMD-mean losses (RL recipes, ThetaEvolve's TTRL, SCOUT)",
    "rl/multiturn.py": "multi-turn game rollouts for the trainer (SCOUT, any game task)",
    "rl/policy.py": "the trained policy: sampling with an explicit generator, log-probs",
    "rl/rollouts.py": "prompts, rewards and rollout sources the trainer consumes",
    "rl/trainer.py": "the seeded, resumable GRPO / PMD-mean trainer",
}
"""Every module or package in a kind folder, with why it is shared (several papers or any
benchmark use it)."""


def paper_names(root: Path) -> set[str]:
    """Every paper's folder name in any layer, and the names of modules that moved out of
    the kind folders because they belong to one paper (``xkv``, ``medrek``, ``ttrl``...)."""
    layers = [root / "environments", root / "benchmarks", root / "benchmarks" / "paper_tasks",
              root / "methods"]
    names = {p.name for layer in layers if layer.is_dir() for p in layer.iterdir()
             if p.is_dir() and not p.name.startswith(("_", "."))}
    names -= {*KIND_FOLDERS, "studies", "paper_tasks", "probes"}
    return names | {old.rsplit(".", 1)[1] for old in MOVED}


def per_paper_files(root: Path, shared: dict[str, str]) -> list[str]:
    """What a kind folder holds that is not declared shared, or is named for a paper."""
    papers = paper_names(root)
    found = []
    for kind in KIND_FOLDERS:
        folder = root / "methods" / kind
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.name in DOCS or path.name.startswith((".", "__pycache__")):
                continue
            rel = f"{kind}/{path.name}"
            stem = path.name.removesuffix(".py")
            named_for = next((p for p in papers if stem == p or stem.startswith(p + "_")), None)
            if rel not in shared:
                found.append(f"methods/{rel}: not declared shared (a paper's code goes to "
                             f"methods/<paper>/)")
            elif named_for is not None:
                found.append(f"methods/{rel}: named for the paper {named_for!r}")
    return found


def test_kind_folders_hold_no_per_paper_module() -> None:
    assert per_paper_files(ROOT, SHARED) == []


def test_every_declared_shared_module_exists() -> None:
    assert [rel for rel in SHARED if not (ROOT / "methods" / rel).exists()] == []


def test_a_per_paper_module_in_a_kind_folder_is_found(tmp_path: Path) -> None:
    """The check fails on the two ways a paper's code can land in a kind folder."""
    (tmp_path / "environments" / "household").mkdir(parents=True)
    kv = tmp_path / "methods" / "kv"
    kv.mkdir(parents=True)
    for name in ("__init__.py", "cache.py", "xkv.py", "household_memory.py"):
        (kv / name).write_text("")
    shared = {"kv/cache.py": "shared", "kv/household_memory.py": "claimed shared"}
    assert per_paper_files(tmp_path, shared) == [
        "methods/kv/household_memory.py: named for the paper 'household'",
        "methods/kv/xkv.py: not declared shared (a paper's code goes to methods/<paper>/)",
    ]
    # declaring a moved paper's module shared does not hide it: xKV's name is a paper's
    assert per_paper_files(tmp_path, {**shared, "kv/xkv.py": "x"})[1] == \
        "methods/kv/xkv.py: named for the paper 'xkv'"
