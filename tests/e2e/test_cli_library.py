"""The library commands through the real entry point: add (every format, duplicates, bad files),
books, show, position, search, rm, config; and, with the real embedding model, search quality."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import (
    REAL_MODEL,
    RunFolio,
    copy_home,
    ok,
    ok_json,
    one_error_line,
    run_folio_in,
    runner,
)
from tests.excerpts import moby_dick_excerpt
from tests.series_books import write_epub
from tests.shared_homes import built_once, load_process, save_process

FORMATS = ("frankenstein.epub", "frankenstein.pdf", "frankenstein.html", "frankenstein.md")
TXT = "pg84_frankenstein.txt"
BAD = ("empty.txt", "fake_zip.epub", "truncated.epub", "truncated.pdf", "random_bytes.pdf")

LibraryRun = tuple[Path, Any]


@pytest.fixture(scope="module")
def library(books_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> LibraryRun:
    """A home holding the four formats of Frankenstein and its .txt (hashing embeddings): the home
    and the parsed ``add --json`` output."""
    files = [str(books_dir / "formats" / name) for name in FORMATS] + [str(books_dir / TXT)]

    def build(root: Path) -> None:  # once for the run: xdist spreads this module's tests
        (root / "home").mkdir()
        save_process(run_folio_in(root / "home", "add", *files, "--json"), root / "add.json")

    root = built_once(tmp_path_factory, "cli-library", build)
    return root / "home", ok_json(load_process(root / "add.json"))


@pytest.fixture
def lib(library: LibraryRun, tmp_path: Path) -> RunFolio:
    """A private copy of the library home."""
    return runner(copy_home(library[0], tmp_path / "home"))


def books(run: RunFolio) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = ok_json(run("books", "--json"))
    return data


def book_id(run: RunFolio, source_name: str) -> str:
    return str(next(b["id"] for b in books(run) if b["source_name"] == source_name))


# --- add, books, show -----------------------------------------------------------------------------
def test_every_format_is_added_and_listed_by_books_json(lib: RunFolio, library: LibraryRun) -> None:
    added = library[1]
    assert [r["status"] for r in added] == ["added"] * 5
    assert all(r["chunks"] > 100 for r in added)
    listed = {b["source_name"]: b for b in books(lib)}
    assert set(listed) == {*FORMATS, TXT}
    assert {b["format"] for b in listed.values()} == {"epub", "pdf", "html", "md", "txt"}
    assert all("Frankenstein" in b["title"] for b in listed.values())
    assert listed["frankenstein.pdf"]["pages"] == 121
    assert all(b["reading_position"]["char_offset"] is None for b in listed.values())


@pytest.mark.parametrize("name", ["frankenstein.epub", "frankenstein.md"])
def test_show_json_gives_the_28_chapters_and_the_reading_position(lib: RunFolio, name: str) -> None:
    shown = ok_json(lib("show", book_id(lib, name), "--json"))
    assert len(shown["chapters"]) == 28
    assert shown["chapters"][0]["title"].startswith("Letter 1")
    assert shown["chapters"][4]["title"].startswith("Chapter 1")
    starts = [c["char_start"] for c in shown["chapters"]]
    assert starts == sorted(starts) and all(c["page"] for c in shown["chapters"])
    assert shown["reading_position"] == {
        "kind": "none", "value": None, "char_offset": None, "description": "the whole book",
        "chapter": None, "page": None, "page_count": shown["page_count"], "percent": None,
        "include_matter": False,
        "source": None,
        "set_at": None,
    }  # fmt: skip


def test_books_fit_80_columns_one_row_each_and_piped_rows_stay_whole(lib: RunFolio) -> None:
    import pexpect

    from tests.e2e.conftest import folio_command, folio_env

    command = folio_command("books")
    env = folio_env(lib.home, extra={"TERM": "xterm", "NO_COLOR": "1"})
    child = pexpect.spawn(command[0], command[1:], env=env, encoding="utf-8", timeout=120,
                          dimensions=(40, 80))  # fmt: skip
    child.expect(pexpect.EOF)
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in child.before.splitlines()]
    rows = [line for line in lines if re.match(r"[0-9a-f]{8} ", line)]
    assert len(rows) == len(books(lib)) and all(len(line) <= 80 for line in lines), lines
    assert all("Frankenstein" in row and "…" in row for row in rows)  # cut, never wrapped

    piped = ok(lib("books")).splitlines()
    assert sum("Frankenstein; or, the Modern Prometheus" in line for line in piped) == len(rows)


def test_show_prints_title_chapters_and_pages(lib: RunFolio) -> None:
    out = ok(lib("show", book_id(lib, "frankenstein.epub")))
    assert "Frankenstein" in out and "28 chapters" in out and "Letter 1" in out
    assert "read: the whole book" in out


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_plain_txt_file_is_added_with_its_title(run_folio: RunFolio, tmp_path: Path) -> None:
    book = tmp_path / "notes.txt"
    book.write_text("The Lighthouse\n\nChapter 1\n\n" + "The keeper lit the lamp. " * 400)
    out = ok(run_folio("add", str(book)))
    assert out.startswith("Added ") and "passages" in out
    assert [b["source_name"] for b in books(run_folio)] == ["notes.txt"]


def test_edit_changes_title_and_author_and_refuses_nonsense(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    book = tmp_path / "pg1342_pride.txt"
    book.write_text("Chapter 1\n\n" + "Mr. Bennet smiled at his wife. " * 300)
    ok(run_folio("add", str(book)))
    out = ok(
        run_folio("edit", "pg1342", "--title", "Pride and Prejudice", "--author", "Jane Austen")
    )
    assert "Pride and Prejudice by Jane Austen" in out
    [entry] = books(run_folio)
    assert (entry["title"], entry["author"]) == ("Pride and Prejudice", "Jane Austen")
    assert "(no author)" in ok(run_folio("edit", "Pride", "--author", ""))
    assert books(run_folio)[0]["author"] is None
    empty = run_folio("edit", "Pride", "--title", "  ")
    assert empty.returncode == 1 and "A title is 1 to" in one_error_line(empty)
    nothing = run_folio("edit", "Pride")
    assert nothing.returncode == 2 and "give --title, --author, --series" in nothing.stderr
    assert books(run_folio)[0]["title"] == "Pride and Prejudice"


def test_edit_puts_a_book_in_a_series_and_the_epub_brings_its_own(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    chapters = [("Chapter 1", ["Frodo walked along the road to the east. " * 40])]
    ok(run_folio("add", str(write_epub(tmp_path / "v2.epub", "Towers", chapters,
                                       series="The Ring", index="2"))))  # fmt: skip
    [entry] = books(run_folio)
    assert (entry["series"], entry["series_index"]) == ("The Ring", 2.0)
    out = ok(run_folio("edit", "Towers", "--series", "The Lord of the Rings", "--index", "2.5"))
    assert "Towers by A. Writer (The Lord of the Rings, book 2.5)" in out
    assert "(The Lord of the Rings, book 2.5)" in ok(run_folio("show", "Towers"))
    bad = run_folio("edit", "Towers", "--index", "-3")
    assert bad.returncode == 1 and "A series index is a number from 0 to 10000" in one_error_line(
        bad
    )
    assert books(run_folio)[0]["series_index"] == 2.5
    ok(run_folio("edit", "Towers", "--series", ""))
    assert (books(run_folio)[0]["series"], books(run_folio)[0]["series_index"]) == (None, None)


def test_add_a_directory_adds_every_book_inside_and_sums_up(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    shelf = tmp_path / "shelf"
    (shelf / "more").mkdir(parents=True)
    (shelf / ".hidden").mkdir()
    body = "Chapter 1\n\n" + "The keeper lit the lamp. " * 300
    (shelf / "lighthouse.md").write_text("# The Lighthouse\n\n" + body)
    (shelf / "more" / "lighthouse.markdown").write_text("# The Lighthouse\n\n" + body + " End.")
    (shelf / "more" / "harbour.md").write_text("# The Harbour\n\n" + body.replace("lamp", "boat"))
    (shelf / "empty.txt").write_text("")
    (shelf / "cover.jpg").write_bytes(b"\xff\xd8")
    (shelf / ".hidden" / "secret.txt").write_text("x " * 100)
    result = run_folio("add", str(shelf))
    assert result.returncode == 1  # one file was refused
    out = flat(result.stdout)
    assert "Summary: 3 added; 0 already in the library; 1 refused; 1 skipped" in out
    assert "cover.jpg" in out and "the library also has The Lighthouse (MD, lighthouse.md)" in out
    assert "empty.txt" in result.stderr and "secret" not in out + result.stderr
    assert sorted(b["source_name"] for b in books(run_folio)) == [
        "harbour.md", "lighthouse.markdown", "lighthouse.md"
    ]  # fmt: skip
    again = flat(run_folio("add", str(shelf / "more")).stdout)
    assert "Summary: 0 added; 2 already in the library; 0 refused." in again
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    refused = run_folio("add", str(empty_dir))
    assert "is a directory with no book files" in one_error_line(refused)


def test_read_opens_a_cited_page_or_a_chapter_and_stops_at_the_position(
    run_folio: RunFolio, bundled_book: Path
) -> None:
    ok(run_folio("add", str(bundled_book)))
    hit = ok_json(run_folio("search", "Frankenstein", "Clerval", "--json"))[0]
    page = ok(run_folio("read", "Frankenstein", "--page", hit["page_start"]))
    assert page.startswith(f"Frankenstein; or, the Modern Prometheus — {hit['chapter']}")
    assert flat(hit["text"])[:60] in flat(page)  # the cited passage is on the page read
    # Chapters in the book's own words, as `folio position --chapter` takes them.
    for ref in ("Chapter 1", "1", "I"):
        chapter = ok(run_folio("read", "Frankenstein", "--chapter", ref))
        assert "Chapter 1" in chapter.splitlines()[0] and "I am by birth a Genevese" in chapter
    letter = ok(run_folio("read", "Frankenstein", "--chapter", "Letter 2"))
    assert "Letter 2" in letter.splitlines()[0] and "Archangel" in letter
    ok(run_folio("position", "Frankenstein", "--chapter", "Letter 4"))
    past = run_folio("read", "Frankenstein", "--chapter", "1")
    assert past.returncode == 1 and "past your reading position" in one_error_line(past)
    unknown = run_folio("read", "Frankenstein", "--chapter", "99")
    assert unknown.returncode == 1 and "has no chapter '99'" in one_error_line(unknown)
    for bad in (("--page", "999"), ()):
        refused = run_folio("read", "Frankenstein", *bad)
        assert refused.returncode == 2 and "Error:" in refused.stderr


def test_read_cited_opens_the_page_of_a_source_of_the_last_answer(
    run_folio: RunFolio, bundled_book: Path
) -> None:
    ok(run_folio("add", str(bundled_book)))
    turn = run_folio("chat", "Frankenstein", "-m", "Who is Victor's friend from Geneva?")
    out = ok(turn)
    sources = re.search(r"^Sources: (.*)$", out, re.MULTILINE)
    assert sources, out
    places = re.findall(r"\[(\d)\] ([^;]+)", sources.group(1))
    assert [n for n, _ in places] == [str(i) for i in range(1, len(places) + 1)]
    assert len(set(places)) == len(places) >= 2
    assert "open a source with: folio read" in turn.stderr
    conversation_id, quotes = _last_turn_quotes(run_folio)
    for number, place in places:
        page = ok(run_folio("read", "Frankenstein", "--cited", number))
        header = page.splitlines()[0]
        assert header == f"Frankenstein; or, the Modern Prometheus — {place} · source [{number}]"
        assert flat(quotes[int(number) - 1]) in flat(page)  # the quote is on the page opened
    again = ok(run_folio("read", "Frankenstein", "--cited", "1", "--conversation", conversation_id))
    assert flat(quotes[0]) in flat(again)
    missing = run_folio("read", "Frankenstein", "--cited", "9")
    assert missing.returncode == 2 and f"sources 1 to {len(places)}" in missing.stderr


def _last_turn_quotes(run_folio: RunFolio) -> tuple[str, list[str]]:
    [entry] = ok_json(run_folio("conversations", "--json"))
    cid = entry["conversation_id"]
    data = ok_json(run_folio("conversations", "export", cid, "--format", "json"))
    return cid, [c["quote"] for c in data["turns"][-1]["sources"]]


def test_position_next_reads_through_the_next_chapter(lib: RunFolio) -> None:
    epub = book_id(lib, "frankenstein.epub")
    ok(lib("position", epub, "--chapter", "Letter 4"))
    assert "through Chapter 1 " in ok(lib("position", epub, "--next"))
    assert "through Chapter 2 " in ok(lib("position", epub, "--next"))
    ok(lib("position", epub, "--reset"))
    whole = lib("position", epub, "--next")
    assert whole.returncode == 1 and "set how far you have read first" in one_error_line(whole)


def test_re_adding_a_file_reports_it_already_present_and_changes_nothing(
    lib: RunFolio, books_dir: Path
) -> None:
    before = books(lib)
    again = lib("add", str(books_dir / "formats" / "frankenstein.epub"))
    assert again.returncode == 0 and "Traceback" not in again.stderr
    assert "Already in the library" in again.stdout
    assert book_id(lib, "frankenstein.epub")[:8] in again.stdout
    data = ok_json(lib("add", str(books_dir / "formats" / "frankenstein.epub"), "--json"))
    assert data["status"] == "duplicate" and data["book_id"] == book_id(lib, "frankenstein.epub")
    assert books(lib) == before


def test_a_file_added_again_with_again_is_read_again_keeping_conversations_and_place(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    """A book imported by an older folio kept its old passages and chapters: `add --again`
    reads it as this folio does, in place."""
    book = tmp_path / "lighthouse.txt"
    book.write_text(
        "The Lighthouse\n\n"
        + "".join(f"Chapter {n}\n\n" + "The keeper lit the lamp. " * 300 + "\n\n" for n in (1, 2))
    )
    ok(run_folio("add", str(book), "--position", "chapter 1"))
    ok(run_folio("chat", "lighthouse", "-m", "Who lit the lamp?"))
    [before] = books(run_folio)
    plain = run_folio("add", str(book))
    assert plain.returncode == 0 and "folio add --again" in plain.stdout
    again = ok_json(run_folio("add", str(book), "--again", "--json"))
    assert again["status"] == "read again" and again["book"]["id"] == before["id"]
    [after] = books(run_folio)
    assert after["reading_position"] == before["reading_position"]
    listed = ok_json(run_folio("conversations", "lighthouse", "--json"))
    assert [c["title"] for c in listed] == ["Who lit the lamp?"]
    refused = run_folio("add", str(book), "--again", "--position", "chapter 2")
    assert refused.returncode != 0 and "keeps the book's title" in refused.stderr


@pytest.mark.parametrize("name", BAD)
def test_a_bad_file_gives_one_error_line_and_leaves_the_library_unchanged(
    lib: RunFolio, books_dir: Path, name: str
) -> None:
    before = books(lib)
    result = lib("add", str(books_dir / "bad" / name))
    line = one_error_line(result)
    assert result.returncode == 1 and name in line
    assert result.stdout == ""
    assert books(lib) == before


def test_the_latin1_text_file_imports_and_is_searchable(
    run_folio: RunFolio, books_dir: Path
) -> None:
    path = books_dir / "bad" / "latin1_encoded.txt"
    added = ok_json(run_folio("add", str(path), "--json"))
    assert added["status"] == "added" and added["chunks"] > 0
    words = re.findall(r"[A-Za-z\u00c0-\u00ff]{9,}", path.read_bytes().decode("latin-1"))
    word = max(set(words), key=words.count)
    hits = ok_json(run_folio("search", added["book"]["id"], word, "--json"))
    assert any(word in h["text"] for h in hits)


def test_with_a_good_and_a_bad_file_the_good_one_is_added_and_the_exit_is_1(
    run_folio: RunFolio, books_dir: Path
) -> None:
    result = run_folio("add", str(books_dir / "bad" / "empty.txt"), str(books_dir / TXT))
    assert result.returncode == 1 and "Added " in result.stdout
    assert one_error_line(result).startswith("Error: empty.txt")
    assert [b["source_name"] for b in books(run_folio)] == [TXT]


@pytest.mark.parametrize(
    ("args", "reason"),
    [(("add", "/nonexistent/book.txt"), "does not exist"),
     (("add", "src/folio/entrypoints/cli/"), "is a directory with no book files"),
     (("add", "pyproject.toml"), "unsupported file type")],
)  # fmt: skip
def test_a_missing_or_unsupported_path_is_one_error_line(
    run_folio: RunFolio, args: tuple[str, ...], reason: str
) -> None:
    assert reason in one_error_line(run_folio(*args))


# --- book references ------------------------------------------------------------------------------
def test_an_ambiguous_reference_lists_every_candidate(lib: RunFolio) -> None:
    result = lib("show", "Frankenstein")
    line = one_error_line(result)
    assert result.returncode == 1 and "matches 5 books" in line
    assert all(b["id"][:8] in line for b in books(lib))


def test_an_unknown_reference_exits_3_and_suggests_close_titles(lib: RunFolio) -> None:
    unknown = lib("show", "Dracula")
    assert unknown.returncode == 3
    assert one_error_line(unknown) == "Error: No book matches 'Dracula'."
    typo = lib("search", "Frankenstien", "Clerval")
    assert typo.returncode == 3 and "Did you mean: Frankenstein" in one_error_line(typo)


def test_a_unique_id_prefix_or_title_part_resolves(lib: RunFolio) -> None:
    epub = book_id(lib, "frankenstein.epub")
    assert ok_json(lib("show", epub[:6], "--json"))["id"] == epub


# --- reading position -----------------------------------------------------------------------------
def position(run: RunFolio, ref: str, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = ok_json(run("position", ref, *args, "--json"))
    return data


def test_position_by_page_chapter_percent_and_reset(lib: RunFolio) -> None:
    epub = book_id(lib, "frankenstein.epub")
    shown = ok_json(lib("show", epub, "--json"))
    titles = [c["title"] for c in shown["chapters"]]
    chapter6 = shown["chapters"][titles.index("Chapter 6")]["char_start"]

    # The chapter as the book names it: four Letters come before "Chapter 5"'s chapter 1.
    by_chapter = position(lib, epub, "--chapter", "5")
    assert (by_chapter["kind"], by_chapter["value"]) == ("chapter", titles.index("Chapter 5") + 1)
    assert by_chapter["char_offset"] == chapter6  # up to and including Chapter 5
    assert by_chapter["chapter"] == "Chapter 5"
    assert re.fullmatch(r"through Chapter 5 \(p\. \d+ of \d+, \d+%\)", by_chapter["description"])
    shown = ok_json(lib("show", epub, "--json"))
    assert shown["reading_position"] == by_chapter
    assert [c["title"] for c in shown["chapters"] if c["current"]] == ["Chapter 5"]
    assert "Chapter 5 <- you are here" in ok(lib("show", epub))
    for same in ("Chapter 5", "chapter v", "V"):
        assert position(lib, epub, "--chapter", same) == by_chapter
    letter = position(lib, epub, "--chapter", "Letter 2")
    assert letter["chapter"] == "Letter 2" and letter["description"].startswith("through Letter 2")
    assert "read through Letter 2 (p. " in ok(lib("position", epub))

    by_page = position(lib, epub, "--page", "10")
    assert by_page["kind"] == "page" and 0 < by_page["char_offset"] < chapter6 * 2

    half = position(lib, epub, "--percent", "50")
    assert half["kind"] == "percent" and half["char_offset"] == round(shown["char_count"] / 2)
    assert half["percent"] == 50.0
    assert "read through 50% of the book (Chapter " in ok(lib("position", epub))

    reset = position(lib, epub, "--reset")
    assert reset["char_offset"] is None and reset["kind"] == "none"
    assert next(b for b in books(lib) if b["id"] == epub)["reading_position"] == reset


def test_the_matter_before_the_position_is_included_only_when_the_reader_asks(
    lib: RunFolio,
) -> None:
    epub = book_id(lib, "frankenstein.epub")
    before = position(lib, epub, "--chapter", "5")
    assert before["include_matter"] is False  # never on by default
    included = position(lib, epub, "--include-matter")
    assert included["include_matter"] is True and included["chapter"] == "Chapter 5"
    assert included["description"].endswith(", front and back matter included")
    assert position(lib, epub, "--chapter", "6")["include_matter"] is True  # kept
    excluded = position(lib, epub, "--exclude-matter")
    assert excluded["include_matter"] is False and excluded["chapter"] == "Chapter 6"


def test_a_pdf_position_is_set_by_its_printed_page(lib: RunFolio) -> None:
    pdf = book_id(lib, "frankenstein.pdf")
    page41 = position(lib, pdf, "--page", "41")
    page42 = position(lib, pdf, "--page", "42")
    assert page41["description"].startswith("through p. 41 of 121 (")
    assert 0 < page41["char_offset"] < page42["char_offset"]


@pytest.mark.parametrize(
    ("args", "message"),
    [(("--page", "999"), "has no page 999"),
     (("--chapter", "0"), "has no chapter '0': its chapters run Letter 1, Letter 2, ..."),
     (("--chapter", "Chapter 25"), "has no chapter 'Chapter 25'"),
     (("--percent", "150"), "between 0 and 100")],
)  # fmt: skip
def test_an_impossible_position_is_refused_and_the_old_one_kept(
    lib: RunFolio, args: tuple[str, ...], message: str
) -> None:
    epub = book_id(lib, "frankenstein.epub")
    before = position(lib, epub, "--chapter", "Chapter 3")
    assert message in one_error_line(lib("position", epub, *args))
    assert position(lib, epub) == before and before["chapter"] == "Chapter 3"


def test_two_position_options_at_once_are_a_usage_error(lib: RunFolio) -> None:
    result = lib("position", book_id(lib, "frankenstein.epub"), "--page", "1", "--chapter", "2")
    assert result.returncode == 2 and "give one of" in result.stderr
    assert "Traceback" not in result.stderr


# --- search ---------------------------------------------------------------------------------------
HIT_FIELDS = {"chapter", "page_start", "page_end", "char_start", "char_end", "score", "text"}


def search(run: RunFolio, ref: str, query: str, *args: str) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = ok_json(run("search", ref, query, "--json", *args))
    return hits


def test_search_json_gives_chapter_pages_offsets_score_and_text(lib: RunFolio) -> None:
    epub = book_id(lib, "frankenstein.epub")
    hits = search(lib, epub, "Henry Clerval", "-k", "4")
    assert len(hits) == 4
    for hit in hits:
        assert set(hit) >= HIT_FIELDS
        assert hit["chapter"] and int(hit["page_start"]) <= int(hit["page_end"])
        assert 0 <= hit["char_start"] < hit["char_end"] and hit["score"] > 0
    assert "Clerval" in hits[0]["text"]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_search_never_returns_text_past_the_reading_position(lib: RunFolio) -> None:
    epub = book_id(lib, "frankenstein.epub")
    unlimited = search(lib, epub, "the murder of William and Justine's trial", "-k", "10")
    limit = position(lib, epub, "--chapter", "8")["char_offset"]
    assert any(h["char_end"] > limit for h in unlimited)  # the limit below really removes text

    limited = search(lib, epub, "the murder of William and Justine's trial", "-k", "10")
    assert limited and all(h["char_end"] <= limit for h in limited)

    position(lib, epub, "--chapter", "1")
    out = ok(lib("search", epub, "Justine"))
    hits = search(lib, epub, "Justine")
    assert all(h["char_end"] <= position(lib, epub)["char_offset"] for h in hits)
    assert ("No passages found in what you have read (through Chapter 1" in out) == (not hits)


def test_search_prints_chapter_and_page_of_each_passage(lib: RunFolio) -> None:
    out = ok(lib("search", book_id(lib, "frankenstein.epub"), "Clerval", "-k", "2"))
    assert re.search(r"^1\. Chapter \d+, pp?\. \d+", out, re.MULTILINE)
    assert re.search(r"^2\. ", out, re.MULTILINE) and "Clerval" in out


def test_an_empty_query_is_refused(lib: RunFolio) -> None:
    result = lib("search", book_id(lib, "frankenstein.epub"), "  ")
    assert result.returncode == 2 and "QUERY cannot be empty" in result.stderr


# --- rm, config, robustness -----------------------------------------------------------------------
def test_rm_yes_removes_the_book_and_its_conversations(lib: RunFolio) -> None:
    epub = book_id(lib, "frankenstein.epub")
    ok(lib("conversations", "new", epub))
    kept = lib("rm", epub, input="n\n")
    assert kept.returncode == 0 and "Nothing removed" in kept.stdout
    assert epub in {b["id"] for b in books(lib)}

    out = ok(lib("rm", epub[:8], "--yes"))
    assert out.startswith("Removed Frankenstein")
    assert epub not in {b["id"] for b in books(lib)} and len(books(lib)) == 4
    assert ok_json(lib("conversations", "--json")) == []
    assert lib("show", epub).returncode == 3


def test_config_json_masks_api_keys(run_folio: RunFolio) -> None:
    key = "sk-ant-abcdefgh12345"
    result = run_folio("config", "--json", env={"ANTHROPIC_API_KEY": key})
    data = json.loads(ok(result))
    assert key not in result.stdout and key not in result.stderr
    assert data["anthropic_api_key"] and data["anthropic_api_key"] != key
    assert data["effective_provider"] == "anthropic"
    assert data["home"] == str(run_folio.home)
    assert data["sources"]["anthropic_api_key"] == "env ANTHROPIC_API_KEY"
    assert data["sources"]["search_k"] == "default"
    shown = ok(run_folio("config", env={"ANTHROPIC_API_KEY": key}))
    assert key not in shown
    row = next(line for line in shown.splitlines() if line.startswith("anthropic_api_key"))
    assert row.split()[-2:] == ["env", "ANTHROPIC_API_KEY"]
    assert "None" not in shown and "(not set)" in shown


@pytest.mark.parametrize(
    ("args", "env"),
    [(("books",), {"FOLIO_SEARCH_K": "many"}),
     (("books",), {"FOLIO_PROVIDER": "gpt"}),
     (("show", ""), {}),
     (("chat", "Nothing", "-m", "hi"), {}),
     (("conversations", "show", "0000"), {}),
     (("chat", "Nothing", "-m", "hi"), {"FOLIO_EMBEDDING_MODEL": "/no/such/model"})],
)  # fmt: skip
def test_bad_settings_and_references_give_one_error_line(
    run_folio: RunFolio, args: tuple[str, ...], env: dict[str, str]
) -> None:
    one_error_line(run_folio(*args, env=env))


def test_a_bad_config_file_is_named_in_one_error_line(run_folio: RunFolio) -> None:
    (run_folio.home / "config.toml").write_text("provider = [\n")
    assert "config.toml" in one_error_line(run_folio("books"))


def test_markup_like_titles_and_file_names_are_printed_as_they_are(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    book = tmp_path / "[bold]odd.txt"
    book.write_text("Chapter 1\n\n" + "A [bold] word and a [/x] tag. " * 200)
    assert "[/red] Odd" in ok(run_folio("add", str(book), "--title", "[/red] Odd"))
    assert "[/red] Odd" in ok(run_folio("books"))
    assert "file [bold]odd.txt" in ok(run_folio("show", "Odd"))
    assert "[/x]" in ok(run_folio("search", "Odd", "[/x] tag"))


# --- search quality with the real embedding model -------------------------------------------------
@pytest.fixture(scope="module")
def real_library(
    real_model: None, books_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> RunFolio:
    """Moby Dick (excerpt) imported ONCE with the real embedding model."""
    home = tmp_path_factory.mktemp("real-library")
    moby = moby_dick_excerpt(books_dir, home.parent / "moby_dick.txt")
    run = runner(home, embedding=REAL_MODEL)
    ok(run("add", str(moby)))
    return run


@pytest.mark.slow
def test_the_whiteness_of_the_whale_finds_its_chapter_first(real_library: RunFolio) -> None:
    moby = next(b["id"] for b in books(real_library) if b["source_name"].startswith("moby"))
    hits = search(real_library, moby, "the whiteness of the whale")
    assert "The Whiteness of The Whale" in hits[0]["chapter"]


def a_sentence_of_pdf_page(pdf: Path, page_number: int) -> str:
    """A long whole sentence printed on the page (not one that runs over from a neighbour)."""
    from pypdf import PdfReader

    text = PdfReader(pdf).pages[page_number - 1].extract_text()
    body = " ".join(line for line in text.splitlines()[1:])  # the first line is the page header
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(body.split()))
    inner = sentences[1:-1]  # the first and last may continue on the neighbouring pages
    return max(inner, key=len)


def test_a_sentence_printed_on_pdf_page_41_finds_page_41_first(
    lib: RunFolio, books_dir: Path
) -> None:
    sentence = a_sentence_of_pdf_page(books_dir / "formats" / "frankenstein.pdf", 41)
    assert len(sentence.split()) >= 12
    pdf = next(b["id"] for b in books(lib) if b["format"] == "pdf")
    hits = search(lib, pdf, sentence)
    assert hits[0]["page_start"] == "41" or hits[0]["page_end"] == "41", hits[0]


def test_search_needs_a_book_and_a_query(run_folio: RunFolio) -> None:
    result = run_folio("search")
    assert result.returncode == 2 and "Missing argument" in result.stderr


def test_show_hides_the_titles_of_unread_chapters_unless_asked(lib: RunFolio) -> None:
    md = book_id(lib, "frankenstein.md")
    position(lib, md, "--chapter", "1")  # the first five entries: Letters 1-4 and Chapter 1
    try:
        hidden = ok_json(lib("show", md, "--json"))["chapters"]
        # Frankenstein's titles only number its chapters ("Chapter 2"): nothing to withhold
        assert all(c["title"] for c in hidden)
        assert all(c["unread"] for c in hidden[5:]) and not any(c["unread"] for c in hidden[:5])
        text = ok(lib("show", md))
        assert "Chapter 1 <- you are here" in text and "Chapter 2 (unread)" in text
        everything = ok_json(lib("show", md, "--all-chapters", "--json"))["chapters"]
        assert everything[27]["title"].startswith("Chapter 24") and everything[27]["unread"]
    finally:
        position(lib, md, "--reset")


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("FOLIO_HISTORY_MESSAGES", "inf"),
        ("FOLIO_MAX_TOOL_ROUNDS", "1e400"),
        ("FOLIO_SEARCH_K", "-1"),
    ],
)
def test_an_out_of_range_setting_is_one_error_line_naming_it(
    run_folio: RunFolio, var: str, value: str
) -> None:
    line = one_error_line(run_folio("books", env={var: value}))
    assert var in line and value in line


# --- hostile and oversized inputs ----------------------------------------------------------------
def test_a_fifo_a_device_link_and_a_directory_are_refused_at_once(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    import os

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.epub"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    for path, words in ((fifo, "not a regular file"), (zero, "not a regular file"),
                        (folder, "is a directory with no book files")):  # fmt: skip
        line = one_error_line(run_folio("add", str(path)))  # hangs here if it reads the file
        assert words in line and path.name in line
    assert ok_json(run_folio("books", "--json")) == []


def test_a_book_over_the_size_bound_is_refused_naming_the_bound(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_text("The whale swam on. " * 200_000)  # about 3.8 MB
    line = one_error_line(run_folio("add", str(big), env={"FOLIO_MAX_BOOK_MB": "1"}))
    assert "at most 1 MB" in line and "FOLIO_MAX_BOOK_MB" in line
    assert ok_json(run_folio("books", "--json")) == []


def test_an_epub_zip_bomb_is_refused_before_it_is_unpacked(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    import zipfile

    bomb = tmp_path / "bomb.epub"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("OEBPS/huge.xhtml", b"\0" * (64 * 1024 * 1024))
    assert bomb.stat().st_size < 1024 * 1024
    line = one_error_line(run_folio("add", str(bomb), env={"FOLIO_MAX_UNPACKED_MB": "16"}))
    assert "unpack to" in line and "at most 16 MB" in line
    assert ok_json(run_folio("books", "--json")) == []


def test_an_overlong_title_is_refused_and_file_metadata_is_clipped(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    book = tmp_path / "story.txt"
    book.write_text("Chapter 1\n\n" + "The quiet harbour waited. " * 400)
    assert "at most 300 characters" in one_error_line(
        run_folio("add", str(book), "--title", "x" * 5000)
    )


def test_control_sequences_inside_a_book_never_reach_the_terminal(
    run_folio: RunFolio, tmp_path: Path
) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m"
    book = tmp_path / "evil.txt"
    book.write_text(
        "Chapter 1\n\n"
        + f"The lighthouse keeper{evil} watched the harbour every night. " * 120
        + "\n\nChapter 2\n\n"
        + "The storm came and the lighthouse keeper lit the lamp. " * 120
    )
    ok(run_folio("add", str(book), "--title", f"Evil{evil} Book"))
    outputs = [
        run_folio("books"),
        run_folio("show", "Evil"),
        run_folio("search", "Evil", "lighthouse keeper"),
        run_folio("chat", "Evil", "-m", "Who watched the harbour?"),
    ]
    cid = outputs[-1].stderr.split("conversation: ")[-1].split()[0]
    outputs += [run_folio("conversations", "show", cid), run_folio("conversations", "list")]
    for result in outputs:
        assert result.returncode == 0, result.stderr
        printed = result.stdout + result.stderr
        assert "lighthouse" in printed or "Evil" in printed
        assert not any(c in printed for c in "\x1b\x07\x9b"), repr(printed[:300])
