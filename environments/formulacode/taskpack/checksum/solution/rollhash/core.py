"""Checksums and content-defined chunking in pure Python."""

MOD = 65521
_NMAX = 5552  # most bytes that can be summed before a 32-bit-style overflow (zlib's bound)


def adler32(data):
    """Adler-32 checksum of ``data`` (bytes)."""
    # locals instead of attribute updates, and the modulo once per block instead of per byte
    a, b = 1, 0
    n = len(data)
    for start in range(0, n, _NMAX):
        for byte in data[start:start + _NMAX]:
            a += byte
            b += a
        a %= MOD
        b %= MOD
    return (b << 16) | a


def chunk_boundaries(data, window=16, mask=0x3F):
    """Offsets where a rolling sum over ``window`` bytes has its low bits (``mask``) zero."""
    out = []
    append = out.append  # bound method and locals: no attribute lookups in the loop
    total = sum(data[:window - 1])
    for i in range(window - 1, len(data)):
        total += data[i]
        if i >= window:
            total -= data[i - window]
        if not total & mask:
            append(i + 1)
    return out
