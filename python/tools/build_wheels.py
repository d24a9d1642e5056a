"""Platform wheels of the pathctl package with the pathctl binary inside
(``make wheel``).

The package itself is pure Python: setuptools builds it once as a
``py3-none-any`` wheel. For each GOARCH asked for, this script builds the
binary (CGO_ENABLED=0, version from the repository's VERSION file) and
repacks the pure wheel with the binary under ``pathctl-V.data/scripts/``,
which pip installs into the environment's ``bin/`` — the way ruff and uv ship
their executables — tagged for that platform, with a new RECORD.

Platform tag: manylinux_2_17 (manylinux2014). The CGO_ENABLED=0 binary needs
no C compiler and no CUDA toolkit, but it is not fully static: purego, which
loads libcuda.so.1 at run time, links it dynamically against glibc's loader
and libc.so.6, libdl.so.2 and libpthread.so.0 with unversioned symbols. Those
are in manylinux2014's allowed set, so the binary runs on any glibc Linux from
2.17 on (and Go's own floor, Linux kernel 3.2). It does not run on musl
(Alpine has no /lib64/ld-linux-x86-64.so.2), so the wheels carry no
musllinux tag.

Usage: build_wheels.py --version V --out DIR GOARCH...
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parents[2]

# GOARCH -> the wheel's platform tags (PEP 600 and its manylinux2014 alias).
PLATFORMS = {
    "amd64": ("manylinux_2_17_x86_64", "manylinux2014_x86_64"),
    "arm64": ("manylinux_2_17_aarch64", "manylinux2014_aarch64"),
}


def build_binary(goarch: str, version: str, out: Path) -> None:
    env = dict(os.environ, CGO_ENABLED="0", GOOS="linux", GOARCH=goarch)
    # No -trimpath: the packages' compile cache is then the one `make build` fills.
    subprocess.run(["go", "build", "-ldflags", f"-s -w -X main.version={version}",
                    "-o", str(out), "./cmd/pathctl"], cwd=REPO, env=env, check=True)


def build_pure_wheel(out_dir: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(out_dir), str(REPO / "python")], check=True)
    wheels = sorted(out_dir.glob("pathctl-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"build_wheels: expected one pure wheel in {out_dir}, found {wheels}")
    return wheels[0]


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def platform_wheel(pure: Path, binary: Path, goarch: str, out_dir: Path) -> Path:
    """``pure`` with ``binary`` added as the script ``pathctl`` and retagged
    for ``goarch``."""
    name, version = pure.name.split("-")[:2]
    tags = PLATFORMS[goarch]
    target = out_dir / f"{name}-{version}-py3-none-{'.'.join(tags)}.whl"
    dist_info = f"{name}-{version}.dist-info"
    record_name = f"{dist_info}/RECORD"
    records: List[Tuple[str, str, int]] = []
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(pure) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename == record_name:
                continue
            data = src.read(info)
            if info.filename == f"{dist_info}/WHEEL":
                data = _retag(data.decode(), tags).encode()
            dst.writestr(info, data)
            records.append((info.filename, _record_hash(data), len(data)))
        script = f"{name}-{version}.data/scripts/pathctl"
        data = binary.read_bytes()
        info = zipfile.ZipInfo(script, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100755 << 16)  # a regular, executable file
        info.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(info, data)
        records.append((script, _record_hash(data), len(data)))
        lines = [f"{path},{digest},{size}" for path, digest, size in records]
        lines.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100644 << 16)
        info.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(info, "\n".join(lines) + "\n")
    tmp.replace(target)
    return target


def _retag(wheel_file: str, tags: Tuple[str, ...]) -> str:
    out = []
    for line in wheel_file.splitlines():
        if line.startswith("Tag:"):
            continue
        if line.startswith("Root-Is-Purelib:"):
            line = "Root-Is-Purelib: false"  # a platform wheel installs into platlib
        out.append(line)
    out += [f"Tag: py3-none-{tag}" for tag in tags]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the repository's VERSION")
    parser.add_argument("--out", required=True, type=Path, help="where the wheels go")
    parser.add_argument("goarch", nargs="+", choices=sorted(PLATFORMS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pathctl-wheel-") as tmp:
        work = Path(tmp)
        pure = build_pure_wheel(work)
        if f"-{args.version}-" not in pure.name:
            raise SystemExit(f"build_wheels: {pure.name} does not carry VERSION {args.version}")
        for goarch in args.goarch:
            binary = work / f"pathctl-linux-{goarch}"
            build_binary(goarch, args.version, binary)
            print(platform_wheel(pure, binary, goarch, args.out))


if __name__ == "__main__":
    main()
