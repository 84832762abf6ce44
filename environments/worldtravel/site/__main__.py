"""``python -m environments.worldtravel.site --out DIR [--json]``: render the shipped world.

Prints the summary ``{"pages", "image_only_facts", "layout_only_facts",
"unreachable_facts"}`` (as one JSON line with ``--json``, else as readable lines).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from environments.worldtravel.site.build import write_site
from environments.worldtravel.store import read_world


def main(argv: list[str] | None = None) -> int:
    """Render the world in ``--data`` (default: shipped) into ``--out``; 1 if any fact is lost."""
    parser = argparse.ArgumentParser(prog="python -m environments.worldtravel.site")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--data", type=Path, default=None, help="directory with world.json")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    result = write_site(read_world(args.data), args.out)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 1 if result["unreachable_facts"] else 0


if __name__ == "__main__":
    sys.exit(main())
