# The image of the oloproof GitHub Action (action.yml: runs.using docker, image Dockerfile).
#
# GitHub rebuilds it on every job from this file, so it is small and every package is pinned:
# Debian's python3 (3.11 in bookworm), a venv at an absolute path holding the runtime
# dependencies from docker/requirements.lock (exact versions, hashes checked) and oloproof.
# No `# syntax=` line (BuildKit would fetch its frontend from Docker Hub), no USER (the
# runner mounts the workspace owned by another uid: the action runs as root and chowns what
# it writes), no reliance on WORKDIR (the runner passes --workdir /github/workspace).
#
# Stages: `build` installs and trims the pinned dependencies (docker/slim-venv.sh); `rootfs` is
# the runtime file system (python3, certificates, the venv; no docs, man pages, locales, pip,
# setuptools); `app` builds oloproof itself; the image is `rootfs` flattened into ONE layer
# (FROM scratch + COPY: what is deleted in `rootfs` is really gone, not hidden under a later
# layer) plus a small layer with oloproof, so a change to oloproof/ rebuilds only that layer.

FROM debian:bookworm-slim AS build
# binutils: `strip` for the extension modules (build stage only).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv binutils \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY docker/requirements.lock /tmp/requirements.lock
RUN python3 -m venv /opt/oloproof \
 && /opt/oloproof/bin/pip install --require-hashes --only-binary :all: -r /tmp/requirements.lock
COPY docker/slim-venv.sh /tmp/slim-venv.sh
RUN sh /tmp/slim-venv.sh /opt/oloproof/bin/python /opt/oloproof/lib/python3.11/site-packages

# git: the action reads the pull request's base commit (git show, ls-tree, cat-file; a shallow
# checkout fetches it over HTTPS). Debian's git package brings perl and ~200 MB; the action needs
# only the git binary and its HTTPS remote helper, so those and the libraries they link that the
# runtime file system lacks are copied (measured in docs/action.md).
FROM debian:bookworm-slim AS git
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /out/usr/bin /out/usr/lib/git-core /out/libs \
 && cp /usr/bin/git /out/usr/bin/git \
 && cp /usr/lib/git-core/git-remote-http /out/usr/lib/git-core/git-remote-http \
 && for lib in $(ldd /usr/lib/git-core/git-remote-http /usr/bin/git | awk '/=> \// {print $3}' | sort -u); do \
      cp -L "$lib" /out/libs/; \
    done

FROM debian:bookworm-slim AS rootfs
# ca-certificates: python3 only recommends it, and the Checks API is HTTPS.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /var/log/apt/* /var/log/dpkg.log \
      /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/*
COPY --from=build /opt/oloproof /opt/oloproof
RUN /opt/oloproof/bin/python -m pip uninstall --quiet --yes setuptools pip
COPY --from=git /out /tmp/git
# Only the libraries this file system lacks (the others are the same Debian packages' files).
RUN cp /tmp/git/usr/bin/git /usr/bin/git \
 && mkdir -p /usr/lib/git-core \
 && cp /tmp/git/usr/lib/git-core/git-remote-http /usr/lib/git-core/git-remote-http \
 && ln /usr/lib/git-core/git-remote-http /usr/lib/git-core/git-remote-https \
 && for name in git git-upload-pack git-receive-pack; do ln -s /usr/bin/git "/usr/lib/git-core/$name"; done \
 && for lib in /tmp/git/libs/*; do \
      dir="/usr/lib/$(uname -m)-linux-gnu"; name=$(basename "$lib"); \
      [ -e "$dir/$name" ] || cp "$lib" "$dir/$name"; \
    done \
 && ldconfig \
 && rm -rf /tmp/git \
 && ! ldd /usr/lib/git-core/git-remote-https | grep "not found" \
 && git --version

FROM build AS app
COPY . /tmp/src
# --no-deps: the pinned set is complete; --no-build-isolation: build with the pinned setuptools.
# Only oloproof's own files go on to the image (its package, metadata, console script).
RUN /opt/oloproof/bin/pip install --no-deps --no-build-isolation /tmp/src \
 && site=/opt/oloproof/lib/python3.11/site-packages \
 && mkdir -p /out/action "/out$site" /out/opt/oloproof/bin \
 && cp /tmp/src/entrypoint.py /out/action/entrypoint.py \
 && cp -a /opt/oloproof/bin/oloproof /out/opt/oloproof/bin/ \
 && cp -a "$site/oloproof" "$site"/oloproof-*.dist-info "/out$site/"

FROM scratch
COPY --from=rootfs / /
COPY --from=app /out /
# PYTHONDONTWRITEBYTECODE: the system under test runs in the workspace; a root-owned
# __pycache__ left there would break later non-root steps.
ENV PATH=/opt/oloproof/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    VIRTUAL_ENV=/opt/oloproof
RUN /opt/oloproof/bin/python -c "import oloproof.action.main, numpy, scipy.stats, yaml, PIL.Image, rich, orjson, regex" \
 && git --version
ENTRYPOINT ["/opt/oloproof/bin/python", "/action/entrypoint.py"]
