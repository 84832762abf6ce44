"""Order-preserving de-duplication."""


def unique_ordered(items):
    """First occurrence of every distinct item, in input order."""
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def count_distinct(items):
    return len(unique_ordered(items))
