import pytest
from kvclient import RemoteStore, fetch_all, fetch_total

DOCS = {f"k{i}": {"value": i * 0.5, "tags": ["a"] * i} for i in range(12)}


@pytest.mark.parametrize("latency", [0.0, 0.001])
def test_documents_come_back_in_key_order(latency):
    store = RemoteStore(DOCS, latency)
    keys = ["k3", "k0", "k11", "k3", "k7"]
    assert fetch_all(store, keys) == [DOCS[k] for k in keys]
    assert store.requests == len(keys)


def test_empty_single_and_total():
    store = RemoteStore(DOCS, 0.0)
    assert fetch_all(store, []) == []
    assert fetch_all(store, iter(["k2"])) == [DOCS["k2"]]
    assert fetch_total(store, ["k1", "k2", "k4"]) == 3.5


def test_a_missing_key_raises():
    store = RemoteStore(DOCS, 0.0005)
    with pytest.raises(KeyError):
        fetch_all(store, ["k1", "nope", "k2"])
