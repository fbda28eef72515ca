"""The bridge on the standalone cluster (the main job there: tests/app/pipeline/test_run.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reactive_aio.spark import StandaloneCluster

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_bridge_and_a_task_retry_on_the_standalone_cluster(
    standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    # One SparkContext per process: the driver on the cluster is a child process.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.spark.cluster_job",
            standalone_cluster.master_url,
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    assert result == {
        "read": True,
        # The first attempt failed after the reader took batches of it; the retry skipped
        # those and sent the rest: every row once, in order.
        "retried": {"every_row_once": True, "rows": 3_000_000, "attempts": [0, 1]},
        "landed": {"arrow": True, "spark": True},
    }
