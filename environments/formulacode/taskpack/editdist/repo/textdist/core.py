def edit_distance(a, b, _memo=None):
    """Levenshtein distance between strings a and b."""
    if _memo is None:
        _memo = {}
    key = (a, b)
    if key in _memo:
        return _memo[key]
    if not a:
        result = len(b)
    elif not b:
        result = len(a)
    elif a[0] == b[0]:
        result = edit_distance(a[1:], b[1:], _memo)
    else:
        result = 1 + min(
            edit_distance(a[1:], b, _memo),
            edit_distance(a, b[1:], _memo),
            edit_distance(a[1:], b[1:], _memo),
        )
    _memo[key] = result
    return result


def closest(word, vocabulary):
    """Vocabulary entry with the smallest edit distance to word (first on ties)."""
    return min(vocabulary, key=lambda v: edit_distance(word, v))
