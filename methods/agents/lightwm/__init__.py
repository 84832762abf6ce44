"""LightWM: schema-induced hierarchical working memory for small-model agents.

``lightwm`` is the solver (:mod:`.agent`), ``induce`` the offline schema induction
(:mod:`.induce`); the state machine and JSON patch live in :mod:`.state` and
:mod:`.jsonpatch`, schemas in :mod:`.schema` (files under ``methods/agents/lightwm_schemas``).
"""

from methods.agents.lightwm.agent import lightwm
from methods.agents.lightwm.induce import induce
from methods.agents.lightwm.schema import Schema, load_schema
from methods.agents.lightwm.state import WorkingMemory

__all__ = ["Schema", "WorkingMemory", "induce", "lightwm", "load_schema"]
