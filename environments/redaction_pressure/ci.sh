#!/usr/bin/env bash
# The redaction-pressure sub-project's checks, exactly as its README states them, run from the
# repository root (or from a copy made by `oloproof init`): the lock is current, the environment installs from it, the tests pass.
# Installs uv with pip when it is missing (into the active virtualenv, else into a private one
# under this directory). Exits non-zero when any check fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."

# uv may fetch packages from PyPI, never a Python build: use the interpreter that is here.
export UV_PYTHON_DOWNLOADS=never

if ! command -v uv >/dev/null 2>&1; then
  if [ -n "${VIRTUAL_ENV:-}" ]; then
    python -m pip install --quiet uv
  else
    python3 -m venv "$here/.uv-tool"
    "$here/.uv-tool/bin/python" -m pip install --quiet uv
    export PATH="$here/.uv-tool/bin:$PATH"
  fi
fi

# A virtualenv active for the main package must not be mistaken for the sub-project's own.
unset VIRTUAL_ENV

if [ "$PWD/environments/redaction_pressure" -ef "$here" ]; then
  # In the repository: the seed's three commands, verbatim, from the root.
  uv lock --project environments/redaction_pressure --check
  uv sync --project environments/redaction_pressure --frozen
  uv run --project environments/redaction_pressure python -m unittest discover -s environments/redaction_pressure/tests -v
else
  # A copy made by `oloproof init --example redaction-pressure`: the same checks, from the copy.
  cd "$here"
  uv lock --project . --check
  uv sync --project . --frozen
  uv run --project . python -m unittest discover -s tests -v
fi
