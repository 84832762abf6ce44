from growbuf.core import Recorder

__all__ = ["Recorder"]
