"""Factorial analysis of evaluation scores: ANOVA / logit GLM, effects, robustness, attribution.

The question a factorial study answers is *which evaluation choices move the score, and
does a headline gap between two models survive them*. ``analyze`` fits a linear model
(continuous scores) or a binomial logit GLM (0/1 scores) with factor main effects and
interactions up to ``order``, and reports the ANOVA table (type II or III), effect sizes,
variance shares, estimated marginal means, Holm-corrected pairwise comparisons (paired by
item), robustness of model rankings across setup factors (spread, CPS, Kendall W/tau, rank
flips), the attribution of a gap between two models, and the items needed for a target
difference.

Why it is fast: with factors as the only regressors, the design matrix is constant within
a cell, so every sum of squares is exact from per-cell counts, means and within-cell sums
of squares (``RSS = within SS + sum_c n_c (ybar_c - x_c b)^2``), and a binomial GLM is the
same MLE on (successes, trials) per cell. Data are aggregated with polars to cells (or to
cell x item groups when the item enters the model); patsy only ever sees the small table
of distinct cells. A fixed item block is absorbed by weighted within-item demeaning
(Frisch-Waugh-Lovell), cluster-robust covariances are sandwich estimates from per-group
scores, and only the random-intercept model (statsmodels ``MixedLM``) reads every row.

Factor names never enter a formula: columns are renamed to internal identifiers before
patsy sees them (a factor called ``C``, ``Q`` or ``my factor`` is safe), and every table
reports the plain names (``A``, ``B``, ``A:B``). ``model["formula"]`` shows the model with
``Q("...")`` quoting for display.

Statistical conventions (so numbers can be checked against textbooks and statsmodels):
- Type II: SS(T | all terms not containing T); type III: SS(T | all other terms) with
  sum-to-zero contrasts (used for both; type II does not depend on the coding).
- partial eta^2 = SS / (SS + SS_resid); omega^2 = (SS - df MS_resid) / (SS_total +
  MS_resid), floored at 0.
- ``item_mode``: ``"fixed"`` adds item as an additive block (an ANOVA row); ``"cluster"``
  keeps the point estimates and replaces F tests by cluster-robust Wald tests (df2 = items
  - 1); ``"random"`` fits a random intercept per item (MixedLM, REML): SS columns are the
  fixed-block decomposition, F and p are Wald tests on the mixed model. ``None`` leaves the
  item out of the model (it is still used to pair comparisons and for power).
- Binomial: ``sum_sq`` is the likelihood-ratio chi^2 (deviance drop), ``p`` its p-value
  (the cluster-robust Wald p-value under ``"cluster"``); ``wald_chi2``/``wald_p`` are
  given too; effects are on the logit scale; marginal means are probabilities with CIs
  transformed from the logit scale.
- Estimated marginal means average the model's predictions over a balanced grid of all
  factor levels (and over items with equal weight). With a fixed item block their
  intercept variance is taken as MS_resid / N, exact when every item is seen equally in
  every cell.

Layout: :mod:`.prepare` (checks, levels, cell aggregates, terms), :mod:`.matrices` (patsy
on cells), :mod:`.linalg` (WLS, absorption, sandwich, Wald), :mod:`.fit` (engine input and
output), :mod:`.gaussian` and :mod:`.binomial` (the engines), :mod:`.summaries` (marginal
means, coefficients, pairwise), :mod:`.robustness` (rankings, attribution, power),
:mod:`.result` and :mod:`.api` (``analyze``, ``analyze_csv``).
"""


from harness.factorial.analysis.api import analyze, analyze_csv
from harness.factorial.analysis.prepare import Family, ItemMode
from harness.factorial.analysis.result import AnalysisResult

__all__ = ["AnalysisResult", "Family", "ItemMode", "analyze", "analyze_csv"]
