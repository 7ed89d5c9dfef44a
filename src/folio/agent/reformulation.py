"""Query rewriting: turn a follow-up into a self-contained question (the ``QueryRewriter`` port).

- ``HeuristicQueryRewriter`` works offline: it finds what the conversation is about (the names
  and noun phrases of earlier questions, the person an earlier "who ...?" was answered with: see
  ``folio.agent.referents``) and puts it in place of the follow-up's pronoun or ellipsis.
  ``query_with_history`` adds the key terms of earlier questions, because for retrieval recall
  matters more than fluency.
- ``LLMQueryRewriter`` asks a chat model with ``prompts/reformulation_prompt.md`` and falls back
  to the heuristic when the model fails.

Invariant: a rewrite never drops the user's own words except the pronoun or ellipsis it resolves
(or, for "what about X?", the ellipsis itself), and a question with no history comes back unchanged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from folio.agent.followup import (
    FollowUpDetector,
    content_words,
    is_small_talk,
    proper_nouns,
    wordset,
)
from folio.agent.prompt_builder import PromptBuilder
from folio.agent.referents import GROUP, PERSON, Referents, find_referents, question_subject
from folio.domain.errors import LLMError
from folio.domain.llm import PromptMessage
from folio.domain.ports import ChatProvider, Exchange

log = logging.getLogger(__name__)

POSSESSIVE = frozenset(["his", "its", "their", "hers", "theirs"])
# Words after "her" that show it is an object ("saw her in", "told her that"), not a possessive.
_AFTER_OBJECT_HER = wordset(
    """
    to in on at for from with by about into after before during and or but that as when where
    why how what if so than then again away back up down out off over there here first last best
    """
)
_THIS_TOPIC = re.compile(
    r"\b(?:this|the) (?:article|topic|subject|book|novel|story|text|section|person|band|group)\b",
    re.IGNORECASE,
)
_ELLIPTICAL_ABOUT = re.compile(r"^\s*(?:what|how) about\b", re.IGNORECASE)
_WHAT_ABOUT_NAME = re.compile(
    r"^\s*(?i:and )?(?i:what|how) (?i:about) "
    r"((?:the )?[A-Z][\w'’\-]*(?: [A-Z][\w'’\-]*)*)\s*\??\s*$"
)


REFORMULATION_PROMPT = "reformulation_prompt.md"


class HeuristicQueryRewriter:
    """Rewrites follow-ups with the conversation's salient entity; no model, no network."""

    def __init__(self, *, history_turns: int = 100, standalone_turns: int = 100) -> None:
        """``query_with_history`` appends the questions of the last ``history_turns`` exchanges to a
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

    def query_with_history(self, question: str, history: Sequence[Exchange]) -> str:
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
        return " ".join([question, *_added_words(question, rewritten), *earlier])


def _added_words(question: str, rewritten: str) -> list[str]:
    """The words a rewrite brought in (the referent it resolved), to add to the reader's own
    question rather than put in place of a pronoun: a search query keeps every word the reader
    typed, and a wrong referent then costs a little, not the question."""
    asked = {w.lower() for w in re.findall(r"[\w'’-]+", question)}
    return [w for w in re.findall(r"[\w'’-]+", rewritten) if w.lower() not in asked]


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


def build_reformulation_prompt(question: str, history: Sequence[Exchange]) -> str:
    """The template with ``$history`` and ``$question`` filled in."""
    lines = []
    for earlier, answer in history:
        lines.append(f"User: {earlier.strip()}")
        if answer:
            lines.append(f"Assistant: {_shorten(answer, 400)}")
    conversation = "\n".join(lines) or "(no earlier messages)"
    return PromptBuilder.from_template(
        REFORMULATION_PROMPT, history=conversation, question=question.strip()
    ).build()


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
