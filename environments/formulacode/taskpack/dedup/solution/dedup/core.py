"""Order-preserving de-duplication."""


def unique_ordered(items):
    """First occurrence of every distinct item, in input order."""
    # dicts keep insertion order: the C-level constructor replaces the Python loop
    return list(dict.fromkeys(items))


def count_distinct(items):
    return len(set(items))
