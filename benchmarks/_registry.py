"""Every benchmark this package ships, registered with the suite (the ``evalsuite`` and
``inspect_ai`` entry points of ``benchmarks``).

Each task module registers its task with ``@benchmark("name")`` (so it is also
``harness/<name>``); each policies module registers its scripted reference agents with
``@scripted_policy``. Adding a benchmark is its folder (task file, ``eval.yaml``, README)
plus its import lines here. Task modules import lightly: an optional extra (``web``) is
imported only when a sample runs.
"""

from __future__ import annotations

from harness.registry import import_modules

MODULES: tuple[str, ...] = (
    "benchmarks.arithmetic.arithmetic",
    "benchmarks.arithmetic.policies",
    "benchmarks.causalgame.causalgame",
    "benchmarks.causalgame.policies",
    "benchmarks.formulacode.formulacode",
    "benchmarks.medversa.medversa",
    "benchmarks.medversa.policies",
    "benchmarks.paper_tasks.brain_compression.brain_compression",
    "benchmarks.paper_tasks.cdat.cdat",
    "benchmarks.paper_tasks.cocoedit.cocoedit",
    "benchmarks.paper_tasks.hfm.hfm",
    "benchmarks.paper_tasks.hmh.hmh",
    "benchmarks.paper_tasks.household.household",
    "benchmarks.paper_tasks.household.policies",
    "benchmarks.paper_tasks.kupbi.kupbi",
    "benchmarks.paper_tasks.polysae.polysae",
    "benchmarks.paper_tasks.metamoe.metamoe",
    "benchmarks.paper_tasks.rubik_hmm.rubik_hmm",
    "benchmarks.paper_tasks.scout.policies",
    "benchmarks.paper_tasks.scout.scout",
    "benchmarks.paper_tasks.sika_gp.sika_gp",
    "benchmarks.paper_tasks.t2i_concepts.t2i_concepts",
    "benchmarks.paper_tasks.tabpe.tabpe",
    "benchmarks.paper_tasks.tfface.tfface",
    "benchmarks.paper_tasks.tpg.tpg",
    "benchmarks.paper_tasks.treca.treca",
    "benchmarks.paper_tasks.ucast.ucast",
    "benchmarks.paper_tasks.udm.udm",
    "benchmarks.paper_tasks.vfm.vfm",
    "benchmarks.paper_tasks.vipo.vipo",
    "benchmarks.open_problems.open_problems",
    "benchmarks.open_problems.policies",
    "benchmarks.probes.bpb",
    "benchmarks.probes.esamp_arith",
    "benchmarks.probes.induction",
    "benchmarks.probes.mvr_workload",
    "benchmarks.probes.needle",
    "benchmarks.probes.passkey",
    "benchmarks.worldtravel.policies",
    "benchmarks.worldtravel.worldtravel",
    "benchmarks.worldtravel_webscape.policies",
    "benchmarks.worldtravel_webscape.worldtravel_webscape",
)
"""The registering modules, each imported on its own (a broken one hides only itself
and ``harness list`` shows it); a new module that registers anything is one line here."""

import_modules(MODULES)
