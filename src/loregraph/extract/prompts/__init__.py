"""Prompt text and preprocessing templates (spec 004).

``preprocessing_prompt`` takes:

- ``None`` or ``False``: no preprocessing;
- ``True``: the built-in ``default-session-turn.md``;
- a string ending in ``.md``: a template, looked up in the project's ``./.loregraph/templates/``, then
  the user's ``~/.loregraph/templates/``, then the templates shipped here. A template found nowhere
  logs a warning and preprocessing is off for that call;
- any other string: the instructions themselves (inline).

``preprocessing_mode`` says where the preprocessing text goes relative to other custom instructions:
``prepend`` (before, the default) or ``append`` (after).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger("loregraph.extract.prompts")

DEFAULT_TEMPLATE = "default-session-turn.md"
PROJECT_DIR = Path(".loregraph") / "templates"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.md$")
_warned: set[str] = set()


def builtin_text(name: str) -> str:
    """A file shipped in this package (prompt text or built-in template)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class ResolvedPrompt:
    text: str
    source: str
    """Where it came from: ``project:NAME``, ``global:NAME``, ``builtin:NAME`` or ``inline``."""


class TemplateResolver:
    """Finds ``NAME.md`` in project > global > built-in order. Directories are read when ``load`` is
    called (so a changed working directory or HOME is honoured)."""

    def __init__(self, project_dir: Path | str | None = None, global_dir: Path | str | None = None):
        self._project = Path(project_dir) if project_dir is not None else None
        self._global = Path(global_dir) if global_dir is not None else None

    def search_path(self) -> list[tuple[str, Path]]:
        project = self._project if self._project is not None else Path.cwd() / PROJECT_DIR
        glob = self._global if self._global is not None else Path.home() / ".loregraph" / "templates"
        return [("project", project), ("global", glob)]

    def find(self, name: str) -> ResolvedPrompt | None:
        if not _NAME.match(name):
            _warn_once(f"bad:{name}", "preprocessing template name %r is not a plain file name ending in .md; "
                                      "preprocessing disabled", name)
            return None
        for level, folder in self.search_path():
            path = folder / name
            if path.is_file():
                return ResolvedPrompt(path.read_text(encoding="utf-8").strip(), f"{level}:{name}")
        try:
            return ResolvedPrompt(builtin_text(name).strip(), f"builtin:{name}")
        except (FileNotFoundError, OSError):
            pass
        _warn_once(f"missing:{name}", "preprocessing template %r not found in %s or the built-in templates; "
                                      "preprocessing disabled", name, [str(p) for _, p in self.search_path()])
        return None

    load = find


def _warn_once(key: str, msg: str, *args: object) -> None:
    if key in _warned:
        log.debug(msg, *args)
        return
    _warned.add(key)
    log.warning(msg, *args)


class ExtractionConfig(BaseModel):
    """How an extractor builds its instructions (spec 004 ``extraction`` section)."""

    model_config = ConfigDict(extra="forbid")
    preprocessing_prompt: bool | str | None = Field(
        default=None, description="None/False: off; True: the built-in default-session-turn.md; "
                                  "'NAME.md': template (project > global > built-in); other text: inline.")
    preprocessing_mode: Literal["prepend", "append"] = "prepend"
    custom_instructions: str | None = None
    """Other instructions given to every extraction (the preprocessing text goes before or after them)."""

    def is_enabled(self) -> bool:
        return is_enabled(self.preprocessing_prompt)

    def resolve_prompt(self, resolver: TemplateResolver | None = None) -> ResolvedPrompt | None:
        return resolve_preprocessing(self.preprocessing_prompt, resolver)


def is_enabled(value: bool | str | None) -> bool:
    return value is not None and value is not False and not (isinstance(value, str) and not value.strip())


def resolve_preprocessing(value: bool | str | None, resolver: TemplateResolver | None = None) -> ResolvedPrompt | None:
    """The preprocessing text for a configured value, or None when off (or a template is missing)."""
    if not is_enabled(value):
        return None
    if value is True:
        value = DEFAULT_TEMPLATE
    assert isinstance(value, str)
    text = value.strip()
    if text.endswith(".md") and "\n" not in text:
        return (resolver or TemplateResolver()).find(text)
    return ResolvedPrompt(text, "inline")


def preprocessing_label(value: bool | str | None) -> str:
    """A short, loggable description of a configured value (never the inline text itself)."""
    if not is_enabled(value):
        return "off"
    if value is True:
        return DEFAULT_TEMPLATE
    assert isinstance(value, str)
    v = value.strip()
    return v if v.endswith(".md") and "\n" not in v else "inline"


def compose_instructions(preprocessing: str | None, custom: str | None,
                         mode: Literal["prepend", "append"] = "prepend") -> str | None:
    """Join preprocessing text and other custom instructions in the configured order."""
    parts = [p.strip() for p in ((preprocessing, custom) if mode == "prepend" else (custom, preprocessing))
             if p and p.strip()]
    return "\n\n".join(parts) or None


__all__ = [
    "DEFAULT_TEMPLATE",
    "ExtractionConfig",
    "ResolvedPrompt",
    "TemplateResolver",
    "builtin_text",
    "compose_instructions",
    "is_enabled",
    "preprocessing_label",
    "resolve_preprocessing",
]
