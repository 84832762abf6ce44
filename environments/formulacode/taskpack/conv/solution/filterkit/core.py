import numpy as np


def fir_filter(signal, taps):
    """Full discrete convolution of signal with taps."""
    return np.convolve(np.asarray(signal, dtype=float), np.asarray(taps, dtype=float))


def smooth(signal, width):
    """Boxcar smoothing, same length as the input (centered)."""
    full = fir_filter(signal, [1.0 / width] * width)
    start = (width - 1) // 2
    return full[start:start + len(signal)]
