"""The sandbox distribution's only contact with Inspect's private API (``inspect_ai._*``).

Why a module of its own: the bwrap sandbox also ships alone (``harness/sandbox/pyproject.toml``,
import name ``inspect_bwrap``), without :mod:`harness.inspect_compat`, so the private names it
needs are kept here, each with the public behaviour it stands for. The suite's adapter
re-exports them; ``tests/test_boundaries.py`` allows private imports in these two modules only.

Checked against ``inspect-ai==0.3.285``.
"""

from __future__ import annotations

from typing import Any


def prerequisite_error(message: str) -> Exception:
    """The error type Inspect prints as a plain message (no traceback) when a sandbox or
    provider cannot start for a reason the user fixes (a missing binary).

    Use: the bwrap sandbox's ``task_init``. Public Inspect has no such type.
    """
    from inspect_ai._util.error import PrerequisiteError

    return PrerequisiteError(message)


def sandbox_self_checks() -> dict[str, Any]:
    """Inspect's portable sandbox conformance checks, by name (``test_read_file_not_found``,
    ...): the async test functions of ``inspect_ai.util._sandbox.self_check``.

    Use: the conformance tests run them against the bwrap (and docker) sandboxes; the
    module's docstring says a consumer star-imports them into a test module, and this
    hands them over without the private import there.
    """
    from inspect_ai.util._sandbox import self_check

    return {
        name: fn for name, fn in vars(self_check).items()
        if name.startswith("test_") and callable(fn)
    }  # fmt: skip


def sandbox_tools_paths() -> tuple[str, str]:
    """(folder, launcher) where Inspect expects its in-sandbox tool support
    (``inspect-sandbox-tools``): ``/var/tmp/.<hash>`` and the executable inside it.

    Use: the bwrap sandbox provides the tools read-only at that place, so ``text_editor()``
    and ``bash_session()`` find them installed and never inject or download them.
    """
    from inspect_ai.util._sandbox._cli import SANDBOX_CLI, SANDBOX_TOOLS_DIR

    return SANDBOX_TOOLS_DIR, SANDBOX_CLI


def sandbox_tools_archive(arch: str) -> Any | None:
    """Path of the tool-support bundle (a gzipped tar of a PyInstaller onedir tree) that
    the installed Inspect ships for ``arch`` (``"amd64"``/``"arm64"``, glibc), or None.

    Use: the bwrap sandbox unpacks it once on the host. Inspect names the file after its
    tools version; the name and the folder holding it are private.
    """
    from inspect_ai.tool._sandbox_tools_utils.sandbox import (
        _binaries_dir,
        _get_executable_name,
    )

    path = _binaries_dir() / _get_executable_name(arch, False, False)  # type: ignore[arg-type]
    return path if path.is_file() else None


def max_subprocesses() -> int:
    """The eval's ``max_subprocesses`` (Inspect's default: the CPUs this process may use).

    Use: the bwrap sandbox runs its execs through its own launcher rather than Inspect's
    ``subprocess()``, and still throttles them by the same ``subprocesses`` limit, which
    the public ``concurrency()`` needs as a number. The context variable is private.
    """
    from inspect_ai.util._subprocess import max_subprocesses_context_var

    return int(max_subprocesses_context_var.get())
