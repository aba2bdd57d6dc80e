"""benchmarks/data.py: fetch from a local HTTP server (127.0.0.1), pinned checksums,
whole-or-nothing files, and where the data is looked for."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import data


@pytest.fixture()
def upstream(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server for ``tmp_path/site`` and a manifest of two files it serves (one of them
    with a wrong pinned checksum, as if upstream had changed it)."""
    site = tmp_path / "site"
    (site / "owner" / "repo" / "HEAD" / "data").mkdir(parents=True)
    good = b"id,lower,upper,size\na,0,10,100\n"
    changed = b"id,lower,upper,size\nb,0,5,7\n"
    (site / "owner/repo/HEAD/data/good.csv").write_bytes(good)
    (site / "owner/repo/HEAD/data/changed.csv").write_bytes(changed)
    manifest = tmp_path / "external.json"
    manifest.write_text(json.dumps({"files": [
        {"path": "set/good.csv", "source": "owner/repo/HEAD/data/good.csv",
         "sha256": hashlib.sha256(good).hexdigest(), "licence": "MIT"},
        {"path": "set/changed.csv", "source": "owner/repo/HEAD/data/changed.csv",
         "sha256": hashlib.sha256(b"what was pinned").hexdigest(), "licence": "MIT"},
        {"path": "set/gone.csv", "source": "owner/repo/HEAD/data/gone.csv",
         "sha256": hashlib.sha256(b"").hexdigest(), "licence": "MIT"}]}))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", manifest
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def test_fetch_keeps_what_matches_its_pin_and_refuses_the_rest(
        upstream: tuple[str, Path], tmp_path: Path) -> None:
    base, manifest = upstream
    dest = tmp_path / "cache"
    failed = data.fetch(dest, base_url=base, manifest=manifest, log=lambda line: None)
    assert (dest / "set/good.csv").read_bytes().startswith(b"id,lower")
    assert [line.split(" ")[0] for line in failed] == ["set/changed.csv", "set/gone.csv"]
    assert "checksum" in failed[0] and "404" in failed[1]
    assert sorted(p.name for p in (dest / "set").iterdir()) == ["good.csv"]  # no partials
    assert data.check(dest, manifest) == ["set/changed.csv: missing", "set/gone.csv: missing"]
    fetched: list[str] = []
    data.fetch(dest, base_url=base, manifest=manifest, log=fetched.append)
    assert fetched == []  # a second fetch downloads nothing already pinned


def test_the_option_wins_and_an_absent_folder_is_named_with_both_ways_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(data.ENV, str(tmp_path))
    assert data.locate() == tmp_path
    assert data.locate(str(tmp_path / "nosuch")) is None
    message = data.skip_message("PSPLIB j30", str(tmp_path / "nosuch"))
    assert "--external DIR" in message and data.ENV in message
    assert "python -m benchmarks.data fetch" in message
