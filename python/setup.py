"""The package's version is the repository's VERSION file, the same one the
Makefile gives the binary (-ldflags -X main.version), so that a wheel and
the binary inside it say the same version. Everything else is in
pyproject.toml."""

import os
import re

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def version() -> str:
    repo_file = os.path.join(HERE, "..", "VERSION")
    if os.path.isfile(repo_file):
        with open(repo_file, encoding="utf-8") as f:
            return f.read().strip()
    # An sdist, built outside the repository: its PKG-INFO carries the version.
    with open(os.path.join(HERE, "PKG-INFO"), encoding="utf-8") as f:
        match = re.search(r"^Version: (\S+)$", f.read(), re.MULTILINE)
    if not match:
        raise RuntimeError("pathctl: no VERSION file and no version in PKG-INFO")
    return match.group(1)


setup(version=version())
