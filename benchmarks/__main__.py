"""``python -m benchmarks``: see `benchmarks.run`."""

from __future__ import annotations

from benchmarks.run import main

raise SystemExit(main())
