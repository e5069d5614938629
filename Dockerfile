# The image of the oloproof GitHub Action (action.yml: runs.using docker, image Dockerfile).
#
# GitHub rebuilds it on every job from this file, so it is small and every package is pinned:
# Debian's python3 (3.11 in bookworm), a venv at an absolute path holding the runtime
# dependencies from docker/requirements.lock (exact versions, hashes checked) and oloproof.
# pip, setuptools and the source tree stay in the build stages.
# No `# syntax=` line (BuildKit would fetch its frontend from Docker Hub), no USER (the
# runner mounts the workspace owned by another uid: the action runs as root and chowns what
# it writes), no reliance on WORKDIR (the runner passes --workdir /github/workspace).

# Three stages, so that a change to oloproof's own code rebuilds only its small layer:
# `deps` (the pinned packages, trimmed), `build` (oloproof from this tree), and the runtime.

FROM debian:bookworm-slim AS deps
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY docker/requirements.lock /tmp/requirements.lock
# Then drop the packages' own test suites (~50 MB, never imported), C headers, Cython declarations
# and type stubs (only compilers and type checkers read them), and make /opt/runtime: the same venv
# without pip and setuptools, which only building needs. (Stripping the shared libraries would save
# ~17 MB more, but breaks the wheels' patchelf'd OpenBLAS: "ELF load command ... not page-aligned".)
RUN python3 -m venv /opt/oloproof \
 && /opt/oloproof/bin/pip install --require-hashes --only-binary :all: -r /tmp/requirements.lock \
 && site=/opt/oloproof/lib/python3.11/site-packages \
 && find "$site/numpy" "$site/scipy" -depth -type d -name tests -exec rm -rf {} + \
 && rm -rf "$site/numpy/_core/include" \
 && find "$site" -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.h' \) -delete \
 && cp -a /opt/oloproof /opt/runtime \
 && rm -rf /opt/runtime/lib/python3.11/site-packages/pip /opt/runtime/lib/python3.11/site-packages/pip-* \
      /opt/runtime/lib/python3.11/site-packages/setuptools /opt/runtime/lib/python3.11/site-packages/setuptools-* \
      /opt/runtime/lib/python3.11/site-packages/_distutils_hack /opt/runtime/lib/python3.11/site-packages/distutils-precedence.pth \
      /opt/runtime/lib/python3.11/site-packages/pkg_resources /opt/runtime/bin/pip /opt/runtime/bin/pip3*

FROM deps AS build
COPY . /tmp/src
# --no-deps: the pinned set is complete; --no-build-isolation: build with the pinned setuptools.
# The worked examples (6.7 MB, what `oloproof init` copies) stay: every subcommand runs in the image
# (tests/install/smoke.py), and the redaction-pressure environment counts in the checker's digest.
RUN /opt/oloproof/bin/pip install --no-deps --no-build-isolation --target /opt/pkg /tmp/src \
 && mv /opt/pkg/bin /opt/pkg-bin \
 && mkdir -p /action && cp /tmp/src/entrypoint.py /action/entrypoint.py

FROM debian:bookworm-slim
# ca-certificates: python3 only recommends it, and the Checks API is HTTPS.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log \
      /usr/share/doc/* /usr/share/man/* /usr/share/locale/*
COPY --from=deps /opt/runtime /opt/oloproof
COPY --from=build /opt/pkg /opt/oloproof/lib/python3.11/site-packages
COPY --from=build /opt/pkg-bin /opt/oloproof/bin
COPY --from=build /action /action
# PYTHONDONTWRITEBYTECODE: the system under test runs in the workspace; a root-owned
# __pycache__ left there would break later non-root steps.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    VIRTUAL_ENV=/opt/oloproof \
    PATH=/opt/oloproof/bin:$PATH
RUN /opt/oloproof/bin/python -c "import oloproof.action.main, numpy, scipy.stats, yaml, PIL, rich, orjson, regex"
ENTRYPOINT ["/opt/oloproof/bin/python", "/action/entrypoint.py"]
