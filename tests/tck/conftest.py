"""Load the TCK plugin (the lead registers it as a pytest11 entry point at merge)."""

from __future__ import annotations

pytest_plugins = ["reactive_aio.tck.plugin"]
