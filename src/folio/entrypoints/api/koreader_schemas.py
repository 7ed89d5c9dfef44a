"""The bodies of the KOReader routes (``routes/koreader.py``): what the plugin sends, in KOReader's
own fields, and each answer, field for field (``/openapi.json`` and the fuzz tests check them).

The plugin (``clients/koreader/folio.koplugin``) is written against these names: fields may be
added, never renamed or removed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from folio.domain.sync import MAX_PROGRESS_CHARS

_QUESTION_CEILING = 200_000  # the schema's; the setting max_message_chars is the bound applied


# --- bodies ------------------------------------------------------------------------------------
class PlaceIn(BaseModel):
    """Where the reader is, in KOReader's own fields."""

    model_config = ConfigDict(extra="ignore")
    document: str = Field(
        description="KOReader's id of the file: its partial MD5 (or the MD5 of its file name)",
        examples=["0123456789abcdef0123456789abcdef"],
    )
    progress: str = Field(
        default="",
        max_length=MAX_PROGRESS_CHARS,
        description="An xpointer (EPUB and other reflowed books) or a PDF's page number",
    )
    percentage: float | None = Field(
        default=None, ge=0, le=1, description="How far through the book (0-1)"
    )

    @field_validator("percentage", mode="before")
    @classmethod
    def _not_a_flag(cls, value: Any) -> Any:
        if isinstance(value, bool):  # as progress sync reads it: a number, or a numeric string
            raise ValueError("percentage is a number from 0 to 1")
        return value

    @field_validator("document")
    @classmethod
    def _digest(cls, value: str) -> str:
        text = value.strip()
        if len(text) != 32 or any(c not in "0123456789abcdefABCDEF" for c in text):
            raise ValueError("KOReader's document id is 32 hexadecimal characters (an MD5)")
        return text.lower()


class AskIn(PlaceIn):
    question: str = Field(max_length=_QUESTION_CEILING)
    conversation_id: str | None = Field(
        default=None, max_length=200, description="A conversation of this book (id or id prefix)"
    )
    new_conversation: bool = False


class BookRef(BaseModel):
    id: str
    title: str
    author: str | None


class PositionOut(BaseModel):
    """The place asked from, as folio placed it (this request's bound)."""

    chapter: str | None = Field(description="The chapter of the place, as the book titles it")
    percentage: float = Field(description="How far through the book's text (0-1)")
    page: int | None = Field(description="The last page read (folio's page; a PDF's printed one)")
    page_label: str | None
    char_offset: int
    description: str


class CitationOut(BaseModel):
    n: int = Field(description="The number of its [n] marker")
    chapter: str | None
    page: int | None
    page_label: str | None
    quote: str
    xpointer: str | None = Field(description="Where the passage starts in the EPUB (GotoXPointer)")
    pdf_page: int | None = Field(description="The PDF's page (1-based) where the passage starts")
    char_start: int
    char_end: int
    volume: str | None = Field(description="An earlier volume of the series it comes from")


class AskOut(BaseModel):
    answer: str = Field(description="Markdown; citations as [1], [2] markers")
    conversation_id: str
    turn_number: int
    book: BookRef
    position: PositionOut
    citations: list[CitationOut]


class StoryOut(BaseModel):
    text: str = Field(description="The story so far, Markdown, with [n] markers")
    citations: list[CitationOut]
    book: BookRef
    position: PositionOut


class Introduced(BaseModel):
    chapter: str | None
    page: int | None
    page_label: str | None
    quote: str
    xpointer: str | None
    pdf_page: int | None
    char_start: int
    char_end: int
    volume: str | None


class PersonOut(BaseModel):
    name: str
    aliases: list[str]
    mentions: int
    introduced: Introduced


class PeopleOut(BaseModel):
    people: list[PersonOut]
    book: BookRef
    position: PositionOut
    note: str | None


def request_body(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}
