"""The Python versions the docs state are the ones the code and its tools
need: the package's minimum (pyproject.toml) parses every module, the
README states it, and the README's minimum for make test is no lower than
what the pinned test tools require."""

import ast
import re
from importlib import metadata
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[1]
ROOT = PYTHON.parent


def version(text: str) -> tuple:
    return tuple(int(x) for x in text.split("."))


def package_minimum() -> tuple:
    m = re.search(r'^requires-python = ">=(3\.\d+)"$', (PYTHON / "pyproject.toml").read_text(), re.M)
    assert m, "python/pyproject.toml has no requires-python = \">=3.N\""
    return version(m.group(1))


def test_modules_parse_at_the_package_minimum():
    minimum = package_minimum()
    modules = sorted((PYTHON / "pathctl").glob("*.py"))
    assert modules
    for path in modules:
        # feature_version refuses the grammar of later versions (match,
        # except*, parenthesized context managers).
        ast.parse(path.read_text(), filename=str(path), feature_version=minimum)


def test_readme_states_the_versions():
    readme = (ROOT / "README.md").read_text()
    minimum = package_minimum()
    m = re.search(r"package itself runs on Python ≥ (3\.\d+)", readme)
    assert m and version(m.group(1)) == minimum, \
        f"README.md does not state the package's minimum, Python ≥ {'.'.join(map(str, minimum))}"
    m = re.search(r"`make test` needs Go ≥ [\d.]+ and Python ≥ (3\.\d+)", readme)
    assert m, "README.md does not say which Python make test needs"
    stated = version(m.group(1))
    # What each pinned test tool installed here declares it needs.
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==", (PYTHON / "requirements-test.txt").read_text(), re.M)
    needed = {}
    for name in pins:
        req = metadata.metadata(name).get("Requires-Python") or ""
        for low in re.findall(r">=\s*(3\.\d+)", req):
            needed[name] = version(low)
    assert needed, "no pinned test tool declares Requires-Python"
    worst = max(needed.values())
    assert stated >= worst, f"README.md says make test needs Python ≥ {m.group(1)}, but {needed} need more"
