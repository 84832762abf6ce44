def unique_ordered(items):
    """Distinct items in first-seen order."""
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def count_distinct(items):
    """Number of distinct items."""
    return len(unique_ordered(items))
