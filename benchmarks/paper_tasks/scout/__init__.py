"""SCOUT games (FrozenLake, Sokoban, sliding puzzle) as multi-turn ``move`` tool tasks."""
