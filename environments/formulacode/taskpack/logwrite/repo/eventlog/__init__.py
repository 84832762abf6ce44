from eventlog.core import read_events, write_events

__all__ = ["read_events", "write_events"]
