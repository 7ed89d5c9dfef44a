"""Query rewriting: turn a follow-up into a self-contained question (the ``QueryRewriter`` port).

The core is small and the same for any book: ``FollowUpDetector`` says whether a question leans
on the conversation and which exchanges it leans on (its *thread*: back to the last question that
reads on its own); ``folio.agent.offline.referents`` says whom or what a pronoun in it stands for.

- ``HeuristicQueryRewriter`` works offline: a self-contained question comes back unchanged; a
  follow-up gets its pronoun replaced by the referent its thread names ("What happens to him?" ->
  "What happens to Henry Clerval?"), or, for "what about X?", the previous question asked about X.
  ``query_with_history`` is the search query: the reader's own words, the referent the rewrite
  added, and the questions of the thread (for a self-contained question: the question alone).

Invariant: a rewrite never drops the user's own words except the pronoun it resolves (or, for
"what about X?", the ellipsis itself); a question with no history, or one that reads on its own,
comes back unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from folio.agent.offline.followup import AFTER_OBJECT_HER, FollowUpDetector
from folio.agent.offline.referents import GROUP, PERSON, Referents, find_referents, question_subject
from folio.domain.ports import Exchange

POSSESSIVE = frozenset(["his", "its", "their", "hers", "theirs"])
_WHAT_ABOUT_NAME = re.compile(
    r"^\s*(?i:and )?(?i:what|how) (?i:about) "
    r"((?:the )?[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)\s*\??\s*$"
)


class HeuristicQueryRewriter:
    """Rewrites follow-ups from the exchanges they refer to; no model, no network."""

    def __init__(self, *, detector: FollowUpDetector | None = None) -> None:
        self._detector = detector or FollowUpDetector()

    def rewrite(self, question: str, history: Sequence[Exchange]) -> str:
        """A self-contained version of ``question``.

        "What happens to him?" -> "What happens to Henry Clerval?"; ``question`` unchanged when
        it reads on its own or there is nothing to resolve."""
        thread = self._detector.thread(question, history)
        if not thread:
            return question
        rewritten = _what_about(question, thread[-1][0])
        if rewritten is None:
            rewritten = _substitute_pronoun(question, find_referents(thread))
        return rewritten or question

    def query_with_history(self, question: str, history: Sequence[Exchange]) -> str:
        """The search query for ``question``: the question alone when it reads on its own;
        for a follow-up, the reader's words, the referent the rewrite resolved, and the earlier
        questions of its thread (only the turns it refers to, not the whole conversation).

        "What about Justine?" takes the frame of the question before it ("Who is Justine?") and
        nothing else: its topic is new. The answers are never used: an extractive answer repeats
        the passage it came from, and a wrong one would pull the search further off."""
        thread = self._detector.thread(question, history)
        if not thread:
            return question
        rewritten = self.rewrite(question, history)
        added = _added_words(question, rewritten)
        if _what_about(question, thread[-1][0]) is not None:
            return " ".join([question, *added])
        return " ".join([question, *added, *(q for q, _ in thread)])


def _added_words(question: str, rewritten: str) -> list[str]:
    """The words a rewrite brought in (the referent it resolved), to add to the reader's own
    question rather than put in place of a pronoun: a search query keeps every word the reader
    typed, and a wrong referent then costs a little, not the question."""
    asked = {w.lower() for w in re.findall(r"[\w'’-]+", question)}
    return [w for w in re.findall(r"[\w'’-]+", rewritten) if w.lower() not in asked]


_PRONOUN = re.compile(
    r"\b(he|she|him|his|her|hers|it|its|they|them|their|theirs)\b(?!['’]\w)", re.IGNORECASE
)


# "the creature", "the old ship", "the creature's eye": a noun phrase "it" can stand for (not
# "the sisters")
_DEFINITE = re.compile(r"\bthe\s+([a-z]+)")
_CLAUSE_OPENER = re.compile(
    r"\b(?:when|while|because|after|before|until|as|if|once|since|though|although)\s+$", re.I
)


def _names_a_thing(text: str) -> bool:
    return any(not m.group(1).endswith("s") for m in _DEFINITE.finditer(text))


def _substitute_pronoun(question: str, referents: Referents) -> str | None:
    """Replace the first resolvable pronoun; None when there is none. "It" opening a clause
    after a thing the question names ("How did the creature look when it opened its eye?")
    stands for that thing, and so does the "its" after it."""
    within = False
    for match in _PRONOUN.finditer(question):
        pronoun = match.group(1).lower()
        before = question[: match.start()]
        if pronoun == "it" and _CLAUSE_OPENER.search(before) and _names_a_thing(before):
            within = True
        if within and pronoun in ("it", "its"):
            continue
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
    then the first other person shown to be of its gender whom the reader named (one only an
    answer mentioned is a guess: a wrong passage brings in the wrong people). Without a main
    person, the unnamed subject of the last question ("the creature")."""
    if not referents.people:
        return referents.described
    main, *others = referents.people
    if main.agrees_with(pronoun):
        return main.name
    return next(
        (
            p.name
            for p in others
            if p.gender and p.agrees_with(pronoun) and set(p.name.split()) & referents.asked
        ),
        None,
    )


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
            and (following.group(1).lower() not in AFTER_OBJECT_HER)
        )
    if not possessive:
        return target
    return f"{target}'" if target.endswith("s") else f"{target}'s"


def _what_about(question: str, previous: str) -> str | None:
    """ "What about Justine?" after "Who is Elizabeth?" -> "Who is Justine?"."""
    match = _WHAT_ABOUT_NAME.match(question)
    subject = question_subject(previous)
    if match is None or subject is None or subject not in previous:
        return None
    return previous.replace(subject, match.group(1).strip(), 1)
