"""The plug-in kinds: one module each, holding the kind's decorator and its interface.

A method, benchmark or tool joins the suite by one decorated object in one module, plus the
module's line in its package's ``_registry.py``. The kinds, their decorators and what each
plugs into are listed in :data:`PLUGIN_KINDS` (the README's table of kinds is generated
from it, and a test checks it against :data:`harness.plugins.core.KINDS`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PLUGIN_KINDS", "PluginKind"]


@dataclass(frozen=True)
class PluginKind:
    """One plug-in kind: the decorator that registers it, where it lives, the interface a
    registered object provides, and how a user reaches it."""

    decorator: str
    module: str
    interface: str
    reached_by: str


PLUGIN_KINDS: dict[str, PluginKind] = {
    "benchmark": PluginKind(
        "@benchmark", "harness.plugins.benchmark", "an Inspect `@task` function",
        "`inspect eval benchmarks/<name>`, `harness/<name>`"),
    "agent": PluginKind(
        "@agent_method", "harness.plugins.agent", "an Inspect solver or agent factory",
        "`--solver`, a study's `solver:` level"),
    "whitebox_method": PluginKind(
        "@whitebox_method", "harness.plugins.whitebox_method",
        "`Method` (hooks into the white-box decode loop)",
        "`--model whitebox/<model> -M method=<name>`"),
    "editor": PluginKind(
        "@editor", "harness.plugins.editor", "`Editor` (apply / reset / save_state)",
        "`-T editor=<name>` on MedVersa"),
    "model": PluginKind(
        "model_wrapper()", "harness.plugins.model",
        "an Inspect `ModelAPI` registered with `@modelapi`", "`--model <provider>/...`"),
    "policy": PluginKind(
        "@scripted_policy", "harness.plugins.policy",
        "`Policy`: (messages, tools, config, args) -> output", "`--model scripted/<name>`"),
    "intervention": PluginKind(
        "@intervention", "harness.plugins.intervention",
        "`Transform`: (sample, seeded rng) -> sample", "a study factor bound to `intervention`"),
    "stack": PluginKind(
        "@stack_runner", "harness.plugins.stack", "`StackRunner.run(cells, job)`",
        "a study factor bound to `stack` (inspect, lmeval)"),
    "recipe": PluginKind(
        "@recipe", "harness.plugins.recipe", "a function that trains and saves a model",
        "`harness recipes build <name>`, `-M recipe=<name>`"),
    "plain_method": PluginKind(
        "@plain_method", "harness.plugins.plain_method",
        "`MethodFn`: (inputs, config, seed) -> outputs", "a method task's `method` level"),
}
"""Every plug-in kind, in the registry's order of kinds."""
