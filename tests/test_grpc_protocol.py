"""The gRPC service's protocol surface: stubs in sync with the .proto, reflection (a client that knows nothing but
the server's address can call the service, as grpcurl / grpcui do), the standard health service."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from grpc_support import NoExtractor, start, stop
from loregraph.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
GRPC_DIR = ROOT / "src" / "loregraph" / "api" / "grpc"


def test_checked_in_stubs_match_the_proto(tmp_path):
    """Regenerate into a scratch directory; the checked-in files must be byte-identical."""
    target = tmp_path / "loregraph" / "api" / "grpc"
    target.mkdir(parents=True)
    (target / "knowledge.proto").write_bytes((GRPC_DIR / "knowledge.proto").read_bytes())
    proc = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", f"--python_out={tmp_path}",
                           f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}",
                           str(target / "knowledge.proto")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for name in ("knowledge_pb2.py", "knowledge_pb2.pyi", "knowledge_pb2_grpc.py"):
        assert (target / name).read_text() == (GRPC_DIR / name).read_text(), (
            f"{name} is stale: run scripts/gen_grpc.sh and commit the result")


def test_gen_script_names_the_proto():
    script = (ROOT / "scripts" / "gen_grpc.sh").read_text()
    assert "src/loregraph/api/grpc/knowledge.proto" in script and "grpc_tools.protoc" in script


@pytest.fixture
async def running(tmp_path, embedder):
    memory = await Memory.open(f"sqlite:///{tmp_path / 'r.db'}", embedder=embedder, extractor=NoExtractor())
    run = await start(memory)
    yield run
    await stop(run)
    await memory.close()


def _reflective_call(port: int) -> tuple[list[str], dict, dict]:
    """A client with no generated code: discover the service and message types by reflection, then call."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        services = list(db.get_services())
        pool = descriptor_pool.DescriptorPool(db)
        svc = pool.FindServiceByName("loregraph.knowledge.v1.KnowledgeService")
        results = {}
        for method_name, request in (
                ("InitializeUserGraph", {"user_id": "zoe", "name": "Zoe"}),
                ("FindEntityCandidates", {"names": ["zoe"], "user_id": "zoe"})):
            method = svc.FindMethodByName(method_name)
            req_cls = message_factory.GetMessageClass(method.input_type)
            resp_cls = message_factory.GetMessageClass(method.output_type)
            call = channel.unary_unary(f"/{svc.full_name}/{method.name}",
                                       request_serializer=req_cls.SerializeToString,
                                       response_deserializer=resp_cls.FromString)
            from google.protobuf import json_format

            results[method_name] = json_format.MessageToDict(call(req_cls(**request),
                                                                  metadata=[("x-group-id", "refl")]))
        bad = svc.FindMethodByName("UpsertGraphDelta")
        req_cls = message_factory.GetMessageClass(bad.input_type)
        call = channel.unary_unary(f"/{svc.full_name}/UpsertGraphDelta", request_serializer=req_cls.SerializeToString,
                                   response_deserializer=message_factory.GetMessageClass(bad.output_type).FromString)
        from google.protobuf import json_format

        msg = json_format.ParseDict({"entities": [{"id": "nope", "type_id": "node.person", "user_id": "zoe",
                                                   "visibility": "PRIVATE", "properties": {"name": "Z"}}]}, req_cls())
        errors = {}
        try:
            call(msg, metadata=[("x-group-id", "refl")])
        except grpc.RpcError as exc:
            errors["code"] = exc.code()
        return services, results, errors


async def test_a_reflection_only_client_can_call_the_service(running):
    import asyncio

    services, results, errors = await asyncio.to_thread(_reflective_call, running.port)
    assert "loregraph.knowledge.v1.KnowledgeService" in services and "grpc.health.v1.Health" in services
    assert results["InitializeUserGraph"]["created"] is True
    found = results["FindEntityCandidates"]["candidates"]
    assert found[0]["entityName"] == "Zoe" and found[0]["entityTypeId"] == "node.person"
    assert errors["code"] == grpc.StatusCode.INVALID_ARGUMENT


async def test_standard_health_service(running):
    stub = health_pb2_grpc.HealthStub(running.channel)
    for service in ("", "loregraph.knowledge.v1.KnowledgeService"):
        res = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert res.status == health_pb2.HealthCheckResponse.SERVING


async def test_the_readme_grpcurl_calls_work(running):
    """The JSON bodies of the README's grpcurl example, parsed as grpcurl does (proto3 JSON), succeed."""
    import json
    import re

    from google.protobuf import json_format

    from loregraph.api.grpc import knowledge_pb2 as pb

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## gRPC knowledge interface"):]
    bodies = re.findall(r"-d '(\{.*?\})' localhost:50051 loregraph\.knowledge\.v1\.KnowledgeService/(\w+)", section,
                        re.S)
    assert [m for _, m in bodies] == ["UpsertGraphDelta", "FindEntityCandidates"]
    md = [("x-group-id", "alice")]
    up = json_format.ParseDict(json.loads(bodies[0][0]), pb.UpsertGraphDeltaRequest())
    assert (await running.stub.UpsertGraphDelta(up, metadata=md)).entities_upserted == 1
    find = json_format.ParseDict(json.loads(bodies[1][0]), pb.FindEntityCandidatesRequest())
    res = await running.stub.FindEntityCandidates(find, metadata=md)
    assert res.candidates[0].entity_name == "Ada Lovelace"
    assert res.candidates[0].described_by_text.startswith("Mathematician")
