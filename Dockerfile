# The image of the oloproof GitHub Action (action.yml: runs.using docker, image Dockerfile).
#
# GitHub rebuilds it on every job from this file, so it is small and every package is pinned:
# Debian's python3 (3.11 in bookworm) in a venv at an absolute path, the runtime dependencies
# from docker/requirements.lock (exact versions, hashes checked), then oloproof itself.
# No `# syntax=` line (BuildKit would fetch its frontend from Docker Hub), no USER (the
# runner mounts the workspace owned by another uid: the action runs as root and chowns what
# it writes), no WORKDIR reliance (the runner passes --workdir /github/workspace).
FROM debian:bookworm-slim

# ca-certificates: python3 only recommends it, and the Checks API is HTTPS.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log

# PYTHONDONTWRITEBYTECODE: the system under test runs in the workspace; a root-owned
# __pycache__ left there would break later non-root steps.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    VIRTUAL_ENV=/opt/oloproof \
    PATH=/opt/oloproof/bin:$PATH

COPY docker/requirements.lock /tmp/requirements.lock
RUN python3 -m venv /opt/oloproof \
 && /opt/oloproof/bin/pip install --require-hashes --only-binary :all: -r /tmp/requirements.lock \
 && rm /tmp/requirements.lock

# The package itself, without touching the pinned set (--no-deps) and built with the pinned
# setuptools (--no-build-isolation), which is removed afterwards along with pip.
COPY . /tmp/src
RUN /opt/oloproof/bin/pip install --no-deps --no-build-isolation /tmp/src \
 && mkdir -p /action \
 && cp /tmp/src/entrypoint.py /action/entrypoint.py \
 && /opt/oloproof/bin/pip uninstall --yes setuptools pip \
 && rm -rf /tmp/src \
 && /opt/oloproof/bin/python -c "import oloproof.action, numpy, scipy, yaml, PIL, rich, orjson, regex"

ENTRYPOINT ["/opt/oloproof/bin/python", "/action/entrypoint.py"]
