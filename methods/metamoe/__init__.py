"""MetaMoE: privately trained experts unified by a router trained on selected public proxies."""
