import numpy as np


def apply_chain(mats, v):
    """(M_0 @ M_1 @ ... @ M_k) @ v."""
    total = np.eye(mats[0].shape[0])
    for M in mats:
        total = total @ M
    return total @ v


def chain_norms(mats, vs):
    """Norm of apply_chain(mats, v) for each v."""
    return [float(np.linalg.norm(apply_chain(mats, v))) for v in vs]
