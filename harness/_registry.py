"""What the ``inspect_ai`` entry point ``harness`` imports: the model APIs and sandboxes
harness ships, and (through :func:`harness.registry.load_plugins`) every package that
announces itself in the ``evalsuite`` entry-point group, so ``harness/<benchmark>`` tasks
resolve although harness never imports a benchmark.

Inspect loads this module on every ``inspect eval`` (and on model/sandbox lookups), so it
must stay light: each imported module registers its objects with decorators and defers
heavy imports (llama.cpp, torch, docker) until an object is actually used.
"""

from harness.factorial import flow as _flow  # noqa: F401  (task: study_cell, for Flow)
from harness.models import providers as _providers  # noqa: F401  (model APIs)
from harness.registry import load_plugins
from harness.sandbox import bwrap as _bwrap  # noqa: F401  (sandbox: bwrap)

load_plugins()
