"""Run a board's evaluations from a run file: ``python -m leaderboards.runs FILE.yaml``.

Why a run file: the board's subsets, models and agents are data a reader can check against
the published tables, and the same file reruns them. Each entry expands to one
``inspect eval`` per model (``models: ladder`` means the file's ladder) or per agent
(``--model none --solver AGENT``); its logs go to ``<log_root>/<name>/<id>--<model or
agent>`` (``id`` defaults to the task's name; give one where entries differ only in args).
Runs go cheapest first: reference agents and scripted models, then the ladder from its
smallest model up, so a board is usable before its slowest runs finish. Resumable: a
folder that already holds a log with status ``success`` is skipped, so a killed run picks up
where it stopped. Wall time per run is appended to
``<log_root>/runs.jsonl``. Each run records its provenance once, in its eval's metadata
(``--metadata provenance=...``: :func:`launch_provenance`), which the board then carries.

    harness leaderboard run leaderboards/ladder --dry-run
    harness leaderboard run leaderboards/ladder --only causalgame
    harness leaderboard run leaderboards/ladder --build
    harness leaderboard run leaderboards/ladder --check

A board is one folder, ``leaderboards/<board>/``: its run file ``board.yaml``, the logs of
each run below ``logs/<run>/`` (``log_root``), and the built tables, exports and site in
``site/``. ``FILE`` is the run file or its board folder.

``--build [DIR]`` runs nothing: it builds the board from the logs with the file's ``board:``
options (headline score per benchmark, oracle and floor references, title), into ``DIR``
(default: the board folder's ``site/``). ``--check`` builds it into a scratch folder and
compares every file with the committed ``site/`` (exit 1 on a difference): the same check as
``harness leaderboard regenerate BOARD --check``, the board's counterpart of ``harness study
regenerate --check``, which without a board checks every published board (a board folder
under ``leaderboards/`` with a committed ``site/``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Run:
    """One ``inspect eval`` invocation of the board."""

    name: str
    label: str
    argv: list[str]
    log_dir: Path
    needs: str | None = None
    """A part of the machine the run cannot go without (``docker``)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment for the run; a value naming an existing relative path is made absolute
    (Inspect runs a task from its own folder)."""
    task: str | None = None
    """The task as the run file names it (a file, a folder or a registry name)."""
    model: str | None = None
    """The model the run evaluates (None for an agent run without one)."""


def _env_value(value: object) -> str:
    text = str(value)
    return str(Path(text).resolve()) if text.startswith(".") and Path(text).exists() else text


def missing(need: str | None) -> str | None:
    """Why a run's requirement is not met here (None when it is)."""
    if need is None:
        return None
    if need == "docker":
        from harness.sandbox.docker import docker_status

        if docker_status().get("daemon_running"):
            return None
        return "no Docker engine answers (bash .ci/system.sh docker dockerd base-image)"
    return f"unknown requirement {need!r}"


def _inspect() -> str:
    """The ``inspect`` command of this interpreter's environment (on PATH or not)."""
    beside = Path(sys.executable).parent / "inspect"
    return str(beside) if beside.is_file() else "inspect"


def _slug(text: str) -> str:
    return text.replace("/", "_").replace("@", "_").replace(".py", "").replace(":", "_")


def expand(spec: dict[str, Any], log_root: Path | None = None) -> list[Run]:
    """The runs of a run file, cheapest first (``log_root`` overrides the file's)."""
    root = log_root or Path(spec.get("log_root", "logs"))
    ladder = list(spec.get("ladder") or [])
    runs: list[Run] = []
    for line, entry in enumerate(spec.get("runs") or [], start=1):
        for key in ("name", "task"):
            if key not in entry:
                raise ValueError(f"runs[{line}]: field {key!r} is missing")
        base = [_inspect(), "eval", str(entry["task"]), "--display", "plain"]
        for key, value in (entry.get("args") or {}).items():
            base += ["-T", f"{key}={value}"]
        if entry.get("sample_ids"):
            base += ["--sample-id", ",".join(str(i) for i in entry["sample_ids"])]
        base += [str(f) for f in entry.get("flags") or []]
        models = entry.get("models") or []
        models = ladder if models == "ladder" else list(models)
        targets = [(m, ["--model", m]) for m in models]
        targets += [(a, ["--model", "none", "--solver", a]) for a in entry.get("agents") or []]
        if not targets:
            raise ValueError(f"runs[{line}] ({entry['name']}): no models or agents")
        task_slug = str(entry.get("id") or _slug(str(entry["task"]).split("@")[-1]
                                                  .split("/")[-1]))
        for label, extra in targets:
            folder = root / str(entry["name"]) / f"{task_slug}--{_slug(label)}"
            runs.append(Run(str(entry["name"]), label, base + extra + ["--log-dir", str(folder)],
                            folder, entry.get("needs"),
                            tuple((str(k), _env_value(v))
                                  for k, v in (entry.get("env") or {}).items()),
                            task=str(entry["task"]),
                            model=None if extra[1] == "none" else extra[1]))
    rank = {model: i for i, model in enumerate(ladder)}
    return sorted(runs, key=lambda r: rank.get(r.label, -1))


def done(folder: Path) -> bool:
    """Whether ``folder`` holds a successful log (read through the one log reader)."""
    if not folder.is_dir():
        return False
    from harness.results import read_headers

    headers = read_headers(folder)
    return bool(headers.height) and "success" in headers["status"].to_list()


def build_board(spec: dict[str, Any], out: Path, log_root: Path | None = None,
                skip_bad_logs: bool = False) -> dict[str, Path]:
    """The leaderboard of a run file's logs, with its ``board:`` options."""
    from leaderboards.build import build
    from leaderboards.tables import Options, parse_reference

    board = spec.get("board") or {}
    defaults = Options()
    pricing = board.get("pricing")
    if pricing:
        from leaderboards.build import load_pricing
    options = Options(
        headline=dict(board.get("headline") or {}),
        oracle=tuple(parse_reference(str(o)) for o in board["oracle"]) if "oracle" in board
        else defaults.oracle,
        floor=tuple(parse_reference(str(f)) for f in board["floor"]) if "floor" in board
        else defaults.floor,
        pricing=load_pricing(str(pricing)) if pricing else {},
    )
    root = log_root or Path(spec.get("log_root", "logs"))
    return build([root], out, options, title=str(board.get("title", "Leaderboard")),
                 skip_bad_logs=skip_bad_logs)


def launch_provenance(run: Run) -> dict[str, Any]:
    """The provenance record of one board run, taken when it is launched
    (:func:`harness.provenance.task_record`, as the study runner does for each cell):
    packages, the model file's sha256 for the suite's offline models, and the sha256 of
    the task's source (the run file's ``task``: a file, or a folder without caches; a
    registry name has no file to hash). The dataset and sandbox are not loaded here (that
    is the task's own start-up); the board hashes the data each log holds and Inspect
    writes the sandbox into the log header."""
    from harness.provenance import task_record

    source = (run.task or "").split("@", 1)[0]
    return task_record(None, run.model, {}, task_file=source if source and Path(source).exists()
                       else None)


def with_provenance(run: Run) -> list[str]:
    """The run's command with its provenance as eval metadata (``--metadata
    provenance=JSON``; Inspect parses the value as YAML, of which JSON is a subset), so it
    is written once into the log header."""
    record = json.dumps(launch_provenance(run), sort_keys=True, separators=(",", ":"))
    return [*run.argv, "--metadata", f"provenance={record}"]


def run_all(runs: list[Run], journal: Path, dry_run: bool = False,
            echo: Any = print) -> list[tuple[Run, str]]:
    """Run what is not done yet, in order; returns (run, outcome) for each run."""
    outcomes: list[tuple[Run, str]] = []
    for run in runs:
        # as a user types it: no path of this machine in the journal or the output
        command = shlex.join(["inspect", *run.argv[1:]])
        why = missing(run.needs)
        if why:
            echo(f"[skip] {run.name} / {run.label}: {why}")
            outcomes.append((run, f"skipped: {why}"))
            continue
        if done(run.log_dir):
            echo(f"[done] {command}")
            outcomes.append((run, "done"))
            continue
        echo(f"[run]  {command}")
        if dry_run:
            outcomes.append((run, "dry-run"))
            continue
        start = time.time()
        code = subprocess.run(with_provenance(run), env={**os.environ, "HF_HUB_OFFLINE": "1",
                                             **dict(run.env)}, check=False).returncode
        journal.parent.mkdir(parents=True, exist_ok=True)
        with journal.open("a") as out:
            out.write(json.dumps({"name": run.name, "label": run.label, "command": command,
                                  "exit": code, "wall_s": round(time.time() - start, 1),
                                  "load_avg": os.getloadavg()[0]}) + "\n")
        outcomes.append((run, "ran" if code == 0 else f"failed (exit {code})"))
    return outcomes


def read_run_file(path: Path) -> dict[str, Any]:
    """A run file, with the checks every YAML input of the suite gets (a key stated twice,
    nested aliases): errors are one line naming the file and line."""
    from harness.errors import UserInputError
    from harness.yaml_source import parse_mapping

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read the run file ({exc.strerror})") from None
    return parse_mapping(text, str(path), "<run file>", "a run file is a YAML mapping",
                         UserInputError).data


BOARD_FILE = "board.yaml"
"""The run file of a board folder (``leaderboards/<board>/board.yaml``)."""

SITE = "site"
"""Where a board folder keeps its built tables, exports and site."""

#: the tables a board must have (``--check`` compares every built file, these included)
CHECKED = ("leaderboard.md", "leaderboard.csv", "overall.csv", "pairwise.csv", "entries.csv")


def run_file(path: Path) -> Path:
    """The run file a command names: the file itself, or ``board.yaml`` of a board folder."""
    return path / BOARD_FILE if path.is_dir() else path


def _files(folder: Path) -> set[Path]:
    """Every built file under ``folder``, relative (copied logs are inputs, not outputs)."""
    if not folder.is_dir():
        return set()
    return {p.relative_to(folder) for p in folder.rglob("*")
            if p.is_file() and p.relative_to(folder).parts[0] != "logs"}


def _same(committed: Path, rebuilt: Path) -> bool:
    if committed.name == "leaderboard.json":
        docs = [json.loads(p.read_text()) for p in (committed, rebuilt)]
        for doc in docs:
            if isinstance(doc, dict):
                doc.pop("generated_at", None)
        return bool(docs[0] == docs[1])
    return committed.read_bytes() == rebuilt.read_bytes()


def check_board(spec: dict[str, Any], site: Path, skip_bad_logs: bool = False) -> list[str]:
    """Rebuild the board into a scratch folder and compare it with ``site``, file by file
    (tables, Markdown, exports, pages and pictures; ``leaderboard.json`` as data, without
    the time it was built): a file that differs, one the logs no longer build (stale) and
    one not committed are each a difference. Returns the differences."""
    import tempfile

    problems: list[str] = []
    # beside site/, so the log paths the tables record (relative to the output) read the same
    site.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".board-check-", dir=site.parent) as tmp:
        fresh = Path(tmp)
        build_board(spec, fresh, skip_bad_logs=skip_bad_logs)
        committed, rebuilt = _files(site), _files(fresh)
        for name in sorted(committed | rebuilt):
            if name not in committed:
                problems.append(f"{site / name}: not committed")
            elif name not in rebuilt:
                problems.append(f"{site / name}: stale (its logs no longer build it)")
            elif not _same(site / name, fresh / name):
                problems.append(f"{site / name}: differs from the board its logs build")
    return problems


def published_boards(root: Path = Path("leaderboards")) -> list[Path]:
    """Board folders under ``root`` with a run file and a committed ``site/``."""
    return sorted(p.parent for p in root.glob(f"*/{BOARD_FILE}") if (p.parent / SITE).is_dir())


def regenerate(boards: list[Path], check: bool, skip_bad_logs: bool = False,
               echo: Any = print) -> int:
    """``harness leaderboard regenerate``: rebuild each board's ``site/`` from its logs, or
    with ``check`` rebuild into scratch and compare (exit 1 on any difference)."""
    failed = 0
    for board in boards:
        path = run_file(board)
        spec = read_run_file(path)
        site = path.parent / SITE
        if check:
            problems = check_board(spec, site, skip_bad_logs=skip_bad_logs)
            for line in problems:
                echo(f"FAIL {line}")
            echo(f"board {path.parent}: " + ("the same as its logs build" if not problems
                                             else f"{len(problems)} differ"))
            failed += bool(problems)
        else:
            build_board(spec, site, skip_bad_logs=skip_bad_logs)
            echo(f"board {path.parent}: rebuilt {site} from {spec.get('log_root', 'logs')}")
    if check:
        echo(f"{len(boards) - failed} of {len(boards)} boards the same as their logs build")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="The run file, or its board folder.")
    parser.add_argument("--only", action="append",
                        help="Only runs of this name or id (repeatable).")
    parser.add_argument("--dry-run", action="store_true", help="Print the commands only.")
    parser.add_argument("--build", type=Path, nargs="?", const=Path(""),
                        help="Build the board into this folder (default: the board's site/).")
    parser.add_argument("--check", action="store_true",
                        help="Rebuild the board into scratch and compare it with site/.")
    parser.add_argument("--skip-bad-logs", action="store_true",
                        help="With --build: skip a log that cannot be read (counted in the "
                             "board's header) instead of refusing the build.")
    parser.add_argument("--debug", action="store_true",
                        help="Show tracebacks of user errors.")
    args = parser.parse_args(argv)
    path = run_file(args.file)
    spec = read_run_file(path)
    site = path.parent / SITE
    if args.check:  # the alias of ``harness leaderboard regenerate BOARD --check``
        problems = check_board(spec, site, skip_bad_logs=args.skip_bad_logs)
        for line in problems:
            print(f"FAIL {line}")
        print(f"board {path.parent}: " + ("the same as its logs build" if not problems
                                          else f"{len(problems)} differ"))
        return 1 if problems else 0
    if args.build is not None:
        out = site if args.build == Path("") else args.build
        for kind, built in build_board(spec, out, skip_bad_logs=args.skip_bad_logs).items():
            print(f"{kind}: {built}")
        return 0
    runs = [r for r in expand(spec) if not args.only or r.name in args.only
            or r.log_dir.name.split("--")[0] in args.only]
    journal = Path(spec.get("log_root", "logs")) / "runs.jsonl"
    outcomes = run_all(runs, journal, args.dry_run, echo=lambda line: print(line, flush=True))
    return 1 if any(o.startswith("failed") for _, o in outcomes) else 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
