"""Log folders on an object store (``s3://``) for the results reader and boards, against a
local S3-compatible server on loopback (moto's, started in-process on 127.0.0.1)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import remote_logs
from harness.results import list_logs, read_headers, read_results

moto_server = pytest.importorskip("moto.server", reason="moto (dev extra) is not installed")

BUCKET = "evallogs"


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """An S3 endpoint on 127.0.0.1 with one bucket; the SDK finds it via AWS_ENDPOINT_URL."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = dict(os.environ)
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                      AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://{host}:{port}",
                      **{remote_logs.CACHE_ENV: str(tmp_path_factory.mktemp("cache"))})
    import fsspec

    fs = fsspec.filesystem("s3", skip_instance_cache=True)
    fs.mkdir(BUCKET)
    try:
        yield fs
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.stop()


def _eval_logs(folder: Path, answer: str) -> Path:
    """Two samples scored, answered ``answer`` by a solver (no model)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import includes
    from inspect_ai.solver import Generate, Solver, TaskState, solver

    @solver
    def says() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.output = ModelOutput.from_content("none", answer)
            return state

        return solve

    task = Task(dataset=[Sample(input="a?", target="yes", id="a"),
                         Sample(input="b?", target="no", id="b")], solver=says(),
                scorer=includes(), name="remote_probe")  # fmt: skip
    (log,) = eval(task, model="none", log_dir=str(folder), display="none",
                  metadata={"study": "remote", "cell_id": "c1", "factors": {"answer": answer}})
    assert log.status == "success"
    return folder


def test_results_read_from_the_object_store(s3: object, tmp_path: Path) -> None:
    local = _eval_logs(tmp_path / "run", "yes")
    fs: object = s3
    fs.put(str(local), f"{BUCKET}/study/run", recursive=True)  # type: ignore[attr-defined]
    url = f"s3://{BUCKET}/study/run"

    remote = read_results(url)
    here = read_results(local)
    assert remote.height == here.height == 2
    assert remote["log_file"].str.starts_with(f"{url}/").all()
    same = [c for c in here.columns if c != "log_file"]
    assert remote.select(same).sort("sample_id").equals(here.select(same).sort("sample_id"))
    assert read_headers(url)["log_file"].to_list() == remote["log_file"].unique().to_list()

    # a study's analysis reads the same folder (its factor levels from the eval metadata)
    from harness.factorial.report.frame import study_frame

    study = study_frame(url, study="remote")
    assert study.height == 2 and study["answer"].unique().to_list() == ["yes"]

    # read again: nothing is downloaded (the mirror is kept while size and ETag agree)
    (mirrored,) = list_logs(url)
    before = mirrored.stat().st_mtime_ns
    read_results(url)
    assert mirrored.stat().st_mtime_ns == before

    # the object changes under the same key: the reader sees the new log
    other = _eval_logs(tmp_path / "other", "no")
    (new_log,) = other.glob("*.eval")
    key = remote["log_file"][0].removeprefix("s3://")
    fs.put_file(str(new_log), key)  # type: ignore[attr-defined]
    changed = read_results(url)
    assert changed["eval_id"].unique().to_list() != remote["eval_id"].unique().to_list()
    assert sorted(changed["score_value"].to_list()) == [0.0, 1.0]  # "no": b right, a wrong
    assert sorted(remote["score_value"].to_list()) == [0.0, 1.0]
    assert changed.sort("sample_id")["score_value"].to_list() != remote.sort("sample_id")[
        "score_value"].to_list()


def test_a_missing_prefix_is_an_error(s3: object) -> None:
    with pytest.raises(FileNotFoundError, match="no log file or folder"):
        read_results(f"s3://{BUCKET}/nothing/here")


def test_a_board_builds_from_the_object_store(s3: object, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    local = _eval_logs(tmp_path / "run", "yes")
    fs: object = s3
    fs.put(str(local), f"{BUCKET}/board/run", recursive=True)  # type: ignore[attr-defined]
    out = tmp_path / "site"
    done = CliRunner().invoke(app, ["leaderboard", "build", f"s3://{BUCKET}/board/run",
                                    "--out", str(out), "--n-boot", "50"])  # fmt: skip
    assert done.exit_code == 0, done.output
    markdown = (out / "leaderboard.md").read_text()
    assert "remote_probe" in markdown
    # the board names each log by its URL (not a mangled relative path)
    entries = (out / "entries.csv").read_text()
    assert f"s3://{BUCKET}/board/run/" in entries and "s3:/evallogs" not in entries
    assert f"--log-dir s3://{BUCKET}/board/run" in (out / "index.html").read_text()


def test_local_paths_and_urls_are_told_apart() -> None:
    assert remote_logs.is_remote("s3://b/k") and remote_logs.is_remote("gs://b/k")
    assert not remote_logs.is_remote("file:///tmp/x") and not remote_logs.is_remote("logs/x")
    assert not remote_logs.is_remote(Path("s3://b/k"))  # a Path has lost the URL already
