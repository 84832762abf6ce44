def connected_components(n, edges):
    """Label of each node = smallest node id in its component."""
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [find(i) for i in range(n)]


def component_sizes(n, edges):
    """Sizes of the components, largest first."""
    counts = {}
    for lab in connected_components(n, edges):
        counts[lab] = counts.get(lab, 0) + 1
    return sorted(counts.values(), reverse=True)
