"""The services in examples/ as a user meets them, on real servers: they stream, they answer a
bad query parameter with 422/400 (never a 500), they document the SSE endpoint as
``text/event-stream`` and they let the allowed origin read their streams (CORS)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("aiohttp")

import aiohttp

from reactive_aio.adapters._sse import ServerSentEvent, SSEParser
from reactive_aio.adapters.aiohttp import sse_client

from ._support import aiohttp_server, uvicorn_server

pytestmark = pytest.mark.web

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALLOWED = "http://localhost:3000"


def example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as the file it is (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def first_events(response: aiohttp.ClientResponse, count: int) -> list[ServerSentEvent]:
    parser = SSEParser()
    events: list[ServerSentEvent] = []
    async for chunk in response.content.iter_any():
        events.extend(parser.feed(chunk))
        if len(events) >= count:
            return events[:count]
    raise AssertionError(f"the stream ended after {events}")


async def check_ndjson_count(session: aiohttp.ClientSession, url: str, bad: int) -> None:
    for value in ("abc", "-1", "1e3", "2.5", "\N{SUPERSCRIPT TWO}", str(10**9)):
        async with session.get(f"{url}/numbers.ndjson", params={"count": value}) as response:
            assert response.status == bad, (value, await response.text())
            assert "count" in await response.text()
    async with session.get(f"{url}/numbers.ndjson", params={"count": "3"}) as response:
        assert response.status == 200
        lines = (await response.text()).splitlines()
        assert [json.loads(line) for line in lines] == [
            {"n": 0, "square": 0},
            {"n": 1, "square": 1},
            {"n": 2, "square": 4},
        ]


async def check_cors(session: aiohttp.ClientSession, url: str, preflight_status: int) -> None:
    for origin, allowed in ((ALLOWED, ALLOWED), ("http://elsewhere.example", None)):
        async with session.get(
            f"{url}/numbers.ndjson", params={"count": "1"}, headers={"Origin": origin}
        ) as response:
            assert response.status == 200
            assert response.headers.get("Access-Control-Allow-Origin") == allowed
    async with session.options(
        f"{url}/ticks",
        headers={
            "Origin": ALLOWED,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "last-event-id",
        },
    ) as response:
        assert response.status == preflight_status
        assert response.headers["Access-Control-Allow-Origin"] == ALLOWED
        assert "GET" in response.headers["Access-Control-Allow-Methods"]
        assert "last-event-id" in response.headers["Access-Control-Allow-Headers"].lower()


async def test_fastapi_example_streams_validates_documents_and_allows_its_origin() -> None:
    app = example("fastapi_app").app
    async with uvicorn_server(app) as url, aiohttp.ClientSession() as session:
        await check_ndjson_count(session, url, 422)
        for params, headers in (
            ({"every": "0"}, {}),
            ({"every": "x"}, {}),
            ({}, {"Last-Event-ID": "x"}),
        ):
            async with session.get(f"{url}/ticks", params=params, headers=headers) as response:
                assert response.status == 422, (params, headers)
        async with session.get(f"{url}/ticks", params={"every": "0.01"}) as response:
            assert response.content_type == "text/event-stream"
            events = await first_events(response, 3)
        assert [(e.event, e.id, json.loads(e.data)) for e in events] == [
            ("tick", str(i), {"tick": i}) for i in range(3)
        ]
        async with session.get(
            f"{url}/ticks", params={"every": "0.01"}, headers={"Last-Event-ID": "41"}
        ) as response:
            (resumed,) = await first_events(response, 1)
        assert resumed.id == "42"
        await check_cors(session, url, 200)
        async with session.get(f"{url}/openapi.json") as response:
            documented = (await response.json())["paths"]["/ticks"]["get"]["responses"]["200"]
        assert list(documented["content"]) == ["text/event-stream"]
        async with session.get(f"{url}/") as response:
            assert response.content_type == "text/html"
            assert 'new EventSource("/ticks"' in await response.text()


async def test_aiohttp_example_streams_validates_and_allows_its_origin() -> None:
    module = example("aiohttp_app")
    async with aiohttp_server(module.make_app()) as url, aiohttp.ClientSession() as session:
        await check_ndjson_count(session, url, 400)
        events = await sse_client(f"{url}/ticks").take(2).to_list()
        assert [(e.event, e.id) for e in events] == [("tick", "0"), ("tick", "1")]
        await check_cors(session, url, 204)
