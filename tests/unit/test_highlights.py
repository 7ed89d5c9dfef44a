"""Highlights in, notes out: KOReader's metadata and Kindle's clippings read (without running
Lua), anchored to the book's text, matched to books, and searched by the agent only inside the
reading window."""

from __future__ import annotations

from pathlib import Path

import pytest

from folio.adapters.parsers.highlights import read_highlights
from folio.adapters.parsers.kindle_clippings import parse_clippings
from folio.adapters.parsers.koreader_highlights import parse_koreader
from folio.adapters.parsers.lua_table import loads
from folio.adapters.storage.memory.highlights import InMemoryHighlightStore
from folio.agent.offline.strategy import reader_answer
from folio.agent.tools import default_registry
from folio.agent.tools.base import ToolContext, ToolServices
from folio.app.highlights import Highlights, match_book
from folio.domain.highlights import Anchorer, HighlightError, HighlightKind
from folio.domain.passages import SEARCH_HIGHLIGHTS, SearchResults
from tests.unit.test_book_tools import SECRET_WORDS, StoryLibrary, make_story

# As KOReader's dump.lua writes it (string.format("%q"): a newline is "\" + newline).
KOREADER_NEW = r"""-- we can read Lua syntax here!
return {
    ["annotations"] = {
        [1] = {
            ["chapter"] = "Chapter 1",
            ["color"] = "yellow",
            ["datetime"] = "2026-11-20 21:14:03",
            ["drawer"] = "lighten",
            ["note"] = "Their home town\
(check the map)",
            ["page"] = "/body/DocFragment[2]/body/p[1]/text().10",
            ["pageno"] = 1,
            ["pos0"] = "/body/DocFragment[2]/body/p[1]/text().10",
            ["pos1"] = "/body/DocFragment[2]/body/p[1]/text().80",
            ["text"] = "Victor   Frankenstein grew up in Geneva",
        },
        [2] = {
            ["chapter"] = "Chapter 1",
            ["datetime"] = "2026-11-20 21:20:00",
            ["page"] = "/body/DocFragment[2]/body/p[3]",
            ["pageno"] = 2,
            ["text"] = "in Chapter 1",
        },
        [3] = {
            ["chapter"] = "Chapter 3",
            ["datetime"] = "2026-11-21 08:00:00",
            ["drawer"] = "underscore",
            ["pageno"] = 5,
            ["pos0"] = "/body/DocFragment[4]/body/p[1]/text().0",
            ["pos1"] = "/body/DocFragment[4]/body/p[1]/text().40",
            ["text"] = "the creature opened its dull yellow eye",
        },
    },
    ["doc_props"] = {
        ["authors"] = "Mary Shelley",
        ["title"] = "The Modern Prometheus",
    },
    ["percent_finished"] = 0.42,
    ["summary"] = {
        ["status"] = "reading",
    },
}
"""

# Before KOReader's "annotations" (2024): "highlight" by page, notes on "bookmarks".
KOREADER_OLD = r"""return {
    ["bookmarks"] = {
        [1] = {
            ["chapter"] = "Chapter 2",
            ["datetime"] = "2023-05-01 10:00:00",
            ["highlighted"] = true,
            ["notes"] = "Professor Waldman, who praised the modern masters",
            ["page"] = 3,
            ["pos0"] = { ["page"] = 3, ["x"] = 10.5, ["y"] = 20 },
            ["text"] = "A kind teacher",
        },
    },
    ["highlight"] = {
        [3] = {
            [1] = {
                ["chapter"] = "Chapter 2",
                ["datetime"] = "2023-05-01 10:00:00",
                ["drawer"] = "lighten",
                ["pos0"] = { ["page"] = 3, ["x"] = 10.5, ["y"] = 20 },
                ["text"] = "Professor Waldman, who praised the modern masters",
            },
        },
        [4] = {
            [1] = {
                ["datetime"] = "2023-05-02 10:00:00",
                ["drawer"] = "lighten",
                ["text"] = "collecting bones from charnel houses",
            },
        },
    },
}
"""

CLIPPINGS = """\ufeffThe Modern Prometheus (Mary Shelley)
- Your Highlight on page 4 | Location 60-62 | Added on Friday, 20 November 2026 21:14:03

collecting bones from charnel houses, pale with study
==========
The Modern Prometheus (Mary Shelley)
- Your Note on page 4 | Location 62 | Added on Friday, 20 November 2026 21:15:00

Grim work
==========
The Modern Prometheus (Mary Shelley)
- Your Bookmark on page 2 | Location 30 | Added on Friday, 20 November 2026 21:16:00


==========
Another Book: A Subtitle (Some One)
- Your Highlight at location 12-13 | Added on Saturday, 21 November 2026 09:00:00

Words of another book
==========
"""


def test_the_lua_reader_takes_koreaders_literals_and_escapes() -> None:
    data = loads(KOREADER_NEW)
    first = data["annotations"][1]
    assert first["note"] == "Their home town\n(check the map)"
    assert first["pageno"] == 1 and data["percent_finished"] == 0.42
    assert loads(r'return { "a\"b\\c\0d", x = -1e3, [2] = false, y = nil }') == {
        1: 'a"b\\c\x00d', "x": -1000.0, 2: False, "y": None}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ['return os.execute("rm -rf /")', "return { a = b }", "return { 1 + 2 }",
     'return { "unterminated }', "return {} extra", "--[[ never closed\n" * 3 + "return {}",
     "return { [{}] = 1 }", "return { [nil] = 1 }", r'return "\999"'],
)  # fmt: skip
def test_the_lua_reader_refuses_anything_but_literals(text: str) -> None:
    with pytest.raises(ValueError, match="not a Lua data file"):
        loads(text)


def test_the_lua_reader_states_its_nesting_bound() -> None:
    assert loads("return " + "{" * 64 + "}" * 64) is not None
    with pytest.raises(ValueError, match="tables nested deeper than 64"):
        loads("return " + "{" * 65 + "}" * 65)


def test_koreader_annotations_give_highlights_notes_and_bookmarks() -> None:
    found = parse_koreader(loads(KOREADER_NEW))
    assert [h.kind for h in found] == [HighlightKind.HIGHLIGHT, HighlightKind.BOOKMARK,
                                       HighlightKind.HIGHLIGHT]  # fmt: skip
    first = found[0]
    assert (first.title, first.author) == ("The Modern Prometheus", "Mary Shelley")
    assert first.note == "Their home town\n(check the map)"
    assert first.location == "/body/DocFragment[2]/body/p[1]/text().10"
    assert first.page == 1 and first.created == "2026-11-20 21:14:03"
    assert first.chapter == "Chapter 1" and first.source == "KOReader"


def test_older_koreader_files_merge_bookmark_notes_with_their_highlights() -> None:
    found = parse_koreader(loads(KOREADER_OLD))
    assert [(h.text, h.note, h.page) for h in found] == [
        ("Professor Waldman, who praised the modern masters", "A kind teacher", 3),
        ("collecting bones from charnel houses", None, 4),
    ]


def test_an_old_page_bookmark_keeps_the_readers_note_not_koreaders_label() -> None:
    def bookmark(text: str) -> str:
        return (f'{{ ["datetime"] = "2023-05-01 10:00:00", ["notes"] = "dans Chapitre 2",'
                f' ["page"] = 3, ["text"] = "{text}" }}')  # fmt: skip

    labels = ["Page 3 dans Chapitre 2 @ 2023-05-01 10:00:00", "dans Chapitre 2"]
    mine = "in the end he left"
    lua = f'return {{ ["bookmarks"] = {{ {", ".join(bookmark(t) for t in [*labels, mine])} }} }}'
    found = parse_koreader(loads(lua))
    assert [(h.kind, h.text, h.note) for h in found] == [
        (HighlightKind.BOOKMARK, "", None), (HighlightKind.BOOKMARK, "", None),
        (HighlightKind.BOOKMARK, "", mine)]  # fmt: skip


def test_kindle_clippings_keep_a_note_on_its_highlight() -> None:
    found = parse_clippings(CLIPPINGS)
    assert [h.kind for h in found] == [HighlightKind.HIGHLIGHT, HighlightKind.BOOKMARK,
                                       HighlightKind.HIGHLIGHT]  # fmt: skip
    first = found[0]
    assert (first.title, first.author, first.page) == ("The Modern Prometheus", "Mary Shelley", 4)
    assert first.text == "collecting bones from charnel houses, pale with study"
    assert first.note == "Grim work" and first.location == "page 4, Location 60-62"
    assert found[2].title == "Another Book: A Subtitle" and found[2].location == "Location 12-13"


def test_a_file_that_is_neither_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("just some words\n")
    with pytest.raises(HighlightError, match=r"notes\.txt is not a Kindle clippings file"):
        read_highlights(bad)
    lua = tmp_path / "metadata.epub.lua"
    lua.write_text("return dofile('x')")
    with pytest.raises(HighlightError, match=r"metadata\.epub\.lua is not a KOReader metadata"):
        read_highlights(lua)
    russian = tmp_path / "My Clippings.txt"
    russian.write_text(
        "Книга (Автор)\n- Ваш выделенный отрывок на странице 5 | Местоположение 1234-1236\n\n"
        "Слова\n==========\n"
    )
    with pytest.raises(HighlightError, match=r"a Kindle set to English, German, .* or Chinese"):
        read_highlights(russian)
    with pytest.raises(HighlightError) as missing:
        read_highlights(tmp_path / "gone.sdr")
    assert missing.value.is_not_found


def test_a_koreader_folder_without_a_title_is_named_after_the_folder(tmp_path: Path) -> None:
    sdr = tmp_path / "The Modern Prometheus.sdr"
    sdr.mkdir()
    (sdr / "metadata.epub.lua").write_text(KOREADER_OLD)
    assert {h.title for h in read_highlights(sdr)} == {"The Modern Prometheus"}


def test_anchoring_is_exact_then_alike_and_nearest_the_location() -> None:
    text = "He said “hello”\n  world. Later: he said \u201chello\u201d world again."
    anchorer = Anchorer(text)
    start, end = anchorer.anchor('he said "hello" world', near=None) or (0, 0)
    assert text[start:end] == "He said “hello”\n  world"
    near_end = anchorer.anchor('he said "hello" world', near=len(text))
    assert near_end is not None and text[near_end[0] : near_end[1]] == "he said “hello” world"
    assert anchorer.anchor("Later:") == (text.index("Later:"), text.index("Later:") + 6)
    assert anchorer.anchor("never written") is None


def test_books_are_matched_by_title_then_author() -> None:
    a = make_story("a").book
    b = make_story("b").book
    from dataclasses import replace

    b = replace(b, author="Someone Else")
    assert match_book("the modern prometheus", None, [a]) is a
    assert match_book("The Modern Prometheus: Penguin Classics", "x", [a]) is a
    assert match_book("The Modern Prometheus", "Someone Else", [a, b]) is b
    assert match_book("Another Book", None, [a, b]) is None


def imported(story: StoryLibrary, text: str = KOREADER_NEW) -> InMemoryHighlightStore:
    store = InMemoryHighlightStore()
    highlights = Highlights(store, story.library, lambda _: parse_koreader(loads(text)),
                            user_id="local")  # fmt: skip
    report = highlights.import_file(Path("x.sdr"))
    assert [b.added for b in report.books] == [3]
    assert highlights.import_file(Path("x.sdr")).books[0].added == 0  # the same file again
    return store


def test_an_import_anchors_each_highlight_in_the_books_text() -> None:
    story = make_story()
    store = imported(story)
    rows = store.of_book(story.book.id, "local")
    anchored = [h for h in rows if h.anchored]
    assert len(anchored) == 2
    for h in anchored:
        assert h.char_start is not None and h.char_end is not None
        assert " ".join(story.text[h.char_start : h.char_end].split()) == " ".join(h.text.split())
    assert not rows[-1].anchored and rows[-1].kind is HighlightKind.BOOKMARK


def test_a_page_bookmark_is_never_anchored_by_its_label() -> None:
    story = make_story()
    labelled = KOREADER_NEW.replace('"in Chapter 1"', '"Victor Frankenstein grew up in Geneva"')
    store = InMemoryHighlightStore()
    Highlights(store, story.library, lambda _: parse_koreader(loads(labelled)),
               user_id="local").import_file(Path("x.sdr"))  # fmt: skip
    (bookmark,) = [h for h in store.of_book(story.book.id, "local") if h.kind == "bookmark"]
    assert bookmark.text == "" and not bookmark.anchored


def run_tool(story: StoryLibrary, store: InMemoryHighlightStore, **arguments: object):
    services = ToolServices(story.searcher, story.library, story.library, highlights=store)
    return default_registry().execute(SEARCH_HIGHLIGHTS, ToolContext(book=story.book, user="local"),
                                      services, arguments)  # fmt: skip


def test_search_highlights_finds_the_readers_note_and_never_past_the_position() -> None:
    story = make_story()
    store = imported(story)
    result = run_tool(story, store, query="Geneva")
    assert result.success and isinstance(result.data, SearchResults)
    (found,) = result.data.passages
    assert found.chapter == "Chapter 1" and found.page_start == "1"
    assert "check the map" in found.text
    everything = run_tool(story, store)
    text = " ".join(p.text for p in everything.data.passages)
    assert len(everything.data.passages) == 1  # the Chapter 3 highlight lies past page 4
    assert not any(word in text for word in SECRET_WORDS)
    assert run_tool(story, store, query="yellow eye").data.passages == ()
    other_user = ToolContext(book=story.book, user="someone-else")
    services = ToolServices(story.searcher, story.library, story.library, highlights=store)
    alien = default_registry().execute(SEARCH_HIGHLIGHTS, other_user, services, {})
    assert alien.data.passages == ()


def test_moving_the_position_on_brings_the_later_highlight_in() -> None:
    story = make_story()
    store = imported(story)
    story.book = story.at(story.book.position_at_page("6"))
    result = run_tool(story, store, query="yellow eye")
    assert [p.chapter for p in result.data.passages] == ["Chapter 3"]


def test_offline_mode_asks_the_highlights_tool_for_what_the_reader_highlighted() -> None:
    question = "What did I highlight about Geneva?"
    story = make_story()
    answer = reader_answer(run_tool(story, imported(story), query=question).outcome())
    assert "Victor Frankenstein grew up in Geneva" in answer and "p. 1" in answer


def test_a_model_asking_for_highlights_gets_only_those_within_the_position() -> None:
    from folio.adapters.llm.scripted import ScriptedChatProvider, tool_call
    from folio.agent.strategies import ToolUseRetrievalStrategy
    from folio.domain.llm import PromptMessage, ToolInvocation

    story = make_story()
    store = imported(story)
    registry = default_registry()
    services = ToolServices(story.searcher, story.library, story.library, highlights=store)
    ctx = ToolContext(book=story.book, user="local")

    def run(invocation: ToolInvocation) -> PromptMessage:
        result = registry.execute(invocation.tool_name, ctx, services, invocation.arguments)
        return PromptMessage.tool_result(invocation.tool_use_id, result.to_json())

    calls = [tool_call(SEARCH_HIGHLIGHTS, {"query": "Geneva creature eye"}), "You noted it."]
    provider = ScriptedChatProvider(calls)
    messages = [PromptMessage.system("A reading companion."), PromptMessage.user("My highlights?")]
    outcome = ToolUseRetrievalStrategy().execute(provider, messages, registry.definitions(), run)
    assert outcome.answer == "You noted it."
    assert SEARCH_HIGHLIGHTS in {t.name for t in provider.calls[0].tools or ()}
    sent = provider.calls[1].messages[-1].content
    assert "grew up in Geneva" in sent and "check the map" in sent
    assert not any(word in sent for word in SECRET_WORDS)


def test_a_file_over_the_size_bound_is_refused_naming_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from folio.adapters.parsers import kindle_clippings, koreader_highlights

    mb = 1024 * 1024  # as the setting max_highlights_mb counts
    monkeypatch.setattr(kindle_clippings, "MAX_FILE_BYTES", 2 * mb)
    monkeypatch.setattr(koreader_highlights, "MAX_FILE_BYTES", 2 * mb)
    big = tmp_path / "My Clippings.txt"
    big.write_text(CLIPPINGS * (2 * mb // len(CLIPPINGS) + 1), encoding="utf-8")
    with pytest.raises(HighlightError, match=r"My Clippings\.txt is larger than 2 MB"):
        read_highlights(big)
    lua = tmp_path / "metadata.epub.lua"
    lua.write_text(KOREADER_NEW + " " * 2 * mb, encoding="utf-8")
    with pytest.raises(HighlightError, match=r"metadata\.epub\.lua is larger than 2 MB"):
        read_highlights(lua)
    # the bound the caller gives (the setting) wins over the default
    assert read_highlights(big, max_bytes=3 * mb)
    with pytest.raises(HighlightError, match=r"metadata\.epub\.lua is larger than 0\.5 MB"):
        read_highlights(lua, max_bytes=mb // 2)


def test_a_file_over_the_entry_bound_is_refused_and_nothing_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from folio.app import highlights as use_case

    monkeypatch.setattr(use_case, "MAX_ENTRIES", 2)
    story, store = make_story(), InMemoryHighlightStore()
    highlights = Highlights(store, story.library, lambda _: parse_koreader(loads(KOREADER_NEW)),
                            user_id="local")  # fmt: skip
    with pytest.raises(HighlightError, match="holds 3 entries; folio imports at most 2"):
        highlights.import_file(Path("x.sdr"))
    assert store.of_book(story.book.id, "local") == []


def test_long_fields_are_cut_at_the_bound_and_huge_numbers_are_no_page() -> None:
    from folio.domain.highlights import MAX_TEXT_CHARS

    long = "word " * MAX_TEXT_CHARS
    record = f"{long} (Some One)\n- Your Highlight on page {'9' * 5000} | Location 1-2\n\n{long}\n"
    (found,) = parse_clippings(record)
    assert len(found.title) <= MAX_TEXT_CHARS and len(found.text) <= MAX_TEXT_CHARS
    assert found.page is None and found.location == "Location 1-2"
    lua = loads(KOREADER_NEW)
    lua["annotations"][1]["chapter"] = long
    lua["annotations"][1]["note"] = long
    first = parse_koreader(lua)[0]
    assert len(first.chapter or "") <= MAX_TEXT_CHARS and len(first.note or "") <= MAX_TEXT_CHARS


def test_search_highlights_matches_words_as_the_query_is_read() -> None:
    from dataclasses import replace

    story = make_story()
    store = imported(story)
    geneva = next(h for h in store.of_book(story.book.id, "local") if "Geneva" in h.text)
    store.add([replace(geneva, id="x", key="x", note="die Straße nach Genf")])
    found = run_tool(story, store, query="Straße").data.passages
    assert [p.text.endswith("[the reader's note: die Straße nach Genf]") for p in found] == [True]


# --- anchoring ---------------------------------------------------------------------------------
GUTENBERG = (
    "PREFACE. She wrote it well.\n\nCHAPTER I.\n\nShelley said: “It is _a truth_ univer-\n"
    "sally acknowledged, that a man,” and she—smiling—went on. She left."
)


def test_anchoring_sets_punctuation_quotes_italics_and_hyphenation_aside() -> None:
    anchorer = Anchorer(GUTENBERG)
    span = anchorer.anchor('"It is a truth universally acknowledged that a man" and she smiling')
    assert span is not None
    assert GUTENBERG[span[0] : span[1]] == (
        "It is _a truth_ univer-\nsally acknowledged, that a man,” and she—smiling"
    )
    assert anchorer.anchor("It is a truth universally acknowledged that a woman") is None


def test_a_word_is_found_whole_never_inside_another() -> None:
    anchorer = Anchorer(GUTENBERG)
    assert anchorer.anchor("Shel") is None  # "Shelley" holds it, no word is it
    span = anchorer.anchor("she smiling")
    assert span is not None and GUTENBERG[span[0] : span[1]] == "she—smiling"


def test_front_matter_holds_a_quote_only_when_it_is_found_there_alone() -> None:
    preface = (0, GUTENBERG.index("CHAPTER I."))
    anchorer = Anchorer(GUTENBERG, matter=[preface])
    tap = anchorer.anchor("She")
    assert tap is not None and tap[0] > preface[1]  # the story's "She", not the preface's
    alone = anchorer.anchor("wrote it well")
    assert alone is not None and alone[1] <= preface[1]
    # a device's pointer into the preface is believed
    assert anchorer.anchor("She", near=0, in_matter=True) == (9, 12)


# --- Kindle languages --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "kind", "page", "location"),
    [
        ("- Ihre Markierung auf Seite 9 | bei Position 130-131 | Hinzugefügt am Montag, 30. "
         "Dezember 2024 14:46:33", "highlight", 9, "page 9, Location 130-131"),
        ("- Ihre Notiz bei Position 233 | Hinzugefügt am Dienstag, 5. März 2024 21:12:45",
         "note", None, "Location 233"),
        ("- Votre surlignement sur la page 12 | emplacement 145-147 | Ajouté le mardi 5 mars "
         "2024 09:12:45", "highlight", 12, "page 12, Location 145-147"),
        ("- Votre signet à l'emplacement 144 | Ajouté le samedi 26 décembre 2015 11:21:23",
         "bookmark", None, "Location 144"),
        ("- Tu subrayado en la página 6 | posición 36-40 | Añadido el lunes, 30 de septiembre de "
         "2019 18:00:39", "highlight", 6, "page 6, Location 36-40"),
        ("- La tua evidenziazione alla pagina 6 | posizione 36-40 | Aggiunto in data lunedì 30 "
         "settembre 2019 18:00:39", "highlight", 6, "page 6, Location 36-40"),
        ("- Seu destaque ou posição 2829-2829 | Adicionado: sexta-feira, 29 de novembro de 2019 "
         "18:00:13", "highlight", None, "Location 2829-2829"),
        ("- Je markering op pagina 6 | locatie 36-40 | Toegevoegd op maandag 30 september 2019 "
         "18:00:39", "highlight", 6, "page 6, Location 36-40"),
        ("- 26ページ|位置No. 295-296のハイライト |作成日: 2023年9月4日月曜日 22:53:55",
         "highlight", 26, "page 26, Location 295-296"),
        ("- 22ページ|位置No. 336のメモ |作成日: 2023年6月10日土曜日 9:18:40",
         "note", 22, "page 22, Location 336"),
        ("- 您在第 47 页（位置 #708-710）的标注 | 添加于 2021年3月5日星期五 上午1:26:56",
         "highlight", 47, "page 47, Location 708-710"),
        ("- 您在位置 #209 的书签 | 添加于 2017年12月9日星期六 下午10:09:32",
         "bookmark", None, "Location 209"),
    ],
)  # fmt: skip
def test_kindle_clippings_are_read_in_the_languages_a_kindle_writes(
    line: str, kind: str, page: int | None, location: str
) -> None:
    (found,) = parse_clippings(f"Buch (Autorin)\n{line}\n\nWorte\n==========\n")
    assert (found.kind, found.page, found.location) == (kind, page, location)
    assert (found.title, found.author) == ("Buch", "Autorin") and found.created


# --- entries waiting for their book ------------------------------------------------------------
def test_entries_for_a_book_not_added_wait_and_are_anchored_when_it_is() -> None:
    from dataclasses import replace

    story, store = make_story(), InMemoryHighlightStore()
    entries = [replace(e, title="Frankenstein") for e in parse_koreader(loads(KOREADER_NEW))]
    highlights = Highlights(store, story.library, lambda _: entries, user_id="local")
    report = highlights.import_file(Path("x.sdr"))
    assert report.books == () and [(w.named, w.read, w.added) for w in report.waiting] == [
        ("Frankenstein (Mary Shelley)", 3, 3)
    ]
    assert highlights.import_file(Path("x.sdr")).waiting[0].added == 0  # kept once
    assert Highlights(store, story.library, lambda _: [], user_id="other").waiting() == []
    assert highlights.book_added(story.book) is None  # another title: still waiting
    applied = highlights.book_added(replace(story.book, title="Frankenstein"))
    assert applied is not None and (applied.added, applied.anchored) == (3, 2)
    assert highlights.waiting() == [] and len(store.of_book(story.book.id, "local")) == 3


def test_a_file_naming_no_book_is_refused_unless_a_book_is_given() -> None:
    from dataclasses import replace

    story, store = make_story(), InMemoryHighlightStore()
    entries = [replace(e, title="") for e in parse_koreader(loads(KOREADER_NEW))]
    highlights = Highlights(store, story.library, lambda _: entries, user_id="local")
    with pytest.raises(HighlightError, match="does not name its book"):
        highlights.import_file(Path("metadata.epub.lua"))
    assert highlights.waiting() == []
    assert highlights.import_file(Path("m.lua"), book=story.book).books[0].added == 3


# --- highlights beside the chat's sources -------------------------------------------------------
def test_a_source_carries_the_readers_highlights_inside_it_within_the_window() -> None:
    from folio.agent.tools.highlights import marked_sources
    from folio.domain.conversations import Source

    story = make_story()
    store = imported(story)
    services = ToolServices(story.searcher, story.library, story.library, highlights=store)
    rows = [h for h in store.of_book(story.book.id, "local") if h.anchored]
    inside, later = rows[0], rows[-1]
    around = Source("c1", "Chapter 1", "1", "1", inside.char_start - 5, inside.char_end + 5)
    past = Source("c9", "Chapter 3", "9", "9", later.char_start, later.char_end)
    mine = ToolContext(book=story.book, user="local")
    marked = marked_sources((around, past), mine, services)
    assert [h.text for h in marked[0].highlights] == [inside.text]
    assert marked[1].highlights == ()  # past the position: never shown
    theirs = marked_sources((around,), ToolContext(book=story.book, user="x"), services)
    assert theirs[0].highlights == ()


# --- the offline policy ------------------------------------------------------------------------
def test_offline_asking_for_highlights_lists_them_all_or_those_naming_whom_it_asks_about() -> None:
    from folio.adapters.llm.offline import OfflineChatProvider
    from folio.agent.offline.strategy import OfflineStrategy, asked_terms
    from folio.domain.llm import PromptMessage
    from tests.unit.test_offline_agent import BagOfWords

    assert asked_terms("What did I highlight?") == []
    assert asked_terms("Show my highlights about the map") == ["map"]
    assert asked_terms("What did I note about Geneva?") == ["geneva"]
    story = make_story()
    store = imported(story)
    registry = default_registry()
    services = ToolServices(story.searcher, story.library, story.library, highlights=store)
    ctx = ToolContext(book=story.book, user="local")
    calls: list[dict[str, object]] = []

    def run(invocation):  # type: ignore[no-untyped-def]
        calls.append(dict(invocation.arguments))
        result = registry.execute(invocation.tool_name, ctx, services, invocation.arguments)
        return PromptMessage.tool_result(invocation.tool_use_id, result.to_json())

    strategy = OfflineStrategy(BagOfWords())
    question = [PromptMessage.system("A reading companion."), PromptMessage.user("my highlights")]
    outcome = strategy.execute(OfflineChatProvider(), question, registry.definitions(), run)
    assert calls == [{"query": ""}]
    assert "Victor Frankenstein grew up in Geneva" in outcome.answer
    assert not any(word in outcome.answer for word in SECRET_WORDS)


def test_a_query_naming_only_what_every_entry_is_asks_for_them_all() -> None:
    story = make_story()
    store = imported(story)
    everything = run_tool(story, store).data.passages
    for query in ("What did I highlight?", "my notes", "highlights and bookmarks"):
        assert run_tool(story, store, query=query).data.passages == everything, query
    assert [
        p.chapter for p in run_tool(story, store, query="my notes on Geneva").data.passages
    ] == ["Chapter 1"]
