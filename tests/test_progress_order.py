"""Progress of a document ingest reaches its receiver before the ingest returns (MCP sends each report as a
``notifications/progress`` on the request's stream: one still in flight when the tool returns is sent after the
result, or dropped with the closed request — "no progress notification arrived" under load). The receiver here is
a slow transport: each send takes a while to complete; the ingest must wait for it, not hope it finished."""

from __future__ import annotations

import asyncio

from scripted import ScriptedExtractor

DOC = "\n\n".join(f"## Part {i}\n\n" + f"Paragraph {i} of the handbook describes step {i}. " * 40 for i in range(6))


async def test_every_progress_report_is_delivered_before_ingest_text_returns(open_memory):
    m = await open_memory(extractor=ScriptedExtractor())
    await m.create_collection("g", "eng", "Engineering docs")
    delivered: list[int] = []

    async def send(done: int, total: int, message: str) -> None:
        await asyncio.sleep(0.2)  # a slow client: the send completes later
        delivered.append(done)

    res = await m.ingest_text("g", DOC, "eng", "Handbook", progress=send)
    assert res.num_chunks >= 2
    assert delivered, "no progress report was delivered before the ingest returned"
    assert delivered == list(range(1, res.num_chunks + 1))  # every report, in order, before the result
