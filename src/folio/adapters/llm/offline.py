"""The offline chat provider: no model, no network, the zero-configuration default.

It plays the model's part in the same tool loop as a real provider (see the agent contract):

- on a new user message: small talk gets a short friendly reply and no tool call; anything else
  gets ONE ``search_book`` call whose query is made self-contained from the conversation by the
  injected ``QueryRewriter`` ("What happens to him?" -> "What happens to Henry Clerval?");
- once the turn's tool results are in: it answers with the 2-4 sentences of the returned passages
  that best match the rewritten question, quoted, each with ``(Chapter X, p. N)``, and says plainly
  that it is extracting passages, not writing an answer.

``chat()`` without tools (the AlwaysRetrieve path) answers the same way from the passages block
that ``PromptBuilder.with_passages`` puts in the user message (``[1] Chapter 5, p. 41`` then the
text). Invariants: never more than one tool call per turn; every quoted sentence is text of a
passage it was given (white space collapsed); token usage is estimated as characters / 4.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    PromptRole,
    StreamEvent,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
)
from folio.domain.ports import Exchange, QueryRewriter

SEARCH_TOOL = "search_book"
OFFLINE_NOTE = "(Offline mode: these are passages extracted from the book, not a generated answer.)"
_STOPWORDS = frozenset(
    str.split(
        """
        a an and are as at be but by did do does for from had has have he her him his how i in is it
    its me my not of on or she so that the their them then there they this to was were what when
    where which who whom why will with would you your about after again also any been before can
    could into more most only other over said some such than these those through very"""
    )
)
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'’”)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_SMALL_TALK = re.compile(
    r"^\W*(hi|hello|hey|good (morning|afternoon|evening)|thanks?( you)?( (so|very) much)?|"
    r"thx|cheers|ok(ay)?|cool|great|nice|perfect|got it|bye|goodbye|see you)\W*$",
    re.IGNORECASE,
)
_WHO = re.compile(r"\s*(?:who|whom|whose)\b", re.IGNORECASE)
_MID_SENTENCE_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
_CAPITALISED_RUN = re.compile(r"[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
_PASSAGE_HEADER = re.compile(r"^\[(\d+)\] (.+)$", re.MULTILINE)
_QUESTION_LINE = re.compile(r"^(?:Question|Rewritten question): (.+)$", re.MULTILINE)
# A plain-text transcript (providers without tools) appends tool results to the user's message.
_TOOL_RESULT_TEXT = re.compile(r"\s*\[Tool result\]\n")
_DELTA = re.compile(r"\S+\s*|\s+")
MAX_QUOTE_WORDS = 70


@dataclass(frozen=True, slots=True)
class Passage:
    text: str
    citation: str  # "Chapter 5, p. 41"
    rank: int  # 0 for the best search result


class OfflineChatProvider:
    """A ``ChatProvider`` that searches and quotes instead of generating."""

    def __init__(
        self,
        rewriter: QueryRewriter,
        small_talk: Callable[[str], bool] | None = None,
        *,
        search_query: Callable[[str, Sequence[Exchange]], str] | None = None,
        k: int = 5,
        max_sentences: int = 3,
    ) -> None:
        """``search_query`` builds the retrieval query (default: the rewriter's own
        ``search_query`` method when it has one, else ``rewrite``); sentences are always scored
        against ``rewriter.rewrite``'s self-contained question."""
        self._rewriter = rewriter
        self._small_talk = small_talk or (lambda text: bool(_SMALL_TALK.match(text)))
        self._search_query = search_query or _retrieval_query_of(rewriter)
        self._k = k
        self._max_sentences = max(2, min(4, max_sentences))

    @property
    def provider_name(self) -> str:
        return "offline"

    @property
    def model_name(self) -> str:
        return "extractive"

    @property
    def supports_tools(self) -> bool:
        return True

    # --- the port ----------------------------------------------------------------------------
    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse:
        turn = _Turn.of(messages)
        if self._small_talk(turn.question):
            return _response(messages, small_talk_reply(turn.question))
        passages = parse_passages_block(turn.question)
        question = _QUESTION_LINE.findall(turn.question)
        asked = question[-1].strip() if question else turn.question
        if passages is None:
            return _response(messages, _cannot_search(asked))
        focus = self._rewriter.rewrite(asked, turn.history)
        return _response(messages, compose_answer(focus, passages, self._max_sentences))

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse:
        turn = _Turn.of(messages)
        if turn.results is not None:
            focus = self._rewriter.rewrite(turn.question, turn.history)
            return _response(messages, self._answer_from_results(focus, turn.results))
        if self._small_talk(turn.question):
            return _response(messages, small_talk_reply(turn.question))
        if not any(tool.name == SEARCH_TOOL for tool in tools):
            return _response(messages, _cannot_search(turn.question))
        query = self._search_query(turn.question, turn.history)
        call = ToolInvocation(
            SEARCH_TOOL, f"offline_{uuid.uuid4().hex[:12]}", {"query": query, "k": self._k}
        )
        return _response(messages, None, (call,))

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]:
        return _stream(self.chat(messages))

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]:
        return _stream(self.chat_with_tools(messages, tools))

    # --- answers -----------------------------------------------------------------------------
    def _answer_from_results(self, focus: str, results: Sequence[str]) -> str:
        passages: list[Passage] = []
        errors: list[str] = []
        limit = "your reading position"
        for content in results:
            data, error = _parse_tool_result(content)
            if error is not None:
                errors.append(error)
                continue
            limit = _reading_limit(data) or limit
            passages.extend(_passages_from(data, start_rank=len(passages)))
        if passages:
            return compose_answer(focus, passages, self._max_sentences)
        if errors:
            return f"I could not search the book: {errors[0]}"
        return (
            f"I found nothing about that in the book before {limit}. "
            "Try other words, or a name from the story."
        )


def _retrieval_query_of(rewriter: QueryRewriter) -> Callable[[str, Sequence[Exchange]], str]:
    """A rewriter may offer ``search_query`` (same signature), a query tuned for recall."""
    method = getattr(rewriter, "search_query", None)
    return method if callable(method) else rewriter.rewrite


@dataclass(frozen=True, slots=True)
class _Turn:
    """The conversation as the provider sees it: earlier exchanges, the current question, and the
    current turn's tool results (None while no tool has been called this turn)."""

    history: tuple[Exchange, ...]
    question: str
    results: tuple[str, ...] | None

    @staticmethod
    def of(messages: Sequence[PromptMessage]) -> _Turn:
        last_user = max(
            (i for i, m in enumerate(messages) if m.role is PromptRole.USER), default=None
        )
        if last_user is None:
            return _Turn((), "", None)
        after = messages[last_user + 1 :]
        called = any(m.role is PromptRole.ASSISTANT and m.tool_invocations for m in after)
        results = tuple(m.content for m in after if m.role is PromptRole.TOOL_RESULT)
        return _Turn(
            _exchanges(messages[:last_user]),
            messages[last_user].content.strip(),
            results if called or results else None,
        )


def _exchanges(messages: Sequence[PromptMessage]) -> tuple[Exchange, ...]:
    """(question, last assistant text before the next question) pairs, oldest first."""
    exchanges: list[list[str | None]] = []
    for message in messages:
        if message.role is PromptRole.USER:
            question = _TOOL_RESULT_TEXT.split(message.content, 1)[0].strip()
            if question:  # else a tool result of the current exchange, in a plain transcript
                exchanges.append([question, None])
        elif message.role is PromptRole.ASSISTANT and exchanges and message.content.strip():
            exchanges[-1][1] = _strip_note(message.content) or exchanges[-1][1]
    return tuple((str(q), a) for q, a in exchanges)


def _strip_note(answer: str) -> str:
    """The answer without the offline note or the "[called search_book ...]" lines that a
    plain-text transcript puts in assistant messages."""
    kept = [line for line in answer.splitlines() if not line.startswith("[called ")]
    return "\n".join(kept).replace(OFFLINE_NOTE, "").strip()


def _parse_tool_result(content: str) -> tuple[Mapping[str, Any], str | None]:
    try:
        envelope = json.loads(content)
    except json.JSONDecodeError:
        return {}, "the search returned something I could not read."
    if not isinstance(envelope, dict):
        return {}, "the search returned something I could not read."
    if not envelope.get("success", False):
        return {}, str(envelope.get("error") or "the search failed.")
    data = envelope.get("data")
    return (data if isinstance(data, dict) else {}), None


def _reading_limit(data: Mapping[str, Any]) -> str | None:
    limit = data.get("reading_limit")
    return str(limit) if limit else None


def _passages_from(data: Mapping[str, Any], *, start_rank: int) -> list[Passage]:
    """Passages of a ``search_book`` (``results``) or ``read_passage`` (``text``) result."""
    raw = data.get("results")
    items = raw if isinstance(raw, list) else ([data] if data.get("text") else [])
    passages = []
    for offset, item in enumerate(items):
        if isinstance(item, dict) and str(item.get("text") or "").strip():
            passages.append(Passage(str(item["text"]), cite(item), start_rank + offset))
    return passages


def cite(item: Mapping[str, Any]) -> str:
    """``Chapter 5, p. 41`` / ``Chapter 5, pp. 41-42`` / ``p. 41`` (no chapter)."""
    pages = str(item.get("pages") or item.get("page_start") or "?")
    where = f"pp. {pages}" if "-" in pages else f"p. {pages}"
    chapter = item.get("chapter")
    return f"{chapter}, {where}" if chapter else where


def parse_passages_block(text: str) -> list[Passage] | None:
    """Passages of a prompt built by ``PromptBuilder.with_passages``: ``[n] <citation>`` lines, each
    followed by the passage text. ``[]`` when the prompt says the search found nothing, ``None``
    when the prompt carries no passages at all."""
    headers = list(_PASSAGE_HEADER.finditer(text))
    if not headers:
        return [] if "found no passage" in text else None
    passages = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        body = re.split(r"\n\n(?:Question|Note|Rewritten question):", text[header.end() : end])[0]
        if body.strip():
            passages.append(Passage(body.strip(), header.group(2).strip(), i))
    return passages


# --- extractive answering ------------------------------------------------------------------------
def compose_answer(question: str, passages: Sequence[Passage], max_sentences: int = 3) -> str:
    """The best 2-``max_sentences`` sentences for ``question``, quoted with their citations."""
    if not passages:
        return "I found nothing about that in the book before your reading position."
    picked = best_sentences(question, passages, max_sentences)
    lines = [f'- "{sentence}" ({passage.citation})' for sentence, passage in picked]
    return "From the book:\n" + "\n".join(lines) + "\n\n" + OFFLINE_NOTE


def best_sentences(
    question: str, passages: Sequence[Passage], limit: int
) -> list[tuple[str, Passage]]:
    """Sentences scored by the question's terms (weighted by rarity among the candidates), with
    a small bonus for better-ranked passages; at least two when the passages have two. For a
    "who" question, naming the person most of the passages mention counts as one more rare term."""
    candidates = [(s, p) for p in passages for s in split_sentences(p.text)]
    if not candidates:
        return []
    terms = set(_terms(question))
    document_frequency = Counter(t for s, _ in candidates for t in set(_terms(s)))
    n = len(candidates)
    idf = {t: math.log(1 + n / document_frequency[t]) for t in terms if t in document_frequency}
    person = _salient_name(question, passages)
    person_weight = max(idf.values(), default=1.0)

    def score(item: tuple[str, Passage]) -> float:
        sentence, passage = item
        weight = sum(idf.get(t, 0.0) for t in set(_terms(sentence)))
        if person and any(part in sentence for part in person.split()):
            weight += person_weight
        length = len(sentence.split())
        brevity = 0.5 if length < 5 or length > MAX_QUOTE_WORDS else 1.0
        return weight * brevity + 0.3 / (1 + passage.rank)

    ranked = sorted(candidates, key=score, reverse=True)
    useful = [c for c in ranked if score(c) > 0.3 / (1 + c[1].rank)]
    chosen = useful[:limit] if len(useful) >= 2 else ranked[:2]
    return [(_shorten(s), p) for s, p in chosen]


def _salient_name(question: str, passages: Sequence[Passage]) -> str | None:
    """For a "who" question: the name (not in the question) that the most passages mention, then
    the most often, if at least two mention it; in its longest form ("Henry Clerval" rather than
    "Clerval"). A capitalised word counts as a name once it is met inside a sentence."""
    if not _WHO.match(question):
        return None
    asked = set(re.findall(r"[a-z]+", question.lower()))
    names = {
        w
        for p in passages
        for m in _MID_SENTENCE_NAME.findall(p.text)
        for w in m.split()
        if w.lower() not in asked and w.lower() not in _STOPWORDS
    }
    if not names:
        return None
    forms = [m for p in passages for m in _CAPITALISED_RUN.findall(p.text)]
    mentions = Counter(w for f in forms for w in f.split() if w in names)
    in_passages = Counter(w for p in passages for w in names if re.search(rf"\b{w}\b", p.text))
    best = max(names, key=lambda w: (in_passages[w], mentions[w]))
    if in_passages[best] < 2:
        return None
    longer: Counter[str] = Counter(
        f for f in forms if best in f.split() and set(f.split()) <= names
    )
    return max(longer, key=lambda f: (len(f.split()) > 1, longer[f])) if longer else best


def split_sentences(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_END.split(flat) if len(s.strip()) > 1]


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 1]


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
        "I am running offline without a language model, and no passages from the book came with "
        f"this question, so I cannot answer it: {question!r}. " + OFFLINE_NOTE
    )


# --- responses -----------------------------------------------------------------------------------
def _response(
    messages: Sequence[PromptMessage],
    text: str | None,
    calls: tuple[ToolInvocation, ...] = (),
) -> ChatResponse:
    prompt_chars = sum(len(m.content) for m in messages)
    output_chars = len(text or "") + sum(len(json.dumps(dict(c.arguments))) for c in calls)
    usage = TokenUsage(_tokens(prompt_chars), _tokens(output_chars))
    stop = "tool_use" if calls else "end_turn"
    return ChatResponse(text, calls, usage, model="extractive", stop_reason=stop)


def _tokens(chars: int) -> int:
    return max(1, math.ceil(chars / 4)) if chars else 0


def _stream(response: ChatResponse) -> Iterator[StreamEvent]:
    for piece in _DELTA.findall(response.text or ""):
        yield StreamEvent.delta(piece)
    yield StreamEvent.done(response)
