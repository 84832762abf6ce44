def connected_components(n, edges):
    """Label of each node = smallest node id in its component."""
    label = list(range(n))
    for a, b in edges:
        la, lb = label[a], label[b]
        if la != lb:
            keep, drop = min(la, lb), max(la, lb)
            for i in range(n):
                if label[i] == drop:
                    label[i] = keep
    return label


def component_sizes(n, edges):
    """Sizes of the components, largest first."""
    counts = {}
    for lab in connected_components(n, edges):
        counts[lab] = counts.get(lab, 0) + 1
    return sorted(counts.values(), reverse=True)
