import numpy as np


def fir_filter(signal, taps):
    """Full discrete convolution of signal with taps."""
    s = list(map(float, signal))
    t = list(map(float, taps))
    out = [0.0] * (len(s) + len(t) - 1)
    for i, sv in enumerate(s):
        for j, tv in enumerate(t):
            out[i + j] += sv * tv
    return np.array(out)


def smooth(signal, width):
    """Boxcar smoothing, same length as the input (centered)."""
    full = fir_filter(signal, [1.0 / width] * width)
    start = (width - 1) // 2
    return full[start:start + len(signal)]
