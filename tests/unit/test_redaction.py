"""Database passwords never reach what people see: URLs and the errors that repeat them."""

from __future__ import annotations

import pytest

from folio.domain.redaction import redact_url, scrub


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u@h/db?password=s3cret&sslmode=require",
         "postgresql://u@h/db?password=***&sslmode=require"),
        ("postgresql://u:p%40ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://h/db", "postgresql://h/db"),
        ("postgresql://u:pw@h:notaport/db", "postgresql://u:***@h:notaport/db"),
    ],
)  # fmt: skip
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_an_error_text_loses_the_password_in_every_spelling() -> None:
    url = "postgresql://u:p%40ss@h/db?password=hunter2"
    text = 'bad token "p%40ss", login p@ss refused, password hunter2'
    cleaned = scrub(text, url)
    assert "p%40ss" not in cleaned and "p@ss" not in cleaned and "hunter2" not in cleaned
