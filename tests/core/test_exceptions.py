"""Error classes and the short item repr their messages use."""

from __future__ import annotations

from reactive_aio import InvalidRequestError, NonPositiveRequestError
from reactive_aio._core import request_error, short_repr, stream_error


def test_request_error_names_the_value_and_its_type() -> None:
    assert isinstance(request_error(0), NonPositiveRequestError)
    assert "request(-3)" in str(request_error(-3))
    assert "float 1.5" in str(request_error(1.5))
    assert "bool True" in str(request_error(True))
    assert "str '3'" in str(request_error("3"))
    assert isinstance(request_error(1.5), InvalidRequestError)
    assert isinstance(request_error(0), InvalidRequestError)
    assert request_error("3").n == "3"


def test_short_repr_keeps_small_values_and_cuts_large_ones() -> None:
    assert short_repr(7) == "int 7"
    assert short_repr("abc") == "str 'abc'"
    assert len(short_repr(b"x" * 10_000)) < 100
    assert len(short_repr(list(range(10_000)))) < 100


def test_stream_error_chains_an_iteration_end_into_a_runtime_error() -> None:
    for end in (StopIteration("rows"), StopAsyncIteration()):
        error = stream_error(end)
        assert type(error) is RuntimeError
        assert error.__cause__ is end
        assert stream_error(error) is error
    other = KeyError("k")
    assert stream_error(other) is other
