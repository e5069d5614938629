# The image of the oloproof GitHub Action (action.yml: runs.using docker, image Dockerfile).
#
# GitHub rebuilds it on every job from this file, so it is small and every package is pinned:
# Debian's python3 (3.11 in bookworm), a venv at an absolute path holding the runtime
# dependencies from docker/requirements.lock (exact versions, hashes checked) and oloproof.
# Two stages: pip, setuptools and the source tree stay in the build stage.
# No `# syntax=` line (BuildKit would fetch its frontend from Docker Hub), no USER (the
# runner mounts the workspace owned by another uid: the action runs as root and chowns what
# it writes), no reliance on WORKDIR (the runner passes --workdir /github/workspace).

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY docker/requirements.lock /tmp/requirements.lock
RUN python3 -m venv /opt/oloproof \
 && /opt/oloproof/bin/pip install --require-hashes --only-binary :all: -r /tmp/requirements.lock
COPY . /tmp/src
# --no-deps: the pinned set is complete; --no-build-isolation: build with the pinned setuptools.
# Then drop what only building needs, the packages' own test suites (~50 MB, never imported), and
# C headers, Cython declarations and type stubs (only compilers and type checkers read them).
# (Stripping the shared libraries would save ~17 MB more, but breaks the wheels' patchelf'd
# OpenBLAS: "ELF load command address/offset not page-aligned".) The worked examples that only
# `oloproof init` copies (6.7 MB) stay: every subcommand runs in the image (tests/install/smoke.py).
RUN /opt/oloproof/bin/pip install --no-deps --no-build-isolation /tmp/src \
 && /opt/oloproof/bin/pip uninstall --yes setuptools pip \
 && site=/opt/oloproof/lib/python3.11/site-packages \
 && find "$site/numpy" "$site/scipy" -depth -type d -name tests -exec rm -rf {} + \
 && rm -rf "$site/numpy/_core/include" \
 && find "$site" -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.h' \) -delete \
 && mkdir -p /action && cp /tmp/src/entrypoint.py /action/entrypoint.py

FROM debian:bookworm-slim
# ca-certificates: python3 only recommends it, and the Checks API is HTTPS.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log \
      /usr/share/doc/* /usr/share/man/* /usr/share/locale/*
COPY --from=build /opt/oloproof /opt/oloproof
COPY --from=build /action /action
# PYTHONDONTWRITEBYTECODE: the system under test runs in the workspace; a root-owned
# __pycache__ left there would break later non-root steps.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    VIRTUAL_ENV=/opt/oloproof \
    PATH=/opt/oloproof/bin:$PATH
RUN /opt/oloproof/bin/python -c "import oloproof.action.main, numpy, scipy.stats, yaml, PIL, rich, orjson, regex"
ENTRYPOINT ["/opt/oloproof/bin/python", "/action/entrypoint.py"]
