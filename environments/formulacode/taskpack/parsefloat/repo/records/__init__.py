from records.core import parse_rows

__all__ = ["parse_rows"]
