"""The one place gRPC maps loregraph's errors (``loregraph.errors``) to status codes.

Bad input is ``INVALID_ARGUMENT`` with a ``google.rpc.BadRequest`` detail (one field violation per broken rule,
``field`` = ``record.field`` such as ``entities[0].type_id``); nothing a client sends gives ``UNKNOWN`` or
``INTERNAL``.
"""

from __future__ import annotations

import logging
import re

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from loregraph.errors import (
    ConflictError,
    InvalidInputError,
    LoregraphError,
    NotFoundError,
    SchemaViolationError,
    StoreBusyError,
    StoreError,
    lock_timeout_error,
)

log = logging.getLogger("loregraph.api")
DETAILS_KEY = "grpc-status-details-bin"


def bad_request(violations: list[tuple[str, str]]) -> error_details_pb2.BadRequest:
    return error_details_pb2.BadRequest(field_violations=[
        error_details_pb2.BadRequest.FieldViolation(field=f, description=d) for f, d in violations])


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str, list[tuple[str, str]] | None]:
    """Status code, message and (for bad input) field violations of an error. A write that timed out on a lock
    is ``UNAVAILABLE`` (retry the same call, gRPC's status-code guide), whether the store translated it or not."""
    if lock_timeout_error(exc) is not None:
        return grpc.StatusCode.UNAVAILABLE, StoreBusyError.PUBLIC_MESSAGE, None
    if isinstance(exc, SchemaViolationError):
        fields = [(f"{v.record}.{v.field}", f"{v.message}" + (f" (id {v.record_id})" if v.record_id else ""))
                  for v in exc.violations]
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc), fields
    if isinstance(exc, InvalidInputError):
        m = re.match(r"^([\w\[\]./ -]+?): (.+)$", str(exc), re.S)
        fields = [(m.group(1), m.group(2))] if m else [("request", str(exc))]
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc), fields
    if isinstance(exc, NotFoundError):
        return grpc.StatusCode.NOT_FOUND, str(exc), None
    if isinstance(exc, ConflictError):
        return grpc.StatusCode.ALREADY_EXISTS, str(exc), None
    if isinstance(exc, StoreError):
        return grpc.StatusCode.UNAVAILABLE, "the store is unavailable", None
    if isinstance(exc, LoregraphError):
        return grpc.StatusCode.FAILED_PRECONDITION, str(exc), None
    return grpc.StatusCode.INTERNAL, "internal error", None


async def abort_with(context: grpc.aio.ServicerContext, exc: BaseException, method: str) -> None:
    """Abort the call with the status ``exc`` maps to (a BadRequest detail for bad input)."""
    code, message, fields = status_of(exc)
    if code == grpc.StatusCode.INTERNAL:
        log.error("grpc %s failed: %s", method, type(exc).__name__, exc_info=exc)
    elif code == grpc.StatusCode.UNAVAILABLE and lock_timeout_error(exc) is not None:
        log.warning("grpc %s: a lock wait timed out (%s)", method, type(exc).__name__)
    elif code == grpc.StatusCode.UNAVAILABLE:
        log.error("grpc %s: store error %s", method, type(exc).__name__)
    else:
        log.info("grpc %s: %s (%d violation(s))", method, code.name, len(fields or ()))
    trailing: tuple[tuple[str, bytes], ...] = ()
    if fields is not None:
        detail = any_pb2.Any()
        detail.Pack(bad_request(fields))
        st = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=message, details=[detail])
        trailing = ((DETAILS_KEY, st.SerializeToString()),)
    await context.abort(code, message[:2000], trailing_metadata=trailing)


def violations_of(error: grpc.aio.AioRpcError | grpc.RpcError) -> list[tuple[str, str]]:
    """The BadRequest field violations a failed call carries (client side; tests and tools)."""
    md = error.trailing_metadata() or ()
    for key, value in md:
        if key == DETAILS_KEY:
            st = status_pb2.Status.FromString(value)
            for d in st.details:
                br = error_details_pb2.BadRequest()
                if d.Unpack(br):
                    return [(fv.field, fv.description) for fv in br.field_violations]
    return []


__all__ = ["DETAILS_KEY", "abort_with", "bad_request", "status_of", "violations_of"]
