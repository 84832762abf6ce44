"""Simulated trials with known potential outcomes for treatment responder classification
(the TRECA paper's setting). No Inspect imports here."""

from environments.treca.trial import Trial, abstention_risk, bayes_rule, make_trial

__all__ = ["Trial", "abstention_risk", "bayes_rule", "make_trial"]
