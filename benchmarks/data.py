"""Public benchmark data (PSPLIB, MiniMalloc, idealloc): where it is, how to get it.

The figures on public data read a folder laid out as ``<dir>/psplib/j30/...``,
``<dir>/minimalloc/challenging/...``, ``<dir>/idealloc/...``. It is found (see
:func:`locate`) at ``--external DIR``, else ``$NPU_BENCH_EXTERNAL``, else
``<repo>/../shared/external`` (the development machine's copy), else the cache that
``python -m benchmarks.data fetch`` fills. When none holds the data a benchmark says so
and names the ways to provide it (:func:`skip_message`).

``fetch`` downloads every file listed in ``benchmarks/external.json`` from its public
source (a GitHub repository, read through ``raw.githubusercontent.com``) into the cache,
checks each against the SHA-256 pinned there from the copies the published figures were
measured on, and writes it whole or not at all. A file whose checksum differs is refused
and named, so an upstream file that moved or changed can never silently change a figure.
Each set's licence file is fetched beside its data. The upstream paths are the ones the
data's README names; this machine cannot reach GitHub, so they are exercised against a
local server only (tests/benchmarks/test_data.py).

Commands: ``fetch [--dest DIR] [--base-url URL]``, ``check [--external DIR]`` (the
checksums of a local copy), ``where [--external DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from models.files import write_atomic

__all__ = ["ENV", "CACHE", "MANIFEST", "GITHUB_RAW", "Entry", "entries", "locate",
           "skip_reason", "skip_message", "fetch", "check", "main"]

#: Environment variable naming a local copy of the data.
ENV = "NPU_BENCH_EXTERNAL"
#: Where ``fetch`` puts the data by default.
CACHE = (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
         / "npu-schedsearch" / "external")
#: Per file: its place in the data folder, its upstream path and its SHA-256.
MANIFEST = Path(__file__).with_name("external.json")
#: Where upstream paths (``owner/repo/ref/path``) are read from.
GITHUB_RAW = "https://raw.githubusercontent.com"
_SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "external"
_CHUNK = 1 << 16

Opener = Callable[[str], BinaryIO]


@dataclass(frozen=True, slots=True)
class Entry:
    """One file: ``path`` in the data folder, ``source`` upstream (``owner/repo/ref/
    path``), its ``sha256``, and the licence of the set it belongs to."""

    path: str
    source: str
    sha256: str
    licence: str


def entries(manifest: Path = MANIFEST) -> list[Entry]:
    document = json.loads(manifest.read_text(encoding="utf-8"))
    return [Entry(**entry) for entry in document["files"]]


def locate(option: str | None = None) -> Path | None:
    """The data folder: ``option``, else ``$NPU_BENCH_EXTERNAL``, else the shared copy
    beside the repository, else the fetch cache; None when the chosen one is absent."""
    chosen = option or os.environ.get(ENV)
    if chosen:
        return Path(chosen) if Path(chosen).is_dir() else None
    for folder in (_SHARED, CACHE):
        if folder.is_dir():
            return folder
    return None


def skip_reason(option: str | None = None) -> str:
    """Why a benchmark on public data is skipped, and the ways to provide the data."""
    where = f"in {option}" if option else "in any data folder"
    return (f"its public data is not {where}; give a local copy with --external DIR or "
            f"${ENV}=DIR, or download it with `python -m benchmarks.data fetch` (into "
            f"{CACHE})")


def skip_message(what: str, option: str | None = None) -> str:
    """``what: skipped, <the reason and the ways out>``."""
    return f"{what}: skipped, {skip_reason(option)}"


def _digest(path: Path) -> str:
    hashed = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            hashed.update(chunk)
    return hashed.hexdigest()


def _download(url: str, target: Path, sha256: str, opener: Opener) -> None:
    """``url`` into ``target`` whole, or nothing (OSError, or ValueError on a checksum
    that differs)."""
    target.parent.mkdir(parents=True, exist_ok=True)

    def copy(out: BinaryIO) -> None:
        hashed = hashlib.sha256()
        with opener(url) as stream:
            for chunk in iter(lambda: stream.read(_CHUNK), b""):
                hashed.update(chunk)
                out.write(chunk)
        if hashed.hexdigest() != sha256:
            raise ValueError(f"checksum {hashed.hexdigest()} differs from the pinned "
                             f"{sha256}")

    write_atomic(target, copy)


def fetch(dest: Path = CACHE, *, base_url: str = GITHUB_RAW,
          opener: Opener = urllib.request.urlopen, manifest: Path = MANIFEST,
          log: Callable[[str], None] = print) -> list[str]:
    """Download every file of ``manifest`` missing (or different) under ``dest``; the
    files that failed, each with why (nothing is left half written)."""
    failed = []
    for entry in entries(manifest):
        target = dest / entry.path
        if target.is_file() and _digest(target) == entry.sha256:
            continue
        url = f"{base_url.rstrip('/')}/{entry.source}"
        try:
            _download(url, target, entry.sha256, opener)
            log(f"fetched {entry.path} ({entry.licence})")
        except (OSError, ValueError, urllib.error.URLError) as error:
            failed.append(f"{entry.path} from {url}: {error}")
    return failed


def check(folder: Path, manifest: Path = MANIFEST) -> list[str]:
    """The files of ``manifest`` that ``folder`` lacks or holds with another checksum."""
    problems = []
    for entry in entries(manifest):
        path = folder / entry.path
        if not path.is_file():
            problems.append(f"{entry.path}: missing")
        elif _digest(path) != entry.sha256:
            problems.append(f"{entry.path}: checksum differs from the pinned one")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.data",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    get = commands.add_parser("fetch", help="download the public data into a cache")
    get.add_argument("--dest", type=Path, default=CACHE, help=f"default {CACHE}")
    get.add_argument("--base-url", default=GITHUB_RAW, help=argparse.SUPPRESS)
    for name, text in (("check", "verify a local copy's checksums"),
                       ("where", "say which data folder the benchmarks read")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--external", metavar="DIR", help=f"a local copy (else ${ENV}, "
                                                             f"the shared copy, the cache)")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        failed = fetch(args.dest, base_url=args.base_url)
        for line in failed:
            print(f"failed: {line}", file=sys.stderr)
        print(f"{len(entries()) - len(failed)} of {len(entries())} files in {args.dest}")
        return 1 if failed else 0
    folder = locate(args.external)
    if folder is None:
        print(skip_message("the public benchmarks", args.external), file=sys.stderr)
        return 1
    if args.command == "where":
        licences = sorted({f"{e.path.split('/')[0]}: {e.licence}" for e in entries()})
        print(f"{folder}\n" + "\n".join(f"  {line}" for line in licences))
        return 0
    problems = check(folder)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{folder}: {len(entries()) - len(problems)} of {len(entries())} files as pinned")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
