"""LightWM: schema-induced hierarchical working memory for small-model agents.

``lightwm`` is the solver (:mod:`.agent`), ``induce`` the offline schema induction
(:mod:`.induce`); the state machine and JSON patch live in :mod:`.state` and
:mod:`.jsonpatch`, schemas in :mod:`.schema` (files under ``methods/lightwm/schemas``).
"""

from methods.lightwm.agent import lightwm
from methods.lightwm.induce import induce
from methods.lightwm.schema import Schema, load_schema
from methods.lightwm.state import WorkingMemory

__all__ = ["Schema", "WorkingMemory", "induce", "lightwm", "load_schema"]
