"""Parsing numeric text records ("id;x;y;z" lines)."""


def parse_rows(text):
    """[(id, [floats...]), ...] from ``;``-separated lines (blank lines skipped)."""
    rows = []
    append = rows.append
    for line in text.splitlines():
        if not line.strip():
            continue
        # str.split is C-level; float() accepts surrounding whitespace itself
        fields = line.split(";")
        append((fields[0].strip(), [float(f) for f in fields[1:]]))
    return rows
