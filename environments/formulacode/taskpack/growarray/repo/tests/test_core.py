import numpy as np
from growbuf import Recorder


def test_accumulates_in_order():
    rec = Recorder()
    assert rec.data.tolist() == [] and rec.mean() == 0.0
    for chunk in ([1.0, 2.0], [], [3.0], np.arange(4.0, 40.0)):
        rec.extend(chunk)
    assert rec.data.tolist() == list(np.arange(1.0, 40.0))
    assert rec.mean() == 20.0


def test_data_is_a_snapshot():
    rec = Recorder()
    rec.extend([1.0])
    snap = rec.data
    rec.extend([2.0])
    assert snap.tolist() == [1.0] or len(snap) == 1
