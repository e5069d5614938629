#!/bin/sh
# Trim the action image's installed dependencies (Dockerfile, build stage; before oloproof itself
# is installed, which this leaves alone).  Usage: sh docker/slim-venv.sh PYTHON SITE_PACKAGES
#
# Only what no code path imports or loads at run time goes; each step says why it is safe.
# tests/action/test_docker.py runs every subcommand (tests/install/smoke.py) and the gate inside
# the built image, and the Dockerfile's last RUN imports every runtime package.
set -eu
python="$1"
site="$2"
cd "$site"

# 1. The packages' own test suites (~50 MB, never imported), numpy's C headers, type stubs,
#    Cython declarations and C headers (only compilers and type checkers read them), and
#    numpy.distutils (it cannot even be imported here: Debian's python3 has no distutils.ccompiler).
find numpy scipy -depth -type d -name tests -exec rm -rf {} +
rm -rf numpy/_core/include numpy/distutils
find . -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.h' \) -delete

# 2. Symbol tables of the extension modules (~16 MB): `strip --strip-unneeded` keeps the dynamic
#    symbols the loader needs. The bundled libraries in *.libs/ are NOT stripped: numpy's
#    patchelf'd OpenBLAS then fails to load ("ELF load command address/offset not page-aligned").
find . -path './*.libs' -prune -o -type f -name '*.so' -print | xargs strip --strip-unneeded

# 3. scipy's wheel bundles byte-identical copies of numpy's libgfortran and libquadmath (same
#    file names, hash-suffixed): a symlink to numpy's copy loads the same file (~3 MB).
for lib in scipy.libs/*; do
  twin="numpy.libs/${lib#scipy.libs/}"
  if [ -f "$twin" ] && cmp -s "$lib" "$twin"; then
    ln -sf "../$twin" "$lib"
  fi
done

# 4. Sourceless dependencies (~26 MB): each module's .pyc goes beside its .py (the layout Python
#    imports without the source), then the .py files and the __pycache__ folders go. The .pyc files
#    pip compiled at install are moved, not recompiled (the sourceless loader does not compare them
#    with a source); `compileall -b` then compiles only what pip left uncompiled, and fails the build
#    on a module that cannot be compiled. Start-up is unchanged (measured in docs/action.md); a
#    traceback through these packages shows file and line but not the source line. oloproof keeps
#    its sources (its tracebacks, and the checker identity's source digest), and so do pip and
#    setuptools (removed after oloproof is built).
deps=""
for entry in *; do
  case "$entry" in
    oloproof | pip | setuptools | pkg_resources | _distutils_hack | *.dist-info | *.libs | *.pth) ;;
    *) deps="$deps $entry" ;;
  esac
done
# shellcheck disable=SC2086
"$python" - $deps <<'EOF_PY'
import os, sys
suffix = "." + sys.implementation.cache_tag + ".pyc"
for top in sys.argv[1:]:
    for folder, _, names in os.walk(top):
        if os.path.basename(folder) == "__pycache__":
            for name in names:
                if name.endswith(suffix) and "." not in name[: -len(suffix)]:
                    os.replace(os.path.join(folder, name), os.path.join(os.path.dirname(folder), name[: -len(suffix)] + ".pyc"))
EOF_PY
# shellcheck disable=SC2086
"$python" -m compileall -q -b -j 0 $deps
# shellcheck disable=SC2086
find $deps -name '*.py' -type f -delete
# shellcheck disable=SC2086
find $deps -depth -type d -name __pycache__ -exec rm -rf {} +
