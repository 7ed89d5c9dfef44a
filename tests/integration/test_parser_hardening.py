"""Parser gaps an adversarial run found: encrypted PDFs, raw HTML in Markdown, giant text."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest

from folio.adapters.parsers import parse_book
from folio.domain.errors import IngestError

WORDS = "The lighthouse keeper watched the harbour every night until the storm came. "


SHARED_PDF = Path(__file__).resolve().parents[3] / "shared/data/books/formats/frankenstein.pdf"


def _pdf(path: Path, *, user_password: str, owner_password: str) -> Path:
    """Pages of the shared Frankenstein PDF (real text), encrypted with AES-256."""
    if not SHARED_PDF.is_file():
        pytest.skip(f"needs {SHARED_PDF} (../shared/data)")
    writer = pypdf.PdfWriter()
    for page in pypdf.PdfReader(SHARED_PDF).pages[:6]:
        writer.add_page(page)
    writer.add_metadata({"/Title": "Encrypted"})
    writer.encrypt(user_password, owner_password, algorithm="AES-256")
    with path.open("wb") as f:
        writer.write(f)
    return path


def test_an_aes_pdf_with_only_an_owner_password_opens_without_one(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "owner.pdf", user_password="", owner_password="s3cret")
    assert pypdf.PdfReader(path).is_encrypted
    parsed, _ = parse_book(path)
    assert "Frankenstein" in parsed.text and len(parsed.pages) == 6


def test_a_pdf_that_needs_a_password_to_open_says_so(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "locked.pdf", user_password="open-me", owner_password="s3cret")
    with pytest.raises(IngestError) as caught:
        parse_book(path)
    assert "encrypted with a password" in caught.value.message
    assert "cryptography" not in caught.value.message


def test_markdown_raw_script_and_style_never_become_book_text(tmp_path: Path) -> None:
    path = tmp_path / "book.md"
    path.write_text(
        "# Chapter 1\n\n"
        + WORDS * 20
        + "\n\n<script>\nalert('stolen cookies');\n</script>\n\n"
        + "<style>\nbody { color: red }\n</style>\n\n"
        + "<div>A raw block the reader should see.</div>\n\n"
        + WORDS * 20
    )
    parsed, _ = parse_book(path)
    assert "alert" not in parsed.text and "color: red" not in parsed.text
    assert "A raw block the reader should see." in parsed.text


def test_an_html_book_made_of_one_giant_pre_block_keeps_all_its_text(tmp_path: Path) -> None:
    body = WORDS * 170_000  # about 12.8 MB of text in a single text node
    path = tmp_path / "giant.html"
    path.write_text(f"<html><head><title>Giant</title></head><body><pre>{body}</pre></body></html>")
    parsed, _ = parse_book(path)
    assert len(parsed.text) > 0.99 * len(body.strip())
    assert parsed.text.rstrip().endswith("storm came.")
