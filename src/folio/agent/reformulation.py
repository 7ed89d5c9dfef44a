"""Query rewriting: turn a follow-up into a self-contained question (the ``QueryRewriter`` port).

- ``HeuristicQueryRewriter`` works offline: it finds what the conversation is about (the names
  and noun phrases of earlier questions, the person an earlier "who ...?" was answered with) and
  puts it in place of the follow-up's pronoun or ellipsis. ``search_query`` adds the key terms of
  earlier questions, because for retrieval recall matters more than fluency.
- ``LLMQueryRewriter`` asks a chat model with ``prompts/reformulation_prompt.md`` and falls back
  to the heuristic when the model fails.

Invariant: a rewrite never drops the user's own words except the pronoun or ellipsis it resolves
(or, for "what about X?", the ellipsis itself), and a question with no history comes back unchanged.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from folio.agent.followup import (
    NOT_NAMES,
    FollowUpDetector,
    Person,
    content_words,
    infer_gender,
    is_small_talk,
    person_like,
    proper_nouns,
    wordset,
)
from folio.domain.errors import LLMError
from folio.domain.llm import PromptMessage
from folio.domain.ports import ChatProvider, Exchange

log = logging.getLogger(__name__)

PERSON = frozenset(["he", "she", "him", "his", "her", "hers", "himself", "herself"])
THING = frozenset(["it", "its", "itself"])
GROUP = frozenset(["they", "them", "their", "theirs", "themselves"])
POSSESSIVE = frozenset(["his", "its", "their", "hers", "theirs"])
# Words after "her" that show it is an object ("saw her in", "told her that"), not a possessive.
_AFTER_OBJECT_HER = wordset(
    """
    to in on at for from with by about into after before during and or but that as when where
    why how what if so than then again away back up down out off over there here first last best
    """
)
_SUBJECT_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^(?:can you |could you |please )?(?:tell me|talk|learn|know)(?: more)? about (.+)",
        r"^(?:can you |could you |please )?(?:describe|explain|define|discuss) (.+)",
        r"^what (?:is|are|was|were) (?:the )?(?:definition|meaning|history|origin|purpose) of (.+)",
        r"^(?:what|who) (?:is|are|was|were) (.+)",
        r"^how (?:does|do|did|is|are|was|were) (.+?) (?:work|made|used|formed|treated|caused)\b",
    )
]
_RELATIONAL_HEAD = re.compile(
    r"^(?:the |a |an |some )?(?:(?:main|different|various|common|most|important|best|other) )*"
    r"(?:history|types?|kinds?|sorts?|origins?|benefits?|symptoms?|causes?|role|effects?|uses?|"
    r"definition|meaning|purpose|advantages?|disadvantages?|pros|cons|examples?|parts?|features?|"
    r"characteristics?|differences?|impact|importance|structure|layers?|sources?|rules?|cost|"
    r"price|story|plot|theme|themes|signs?|treatments?|risks?) (?:of|for|in|about) ",
    re.IGNORECASE,
)
# "the critical praise", "his style": a phrase that leans on context instead of naming a new topic
# (a capitalised name after the determiner still names one: "the Surrealism movement").
_VAGUE_START = re.compile(
    r"^(?:(?i:the|a|an|his|her|their|there|its|some|this|that|these|those|one|other|any|more|good|"
    r"best|important|possible|natural|common|main|different|famous|most)\s+"
    r"(?![^ ]*[A-Z])|(?i:something|anything|if|whether|how|why|what|when|where)\b)"
)
_SUBJECT_END = re.compile(r"\s+(?:in|on|at|for|from|with|during|and|or|like|that|which|when)\s.*$")
_THIS_TOPIC = re.compile(
    r"\b(?:this|the) (?:article|topic|subject|book|novel|story|text|section|person|band|group)\b",
    re.IGNORECASE,
)
_ELLIPTICAL_ABOUT = re.compile(r"^\s*(?:what|how) about\b", re.IGNORECASE)
_WHAT_ABOUT_NAME = re.compile(
    r"^\s*(?i:and )?(?i:what|how) (?i:about) "
    r"((?:the )?[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)\s*\??\s*$"
)
# "(Chapter 5, p. 41)" citations and the offline note carry no search terms.
_PARENTHETICAL = re.compile(r"\s*\([^)]*\)")
_WHO_QUESTION = re.compile(
    r"^\s*(who\b|whom\b|what(?: is|'s|was)? (?:his|her|the) name)", re.IGNORECASE
)
MAX_SUBJECT_WORDS = 6
_WHO_IS_NAME = re.compile(r"^\s*who (?:is|was|are|were) ([^?]+?)\s*\??\s*$", re.IGNORECASE)
_DESCRIBED_SUBJECT = re.compile(
    r"^\s*(?:where|when|why|how|what|who|whom)\s+(?:\w+\s+)?"
    r"(?:did|does|do|is|was|were|has|had|can|could|would|will)\s+(the\s+[a-z]+)\s+[a-z]",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Referents:
    """What pronouns of the next question most likely point to."""

    person: str | None  # he / she / his / her: the most salient person
    thing: str | None  # it / its / they / them / this topic
    people: tuple[Person, ...] = ()  # every person candidate, most salient first
    described: str | None = None  # "the creature" of "Where did the creature learn to speak?"


class HeuristicQueryRewriter:
    """Rewrites follow-ups with the conversation's salient entity; no model, no network."""

    def __init__(self, *, history_turns: int = 10, standalone_turns: int = 2) -> None:
        """``search_query`` appends the questions of the last ``history_turns`` exchanges to a
        follow-up, and of the last ``standalone_turns`` to a question that reads on its own."""
        self._turns = history_turns
        self._standalone_turns = standalone_turns
        self._detector = FollowUpDetector()

    def rewrite(self, question: str, history: Sequence[Exchange]) -> str:
        """A self-contained version of ``question``.

        "What happens to him?" -> "What happens to Henry Clerval?"; ``question`` unchanged when
        there is no history or nothing to resolve."""
        if not history or is_small_talk(question):
            return question
        referents = find_referents(history)
        rewritten = _what_about(question, history[-1][0])
        if rewritten is None:
            rewritten = _substitute_pronoun(question, referents)
        if rewritten is None:
            rewritten = _resolve_topic_phrase(question, referents)
        if rewritten is None:
            rewritten = _complete_ellipsis(question, history, referents)
        return rewritten or question

    def search_query(self, question: str, history: Sequence[Exchange]) -> str:
        """A query for the book index: the rewritten question, then the earlier questions of the
        conversation (the last ``history_turns``; only the last ``standalone_turns`` when the
        question does not read as a follow-up).

        Follow-ups in real conversations ("to do what?", "was she relieved?") are about the passage
        the turns before them were about, so for retrieval recall the earlier questions matter more
        than fluency. They are kept whole (not deduplicated) so that the terms the conversation
        keeps returning to weigh more in BM25. The answers are not used: an extractive answer
        repeats the passage it came from, and a wrong one would pull the search further off."""
        history = [ex for ex in history if not is_small_talk(ex[0])]
        rewritten = self.rewrite(question, history)
        if not history or is_small_talk(question):
            return rewritten
        follow_up = self._detector.is_follow_up(question, history)
        turns = self._turns if follow_up else self._standalone_turns
        earlier = [q for q, _ in history[-turns:]] if turns else []
        return " ".join([rewritten, *earlier])


def find_referents(history: Sequence[Exchange]) -> Referents:
    """The most likely antecedents.

    For people: the person a "who" question was just answered with (or the one "Who is X?" asked
    about), else the conversation's main name, then every other name it mentioned; each with
    the gender its titles and pronouns show. For things: the subject the conversation last
    turned to ("tell me about X", "what is X"), else what its first question was about."""
    first_subject = question_subject(history[0][0])
    topic_shift = next(
        (s for q, _ in reversed(history[1:]) if (s := introduced_subject(q)) is not None), None
    )
    texts = [t for q, a in history for t in (q, _without_citations(a or ""))]
    people = _rank_people(history, first_subject, texts)
    return Referents(
        person=people[0].name if people else None,
        thing=topic_shift or first_subject,
        people=people,
        described=_described_subject(history[-1][0]),
    )


def _rank_people(
    history: Sequence[Exchange], first_subject: str | None, texts: Sequence[str]
) -> tuple[Person, ...]:
    """The main person first (as ``Referents.person``), then the names of the last question and
    of the conversation, latest first; none at all when there is no main person."""
    last = history[-1]
    focus = None if _asks_about_a_name(last[0]) else _answered_person(last)
    main = [n for n in (focus, _main_name(history, first_subject)) if n and person_like(n, texts)]
    if not main:
        return ()
    others = [*proper_nouns(last[0]), *(n for t in reversed(texts) for n in proper_nouns(t))]
    ranked: list[str] = []
    for name in [*main, *(n for n in others if person_like(n, texts))]:
        name = _longest_mention(name, history)
        if not any(name in other.split() or other == name for other in ranked):
            ranked.append(name)
    return tuple(Person(name, infer_gender(name, texts)) for name in ranked)


def _without_citations(answer: str) -> str:
    """An extractive answer without its "(Chapter 5, p. 41)" citations and note lines, whose
    titles ("Letter 4. To Mrs. Saville, England.") name no one the reader talks about."""
    return _PARENTHETICAL.sub("", answer)


def _asks_about_a_name(question: str) -> bool:
    """ "Who is Elizabeth Lavenza?": the answer describes her, and the others it names are not
    who the conversation turns to."""
    match = _WHO_IS_NAME.match(question)
    return match is not None and proper_nouns(match.group(1)) == [match.group(1).strip()]


def _described_subject(question: str) -> str | None:
    """ "the creature" of "Where did the creature learn to speak?": the unnamed subject a later
    "he" or "she" may mean."""
    match = _DESCRIBED_SUBJECT.match(question)
    return match.group(1) if match else None


def question_subject(question: str) -> str | None:
    """What a question explicitly asks about: the noun phrase of "what is X" / "tell me about X",
    else its first name; None when it only uses pronouns."""
    introduced = introduced_subject(question)
    if introduced is not None:
        return introduced
    names = [n for n in proper_nouns(question) if len(n) > 2]
    return _PARENTHETICAL.sub("", names[0]).strip() if names else None


def introduced_subject(question: str) -> str | None:
    """The noun phrase a question introduces as its topic ("Tell me about lung cancer." ->
    "lung cancer"; "What are the different types of sharks?" -> "sharks")."""
    text = question.strip().rstrip("?.! ")
    for pattern in _SUBJECT_PATTERNS:
        match = pattern.match(text)
        if match:
            phrase = _RELATIONAL_HEAD.sub("", match.group(1))
            phrase = _SUBJECT_END.sub("", phrase).strip()
            if _is_noun_phrase(phrase) and not _VAGUE_START.match(phrase):
                return phrase
    return None


def _is_noun_phrase(phrase: str) -> bool:
    tokens = phrase.split()
    if not tokens or len(tokens) > MAX_SUBJECT_WORDS:
        return False
    if tokens[0].lower() in PERSON | THING | GROUP or not content_words(phrase):
        return False
    return tokens[-1].lower() not in NOT_NAMES


def _answered_person(exchange: Exchange) -> str | None:
    """For "Who is X's friend?" answered "... Henry Clerval ...": the answer's most mentioned new
    name (the first one on a tie)."""
    question, answer = exchange
    if not answer or not _WHO_QUESTION.search(question):
        return None
    asked = {w.lower() for name in proper_nouns(question) for w in name.split()}
    new = [n for n in proper_nouns(answer) if not {w.lower() for w in n.split()} & asked]
    if not new:
        return None
    counts = Counter(w for n in new for w in n.split())
    best = max(new, key=lambda n: (max(counts[w] for w in n.split()), -new.index(n)))
    return _longest_mention(best, [exchange])


def _main_name(history: Sequence[Exchange], first_subject: str | None) -> str | None:
    """The conversation's main name: the first question's name, else the most mentioned name."""
    first_names = proper_nouns(history[0][0])
    if first_names and first_subject:
        return _longest_mention(first_subject, history)
    counts: dict[str, int] = {}
    for question, answer in history:
        for name in proper_nouns(f"{question}. {_without_citations(answer or '')}"):
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        return None
    return _longest_mention(max(counts, key=lambda n: counts[n]), history)


def _longest_mention(name: str, history: Sequence[Exchange]) -> str:
    """ "Kevin" -> "Kevin Garnett" when the longer form was used in the conversation."""
    best = name
    for question, answer in history:
        for other in proper_nouns(f"{question}. {_without_citations(answer or '')}"):
            if name in other.split() and len(other) > len(best) and len(other.split()) <= 4:
                best = other
    return best


_PRONOUN = re.compile(
    r"\b(he|she|him|his|her|hers|it|its|they|them|their|theirs)\b(?!['’]\w)", re.IGNORECASE
)


def _substitute_pronoun(question: str, referents: Referents) -> str | None:
    """Replace the first resolvable pronoun; None when there is none."""
    for match in _PRONOUN.finditer(question):
        pronoun = match.group(1).lower()
        target = _person_for(pronoun, referents) if pronoun in PERSON else referents.thing
        if pronoun in GROUP and referents.thing is None:
            target = referents.person
        if not target or _already_named(question, target):
            return None
        replacement = _inflect(target, pronoun, question[match.end() :])
        return question[: match.start()] + replacement + question[match.end() :]
    return None


def _person_for(pronoun: str, referents: Referents) -> str | None:
    """The main person, unless the conversation shows them to be of the pronoun's other gender:
    then the first other person shown to be of its gender. Without a main person, the unnamed
    subject of the last question ("the creature")."""
    if not referents.people:
        return referents.described
    main, *others = referents.people
    if main.agrees_with(pronoun):
        return main.name
    return next((p.name for p in others if p.gender and p.agrees_with(pronoun)), None)


def _already_named(question: str, target: str) -> bool:
    asked = {w.lower() for w in re.findall(r"[\w'’-]+", question)}
    return all(w.lower() in asked for w in target.split())


def _inflect(target: str, pronoun: str, rest: str) -> str:
    possessive = pronoun in POSSESSIVE
    if pronoun == "her":
        following = re.match(r"\s*([A-Za-z]+)", rest)
        possessive = (
            bool(following)
            and following is not None
            and (following.group(1).lower() not in _AFTER_OBJECT_HER)
        )
    if not possessive:
        return target
    return f"{target}'" if target.endswith("s") else f"{target}'s"


def _resolve_topic_phrase(question: str, referents: Referents) -> str | None:
    """ "this article" / "the book" -> the conversation's subject."""
    target = referents.person or referents.thing
    match = _THIS_TOPIC.search(question)
    if not match or not target:
        return None
    return question[: match.start()] + target + question[match.end() :]


def _what_about(question: str, previous: str) -> str | None:
    """ "What about Justine?" after "Who is Elizabeth?" -> "Who is Justine?"."""
    match = _WHAT_ABOUT_NAME.match(question)
    subject = question_subject(previous)
    if match is None or subject is None or subject not in previous:
        return None
    return previous.replace(subject, match.group(1).strip(), 1)


def _complete_ellipsis(
    question: str, history: Sequence[Exchange], referents: Referents
) -> str | None:
    """A question that names nothing ("What are the main themes?") gets "of <subject>"."""
    target = referents.thing or referents.person
    if not target or proper_nouns(question) or question_subject(question):
        return None
    if any(w.lower() in PERSON for w in re.findall(r"\w+", question)):
        return None  # "how was she at the end?" about someone who is not the subject
    if len(content_words(question)) > 2 and not _ELLIPTICAL_ABOUT.match(question):
        return None
    if set(content_words(question)) & set(content_words(target)):
        return None
    stem = question.rstrip().rstrip("?.!").rstrip()
    end = question.rstrip()[len(stem) :]
    return f"{stem} of {target}{end or '?'}"


class LLMQueryRewriter:
    """Rewrites with a chat model (``prompts/reformulation_prompt.md``); heuristic on LLMError."""

    def __init__(
        self,
        provider: ChatProvider,
        *,
        fallback: HeuristicQueryRewriter | None = None,
        history_turns: int = 6,
    ) -> None:
        self._provider = provider
        self._fallback = fallback or HeuristicQueryRewriter()
        self._turns = history_turns

    def rewrite(self, question: str, history: Sequence[Exchange]) -> str:
        if not history:
            return question
        prompt = build_reformulation_prompt(question, history[-self._turns :])
        try:
            response = self._provider.chat([PromptMessage.user(prompt)])
        except LLMError as e:
            log.warning("query rewriting by %s failed (%s); using the heuristic", self._name(), e)
            return self._fallback.rewrite(question, history)
        rewritten = _clean_model_output(response.text or "")
        return rewritten or self._fallback.rewrite(question, history)

    def _name(self) -> str:
        return f"{self._provider.provider_name}/{self._provider.model_name}"


def load_reformulation_template() -> str:
    return (
        resources.files("folio.agent")
        .joinpath("prompts/reformulation_prompt.md")
        .read_text(encoding="utf-8")
    )


def build_reformulation_prompt(question: str, history: Sequence[Exchange]) -> str:
    """The template with ``{history}`` and ``{question}`` filled in."""
    lines = []
    for earlier, answer in history:
        lines.append(f"User: {earlier.strip()}")
        if answer:
            lines.append(f"Assistant: {_shorten(answer, 400)}")
    conversation = "\n".join(lines) or "(no earlier messages)"
    return (
        load_reformulation_template()
        .replace("{history}", conversation)
        .replace("{question}", question.strip())
    )


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _clean_model_output(text: str) -> str:
    """First non-empty line, without a "Rewritten question:" label or surrounding quotes."""
    for line in text.strip().splitlines():
        line = (
            re.sub(
                r"^\s*(rewritten( question)?|standalone( question)?|question)\s*:\s*",
                "",
                line,
                flags=re.IGNORECASE,
            )
            .strip()
            .strip('"“”')
            .strip()
        )
        if line:
            return line
    return ""
