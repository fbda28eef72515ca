"""The pytest plugin of the TCK: markers and timeout options.

Registered as the ``pytest11`` entry point ``reactive_aio_tck``; load it by hand with
``-p reactive_aio.tck.plugin`` or ``pytest_plugins = ["reactive_aio.tck.plugin"]``. It is inert
unless a test class subclasses one of the verifications.
"""

from __future__ import annotations

import pytest

from ._env import set_timeout_scale

__all__ = ("pytest_addoption", "pytest_configure")

MARKERS = {
    "required": "TCK: a required rule; a failure fails",
    "optional": "TCK: an optional rule; a failure skips with the reason",
    "stochastic": "TCK: a probabilistic required rule (skip_stochastic_tests() skips it)",
    "untested": "TCK: a rule the TCK cannot check; always skipped",
    "extra": "TCK: a reactive_aio check beyond the official TCK",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reactive_aio_tck", "Reactive Streams TCK (reactive_aio.tck)")
    group.addoption(
        "--tck-timeout-scale",
        type=float,
        default=None,
        metavar="FACTOR",
        help="multiply every TCK timeout (T, N, P, G) by FACTOR; "
        "default $REACTIVE_AIO_TCK_TIMEOUT_SCALE or 1",
    )


def pytest_configure(config: pytest.Config) -> None:
    for name, help_text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {help_text}")
    scale = config.getoption("--tck-timeout-scale", None)
    if scale is not None:
        set_timeout_scale(scale)
