from shardio.core import shard_summary, write_shards

__all__ = ["shard_summary", "write_shards"]
