"""Service settings. Precedence: explicit arguments (CLI flags) > environment (``LOREGRAPH_*``) > ``.env`` >
config file (YAML, TOML or JSON; ``--config``, ``LOREGRAPH_CONFIG`` or ``./loregraph.yaml``) > defaults.

    db: sqlite:///memory.db
    host: 0.0.0.0
    port: 8000
    api_keys:
      - {name: alice-app, key: "a-long-random-secret", groups: [alice]}
      - {name: ops, key: "another-long-secret", admin: true}

In the environment, ``LOREGRAPH_API_KEYS`` holds the same list as JSON. Every problem is reported as a
``ConfigError`` whose message names the setting and where it can be set.
"""

from __future__ import annotations

import contextvars
import ipaddress
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from loregraph.errors import ConfigError
from loregraph.graph.types import validate_group_id
from loregraph.search.hybrid import DEFAULT_MIN_RELEVANCE

ENV_PREFIX = "LOREGRAPH_"
DEFAULT_CONFIG_FILE = "loregraph.yaml"
MIN_KEY_CHARS = 16
_CONFIG_DATA: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("loregraph_config_data",
                                                                                    default=None)


class ApiKey(BaseModel):
    """One API key: either scoped to a list of group ids, or admin (every group, plus admin routes)."""

    model_config = ConfigDict(extra="forbid")
    key: SecretStr
    groups: list[str] = Field(default_factory=list)
    admin: bool = False
    name: str = ""

    @field_validator("key")
    @classmethod
    def _long_enough(cls, v: SecretStr) -> SecretStr:
        if len(v.get_secret_value()) < MIN_KEY_CHARS:
            raise ValueError(f"an API key needs at least {MIN_KEY_CHARS} characters")
        return v

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: list[str]) -> list[str]:
        return [validate_group_id(g, "groups") for g in v]

    @model_validator(mode="after")
    def _scoped(self) -> ApiKey:
        if not self.admin and not self.groups:
            raise ValueError("a key needs a non-empty 'groups' list or 'admin: true'")
        return self


class _ConfigFileSource(PydanticBaseSettingsSource):
    """Values read from the config file (already parsed by ``load_settings``)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return (_CONFIG_DATA.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_CONFIG_DATA.get() or {})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", env_file_encoding="utf-8",
                                      extra="ignore")

    db: str = Field("sqlite:///memory.db", description="Database URL (sqlite:///path.db) or a file path")
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    api_keys: list[ApiKey] = Field(default_factory=list)
    max_request_bytes: int = Field(1_048_576, ge=1024, description="Largest request body accepted (413 above)")
    max_message_chars: int = Field(32_768, ge=1, description="Longest message content accepted (422 above)")
    max_messages_per_request: int = Field(1000, ge=1)
    request_read_timeout_s: float = Field(30.0, gt=0, description="A request body that stalls this long gets 408")
    max_connections: int = Field(512, ge=1, description="Concurrent connections served (503 above)")
    allowed_hosts: list[str] = Field(default_factory=list, description="Host names served (default: loopback "
                                     "names without API keys, any with keys)")
    allowed_origins: list[str] = Field(default_factory=list, description="Browser origins (scheme://host:port) "
                                       "allowed to send state-changing requests besides the server's own")
    job_max_attempts: int = Field(3, ge=1, description="A job interrupted this many times is marked failed")
    shutdown_timeout_s: float = Field(30.0, ge=0, description="How long shutdown waits for the running job")
    worker: bool = Field(True, description="Run the job worker in this process (false: accept jobs only; "
                                           "with PostgreSQL, separate worker processes run them)")
    extractor: str | None = Field(None, description="'module:callable' returning an Extractor (default: local)")
    schema_file: str | None = Field(None, description="Ontology file replacing the bundled schema")
    grpc_port: int | None = Field(None, ge=0, le=65535, description="Also serve the gRPC knowledge interface on "
                                                                     "this port (serve); the port of `loregraph grpc`")
    qdrant_path: str | None = Field(None, description="Project blocks into Qdrant in local mode at this directory")
    qdrant_url: str | None = Field(None, description="Project blocks into the Qdrant server at this URL")
    min_relevance: float = Field(DEFAULT_MIN_RELEVANCE, ge=0.0, le=1.0,
                                 description="Relevance floor of search (cosine of the query to its closest fact, "
                                             "entity or message): below it a search answers 'nothing relevant'; "
                                             "0 turns it off")
    log_level: str = Field("INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR|debug|info|warning|error)$")
    # documents and MCP (spec 002)
    mcp_groups: list[str] = Field(default_factory=list, description="Groups the local user of `loregraph mcp` "
                                  "(stdio) may use (empty: every group)")
    crawl_allow_networks: list[str] = Field(default_factory=list, description="Addresses/networks (CIDR) ingest_url "
                                            "may fetch although private or loopback, e.g. ['127.0.0.1/32']")
    crawl_max_pages: int = Field(50, ge=1, le=1000, description="Most pages one ingest_url may fetch")
    crawl_max_seconds: float = Field(120.0, gt=0, description="Time budget of one ingest_url crawl")
    crawl_max_page_bytes: int = Field(2_000_000, ge=1024, description="Largest page ingest_url accepts")
    chunk_chars: int = Field(1000, ge=100, le=20_000, description="Document chunk size in characters")
    chunk_overlap: int = Field(200, ge=0, le=10_000, description="Characters neighbouring chunks share")

    @model_validator(mode="after")
    def _overlap(self) -> Settings:
        if self.chunk_overlap >= self.chunk_chars:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be less than chunk_chars ({self.chunk_chars})")
        return self

    @field_validator("mcp_groups")
    @classmethod
    def _mcp_groups(cls, v: list[str]) -> list[str]:
        return [validate_group_id(g, "mcp_groups") for g in v]

    @field_validator("crawl_allow_networks")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        for n in v:
            try:
                ipaddress.ip_network(n, strict=False)
            except ValueError as exc:
                raise ValueError(f"{n!r} is not an IP address or CIDR network") from exc
        return v

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, dotenv_settings, _ConfigFileSource(settings_cls)

    @property
    def auth_enabled(self) -> bool:
        return bool(self.api_keys)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read it ({exc.strerror or exc})") from exc
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(f"config file {path}: use a .yaml, .toml or .json file")
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"config file {path}: not valid {path.suffix.lstrip('.').upper()} ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: the top level must be a mapping of setting names to values")
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}; known: "
                          f"{', '.join(Settings.model_fields)}")
    return data


def _where(field: str) -> str:
    return f"{ENV_PREFIX}{field.upper()}, .env or the config file key '{field}'"


def load_settings(*, config_file: str | Path | None = None, env_file: str | Path | None = ".env",
                  **overrides: Any) -> Settings:
    """Settings from every source, highest precedence first: ``overrides`` (None values ignored),
    environment, ``env_file``, config file, defaults. Raises ConfigError naming what to fix."""
    explicit = config_file or os.environ.get(f"{ENV_PREFIX}CONFIG")
    path = Path(explicit).expanduser() if explicit else Path(DEFAULT_CONFIG_FILE)
    if explicit and not path.exists():
        raise ConfigError(f"config file not found: {path} (given by --config or {ENV_PREFIX}CONFIG)")
    data = _read_config_file(path) if path.exists() else {}
    token = _CONFIG_DATA.set(data)
    try:
        return Settings(_env_file=env_file, **{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            loc = [str(x) for x in e["loc"]]
            field = loc[0] if loc else "?"
            where = ".".join(loc)
            problems.append(f"{where}: {e['msg']} (set by {_where(field)})")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems)) from None
    except SettingsError as exc:
        raise ConfigError(f"invalid configuration: {exc}; complex settings such as {ENV_PREFIX}API_KEYS are "
                          f"JSON in the environment") from None
    finally:
        _CONFIG_DATA.reset(token)
