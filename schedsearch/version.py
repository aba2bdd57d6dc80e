"""The installed distribution's version, for ``schedsearch --version``."""

from __future__ import annotations

from importlib import metadata

__all__ = ["DISTRIBUTION", "package_version"]

#: The name the package is installed under (``pip install npu-schedsearch``).
DISTRIBUTION = "npu-schedsearch"


def package_version() -> str:
    """The installed version, or a note that the code runs from a checkout not installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"
