from collections import deque


def sliding_max(x, window):
    """Maximum of each full window of ``window`` consecutive values (a list)."""
    x = list(x)
    out = []
    dq = deque()
    for i, v in enumerate(x):
        while dq and x[dq[-1]] <= v:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - window:
            dq.popleft()
        if i >= window - 1:
            out.append(x[dq[0]])
    return out


def envelope_width(x, window):
    """Sum of (sliding max - sliding min), a crude envelope width."""
    neg = [-v for v in x]
    hi = sliding_max(x, window)
    lo = [-v for v in sliding_max(neg, window)]
    return sum(h - low for h, low in zip(hi, lo, strict=True))
