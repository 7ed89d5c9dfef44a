"""An EPUB as KOReader's crengine builds it, for reading and writing its xpointers.

A KOReader xpointer (``/body/DocFragment[5]/body/section/p[3]/text()[2].17``) names a place in
the single DOM crengine builds from an EPUB. This module rebuilds the parts of that DOM an
xpointer names, by the rules of crengine's code (github.com/koreader/crengine, read at
05b2098f, DOM_VERSION_CURRENT 20260812):

- **Which spine items are DocFragments** (``crengine/src/epubfmt.cpp``, ``ImportEpubDocument``):
  every ``<itemref>`` whose ``idref`` names a manifest item adds one ``spineItems`` entry
  (duplicates too; an unknown idref adds none). Since DOM 20240114 (``relaxed_spine``) each
  entry becomes one ``<DocFragment>``: parsed as HTML, else wrapped as a ``SpineSvgWrapper``
  when it is an SVG file, else a dummy ``SpineItemUnsupported`` fragment (an image, a missing
  file), all "to make sure all spineItems get a DocFragment made". ``linear="no"`` items are
  DocFragments too (``setNonLinearFlag``). So ``DocFragment[N]`` is the N-th itemref that names
  a manifest item. (Books first opened by a KOReader older than DOM 20240114 counted only
  ``application/xhtml+xml`` items; their xpointers differ only where the spine holds other
  items, and are read here by the newer count.)
- **The tree**: an EPUB document is parsed by ``LVHTMLParser`` into ``ldomDocumentWriter``
  (not the HTML5 ``ldomDocumentWriterFilter``), so the XHTML's own nesting is kept (a ``<div>``
  inside a ``<p>`` stays there; lxml's HTML parser would close the ``<p>``). The document's
  ``<body>`` becomes ``DocFragment/body`` (``ldomDocumentFragmentWriter::OnTagOpen``).
- **Element steps** (``crengine/src/lvtinydom.cpp``, ``ldomXPointer::toStringV2``): the name and
  its index among the siblings of that name, written ``[1]`` only when there are several, or
  always from DOM 20260812 (``explicitFirstIndex``); boxing elements crengine inserts
  (``autoBoxing``, ``inlineBox``, ``floatBox``...) are transparent (``getElementIndex``).
- **Text nodes**: ``text()[n]`` is the index among the element's text nodes, as crengine keeps
  them. A text node is a run of text between two tags or comments (``LVXMLParser::ReadText``),
  cut after a space once it reaches ``TEXT_SPLIT_SIZE`` (8192) characters (counted
  here after entities are decoded: exact for a run without entities). Whitespace-only runs
  are dropped when they are the first child of a block element (``ldomElementWriter::onText``);
  in a block holding both blocks and inline content, whitespace-only runs not between two
  inline siblings are removed (``removeStandaloneWhitespaceTextChildrenInMixedContent``,
  ``autoboxChildren``); in an inline element holding blocks, whitespace-only runs beside a
  block are removed (``initNodeRendMethod``, the ``EmbeddedBlock`` wrapping). Elsewhere (between
  two inline elements: ``<i>a</i> <b>b</b>``) they stay and count. Text in elements whose
  ``allow_text`` is false (``table``, ``tr``, ``svg``... in ``fb2def.h``) makes no node.
- **Offsets in a text node** count the node's characters after ``PreProcessXmlString`` (lvxml.cpp):
  entities decoded, ``\\r \\n \\t`` made spaces and each run of spaces one space, outside
  ``white-space: pre`` elements. So ``.17`` is the 18th character of that collapsed text.

Block or inline is taken from crengine's element table (``fb2def.h``: ``XS_TAG1T``/``XS_TAG1``
are blocks, unknown elements inline); a book's own CSS changing ``display`` is not followed.

Invariant: the non-blank characters counted before each element and text node are the ones
folio's text holds (``html_text.extract_text``'s text, in document order), so an anchor is a
place in folio's text whatever the tree's shape.
"""

from __future__ import annotations

import html.entities
import re
from dataclasses import dataclass, field

from lxml import etree

from folio.adapters.parsers.archive import BoundedArchive
from folio.adapters.parsers.epub import NS, SEPARATOR, nav_path, open_package
from folio.adapters.parsers.html_text import body_of, extract_text, parse_html_document
from folio.adapters.parsers.structure import strip_illustrations
from folio.domain.sync import Fragment
from folio.domain.xpointers import PRE_ELEMENTS

TEXT_SPLIT_SIZE = 8192
# folio's HTML reader skips the text of these (html_text._SKIP): it is not counted either
FOLIO_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "math"}
    | {"iframe", "object", "button", "select"}
)
# fb2def.h: XS_TAG1 / XS_TAG1T and the XS_TAG1D elements with a block-like display
_BLOCK = frozenset(
    {"html", "head", "body", "docfragment", "hr", "form", "pre", "blockquote", "div", "p"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "output", "section", "ol", "ul", "li", "dl", "dt"}
    | {"dd", "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td"}
    | {"address", "article", "aside", "canvas", "fieldset", "figcaption", "figure", "footer"}
    | {"header", "hgroup", "legend", "main", "nav", "noscript", "video", "center", "dir"}
    | {"menu", "multicol", "noframes", "search", "listing", "textarea", "plaintext", "xmp"}
    | {"details", "dialog", "summary", "frame", "frameset", "iframe", "noembed", "template"}
    | {"select", "button", "marquee", "applet", "optgroup", "datalist", "map", "area"}
    | {"track", "input", "keygen", "param", "audio", "source", "title"}
)
# display: none (fb2def.h XS_TAG1D ... css_d_none): neither block nor inline
_INVISIBLE = frozenset({"style", "script", "base", "basefont", "bgsound", "meta", "link"})
# allow_text false: XS_TAG1, XS_TAG1OBJ, and XS_TAG1D(..., false, ...)
_NO_TEXT = frozenset(
    {"html", "head", "docfragment", "applet", "area", "track", "input", "keygen", "param"}
    | {"audio", "source", "svg", "img", "object", "embed", "image", "base", "basefont"}
    | {"bgsound", "meta", "link", "table", "colgroup", "col", "thead", "tbody", "tfoot", "tr"}
)
_CRE_SPACE = " \t\r\n"
_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]{1,31});")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})
# libxml2's default bounds (256 levels, 10 MB text nodes): a document past them takes the HTML path
_XML = etree.XMLParser(resolve_entities=False, no_network=True)


def parse_xhtml(data: bytes) -> etree._Element | None:
    """The document as an XML tree (as crengine nests it), HTML's named entities decoded; None
    when it is not well-formed XML."""

    def numeric(m: re.Match[bytes]) -> bytes:
        name = m[1].decode("ascii")
        if name in _XML_ENTITIES or name not in html.entities.name2codepoint:
            return m[0]
        return f"&#{html.entities.name2codepoint[name]};".encode("ascii")

    try:
        return etree.fromstring(_ENTITY.sub(numeric, data), _XML)
    except (etree.XMLSyntaxError, ValueError):
        return None


def _local(el: etree._Element) -> str | None:
    return str(etree.QName(el).localname).lower() if isinstance(el.tag, str) else None


def _blank(text: str) -> bool:
    return all(c in _CRE_SPACE for c in text)


def collapsed(text: str, *, pre: bool) -> str:
    """A text node's characters as crengine keeps them (``PreProcessXmlString``)."""
    if pre:
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return re.sub(" +", " ", re.sub(r"[\r\n\t]", " ", text))


def split_long(text: str) -> list[str]:
    """A run of text as ``LVXMLParser::ReadText`` hands it over: pieces of fewer than
    ``TEXT_SPLIT_SIZE`` characters, each cut just after its last space."""
    pieces = []
    while len(text) >= TEXT_SPLIT_SIZE:
        head = text[:TEXT_SPLIT_SIZE]
        cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\r")) + 1
        cut = cut or TEXT_SPLIT_SIZE
        pieces.append(text[:cut])
        text = text[cut:]
    if text:
        pieces.append(text)
    return pieces


@dataclass(slots=True)
class _Node:
    """A child of an element in crengine's DOM: an element or a text node."""

    element: etree._Element | None = None
    name: str = ""
    text: str = ""  # a text node's source text
    counted: bool = True  # is the text folio's (not inside an element folio skips)?

    @property
    def is_text(self) -> bool:
        return self.element is None

    @property
    def inline(self) -> bool:
        return self.is_text or (self.name not in _BLOCK and self.name not in _INVISIBLE)

    @property
    def block(self) -> bool:
        return not self.is_text and self.name in _BLOCK


@dataclass(slots=True)
class DocumentAnchors:
    """crengine path -> non-blank characters of folio's text before it; ``nonblank``: the
    document's non-blank characters; ``length``: its characters as crengine keeps them."""

    anchors: dict[str, int] = field(default_factory=dict)
    nonblank: int = 0
    length: int = 0


def _children(el: etree._Element, name: str, pre: bool, counted: bool) -> list[_Node]:
    """``el``'s children as crengine keeps them: elements, and text nodes by the rules of
    ``ldomElementWriter::onText`` and ``initNodeRendMethod`` (see the module docstring)."""
    allow = name not in _NO_TEXT
    nodes: list[_Node] = []

    def text(value: str | None) -> None:
        if not value or not allow:
            return
        if not pre and name in _BLOCK and not nodes and _blank(value):
            return  # the first child of a block, only spaces
        if name in {"pre", "textarea"} and not nodes and value.startswith("\n"):
            value = value[1:]  # HTML drops a newline just after <pre> (DOM 20210904)
        nodes.extend(_Node(text=piece, counted=counted) for piece in split_long(value))

    text(el.text)
    for child in el:
        child_name = _local(child)
        if child_name is not None:
            nodes.append(_Node(element=child, name=child_name))
        text(child.tail)
    if pre:
        return nodes
    has_block = any(n.block for n in nodes)
    if name in _BLOCK and has_block and any(n.inline for n in nodes):
        return [n for i, n in enumerate(nodes) if not _standalone_space(nodes, i)]
    if name not in _BLOCK and has_block:
        return [n for i, n in enumerate(nodes) if not _space_beside_block(nodes, i)]
    return nodes


def _is_space(node: _Node) -> bool:
    return node.is_text and _blank(node.text)


def _standalone_space(nodes: list[_Node], i: int) -> bool:
    """A whitespace-only text node of mixed content not between two inline siblings."""
    if not _is_space(nodes[i]):
        return False
    j, k = i, i
    while j > 0 and _is_space(nodes[j - 1]):
        j -= 1
    while k + 1 < len(nodes) and _is_space(nodes[k + 1]):
        k += 1
    prev = nodes[j - 1] if j > 0 else None
    after = nodes[k + 1] if k + 1 < len(nodes) else None
    return not (prev is not None and after is not None and prev.inline and after.inline)


def _space_beside_block(nodes: list[_Node], i: int) -> bool:
    if not _is_space(nodes[i]):
        return False
    return (i > 0 and nodes[i - 1].block) or (i + 1 < len(nodes) and nodes[i + 1].block)


def document_anchors(body: etree._Element) -> DocumentAnchors:
    """The anchors of every element and non-blank text node under ``body`` (a document's
    ``<body>``), by crengine's path from ``/body``; a text node whose crengine text starts
    with blanks also gets a point anchor ``<path>.<n>`` (its first non-blank character is its
    ``n``-th), with the same count."""
    out = DocumentAnchors()

    def walk(el: etree._Element, path: str, name: str, pre: bool, counted: bool) -> None:
        out.anchors.setdefault(path, out.nonblank)
        counted = counted and name not in FOLIO_SKIPPED
        pre = pre or name in PRE_ELEMENTS
        nodes = _children(el, name, pre, counted)
        names = [n.name for n in nodes if not n.is_text]
        texts = sum(1 for n in nodes if n.is_text)
        seen: dict[str, int] = {}
        text_index = 0
        for node in nodes:
            if node.element is not None:
                seen[node.name] = seen.get(node.name, 0) + 1
                step = node.name + (f"[{seen[node.name]}]" if names.count(node.name) > 1 else "")
                walk(node.element, f"{path}/{step}", node.name, pre, counted)
                continue
            text_index += 1
            step = f"text()[{text_index}]" if texts > 1 else "text()"
            _text_node(out, f"{path}/{step}", node, pre)

    walk(body, "/body", "body", False, True)
    return out


def _text_node(out: DocumentAnchors, path: str, node: _Node, pre: bool) -> None:
    kept = collapsed(node.text, pre=pre)
    out.length += len(kept) if node.counted else 0
    folio = strip_illustrations(node.text) if node.counted else ""
    nonblank = sum(1 for c in folio if not c.isspace())
    if nonblank:
        out.anchors.setdefault(path, out.nonblank)
        lead = len(kept) - len(kept.lstrip())
        if lead:
            out.anchors.setdefault(f"{path}.{lead}", out.nonblank)
    out.nonblank += nonblank


def _folio_nonblank(text: str) -> int:
    return sum(1 for c in text if not c.isspace())


def spine_fragments(archive: BoundedArchive) -> list[Fragment]:
    """Every DocFragment crengine makes of the EPUB in ``archive`` (see the module docstring),
    where its text lies in folio's text (the EPUB parser's layout: documents joined by a blank
    line, the navigation document and documents without text left out) and its anchors. A
    DocFragment folio holds no text of (an image or SVG page, the navigation document, a
    missing file) is an empty range where its text would start: a place in it is read as the
    end of what came before."""
    package = open_package(archive)
    nav = nav_path(package)
    fragments: list[Fragment] = []
    offset, joined = 0, False
    idrefs = package.root.xpath("//opf:spine/opf:itemref/@idref", namespaces=NS)
    entries = [package.manifest[str(i)] for i in idrefs if str(i) in package.manifest]
    for index, (path, media_type, _) in enumerate(entries, 1):
        found = _document(archive, path) if "html" in media_type and path != nav else None
        if found is None:
            fragments.append(Fragment(index, offset, offset, {"/body": 0}, 1.0))
            continue
        text, anchors = found
        start = offset + (len(SEPARATOR) if joined else 0)
        joined, offset = True, start + len(text)
        density = anchors.nonblank / anchors.length if anchors.length else 1.0
        fragments.append(Fragment(index, start, offset, anchors.anchors, min(1.0, density)))
    return fragments


def _document(archive: BoundedArchive, path: str) -> tuple[str, DocumentAnchors] | None:
    """folio's text of one spine document and its anchors, on crengine's tree when the
    document is well-formed XML holding the same text, else on lxml's HTML tree; None when it
    is missing or holds no text."""
    try:
        data = archive.read(path)
    except KeyError:
        return None
    root = parse_html_document(data)
    try:
        text = extract_text(root).text
    except RecursionError:  # nested past Python's stack: folio's parser refuses it too
        return None
    if not text.strip():
        return None
    xml = parse_xhtml(data)
    try:
        if xml is not None:
            anchors = document_anchors(body_of(xml))
            if anchors.nonblank == _folio_nonblank(text):
                return text, anchors
        return text, document_anchors(body_of(root))
    except RecursionError:  # nested past Python's stack: the document is placed as a whole
        return text, DocumentAnchors({"/body": 0}, _folio_nonblank(text), len(text))
