"""Settings precedence (flags > environment > .env > config file > defaults) and ``loregraph serve``'s start-up
checks: anything wrong exits 1 with a message that says what to fix, never a traceback."""

from __future__ import annotations

import json
import socket

import pytest

from loregraph.config import ConfigError, load_settings
from rest_support import serve_once


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    import os

    for k in list(os.environ):
        if k.startswith("LOREGRAPH_") and k != "LOREGRAPH_CACHE_DIR":
            monkeypatch.delenv(k)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_precedence_flags_env_dotenv_config_file(clean_env, tmp_path):
    cfg = tmp_path / "conf.yaml"
    cfg.write_text("port: 1111\ndb: sqlite:///from-file.db\nmax_message_chars: 99\n")
    dotenv = tmp_path / ".env"
    dotenv.write_text("LOREGRAPH_PORT=2222\nLOREGRAPH_DB=sqlite:///from-dotenv.db\n")
    clean_env.setenv("LOREGRAPH_PORT", "3333")

    s = load_settings(config_file=cfg)
    assert (s.port, s.db, s.max_message_chars) == (3333, "sqlite:///from-dotenv.db", 99)
    assert load_settings(config_file=cfg, port=4444).port == 4444  # a flag beats everything
    clean_env.delenv("LOREGRAPH_PORT")
    assert load_settings(config_file=cfg).port == 2222
    dotenv.unlink()
    s = load_settings(config_file=cfg)
    assert (s.port, s.db) == (1111, "sqlite:///from-file.db")
    clean_env.setenv("LOREGRAPH_CONFIG", str(cfg))
    assert load_settings().port == 1111
    clean_env.delenv("LOREGRAPH_CONFIG")
    assert load_settings().port == 8000  # defaults


def test_config_file_formats_and_api_keys(clean_env, tmp_path):
    keys = [{"key": "k" * 20, "groups": ["alice"]}, {"key": "a" * 20, "admin": True, "name": "ops"}]
    (tmp_path / "c.toml").write_text('port = 7000\n[[api_keys]]\nkey = "' + "t" * 20 + '"\ngroups = ["bob"]\n')
    (tmp_path / "c.json").write_text(json.dumps({"api_keys": keys}))
    assert load_settings(config_file=tmp_path / "c.toml").api_keys[0].groups == ["bob"]
    s = load_settings(config_file=tmp_path / "c.json")
    assert s.auth_enabled and s.api_keys[1].admin and "k" * 20 not in repr(s)  # keys are secrets
    clean_env.setenv("LOREGRAPH_API_KEYS", json.dumps(keys[:1]))
    assert [k.groups for k in load_settings().api_keys] == [["alice"]]


@pytest.mark.parametrize(("setup", "needle"), [
    ({"file": "prot: 1\n"}, "unknown setting(s) prot"),
    ({"file": "port: [1\n"}, "not valid YAML"),
    ({"file": "- a\n- b\n"}, "top level must be a mapping"),
    ({"env": {"LOREGRAPH_PORT": "eighty"}}, "port: Input should be a valid integer"),
    ({"env": {"LOREGRAPH_PORT": "70000"}}, "port"),
    ({"env": {"LOREGRAPH_API_KEYS": "not json"}}, "API_KEYS are JSON"),
    ({"env": {"LOREGRAPH_API_KEYS": '[{"key": "short", "groups": ["a"]}]'}}, "api_keys.0.key"),
    ({"env": {"LOREGRAPH_API_KEYS": '[{"key": "long-enough-key-123"}]'}}, "non-empty 'groups' list or 'admin: true'"),
    ({"env": {"LOREGRAPH_API_KEYS": '[{"key": "long-enough-key-123", "groups": ["a b"]}]'}}, "groups"),
])
def test_bad_configuration_names_what_to_fix(clean_env, tmp_path, setup, needle):
    cfg = None
    if "file" in setup:
        cfg = tmp_path / "bad.yaml"
        cfg.write_text(setup["file"])
    for k, v in setup.get("env", {}).items():
        clean_env.setenv(k, v)
    with pytest.raises(ConfigError) as err:
        load_settings(config_file=cfg)
    assert needle in str(err.value)
    assert "long-enough-key-123" not in str(err.value)


def test_a_missing_explicit_config_file_is_an_error(clean_env, tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(config_file=tmp_path / "nope.yaml")


def _newer_schema_db(path):
    from loregraph.store.sqlite import SQLiteStore

    s = SQLiteStore(path)
    s.conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    s.close()
    return path


def test_serve_exits_1_with_a_clear_message(tmp_path):
    busy = socket.create_server(("127.0.0.1", 0))
    port = busy.getsockname()[1]
    cases = [
        (["--db", str(tmp_path / "no" / "such" / "dir" / "m.db"), "--port", "0"], {}, "directory does not exist"),
        (["--db", str(_newer_schema_db(tmp_path / "future.db")), "--port", "0"], {}, "newer than this loregraph"),
        (["--config", str(tmp_path / "missing.yaml")], {}, "config file not found"),
        ([], {"LOREGRAPH_PORT": "x", "LOREGRAPH_DB": str(tmp_path / "a.db")}, "error: invalid configuration"),
        (["--db", str(tmp_path / "b.db"), "--port", "0"], {"LOREGRAPH_EXTRACTOR": "no_such_module:make"},
         "extractor: cannot import module 'no_such_module'"),
        (["--db", str(tmp_path / "c.db"), "--port", str(port)], {}, "cannot listen on 127.0.0.1"),
    ]
    try:
        for args, env, needle in cases:
            res = serve_once(tmp_path, *args, env=env)
            assert res.returncode == 1, (args, res.stderr[-2000:])
            assert needle in res.stderr, (needle, res.stderr[-2000:])
            assert "Traceback" not in res.stderr
    finally:
        busy.close()
