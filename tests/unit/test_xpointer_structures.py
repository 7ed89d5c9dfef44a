"""KOReader's xpointers on the EPUB structures crengine builds (``adapters/parsers/crengine_dom``).

Each expected xpointer below is written by hand by crengine's rules (github.com/koreader/crengine,
``crengine/src/epubfmt.cpp`` ``ImportEpubDocument`` for DocFragment numbering,
``crengine/src/lvtinydom.cpp`` ``ldomXPointer::toStringV2`` for the steps,
``ldomElementWriter::onText`` / ``removeStandaloneWhitespaceTextChildrenInMixedContent`` for which
text nodes exist, ``crengine/src/lvxml.cpp`` ``PreProcessXmlString`` for offsets): folio reads
each onto the paragraph it names, and folio's own xpointer of that place (``domain/xpointers``)
is the same string, in the classic form and in the form of crengine's DOM 20260812.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from folio.adapters.parsers.crengine_dom import TEXT_SPLIT_SIZE, split_long
from folio.adapters.parsers.epub import EpubParser
from folio.adapters.parsers.koreader_ids import epub_fragments
from folio.domain.sync import Fragment, parse_xpointer
from folio.domain.xpointers import fragment_at, place_in_fragment, xpointer_at

XHTML = '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
SVG_NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'

COVER = f"""{XHTML}<head><title>Cover</title></head><body>
<div><svg {SVG_NS} viewBox="0 0 10 10"><image xlink:href="plate.jpg"/></svg></div>
</body></html>"""

# (a) section wrappers and nested containers, (d) text split by inline elements, a <div> inside
# a <p> (kept there by crengine's XML-nesting writer; lxml's HTML parser would close the <p>)
CHAPTER_ONE = f"""{XHTML}<head><title>One</title></head>
<body>
  <section id="ch1">
    <h1>Chapter One</h1>
    <div class="outer">
      <article>
        <p>The lamp was lit.</p>
        <blockquote>
          <div><p>Nested quote here.</p></div>
        </blockquote>
      </article>
    </div>
    <p>Before <i>the storm</i> came the <b>wind</b> and the rain.</p>
    <p><i>Hello</i> <b>world</b> and more words.</p>
    <p>A<br/>B line after break.</p>
    <div>
      Loose text in a div <em>with emphasis</em> and tail.
      <p>Inner para.</p>
    </div>
    <p>Start of para <span>inline</span><div>Block in para.</div>End of para.</p>
  </section>
</body></html>"""

MAP_SVG = f'<?xml version="1.0"?><svg {SVG_NS} viewBox="0 0 5 5"><rect width="5"/></svg>'
INTERLUDE = f"{XHTML}<body><p>An interlude between chapters.</p></body></html>"
NOTES = f"{XHTML}<body><aside><p>A note kept aside.</p></aside></body></html>"

# (e) entities and whitespace collapsing in one text node; blanks kept in a <pre>
CHAPTER_TWO = f"""{XHTML}<body>
<p>
        Caf&eacute; society &amp; its   friends
        met at noon&nbsp;sharp, &#8220;quoted&#8221; here.
</p>
<pre>  line one
    indented   line two</pre>
</body></html>"""

MANIFEST = [
    ("cover", "cover.xhtml", "application/xhtml+xml"),
    ("plate", "plate.jpg", "image/jpeg"),
    ("one", "one.xhtml", "application/xhtml+xml"),
    ("map", "map.svg", "image/svg+xml"),
    ("gone", "gone.xhtml", "application/xhtml+xml"),
    ("interlude", "interlude.xhtml", "application/xhtml+xml"),
    ("notes", "notes.xhtml", "application/xhtml+xml"),
    ("two", "two.xhtml", "application/xhtml+xml"),
]
# ImportEpubDocument: one DocFragment per itemref naming a manifest item, in spine order
SPINE = [
    '<itemref idref="cover"/>',  # DocFragment[1]: an SVG cover page, no text
    '<itemref idref="plate"/>',  # [2]: an image in the spine (SpineItemUnsupported)
    '<itemref idref="ghost"/>',  # no manifest item: no DocFragment
    '<itemref idref="one"/>',  # [3]
    '<itemref idref="map"/>',  # [4]: an SVG file (SpineSvgWrapper)
    '<itemref idref="gone"/>',  # [5]: listed, missing from the archive (SpineItemUnsupported)
    '<itemref idref="interlude"/>',  # [6]
    '<itemref idref="interlude"/>',  # [7]: the same item again
    '<itemref idref="notes" linear="no"/>',  # [8]: non-linear, still a DocFragment
    '<itemref idref="two"/>',  # [9]
]
FILES = {
    "cover.xhtml": COVER,
    "plate.jpg": "\xff\xd8\xff\xe0 not really a jpeg",
    "one.xhtml": CHAPTER_ONE,
    "map.svg": MAP_SVG,
    "interlude.xhtml": INTERLUDE,
    "notes.xhtml": NOTES,
    "two.xhtml": CHAPTER_TWO,
}


def build_epub(path: Path, files: dict[str, str] = FILES) -> Path:
    items = "".join(f'<item id="{i}" href="{h}" media-type="{m}"/>' for i, h, m in MANIFEST)
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" '
        'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:title>Structures</dc:title><dc:identifier id="id">urn:x:structures</dc:identifier>'
        f"</metadata><manifest>{items}</manifest><spine>{''.join(SPINE)}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        z.writestr("content.opf", opf)
        for name, content in files.items():
            z.writestr(name, content)
    return path


Book = tuple[list[Fragment], str]


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Book:
    path = build_epub(tmp_path_factory.mktemp("structures") / "structures.epub")
    return epub_fragments(path), EpubParser().parse(path).text


def landing(book: Book, xpointer: str) -> int:
    """Where progress sync puts a reader whose device pushed ``xpointer`` (app/sync.py
    ``xpointer_offset``)."""
    fragments, text = book
    pointer = parse_xpointer(xpointer)
    assert pointer is not None, xpointer
    fragment = next(f for f in fragments if f.index == pointer.fragment)
    part = text[fragment.char_start : fragment.char_end]
    return fragment.char_start + place_in_fragment(fragment, pointer, part)


def nightly(classic: str) -> str:
    """The same xpointer as crengine's DOM 20260812 writes it (toStringV2, explicitFirstIndex:
    every element and text step indexed)."""
    steps = classic.split("/")
    last = steps[-1].split(".")
    steps[-1] = last[0]
    indexed = [s if not s or s.endswith("]") else f"{s}[1]" for s in steps]
    return "/".join(indexed) + (f".{last[1]}" if len(last) > 1 else "")


def folio_xpointer(book: Book, offset: int, *, explicit_first: bool = False) -> str:
    fragments, text = book
    fragment = fragment_at(fragments, offset)
    assert fragment is not None
    part = text[fragment.char_start : fragment.char_end]
    return xpointer_at(fragment, part, offset, explicit_first=explicit_first)


# (xpointer crengine writes for the page starting at a word, the word): offsets are where the
# word starts in the text node as PreProcessXmlString keeps it
PLACES = [
    # section > div (the first of two) > article > p: the only text node
    ("/body/DocFragment[3]/body/section/div[1]/article/p/text().4", "lamp was lit."),
    ("/body/DocFragment[3]/body/section/div[1]/article/blockquote/div/p/text().0", "Nested"),
    # "Before " | <i> | " came the " | <b> | " and the rain.": three text nodes
    ("/body/DocFragment[3]/body/section/p[1]/text()[2].1", "came the"),
    ("/body/DocFragment[3]/body/section/p[1]/text()[3].9", "rain."),
    ("/body/DocFragment[3]/body/section/p[1]/i/text().4", "storm"),
    # "<i>Hello</i> <b>world</b> and more": the lone space between two inlines is text()[1]
    ("/body/DocFragment[3]/body/section/p[2]/text()[2].5", "more words"),
    ("/body/DocFragment[3]/body/section/p[3]/text()[2].2", "line after"),
    # mixed content: the leading newline is one space (offset 0), the blank after <p> is gone
    ("/body/DocFragment[3]/body/section/div[2]/text()[1].1", "Loose text"),
    ("/body/DocFragment[3]/body/section/div[2]/text()[2].5", "tail."),
    ("/body/DocFragment[3]/body/section/div[2]/p/text().0", "Inner para"),
    # a <div> inside a <p> stays there: "End of para." is the p's second text node
    ("/body/DocFragment[3]/body/section/p[4]/div/text().6", "in para."),
    ("/body/DocFragment[3]/body/section/p[4]/text()[2].0", "End of para"),
    # the second copy of a spine item read twice, and a non-linear item
    ("/body/DocFragment[7]/body/p/text().3", "interlude between"),
    ("/body/DocFragment[8]/body/aside/p/text().2", "note kept"),
    # " Café society & its friends met at noon\u00a0sharp, “quoted” here. ": entities are one
    # character, each run of blanks one space
    ("/body/DocFragment[9]/body/p/text().28", "met at noon"),
    ("/body/DocFragment[9]/body/p/text().40", "sharp,"),
    ("/body/DocFragment[9]/body/p/text().48", "quoted"),
    # white-space: pre keeps every blank: "  line one\n    indented   line two"
    ("/body/DocFragment[9]/body/pre/text().15", "indented"),
    ("/body/DocFragment[9]/body/pre/text().31", "two"),
]


@pytest.mark.parametrize(("xpointer", "words"), PLACES)
def test_a_crengine_xpointer_lands_on_its_words_in_both_forms(
    book: Book, xpointer: str, words: str
) -> None:
    _, text = book
    for form in (xpointer, nightly(xpointer)):
        at = landing(book, form)
        assert text[at:].lstrip().startswith(words), (form, text[at : at + 30])


@pytest.mark.parametrize(("xpointer", "words"), PLACES)
def test_folios_xpointer_of_those_words_is_crengines(book: Book, xpointer: str, words: str) -> None:
    """folio points just inside the word (after its first character): crengine's offset + 1,
    and reading it back lands there."""
    fragments, text = book
    fragment_index = int(xpointer.split("DocFragment[")[1].split("]")[0])
    fragment = next(f for f in fragments if f.index == fragment_index)
    offset = text.index(words, fragment.char_start)
    path, crengine_offset = xpointer.rsplit(".", 1)
    expected = f"{path}.{int(crengine_offset) + 1}"
    assert folio_xpointer(book, offset) == expected
    assert folio_xpointer(book, offset, explicit_first=True) == nightly(expected)
    assert landing(book, expected) == offset + 1
    assert landing(book, nightly(expected)) == offset + 1


def test_every_spine_item_crengine_loads_is_a_docfragment(book: Book) -> None:
    fragments, text = book
    by_index = {f.index: f for f in fragments}
    assert sorted(by_index) == list(range(1, 10))  # the ghost idref makes none
    one, interlude, again = by_index[3], by_index[6], by_index[7]
    assert text[one.char_start :].startswith("Chapter One")
    for empty in (1, 2, 4, 5):  # the SVG cover, the image, the SVG file, the missing file
        assert by_index[empty].char_start == by_index[empty].char_end
    assert by_index[1].char_start == by_index[2].char_start == 0
    assert by_index[4].char_start == by_index[5].char_start == one.char_end
    assert text[interlude.char_start : interlude.char_end] == "An interlude between chapters."
    assert again.char_start > interlude.char_end
    assert text[again.char_start : again.char_end] == "An interlude between chapters."


@pytest.mark.parametrize(
    "xpointer",
    [
        "/body/DocFragment[1]/body/div/svg/image.0",  # the SVG cover page
        "/body[1]/DocFragment[2]/body[1]/pre[1]/text()[1].0",  # the image's dummy fragment
        "/body/DocFragment[4]/body/svg",  # the SVG file (its autoBoxing is not in xpointers)
        "/body/DocFragment[5]/body/pre/text().12",  # the missing file's dummy fragment
    ],
)
def test_a_page_without_text_puts_the_reader_at_the_end_of_what_came_before(
    book: Book, xpointer: str
) -> None:
    fragments, _ = book
    pointer = parse_xpointer(xpointer)
    assert pointer is not None
    before = [f for f in fragments if f.index < pointer.fragment and f.char_end > f.char_start]
    assert landing(book, xpointer) == (before[-1].char_end if before else 0)


def test_folio_points_no_citation_into_a_page_without_text(book: Book) -> None:
    fragments, _ = book
    one = next(f for f in fragments if f.index == 3)
    assert fragment_at(fragments, 0) is one  # not the cover or the image before it
    assert folio_xpointer(book, one.char_end + 1).startswith("/body/DocFragment[6]/")


def test_an_unknown_step_under_a_known_paragraph_lands_on_the_paragraph(book: Book) -> None:
    """A wrapper folio does not know (a reader's own span, say) falls back to the nearest
    ancestor folio knows: never past the paragraph's start."""
    _, text = book
    at = landing(book, "/body/DocFragment[3]/body/section/p[2]/span/text().3")
    assert text[at:].lstrip().startswith("Hello world and more")


def test_an_element_offset_is_a_child_index_not_characters(book: Book) -> None:
    _, text = book
    at = landing(book, "/body/DocFragment[3]/body/section/p[1].3")
    assert text[at:].lstrip().startswith("Before the storm")


def test_a_long_run_of_text_is_several_text_nodes_as_crengine_reads_it() -> None:
    words = "word " * (TEXT_SPLIT_SIZE // 5 + 10)
    pieces = split_long(words)
    assert len(pieces) == 2
    assert len(pieces[0]) < TEXT_SPLIT_SIZE and pieces[0].endswith(" ")
    assert "".join(pieces) == words


def test_a_real_epub_reads_its_own_xpointers_back(books_dir: Path) -> None:
    """On Frankenstein's EPUB: every fragment's first paragraph words, pointed at in the
    classic and the nightly form, land back where they are."""
    path = books_dir / "formats" / "frankenstein.epub"
    if not path.exists():
        pytest.skip(f"{path} is not available")
    real: Book = (epub_fragments(path), EpubParser().parse(path).text)
    fragments, text = real
    checked = 0
    for fragment in fragments:
        if fragment.char_end <= fragment.char_start:
            continue
        for share in (0.1, 0.5, 0.9):
            offset = fragment.char_start + int(share * (fragment.char_end - fragment.char_start))
            while offset < fragment.char_end and text[offset].isspace():
                offset += 1
            if offset >= fragment.char_end:
                continue
            for explicit in (False, True):
                xpointer = folio_xpointer(real, offset, explicit_first=explicit)
                assert landing(real, xpointer) == offset + 1, (offset, xpointer)
            checked += 1
    assert checked > 60


def test_a_document_nested_past_the_stack_is_placed_by_nothing_and_raises_nothing(
    tmp_path: Path,
) -> None:
    deep = f"{XHTML}<body><p>{'<span>' * 3000}deep words{'</span>' * 3000}</p></body></html>"
    path = build_epub(tmp_path / "deep.epub", {**FILES, "one.xhtml": deep})
    fragments = epub_fragments(path)
    assert [f.index for f in fragments] == list(range(1, 10))
