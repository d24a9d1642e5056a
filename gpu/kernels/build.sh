#!/usr/bin/env bash
# build.sh compiles gpu/kernels/*.cu into the one kernel image the gpu package
# embeds (kernels.fatbin), records the hash of the sources it was built from
# (kernels.sha256) and writes the table of kernel entry points
# (../kernels_gen.go).
#
#   gpu/kernels/build.sh          rebuild kernels.fatbin, kernels.sha256 and
#                                 the kernel table
#   gpu/kernels/build.sh --check  compile every .cu into a temporary directory,
#                                 touch nothing committed
#   gpu/kernels/build.sh --hash   print the source hash only (no compiler needed)
#   gpu/kernels/build.sh --table  rewrite the kernel table only (no compiler
#                                 needed)
#   gpu/kernels/build.sh --fetch  fetch the compiler into the cache only
#
# The compiler is Debian's CUDA 11.8 (nvidia-cuda-toolkit, from the non-free
# component) with g++-11 as nvcc's host compiler. Nothing is installed on the
# system: `apt-get download` fetches the packages with a private copy of
# apt's lists, and only what nvcc needs is unpacked from them into the
# project's cache, .cache/cuda/root (about 200 MB; the download, about
# 860 MB, is deleted after). This needs apt-get and network access, not
# root. $NVCC, where set, is used instead (its output differs from the
# committed image unless it is CUDA 11.8).
#
# Where the compiler can be neither found nor fetched, --check says so in one
# line and exits 0 on a machine where it runs without root; as root, or with
# $CI set, that is an error, so that CI always compiles the kernels.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${PATHCTL_CUDA_CACHE:-$repo/.cache/cuda}"
cd "$here"

mode=build
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  --hash) mode=hash ;;
  --table) mode=table ;;
  --fetch) mode=fetch ;;
  *) echo "build.sh: unknown argument $1 (want --check, --hash, --table or --fetch)" >&2; exit 2 ;;
esac

# source_hash prints the SHA-256 over the sorted kernel sources (*.cu and the
# headers they share, *.cuh): for each file, its name, a newline, its length in
# bytes, a newline, then its contents. The gpu package's test recomputes the
# same hash (kernels_test.go).
source_hash() {
  local f
  for f in $(LC_ALL=C ls -1 -- *.cu *.cuh); do
    printf '%s\n%s\n' "$f" "$(wc -c <"$f" | tr -d ' ')"
    cat -- "$f"
  done | sha256sum | cut -d' ' -f1
}

# write_table regenerates ../kernels_gen.go from the sources; the gpu
# package's TestKernelTableUpToDate checks it is current.
write_table() {
  (cd "$repo" && go run ./internal/cmd/kerneltable -dir gpu/kernels -o gpu/kernels_gen.go)
}

case "$mode" in
  hash) source_hash; exit 0 ;;
  table) write_table; exit 0 ;;
esac

# The packages nvcc needs, and from each only the members it uses (paths as
# dpkg-deb lists them). nvidia-cuda-toolkit: nvcc and its tools;
# nvidia-cuda-dev: the CUDA headers; g++-11, libstdc++-11-dev and
# libgcc-11-dev: the host compiler's driver, cc1plus and headers, which nvcc
# runs to preprocess (nvcc 11.8 refuses a g++ newer than 11).
packages=(nvidia-cuda-toolkit nvidia-cuda-dev g++-11 libstdc++-11-dev libgcc-11-dev)
members=(
  './usr/bin/cudafe++' ./usr/bin/ptxas ./usr/bin/fatbinary ./usr/bin/nvlink ./usr/bin/bin2c
  ./usr/bin/cuobjdump ./usr/bin/nvdisasm
  ./usr/lib/nvidia-cuda-toolkit/bin/nvcc ./usr/lib/nvidia-cuda-toolkit/bin/cicc
  './usr/lib/nvidia-cuda-toolkit/bin/crt/*' './usr/lib/nvidia-cuda-toolkit/libdevice/*'
  './usr/include/*'
  './usr/bin/g++-11' './usr/bin/x86_64-linux-gnu-g++-11'
  ./usr/lib/gcc/x86_64-linux-gnu/11/cc1plus './usr/lib/gcc/x86_64-linux-gnu/11/include/*'
)
root="$cache/root"
cached_nvcc="$root/usr/lib/nvidia-cuda-toolkit/bin/nvcc"

# fetch_toolkit fills $root, printing one line on stdout saying why when it
# cannot (and returning 1).
fetch_toolkit() {
  local tool
  for tool in apt-get dpkg-deb tar; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "$tool not found (the compiler comes from Debian's packages)"
      return 1
    fi
  done
  if [ ! -r /etc/apt/sources.list.d/debian.sources ]; then
    echo "/etc/apt/sources.list.d/debian.sources not found (the compiler comes from Debian's bookworm packages)"
    return 1
  fi
  echo "build.sh: fetching CUDA 11.8 and g++-11 into $cache (about 860 MB to download, 200 MB kept)" >&2
  local apt="$cache/apt" debs="$cache/debs" stage="$cache/root.partial"
  rm -rf "$debs" "$stage"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$debs" "$stage"
  # The system's sources with the non-free component added, in a private
  # sources directory: apt's own configuration stays as it is.
  sed -e 's/^Components: main$/Components: main contrib non-free/' \
    /etc/apt/sources.list.d/debian.sources >"$apt/debian.sources"
  local o=(-o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$apt"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
  if ! apt-get "${o[@]}" update >"$apt/update.log" 2>&1; then
    echo "apt-get update failed (offline?); see $apt/update.log"
    return 1
  fi
  if ! (cd "$debs" && apt-get "${o[@]}" download "${packages[@]}") >"$apt/download.log" 2>&1; then
    echo "apt-get download ${packages[*]} failed; see $apt/download.log"
    return 1
  fi
  local f
  for f in "$debs"/*.deb; do
    # Members a package lacks are not an error: each holds only some of them.
    dpkg-deb --fsys-tarfile "$f" | tar -x -C "$stage" --wildcards "${members[@]}" 2>/dev/null || true
  done
  rm -rf "$debs"
  # nvcc reads nvcc.profile beside itself; Debian's points at /usr. Paths
  # relative to nvcc's own directory (_HERE_) make the cache work anywhere.
  cat >"$stage/usr/lib/nvidia-cuda-toolkit/bin/nvcc.profile" <<'PROFILE'
NVVMIR_LIBRARY_DIR = $(_HERE_)/../libdevice
PATH += $(_HERE_):$(_HERE_)/../../../bin:
INCLUDES += "-I$(_HERE_)/../../../include" $(_SPACE_)
LIBRARIES =+ $(_SPACE_) "-L$(_HERE_)/../../x86_64-linux-gnu/stubs"
PROFILE
  if [ ! -x "$stage/usr/lib/nvidia-cuda-toolkit/bin/nvcc" ] || [ ! -x "$stage/usr/lib/gcc/x86_64-linux-gnu/11/cc1plus" ]; then
    echo "the downloaded packages lack nvcc or cc1plus; see $apt/download.log"
    return 1
  fi
  if ! echo 'int x;' | PATH="$stage/usr/bin:$PATH" g++-11 -x c++ -E - >/dev/null 2>"$apt/g++.log"; then
    echo "the unpacked g++-11 does not run (missing libisl23, libmpc3 or libmpfr6?); see $apt/g++.log"
    return 1
  fi
  rm -rf "$root"
  mv "$stage" "$root"
  echo "build.sh: CUDA 11.8 is in $root ($(du -sh "$root" | cut -f1))" >&2
}

# nvcc_cmd is the compiler command line: $NVCC, or the cached CUDA 11.8 with
# the cached g++-11 (fetched where missing).
nvcc_cmd=()
why=""
if [ -n "${NVCC:-}" ]; then
  nvcc_cmd=("$NVCC")
elif [ -x "$cached_nvcc" ] || why="$(fetch_toolkit)"; then
  export PATH="$root/usr/bin:$PATH"
  nvcc_cmd=("$cached_nvcc" -ccbin g++-11)
fi

if [ "$mode" = fetch ]; then
  if [ ${#nvcc_cmd[@]} -eq 0 ]; then
    echo "build.sh: cannot fetch the kernel compiler: $why" >&2
    exit 1
  fi
  exit 0
fi

if [ ${#nvcc_cmd[@]} -eq 0 ] && [ "$mode" = check ] && command -v nvcc >/dev/null 2>&1; then
  echo "build.sh: checking with $(command -v nvcc) instead ($why)" >&2
  nvcc_cmd=(nvcc)
fi
if [ ${#nvcc_cmd[@]} -eq 0 ]; then
  if [ "$mode" = check ] && [ "$(id -u)" != 0 ] && [ -z "${CI:-}" ]; then
    echo "build.sh: skipping the kernel compile check: no CUDA 11.8 compiler ($why); CI runs it" >&2
    exit 0
  fi
  echo "build.sh: no kernel compiler: $why (or set NVCC)" >&2
  exit 1
fi

gencode=()
for a in 70 75 80 86 89 90; do
  gencode+=(-gencode "arch=compute_$a,code=sm_$a")
done
gencode+=(-gencode arch=compute_90,code=compute_90)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One translation unit including every .cu, so that one fatbin carries every
# kernel and the Go side loads a single module.
{
  echo "// Generated by build.sh: includes every kernel source."
  for f in $(LC_ALL=C ls -1 -- *.cu); do
    echo "#include \"$f\""
  done
} >"$tmp/all.cu"

"${nvcc_cmd[@]}" --version | tail -n 2 >&2
"${nvcc_cmd[@]}" --fatbin -O3 -std=c++14 "${gencode[@]}" -Xptxas -Werror -I"$here" -o "$tmp/kernels.fatbin" "$tmp/all.cu"

if [ "$mode" = check ]; then
  echo "build.sh: every kernel source compiles ($(wc -c <"$tmp/kernels.fatbin") byte image, not kept)" >&2
  exit 0
fi

cp "$tmp/kernels.fatbin" "$here/kernels.fatbin"
{
  echo "# Code generated by gpu/kernels/build.sh from the kernel sources. DO NOT EDIT."
  source_hash
} >"$here/kernels.sha256"
write_table
echo "build.sh: wrote kernels.fatbin ($(wc -c <kernels.fatbin) bytes), kernels.sha256 $(tail -n 1 kernels.sha256) and ../kernels_gen.go" >&2
