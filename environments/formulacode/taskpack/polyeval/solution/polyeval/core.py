import numpy as np


def polyval(coeffs, x):
    """Evaluate sum(coeffs[i] * x**i) elementwise (Horner's rule)."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for c in reversed(list(coeffs)):
        out *= x
        out += c
    return out


def polyval_derivative(coeffs, x):
    """Derivative of the polynomial at x."""
    deriv = [i * c for i, c in enumerate(coeffs)][1:]
    return polyval(deriv, x)
