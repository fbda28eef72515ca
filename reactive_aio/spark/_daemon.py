"""PySpark's Python worker daemon, with ``pyspark.worker`` imported once before the forks.

Every Python task runs in a worker the daemon forks. PySpark's own daemon imports
``pyspark.worker`` after each fork, and workers load PySpark from ``pyspark.zip``, whose
modules Python cannot cache compiled: every fresh worker compiles ``pyspark.worker`` anew
(0.25 s of CPU). A cancelled task's worker is never reused, so a read right after a
cancelled one paid that before its first batch. ``spark_session`` runs local sessions'
workers from this daemon. Importing ``pyspark.worker`` starts no thread, so forking after
it is as safe as PySpark's own daemon.
"""

from __future__ import annotations

import pyspark.worker  # noqa: F401  (imported for every forked worker to inherit)
from pyspark.daemon import manager

if __name__ == "__main__":
    manager()
