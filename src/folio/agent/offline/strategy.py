"""The offline agent: no model, no network, the zero-configuration default.

``OfflineStrategy`` runs a turn as a model would, with one small general policy instead of a model:

- the embedder tells the kind of message (``folio.agent.offline.kinds``): small talk gets a short
  reply, a question about folio its help, "who are the main characters?" the people tool, "what
  has happened so far?" the recap tool, "where am I?" the reader's position (and, after questions
  about the book, where the last of them was answered: "what chapter is this?" may ask for the
  scene's); anything else is a question about the book;
- a name the question uses (typed without capitals too: "who is elinor?" asks about the
  "Elinor" of the passages found, ``truecased``) is looked up in the book's lexicon through the
  people tool (a full-text count over the text read when the lexicon does not know it): one
  the reader has not met gets "Nothing up to Chapter 5 mentions X." and no quote (no hint at
  what comes later; the search is still made and kept), unless it misspells a name read ("Mr
  Knightly"): then the question is asked again with that name, said first ("... I took it for
  Mr Knightley."); one they have met is whom the question is about (asked how two people met,
  the one the story brings in later: ``met_later``);
- the search query (``search_query``) is the quoted phrases of a question that quotes the book,
  else the question with the reader's earlier questions, as many of the latest as fit a bound
  (small talk left out) since the current subject started (``subject_start``): one
  ``search_book`` call; a question naming what the last questions did not, that this search found
  nothing about (at most one passage, in a chapter no other passage found is of), starts a new
  subject and is searched again on its own (``switches_topic``).
  Words quoted that no passage found holds get "Nothing up to Chapter 5 has the words “…”."
  first;
- each search fetches ten passages; what the turn decides by (a new subject, the names) is the
  search's first five, what it answers from five ranked again by the sentence that answers and,
  on the same subject, by where the turn before answered from (``folio.agent.offline.ranking``);
  the search is recorded with those five, in that order;
- a question about what comes after the position ("how does it end?", told by the embedder with
  the names masked) gets one plain sentence saying that folio cannot look past it, and no quotes
  (naming someone not met yet: that, and that they are not mentioned, in one sentence);
  one that may ask about it ("Will Marianne recover?") gets its quotes under a sentence saying so;
- a question asking why or how (``explains``) also reads the text around the passage its search
  found first (``read_passage``, as a model would): a cause or a manner often lies beside the
  event;
- a question asking what came right after ("What did he do then?", ``MessageKinds.asks_next``)
  leads with the sentence that follows the last answer's first quote in the book (read around
  it: ``_after_last``);
- the answer quotes the sentences of the passages found that the embedder puts closest to the
  question, none about another person than the one a "who is" asks about
  (``folio.agent.offline.answer``).

It works on typed values only (the tools' results). Of the answers folio gave it reads only where
their quotes lie (the first quote's place for "where am I?", its words for "what came next?", the
quotes before, which a follow-up puts after new ones) and the passages earlier turns answered
from: a name only an answer mentioned is not the reader's. No model call is made (``llm_calls``
is 0); its usage is an ESTIMATE of what a model would have been sent and written (characters /
4), so evaluations can compare the context cost of conversations offline.
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from folio.agent.context import clip
from folio.agent.offline.answer import (
    MAX_QUOTES,
    OFFLINE_NOTE,
    Quote,
    best_quotes,
    compose,
    following,
    in_quotes,
    lead_location,
    lead_quote,
    quote_head,
    read_through,
)
from folio.agent.offline.kinds import (
    ABOUT_FOLIO,
    EXAMPLES,
    GOODBYE,
    GREETING,
    MIN_OWN_SIMILARITY,
    MIN_TOOL_SIMILARITY,
    SMALL_TALK,
    MessageKinds,
)
from folio.agent.offline.ranking import SentenceRanking, beside
from folio.agent.tools.highlights import content_terms
from folio.domain.chapter_labels import reference_in, without_references
from folio.domain.errors import ToolErrorCode
from folio.domain.lexicon import MID_NAME, RUN, name_pattern, normal_form
from folio.domain.llm import (
    PromptMessage,
    PromptRole,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
    ToolResultMessage,
)
from folio.domain.passages import (
    LIST_CHAPTERS,
    PEOPLE,
    READ_PASSAGE,
    RECAP,
    SEARCH_BOOK,
    SEARCH_HIGHLIGHTS,
    ChapterList,
    FoundBy,
    Passage,
    PeopleList,
    Person,
    Recap,
    SearchResults,
    ToolOutcome,
    decode_tool_result,
)
from folio.domain.ports import (
    ChatProvider,
    Embedder,
    RetrievalOutcome,
    SentenceVectorSource,
    TextSink,
    ToolRunner,
)
from folio.domain.search import STOPWORDS, phrase_key, query_terms, quoted_phrases

MAX_NAMES = 2  # names of one question looked up
NAME_SHARE = 2  # a word capitalised mid-sentence more than twice as often as not is a name
EARLIER_CHARS = 2000  # of earlier questions in a search query: one bounded search however long
RECENT_QUESTIONS = 3  # a name none of these used starts a new topic
SAME_SUBJECT = 2  # passages of a search holding a new name for it to be the same subject
# a name coming up in this share of the text read is in 2 of 5 passages of any search, about
MIN_SHARE = 0.4
# the interrogatives that ask for a cause or a manner: the sentences around the event found may
# hold it. "Why did the banker Harrogate get himself captured by the brigands?" finds the arrest;
# the policeman's explanation follows it, in the next passage. On the CoQA dev set (78 such
# questions) the quotes were the same with and without it (quote_evidence.py, e3050cc)
EXPLAINING = frozenset({"why", "how"})
CANNOT_LOOK = "I cannot look past where you have read"
LATER_REPLY = f"Nothing {{where}} answers this, and {CANNOT_LOOK}."
LATER_NOTE = f"{CANNOT_LOOK}: this is only what the book says {{where}}."
NARRATES = "{name} narrates the story you have read: the “I” of its narration."
# a narration saying "I", "me", "my" less often than this tells its story in the third person
# (``PeopleList.first_person``: Austen, Chesterton, White Fang under 0.5%, Vanity Fair's narrator
# 0.5-0.6%; Moby Dick 1.9-2.9%, Frankenstein 6-7%, the KJV 1.5-2.3%, plays and poems 3-6%)
THIRD_PERSON = 0.01
THIRD_PERSON_REPLY = (
    "No one in the story you have read tells it: it is told in the third person (its narration"
    " hardly ever says “I”)."
)
ECHOED = 80  # characters of a question the answer repeats
_DELTA = re.compile(r"\S+\s*|\s+")
# a pronoun that is the object of the question, so someone other than its subject: someone the
# conversation named ("What did Emma plan for her?"). "her" is one only before a stopword or the
# end ("her engagement" is the subject's own)
_OBJECT = re.compile(r"\b(?:him|them)\b|\bher\b(?:\W*$|\s+(?P<next>[A-Za-z]+))", re.IGNORECASE)
_NUMBER = re.compile(r"\b\d+\b")
_CAPITALISED = re.compile(r"(?<=\S )[A-Z][a-z]")  # a capitalised word after the first
_LOWER_WORDS = re.compile(r"\b[a-z]+\b")
_ASKED_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
REPLIES = {
    GREETING: "Hello! Ask me about the book: characters, events, places. I will quote the pages.",
    GOODBYE: "Goodbye, and happy reading!",
}
THANKS_REPLY = "You're welcome! Ask me anything else about the book."
FOLIO_HELP = (
    "I am folio, a reading companion. Ask me about the book as far as you have read it: who "
    "someone is, what happened, why a character acted, what a place looks like. I search the "
    "book and quote the passages with their pages, and I never reveal anything past your reading "
    "position. You can also ask for the story so far or the people met so far. In the terminal, "
    "/help lists the commands; `folio position` sets how far you have read."
)


class OfflineStrategy:
    """Implements ``RetrievalStrategy`` without a model (see the module docstring)."""

    name = "extractive"

    def __init__(
        self, embedder: Embedder, *, k: int = 5, sentences: SentenceVectorSource | None = None
    ) -> None:
        self._embedder = embedder
        self._kinds = MessageKinds(embedder, asked_names)
        self._ranking = SentenceRanking(embedder, sentences)
        self.k = k

    def execute(
        self,
        chat_provider: ChatProvider,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition],
        run_tool: ToolRunner,
        *,
        on_text: TextSink | None = None,
    ) -> RetrievalOutcome:
        """``chat_provider`` is not called: the answer is extracted from the book."""
        *head, last = messages
        question = last.content.strip()
        available = {tool.name for tool in tools}
        # a chapter the question names is told apart as "this chapter", however the book
        # divides itself: "What happens in Act 1, Scene 2?" asks what "in this chapter" does (its
        # recap), "What happens after chapter 8?" what "after this chapter" does (later events)
        named = reference_in(question)
        kind = self._kinds.kind(question.replace(named, "this chapter") if named else question)
        if kind in SMALL_TALK or kind == ABOUT_FOLIO:
            reply = FOLIO_HELP if kind == ABOUT_FOLIO else REPLIES.get(kind, THANKS_REPLY)
            return _outcome(reply, (), (), on_text, kind, messages)
        own = self._own_notes(question, kind, run_tool, available)
        if own is not None and own.sure:
            return _outcome(own.answer, own.calls, (), on_text, SEARCH_HIGHLIGHTS, messages)
        # a chapter the question names ("What happens in Part II, Chapter IV?"): its recap, or
        # the recap tool's word that it lies past the position
        chapter = named or next(iter(_NUMBER.findall(question)), None)
        if kind in (PEOPLE, RECAP, LIST_CHAPTERS) and kind in available:
            arguments: dict[str, Any] = {"chapter": chapter} if kind == RECAP and chapter else {}
            calls: tuple[PromptMessage, ...] = ()
            this = kind == RECAP and chapter is None and LIST_CHAPTERS in available
            if this and self._kinds.asks_this_chapter(question):  # the last chapter reached
                reached, calls = _call(run_tool, LIST_CHAPTERS, {})
                if isinstance(reached.payload, ChapterList) and reached.payload.chapters:
                    arguments = {"chapter": reached.payload.chapters[-1].title}
            outcome, more = _call(run_tool, kind, arguments)
            answer, queries = reader_answer(outcome, arguments.get("chapter")), tuple[str, ...]()
            if kind == LIST_CHAPTERS and outcome.success and SEARCH_BOOK in available:
                answer, found, queries = self._discussed(answer, head, run_tool, available)
                more = (*more, *found)
            return _outcome(answer, (*calls, *more), queries, on_text, kind, messages)
        if SEARCH_BOOK not in available:
            return _outcome("I cannot search this book here.", (), (), on_text, "none", messages)
        narrated: tuple[PromptMessage, ...] = ()
        told: str | None = None
        if PEOPLE in available and self._kinds.asks_narrator(question):  # "Who is the narrator?"
            told, narrated = self._narrator(run_tool)
            if told is not None and told != THIRD_PERSON_REPLY:
                return _outcome(told, narrated, (), on_text, PEOPLE, messages)
        answer, calls, queries, stop, evidence = self._book_answer(
            question, head, run_tool, available
        )
        calls = (*narrated, *calls)
        if told is not None:  # said first; the passages closest may still tell whose story it is
            answer = f"{told}\n{answer}"
        if own is not None:  # the reader's own notes on what the question names, first
            answer, calls = f"{own.answer}\n\n{answer}", (*own.calls, *calls)
        return _outcome(answer, calls, queries, on_text, stop, messages, evidence)

    def _narrator(self, run_tool: ToolRunner) -> tuple[str | None, tuple[PromptMessage, ...]]:
        """Who tells the story, as the people met say: the first of them who narrates
        (``Person.narrates``), looked up by name for how their story opens (``Person.told``), in
        one answer with its page. When no one met narrates, a narration that hardly ever says
        "I" (``PeopleList.first_person`` under ``THIRD_PERSON``) is said to be in the third
        person, above the book's answer ("Whose tale was this?" is as close to asking so as "Who
        is the narrator?" and asks whom the story is about); else None (a narrator never named,
        a play, a poem): the book is searched as for any question. At most two
        ``people_so_far`` calls."""
        listed, calls = _call(run_tool, PEOPLE, {})
        people = listed.payload.people if isinstance(listed.payload, PeopleList) else ()
        narrator = next((p for p in people if p.narrates), None)
        voice = listed.payload.first_person if isinstance(listed.payload, PeopleList) else None
        if narrator is None and voice is not None and voice < THIRD_PERSON:
            return THIRD_PERSON_REPLY, calls
        if narrator is None:
            return None, calls
        found, more = _call(run_tool, PEOPLE, {"name": narrator.name})
        calls, payload = (*calls, *more), found.payload
        if isinstance(payload, PeopleList) and payload.people and payload.people[0].narrates:
            narrator = payload.people[0]
        line = NARRATES.format(name=narrator.name)
        if narrator.told is None or not isinstance(payload, PeopleList):
            return line, calls
        where = read_through(payload.reading_limit)
        return f"{line}\n{compose([Quote(narrator.told.text, narrator.told, 1.0)], where)}", calls

    def _discussed(
        self, answer: str, head: Sequence[PromptMessage], run_tool: ToolRunner, available: set[str]
    ) -> tuple[str, tuple[PromptMessage, ...], tuple[str, ...]]:
        """The reader's position told (``answer``), then where their last question about the
        book was answered: "what chapter is this?" after questions about a scene may ask for the
        scene's chapter, not the reader's. The place of that answer's first quote (what the
        reader read; no search), also with small talk between; when the window no longer holds
        that answer, the passage closest to the question, searched as it was (with the
        subject's questions before it: one ``search_book`` call, within the reading window).
        Nothing is added before any such question, nor after one whose answer quoted nothing,
        asked about later events or named someone not met yet: those answers said nothing here
        answers them."""
        _, subject = self._asked(head)
        if not subject or self._kinds.asks_later(subject[-1]):
            return answer, (), ()
        last = subject[-1]
        echoed = clip(last, ECHOED - 1)
        answered = _answer_to(head, last)
        if answered is not None:  # where its answer's first quote lies
            where = lead_location(answered)
            if where is None:  # it quoted nothing: nothing here answers it
                return answer, (), ()
            return f"{answer}\nYour last question (“{echoed}”) was answered from {where}.", (), ()
        _, calls, unmet, _ = self._names(last, run_tool, available)
        if unmet is not None:
            return answer, calls, ()
        query = search_query(last, subject[:-1])
        found, more = _call(run_tool, SEARCH_BOOK, {"query": query, "k": self.k})
        calls = (*calls, *more)
        if not found.passages:
            return answer, calls, (query,)
        where = found.passages[0].location
        told = f"The passage closest to your last question about the book (“{echoed}”): {where}."
        return f"{answer}\n{told}", calls, (query,)

    def _asked(self, head: Sequence[PromptMessage]) -> tuple[list[str], list[str]]:
        """The reader's earlier questions about the book: all of them, and those of the current
        subject (``subject_start``)."""
        asked = [m.content for m in head if m.role is PromptRole.USER]
        return self._kinds.book_questions(asked), self._kinds.book_questions(
            asked[subject_start(head) :]
        )

    def _own_notes(
        self, question: str, kind: str, run_tool: ToolRunner, available: set[str]
    ) -> _OwnNotes | None:
        """The reader's highlights a question asks for. Sure (answered from them alone) when the
        embedder puts the question, names masked, as close to asking for them as a tool must
        be: all of them, or those holding the words it adds to the asking (the names it uses,
        else its other words). Possible when it is less close (``MIN_OWN_SIMILARITY``): then
        only highlights holding what it names are shown, before the book's answer, and none
        means no mention."""
        if SEARCH_HIGHLIGHTS not in available:
            return None
        names = asked_names(question)
        closeness = self._kinds.own_notes(question)
        sure = kind == SEARCH_HIGHLIGHTS or closeness >= MIN_TOOL_SIMILARITY
        if not sure and closeness < MIN_OWN_SIMILARITY:
            return None
        query = " ".join(names) or " ".join(asked_terms(question))
        if not sure and not query:
            return None
        outcome, calls = _call(run_tool, SEARCH_HIGHLIGHTS, {"query": query})
        if not sure and not outcome.passages:
            return None
        return _OwnNotes(highlights_answer(outcome, closing=sure), calls, sure)

    def _book_answer(
        self,
        question: str,
        head: Sequence[PromptMessage],
        run_tool: ToolRunner,
        available: set[str],
    ) -> tuple[str, tuple[PromptMessage, ...], tuple[str, ...], str, FoundBy]:
        """The answer from the book's passages: (answer, tool calls, queries, stop reason, the
        passages it was drawn from in their ranked order, by their query)."""
        earlier, subject = self._asked(head)
        pools: dict[str, tuple[ToolOutcome, str]] = {}  # each search's passages and call id

        def search(query: str) -> tuple[ToolOutcome, tuple[PromptMessage, ...]]:
            return self._search(run_tool, query, pools)

        quotes = bool(quoted_phrases(question))  # searched as written: no other search
        # the names it writes with capitals are looked up before it is searched: a question
        # about someone who tells the story is searched as they would tell it ("How did my
        # mother die?"), then as asked (the first person alone is any narrator's: Walton's)
        looked = not quotes and bool(asked_names(question))
        met, calls, unmet, taken = (
            self._names(question, run_tool, available) if looked else ({}, (), None, {})
        )
        narrator, mine = self._as_told(question, met, quotes)
        query = search_query(mine or question, subject)
        found, more = search(query)
        queries: tuple[str, ...] = (query,)
        calls = (*calls, *more)
        # the question with its names as the book writes them, when typed without capitals
        # ("who is elinor?"): the names looked up and asked about. Whether it starts a new
        # subject goes by the question as written (CoQA's lowercase questions: searched as
        # the capitalised ones, anthology recall 0.911 -> 0.908; as written, unchanged)
        named = truecased(question, found.passages)
        if not looked or asked_names(named) != asked_names(question):  # names found only now
            met, more, unmet, taken = self._names(named, run_tool, available)
            calls = (*calls, *more)
            narrator, mine = self._as_told(named, met, quotes)
            if mine is not None:  # searched again, as they tell it
                query = search_query(mine, subject)
                found, more = search(query)
                queries, calls = (*queries, query), (*calls, *more)
        # whom the question is about: the first met (asked how two met: the later, below)
        about = next(iter(met.values()), None)
        if taken and unmet is None:  # asked again with the names as the book writes them
            where = read_through(found.payload.reading_limit) if found.payload else "so far"
            fixed = named
            for name, near in taken.items():
                fixed = re.sub(rf"\b{re.escape(name)}\b", near, fixed)
            answer, again, searched, stop, drawn = self._book_answer(
                fixed, head, run_tool, available
            )
            wrote, took = " and ".join(taken), " and ".join(taken.values())
            note = f"Nothing {where} mentions {wrote}: I took it for {took}."
            return f"{note}\n{answer}", (*calls, *again), (*queries, *searched), stop, drawn
        # may start a new subject: not a quote, nor a question about the narrator (searched as
        # they would tell it: the name alone finds the speeches addressing them)
        new = not quotes and mine is None and query != question
        if new and switches_topic(question, earlier, found.passages):
            query = question  # a new subject: searched on its own, answered from that search
            found, more = search(query)
            queries, calls = (*queries, query), (*calls, *more)
        elif new and common_new_name(question, earlier, met):
            alone, more = search(question)
            ids = {p.chunk_id for p in found.passages}
            if alone.passages and not ids & {p.chunk_id for p in alone.passages}:
                found, query = alone, question  # a new subject, answered from its own search
                queries, calls = (*queries, question), (*calls, *more)
            else:  # the same subject: recorded before the search answered from
                queries, calls = (question, *queries), (*more, *calls)
        evidence: FoundBy = ()
        # where the event asked why or how about was found: the search's own first passage
        event = found.passages[0] if found.passages else None
        if not quotes and query in pools:  # its passages ranked by the sentences that answer
            recent = " ".join([mine or question, *reversed(earlier[-RECENT_QUESTIONS:])])
            # the same subject, and its search still finds where the last answer came from (its
            # results are recorded in the order ranked: the next turn's anchor is their first)
            anchor = None if query == question else last_ranked(head)
            if anchor is not None and not any(beside(p, anchor) for p in found.passages):
                anchor = None
            pool, call_id = pools[query]
            ranked = self._ranking.rank(recent, pool.passages, near=anchor)[: self.k]
            found, evidence = _first(found, ranked), ((query, ranked),)
            calls = _recorded(calls, call_id, found)
        payload = found.payload
        where = read_through(payload.reading_limit if isinstance(payload, SearchResults) else "")
        if unmet is not None:  # a name not met: its sentence and nothing that reads as a hint
            beyond = self._kinds.asks_later(question) or self._kinds.may_ask_later(question)
            if where != "in the book" and beyond:  # "What happens to White Fang at the end?"
                unmet = f"{unmet.removesuffix('.')}, and {CANNOT_LOOK}."
            return unmet, calls, queries, "unmet", evidence
        around: tuple[Passage, ...] = ()
        if explains(question) and event is not None and READ_PASSAGE in available and not quotes:
            read, more = _call(run_tool, READ_PASSAGE, {"chunk_id": event.chunk_id})
            calls, around = (*calls, *more), read.passages
        later = where != "in the book" and self._kinds.asks_later(question)
        misquoted = _unmet_phrase(question, found, where)
        if misquoted is None and later:  # nothing quoted: a quote would read as a hint
            return LATER_REPLY.format(where=where), calls, queries, "later", evidence
        said = next((m.content for m in reversed(head) if m.role is PromptRole.ASSISTANT), "")
        # a question that names no one leans on the one before for its subject ("What happens
        # to him?" after "Who is Henry Clerval?"): its sentences are ranked against both
        asked = mine or named  # a narrator's question, as they would tell it
        ranked_for = asked if asked_names(named) or not earlier else f"{asked} {earlier[-1]}"
        if not found.success or not isinstance(payload, SearchResults):
            failed = f"I could not search the book: {found.error or 'the search failed.'}"
            return failed, calls, queries, "answered", evidence
        who = about is not None and self._kinds.asks_who(named)  # "tell me about Marianne"
        meeting = who and self._kinds.asks_meeting(named)
        # asked who the narrator is ("Who is Victor?"; not "Who is Elizabeth to Victor?", nor
        # how Victor met Clerval): said first
        telling = narrator is not None and narrator[1] is about and not (mine or quotes or meeting)
        if meeting and about is not None:  # "How did Marianne meet Willoughby?": where they
            # met (Willoughby first named, carrying her home), not who he is (a chapter later)
            about = replace(met_later(met.values()) or about, described=None)
        # of a narrator, the sentences naming them are others' speech to them ("Come, Victor;")
        of = None if mine is not None else about
        chosen = best_quotes(
            self._embedder, ranked_for, found.passages, of, said=said, around=around, who=who
        )
        if self._kinds.asks_next(named) and READ_PASSAGE in available:
            after, more = self._after_last(head, run_tool)
            calls = (*more, *calls)  # the question's own search stays last (``subject_start``)
            if after is not None:  # what came right after the last answer's first quote
                kept = [q for q in chosen if q.sentence != after.sentence]
                chosen = [after, *kept][:MAX_QUOTES]
        answer = compose(chosen, where)
        if narrator is not None and telling:
            line = NARRATES.format(name=narrator[1].name)
            answer = f"{line}\n{answer}" if chosen else line
        if where != "in the book" and self._kinds.may_ask_later(question):
            # said plainly above what the text read shows, or alone when it shows nothing
            note = LATER_NOTE.format(where=where)
            answer = f"{note}\n{answer}" if chosen else LATER_REPLY.format(where=where)
        if misquoted is not None:  # said first, alone on its line; the closest passages read
            # may still hold what the reader remembers in other words
            answer = f"{misquoted}\n{answer}" if chosen else misquoted
        return answer, calls, queries, "answered", evidence

    def _search(
        self, run_tool: ToolRunner, query: str, pools: dict[str, tuple[ToolOutcome, str]]
    ) -> tuple[ToolOutcome, tuple[PromptMessage, ...]]:
        """``search_book`` for ``query``, fetching the sentence ranking's pool: the outcome keeps
        the search's first ``k`` passages (what the turn decides by, as the search ranked them,
        and what its call records), ``pools`` all of them with the call's id (what the answer's
        passages are ranked from, and the call whose record then holds them as ranked)."""
        pool, calls = _call(run_tool, SEARCH_BOOK, {"query": query, "k": self._ranking.pool})
        found = _first(pool, pool.passages[: self.k])
        call_id = next((m.tool_use_id for m in calls if isinstance(m, ToolResultMessage)), "")
        pools[query] = pool, call_id
        return found, _recorded(calls, call_id, found)

    def _as_told(
        self, question: str, met: Mapping[str, Person], quotes: bool
    ) -> tuple[tuple[str, Person] | None, str | None]:
        """The narrator ``question`` names (``Person.narrates``), and the question as they
        would tell it then as asked (``told_by``), or None for a quote, for one asking who they
        are, or when nothing else is asked of them."""
        narrator = next(((n, p) for n, p in met.items() if p.narrates), None)
        told = told_by(question, *narrator) if narrator and not quotes else None
        mine = f"{told} {question}" if told and not self._kinds.asks_who(question) else None
        return narrator, mine

    def _after_last(
        self, head: Sequence[PromptMessage], run_tool: ToolRunner
    ) -> tuple[Quote | None, tuple[PromptMessage, ...]]:
        """The sentence that follows, in the book, the first quote of the latest answer in
        ``head`` that quoted the book (small talk between is passed over): its first words
        searched as a phrase (one ``search_book`` call), the text around the passage found read
        (one ``read_passage``), within the reading window as every tool is."""
        said = (m.content for m in reversed(head) if m.role is PromptRole.ASSISTANT)
        quote = next((q for answer in said if (q := lead_quote(answer))), None)
        if quote is None:
            return None, ()
        phrase = quote_head(quote)
        found, calls = _call(run_tool, SEARCH_BOOK, {"query": f'"{phrase}"', "k": 1})
        if not found.passages or found.passages[0].chunk_id is None:
            return None, calls
        read, more = _call(run_tool, READ_PASSAGE, {"chunk_id": found.passages[0].chunk_id})
        after = next((f for p in read.passages if (f := following(p, quote))), None)
        return after, (*calls, *more)

    def _names(
        self, question: str, run_tool: ToolRunner, available: set[str]
    ) -> tuple[dict[str, Person], tuple[PromptMessage, ...], str | None, dict[str, str]]:
        """Each name the question uses that the reader has met (in the question's order), the
        people calls made, the honest reply when it uses a name not met so far, and each name
        it misspells with the name read it is taken for ("Mr Knightly": "Mr Knightley")."""
        met: dict[str, Person] = {}
        taken: dict[str, str] = {}
        calls: tuple[PromptMessage, ...] = ()
        if PEOPLE not in available:
            return met, (), None, taken
        for name in asked_names(question)[:MAX_NAMES]:
            outcome, more = _call(run_tool, PEOPLE, {"name": name})
            calls = (*calls, *more)
            payload = outcome.payload
            if not isinstance(payload, PeopleList):
                continue
            if not payload.people:
                where = read_through(payload.reading_limit)
                return met, calls, f"Nothing {where} mentions {name}.", taken
            met[name] = payload.people[0]
            if payload.misspelt:  # under the name read nearest the one asked
                taken[name] = payload.people[0].name
        return met, calls, None, taken


def _first(found: ToolOutcome, passages: Sequence[Passage]) -> ToolOutcome:
    """``found`` (a search's outcome) holding ``passages`` instead of all it found."""
    if not isinstance(found.payload, SearchResults):
        return found
    return replace(found, payload=replace(found.payload, passages=tuple(passages)))


def last_ranked(head: Sequence[PromptMessage]) -> Passage | None:
    """The first passage the latest turn in ``head`` that searched the book answered from: the
    first of its last ``search_book`` results (the search it answered from is recorded last, in
    the order ranked; a passage read around it after, a recap, a people list do not count);
    None when no turn searched. Small talk between is passed over."""
    for message in reversed(head):
        if message.role is PromptRole.TOOL_RESULT:
            payload = decode_tool_result(message.content).payload
            if isinstance(payload, SearchResults) and payload.passages:
                return payload.passages[0]
    return None


def _recorded(
    calls: tuple[PromptMessage, ...], call_id: str, outcome: ToolOutcome
) -> tuple[PromptMessage, ...]:
    """``calls`` with the result of the call ``call_id`` recorded as ``outcome``."""
    return tuple(
        replace(m, content=outcome.to_json(), outcome=outcome)
        if isinstance(m, ToolResultMessage) and m.tool_use_id == call_id
        else m
        for m in calls
    )


def _answer_to(head: Sequence[PromptMessage], question: str) -> str | None:
    """The answer folio gave the latest asking of ``question`` in ``head`` (None: not there)."""
    asked = [i for i, m in enumerate(head) if m.role is PromptRole.USER]
    at = next((i for i in reversed(asked) if head[i].content == question), None)
    if at is None:
        return None
    after = next((i for i in asked if i > at), len(head))
    turn = head[at:after]
    return next((m.content for m in reversed(turn) if m.role is PromptRole.ASSISTANT), None)


def met_later(people: Iterable[Person]) -> Person | None:
    """Of the people a question asks how they met, the one the story brings in later: they
    meet where that one comes in. Places are no one; a person first met in this book comes in
    after one of an earlier volume; two first met in different earlier volumes are not told
    apart (None)."""
    persons = [p for p in people if not p.place]
    if len(persons) < 2:
        return None
    pool = [p for p in persons if p.first.volume is None] or persons
    if len({p.first.book_id for p in pool}) > 1:
        return None
    return max(pool, key=lambda p: p.first.char_start)


def search_query(question: str, earlier: Sequence[str]) -> str:
    """What one question searches first, given the reader's earlier questions about the book: a
    question quoting text ('Where does it say "I had worked hard"?') searches the quoted phrases
    alone, each as a phrase; any other question is searched with the latest earlier questions
    that fit in ``EARLIER_CHARS``, the latest first (a follow-up leans on them: "what did he
    do then?"; the embedder reads a bounded number of words, so the oldest are the ones it may
    leave out). ``switches_topic`` tells when that search missed a new subject."""
    phrases = quoted_phrases(question)
    if phrases:
        return " ".join(f'"{p}"' for p in phrases)
    kept: list[str] = []
    room = EARLIER_CHARS
    for text in reversed(earlier):
        room -= len(text) + 1
        if room < 0:
            break
        kept.append(text)
    return " ".join([question, *kept])


def subject_start(head: Sequence[PromptMessage]) -> int:
    """Where the conversation's current subject starts, as an index into the reader's earlier
    messages: the latest question its turn settled on searching on its own (the last query of its
    ``search_book`` calls is the question as written: a new subject, ``switches_topic``), else 0.
    A question after it leans on the questions since, not on an earlier subject's: after "What
    was the quarrel between Dr Hirsch and Colonel Dubosc about?" turned to story III, "Why did
    they fight?" is searched with it, without the questions about story I before it. Needs the
    earlier turns' calls in ``head`` (``RecentTurnsStrategy(keep_calls=True)``); without them
    (history seeded from elsewhere) the subject is the whole conversation."""
    questions: list[str] = []
    last: dict[int, str] = {}  # each question's last search
    for message in head:
        if message.role is PromptRole.USER:
            questions.append(message.content.strip())
            continue
        for call in message.tool_invocations:
            if call.tool_name == SEARCH_BOOK and questions:
                last[len(questions) - 1] = str(call.arguments.get("query", "")).strip()
    return max((i for i, query in last.items() if query == questions[i]), default=0)


def switches_topic(question: str, earlier: Sequence[str], found: Sequence[Passage]) -> bool:
    """Does ``question`` start a new subject that the search with the conversation missed? It
    names someone or something none of the latest ``RECENT_QUESTIONS`` questions did, and at
    most one passage that search found holds that name (its last word: "Clerval" of "Henry
    Clerval"), in a chapter no other passage found is of. A new name most of the found passages
    hold, or one that a passage of the chapter the search found holds, is the same subject: a
    character of the scene being discussed, where the conversation still helps ("Does Vane think
    that's reliable?" six questions after "Who is related to the Captain?")."""
    new = new_names(question, earlier)
    texts = [p.text.lower() for p in found]

    def scene(held: Passage) -> bool:  # another passage found is of its chapter
        place = (held.book_id, held.chapter)
        return held.chapter is not None and any(
            p is not held and (p.book_id, p.chapter) == place for p in found
        )

    def apart(name: str) -> bool:
        word = re.compile(rf"\b{re.escape(name.split()[-1].lower())}\b")
        held = [p for p, t in zip(found, texts, strict=True) if word.search(t)]
        return len(held) < SAME_SUBJECT and not any(scene(h) for h in held)

    return any(apart(n) for n in new)


def common_new_name(question: str, earlier: Sequence[str], met: Mapping[str, Person]) -> bool:
    """Does ``question`` name someone none of the latest ``RECENT_QUESTIONS`` questions did who
    comes up in so much of the text read (``Person.share`` at least ``MIN_SHARE``: a
    protagonist) that any search finds passages naming them? Then that the conversation's
    search found such passages does not say the subject is the same ("Why did Anne break off her
    engagement?" after "Who is Captain Wentworth?"): the question is searched on its own too.
    Not when it also points at someone else with an object pronoun: "What did Emma plan for
    her?" after "Who is Harriet Smith?" is about Harriet too."""
    new = new_names(question, earlier)
    common = any(p.share >= MIN_SHARE for n, p in met.items() if n in new)
    return common and not any(
        m.group("next") is None or m.group("next").lower() in STOPWORDS
        for m in _OBJECT.finditer(question)
    )


def new_names(question: str, earlier: Sequence[str]) -> list[str]:
    """The names ``question`` uses that none of the latest ``RECENT_QUESTIONS`` questions did."""
    recent = " ".join(earlier[-RECENT_QUESTIONS:]).lower()
    return [n for n in asked_names(question) if n.lower() not in recent]


def explains(question: str) -> bool:
    """Does ``question`` ask why or how something happened? Its first word is one of
    ``EXPLAINING``: the cause or the manner of an event often lies beside the passage that
    names it, so the text around the best passage is read too."""
    words = re.findall(r"[a-z]+", question.lower())
    return bool(words) and words[0] in EXPLAINING


def _unmet_phrase(question: str, found: ToolOutcome, where: str) -> str | None:
    """The honest reply when the question quotes words that no passage found holds."""
    phrases = quoted_phrases(question)
    texts = [phrase_key(p.text) for p in found.passages]
    missing = next((p for p in phrases if not any(phrase_key(p) in t for t in texts)), None)
    return None if missing is None else f"Nothing {where} has the words “{missing}”."


def truecased(question: str, passages: Sequence[Passage]) -> str:
    """``question`` as the book would write it when the reader typed it without capitals ("who
    is elinor?", "WHO IS ELINOR?"): each word the ``passages`` found write capitalised
    mid-sentence more than ``NAME_SHARE`` times as often as in lower case (as the lexicon
    tells a name: "Colonel" of "Colonel Brandon", though "the colonel" too) takes their form
    ("Elinor", "MacIan"), so that its names are looked up and asked about. A question with a
    capitalised word after its first is as written ("Who is Elinor?", "what did Elinor say?")."""
    if _CAPITALISED.search(question) and not question.isupper():
        return question
    text = " ".join(p.text for p in passages)
    lower = Counter(_LOWER_WORDS.findall(text))
    capitalised = Counter(MID_NAME.findall(text))
    forms = {w.lower(): w for w, _ in reversed(capitalised.most_common())}  # the most written

    def written(m: re.Match[str]) -> str:
        word = m.group().lower()
        form = forms.get(word)
        return form if form and lower[word] * NAME_SHARE < capitalised[form] else word

    return _ASKED_WORD.sub(written, question.lower() if question.isupper() else question)


def told_by(question: str, name: str, person: Person) -> str | None:
    """``question`` as ``person``, who tells the story (``Person.narrates``), would ask it of
    their own story: each of its names of them (``name`` as asked, or one of their forms) in the
    first person ("How did Victor's mother die?": "How did my mother die?"; "What does Victor
    create?": "What does I create?"), since the story calls them "I" and only others' speech
    names them. None when that leaves nothing asked ("Who is Victor?")."""
    named = name_pattern(name, person.name, *person.aliases)  # "Mr. Lockwood" too
    own = re.compile(rf"(?:{named.pattern})(?P<own>['’]s\b)?")
    told = own.sub(lambda m: "my" if m.group("own") else "I", question)
    asked = [t for t in query_terms(told) if t not in STOPWORDS]
    return told if told != question and asked else None


def asked_names(question: str) -> list[str]:
    """The names a question uses: its runs of capitalised words, without the function words
    that open them ("Who", "What"); a single word opening the question ("Tell me about...")
    counts only inside a longer run ("Henry Clerval was..."). A chapter reference is no one's
    name: "What happened in Chapter 5?" names no one."""
    start = len(question) - len(question.lstrip())
    names = []
    for m in RUN.finditer(without_references(question)):
        words = normal_form(m.group()).split()
        while words and words[0].lower() in STOPWORDS:
            words.pop(0)
        if not words or (m.start() == start and len(m.group().split()) == 1):
            continue
        names.append(" ".join(words))
    return list(dict.fromkeys(names))


def asked_terms(question: str) -> list[str]:
    """The words a question about the reader's highlights adds to asking for them: its words
    but stopwords, the kinds of entry and the words of the highlights kind's own examples
    ("show", "highlight", "notes": every highlight is one, so they select none)."""
    own = {t for e in EXAMPLES[SEARCH_HIGHLIGHTS] for t in query_terms(e)}
    return [t for t in content_terms(question, own) if t not in STOPWORDS]


@dataclass(frozen=True, slots=True)
class _OwnNotes:
    answer: str
    calls: tuple[PromptMessage, ...]
    sure: bool


def _call(
    run_tool: ToolRunner, tool: str, arguments: dict[str, Any]
) -> tuple[ToolOutcome, tuple[PromptMessage, ...]]:
    """One tool call through the registry: its typed outcome and the messages to store."""
    call = ToolInvocation(tool, f"offline_{uuid.uuid4().hex[:12]}", arguments)
    result = run_tool(call)
    outcome = result.typed() if isinstance(result, ToolResultMessage) else None
    return outcome or decode_tool_result(result.content), (
        PromptMessage.assistant("", (call,)),
        result,
    )


# a recap's chapter: none so named, or several (asked back)
ASKED_BACK = frozenset({ToolErrorCode.NOT_FOUND, ToolErrorCode.AMBIGUOUS})


def reader_answer(outcome: ToolOutcome, asked: str | None = None) -> str:
    """The offline answer from a recap or a people list, quoted with pages; ``asked``: the
    chapters a recap was asked for as the reader named them ("part 2"), its heading when it
    spans several."""
    payload = outcome.payload
    if not outcome.success and outcome.error and outcome.error_code in ASKED_BACK:
        return outcome.error  # a question back, in the book's words: no chapter so, or several
    if not outcome.success or payload is None:
        return f"I cannot do that: {outcome.error or 'the tool failed.'}"
    if isinstance(payload, SearchResults):  # the reader's own highlights
        return highlights_answer(outcome)
    if isinstance(payload, Recap):
        if not payload.passages:
            return payload.note or "There is nothing to recap yet."
        lines = [f"- {p.location}: {in_quotes(p.text)}" for p in payload.passages]
        chapters = {p.chapter for p in payload.passages}
        one = next(iter(chapters)) if len(chapters) == 1 and len(lines) > 1 else None
        named = asked[:1].upper() + asked[1:] if asked and len(chapters) > 1 else None
        story = one or named or f"The story {read_through(payload.reading_limit)}"
        head = f"{story}, in the book's words:"
        more = f"\n({payload.note})" if payload.note else ""
        return head + "\n" + "\n".join(lines) + more + "\n\n" + OFFLINE_NOTE
    if isinstance(payload, ChapterList):  # where the reader is
        told = f"Your reading position: {payload.reading_limit}."
        if payload.chapters:
            n, last = len(payload.chapters), payload.chapters[-1]
            told += f" Chapters reached: {n}, the last {last.title} (from p. {last.page})."
        return told
    if isinstance(payload, PeopleList):
        if not payload.people:
            return payload.note or "I found no names in what you have read yet."
        lines = [
            f"- {p.name}"
            + (" (the narrator: the “I” of the story)" if p.narrates else "")
            + (f" (also {', '.join(p.aliases)})" if p.aliases else "")
            + f", {p.mentions} mentions, first met in {p.first.location}: {in_quotes(p.first.text)}"
            for p in payload.people
        ]
        head = f"The names that come up most {read_through(payload.reading_limit)}:"
        return head + "\n" + "\n".join(lines) + "\n\n" + OFFLINE_NOTE
    return "I cannot read that tool's result."


def highlights_answer(outcome: ToolOutcome, *, closing: bool = True) -> str:
    """The reader's highlights found, quoted with their places (``closing``: with the note that
    the answer is extracted, for an answer made of them alone)."""
    payload = outcome.payload
    if not outcome.success or not isinstance(payload, SearchResults):
        return f"I cannot do that: {outcome.error or 'the tool failed.'}"
    if not payload.passages:
        return payload.note or "I found none of your highlights in what you have read."
    lines = [f"- {p.location}: {in_quotes(p.text)}" for p in payload.passages]
    about = f" about {payload.query}" if payload.query else ""
    head = f"Your highlights{about} {read_through(payload.reading_limit)}:\n"
    return head + "\n".join(lines) + ("\n\n" + OFFLINE_NOTE if closing else "")


def _outcome(
    answer: str,
    calls: tuple[PromptMessage, ...],
    queries: tuple[str, ...],
    on_text: TextSink | None,
    stop: str,
    prompt: Sequence[PromptMessage],
    evidence: FoundBy = (),
) -> RetrievalOutcome:
    if on_text is not None:
        for piece in _DELTA.findall(answer):
            on_text(piece)
    steps = (f"searched {queries[0]!r}",) if queries else (f"no search: {stop}",)
    return RetrievalOutcome(
        answer,
        (*calls, PromptMessage.assistant(answer)),
        llm_calls=0,
        usage=_estimated_usage(prompt, calls, answer),
        model="extractive",
        queries=queries,
        reasoning_steps=steps,
        strategy=OfflineStrategy.name,
        stop_reason=stop,
        quotes_only=True,
        evidence=evidence,
    )


def _estimated_usage(
    prompt: Sequence[PromptMessage], calls: Sequence[PromptMessage], answer: str
) -> TokenUsage:
    """What a model would have been sent and written for this turn (see the module docstring)."""
    said = [m for m in prompt if m.role is not PromptRole.TOOL_RESULT]  # a model's window: no
    sent = sum(len(m.content) for m in said) * (2 if calls else 1)  # earlier tool results
    sent += sum(len(m.content) for m in calls)
    written = len(answer) + sum(
        len(str(dict(i.arguments))) for m in calls for i in m.tool_invocations
    )
    return TokenUsage(math.ceil(sent / 4), math.ceil(written / 4))
