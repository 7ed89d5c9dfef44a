"""Settings: file, then environment, then overrides; every value validated with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.config import load_settings
from folio.domain.errors import ConfigError


def test_the_environment_wins_over_the_config_file_and_overrides_win_over_both(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.toml").write_text('history_messages = 12\nsearch_k = 7\nmodel = "m-file"\n')
    env = {"FOLIO_HOME": str(tmp_path), "FOLIO_SEARCH_K": "9"}

    settings = load_settings(env=env, model="m-flag")

    assert (settings.history_messages, settings.search_k, settings.model) == (12, 9, "m-flag")
    assert settings.config_file == tmp_path / "config.toml"
    assert settings.max_book_bytes == 100 * 1024 * 1024


@pytest.mark.parametrize(
    ("var", "value", "words"),
    [
        ("FOLIO_HISTORY_MESSAGES", "inf", "valid integer"),
        ("FOLIO_HISTORY_MESSAGES", "100000", "less than or equal to 1000"),
        ("FOLIO_MAX_TOOL_ROUNDS", "1e400", "valid integer"),
        ("FOLIO_MAX_TOOL_ROUNDS", "0", "greater than or equal to 1"),
        ("FOLIO_LLM_TIMEOUT", "inf", "less than or equal to 3600"),
        ("FOLIO_LLM_TIMEOUT", "-1", "greater than 0"),
        ("FOLIO_SEARCH_K", "51", "less than or equal to 50"),
        ("FOLIO_CONTEXT_TOKENS", "10", "greater than or equal to 500"),
        ("FOLIO_MAX_MESSAGE_CHARS", "9e99", "valid integer"),
        ("FOLIO_MAX_BOOK_MB", "nan", "less than or equal to 4096"),
        ("FOLIO_MAX_UNPACKED_MB", "inf", "less than or equal to 16384"),
        ("FOLIO_PROVIDER", "gpt", "'anthropic', 'openai'"),
        ("FOLIO_GUARDRAIL", "maybe", "'none', 'retrieval' or 'llm'"),
    ],
)
def test_an_out_of_range_value_names_the_setting_its_variable_the_rule_and_the_value(
    tmp_path: Path, var: str, value: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(env={"FOLIO_HOME": str(tmp_path), var: value})
    message = caught.value.message
    assert var in message and words in message and repr(value) in message


def test_an_unknown_or_unreadable_config_file_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match=r"Unknown setting.*colour"):
        load_settings(env={"FOLIO_HOME": str(tmp_path)})
    config.write_text("history_messages = [\n")
    with pytest.raises(ConfigError, match="Cannot read config file"):
        load_settings(env={"FOLIO_HOME": str(tmp_path)})
    config.write_text("history_messages = -3\n")
    with pytest.raises(ConfigError, match="history_messages"):
        load_settings(env={"FOLIO_HOME": str(tmp_path)})


def test_a_database_url_selects_postgresql_from_the_file_or_the_environment(tmp_path: Path) -> None:
    home = {"FOLIO_HOME": str(tmp_path)}
    assert load_settings(env=home).database_url is None  # SQLite under the home by default
    (tmp_path / "config.toml").write_text('database_url = "postgresql://file@db/folio"\n')
    assert load_settings(env=home).database_url == "postgresql://file@db/folio"
    url = "postgresql://reader:s3cret@db.example:5432/folio"
    settings = load_settings(env={**home, "FOLIO_DATABASE_URL": url})
    assert settings.database_url == url and settings.uses_postgres
    shown = settings.masked()
    assert "s3cret" not in str(shown)
    assert shown["database"] == "postgresql://reader:***@db.example:5432/folio"


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"FOLIO_DATABASE_URL": "mysql://u:pw@h/db"}, "must be a postgresql url"),
        (
            {"FOLIO_DATABASE_URL": "postgresql://h/db", "FOLIO_CONVERSATION_STORE": "json"},
            "conversation_store 'json' keeps conversations in files",
        ),
    ],
)
def test_a_database_url_that_cannot_work_is_refused_without_showing_its_password(
    tmp_path: Path, env: dict[str, str], words: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(env={"FOLIO_HOME": str(tmp_path), **env})
    assert words in str(refused.value).lower()
    assert ":pw@" not in str(refused.value)


def test_each_value_says_where_it_came_from(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('search_k = 7\nmodel = "m-file"\n')
    env = {"FOLIO_HOME": str(tmp_path), "FOLIO_MODEL": "m-env"}
    settings = load_settings(env=env, history_messages=12)
    assert settings.source_of("search_k") == "config file"
    assert settings.model == "m-env" and settings.source_of("model") == "env FOLIO_MODEL"
    assert settings.source_of("history_messages") == "override"
    assert settings.source_of("guardrail") == "default"
    assert settings.source_of("home") == "env FOLIO_HOME"
