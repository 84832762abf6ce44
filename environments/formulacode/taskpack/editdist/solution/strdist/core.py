"""Edit distances between strings."""


def _dp(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def levenshtein(a, b):
    """Minimum number of single-character insertions, deletions and substitutions."""
    # a common prefix or suffix never changes the distance: drop it before the O(n*m) DP
    if a == b:
        return 0
    start = 0
    stop = min(len(a), len(b))
    while start < stop and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    a, b = a[start:end_a], b[start:end_b]
    if len(a) < len(b):
        a, b = b, a  # the shorter string spans the DP row
    return _dp(a, b)
