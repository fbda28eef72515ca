"""Benchmarks comparing reactive_aio with the libraries a user would pick instead.

Run everything with ``python -m benchmarks``; see ``benchmarks/README.md``.
"""
