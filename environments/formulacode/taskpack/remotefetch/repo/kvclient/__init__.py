from kvclient.core import RemoteStore, fetch_all, fetch_total

__all__ = ["RemoteStore", "fetch_all", "fetch_total"]
