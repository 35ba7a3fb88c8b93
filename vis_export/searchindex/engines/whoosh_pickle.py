"""Whoosh keeps an index's table of contents (``_MAIN_<n>.toc``: the schema and
the segments), its postings' block headers and its stored fields as pickles,
and unpickling runs whatever callable a pickle names: a ``.toc`` planted in a
shared or unpacked index would run code for anyone who searches it.

So while the Whoosh engine works (``restricted``), every pickle Whoosh reads is
loaded by an unpickler that finds only the classes an index of ours holds (a
segment, its codec, a ``defaultdict(int)`` of field lengths); anything else
raises ``ForeignIndex``, before any of it runs. The schema in the table of
contents is not read at all: the engine hands Whoosh its own (the manifest's
schema version says they agree), and tables of contents of older formats
(read by another unpickler) are refused. Outside the engine, Whoosh unpickles
as it always does, for any other user of Whoosh in the process.

``install`` binds the restricted loaders in place of ``pickle``'s in every
Whoosh module that took them; a module imported later takes them from
``whoosh.compat``, already changed.
"""

from __future__ import annotations

import codecs
import io
import pickle
import sys
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any

from vis_export.searchindex.guard import ForeignIndex

# What the pickles of an index of ours name (found by logging ``find_class``
# over indexing, updating, deleting, merging and searching, with our schema).
ALLOWED = frozenset(
    {
        ("whoosh.codec.whoosh3", "W3Codec"),
        ("whoosh.codec.whoosh3", "W3Segment"),
        ("collections", "defaultdict"),
        ("builtins", "int"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
    }
)
# Modules that import ``pickle`` themselves rather than through ``whoosh.compat``
# (``whoosh.filedb.misc`` does too, but fails to import in whoosh-reloaded).
_DIRECT = ("whoosh.compat", "whoosh.filedb.fileindex", "whoosh.util.loading", "whoosh.index")

_restricted: ContextVar[bool] = ContextVar("whoosh_restricted", default=False)
ENGINE_CODE = True  # what fails in here is Whoosh reading its data (see ``guard``)


def _latin1(text: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """``_codecs.encode`` as pickle protocol 2 uses it for bytes, and nothing else."""
    if encoding not in ("latin1", "latin-1"):
        raise ForeignIndex(f"the index's files ask for the codec {encoding!r}")
    return codecs.encode(text, encoding, errors)


def _no_bytes(*given: Any) -> bytes:
    """``bytes()`` as pickle protocol 2 writes empty bytes (a job's sorted runs
    of postings hold them: the empty language of a block that is not code),
    and nothing else (``bytes(n)`` would make n bytes)."""
    if given:
        raise ForeignIndex("the index's files ask for bytes made of something")
    return b""


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("_codecs", "encode"):
            return _latin1
        if (module, name) == ("__builtin__", "bytes"):
            return _no_bytes
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        raise ForeignIndex(f"its files name {module}.{name}, which no index of vis-export holds")


def _load(file: IO[bytes], **options: Any) -> Any:
    if not _restricted.get():
        return pickle.load(file, **options)
    try:
        return _Unpickler(file, **options).load()
    except ForeignIndex:
        file.close()  # Whoosh does not close a table of contents it fails to read
        raise


def _loads(data: Any, /, **options: Any) -> Any:
    """``pickle.loads``, restricted. The unpickler reads a file with ``peek``
    (a buffer as large as the data) by its buffer: it calls ``read`` of a
    ``BytesIO``, which has none, for each thing it reads (a query's posting
    blocks, a thousand numbers each, were unpickled four times as slowly)."""
    if not _restricted.get():
        return pickle.loads(data, **options)
    return _Unpickler(io.BufferedReader(io.BytesIO(data), max(len(data), 1)), **options).load()


class _LegacyLoaders(Mapping[int, Any]):
    """``whoosh.legacy.toc_loaders`` (tables of contents of older formats, read
    by an unpickler of their own), empty while restricted."""

    def __init__(self, loaders: Mapping[int, Any]):
        self.loaders = loaders

    def __getitem__(self, version: int) -> Any:
        if _restricted.get():
            raise KeyError(version)
        return self.loaders[version]

    def __iter__(self) -> Iterator[int]:
        return iter(() if _restricted.get() else self.loaders)

    def __len__(self) -> int:
        return 0 if _restricted.get() else len(self.loaders)


def _pickle_module() -> types.ModuleType:
    """``pickle`` with the restricted loaders, for modules that use it by name."""
    module = types.ModuleType("pickle", pickle.__doc__)
    module.__dict__.update({k: v for k, v in vars(pickle).items() if not k.startswith("__")})
    module.load, module.loads = _load, _loads  # type: ignore[attr-defined]
    return module


_PICKLE = _pickle_module()


def _replacement(value: Any) -> Any:
    for original, replacement in ((pickle.load, _load), (pickle.loads, _loads), (pickle, _PICKLE)):
        if value is original:
            return replacement
    return None


def _whoosh_modules() -> list[tuple[str, types.ModuleType]]:
    return [(name, module) for name, module in list(sys.modules.items()) if name.split(".")[0] == "whoosh"]


def install() -> None:
    """Binds the restricted loaders in every Whoosh module loaded (idempotent)."""
    import importlib

    for name in _DIRECT:
        importlib.import_module(name)
    for _, module in _whoosh_modules():
        for attribute, value in list(vars(module).items()):
            replacement = _replacement(value)
            if replacement is not None:
                setattr(module, attribute, replacement)
    index = sys.modules["whoosh.index"]
    loaders = vars(index)["toc_loaders"]
    if not isinstance(loaders, _LegacyLoaders):
        setattr(index, "toc_loaders", _LegacyLoaders(loaders))  # noqa: B010 - a module's attribute


def unsafe_loaders() -> list[str]:
    """Every ``module.attribute`` of Whoosh still bound to ``pickle``'s own loaders
    (for the tests: none once ``install`` has run, modules imported since included)."""
    return [
        f"{name}.{attribute}"
        for name, module in _whoosh_modules()
        for attribute, value in list(vars(module).items())
        if _replacement(value) is not None
    ]


@contextmanager
def restricted() -> Iterator[None]:
    """Whoosh's unpickling finds only ``ALLOWED`` within."""
    token = _restricted.set(True)
    try:
        yield
    finally:
        _restricted.reset(token)
