"""Probe tasks: small procedural tasks that isolate one capability (e.g. passkey retrieval)."""
