def unique_ordered(items):
    """Distinct items in first-seen order."""
    return list(dict.fromkeys(items))


def count_distinct(items):
    """Number of distinct items."""
    return len(set(items))
