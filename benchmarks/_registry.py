"""Every benchmark this package ships, registered with the suite (the ``evalsuite`` and
``inspect_ai`` entry points of ``benchmarks``).

Each task module registers its task with ``@benchmark("name")`` (so it is also
``harness/<name>``); each policies module registers its scripted reference agents with
``@scripted_policy``. Adding a benchmark is its folder (task file, ``eval.yaml``, README)
plus its import lines here. Task modules import lightly: an optional extra (``web``) is
imported only when a sample runs.
"""

from __future__ import annotations

import benchmarks.arithmetic.arithmetic  # noqa: F401
import benchmarks.arithmetic.policies  # noqa: F401
import benchmarks.causalgame.causalgame  # noqa: F401
import benchmarks.causalgame.policies  # noqa: F401
import benchmarks.formulacode.formulacode  # noqa: F401
import benchmarks.medversa.medversa  # noqa: F401
import benchmarks.medversa.policies  # noqa: F401
import benchmarks.methods.cdat.cdat  # noqa: F401
import benchmarks.methods.hmh.hmh  # noqa: F401
import benchmarks.methods.household.household  # noqa: F401
import benchmarks.methods.household.policies  # noqa: F401
import benchmarks.methods.kupbi.kupbi  # noqa: F401
import benchmarks.methods.scout.policies  # noqa: F401
import benchmarks.methods.scout.scout  # noqa: F401
import benchmarks.methods.sika_gp.sika_gp  # noqa: F401
import benchmarks.methods.tabpe.tabpe  # noqa: F401
import benchmarks.methods.tfface.tfface  # noqa: F401
import benchmarks.methods.tpg.tpg  # noqa: F401
import benchmarks.methods.treca.treca  # noqa: F401
import benchmarks.methods.ucast.ucast  # noqa: F401
import benchmarks.methods.udm.udm  # noqa: F401
import benchmarks.open_problems.open_problems  # noqa: F401
import benchmarks.open_problems.policies  # noqa: F401
import benchmarks.probes.bpb  # noqa: F401
import benchmarks.probes.esamp_arith  # noqa: F401
import benchmarks.probes.induction  # noqa: F401
import benchmarks.probes.mvr_workload  # noqa: F401
import benchmarks.probes.needle  # noqa: F401
import benchmarks.probes.passkey  # noqa: F401
import benchmarks.worldtravel.policies  # noqa: F401
import benchmarks.worldtravel.worldtravel  # noqa: F401
import benchmarks.worldtravel_webscape.policies  # noqa: F401
import benchmarks.worldtravel_webscape.worldtravel_webscape  # noqa: F401
