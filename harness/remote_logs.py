"""Log folders on object storage (``s3://bucket/prefix``, ``gs://``, ``az://``...) for the
results reader, through fsspec (Inspect's own dependency, which Inspect writes such log
folders with: ``inspect eval ... --log-dir s3://bucket/logs``).

Why a local mirror rather than reading through the filesystem object: the reader opens a
``.eval`` zip at several members (header, summaries, samples) and seeks inside them; on
object storage each seek is a ranged request. A log is fetched once, whole, into a cache
keyed by its URL and validated by its size and ETag (or modification time), so a board
rebuilt from the same bucket downloads nothing again. The rows keep the remote URL as
their ``log_file`` (:func:`display`), so tables and exports name where a log really is.

Credentials and endpoints are fsspec's and the cloud SDK's own (``AWS_*`` variables,
``AWS_ENDPOINT_URL`` for an S3-compatible server, profiles); nothing here configures them.
The cache lives in ``$EVALSUITE_LOG_CACHE`` (default ``~/.cache/evalsuite/remote-logs``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_LOG_SUFFIXES = (".eval", ".json")
_NOT_LOGS = {"logs.json", "eval-set.json"}
CACHE_ENV = "EVALSUITE_LOG_CACHE"

_origins: dict[str, str] = {}
"""Local mirror path -> the URL it was fetched from (for the ``log_file`` column)."""


def is_remote(item: object) -> bool:
    """A URL with a scheme other than ``file://`` (a ``Path`` never is: it collapses ``//``)."""
    return isinstance(item, str) and bool(_SCHEME.match(item)) and not item.startswith("file://")


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "evalsuite" / "remote-logs")


def display(path: Path | str) -> str:
    """The name a log goes by in the results: its URL when it was fetched, else its path."""
    return _origins.get(str(path), str(path))


def _stamp(info: dict[str, Any]) -> str:
    """What identifies one version of an object: its size and ETag (else mtime)."""
    tag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or info.get("mtime") \
        or info.get("LastModified") or info.get("last_modified") or ""
    return f"{info.get('size')}:{tag}"


def fetch(url: str, *, recursive: bool = True) -> list[Path]:
    """Mirror the logs at ``url`` (a log object or a folder) into the cache; returns the
    local paths in the order the reader would list them, each remembered as ``url``'s.

    Raises:
        FileNotFoundError: Nothing exists at ``url``.
    """
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    root = root.rstrip("/")
    protocol = url.split("://", 1)[0]
    if fs.isdir(root):
        infos = fs.find(root, maxdepth=None if recursive else 1, detail=True)
        wanted = {
            name: info for name, info in infos.items()
            if name.endswith(_LOG_SUFFIXES) and PurePosixPath(name).name not in _NOT_LOGS
            and not any(part.startswith(".")
                        for part in PurePosixPath(name).relative_to(root).parts)
        }  # fmt: skip
    elif fs.isfile(root):
        wanted = {root: fs.info(root)}
    else:
        raise FileNotFoundError(f"no log file or folder at {url}")
    base = cache_root() / hashlib.sha256(url.encode()).hexdigest()[:16]
    local: list[Path] = []
    for name in sorted(wanted):
        info = wanted[name]
        rel = PurePosixPath(name).relative_to(root) if name != root else PurePosixPath(
            PurePosixPath(name).name)  # fmt: skip
        target = base / rel
        stamp_file = target.with_name(f".{target.name}.stamp")
        stamp = _stamp(info)
        if not (target.is_file() and stamp_file.is_file()
                and stamp_file.read_text(encoding="utf-8") == stamp):  # fmt: skip
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.partial")
            fs.get_file(name, str(partial))
            os.replace(partial, target)
            stamp_file.write_text(stamp, encoding="utf-8")
        _origins[str(target)] = f"{protocol}://{name}"
        local.append(target)
    (base / ".source.json").write_text(json.dumps({"url": url}), encoding="utf-8")
    return local


def local(log_file: Path | str) -> Path:
    """A log named by path or URL, as a local file (a URL is fetched into the cache)."""
    if is_remote(log_file):
        return fetch(str(log_file), recursive=False)[0]
    return Path(log_file)
