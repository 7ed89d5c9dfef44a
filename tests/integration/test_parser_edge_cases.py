"""Parsers on small files written by the tests: encodings, boilerplate, fallbacks, broken inputs."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.constants import PageLabelStyle
from pypdf.generic import DictionaryObject, NameObject, StreamObject

from folio.adapters.parsers import parse_book
from folio.domain.books import BookFormat
from folio.domain.errors import IngestError, IngestErrorCode
from tests.series_books import write_epub

FRENCH = (
    "Chapter 1\n\nLa jeune fille était à Genève, près du lac. Elle avait reçu une lettre "
    "de son frère qui habitait à Montréal depuis l'été dernier. Ça lui a fait très plaisir.\n\n"
    "Chapter 2\n\nLe garçon est allé au marché acheter du pain et des pâtes pour le dîner de Noël. "
    "Il faisait très froid et la neige tombait sur les toits de la vieille ville.\n"
)


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def test_latin1_text_is_decoded_with_its_accents(tmp_path: Path) -> None:
    book, _ = parse_book(write(tmp_path, "french.txt", FRENCH.encode("latin-1")))
    assert "Genève" in book.text and "garçon" in book.text and "Noël" in book.text
    assert [c.title for c in book.chapters] == ["Chapter 1", "Chapter 2"]


def test_utf8_bom_and_crlf_are_removed(tmp_path: Path) -> None:
    content = "\ufeffChapter 1\r\n\r\nSome words here.\r\n"
    book, _ = parse_book(write(tmp_path, "bom.txt", content))
    assert book.text.startswith("Chapter 1\n\nSome")
    assert "\r" not in book.text and "\ufeff" not in book.text


def test_gutenberg_header_and_footer_are_stripped_and_give_title_and_author(
    tmp_path: Path,
) -> None:
    content = (
        "The Project Gutenberg eBook of Tiny Tales\n\nTitle: Tiny Tales\n\nAuthor: Ann Writer\n\n"
        "*** START OF THE PROJECT GUTENBERG EBOOK TINY TALES ***\n\n"
        "CHAPTER I\n\nOnce upon a time there was a tale.\n\n"
        "CHAPTER II\n\nIt ended well.\n\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK TINY TALES ***\n\nFull license text here.\n"
    )
    book, _ = parse_book(write(tmp_path, "pg.txt", content))
    assert (book.title, book.author) == ("Tiny Tales", "Ann Writer")
    assert book.text.startswith("CHAPTER I")
    assert "license" not in book.text and "Project Gutenberg" not in book.text
    assert [c.title for c in book.chapters] == ["Chapter I", "Chapter II"]


def test_a_table_of_contents_does_not_make_chapters(tmp_path: Path) -> None:
    content = (
        "My Book\n\nby Someone\n\nCONTENTS\n\nChapter 1\nChapter 2\nChapter 3\n\n\n"
        "Chapter 1\n\nFirst body.\n\nChapter 2\n\nSecond body.\n\nChapter 3\n\nThird body.\n"
    )
    book, _ = parse_book(write(tmp_path, "toc.txt", content))
    assert [c.title for c in book.chapters if c.is_story] == ["Chapter 1", "Chapter 2", "Chapter 3"]
    assert [(c.title, c.kind.value) for c in book.chapters if not c.is_story] == [
        ("Contents", "front_matter")
    ]
    first = next(c for c in book.chapters if c.is_story)
    assert book.text[first.char_start :].startswith("Chapter 1\n\nFirst body.")
    assert (book.title, book.author) == ("My Book", "Someone")


def test_a_heading_keyword_inside_prose_is_not_a_chapter(tmp_path: Path) -> None:
    content = "CHAPTER 1\n\nShe read it.\n\nPart of the crowd left early that evening,\nand more.\n"
    book, _ = parse_book(write(tmp_path, "prose.txt", content))
    assert [c.title for c in book.chapters] == ["Chapter 1"]


def test_a_modern_plays_scenes_are_chapters_titled_with_their_act_and_setting(
    tmp_path: Path,
) -> None:
    """A scene's setting is its title, in sentence case; the act heading just before folds in."""
    content = (
        "ACT I\n\nSCENE I. Elsinore. A platform before the castle.\n\nEnter Bernardo.\n\n"
        "BERNARDO. Who's there?\n\nSCENE II. A room of state in the castle.\n\n"
        "KING. Though yet of Hamlet our dear brother's death.\n\nACT II\n\n"
        "SCENE I. A room in Polonius's house.\n\nPOLONIUS. Give him this money.\n"
    )
    book, _ = parse_book(write(tmp_path, "hamlet.txt", content))
    assert [c.title for c in book.chapters] == [
        "Act I, Scene I. Elsinore. A platform before the castle",
        "Act I, Scene II. A room of state in the castle",
        "Act II, Scene I. A room in Polonius's house",
    ]


def test_a_title_before_the_first_verse_is_a_book_of_scripture(tmp_path: Path) -> None:
    """Only before "1:1": a title-like line before any other paragraph is no chapter."""
    content = (
        "The Holy Bible\n\nThe Book of Ruth\n\n1:1 Now it came to pass in the days.\n\n"
        "1:2 And the name of the man was Elimelech.\n\nA Note On The Text\n\n"
        "2:1 And Naomi had a kinsman.\n\nEzra\n\n\n1:1 Now in the first year of Cyrus.\n"
    )
    book, _ = parse_book(write(tmp_path, "bible.txt", content))
    assert [c.title for c in book.chapters] == ["The Book of Ruth", "Ezra"]


def test_a_book_of_poems_without_headings_takes_its_titles_in_capitals(tmp_path: Path) -> None:
    """Only when nothing else heads a chapter, five titles or more, and never a line on every page
    (a running head)."""
    poems = ["THE LAMB", "THE SICK ROSE", "THE FLY", "THE TIGER", "LONDON"]
    body = "Little lamb, who made thee?\nDost thou know who made thee?\n\nPOEMS\n\n"
    content = "".join(f"{title}\n\n{body}" for title in poems)
    book, _ = parse_book(write(tmp_path, "poems.txt", content))
    assert [c.title for c in book.chapters] == ["The Lamb", "The Sick Rose", "The Fly", "The Tiger",
                                                "London"]  # fmt: skip
    few, _ = parse_book(write(tmp_path, "few.txt", "".join(f"{t}\n\n{body}" for t in poems[:4])))
    assert few.chapters == ()


def test_a_binary_file_named_txt_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as caught:
        parse_book(write(tmp_path, "binary.txt", b"\x00\x01\x02" * 100))
    assert caught.value.code == IngestErrorCode.CORRUPT


def test_whitespace_only_text_is_empty(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as caught:
        parse_book(write(tmp_path, "blank.md", "\n\n   \n"))
    assert caught.value.code == IngestErrorCode.EMPTY


def test_unsupported_extension_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as unsupported:
        parse_book(write(tmp_path, "book.docx", b"PK\x03\x04"))
    assert unsupported.value.code == IngestErrorCode.UNSUPPORTED
    with pytest.raises(IngestError) as missing:
        parse_book(tmp_path / "nowhere.txt")
    assert missing.value.code == IngestErrorCode.NOT_FOUND


def test_a_pdf_extension_on_an_html_file_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as caught:
        parse_book(write(tmp_path, "fake.pdf", "<html><body>hi</body></html>"))
    assert caught.value.code == IngestErrorCode.CORRUPT


def test_markdown_uses_the_level_below_a_single_title_heading(tmp_path: Path) -> None:
    content = (
        "# The Book\n\n## One\n\nSome **bold** and _em_ text with a [link](http://x).\n\n"
        "### A section\n\nMore.\n\n## Two\n\n- item *a*\n- item b\n\n```\ncode  kept\n```\n"
    )
    book, fmt = parse_book(write(tmp_path, "book.markdown", content))
    assert fmt is BookFormat.MARKDOWN
    assert book.title == "The Book"
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert "Some bold and em text with a link." in book.text
    assert "code  kept" in book.text
    for markup in ("**", "_em_", "](", "#", "- item"):
        assert markup not in book.text


def test_html_drops_scripts_and_styles_and_reads_meta_author(tmp_path: Path) -> None:
    content = (
        "<html><head><title>Small Book</title><meta name='author' content='A. Person'>"
        "<style>p {color: red}</style></head><body><script>var x = 1;</script>"
        "<h2>First</h2><p>Alpha <b>beta</b>\n gamma.</p><div>Delta<br>epsilon</div>"
        "<h2>Second</h2><p>Zeta.</p></body></html>"
    )
    book, fmt = parse_book(write(tmp_path, "small.htm", content))
    assert fmt is BookFormat.HTML
    assert (book.title, book.author) == ("Small Book", "A. Person")
    assert "var x" not in book.text and "color" not in book.text
    assert "Alpha beta gamma.\n\nDelta\nepsilon" in book.text
    assert [c.title for c in book.chapters] == ["First", "Second"]
    assert book.text[book.chapters[1].char_start :].startswith("Second\n\nZeta.")


def test_html_in_latin1_with_its_meta_charset_keeps_its_accents(tmp_path: Path) -> None:
    content = (
        "<html><head><meta charset='iso-8859-1'><title>Café</title></head><body>"
        "<p>La jeune fille était à Genève, près du lac, avec son frère.</p></body></html>"
    )
    book, _ = parse_book(write(tmp_path, "latin.html", content.encode("latin-1")))
    assert book.title == "Café"
    assert "était à Genève, près du lac" in book.text


CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def _opf(with_ncx: bool) -> str:
    ncx_item = '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
    return (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Two Parts</dc:title>'
        "<dc:creator>E. Pub</dc:creator></metadata><manifest>"
        '<item id="a" href="text/a.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="b" href="text/b.xhtml" media-type="application/xhtml+xml"/>'
        f"{ncx_item if with_ncx else ''}</manifest>"
        '<spine><itemref idref="b"/><itemref idref="a"/></spine></package>'
    )


NCX = (
    '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
    "<navMap>"
    '<navPoint id="p1"><navLabel><text>Part B</text></navLabel><content src="text/b.xhtml"/>'
    "</navPoint>"
    '<navPoint id="p2"><navLabel><text>Part A, second half</text></navLabel>'
    '<content src="text/a.xhtml#half"/></navPoint>'
    "</navMap></ncx>"
)


def _xhtml(heading: str, body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>x</title></head><body><h1>{heading}</h1>{body}</body></html>"
    )


def _epub(tmp_path: Path, *, with_ncx: bool) -> Path:
    path = tmp_path / ("ncx.epub" if with_ncx else "plain.epub")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/book.opf", _opf(with_ncx))
        z.writestr("OEBPS/toc.ncx", NCX)
        z.writestr("OEBPS/text/a.xhtml", _xhtml("Heading A", "<p>a1</p><p id='half'>a2</p>"))
        z.writestr("OEBPS/text/b.xhtml", _xhtml("Heading B", "<p>b1</p>"))
    return path


def test_epub_follows_the_spine_and_the_ncx_toc(tmp_path: Path) -> None:
    book, fmt = parse_book(_epub(tmp_path, with_ncx=True))
    assert fmt is BookFormat.EPUB
    assert (book.title, book.author) == ("Two Parts", "E. Pub")
    assert book.text == "Heading B\n\nb1\n\nHeading A\n\na1\n\na2"  # spine order: b, then a
    assert [(c.title, book.text[c.char_start :][:2]) for c in book.chapters] == [
        ("Part B", "He"),
        ("Part A, second half", "a2"),
    ]


def test_epub_without_a_toc_takes_chapters_from_headings(tmp_path: Path) -> None:
    book, _ = parse_book(_epub(tmp_path, with_ncx=False))
    assert [c.title for c in book.chapters] == ["Heading B", "Heading A"]


def test_a_zip_that_is_not_an_epub_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "notes.epub"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", "hello")
    with pytest.raises(IngestError) as caught:
        parse_book(path)
    assert caught.value.code == IngestErrorCode.CORRUPT
    assert "container.xml" in caught.value.message


def _pdf_with_text(tmp_path: Path, pages: list[str], *, labels: bool) -> Path:
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    for text in pages:
        page = writer.add_blank_page(width=612, height=792)
        stream = StreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if labels:
        writer.set_page_label(0, 1, style=PageLabelStyle.LOWERCASE_ROMAN)
        writer.set_page_label(2, len(pages) - 1, style=PageLabelStyle.DECIMAL, start=1)
    path = tmp_path / ("labelled.pdf" if labels else "plain.pdf")
    with path.open("wb") as f:
        writer.write(f)
    return path


def test_pdf_pages_take_the_printed_page_labels(tmp_path: Path) -> None:
    texts = ["Preface words.", "More preface.", "Chapter 1", "Story begins here.", "The end."]
    book, _ = parse_book(_pdf_with_text(tmp_path, texts, labels=True))
    assert [p.label for p in book.pages] == ["i", "ii", "1", "2", "3"]
    assert [p.number for p in book.pages] == [1, 2, 3, 4, 5]
    for page, text in zip(book.pages, texts, strict=True):
        assert book.text[page.char_start : page.char_end].strip() == text


def test_a_pdf_without_text_is_empty(tmp_path: Path) -> None:
    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    path = tmp_path / "scan.pdf"
    with path.open("wb") as f:
        writer.write(f)
    with pytest.raises(IngestError) as caught:
        parse_book(path)
    assert caught.value.code == IngestErrorCode.EMPTY


def test_a_nul_deep_in_a_text_file_becomes_a_space_keeping_every_offset(tmp_path: Path) -> None:
    body = "Chapter 1\n\n" + "A quiet line of prose.\n" * 500  # past the 8 KB binary sniff
    content = body + "debris\x00here\n\nChapter 2\n\nThe end.\n"
    book, _ = parse_book(write(tmp_path, "nul.txt", content))
    assert "\x00" not in book.text and "debris here" in book.text
    assert book.text.index("Chapter 2") == content.index("Chapter 2")
    assert [c.title for c in book.chapters] == ["Chapter 1", "Chapter 2"]


_CHAPTERS = [("Chapter 1", ["The first words of the book. " * 20])]


@pytest.mark.parametrize("style", ["epub3", "calibre"])
def test_epub_series_and_index_come_from_its_metadata(tmp_path: Path, style: str) -> None:
    path = write_epub(
        tmp_path / "v3.epub", "Third", _CHAPTERS, series="The Long Road", index="3", style=style
    )
    book, _ = parse_book(path)
    assert (book.series, book.series_index) == ("The Long Road", 3.0)


def test_an_epub_series_without_a_usable_index_keeps_the_series_only(tmp_path: Path) -> None:
    path = write_epub(tmp_path / "v.epub", "V", _CHAPTERS, series="Road", index="first")
    book, _ = parse_book(path)
    assert (book.series, book.series_index) == ("Road", None)
    plain, _ = parse_book(write_epub(tmp_path / "p.epub", "P", _CHAPTERS))
    assert (plain.series, plain.series_index) == (None, None)
