import pytest
from eventlog import read_events, write_events


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_round_trip_and_append(tmp_path, fmt):
    path = str(tmp_path / "log")
    events = [(1.5, "INFO", "started"), (2.25, "ERROR", "disk, full"), (3.0, "WARN", "")]
    n = write_events(path, events, fmt)
    assert n == (tmp_path / "log").stat().st_size
    write_events(path, events[:1], fmt)
    assert read_events(path, fmt) == events + events[:1]


def test_long_messages(tmp_path):
    path = str(tmp_path / "log")
    events = [(float(i), "DEBUG", "y" * 70_000) for i in range(3)]
    assert write_events(path, events) == 3 * (70_000 + 20)
    assert read_events(path) == events
