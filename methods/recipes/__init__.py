"""Recipes: training functions whose product is a model directory the engine scores
(``harness.plugins.recipe``; see README.md)."""
