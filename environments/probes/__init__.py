"""Domain code of the probe tasks (no Inspect): the passkey-in-filler generator."""

from environments.probes.passkey import FILLER, PasskeyItem, make_item, make_items

__all__ = ["FILLER", "PasskeyItem", "make_item", "make_items"]
