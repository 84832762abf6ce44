"""A recorder that accumulates float samples arriving in chunks."""

import numpy as np


class Recorder:
    def __init__(self):
        self._data = np.zeros(0)

    def extend(self, chunk):
        self._data = np.concatenate([self._data, np.asarray(chunk, dtype=np.float64)])

    @property
    def data(self):
        """All samples so far, in arrival order (a float64 array)."""
        return self._data

    def mean(self):
        return float(self._data.mean()) if len(self._data) else 0.0
