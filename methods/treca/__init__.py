"""Treatment responder classification with abstention: a doubly robust rule and plug-in."""
