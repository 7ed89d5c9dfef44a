"""Readable text from an (X)HTML document, with where its headings and element ids fall.

Used by the HTML and EPUB parsers. Scripts, styles and other non-content elements are dropped;
each block element becomes its own paragraph (paragraphs are separated by a blank line); whitespace
inside a paragraph collapses to single spaces except in ``<pre>``; ``<br>`` is a line break.

Invariant: every offset in ``HtmlText`` indexes ``HtmlText.text``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree
from lxml import html as lxml_html

from folio.adapters.parsers.structure import collapse_spaces, strip_illustrations

_SKIP = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "math"}
    | {"iframe", "object", "button", "select"}
)
_BLOCK = frozenset(
    {"p", "div", "section", "article", "aside", "header", "footer", "nav", "main", "blockquote"}
    | {"pre", "ul", "ol", "li", "dl", "dt", "dd", "table", "tr", "caption", "figure", "figcaption"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "hr", "address", "body", "html", "center"}
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
PARAGRAPH_SEP = "\n\n"


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    title: str
    char_start: int
    classes: tuple[str, ...] = ()


@dataclass(slots=True)
class HtmlText:
    text: str = ""
    headings: list[Heading] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)  # element id -> offset of its first text


class _Builder:
    def __init__(self) -> None:
        self.paragraphs: list[str] = []
        self.length = 0  # length of the text built so far, separators included
        self.buffer: list[str] = []
        self.pending_ids: list[str] = []
        self.result = HtmlText()

    def _next_offset(self) -> int:
        return self.length + (len(PARAGRAPH_SEP) if self.paragraphs else 0)

    def flush(self, *, pre: bool = False) -> str | None:
        raw = "".join(self.buffer)
        self.buffer = []
        lines = [collapse_spaces(line) for line in raw.split("\n")] if not pre else raw.split("\n")
        para = "\n".join(line for line in lines if line.strip()) if not pre else raw.strip("\n")
        if not para.strip():
            return None
        start = self._next_offset()
        for element_id in self.pending_ids:
            self.result.ids.setdefault(element_id, start)
        self.pending_ids = []
        self.paragraphs.append(para)
        self.length = start + len(para)
        return para

    def walk(self, el: etree._Element, *, pre: bool = False) -> None:
        tag = _local_name(el)
        if tag is None or tag in _SKIP:
            self._text(el.tail, pre)
            return
        element_id = el.get("id")
        if element_id:
            self.pending_ids.append(element_id)
        is_block = tag in _BLOCK
        if is_block:
            self.flush(pre=pre)
        start = self._next_offset()
        if tag == "br":
            self.buffer.append("\n")
        self._text(el.text, pre or tag == "pre")
        for child in el:
            self.walk(child, pre=pre or tag == "pre")
        if is_block:
            para = self.flush(pre=pre or tag == "pre")
            if para is not None and tag in _HEADINGS:
                classes = tuple((el.get("class") or "").split())
                self.result.headings.append(Heading(_HEADINGS[tag], para, start, classes))
        self._text(el.tail, pre)

    def _text(self, text: str | None, pre: bool) -> None:
        text = strip_illustrations(text) if text else text
        if text:
            self.buffer.append(text if pre else text.replace("\n", " "))

    def finish(self) -> HtmlText:
        self.flush()
        self.result.text = PARAGRAPH_SEP.join(self.paragraphs)
        return self.result


def _local_name(el: etree._Element) -> str | None:
    if not isinstance(el.tag, str):  # comments, processing instructions
        return None
    return str(etree.QName(el).localname).lower()


def parse_html_document(data: bytes, *, encoding: str | None = None) -> etree._Element:
    """The root element; raises ``etree.ParserError``/``ValueError`` on unreadable input.

    ``encoding`` overrides whatever the document declares (for bytes we re-encoded ourselves)."""
    # huge_tree: without it libxml2 silently truncates a text node past 10 MB (one giant <pre>).
    parser = lxml_html.HTMLParser(encoding=encoding, huge_tree=True)
    return lxml_html.document_fromstring(data, parser=parser)


def body_of(root: etree._Element) -> etree._Element:
    for el in root.iter():
        if _local_name(el) == "body":
            return el
    return root


def extract_text(root: etree._Element) -> HtmlText:
    """The readable text of the document's body with its headings and element ids."""
    builder = _Builder()
    builder.walk(body_of(root))
    return builder.finish()


def find_meta(root: etree._Element, name: str) -> str | None:
    for el in root.iter():
        if _local_name(el) == "meta" and (el.get("name") or "").lower() == name:
            content = str(el.get("content") or "").strip()
            if content:
                return content
    return None


def find_title(root: etree._Element) -> str | None:
    for el in root.iter():
        if _local_name(el) == "title":
            text = collapse_spaces(
                el.text_content() if hasattr(el, "text_content") else el.text or ""
            )
            return text or None
    return None
