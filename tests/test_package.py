"""The library as a user gets it: a wheel and an sdist that ``twine check`` accepts, and a wheel
that installs into a clean virtual environment where the README's quickstart runs.

Building runs the repository's own build backend in an isolated environment (``python -m
build``), and the clean environment gets the wheel with its runtime dependencies only, from the
package index pip is configured with: nothing of the repository or of this test's environment
is importable there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import reactive_aio

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]


CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
"""For the clean environment: nothing on the path but its own site-packages."""


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, the wheel built from the sdist (so the sdist is complete)."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, ROOT, cwd=out)
    return out


def test_the_wheel_and_the_sdist_pass_twine_check_and_carry_the_license(dist: Path) -> None:
    wheel = dist / f"reactive_aio-{VERSION}-py3-none-any.whl"
    sdist = dist / f"reactive_aio-{VERSION}.tar.gz"
    assert sorted(dist.iterdir()) == [wheel, sdist]
    _run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist, cwd=dist)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"reactive_aio-{VERSION}.dist-info/METADATA").decode()
    assert f"reactive_aio-{VERSION}.dist-info/licenses/LICENSE" in names
    assert "reactive_aio/py.typed" in names
    assert "License-Expression: MIT" in metadata
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_the_readme_quickstart_runs_where_only_the_wheel_is_installed(
    dist: Path, tmp_path: Path
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert quickstart is not None, "the README has no python block"
    (tmp_path / "quickstart.py").write_text(quickstart[1], encoding="utf-8")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path, env=CLEAN_ENV)
    python = venv / "bin" / "python"
    wheel = dist / f"reactive_aio-{VERSION}-py3-none-any.whl"
    _run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path, env=CLEAN_ENV)
    installed = _run(python, "-m", "pip", "list", "--format=freeze", cwd=tmp_path, env=CLEAN_ENV)
    names = {line.split("==")[0].lower() for line in installed.split()}
    # anyio and attrs and what they need, nothing of the extras
    assert {"reactive_aio", "anyio", "attrs"} <= names
    assert not names & {"uvloop", "starlette", "pyspark", "nats-py", "asyncpg", "pytest"}
    where = _run(
        python,
        "-c",
        "import importlib.metadata as m, reactive_aio as r; "
        "print(r.__file__); print(r.__version__, m.version('reactive_aio'))",
        cwd=tmp_path,
        env=CLEAN_ENV,
    ).split("\n")
    assert where[0].startswith(str(venv)), where
    assert where[1] == f"{reactive_aio.__version__} {VERSION}"
    output = _run(python, "quickstart.py", cwd=tmp_path, env=CLEAN_ENV).split("\n")
    assert output[0] == "[0, 6, 12, 18]"
    assert output[1:] == ["100"] * 10 + [""]


def test_the_application_wheel_gives_the_command_beside_the_library_wheel(
    dist: Path, tmp_path: Path
) -> None:
    # The application's own dependencies (PySpark, nats-py, the plotting stack) are large and
    # load only when a command needs them: the command, its version and the demo run without.
    app_dist = tmp_path / "app-dist"
    _run(sys.executable, "-m", "build", "--wheel", "--outdir", app_dist, ROOT / "app", cwd=tmp_path)
    (app_wheel,) = app_dist.glob("reactive_aio_app-*.whl")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path, env=CLEAN_ENV)
    pip = (venv / "bin" / "python", "-m", "pip", "install", "--quiet")
    wheel = dist / f"reactive_aio-{VERSION}-py3-none-any.whl"
    _run(*pip, wheel, cwd=tmp_path, env=CLEAN_ENV)
    _run(*pip, "--no-deps", app_wheel, cwd=tmp_path, env=CLEAN_ENV)
    command = venv / "bin" / "reactive-aio"
    assert _run(command, "--version", cwd=tmp_path, env=CLEAN_ENV).strip().endswith(VERSION)
    demo = _run(command, "demo", "--count", "10", cwd=tmp_path, env=CLEAN_ENV)
    assert demo.strip() == "sum of the squares of the odd numbers below 10: 165"
