"""The wheel test of ``make test`` (``make test-wheel``): a platform wheel
from ``make wheel``, installed in a fresh virtual environment, brings the
engine.

The environment is new (``python -m venv``, no system site packages); pip
installs the wheel and its dependencies (pyarrow, numpy) and pandas, which
the README's example uses, at the versions of requirements-test.txt, so
that pip's cache serves them. The example then runs with PATH cleared of
every directory holding ``go`` or ``pathctl`` and without PATHCTL_BIN: the
only binary it can find is the one inside the wheel. It checks that the
package finds that binary, that the binary's ``--version`` and the
package's version are the wheel's, and runs the README's Python example
(the section "From Python: the `pathctl` package") against a ``pathctl
serve`` started from the bundled binary.

Usage: check_wheel.py dist/pathctl-V-py3-none-PLATFORM.whl
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYTHON_SECTION = "### From Python: the `pathctl` package"

# Runs inside the fresh environment: argv[1] is the README example's code.
PROBE = r'''
import os, re, subprocess, sys, sysconfig
import pathctl

binary = pathctl.find_binary()
scripts = sysconfig.get_path("scripts")
assert os.path.dirname(binary) == scripts, (binary, scripts)
assert pathctl._local.bundled_binary() == binary, binary
version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
assert version == pathctl.__version__ == sys.argv[2], (version, pathctl.__version__, sys.argv[2])

serve = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0", "--data-dir", "graphs"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
try:
    uri = None
    for line in serve.stderr:
        m = re.search(r"listening on (\S+:\d+)", line)
        if m:
            uri = "grpc://" + m.group(1)
            break
    assert uri, "pathctl serve did not start"
    namespace = {"__name__": "readme"}
    exec(compile(sys.argv[1].replace("grpc://127.0.0.1:8815", uri), "README.md", "exec"), namespace)
    assert namespace["pairs"].num_rows > 0 and namespace["dist"].shape[0] > 0
finally:
    serve.terminate()
    serve.wait()
print(f"wheel ok: {binary} {version}")
'''


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index(PYTHON_SECTION)
    end = text.index("\n### ", start + len(PYTHON_SECTION))
    blocks = re.findall(r"```python\n(.*?)```", text[start:end], re.DOTALL)
    code = [b for b in blocks if "pathctl." in b and "SparkSession" not in b and "pathctl.spark" not in b]
    if not code:
        raise SystemExit("check_wheel: the README's Python section has no example")
    return code[0]


def pinned(requirements: Path, names) -> list:
    pins = {}
    for line in requirements.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if m:
            pins[m.group(1).lower()] = line.strip()
    return [pins.get(n, n) for n in names]


def clean_path() -> str:
    keep = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d and not any(os.path.exists(os.path.join(d, exe)) for exe in ("go", "pathctl")):
            keep.append(d)
    path = os.pathsep.join(keep)
    for exe in ("go", "pathctl"):
        if shutil.which(exe, path=path):
            raise SystemExit(f"check_wheel: {exe} is still on the cleaned PATH")
    return path


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    wheel = Path(sys.argv[1]).resolve()
    version = wheel.name.split("-")[1]
    with tempfile.TemporaryDirectory(prefix="pathctl-wheel-check-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        deps = pinned(REPO / "python" / "requirements-test.txt", ["pyarrow", "numpy", "pandas"])
        subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        str(wheel), *deps], check=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("PATHCTL_BIN", "VIRTUAL_ENV", "PYTHONPATH", "GOROOT", "GOPATH")}
        env["PATH"] = clean_path()
        work = Path(tmp) / "work"
        work.mkdir()
        proc = subprocess.run([py, "-c", PROBE, readme_example(), version], cwd=work, env=env,
                              capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"check_wheel: the README example failed with the installed {wheel.name}")


if __name__ == "__main__":
    main()
