"""Shell completion through the real entry point, as bash, zsh and fish ask for it: books by id
prefix or title/author words, conversations by id or title (a book's own when one is named)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import ok, ok_json, run_folio_in


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("completion")
    ids = {}
    for title, author in [("The Sea Wolf", "Jack London"), ("Persuasion", "Jane Austen")]:
        path = home.parent / f"{title}.txt"
        path.write_text(f"{title}\n\nChapter 1\n\nA tale told at length. " * 20, encoding="utf-8")
        added = ok_json(run_folio_in(home, "add", str(path), "--author", author, "--json"))
        ids[title] = added["book"]["id"]
    return home, ids


def complete(home: Path, words: str, shell: str = "bash") -> list[str]:
    """The values the shell would offer for the last word of ``words``."""
    parts = words.split(" ")
    result = run_folio_in(
        home,
        env={"_FOLIO_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
             "COMP_CWORD": str(len(parts) - 1)},
    )  # fmt: skip
    out = ok(result)
    if shell == "bash":
        return [line.split(",", 1)[1] for line in out.splitlines() if line]
    return out.splitlines()


def test_a_book_completes_by_title_words_author_or_id(
    library: tuple[Path, dict[str, str]],
) -> None:
    home, ids = library
    wolf, persuasion = ids["The Sea Wolf"][:8], ids["Persuasion"][:8]
    assert complete(home, "folio chat wol") == [wolf]
    assert complete(home, "folio show jane") == [persuasion]
    assert complete(home, f"folio position {persuasion[:3]}") == [persuasion]
    assert sorted(complete(home, "folio search ")) == sorted([wolf, persuasion])
    assert complete(home, "folio chat zeppelin") == []
    zsh = complete(home, "folio show sea", shell="zsh")
    assert zsh[:3] == ["plain", wolf, "The Sea Wolf"]  # zsh shows the title beside the id


def test_a_conversation_completes_by_title_and_only_the_named_books(
    library: tuple[Path, dict[str, str]],
) -> None:
    home, ids = library
    sea = ok(run_folio_in(home, "conversations", "new", ids["The Sea Wolf"], "--title",
                          "Wolf Larsen")).strip()  # fmt: skip
    other = ok(run_folio_in(home, "conversations", "new", ids["Persuasion"], "--title",
                            "Anne Elliot")).strip()  # fmt: skip
    assert complete(home, "folio conversations show lar") == [sea[:8]]
    assert sorted(complete(home, "folio conversations export ")) == sorted([sea[:8], other[:8]])
    assert complete(home, f"folio chat {ids['Persuasion'][:8]} --conversation ") == [other[:8]]


def test_the_documented_activation_prints_a_completion_script(tmp_path: Path) -> None:
    script = ok(run_folio_in(tmp_path, env={"_FOLIO_COMPLETE": "bash_source"}))
    assert "_folio_completion" in script and "complete -o nosort -F" in script


def test_completing_in_an_empty_home_offers_nothing_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    assert complete(home, "folio chat fra") == []
    assert not (home / "folio.db").exists()
