"""API-key rules in process (the real server's behaviour is tests/test_rest_auth.py): which principal a key
gives, what it may reach, and the 401/403 answers with their wording. Fast, and it reaches every branch of
api/rest/auth.py from the test process (the mutation run of scripts/mutation.sh needs that)."""

from __future__ import annotations

import logging

import pytest
from fastapi import HTTPException
from fastapi.security import HTTPAuthorizationCredentials
from starlette.requests import Request

from loregraph.api.rest.auth import LOCAL, KeyRing, Principal, principal
from loregraph.config import ApiKey

ALPHA = "key-for-alpha-0123456789"
BOTH = "key-for-both-0123456789"
ADMIN = "admin-key-0123456789abcdef"
UNNAMED = "unnamed-key-0123456789"


def ring() -> KeyRing:
    return KeyRing([ApiKey(key=ALPHA, groups=["alpha"], name="alpha-app"),
                    ApiKey(key=BOTH, groups=["alpha", "beta"], name="both-app"),
                    ApiKey(key=ADMIN, admin=True, name="ops"),
                    ApiKey(key=UNNAMED, groups=["gamma"])])


def forbidden(call, *args) -> HTTPException:
    with pytest.raises(HTTPException) as exc:
        call(*args)
    assert exc.value.status_code == 403
    return exc.value


def test_a_key_gives_its_name_scope_and_admin_flag():
    keys = ring()
    assert keys.enabled
    assert keys.authenticate(ALPHA) == Principal("alpha-app", False, frozenset({"alpha"}))
    assert keys.authenticate(BOTH) == Principal("both-app", False, frozenset({"alpha", "beta"}))
    assert keys.authenticate(ADMIN) == Principal("ops", True, frozenset())
    assert keys.authenticate(UNNAMED) == Principal("key#3", False, frozenset({"gamma"}))  # its place in the list
    for bad in (None, "", ALPHA + "x", ALPHA[:-1], "k" * len(ALPHA)):
        assert keys.authenticate(bad) is None, bad


def test_with_no_keys_every_caller_is_the_local_principal():
    keys = KeyRing([])
    assert not keys.enabled
    assert keys.authenticate(None) is LOCAL and keys.authenticate("anything-at-all") is LOCAL
    assert LOCAL.keyless and LOCAL.admin and LOCAL.groups == frozenset()
    assert LOCAL.can("any-group")


def test_a_scoped_key_reaches_only_its_groups(caplog):
    caplog.set_level(logging.WARNING, logger="loregraph.api")
    p = ring().authenticate(BOTH)
    assert p is not None and p.can("alpha") and p.can("beta") and not p.can("gamma") and not p.can("")
    p.require("alpha")
    p.require(["alpha", "beta"])
    p.require([])
    e = forbidden(p.require, ["alpha", "gamma"])
    assert e.detail == "this API key may not access group 'gamma'"
    # a single group id is one group, not a list of characters
    one = Principal("one", False, frozenset({"ab"}))
    one.require("ab")
    assert forbidden(one.require, "a").detail == "this API key may not access group 'a'"
    assert [r.getMessage() for r in caplog.records] == [
        "forbidden: key 'both-app' asked for a group outside its scope",
        "forbidden: key 'one' asked for a group outside its scope"]


def test_admin_routes_need_an_admin_key_and_never_the_keyless_server(caplog):
    caplog.set_level(logging.WARNING, logger="loregraph.api")
    admin = ring().authenticate(ADMIN)
    assert admin is not None and admin.can("anything")
    admin.require(["x", "y"])
    admin.require_destructive()
    admin.require_admin()
    scoped = ring().authenticate(ALPHA)
    assert scoped is not None
    scoped.require_destructive()  # a keyed server: wiping one's own group is the route's own check
    assert forbidden(scoped.require_admin).detail == "this route needs an admin API key"
    e = forbidden(LOCAL.require_destructive)
    assert e.detail == ("this route deletes data wholesale and needs an admin API key: configure api_keys "
                        "(LOREGRAPH_API_KEYS) with one marked admin: true")
    assert forbidden(LOCAL.require_admin).detail == e.detail
    LOCAL.require(["any", "group"])  # reading and writing stay open on a keyless (loopback) server
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["forbidden: key 'alpha-app' asked for an admin route",
                        "forbidden: a destructive route on a server with no API keys",
                        "forbidden: a destructive route on a server with no API keys"]


def request_to(keys: KeyRing, path: str = "/groups/alpha/facts") -> Request:
    app = type("App", (), {})()
    app.state = type("State", (), {"keyring": keys})()
    return Request({"type": "http", "method": "GET", "path": path, "headers": [], "query_string": b"",
                    "app": app})


async def test_the_dependency_takes_the_bearer_key_first_and_answers_401_without_a_known_key(caplog):
    caplog.set_level(logging.WARNING, logger="loregraph.api")
    keys = ring()
    bearer = HTTPAuthorizationCredentials(scheme="Bearer", credentials=ALPHA)
    assert (await principal(request_to(keys), bearer, ADMIN)).name == "alpha-app"
    assert (await principal(request_to(keys), None, ADMIN)).name == "ops"
    assert await principal(request_to(KeyRing([])), None, None) is LOCAL
    for given_bearer, given_header, said in ((None, None, "missing"), (None, "wrong-key-0123456789", "unknown"),
                                             (HTTPAuthorizationCredentials(scheme="Bearer", credentials="nope"),
                                              ADMIN, "unknown")):
        caplog.clear()
        with pytest.raises(HTTPException) as exc:
            await principal(request_to(keys, "/search"), given_bearer, given_header)
        assert exc.value.status_code == 401 and exc.value.detail == "missing or unknown API key"
        assert exc.value.headers == {"WWW-Authenticate": "Bearer"}
        assert [r.getMessage() for r in caplog.records] == [f"unauthorized: {said} API key on GET /search"]
