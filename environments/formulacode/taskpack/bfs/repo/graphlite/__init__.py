"""graphlite: a small scientific-Python package of the FormulaCode offline pack."""

from graphlite.traverse import bfs_distances, eccentricity, neighbours

__all__ = ['bfs_distances', 'eccentricity', 'neighbours']
