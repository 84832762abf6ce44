"""Parsing numeric text records ("id;x;y;z" lines)."""


def parse_rows(text):
    """[(id, [floats...]), ...] from ``;``-separated lines (blank lines skipped)."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(";")]
        values = []
        for f in fields[1:]:
            values.append(float(f))
        rows.append((fields[0], values))
    return rows
