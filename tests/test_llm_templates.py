"""Preprocessing prompts (spec 004): template resolution project > global > built-in, missing template warns and
disables, inline text, True, prepend/append."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from loregraph.extract.prompts import (
    DEFAULT_TEMPLATE,
    ExtractionConfig,
    TemplateResolver,
    builtin_text,
    compose_instructions,
    preprocessing_label,
    resolve_preprocessing,
)


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """A project working directory and a HOME, both empty, each with a templates folder ready to fill."""
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".loregraph" / "templates").mkdir(parents=True)
    (home / ".loregraph" / "templates").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    return project / ".loregraph" / "templates", home / ".loregraph" / "templates"


def test_builtin_template_ships():
    text = builtin_text(DEFAULT_TEMPLATE)
    assert "stack trace" in text.lower() and "tool" in text.lower()
    res = resolve_preprocessing(DEFAULT_TEMPLATE)
    assert res is not None and res.source == f"builtin:{DEFAULT_TEMPLATE}" and res.text == text.strip()


def test_resolution_order_project_then_global_then_builtin(dirs):
    project, home = dirs
    name = "focus.md"
    assert resolve_preprocessing(name) is None  # nowhere yet
    (home / name).write_text("GLOBAL focus")
    assert resolve_preprocessing(name).source == f"global:{name}"
    (project / name).write_text("PROJECT focus")
    res = resolve_preprocessing(name)
    assert (res.text, res.source) == ("PROJECT focus", f"project:{name}")
    (project / name).unlink()
    assert resolve_preprocessing(name).text == "GLOBAL focus"
    # a project or user file shadows the built-in template of the same name
    assert resolve_preprocessing(DEFAULT_TEMPLATE).source.startswith("builtin:")
    (home / DEFAULT_TEMPLATE).write_text("my own session guidance")
    assert resolve_preprocessing(DEFAULT_TEMPLATE).source == f"global:{DEFAULT_TEMPLATE}"
    (project / DEFAULT_TEMPLATE).write_text("this project's session guidance")
    assert resolve_preprocessing(True).text == "this project's session guidance"


def test_missing_template_warns_and_disables(dirs, caplog):
    with caplog.at_level(logging.WARNING, logger="loregraph.extract.prompts"):
        assert resolve_preprocessing("does-not-exist-anywhere.md") is None
    assert any("does-not-exist-anywhere.md" in r.getMessage() and "disabled" in r.getMessage()
               for r in caplog.records)
    with caplog.at_level(logging.WARNING, logger="loregraph.extract.prompts"):
        assert resolve_preprocessing("../../etc/passwd.md") is None  # never a path
    assert any("not a plain file name" in r.getMessage() for r in caplog.records)


def test_inline_and_disabled_values():
    assert resolve_preprocessing(None) is None and resolve_preprocessing(False) is None
    assert resolve_preprocessing("  ") is None
    inline = resolve_preprocessing("Focus on error patterns and file changes.")
    assert inline.source == "inline" and inline.text == "Focus on error patterns and file changes."
    # multi-line text that happens to end in .md is still inline
    assert resolve_preprocessing("Read the notes.\nSee README.md").source == "inline"
    assert resolve_preprocessing(True).source == f"builtin:{DEFAULT_TEMPLATE}"
    assert ExtractionConfig().is_enabled() is False
    assert ExtractionConfig(preprocessing_prompt=DEFAULT_TEMPLATE).resolve_prompt().source.startswith("builtin")
    assert [preprocessing_label(v) for v in (None, False, True, "x.md", "Focus!")] == \
        ["off", "off", DEFAULT_TEMPLATE, "x.md", "inline"]


def test_prepend_and_append():
    assert compose_instructions("PRE", "CUSTOM", "prepend") == "PRE\n\nCUSTOM"
    assert compose_instructions("PRE", "CUSTOM", "append") == "CUSTOM\n\nPRE"
    assert compose_instructions(None, "CUSTOM") == "CUSTOM"
    assert compose_instructions("PRE", None, "append") == "PRE"
    assert compose_instructions(None, " ") is None


def test_explicit_resolver_directories(tmp_path):
    p, g = tmp_path / "p", tmp_path / "g"
    p.mkdir()
    g.mkdir()
    (g / "t.md").write_text("from g")
    r = TemplateResolver(project_dir=p, global_dir=g)
    assert r.find("t.md").source == "global:t.md"
    assert [lvl for lvl, _ in r.search_path()] == ["project", "global"]
    assert Path(r.search_path()[0][1]) == p
