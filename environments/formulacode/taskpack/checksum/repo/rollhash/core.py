"""Checksums and content-defined chunking in pure Python."""

MOD = 65521


class _State:
    def __init__(self):
        self.a = 1
        self.b = 0


def adler32(data):
    """Adler-32 checksum of ``data`` (bytes)."""
    state = _State()
    for byte in data:
        state.a = (state.a + byte) % MOD
        state.b = (state.b + state.a) % MOD
    return (state.b << 16) | state.a


def chunk_boundaries(data, window=16, mask=0x3F):
    """Offsets where a rolling sum over ``window`` bytes has its low bits (``mask``) zero."""
    out = []
    total = 0
    for i in range(len(data)):
        total = total + data[i]
        if i >= window:
            total = total - data[i - window]
        if i >= window - 1 and (total & mask) == 0:
            out.append(i + 1)
    return out
