"""ThetaEvolve (Wang et al., arXiv 2511.23473): the program-evolution agent
(:mod:`.thetaevolve`), its building blocks (:mod:`.evolve`), test-time RL on its own
rollouts (:mod:`.ttrl`, on the shared trainer :mod:`methods.rl`) and the transfer check
(:mod:`.ttrl_transfer`)."""
