import numpy as np


def apply_chain(mats, v):
    """(M_0 @ M_1 @ ... @ M_k) @ v."""
    out = np.asarray(v, dtype=float)
    for M in reversed(mats):
        out = M @ out
    return out


def chain_norms(mats, vs):
    """Norm of apply_chain(mats, v) for each v."""
    return [float(np.linalg.norm(apply_chain(mats, v))) for v in vs]
