"""A recorder that accumulates float samples arriving in chunks."""

import numpy as np


class Recorder:
    """Chunks go into a buffer with geometric growth (amortised O(1) per sample)
    instead of a full copy of everything recorded on every ``extend``."""

    def __init__(self):
        self._buf = np.zeros(0)
        self._n = 0

    def extend(self, chunk):
        chunk = np.asarray(chunk, dtype=np.float64).ravel()
        need = self._n + len(chunk)
        if need > len(self._buf):
            grown = np.empty(max(need, 2 * len(self._buf), 16))
            grown[:self._n] = self._buf[:self._n]
            self._buf = grown
        self._buf[self._n:need] = chunk
        self._n = need

    @property
    def data(self):
        """All samples so far, in arrival order (a float64 array)."""
        return self._buf[:self._n].copy()

    def mean(self):
        return float(self._buf[:self._n].mean()) if self._n else 0.0
