"""build_class_archive and spark_session: a local driver maps the archive made for it; an
archive the JVM cannot map is never put in place."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reactive_aio.spark import build_class_archive
from reactive_aio.spark._class_archive import _child

pytestmark = pytest.mark.timeout(900)

_SESSION = """
from reactive_aio.spark import spark_session
spark = spark_session()
jvm = spark.sparkContext._jvm
diagnostics = jvm.com.sun.management.HotSpotDiagnosticMXBean._java_lang_class
bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(diagnostics)
print(bean.getVMOption("SharedArchiveFile").getValue())
print(spark.range(5).count())
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def archive(cache: Path) -> Path:
    """An archive built from nothing in a cache of the module's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        built = build_class_archive()
        assert built is not None
        again = build_class_archive()  # there already: not made again
    assert again == built
    return built


def test_a_local_session_maps_the_archive_built_for_it(cache: Path, archive: Path) -> None:
    assert archive.parent == cache / "reactive_aio"
    assert [p.name for p in archive.parent.iterdir()] == [archive.name]  # no leftovers
    done = subprocess.run(
        [sys.executable, "-c", _SESSION],
        env=dict(os.environ, XDG_CACHE_HOME=str(cache)),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    # Nothing else on stdout: the JVM says nothing about its archive.
    assert done.stdout.splitlines() == [str(archive), "5"]


def test_an_archive_the_jvm_cannot_map_fails_the_check(archive: Path, tmp_path: Path) -> None:
    # A JVM that maps a truncated archive crashes: the check (a session started on the
    # candidate with -Xshare:on) must refuse it before it is put in place.
    truncated = tmp_path / "truncated.jsa"
    with archive.open("rb") as whole:
        truncated.write_bytes(whole.read(1 << 20))
    with pytest.raises(RuntimeError, match="the check step failed"):
        _child("check", truncated, 600)
    # Its crash report went beside it, not into the working directory.
    assert (tmp_path / "truncated.jsa.crash.log").exists()
    assert not list(Path.cwd().glob("hs_err_pid*.log"))
