"""``loregraph bench grpc``: the knowledge interface's network face against the same code called in process.

One database, one group, ``entities`` synthetic people with a root description block each (and one summarized
child block for every fourth), written in batches alternating between ``UpsertGraphDelta`` over a real loopback
channel and ``Memory.upsert_graph_delta`` in process, so both sides see the same graph sizes. Then ``queries``
``FindEntityCandidates`` (a name plus a short description) both ways on the full graph. Printed: records/s and
p50 for each side and their ratio (the cost of the gRPC face).
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import struct_pb2
from rich.console import Console

from loregraph.api.grpc import knowledge_pb2 as pb
from loregraph.api.grpc import knowledge_pb2_grpc as pb_grpc
from loregraph.api.grpc.server import start_server, to_delta
from loregraph.ingest.knowledge import derived_id
from loregraph.memory import Memory

FIRST = ["Ada", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Luca", "Mina",
         "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Vito", "Wren", "Yara", "Zane"]
LAST = ["Almeida", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanov", "Jensen", "Kowalski",
        "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Silva", "Tanaka", "Urban", "Weber", "Yilmaz"]
ROLES = ["nurse", "architect", "violinist", "chemist", "baker", "pilot", "teacher", "carpenter", "lawyer", "farmer",
         "software engineer", "journalist", "surgeon", "gardener", "photographer", "economist"]
PLACES = ["Lisbon", "Oslo", "Kyoto", "Lagos", "Quito", "Tallinn", "Porto", "Krakow", "Nairobi", "Hanoi", "Cusco"]
HOBBIES = ["sailing", "chess", "pottery", "birdwatching", "climbing", "jazz", "baking bread", "marathons", "origami"]
EDGE = {"confidence": 0.9, "status": "active", "context": "bench"}


def _struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _person(rng: random.Random, i: int) -> tuple[str, str, str]:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}"
    desc = f"{name.split()[0]} is a {rng.choice(ROLES)} from {rng.choice(PLACES)} who loves {rng.choice(HOBBIES)}."
    detail = f"Spends weekends on {rng.choice(HOBBIES)} near {rng.choice(PLACES)}."
    return name, desc, detail


def _batch(rng: random.Random, start: int, n: int, universe: str) -> tuple[pb.UpsertGraphDeltaRequest, int]:
    req = pb.UpsertGraphDeltaRequest(universes=[pb.Universe(id=universe, name="Bench", user_id="bench",
                                                            visibility=pb.SHARED)])
    records = 1
    for i in range(start, start + n):
        eid, bid, cid = (derived_id("bench", kind, str(i)) for kind in ("e", "b", "c"))
        name, desc, detail = _person(rng, i)
        req.entities.append(pb.Entity(id=eid, type_id="node.person", properties=_struct({"name": name}),
                                      universe_id=universe, user_id="bench", visibility=pb.SHARED))
        req.blocks.append(pb.Block(id=bid, type_id="node.block", properties=_struct({"text": desc}), user_id="bench",
                                   visibility=pb.SHARED))
        req.edges.append(pb.Edge(edge_type="DESCRIBED_BY", source_id=eid, target_id=bid, properties=_struct(EDGE),
                                 user_id="bench", visibility=pb.SHARED))
        records += 3
        if i % 4 == 0:
            req.blocks.append(pb.Block(id=cid, type_id="node.block", properties=_struct({"text": detail}),
                                       user_id="bench", visibility=pb.SHARED))
            req.edges.append(pb.Edge(edge_type="SUMMARIZES", source_id=bid, target_id=cid, properties=_struct(EDGE),
                                     user_id="bench", visibility=pb.SHARED))
            records += 2
    return req, records


def _p50(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


async def run_grpc_bench(*, entities: int, batch: int, queries: int, db: str | None, console: Console) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="lg-bench-grpc-"))
    url = db or f"sqlite:///{workdir / 'bench.db'}"
    memory = await Memory.open(url, extractor=_NoExtractor())
    server, port = await start_server(memory, host="127.0.0.1", port=0)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}",
                                        options=[("grpc.max_send_message_length", 64 * 1024 * 1024)])
    stub = pb_grpc.KnowledgeServiceStub(channel)
    md = [("x-group-id", "bench")]
    universe = derived_id("bench", "universe")
    rng = random.Random(7)
    spent = {"grpc": 0.0, "inproc": 0.0}
    records = {"grpc": 0, "inproc": 0}
    try:
        t_all = time.perf_counter()
        for k, start in enumerate(range(0, entities, batch)):
            req, n = _batch(rng, start, min(batch, entities - start), universe)
            side = "grpc" if k % 2 == 0 else "inproc"
            t0 = time.perf_counter()
            if side == "grpc":
                await stub.UpsertGraphDelta(req, metadata=md, timeout=600)
            else:
                await memory.upsert_graph_delta("bench", to_delta(req))
            spent[side] += time.perf_counter() - t0
            records[side] += n
            if k % 10 == 9:
                console.print(f"  {start + batch} / {entities} entities written ({time.perf_counter() - t_all:.0f} s)")
        await memory.checkpoint()
        qrng = random.Random(11)
        lat: dict[str, list[float]] = {"grpc": [], "inproc": []}
        for q in range(queries):
            i = qrng.randrange(entities)
            name, desc, _ = _person(random.Random(i), i)  # a name and a description near a real entity's
            names = [name.split()[0] + " " + name.split()[1]]
            hint = desc.split(" is ", 1)[1]
            for side in (("grpc", "inproc") if q % 2 == 0 else ("inproc", "grpc")):
                t0 = time.perf_counter()
                if side == "grpc":
                    await stub.FindEntityCandidates(pb.FindEntityCandidatesRequest(
                        names=names, short_description=hint, user_id="bench", limit=10), metadata=md, timeout=60)
                else:
                    await memory.find_entity_candidates("bench", names=names, short_description=hint,
                                                        user_id="bench", limit=10)
                lat[side].append((time.perf_counter() - t0) * 1e3)
    finally:
        await channel.close()
        await server.stop(None)
        await memory.close()
        shutil.rmtree(workdir, ignore_errors=True)
    rate = {s: records[s] / spent[s] if spent[s] else 0.0 for s in spent}
    p50 = {s: _p50(v) for s, v in lat.items()}
    console.print(f"{entities} entities with {entities + entities // 4} blocks in one group ({url.split(':')[0]}), "
                  f"batches of {batch} entities alternating gRPC / in-process, then {queries} queries each way")
    console.print(f"UpsertGraphDelta: gRPC {rate['grpc']:.0f} records/s vs in process {rate['inproc']:.0f} records/s "
                  f"(ratio {rate['grpc'] / rate['inproc']:.2f})")
    console.print(f"FindEntityCandidates p50: gRPC {p50['grpc']:.1f} ms vs in process {p50['inproc']:.1f} ms "
                  f"(ratio {p50['grpc'] / p50['inproc']:.2f})")
    print(f"grpc entities={entities} upsert_records_per_s={rate['grpc']:.0f} inproc_records_per_s="
          f"{rate['inproc']:.0f} find_p50_ms={p50['grpc']:.1f} inproc_find_p50_ms={p50['inproc']:.1f}")


class _NoExtractor:
    """The knowledge interface never extracts: no NLP model is loaded for this bench."""

    name = "none"

    def extract(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("not used by the knowledge interface")
