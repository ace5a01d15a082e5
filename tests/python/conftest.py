"""Shared fixtures of the Python module's tests: the CLI to compare against and the module.

ctest (`make test`) sets PYTHONPATH to build/python and TRAINSIM_CLI to the trainsim binary;
by hand: PYTHONPATH=build/python TRAINSIM_CLI=build/trainsim /usr/bin/python3 -m pytest tests/python
"""
import json
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get(
    "TRAINSIM_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLI = os.environ.get("TRAINSIM_CLI", os.path.join(SOURCE_DIR, "build", "trainsim"))


def run_cli(*args):
    """(exit code, stdout, stderr) of `trainsim ARGS`."""
    out = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout, out.stderr


def cli_json(*args):
    rc, out, err = run_cli(*args)
    assert rc == 0, f"trainsim {' '.join(args)}: exit {rc}: {err}"
    return json.loads(out)


def cli_error(*args):
    """The CLI's one-line message for bad input, without the 'trainsim: ' prefix."""
    rc, out, err = run_cli(*args)
    assert rc == 2, f"trainsim {' '.join(args)}: expected exit 2, got {rc}"
    line = err.strip()
    assert line.startswith("trainsim: ") and "\n" not in line, line
    return line[len("trainsim: "):]


@pytest.fixture(scope="session")
def ts():
    import trainsim
    return trainsim
