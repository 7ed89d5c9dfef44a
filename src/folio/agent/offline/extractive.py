"""The offline agent: no model, no network, the zero-configuration default.

``ExtractiveStrategy`` runs a turn as a model would, with folio's own policies instead of a model:

- small talk (greetings, thanks, acknowledgements in any wording) gets a short reply and no search;
- anything else gets a ``search_book`` call through the tool registry, whose query the injected
  ``QueryRewriter`` makes self-contained from the conversation ("What happens to him?" -> "What
  happens to Henry Clerval?"), a second one with the question alone only before saying that
  nothing mentions a name the question asks about, and one with the name alone when "Who is X?"
  found no sentence that says who X is;
- "Who is X?" opens with the sentence of the book that says who X is, cited
  (``folio.agent.offline.definitions``);
- the answer is the 2-4 sentences of the returned passages that best match the rewritten question,
  quoted, each with its place ``(Chapter X, p. N)``, and it says plainly that it is extracting
  passages, not writing an answer.

It works on typed values only: the conversation as (question, answer) exchanges and the search's
``SearchResults`` (``folio.domain.passages``), never on prompt text. Invariants: at most three tool
calls per turn; every quoted sentence is text of a passage the tool returned (white space
collapsed); no model call is made (``llm_calls`` is 0). Its usage is an ESTIMATE of the tokens a
model would have been sent and would have written for the same turn (characters / 4: the prompt
once to decide on the search, once more with the search result to answer), so that evaluations can
compare the context cost of conversations and history modes offline.
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from collections.abc import Callable, Sequence

from folio.agent.offline.definitions import asked_name, definition
from folio.agent.offline.evidence import coverage, honest_note, read_through
from folio.agent.offline.followup import is_small_talk as default_small_talk
from folio.agent.strategies import exchanges
from folio.agent.tools.book import MAX_K
from folio.domain import sentences
from folio.domain.llm import (
    PromptMessage,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
    ToolResultMessage,
)
from folio.domain.passages import (
    PEOPLE,
    RECAP,
    SEARCH_BOOK,
    SEARCH_HIGHLIGHTS,
    Passage,
    PeopleList,
    Recap,
    SearchResults,
    ToolOutcome,
    decode_tool_result,
)
from folio.domain.ports import (
    ChatProvider,
    Exchange,
    QueryRewriter,
    RetrievalOutcome,
    TextSink,
    ToolRunner,
)
from folio.domain.search import STOPWORDS

OFFLINE_NOTE = "(Offline mode: these are passages extracted from the book, not a generated answer.)"
MAX_QUOTE_WORDS = 70
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_WHO = re.compile(r"\s*(?:who|whom|whose)\b", re.IGNORECASE)
_MID_SENTENCE_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
_CAPITALISED_RUN = re.compile(r"[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
_DELTA = re.compile(r"\S+\s*|\s+")


class ExtractiveStrategy:
    """Implements ``RetrievalStrategy`` without a model (see the module docstring).

    ``search_query(question, history)`` builds the retrieval query (default: ``rewriter.rewrite``,
    the self-contained question; the composition root passes the heuristic rewriter's
    ``query_with_history``, tuned for recall); sentences are scored against the rewritten
    question."""

    name = "extractive"

    def __init__(
        self,
        rewriter: QueryRewriter,
        *,
        is_small_talk: Callable[[str], bool] = default_small_talk,
        search_query: Callable[[str, Sequence[Exchange]], str] | None = None,
        k: int = 5,
        max_sentences: int = 3,
    ) -> None:
        self._rewriter = rewriter
        self._is_small_talk = is_small_talk
        self._search_query = search_query or rewriter.rewrite
        self.k = k
        self._max_sentences = max(2, min(4, max_sentences))

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
        history = conversation(head)
        if about_folio(question):
            return self._outcome(FOLIO_HELP, (), (), on_text, "about_folio", messages)
        if self._is_small_talk(question):
            reply = small_talk_reply(question)
            return self._outcome(reply, (), (), on_text, "small_talk", messages)
        names = {tool.name for tool in tools}
        reader = reader_call(question, names, in_conversation=bool(history))
        if reader is not None:
            call = ToolInvocation(reader[0], f"offline_{uuid.uuid4().hex[:12]}", reader[1])
            result = run_tool(call)
            outcome = result.typed() if isinstance(result, ToolResultMessage) else None
            answer = reader_answer(outcome or decode_tool_result(result.content))
            used = (PromptMessage.assistant("", (call,)), result)
            return self._outcome(answer, used, (), on_text, reader[0], messages)
        if not any(tool.name == SEARCH_BOOK for tool in tools):
            reply = _cannot_search(question)
            return self._outcome(reply, (), (), on_text, "no_search_tool", messages)
        query = self._search_query(question, history)
        outcome, calls = _search(run_tool, query, self.k)
        focus = self._rewriter.rewrite(question, history)
        queries: tuple[str, ...] = (query,)
        if outcome.success and query != focus and coverage(focus, outcome.passages).missing_names:
            # Before saying "nothing mentions X", search the question alone: the earlier
            # questions of its thread may have pulled the search away from the name.
            outcome, more = _search(run_tool, focus, self.k)
            calls, queries = calls + more, (*queries, focus)
        answer = self.answer(focus, outcome)
        name = asked_name(focus)
        if name and outcome.success and not coverage(focus, outcome.passages).missing_names:
            defined = definition(name, outcome.passages)
            if defined is None or name not in defined[0]:
                # The passage that introduces a name may not match "who is": search the name.
                by_name, more = _search(run_tool, name, MAX_K)
                calls, queries = calls + more, (*queries, name)
                found = (*outcome.passages, *(by_name.passages if by_name.success else ()))
                defined = definition(name, found)
            if defined is not None:
                answer = _definition_first(defined, answer)
        return self._outcome(answer, calls, queries, on_text, "answered", messages)

    def answer(self, question: str, outcome: ToolOutcome) -> str:
        """The extractive answer to ``question`` from one tool result."""
        if not outcome.success:
            return f"I could not search the book: {outcome.error or 'the search failed.'}"
        passages = outcome.passages
        limit = getattr(outcome.payload, "reading_limit", "") or ""
        if not passages:
            return (
                f"I found nothing about that {read_through(limit)}. "
                "Try other words, or a name from the story."
            )
        found = coverage(question, passages)
        if found.missing_names:  # honest: the book has not said it yet (or at all)
            note = honest_note(question, passages, limit)
            return f"{note} Ask me about what you have read so far."
        answer = compose_answer(question, passages, self._max_sentences)
        if found.weak:
            note = honest_note(question, passages, limit)
            return f"{note} The closest passages:\n" + answer.removeprefix("From the book:\n")
        return answer

    def _outcome(
        self,
        answer: str,
        calls: tuple[PromptMessage, ...],
        queries: tuple[str, ...],
        on_text: TextSink | None,
        stop: str,
        prompt: Sequence[PromptMessage],
    ) -> RetrievalOutcome:
        if on_text is not None:
            for piece in _DELTA.findall(answer):
                on_text(piece)
        if queries:
            steps: tuple[str, ...] = (f"searched {queries[0]!r}",)
        elif calls:
            steps = (f"used {stop}",)
        else:
            steps = (f"no search: {stop}",)
        return RetrievalOutcome(
            answer,
            (*calls, PromptMessage.assistant(answer)),
            llm_calls=0,
            usage=_estimated_usage(prompt, calls, answer),
            model="extractive",
            queries=queries,
            reasoning_steps=steps,
            strategy=self.name,
            stop_reason=stop,
            quotes_only=True,
        )


def _search(
    run_tool: ToolRunner, query: str, k: int
) -> tuple[ToolOutcome, tuple[PromptMessage, ...]]:
    """One ``search_book`` call through the registry: its typed outcome and the messages."""
    call = ToolInvocation(SEARCH_BOOK, f"offline_{uuid.uuid4().hex[:12]}", {"query": query, "k": k})
    result = run_tool(call)
    outcome = result.typed() if isinstance(result, ToolResultMessage) else None
    typed = outcome or decode_tool_result(result.content)
    return typed, (PromptMessage.assistant("", (call,)), result)


def _definition_first(defined: tuple[str, Passage], answer: str) -> str:
    """The sentence that says who the name is, cited, above the evidence (which no longer
    repeats it)."""
    sentence, passage = defined
    quoted = f'- "{sentence}" ({passage.location})\n'
    return f"{sentence} ({passage.location})\n\n" + answer.replace(quoted, "")


def _estimated_usage(
    prompt: Sequence[PromptMessage], calls: Sequence[PromptMessage], answer: str
) -> TokenUsage:
    """What a model would have been sent and written for this turn (see the module docstring)."""
    sent = _chars(prompt) * (2 if calls else 1) + _chars(calls)
    written = len(answer) + sum(
        len(str(dict(i.arguments))) for m in calls for i in m.tool_invocations
    )
    return TokenUsage(math.ceil(sent / 4), math.ceil(written / 4))


def _chars(messages: Sequence[PromptMessage]) -> int:
    return sum(len(m.content) for m in messages)


def conversation(messages: Sequence[PromptMessage]) -> list[Exchange]:
    """The earlier (question, answer) exchanges of a prompt, answers without the offline note."""
    return [(q, _strip_note(a) if a else a) for q, a in exchanges(messages)]


def _strip_note(answer: str) -> str:
    return answer.replace(OFFLINE_NOTE, "").strip()


# --- extractive answering ------------------------------------------------------------------------
def compose_answer(question: str, passages: Sequence[Passage], max_sentences: int = 3) -> str:
    """The best 2-``max_sentences`` sentences for ``question``, quoted with their citations."""
    picked = best_sentences(question, passages, max_sentences)
    if not picked:  # no passages, or nothing in them but headings
        return "I found nothing about that in the book before your reading position."
    lines = [f'- "{sentence}" ({passage.location})' for sentence, passage in picked]
    return "From the book:\n" + "\n".join(lines) + "\n\n" + OFFLINE_NOTE


def best_sentences(
    question: str, passages: Sequence[Passage], limit: int
) -> list[tuple[str, Passage]]:
    """Sentences scored by the question's terms (weighted by rarity among the candidates), with
    a small bonus for better-ranked passages; at least two when the passages have two. For a
    "who" question, naming the person most of the passages mention counts as one more rare term."""
    rank = {p.key: i for i, p in reversed(list(enumerate(passages)))}  # 0: the best result
    candidates = [(s, p) for p in passages for s in split_sentences(p.text) if not _heading(s, p)]
    if not candidates:
        return []
    terms = dict.fromkeys(_terms(question))
    document_frequency = Counter(t for s, _ in candidates for t in dict.fromkeys(_terms(s)))
    n = len(candidates)
    idf = {t: math.log(1 + n / document_frequency[t]) for t in terms if t in document_frequency}
    person = _salient_name(question, passages)
    person_weight = max(idf.values(), default=1.0)

    def score(item: tuple[str, Passage]) -> float:
        sentence, passage = item
        weight = sum(idf.get(t, 0.0) for t in dict.fromkeys(_terms(sentence)))
        if person and any(part in sentence for part in person.split()):
            weight += person_weight
        length = len(sentence.split())
        brevity = 0.5 if length < 5 or length > MAX_QUOTE_WORDS else 1.0
        return weight * brevity + 0.3 / (1 + rank[passage.key])

    ranked = sorted(candidates, key=score, reverse=True)
    useful = [c for c in ranked if score(c) > 0.3 / (1 + rank[c[1].key])]
    chosen = useful[:limit] if len(useful) >= 2 else ranked[:2]
    return [(_shorten(s), p) for s, p in chosen]


def _salient_name(question: str, passages: Sequence[Passage]) -> str | None:
    """For a "who" question: the name (not in the question) that the most passages mention, then
    the most often, if at least two mention it; in its longest form ("Henry Clerval" rather than
    "Clerval"). A capitalised word counts as a name once it is met inside a sentence."""
    if not _WHO.match(question):
        return None
    asked = set(re.findall(r"[a-z]+", question.lower()))
    names = dict.fromkeys(  # in the order met, best passage first: a tie goes to the first
        w
        for p in passages
        for m in _MID_SENTENCE_NAME.findall(p.text)
        for w in m.split()
        if w.lower() not in asked and w.lower() not in STOPWORDS
    )
    if not names:
        return None
    forms = [m for p in passages for m in _CAPITALISED_RUN.findall(p.text)]
    mentions = Counter(w for f in forms for w in f.split() if w in names)
    in_passages = Counter(w for p in passages for w in names if re.search(rf"\b{w}\b", p.text))
    best = max(names, key=lambda w: (in_passages[w], mentions[w]))
    if in_passages[best] < 2:
        return None
    longer: Counter[str] = Counter(
        f for f in forms if best in f.split() and set(f.split()) <= names.keys()
    )
    return max(longer, key=lambda f: (len(f.split()) > 1, longer[f])) if longer else best


def _heading(sentence: str, passage: Passage) -> bool:
    """A line of the chapter's heading ("CHAPTER 26.", the chapter's title): it answers nothing."""
    key = " ".join(_WORD.findall(sentence.lower()))
    title = " ".join(_WORD.findall((passage.chapter or "").lower()))
    return bool(key) and f" {key} " in f" {title} "


def split_sentences(text: str) -> list[str]:
    """The passage's sentences (abbreviations such as Mr. do not end one), each on one line."""
    return [s for s in sentences.split_sentences(text) if len(s) > 1]


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1]


def _shorten(sentence: str) -> str:
    tokens = sentence.split()
    return sentence if len(tokens) <= MAX_QUOTE_WORDS else " ".join(tokens[:MAX_QUOTE_WORDS]) + " …"


def small_talk_reply(text: str) -> str:
    lowered = text.lower()
    if re.search(r"\b(thanks?|thx|cheers)\b", lowered):
        return "You're welcome! Ask me anything else about the book."
    if re.search(r"\b(bye|goodbye|see you)\b", lowered):
        return "Goodbye, and happy reading!"
    if re.search(r"\b(hi|hello|hey|good (morning|afternoon|evening))\b", lowered):
        return "Hello! Ask me about the book: characters, events, places. I will quote the pages."
    return "Happy to help. Ask me about the book whenever you like."


def _cannot_search(question: str) -> str:
    return (
        "I am running offline without a language model and cannot search this book here, so I "
        f"cannot answer {question!r}. " + OFFLINE_NOTE
    )


# --- questions about folio itself, and the reader tools -------------------------------------------
FOLIO_HELP = (
    "I am folio, a reading companion. Ask me about the book as far as you have read it: who "
    "someone is, what happened, why a character acted, what a place looks like. I search the "
    "book and quote the passages with their pages, and I never reveal anything past your reading "
    "position. You can also ask for the story so far, a summary of a chapter you have read, or "
    "the people met so far. In the terminal, /help lists the commands; `folio position` sets "
    "how far you have read."
)
_ABOUT_FOLIO = re.compile(
    r"\b(?:what (?:can|do|could) you (?:do|help)|who are you|what are you|how do(?:es)? "
    r"(?:this|you|folio|it) work|what is folio|how (?:do|can|should) i use (?:you|this|folio)|"
    r"what (?:are|is) your (?:features|abilities|commands))\b",
    re.IGNORECASE,
)
_PEOPLE = re.compile(
    r"\b(?:who are|list|name|which are|tell me about) (?:all )?(?:the )?(?:main |principal |"
    r"important |major )?(?:characters|people|persons)\b|\b(?:main|principal|major) characters\b|"
    r"\bwho (?:have|did) (?:we|i) (?:met|meet)\b",
    re.IGNORECASE,
)
_RECAP = re.compile(
    r"\b(?:so far|recap|summar(?:y|ise|ize)|the story until now|where (?:are|were) we|"
    r"catch me up|remind me)\b|^\s*what(?:'s| has)? happen(?:s|ed)\s*(?:until now\s*|in (?:the )?"
    r"(?:chapter|letter|part|book|volume|act|stave)\s+\S+\s*)?[?.!]*\s*$",
    re.IGNORECASE,
)
# The reader asking about their own highlights or notes ("what did I highlight", "my notes").
_HIGHLIGHTS = re.compile(
    r"\b(?:i|we) (?:have |had )?(?:highlight(?:ed)?|underline[d]?|mark(?:ed)?|note[d]?)\b|"
    r"\bmy (?:highlights?|notes?|annotations?|clippings?)\b",
    re.IGNORECASE,
)
_BARE_WHAT_HAPPENED = re.compile(r"^\s*what(?:'s| has)? happen(?:s|ed)\s*[?.!]*\s*$", re.I)
_CHAPTER_REF = re.compile(
    r"\b(?:chapter|letter|part|book|volume|act|stave)\s+(?:[0-9]+|[ivxlc]+|[a-z]+)\b",
    re.IGNORECASE,
)


def about_folio(question: str) -> bool:
    """A question about folio itself ("what can you do?"), not about the book."""
    return bool(_ABOUT_FOLIO.search(question))


def reader_call(
    question: str, available: set[str], *, in_conversation: bool = False
) -> tuple[str, dict[str, str]] | None:
    """The reader tool a question asks for, with its arguments: the people met so far, the story
    so far, or a summary of one chapter ("summarize chapter 3"); ``None`` for any other question.
    A recap needs a recap word ("so far", "summarize", "recap") or a bare "What happened?":
    "what happened to Clerval?" is searched instead, and so is a bare "What happened?" in a
    conversation, which asks about what was just talked about."""
    if SEARCH_HIGHLIGHTS in available and _HIGHLIGHTS.search(question):
        return SEARCH_HIGHLIGHTS, {"query": question}
    if PEOPLE in available and _PEOPLE.search(question):
        return PEOPLE, {}
    if RECAP not in available or not _RECAP.search(question):
        return None
    if in_conversation and _BARE_WHAT_HAPPENED.match(question):
        return None
    chapter = _CHAPTER_REF.search(question)
    if chapter is not None:
        return RECAP, {"chapter": chapter.group()}
    return RECAP, {}


def reader_answer(outcome: ToolOutcome) -> str:
    """The offline answer from a recap, a people list or the reader's highlights, quoted with
    pages."""
    if not outcome.success:
        return f"I cannot do that: {outcome.error or 'the tool failed.'}"
    payload = outcome.payload
    if isinstance(payload, SearchResults):
        if not payload.passages:
            return payload.note or "I found none of your highlights in what you have read."
        lines = [f'- {p.location}: "{p.text}"' for p in payload.passages]
        where = read_through(payload.reading_limit)
        return f"Your highlights {where}:\n" + "\n".join(lines) + "\n\n" + OFFLINE_NOTE
    if isinstance(payload, Recap):
        if not payload.passages:
            return payload.note or "There is nothing to recap yet."
        where = read_through(payload.reading_limit)
        lines = [f'- {p.location}: "{p.text}"' for p in payload.passages]
        chapters = {p.chapter for p in payload.passages}
        if len(chapters) == 1 and len(payload.passages) > 1:
            head = f"{payload.passages[0].chapter}, in the book's words:"
        else:
            head = f"The story {where}, chapter by chapter, in the book's words:"
        more = f"\n({payload.note})" if payload.note else ""
        return head + "\n" + "\n".join(lines) + more + "\n\n" + OFFLINE_NOTE
    if isinstance(payload, PeopleList):
        if not payload.people:
            return payload.note or "I found no names in what you have read yet."
        where = read_through(payload.reading_limit)
        lines = [
            f'- {p.name} ({p.mentions} mentions), first met in {p.first.location}: "{p.first.text}"'
            for p in payload.people
        ]
        return (
            f"The names that come up most {where} (people, and some places):\n"
            + "\n".join(lines)
            + "\n\n"
            + OFFLINE_NOTE
        )
    return "I cannot read that tool's result."
