"""Recipes: training functions whose product is a model directory the engine scores
(``harness.recipes``; see README.md)."""
