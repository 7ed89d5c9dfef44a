"""Asking folio from KOReader (``/api/v1/koreader/*``) against a real ``folio serve`` with two
users and the offline provider: the book found by KOReader's digest, the answer bounded by the
place sent with the question (never by the stored position), citations that open their passage
on the device (an xpointer read back lands on it; a PDF's page), the conversation shared with the
other surfaces, both logins (a token, KOReader's sync login), and clear 4xx for everything else.

Requests are shaped as the plugin sends them: KOReader's ``document`` (``partial_md5_checksum``),
``progress`` (``rolling:getLastProgress()``'s xpointer, or a PDF's page as a string) and
``percentage``, with the sync plugin's ``x-auth-user`` / ``x-auth-key`` headers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api_server import FolioServer
from tests.e2e.conftest import ok, ok_json, run_folio_in
from tests.e2e.test_kosync import PASSWORD, auth, koreader_partial_md5

ASK, STORY, PEOPLE = "/api/v1/koreader/ask", "/api/v1/koreader/story", "/api/v1/koreader/people"
# Frankenstein's EPUB: DocFragment[4] is Letter 2, [20] lies in Chapter 14 (3 + 4 letters, ...).
EARLY = "/body/DocFragment[4]/body/section/p[3]/text().10"
LATE = "/body/DocFragment[20]/body/section/p[3]/text().10"
LATER_EVENT = "What happened to Justine at her trial?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, books_dir: Path) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("koreader-ask") / "home"
    formats = books_dir / "formats"
    alice = ok_json(run_folio_in(home, "users", "add", "alice", "--json"))["token"]
    bob = ok_json(run_folio_in(home, "users", "add", "bob", "--json"))["token"]
    ok(run_folio_in(home, "users", "sync-password", "alice", input=PASSWORD + "\n"))
    names = ("frankenstein.epub", "frankenstein.pdf")
    server = FolioServer(home, env={"FOLIO_PROVIDER": "offline"})
    with server, httpx.Client(base_url=server.url, timeout=60) as client:
        ids = {name: _upload(client, alice, formats / name) for name in names}
        yield {
            "client": client,
            "alice": {"authorization": f"Bearer {alice}"},
            "bob": {"authorization": f"Bearer {bob}"},
            "epub": formats / "frankenstein.epub",
            "pdf": formats / "frankenstein.pdf",
            "ids": ids,
        }


def _upload(client: httpx.Client, token: str, path: Path) -> str:
    headers = {"authorization": f"Bearer {token}"}
    job = client.post(
        "/api/v1/books", files={"file": (path.name, path.read_bytes())}, headers=headers
    ).json()["job"]
    while job["status"] in ("queued", "running"):
        time.sleep(0.1)
        job = client.get(f"/api/v1/jobs/{job['job_id']}", headers=headers).json()
    assert job["status"] == "done", job
    return str(job["book_id"])


def _ask(
    s: dict[str, Any],
    progress: str,
    percentage: float,
    *,
    headers: dict[str, str] | None = None,
    **fields: Any,
) -> httpx.Response:
    """A question as the plugin asks it (alice's sync login unless ``headers``)."""
    body = {"document": koreader_partial_md5(s["epub"]), "progress": progress, **fields}
    body["percentage"] = percentage
    return s["client"].post(ASK, json=body, headers=headers or auth(user="alice"))


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"code", "message"} and "Traceback" not in response.text
    return str(error["message"])


def test_a_question_about_later_events_asked_early_cites_nothing_past_the_place(
    served: dict[str, Any],
) -> None:
    early = _ask(served, EARLY, 0.02, question=LATER_EVENT, new_conversation=True)
    late = _ask(served, LATE, 0.5, question=LATER_EVENT, new_conversation=True)

    assert early.status_code == 200 and late.status_code == 200, (early.text, late.text)
    bound = early.json()["position"]["char_offset"]
    assert early.json()["position"]["chapter"] == "Letter 2"
    assert all(c["char_end"] <= bound for c in early.json()["citations"])
    # the same question from Chapter 14 finds the trial: the place sent is what bounds it
    assert late.json()["citations"]
    assert any(c["char_start"] > bound for c in late.json()["citations"])
    assert all(
        c["char_end"] <= late.json()["position"]["char_offset"] for c in late.json()["citations"]
    )
    # the place asked from bounds the question only: the stored position is not moved
    book = served["client"].get(
        f"/api/v1/books/{served['ids']['frankenstein.epub']}", headers=served["alice"]
    )
    assert book.json()["reading_position"]["char_offset"] != bound
    assert "KOReader" not in str(book.json()["reading_position"]["source"])


def test_a_citations_xpointer_read_back_lands_on_its_quoted_passage(
    served: dict[str, Any],
) -> None:
    from folio.adapters.parsers.epub import EpubParser
    from folio.adapters.parsers.koreader_ids import epub_fragments
    from folio.domain.sync import parse_xpointer
    from folio.domain.xpointers import place_in_fragment

    answer = _ask(served, LATE, 0.5, question=LATER_EVENT, new_conversation=True).json()
    text = EpubParser().parse(served["epub"]).text
    fragments = {f.index: f for f in epub_fragments(served["epub"])}

    assert answer["citations"] and "[1]" in answer["answer"]
    for citation in answer["citations"]:
        pointer = parse_xpointer(citation["xpointer"])
        assert pointer is not None and citation["pdf_page"] is None
        fragment = fragments[pointer.fragment]
        part = text[fragment.char_start : fragment.char_end]
        landed = fragment.char_start + place_in_fragment(fragment, pointer, part)
        assert citation["char_start"] < landed <= citation["char_end"], citation
        passage = " ".join(text[citation["char_start"] : citation["char_end"]].split())
        assert passage.startswith(citation["quote"].removesuffix(" …").split(" ")[0])
        assert " ".join(citation["quote"].removesuffix(" …").split()[:6]) in passage


def test_a_pdf_page_bounds_the_answer_and_citations_name_pdf_pages(
    served: dict[str, Any],
) -> None:
    body = {
        "document": koreader_partial_md5(served["pdf"]),
        "progress": "60",
        "percentage": 60 / 121,
        "question": LATER_EVENT,
    }
    response = served["client"].post(ASK, json=body, headers=auth(user="alice"))

    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["citations"]
    for citation in answer["citations"]:
        assert citation["xpointer"] is None and 1 <= citation["pdf_page"] <= 60


def test_the_conversation_is_the_books_latest_shared_with_the_web_page(
    served: dict[str, Any],
) -> None:
    first = _ask(served, LATE, 0.5, question="Who is Elizabeth?", new_conversation=True).json()
    again = _ask(served, LATE, 0.5, question="And Clerval?").json()
    by_prefix = _ask(
        served, LATE, 0.5, question="And Ernest?", conversation_id=first["conversation_id"][:10]
    ).json()

    assert again["conversation_id"] == first["conversation_id"] == by_prefix["conversation_id"]
    assert (first["turn_number"], again["turn_number"], by_prefix["turn_number"]) == (1, 2, 3)
    shown = served["client"].get(
        f"/api/v1/conversations/{first['conversation_id']}", headers=served["alice"]
    )
    asked = [m["content"] for m in shown.json()["messages"] if m["role"] == "user"]
    assert asked == ["Who is Elizabeth?", "And Clerval?", "And Ernest?"]
    unknown = _ask(served, LATE, 0.5, question="Who?", conversation_id="f" * 32)
    assert "conversation_id" in _error(unknown, 404)


def test_a_bearer_token_works_as_the_sync_login_does(served: dict[str, Any]) -> None:
    token = _ask(served, EARLY, 0.02, question="Who is Margaret?", headers=served["alice"])
    story = served["client"].post(
        STORY,
        json={"document": koreader_partial_md5(served["epub"]), "progress": EARLY},
        headers=served["alice"],
    )
    assert token.status_code == 200 and story.status_code == 200, (token.text, story.text)
    assert token.json()["book"]["title"].startswith("Frankenstein")


def test_the_story_and_the_people_so_far_stop_at_the_place(served: dict[str, Any]) -> None:
    place = {
        "document": koreader_partial_md5(served["epub"]),
        "progress": EARLY,
        "percentage": 0.02,
    }
    story = served["client"].post(STORY, json=place, headers=auth(user="alice"))
    people = served["client"].post(PEOPLE, json=place, headers=auth(user="alice"))

    assert story.status_code == 200 and people.status_code == 200, (story.text, people.text)
    bound = story.json()["position"]["char_offset"]
    assert story.json()["citations"] and "[1]" in story.json()["text"]
    assert all(c["char_end"] <= bound and c["xpointer"] for c in story.json()["citations"])
    met = people.json()["people"]
    assert met and all(p["introduced"]["char_end"] <= bound for p in met)
    assert "Justine" not in {p["name"] for p in met}  # she comes in Chapter 6
    later = dict(place, progress=LATE, percentage=0.5)
    met_later = served["client"].post(PEOPLE, json=later, headers=auth(user="alice")).json()
    assert "Justine" in {p["name"] for p in met_later["people"]}


def test_logins_unknown_books_and_bad_input_are_clear_client_errors(
    served: dict[str, Any],
) -> None:
    client = served["client"]
    document = koreader_partial_md5(served["epub"])
    question = {"document": document, "progress": EARLY, "percentage": 0.02, "question": "Who?"}

    assert "sync login" in _error(
        client.post(ASK, json=question, headers=auth(password="wrong", user="alice")), 401
    )
    assert _error(client.post(ASK, json=question), 401)  # users exist: a login is needed
    # bob holds no such file: alice's copy is not his to ask about
    assert "folio add" in _error(client.post(ASK, json=question, headers=served["bob"]), 404)
    unknown = dict(question, document="0" * 32)
    assert "folio add" in _error(client.post(ASK, json=unknown, headers=auth(user="alice")), 404)
    nowhere = {k: v for k, v in question.items() if k != "percentage"}
    nowhere["progress"] = "/body/DocFragment[999]/body/p[2]/text().3"
    assert "percentage" in _error(client.post(ASK, json=nowhere, headers=auth(user="alice")), 422)
    long = dict(question, question="why " * 2500)
    assert "8000 characters" in _error(client.post(ASK, json=long, headers=auth(user="alice")), 413)
    for bad in (
        dict(question, document="not-a-digest"),
        dict(question, percentage=1.5),
        dict(question, percentage=True),
        dict(question, question="  "),
        {k: v for k, v in question.items() if k != "question"},
    ):
        _error(client.post(ASK, json=bad, headers=auth(user="alice")), 422)
    huge = dict(question, question="x" * 200_000)
    assert "max_message_chars" in _error(
        client.post(ASK, json=huge, headers=auth(user="alice")), 413
    )
    # a placeable xpointer needs no percentage
    placed = {k: v for k, v in question.items() if k != "percentage"}
    assert client.post(ASK, json=placed, headers=auth(user="alice")).status_code == 200


def test_zz_a_login_that_failed_too_often_waits_as_progress_sync_makes_it_wait(
    served: dict[str, Any],
) -> None:
    """Last in the module: it locks alice's sync login for the rest of the server's life."""
    question = {"document": koreader_partial_md5(served["epub"]), "progress": EARLY,
                "percentage": 0.02, "question": "Who?"}  # fmt: skip
    wrong = auth(password="wrong", user="alice")
    statuses = [served["client"].post(ASK, json=question, headers=wrong).status_code
                for _ in range(10)]  # fmt: skip
    refused = served["client"].post(ASK, json=question, headers=auth(user="alice"))

    assert statuses == [401] * 10
    _error(refused, 429)
    assert int(refused.headers["retry-after"]) > 0
