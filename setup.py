"""The package list, discovered: every package under ``oloproof/``, ``examples/`` as ``oloproof.examples``
and ``environments/`` as ``oloproof.environments``.

Everything else about the build is declared in pyproject.toml. pyproject.toml alone cannot say
"discover these, and add that one mapped package", and a hand-kept list once shipped wheels without
``oloproof.compare``; tests/install/ builds the wheel and runs every subcommand from it.
"""

from setuptools import find_packages, setup

# oloproof.environments: environments/ (the redaction-pressure sub-project), data for `oloproof init`.
setup(packages=[*find_packages(include=["oloproof", "oloproof.*"]), "oloproof.examples", "oloproof.environments"])
