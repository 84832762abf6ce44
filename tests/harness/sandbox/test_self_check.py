"""Inspect's own sandbox conformance suite (``self_check``) against bwrap and docker.

Every check of the pinned Inspect runs as a test of this module (handed over by
``harness.inspect_compat.sandbox_self_checks``), once per provider. Checks a provider
cannot pass by design are declared xfail (strict) in the ``sandbox_env`` fixture, with
the reason. One sample per provider serves the whole module, as in Inspect's own runner.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from inspect_ai.util import SandboxEnvironment

from harness.inspect_compat import sandbox_self_checks
from harness.sandbox.samples import open_sample, unavailable

globals().update(sandbox_self_checks())

pytestmark = pytest.mark.anyio

XFAILS: dict[str, dict[str, str]] = {
    "bwrap": {
        "test_exec_as_user": (
            "by design: a bwrap sample is one unprivileged host uid mapped to one user "
            "(sandbox, uid 1000); there is no root inside to add users, and bwrap maps only "
            "one uid, so no second user could run"
        ),
    },
    "docker": {
        name: (
            "by design of the image: the docker sample runs as root (the offline base image, "
            "like python:3.x-slim, sets no USER), and root may write a file without write "
            "permission"
        )
        for name in ("test_write_text_file_without_permissions",
                     "test_write_binary_file_without_permissions")
    },  # fmt: skip
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def provider(request: pytest.FixtureRequest) -> Iterator[str]:
    if reason := unavailable(request.param):
        pytest.skip(reason)
    yield request.param


@pytest.fixture(scope="module")
async def shared_env(provider: str, anyio_backend: str) -> AsyncIterator[SandboxEnvironment]:
    async with open_sample(provider) as env:
        yield env


@pytest.fixture
def sandbox_env(
    request: pytest.FixtureRequest, provider: str, shared_env: SandboxEnvironment
) -> Any:
    reason = XFAILS[provider].get(request.node.originalname)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    return shared_env


def test_xfails_are_few_and_real() -> None:
    """At most two design xfails per provider, each naming a check that exists."""
    checks = sandbox_self_checks()
    for reasons in XFAILS.values():
        assert 1 <= len(reasons) <= 2
        assert set(reasons) <= set(checks)
