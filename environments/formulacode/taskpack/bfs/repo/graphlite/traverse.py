def neighbours(edges, node):
    """Nodes adjacent to ``node`` in an undirected edge list."""
    out = []
    for a, b in edges:
        if a == node:
            out.append(b)
        elif b == node:
            out.append(a)
    return out


def bfs_distances(n, edges, source):
    """Hop distance from source to every node (-1 if unreachable)."""
    dist = [-1] * n
    dist[source] = 0
    queue = [source]
    while queue:
        node = queue.pop(0)
        for nb in neighbours(edges, node):
            if dist[nb] < 0:
                dist[nb] = dist[node] + 1
                queue.append(nb)
    return dist


def eccentricity(n, edges, source):
    """Largest finite distance from source."""
    return max(d for d in bfs_distances(n, edges, source) if d >= 0)
