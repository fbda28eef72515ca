"""Adapters between reactive_aio publishers and the async ecosystem.

Each submodule imports its optional dependency and raises `ImportError` naming the extra to
install when it is missing; this package itself imports nothing, so ``import
reactive_aio.adapters`` is always cheap:

* `reactive_aio.adapters.aiter`: async iterables ⇄ publishers (no extra).
* `reactive_aio.adapters.anyio`: anyio memory object streams ⇄ publishers (no extra).
* `reactive_aio.adapters.rx`: reactivex (RxPY 4) observables ⇄ publishers (``[interop]``).
* `reactive_aio.adapters.aiostream`: aiostream streams ⇄ publishers (``[interop]``).
* `reactive_aio.adapters.starlette`: Starlette/FastAPI responses, SSE, websockets (``[web]``).
* `reactive_aio.adapters.aiohttp`: aiohttp responses, SSE, websockets, an SSE client (``[web]``).
"""

__all__ = ()
