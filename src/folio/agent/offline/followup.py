"""Cheap, model-free reading of a user message: small talk? a follow-up? what does it name?

A follow-up is a message that cannot be searched for on its own: it leans on the conversation
through a pronoun ("what happens to him?"), an ellipsis ("what about Elizabeth?", "to do what?"),
or a definite reference to something said before ("the letter"). Invariant: with no history
nothing is a follow-up, and every function here is pure and fast (regular expressions over one
message), so the agent may call it on every turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from folio.domain.ports import Exchange
from folio.domain.search import QUOTED_PHRASE
from folio.domain.search import STOPWORDS as SEARCH_STOPWORDS

WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d+")


def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


PERSONAL_PRONOUNS = wordset(
    """
    he she it they him her them his hers its their theirs himself herself itself themselves
    """
)
# Demonstratives, and adverbs that point back at what was just said ("What was done instead?").
DEMONSTRATIVES = wordset("this that these those there then instead too either afterwards")
REFERRING_WORDS = PERSONAL_PRONOUNS | DEMONSTRATIVES

# Words that carry no searchable content: the index's stopwords plus the filler of conversation
# ("tell", "happened", "please"). Content words are every other word of three letters or more: what
# is left when a question is stripped of these says what it is about.
CONVERSATIONAL_FILLER = wordset(
    """
    above against anything below between both came come done else even ever every everything
    gave get gets give go going got happen happened happening happens isn't know let like made
    make many may might much must near never oh ok okay one others please really said say see
    seem seemed something take tell thee thing things think thou thought thy took upon us want
    wasn't way well went weren't whether whose yes yet
    """
)
STOPWORDS = SEARCH_STOPWORDS | CONVERSATIONAL_FILLER | REFERRING_WORDS

# Words after "her" that show it is an object ("saw her in", "told her that"), not a possessive.
AFTER_OBJECT_HER = wordset(
    """
    to in on at for from with by about into after before during and or but that as when where
    why how what if so than then again away back up down out off over there here first last best
    """
)
# Openings that only make sense as the continuation of an exchange: "and then?", "what about
# Justine?", "to do what?", "why?" (English grammar, not the wording of any book or corpus).
ELLIPTICAL_START = re.compile(
    r"^\s*(what about|how about|and\b|but\b|so\b|or\b|also\b|then\b|why\s*\??$|how so|how come|"
    r"unless\b|because\b|except\b|until\b|any\b|(to|for|with|from|by|after|before|since) "
    r"(what|whom)\b|(who|what|where) else|anything else|tell me more|"
    r"more about|which one|in what way|what happened (next|then|after)|"
    r"what did (he|she|they) do (next|then|after))",
    re.IGNORECASE,
)
# "there" that only says something exists ("Was there a storm?") points at no place.
_EXISTENTIAL_THERE = re.compile(
    r"\b(?:is|was|are|were|be|been)\s+there\b|\bthere\s+(?:is|was|are|were|be|been)\b",
    re.IGNORECASE,
)

CAPITALISED = re.compile(
    r"\b(?:[A-Z]\.\s?)*[A-Z][A-Za-z'’\-]+(?:\s+(?:(?:of|the|de|da|von|van|la|le|du)\s+)?"
    r"[A-Z][A-Za-z'’\-]+)*"
)
# Capitalised words that are not names: sentence openers, question words, pronouns, titles alone.
NOT_NAMES = wordset(
    """
    i a an the what who whom whose which when where why how is are was were do does did can
    could will would should shall may might must has have had tell describe explain give list
    name please yes no he she it they him her them his its their this that these those there
    then and but or so if in on at of for to from with by about after before during as also my
    our your mr mrs miss ms dr sir lady lord chapter book part volume page letter ok okay thanks
    thank hi hello hey nothing something anything everything nobody somebody anybody everybody
    none someone anyone everyone
    """
)


_TITLE_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Mme|Mlle|Dr|St|Prof|Rev|Capt|Col|Gen|Lt|Sgt)\.$")
_CONTRACTED_I = re.compile(r"^I['’]")
_NAME_VERB = re.compile(
    r"['’]s\b|\s+(?:was|is|had|has|said|says|did|went|came|cried|replied|answered|told|asked|"
    r"looked|felt|saw|knew|thought|took|gave|made|could|would|will|may|might|must|should)\b"
)


def words(text: str) -> list[str]:
    """The words of ``text`` as written (apostrophes kept, punctuation dropped)."""
    return WORD.findall(text)


def content_words(text: str) -> list[str]:
    """Lower-cased words that say what ``text`` is about (no stopwords, pronouns, short words)."""
    result = []
    for word in words(text):
        lower = _strip_possessive(word.lower())
        if len(lower) > 2 and lower not in STOPWORDS and not _contracted_function_word(lower):
            result.append(lower)
    return result


def _contracted_function_word(word: str) -> bool:
    """ "don't", "didn't", "she'll", "i'm", "they're": grammar, not what a text is about."""
    return word.endswith(("n't", "n’t")) or _uncontracted(word) in STOPWORDS


def proper_nouns(text: str) -> list[str]:
    """Capitalised names in ``text`` ("Henry Clerval", "Y. A. Tittle"), in order, without sentence
    openers and function words that are only capitalised because they start a sentence.

    A lone capitalised word that opens a sentence ("Enter the house") counts as a name only when
    it is also capitalised inside a sentence, is followed by a verb like "was" or "said", or is
    (almost) the whole text (a title such as "Odawa")."""
    names = []
    short_text = len(text.split()) <= 4
    for match in CAPITALISED.finditer(text):
        tokens = [t for t in match.group(0).strip().split() if not _CONTRACTED_I.match(t)]
        initial = _opens_sentence(text, match.start())
        # "The", "Mr": never part of a name; "Even Elizabeth had...", "Yes--if Darcy": nor a
        # function word that is capitalised only because it opens the sentence
        while tokens and (
            _strip_possessive(tokens[0]).lower().rstrip(".") in NOT_NAMES
            or (initial and _common_word(tokens[0]))
        ):
            tokens.pop(0)
            initial = False
        while tokens and tokens[-1].lower() in NOT_NAMES:
            tokens.pop()
        if not tokens:
            continue
        name = _strip_possessive(" ".join(tokens))
        lone_opener = len(tokens) == 1 and initial and not short_text
        if lone_opener and not _named_elsewhere(text, name, match.end()):
            continue
        names.append(name)
    return names


def _common_word(token: str) -> bool:
    """A function or filler word ("Even", "One", "Yes--if"), capitalised only to open a sentence."""
    return token.split("-")[0].lower() in STOPWORDS


def _opens_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(*-—")
    if _TITLE_ABBREVIATION.search(before):
        return False  # "Mr. Kirwin": the full stop ends a title, not a sentence
    return not before or before[-1] in ".!?:;\n"


def _named_elsewhere(text: str, name: str, end: int) -> bool:
    if _NAME_VERB.match(text, end):
        return True
    for other in re.finditer(rf"\b{re.escape(name)}\b", text):
        if not _opens_sentence(text, other.start()):
            return True
    return False


def acts_in(name: str, text: str) -> bool:
    """``name`` is the subject of a verb somewhere in ``text`` ("Henry Clerval was the son of a
    merchant", "Clerval said"): what people do, and places rarely ("on Belrive, the shore")."""
    return any(
        _NAME_VERB.match(text, m.end()) for m in re.finditer(rf"\b{re.escape(name)}\b", text)
    )


def _strip_possessive(word: str) -> str:
    for suffix in ("'s", "’s", "'", "’"):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)]
    return word


# Words that greet, thank, agree, praise or take leave ("Thanks, that's really helpful!", "Good
# morning!", "ok great"), and the function words that go with them: a message made only of these
# asks nothing, in any wording.
_SMALL_TALK = wordset(
    """
    hi hello hey hiya howdy greetings morning afternoon evening night bye goodbye later ciao ya
    thanks thank thx ty cheers appreciate appreciated grateful helpful useful clear great good
    nice cool awesome perfect fine alright wonderful excellent interesting brilliant lovely
    amazing fantastic fascinating neat wow ok okay k sure yes yep no nope right true indeed glad
    happy understood got sense makes see noted lol haha
    """
)
_WITH_SMALL_TALK = wordset(
    """
    that that's thats this it it's its was is so very really much lot a again you your for the
    all of now i i'm im am that’s it’s i’m there
    """
)
# The only questions that are small talk: "How are you?", "Hi, how are you doing?"
_GREETING_QUESTION = wordset("how are you doing hi hello hey there")


def is_small_talk(text: str) -> bool:
    """True for greetings, thanks, acknowledgements, goodbyes in any wording ("cool, thanks!",
    "Thanks, that's really helpful!"): no search needed.

    The whole message must be small talk: "thanks, and who is Justine?" is a question."""
    tokens = [t.lower() for t in re.findall(r"[A-Za-z'’]+", text)]
    if not tokens:
        return True
    if "?" in text:  # "How are you?" yes; "How?" no
        return set(tokens) <= _GREETING_QUESTION and "you" in tokens
    if len(tokens) > 12:
        return False
    small = [t in _SMALL_TALK for t in tokens]
    pairs = zip(small, tokens, strict=True)
    return any(small) and all(s or t in _WITH_SMALL_TALK for s, t in pairs)


class FollowUpDetector:
    """Decides, without a model, whether a question depends on the conversation before it, and
    which earlier exchanges it depends on.

    A question is a follow-up when it cannot be understood alone: it opens with an ellipsis ("and
    then?", "what about Justine?"), is a fragment ("Why?", "What year?"), uses a pronoun or a
    demonstrative no name in it can stand for ("What did he do there?"), refers to something the
    last exchanges mentioned with a definite article ("the letter"), or - in a conversation -
    names nothing it is about ("Who was angry?", "What did the old man want?", "Who arrived in
    London?": a place names where, not whom): its topic is the conversation's. A question that
    names what it is about (a name, a quoted phrase) reads on its own.

    ``nameless=False`` keeps only the first four (what cannot be read alone at all)."""

    def __init__(self, *, nameless: bool = True) -> None:
        self._nameless = nameless

    def is_follow_up(self, question: str, history: Sequence[Exchange]) -> bool:
        """True when ``question`` leans on ``history`` (always False when there is no history)."""
        if not history or is_small_talk(question) or QUOTED_PHRASE.search(question):
            return False
        if ELLIPTICAL_START.search(question):
            return True
        if _is_fragment(question) or _has_unresolved_reference(question):
            return True
        if self._nameless and not _topic_names(question):
            return True
        return _has_definite_reference_to(question, history[-3:])

    def thread(self, question: str, history: Sequence[Exchange]) -> list[Exchange]:
        """The exchanges ``question`` refers to: none for a self-contained question; for a
        follow-up, the earlier exchanges back to (and including) the question that opened their
        topic - one that reads on its own and shares no name or word with the questions just
        before it - small talk left out. "Why did Victor leave Geneva?" / "Who is Clerval?" /
        "Where does he live?" / "Why?": the "Why?" refers to the last two only."""
        talk = [exchange for exchange in history if not is_small_talk(exchange[0])]
        if not self.is_follow_up(question, talk):
            return []
        start = len(talk) - 1
        while start > 0 and not self._opens_a_topic(talk[start][0], talk[:start]):
            start -= 1
        return talk[start:]

    def _opens_a_topic(self, question: str, before: Sequence[Exchange]) -> bool:
        if self.is_follow_up(question, before):
            return False
        said = {w for q, _ in before[-2:] for w in _topic_words(q)}
        return not (_topic_words(question) & said)


def _topic_names(question: str) -> list[str]:
    """The names ``question`` is about: not a setting ("Who arrived in London?" names where, not
    whom or what; in a conversation its topic is the conversation's)."""
    return [n for n in proper_nouns(question) if person_like(n, [question])]


def _topic_words(question: str) -> set[str]:
    return {w.lower() for n in proper_nouns(question) for w in n.split()} | set(
        content_words(question)
    )


def _is_fragment(question: str) -> bool:
    return len(words(question)) <= 2 or not (content_words(question) or proper_nouns(question))


def _has_unresolved_reference(question: str) -> bool:
    """A pronoun or demonstrative that no name in the question can stand for. "Did Victor see
    his father?" reads on its own. Not so "Had he seen the Earl?" (a pronoun before the name
    never means it) or "Did Victor marry her?" (an object pronoun never means its own clause's
    subject: that would be "herself"; with one person named it points outside the question)."""
    tokens = [w.lower() for w in words(_EXISTENTIAL_THERE.sub(" ", question))]
    referring = [i for i, t in enumerate(tokens) if _uncontracted(t) in REFERRING_WORDS]
    if not referring:
        return False
    if any(_points_back(tokens[i]) for i in referring):
        return True
    people = [n for n in proper_nouns(question) if person_like(n, [question])]
    if not people:
        return True
    starts = {n.split()[-1].lower().rstrip(".") for n in people}
    named = [i for i, t in enumerate(tokens) if _strip_possessive(t) in starts]
    if referring[0] < min(named, default=len(tokens)):
        return True
    return len(people) == 1 and any(_is_object_pronoun(tokens, i) for i in referring)


def _uncontracted(token: str) -> str:
    """ "that's" -> "that", "it's" -> "it", "they're" -> "they"."""
    return re.split(r"['’]", token, maxsplit=1)[0]


def _points_back(token: str) -> bool:
    """A demonstrative no person can be: "Does Vane think that's reliable?", "Did Victor go
    there?", "What did Jane do then?". Plain "this" and "that" also introduce a clause or a noun
    ("Did Jane know that ..."), so only their pronoun form ("that's") counts."""
    word = _uncontracted(token)
    if word in ("this", "that"):
        return word != token
    return word in DEMONSTRATIVES


def _is_object_pronoun(tokens: list[str], i: int) -> bool:
    if tokens[i] in ("him", "them"):
        return True
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    return tokens[i] == "her" and (following is None or following in AFTER_OBJECT_HER)


def _has_definite_reference_to(question: str, recent: Sequence[Exchange]) -> bool:
    """ "the letter" when the last exchanges mentioned a letter: a definite noun phrase whose
    noun was just talked about."""
    earlier = {w for q, a in recent for w in content_words(f"{q} {a or ''}")}
    nouns = re.findall(r"\bthe\s+([a-z][a-z\-]+)", question.lower())
    return any(_strip_possessive(n) in earlier for n in nouns)


# --- people: who a name is, as far as the conversation's own words tell --------------------------
MALE_PRONOUNS = wordset("he him his himself")
FEMALE_PRONOUNS = wordset("she her hers herself")
_MALE_TITLES = wordset(
    "Mr Sir Lord King Prince Duke Count Baron Monsieur Signor Herr Father Brother Uncle Master"
)
_FEMALE_TITLES = wordset(
    """
    Mrs Miss Ms Lady Madame Mme Mademoiselle Queen Princess Duchess Countess Sister Aunt Mother
    Dame
    """
)
# "Walton wrote his letters", "Justine said she": after a name, these are that person's own
# (unlike "him" and "her", which after a name mostly mean someone else: "Victor loved her").
_MALE_EVIDENCE = wordset("he his himself")
_FEMALE_EVIDENCE = wordset("she hers herself")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# A mention that names a place ("in Geneva", "at Ingolstadt") or someone spoken to ("my dear
# Victor") rather than someone spoken about.
_NOT_REFERRED_TO = re.compile(
    r"(?:\b(?:in|at|near|into|towards?|through|across|dear|dearest)\s+(?:the\s+)?)$", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Person:
    """A name a pronoun may stand for; ``gender`` is "m", "f", or None when nothing tells."""

    name: str
    gender: str | None = None

    def agrees_with(self, pronoun: str) -> bool:
        """False only when the gender is known and the pronoun's is the other one."""
        word = pronoun.lower()
        if word in MALE_PRONOUNS:
            return self.gender != "f"
        if word in FEMALE_PRONOUNS:
            return self.gender != "m"
        return True


def infer_gender(name: str, texts: Sequence[str]) -> str | None:
    """ "m" or "f" from a title before the name ("Mrs. Saville") or the pronouns after it in
    sentences that name no one else ("Walton wrote his letters"); None when neither tells or
    they tie."""
    tokens = "|".join(re.escape(t) for t in name.split() if t[:1].isupper())
    if not tokens:
        return None
    mention = re.compile(rf"\b(?:{tokens})\b")
    titled = re.compile(rf"\b([A-Z][a-z]+)\.?\s+(?:[A-Z][\w'’\-]*\s+)*?(?:{tokens})\b")
    votes = {"m": 0, "f": 0}
    own = set(name.split())
    for text in texts:
        for match in titled.finditer(text):
            title = match.group(1)
            if title in _MALE_TITLES or title in _FEMALE_TITLES:
                votes["m" if title in _MALE_TITLES else "f"] += 2
        for sentence in _SENTENCE.split(text):
            found = mention.search(sentence)
            if found is None or _names_another(sentence, own):
                continue
            said = {w.lower() for w in words(sentence[found.end() :])}
            male, female = bool(said & _MALE_EVIDENCE), bool(said & _FEMALE_EVIDENCE)
            if male != female:
                votes["m" if male else "f"] += 1
    if votes["m"] == votes["f"]:
        return None
    return "m" if votes["m"] > votes["f"] else "f"


def _names_another(sentence: str, own: set[str]) -> bool:
    """Any capitalised word, even a sentence opener, that is not part of the name: the
    sentence's pronouns may be that one's."""
    return any(
        w not in own and w.lower() not in NOT_NAMES and w != "I"
        for w in (_strip_possessive(t) for t in re.findall(r"\b[A-Z][\w'’\-]*", sentence))
    )


_HEADING_WORDS = wordset("chapter letter part book volume canto stave act scene")


def person_like(name: str, texts: Sequence[str]) -> bool:
    """False for words of a heading ("LETTER", "Twenty CHAPTER TWENTY SEVEN", "XCVII") and for
    a name only ever used as a place ("in Geneva") or to address someone ("dear Victor"): no
    "he" or "she" stands for those."""
    if any((len(w) > 1 and w.isupper()) or w.lower() in _HEADING_WORDS for w in name.split()):
        return False
    first = re.compile(rf"\b{re.escape(name.split()[0])}\b")
    mentions = [(text, m.start(), m.end()) for text in texts for m in first.finditer(text)]
    return not mentions or any(
        not _NOT_REFERRED_TO.search(text[:start]) and not _vocative(text, start, end)
        for text, start, end in mentions
    )


def _vocative(text: str, start: int, end: int) -> bool:
    """ "And how, Victor, can I relate": set off by commas, the name is the one spoken to."""
    return bool(re.search(r",\s*$", text[:start]) and re.match(r"[,!?]", text[end:]))
