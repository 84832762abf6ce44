"""``@recipe``: a method that *makes* a model — a seeded training function whose product is
a local model directory the engine scores like any other model.

A recipe is ``fn(options, corpus, out_dir, seed, log) -> None``: it trains from the shipped
corpus (:mod:`harness.corpus`) with the given options and seed, writes a transformers folder
(``config.json``, weights, tokenizer) into ``out_dir`` and reports each training step to
``log`` (a :class:`TrainLog`). It imports no benchmark; torch is imported inside the
function (or the module is declared by import path), so listing recipes stays light::

    @recipe("qkv-sharing", extra="cpu", version="1",
            defaults={"sharing": "qkv", "attention": "mha", "steps": 300},
            choices={"sharing": ("qkv", "q-kv", "qk-v", "q=k=v")})
    def qkv_sharing(options, corpus, out_dir, seed, log): ...

:func:`build_product` runs a recipe once per (recipe, code ``version``, options with
defaults filled in, corpus fingerprint, seed): the product lives in
``<cache>/recipes/<name>/<hash16>/`` and is rebuilt only when missing. It is trained in a
temporary folder beside it and renamed into place when complete (a file lock keeps two
processes from training the same product at once), with ``train_log.jsonl`` (one line per
logged step: step, loss, tokens, FLOPs, cumulative totals, wall time) and ``product.json``
(recipe, version, options, seed, hash, corpus summary, training totals, and ``build_s``, the
whole build's wall time with imports and saving) next to the weights.
``harness.results.read_training_log`` reads the log back.

Products in models and studies (the product is built, or found in the cache, before the
model loads)::

    harness recipes build qkv-sharing -o sharing=q-kv -o attention=gqa4 --seed 0   # DIR
    inspect eval harness/bpb --model whitebox/tiny -M model_path=DIR
    inspect eval harness/bpb --model whitebox/tiny -M recipe=qkv-sharing -M recipe.sharing=q-kv
    -M model_path="recipe:qkv-sharing?sharing=q-kv&seed=1"     # the same, as one string

In a study, factors bind ``model_args`` keys ``recipe`` (the recipe's name),
``recipe.<option>`` and ``recipe.seed``; :func:`resolve_model_args` turns them into
``model_path=DIR`` when the cell's model is built (:func:`harness.factorial.cells.build_task`,
and the ``whitebox/`` provider for ``inspect eval``), so each option is one factor and a
product shared by several cells is trained once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from harness.corpus import DEFAULT_CORPUS, Corpus, load_corpus
from harness.plugins.core import Entry, RegistryError, entries, get, register

__all__ = [
    "PRODUCT_FILE",
    "RECIPE_KEY",
    "REF_PREFIX",
    "TRAIN_LOG",
    "RecipeError",
    "RecipeFn",
    "TrainLog",
    "build_product",
    "parse_product_ref",
    "product_dir",
    "product_key",
    "recipe",
    "recipe_cache",
    "recipe_names",
    "resolve_model_args",
    "resolve_options",
]

PRODUCT_FILE = "product.json"
TRAIN_LOG = "train_log.jsonl"
RECIPE_KEY = "recipe"
REF_PREFIX = "recipe:"

F = TypeVar("F", bound=Callable[..., Any])


class RecipeError(ValueError):
    """An unknown recipe or option, or an option value of the wrong type."""


class TrainLog:
    """What a recipe reports while it trains: one JSON line per :meth:`step` call.

    Each line holds the step, its loss, the tokens and FLOPs of that step, their running
    totals (``tokens_total``, ``flops_total``) and ``wall_s`` since the log was opened;
    extra keyword arguments (``lr=...``) are written as they are.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle = path.open("w")
        self._start = time.perf_counter()
        self.steps = 0
        self.tokens = 0
        self.flops = 0
        self.last_loss: float | None = None

    def reset_clock(self) -> None:
        """Start ``wall_s`` now (a recipe calls it once its imports and setup are done)."""
        self._start = time.perf_counter()

    def step(self, step: int, loss: float, tokens: int, flops: int, **extra: Any) -> None:
        """Record one training step (``tokens``/``flops``: this step's, not cumulative)."""
        self.steps = max(self.steps, int(step))
        self.tokens += int(tokens)
        self.flops += int(flops)
        self.last_loss = float(loss)
        row = {"step": int(step), "loss": float(loss), "tokens": int(tokens),
               "flops": int(flops), "tokens_total": self.tokens, "flops_total": self.flops,
               "wall_s": round(time.perf_counter() - self._start, 4), **extra}
        self._handle.write(json.dumps(row) + "\n")
        self._handle.flush()

    def totals(self) -> dict[str, Any]:
        """Steps, tokens, FLOPs, final loss and wall time so far (for ``product.json``)."""
        return {"steps": self.steps, "tokens": self.tokens, "flops": self.flops,
                "final_loss": self.last_loss,
                "wall_s": round(time.perf_counter() - self._start, 3)}

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._handle.close()


RecipeFn = Callable[[dict[str, Any], Corpus, Path, int, TrainLog], None]
"""A recipe: ``(options, corpus, out_dir, seed, log) -> None``, writing its model to
``out_dir``."""


def recipe(
    name: str,
    *,
    defaults: Mapping[str, Any],
    version: str = "1",
    choices: Mapping[str, Sequence[Any]] | None = None,
    summary: str | None = None,
    extra: str | None = None,
) -> Callable[[F], F]:
    """Register ``fn(options, corpus, out_dir, seed, log)`` as recipe ``name``.

    Args:
        name: The recipe's name (``harness recipes build NAME``, model arg ``recipe=NAME``).
        defaults: Every option with its default; a given option is converted to its
            default's type, and an option not listed here is an error. An option
            ``corpus`` picks the corpus (:data:`harness.corpus.CORPORA`).
        version: The training code's version: change it when the code changes what a
            product is, so cached products rebuild.
        choices: Allowed values of some options.
        summary: One line for ``harness list`` (default: the docstring's first line).
        extra: The optional extra it needs (``cpu`` for torch), if any.
    """
    allowed = {k: tuple(v) for k, v in (choices or {}).items()}
    unknown = sorted(set(allowed) - set(defaults))
    if unknown:
        raise RegistryError(f"recipe {name!r}: choices for unknown options {unknown}")

    def decorate(fn: F) -> F:
        register("recipe", name, fn, summary=summary, extra=extra, version=str(version),
                 defaults=dict(defaults), choices=allowed)
        return fn

    return decorate


def recipe_names() -> list[str]:
    """Every registered recipe, sorted."""
    return [e.name for e in entries("recipe")]


def _entry(name: str) -> Entry:
    try:
        return get("recipe", name)
    except RegistryError as err:
        raise RecipeError(str(err)) from None


def _coerce(key: str, value: Any, default: Any) -> Any:
    if default is None or not isinstance(value, str) or isinstance(default, str):
        return value
    try:
        if isinstance(default, bool):
            lowered = value.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(value)
            return lowered in ("true", "1", "yes")
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise RecipeError(
            f"option {key}={value!r}: expected {type(default).__name__}") from None
    return value


def resolve_options(name: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The recipe's defaults updated with ``options`` (strings converted to the default's
    type), checked against the recipe's choices; the dict the product's hash is taken of."""
    entry = _entry(name)
    defaults: dict[str, Any] = dict(entry.meta.get("defaults", {}))
    choices: dict[str, tuple[Any, ...]] = dict(entry.meta.get("choices", {}))
    resolved = dict(defaults)
    for key, value in (options or {}).items():
        if key not in defaults:
            raise RecipeError(f"recipe {name!r} has no option {key!r}; options: "
                              f"{', '.join(sorted(defaults)) or 'none'}")
        value = _coerce(key, value, defaults[key])
        if (isinstance(defaults[key], int | float) and not isinstance(defaults[key], bool)
                and isinstance(value, bool)):
            raise RecipeError(f"option {key}={value!r}: expected {type(defaults[key]).__name__}")
        if isinstance(defaults[key], float) and isinstance(value, int):
            value = float(value)
        resolved[key] = value
    for key, allowed in choices.items():
        if resolved[key] not in allowed:
            raise RecipeError(f"option {key}={resolved[key]!r}: one of "
                              f"{', '.join(map(str, allowed))}")
    return resolved


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise RecipeError(f"option value {value!r} is not a finite number")
    return value


def product_key(name: str, version: str, options: Mapping[str, Any], fingerprint: str,
                seed: int) -> str:
    """sha256 of the recipe, its code version, the resolved options, the data fingerprint
    and the seed: the identity of a product."""
    doc = {"recipe": name, "version": version,
           "options": {k: _finite(v) for k, v in sorted(options.items())},
           "data": fingerprint, "seed": int(seed)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def recipe_cache(cache_root: str | os.PathLike[str] | None = None) -> Path:
    """Where products live: ``cache_root`` or ``$EVALSUITE_CACHE/recipes`` (default
    ``~/.cache/evalsuite/recipes``)."""
    if cache_root is not None:
        return Path(cache_root)
    from harness.models.weights import cache_root as model_cache

    return model_cache() / "recipes"


def _corpus_of(options: Mapping[str, Any]) -> Corpus:
    return load_corpus(str(options.get("corpus", DEFAULT_CORPUS)))


def product_dir(name: str, options: Mapping[str, Any] | None = None, seed: int = 0,
                cache_root: str | os.PathLike[str] | None = None) -> Path:
    """The folder the product of (``name``, ``options``, ``seed``) has (built or not)."""
    entry = _entry(name)
    resolved = resolve_options(name, options)
    key = product_key(name, str(entry.meta.get("version", "1")), resolved,
                      _corpus_of(resolved).fingerprint, seed)
    return recipe_cache(cache_root) / name / key[:16]


def _complete(folder: Path) -> bool:
    return (folder / PRODUCT_FILE).is_file()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_product(name: str, options: Mapping[str, Any] | None = None, seed: int = 0,
                  cache_root: str | os.PathLike[str] | None = None) -> Path:
    """The product folder of recipe ``name`` with ``options`` and ``seed``, trained now
    only if the cache has no complete copy (see the module docstring).

    Raises:
        RecipeError: unknown recipe or option.
        harness.registry.MissingExtraError: the recipe needs an extra not installed.
    """
    entry = _entry(name)
    version = str(entry.meta.get("version", "1"))
    resolved = resolve_options(name, options)
    corpus = _corpus_of(resolved)
    key = product_key(name, version, resolved, corpus.fingerprint, seed)
    folder = recipe_cache(cache_root) / name / key[:16]
    if _complete(folder):
        return folder
    fn: RecipeFn = entry.load()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent / f".{folder.name}.lock"):
        if _complete(folder):  # another process built it while we waited
            return folder
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            started = time.perf_counter()
            log = TrainLog(staging / TRAIN_LOG)
            try:
                fn(dict(resolved), corpus, staging, int(seed), log)
            finally:
                log.close()
            product = {"recipe": name, "version": version, "options": resolved,
                       "seed": int(seed), "hash": key, "data": corpus.summary(),
                       "totals": log.totals(),
                       "build_s": round(time.perf_counter() - started, 3),
                       "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            (staging / PRODUCT_FILE).write_text(json.dumps(product, indent=2) + "\n")
            if folder.exists():  # a stale, incomplete folder
                shutil.rmtree(folder)
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder


# ------------------------------------------------------------------------ references


def parse_product_ref(ref: str) -> tuple[str, dict[str, str], int]:
    """``recipe:NAME?opt=v&seed=1`` -> (name, options as strings, seed; default 0)."""
    if not ref.startswith(REF_PREFIX):
        raise RecipeError(f"{ref!r} is not a recipe reference ({REF_PREFIX}NAME?opt=v&seed=N)")
    name, _, query = ref[len(REF_PREFIX):].partition("?")
    if not name:
        raise RecipeError(f"{ref!r} names no recipe")
    options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    seed = int(options.pop("seed", 0))
    return name, options, seed


def resolve_model_args(args: Mapping[str, Any],
                       cache_root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Model args with a recipe reference replaced by ``model_path=<product dir>``.

    A reference is ``model_path="recipe:NAME?opt=v&seed=N"`` or the keys ``recipe=NAME``,
    ``recipe.<option>=v`` and ``recipe.seed=N`` (one study factor each). Args without one
    come back unchanged; ``recipe.*`` keys without ``recipe`` are an error.
    """
    out = dict(args)
    dotted = {k: out.pop(k) for k in list(out) if k.startswith(f"{RECIPE_KEY}.")}
    path = out.get("model_path")
    if RECIPE_KEY in out:
        if isinstance(path, str) and path:
            raise RecipeError("give either model_path or recipe=NAME, not both")
        name = str(out.pop(RECIPE_KEY))
        options = {k.split(".", 1)[1]: v for k, v in dotted.items()}
        seed = int(options.pop("seed", 0))
    elif isinstance(path, str) and path.startswith(REF_PREFIX):
        name, parsed, seed = parse_product_ref(path)
        options = {**parsed, **{k.split(".", 1)[1]: v for k, v in dotted.items()}}
        seed = int(options.pop("seed", seed))
    elif dotted:
        raise RecipeError(f"{', '.join(sorted(dotted))} given without recipe=NAME")
    else:
        return out
    out["model_path"] = str(build_product(name, options, seed, cache_root))
    return out
