"""data/ holds fixture repositories (a task's own tests/ included): never collect them."""

collect_ignore_glob = ["data/*"]
