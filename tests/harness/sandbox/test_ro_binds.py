"""``ro_binds`` under a folder other users cannot enter (a checkout in /root or in a 0700
``mktemp -d``) still reach the sandbox, read-only, and leave no mount behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.sandbox.samples import open_sample, unavailable

pytestmark = pytest.mark.skipif(os.getuid() != 0 or bool(unavailable("bwrap")),
                                reason="the closed-folder case arises when the provider runs "
                                       "as root and drops to a sample uid")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_bind_under_a_closed_folder_is_readable_and_read_only(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    source = closed / "checkout"
    source.mkdir(parents=True)
    (source / "data.txt").write_text("hello from the checkout\n")
    source.chmod(0o755)
    closed.chmod(0o700)  # others may not enter: bwrap, as the sample uid, could not bind
    async with open_sample("bwrap", ro_binds=[str(source)]) as env:
        read = await env.exec(["cat", str(source / "data.txt")])
        assert read.success, read.stderr
        assert read.stdout == "hello from the checkout\n"
        write = await env.exec(["sh", "-c", f"echo x > {source}/new.txt"])
        assert not write.success
    assert not (source / "new.txt").exists()
    assert [m for m in Path("/proc/self/mounts").read_text().splitlines()
            if "/binds/" in m and "inspect-bwrap" in m] == []
