"""What the ``inspect_ai`` entry point imports: every task, model API and sandbox we ship.

Inspect loads this module on every ``inspect eval`` (and on model/sandbox lookups), so it
must stay light: each imported module registers its objects with decorators and defers
heavy imports (llama.cpp, torch, docker) until an object is actually used.

Adding a provider, sandbox or benchmark is one import line here.
"""

from harness import tasks as _tasks  # noqa: F401  (tasks as harness/<name>)
from harness.models import providers as _providers  # noqa: F401  (model APIs)
from harness.sandbox import bwrap as _bwrap  # noqa: F401  (sandbox: bwrap)
