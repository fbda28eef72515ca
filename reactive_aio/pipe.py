"""Curried operators: ``flux | pipe.map(f)`` and ``flux.pipe(pipe.map(f), pipe.filter(p))``.

Each form is derived from the `Flux` method of the same name, whose parameters it takes: the
spellings cannot drift apart and an operator costs one line (alphabetical). ``_curry`` is typed
with ``ParamSpec``, so type variables and overloads survive: ``Flux.range(0, 3) | map(str)`` is
a ``Flux[str]``. No ``__all__`` (a second list of every name): the public functions are the forms.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from ._flux import Flux

_P = ParamSpec("_P")
_T = TypeVar("_T")
_R = TypeVar("_R")


def _curry(
    method: Callable[Concatenate[Flux[_T], _P], _R],
) -> Callable[_P, Callable[[Flux[_T]], _R]]:
    """The pipe form of *method*: ``form(*args, **kwargs)(flux)`` is ``method(flux, ...)``."""

    def form(*args: _P.args, **kwargs: _P.kwargs) -> Callable[[Flux[_T]], _R]:
        return lambda flux: method(flux, *args, **kwargs)

    name, signature = method.__name__, inspect.signature(method)
    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"`Flux.{name}`: ``flux | {name}(...)`` is ``flux.{name}(...)``."
    # help() shows the method's parameters but self (mypy knows no function.__signature__)
    vars(form)["__signature__"] = signature.replace(
        parameters=list(signature.parameters.values())[1:],
        return_annotation=f"Callable[[Flux[T_co]], {signature.return_annotation}]",
    )
    return form


batch = _curry(Flux.batch)
buffer = _curry(Flux.buffer)
buffer_timeout = _curry(Flux.buffer_timeout)
buffer_until = _curry(Flux.buffer_until)
buffer_while = _curry(Flux.buffer_while)
checkpoint = _curry(Flux.checkpoint)
concat_map = _curry(Flux.concat_map)
concat_with = _curry(Flux.concat_with)
debounce = _curry(Flux.debounce)
default_if_empty = _curry(Flux.default_if_empty)
delay = _curry(Flux.delay)
delay_elements = _curry(Flux.delay_elements)
delay_subscription = _curry(Flux.delay_subscription)
delay_until = _curry(Flux.delay_until)
dematerialize = _curry(Flux.dematerialize)
distinct = _curry(Flux.distinct)
distinct_until_changed = _curry(Flux.distinct_until_changed)
do_finally = _curry(Flux.do_finally)
do_on_cancel = _curry(Flux.do_on_cancel)
do_on_complete = _curry(Flux.do_on_complete)
do_on_error = _curry(Flux.do_on_error)
do_on_next = _curry(Flux.do_on_next)
do_on_request = _curry(Flux.do_on_request)
do_on_subscribe = _curry(Flux.do_on_subscribe)
elapsed = _curry(Flux.elapsed)
element_at = _curry(Flux.element_at)
expand = _curry(Flux.expand)
expand_deep = _curry(Flux.expand_deep)
filter = _curry(Flux.filter)
filter_when = _curry(Flux.filter_when)
flat_map = _curry(Flux.flat_map)
flat_map_iterable = _curry(Flux.flat_map_iterable)
flat_map_sequential = _curry(Flux.flat_map_sequential)
group_by = _curry(Flux.group_by)
ignore_elements = _curry(Flux.ignore_elements)
index = _curry(Flux.index)
limit_rate = _curry(Flux.limit_rate)
log = _curry(Flux.log)
map = _curry(Flux.map)
map_async = _curry(Flux.map_async)
map_in_thread = _curry(Flux.map_in_thread)
map_skip_errors = _curry(Flux.map_skip_errors)
materialize = _curry(Flux.materialize)
merge_with = _curry(Flux.merge_with)
metrics = _curry(Flux.metrics)
name = _curry(Flux.name)
of_type = _curry(Flux.of_type)
on_backpressure_buffer = _curry(Flux.on_backpressure_buffer)
on_backpressure_drop = _curry(Flux.on_backpressure_drop)
on_backpressure_error = _curry(Flux.on_backpressure_error)
on_backpressure_latest = _curry(Flux.on_backpressure_latest)
on_error_map = _curry(Flux.on_error_map)
on_error_resume = _curry(Flux.on_error_resume)
on_error_return = _curry(Flux.on_error_return)
pairwise = _curry(Flux.pairwise)
publish = _curry(Flux.publish)
publish_on = _curry(Flux.publish_on)
repeat = _curry(Flux.repeat)
repeat_when = _curry(Flux.repeat_when)
replay = _curry(Flux.replay)
retry = _curry(Flux.retry)
retry_backoff = _curry(Flux.retry_backoff)
retry_when = _curry(Flux.retry_when)
sample = _curry(Flux.sample)
scan = _curry(Flux.scan)
share = _curry(Flux.share)
skip = _curry(Flux.skip)
skip_for = _curry(Flux.skip_for)
skip_last = _curry(Flux.skip_last)
skip_until = _curry(Flux.skip_until)
skip_while = _curry(Flux.skip_while)
start_with = _curry(Flux.start_with)
switch_map = _curry(Flux.switch_map)
switch_on_first = _curry(Flux.switch_on_first)
switch_on_next = _curry(Flux.switch_on_next)
tag = _curry(Flux.tag)
take = _curry(Flux.take)
take_for = _curry(Flux.take_for)
take_last = _curry(Flux.take_last)
take_until = _curry(Flux.take_until)
take_while = _curry(Flux.take_while)
then = _curry(Flux.then)
throttle_first = _curry(Flux.throttle_first)
throttle_last = _curry(Flux.throttle_last)
timeout = _curry(Flux.timeout)
timestamp = _curry(Flux.timestamp)
window = _curry(Flux.window)
window_timeout = _curry(Flux.window_timeout)
window_until = _curry(Flux.window_until)
window_until_changed = _curry(Flux.window_until_changed)
window_while = _curry(Flux.window_while)
with_latest_from = _curry(Flux.with_latest_from)
zip_with = _curry(Flux.zip_with)
