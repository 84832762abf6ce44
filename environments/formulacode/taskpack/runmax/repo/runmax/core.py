def sliding_max(x, window):
    """Maximum of each full window of ``window`` consecutive values (a list)."""
    x = list(x)
    return [max(x[i:i + window]) for i in range(len(x) - window + 1)]


def envelope_width(x, window):
    """Sum of (sliding max - sliding min), a crude envelope width."""
    neg = [-v for v in x]
    hi = sliding_max(x, window)
    lo = [-v for v in sliding_max(neg, window)]
    return sum(h - low for h, low in zip(hi, lo, strict=True))
