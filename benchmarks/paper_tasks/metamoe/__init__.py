"""Private experts unified by a proxy-trained router: diversity-aware (MetaMoE) vs relevance-only
proxies."""
