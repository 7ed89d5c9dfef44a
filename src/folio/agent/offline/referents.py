"""Who and what a conversation is about: the antecedents a follow-up's pronouns may point to.

``find_referents`` reads the earlier exchanges and returns ``Referents``: the ranked persons (the
one a "who ...?" was just answered with or the conversation's main name first, each with the gender
its titles and pronouns show), the thing or topic the conversation last turned to, and the unnamed
subject of the last question. ``question_subject`` / ``introduced_subject`` say what one question
asks about. Pure text heuristics: no model, no network.

Invariant: every person candidate is a name taken from the conversation's own text that
``person_like`` accepts, and with no main person there are no person candidates at all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from folio.agent.offline.followup import (
    NOT_NAMES,
    STOPWORDS,
    Person,
    acts_in,
    content_words,
    infer_gender,
    person_like,
    proper_nouns,
)
from folio.domain.ports import Exchange

# Pronouns by what they can stand for.
PERSON = frozenset(["he", "she", "him", "his", "her", "hers", "himself", "herself"])
THING = frozenset(["it", "its", "itself"])
GROUP = frozenset(["they", "them", "their", "theirs", "themselves"])

# How a question names its topic: "tell me about X", "describe X", "who is X", "what was X".
_SUBJECT_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^(?:can you |could you |please )?(?:tell me|talk|learn|know)(?: more)? about (.+)",
        r"^(?:can you |could you |please )?(?:describe|explain) (.+)",
        r"^(?:what|who) (?:is|are|was|were) (.+)",
    )
]
# A phrase that leans on context instead of naming a topic: "his style", "this", "the other".
_VAGUE_START = re.compile(
    r"^(?:(?i:his|her|their|its|this|that|these|those|there|one|other|another|any|some|more)\b"
    r"|(?i:something|anything|if|whether|how|why|what|when|where)\b)"
)
_SUBJECT_END = re.compile(
    r"\s+(?:(?:in|on|at|for|from|with|during|and|or|like|that|which|when)\s.*|like)$"
)
# "(Chapter 5, p. 41)" citations and the offline note carry no search terms.
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)")
_WHO_QUESTION = re.compile(
    r"^\s*(who\b|whom\b|what(?: is|'s|was)? (?:his|her|the) name)", re.IGNORECASE
)
MAX_SUBJECT_WORDS = 6
# After "who was" / "what is", a participle makes "is" an auxiliary: "Who was waiting for
# someone?", "What is Leo relying on?", "What was examined?" ask about an act, not a topic; so
# does a phrase that opens with a function word ("Who was also hurt?", "What is at stake?"). A
# phrase that opens with a determiner stays a noun phrase ("the wedding", "a blessing").
_VERB_FORM = re.compile(r"^[a-z][a-z'’\-]+(?:ing|ed)$")
_DETERMINERS = frozenset(["the", "a", "an", "this", "that", "these", "those"])
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
    asked: frozenset[str] = frozenset()  # the words of the names the reader's questions used


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
        asked=frozenset(w for q, _ in history for n in proper_nouns(q) for w in n.split()),
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
    previous = None
    while previous != answer:  # innermost first: "(Chapter 2. Ayr (R. Burns), p. 23)"
        previous, answer = answer, _PARENTHETICAL.sub("", answer)
    return answer


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
    """The noun phrase a question introduces as its topic ("Tell me about the De Lacey family."
    -> "the De Lacey family"; "What is his name?" -> None)."""
    text = question.strip().rstrip("?.! ")
    for pattern in _SUBJECT_PATTERNS:
        match = pattern.match(text)
        if match:
            phrase = _SUBJECT_END.sub("", match.group(1)).strip()
            if _is_noun_phrase(phrase) and not _VAGUE_START.match(phrase):
                return phrase
    return None


def _is_noun_phrase(phrase: str) -> bool:
    tokens = phrase.split()
    if not tokens or len(tokens) > MAX_SUBJECT_WORDS:
        return False
    if tokens[0].lower() in PERSON | THING | GROUP or not content_words(phrase):
        return False
    first = tokens[0].lower()
    if first not in _DETERMINERS and (
        first in STOPWORDS or any(_VERB_FORM.search(t) for t in tokens)
    ):
        return False
    return tokens[-1].lower() not in NOT_NAMES


def _answered_person(exchange: Exchange) -> str | None:
    """For "Who is X's friend?" answered "... Henry Clerval ...": the answer's most mentioned new
    name; on a tie, one that acts in the answer ("Henry Clerval was ...") over one that is only
    mentioned ("a house on Belrive"), then the first."""
    question, answer = exchange
    if not answer or not _WHO_QUESTION.search(question):
        return None
    asked = {w.lower() for name in proper_nouns(question) for w in name.split()}
    new = [n for n in proper_nouns(answer) if not {w.lower() for w in n.split()} & asked]
    if not new:
        return None
    counts = Counter(w for n in new for w in n.split())
    best = max(
        new,
        key=lambda n: (max(counts[w] for w in n.split()), acts_in(n, answer), -new.index(n)),
    )
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
