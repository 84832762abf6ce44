import numpy as np
import pytest
from shardio import shard_summary, write_shards


@pytest.mark.parametrize("compress", [True, False])
def test_summary_matches_in_memory_arrays(tmp_path, compress):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(n) for n in (10, 1000, 1, 333)]
    got = shard_summary(write_shards(str(tmp_path), arrays, compress))
    for arr, row in zip(arrays, got, strict=True):
        assert row[0] == len(arr)
        assert row[1] == pytest.approx(arr.sum())
        assert list(row[2:]) == pytest.approx(list(np.quantile(arr, [0.01, 0.5, 0.99])))


def test_empty_and_single(tmp_path):
    assert shard_summary([]) == []
    paths = write_shards(str(tmp_path), [np.array([1.0, 2.0, 3.0])])
    assert shard_summary(paths) == [(3, 6.0, 1.02, 2.0, 2.98)]
