"""Append-only event logs: one text line per (timestamp, level, message) event."""

FORMATS = {"text": "{:.6f} {:<5} {}\n", "csv": "{:.6f},{},{}\n"}


def _line(fmt, event):
    ts, level, msg = event
    return FORMATS[fmt].format(ts, level, msg).encode()


def read_events(path, fmt="text"):
    """The events of a log written by :func:`write_events`."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if fmt == "csv":
                ts, level, msg = line.split(",", 2)
            else:
                ts, level, msg = line[:line.index(" ")], line[line.index(" ") + 1:][:5], \
                    line[line.index(" ") + 7:]
            out.append((float(ts), level.strip(), msg))
    return out


def write_events(path, events, fmt="text"):
    """Append the events to the log at ``path``; returns the number of bytes written."""
    written = 0
    # buffered: one write(2) per 64 KiB instead of one per event
    with open(path, "ab", buffering=1 << 16) as f:
        for event in events:
            written += f.write(_line(fmt, event))
    return written
