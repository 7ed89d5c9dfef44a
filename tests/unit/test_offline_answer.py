"""The offline answer's choice of sentences (``best_quotes``) with fake embedders: a question or a
sentence that says little does not lead, a sentence is read with its neighbours, "who is X" leads
with X's introduction (not for "X's friend"), and a why/how question prefers the sentences around
the one that answers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from folio.agent.offline.answer import best_quotes, compose, following, lead_quote
from folio.domain.passages import Passage, Person
from folio.domain.ports import Embedder
from tests.unit.test_offline_agent import BagOfWords


class Scripted:
    """Each sentence's cosine with the question as the test sets it; any other text (a sentence
    read with its neighbours) is orthogonal to the question, so its place adds nothing."""

    name, dimensions = "scripted", 2

    def __init__(self, question: str, cosines: Mapping[str, float], floor: float = 0.3) -> None:
        self.question, self.cosines, self.relevance_floor = question, cosines, floor

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 2), dtype=np.float32)
        for row, text in enumerate(texts):
            c = 1.0 if text == self.question else self.cosines.get(text, 0.0)
            out[row] = (c, math.sqrt(1 - c * c))
        return out


def passage(text: str, start: int = 0, chapter: str = "Chapter 2") -> Passage:
    return Passage(f"c{start}", chapter, "12", "12", start, start + len(text), text)


def quoted(
    embedder: Embedder,
    question: str,
    *passages: Passage,
    about: Person | None = None,
) -> list[str]:
    quotes = best_quotes(embedder, question, passages, about)
    return [q.sentence for q in quotes]


ANSWER = "The keeper trimmed the lamp wick at dusk every night."


def test_a_question_does_not_lead_over_a_sentence_that_tells_nearly_as_much() -> None:
    asked = "Did the keeper trim the lamp that night?"
    question = "When did the keeper trim the lamp?"
    embedder = Scripted(question, {asked: 0.7, ANSWER: 0.6})
    assert quoted(embedder, question, passage(f"{asked} {ANSWER}")) == [ANSWER, asked]


def test_a_question_that_comes_close_only_as_a_question_does_not_answer() -> None:
    asked = "Did the keeper trim the lamp that night?"
    question = "When did the keeper trim the lamp?"
    embedder = Scripted(question, {asked: 0.45})
    assert quoted(embedder, question, passage(f"{asked} The gulls cried.")) == []
    assert quoted(Scripted(question, {asked: 0.45}, floor=0.1), question, passage(asked))


def test_a_sentence_that_says_little_does_not_lead() -> None:
    tag = "“Yes,” said he."  # a dialogue tag: two words of content
    question = "Did the keeper trim the lamp?"
    embedder = Scripted(question, {tag: 0.65, ANSWER: 0.6})
    assert quoted(embedder, question, passage(f"{tag} {ANSWER}")) == [ANSWER, tag]
    address = "“Dear, dear keeper!”"  # an exclamation whose one word of content is its name
    embedder = Scripted(question, {address: 0.75, ANSWER: 0.6})
    assert quoted(embedder, question, passage(f"{address} {ANSWER}")) == [ANSWER, address]


def test_a_sentence_sharing_a_word_of_the_question_in_another_form_is_read() -> None:
    """Frankenstein at Chapter 5: "What did Victor create?" never read "Unable to endure the
    aspect of the being I had created, ...": the sentences read are those sharing most words
    with the question, and "created" was not "create". Words are compared by their stems."""
    made = "Unable to endure the being the keeper had created, he rushed out of the room."
    named = [f"The keeper saw gull number {n} at dawn." for n in range(12)]
    question = "What did the keeper create?"
    embedder = Scripted(question, {made: 0.6, **dict.fromkeys(named, 0.35)})
    quotes = quoted(embedder, question, passage(" ".join(named), 100), passage(made, 900))
    assert quotes[0] == made


def test_the_same_sentence_cut_apart_by_two_passages_is_quoted_once() -> None:
    """The Man Who Was Thursday: "What is the Central Anarchist Council?" quoted "You see, there
    are seven members of the Central Anarchist Council, ..." twice, once with the mark of the
    speech it opens ("'You see, ..."), from two passages overlapping there."""
    said = "You see, there are seven members of the council, named after the days of the week."
    question = "What is the council?"
    embedder = Scripted(question, {said: 0.7, f"'{said}": 0.7, ANSWER: 0.4})
    quotes = quoted(embedder, question, passage(f"'{said} {ANSWER}", 100), passage(said, 300))
    assert [q.strip("'") for q in quotes] == [said, ANSWER]


def test_a_sentence_is_read_with_its_neighbours() -> None:
    """Tom and Ned are sailors alike; the sentence before Tom's speaks of the keeper's friend."""
    ned = passage("Ned was a sailor of the south. The storm broke the mast.", 500)
    tom = passage(
        "The keeper had one closest friend among the crews. Tom was a sailor of the north."
    )
    question = "Which sailor was the closest friend of the keeper?"
    quotes = quoted(BagOfWords(), question, ned, tom)
    assert quotes.index("Tom was a sailor of the north.") < quotes.index(
        "Ned was a sailor of the south."
    )
    alike = quoted(BagOfWords(), "Which sailor?", ned, tom)  # no neighbour helps: found order
    assert alike[:2] == ["Ned was a sailor of the south.", "Tom was a sailor of the north."]


INTRO = (
    "The keeper had a son. The eldest of his boys, a quiet, clever lad of ten, was the pride of "
    "the harbour. “Come in, Tom,” said the keeper. “Tom Hale, come in!” Tom Hale ran."
)
FIRST = "“Come in, Tom,” said the keeper."


def tom_hale(first: Passage) -> Person:
    return Person("Tom Hale", 9, first, ("Tom",))


def test_who_is_x_leads_with_the_narration_nearest_to_their_first_mention() -> None:
    found = passage(INTRO, 1000)
    first = Passage(None, "Chapter 2", "12", "12", 1000 + INTRO.index(FIRST),
                    1000 + INTRO.index(FIRST) + len(FIRST), FIRST)  # fmt: skip
    later = passage("Tom Hale was seen at the harbour. Tom Hale ate fish.", 5000)
    question = "Who is Tom Hale?"
    cosines = {"Tom Hale was seen at the harbour.": 0.8, "Tom Hale ate fish.": 0.7}
    quotes = quoted(Scripted(question, cosines), question, later, found, about=tom_hale(first))
    lead = "The eldest of his boys, a quiet, clever lad of ten, was the pride of the harbour."
    assert quotes == [lead, "Tom Hale was seen at the harbour.", "Tom Hale ate fish."]


def test_without_a_passage_holding_the_first_mention_its_sentence_leads() -> None:
    first = passage("Tom Hale, the keeper's son, rowed out to the wreck alone.", 9000)
    later = passage("Tom Hale was seen at the harbour.", 5000)
    question = "Who is Tom?"
    embedder = Scripted(question, {"Tom Hale was seen at the harbour.": 0.8})
    quotes = quoted(embedder, question, later, about=tom_hale(first))
    assert quotes == [first.text, "Tom Hale was seen at the harbour."]


def test_a_question_that_asks_more_of_the_person_gets_no_introduction() -> None:
    first = passage("Tom Hale, the keeper's son, rowed out to the wreck alone.", 9000)
    later = passage("Tom Hale feared the sea after the storm.", 5000)
    question = "Why does Tom Hale fear the sea?"
    embedder = Scripted(question, {"Tom Hale feared the sea after the storm.": 0.8})
    assert quoted(embedder, question, later, about=tom_hale(first))[0] == later.text


def test_who_is_x_leads_with_their_first_mention_in_a_found_passage_opening_a_chapter() -> None:
    """The Wisdom of Father Brown: "Who is Muscari?" led with "Waiters in white aprons..." when
    the search found the passage opening his chapter ("II. The Paradise of Thieves\n\n\nTHE
    great Muscari, ..."): its heading, a sentence of its own among the quotable ones, moved
    where the first mention was counted by one."""
    heading = "II. The Paradise of Thieves"
    mention = "THE great Muscari, most original of the young Tuscan poets, walked swiftly in."
    text = f"{heading}\n\n\n{mention} Waiters in white aprons were laying out lunch. He sat."
    opening = Passage("c1", heading, "16", "16", 1000, 1000 + len(text), text)
    at = 1000 + text.index(mention)
    first = Passage(None, heading, "16", "16", at, at + len(mention), mention)
    muscari = Person("Muscari", 9, first, ())
    question = "Who is Muscari?"
    embedder = Scripted(question, {"Waiters in white aprons were laying out lunch.": 0.5})

    assert quoted(embedder, question, opening, about=muscari)[0] == mention


def test_asking_who_someone_is_in_other_words_leads_with_their_introduction() -> None:
    """ "tell me about marianne" led with a sentence of Chapter 16, not "Marianne's abilities
    were, in many respects, quite equal to Elinor's" (her introduction): it asks more words than
    her name. Told by the embedder (``who``), it is answered as "Who is Marianne?" is."""
    first = passage("Tom Hale, the keeper's son, rowed out to the wreck alone.", 9000)
    later = passage("Tom Hale was seen at the harbour.", 5000)
    question = "Tell me about Tom Hale"
    embedder = Scripted(question, {"Tom Hale was seen at the harbour.": 0.8})
    assert quoted(embedder, question, later, about=tom_hale(first))[0] == later.text
    quotes = best_quotes(embedder, question, [later], tom_hale(first), who=True)
    assert [q.sentence for q in quotes] == [first.text, later.text]


def test_a_person_named_as_someones_is_not_whom_the_question_is_about() -> None:
    """ "Tom's friend" is someone else: a sentence about Ned is quoted, no introduction of Tom."""
    first = passage("Tom Hale, the keeper's son, rowed out to the wreck alone.", 9000)
    friend = "Ned Gray was the closest friend of Tom."
    question = "Who is Tom's closest friend?"
    embedder = Scripted(question, {friend: 0.6})
    quotes = quoted(embedder, question, passage(friend), about=tom_hale(first))
    assert quotes == [friend]


def test_the_words_a_question_asks_lead_over_the_names_it_uses() -> None:
    """Equally close to the question, the sentence holding what it asks ("carry") leads the one
    that merely names the people asked about: the names already found the passages."""
    question = "What did Tom Keeper carry up the tower?"
    names = "Tom Keeper sat by the fire with his dog all evening long."
    carried = "He would carry the heavy oil cans up every single evening."
    embedder = Scripted(question, {names: 0.6, carried: 0.6})
    assert quoted(embedder, question, passage(f"{names} {carried}"))[0] == carried


def test_who_is_x_keeps_out_others_but_why_may_be_answered_by_what_others_did() -> None:
    first = passage("Tom Hale, the keeper's son, rowed out to the wreck alone.", 9000)
    ned = "Ned Gray sent Tom away to the lighthouse at dawn."
    found = passage(f"{ned} Tom Hale walked the cliff path.", 5000)
    why = "Why did Tom Hale leave the harbour?"
    cosines = {ned: 0.7, "Tom Hale walked the cliff path.": 0.5}
    assert quoted(Scripted(why, cosines), why, found, about=tom_hale(first))[0] == ned
    who = "Who is Tom Hale?"
    assert ned not in quoted(Scripted(who, cosines), who, found, about=tom_hale(first))


def test_a_name_described_inside_a_quotation_still_introduces_them() -> None:
    """Set off by commas mid-quotation, the name is described, not spoken to."""
    entry = (
        "The register read: “Married, 1810, Tom Hale, son and heir of Ned Hale, of the harbour.”"
    )
    first = passage(entry, 9000)
    later = passage("Tom Hale was seen at the harbour.", 5000)
    question = "Who is Tom Hale?"
    quotes = quoted(Scripted(question, {"Tom Hale was seen at the harbour.": 0.8}), question,
                    later, about=tom_hale(first))  # fmt: skip
    assert quotes[0] == entry


def test_a_passage_across_a_chapters_start_cites_the_next_chapter_and_quotes_no_heading() -> None:
    """The Wisdom of Father Brown: a passage from the end of story II ran into "The Duel of Dr
    Hirsch", the heading of III; the heading was quoted, and cited in II."""
    end = "The brigands were taken on the road at dawn by the carabineers."
    heading = "The Duel of Dr Hirsch"
    text = f"{end}\n\n{heading}\n\nThey were both pupils of the great Dr Hirsch, a scientist."
    start = text.index(heading)
    across = Passage("c1", "II. The Paradise of Thieves", "33", "34", 0, len(text), text,
                     chapters=((start, "III. The Duel of Dr Hirsch"),))  # fmt: skip
    question = "Who taught them?"
    pupils = "They were both pupils of the great Dr Hirsch, a scientist."
    embedder = Scripted(question, {heading: 0.9, pupils: 0.6, end: 0.1})
    quotes = best_quotes(embedder, question, [across])
    assert [q.sentence for q in quotes] == [pupils]
    assert quotes[0].location.startswith("III. The Duel of Dr Hirsch")
    assert across.place(0, 10).chapter == "II. The Paradise of Thieves"


def test_a_heading_with_no_blank_line_around_it_is_never_quoted_with_a_sentence() -> None:
    """A PDF's text has no blank lines: "Chapter 1\nI am by birth a Genevese..." was one
    sentence, quoted heading first, whether the passage opened the chapter or ran into it."""
    end = "The gallant vessel was wrecked on its course."
    first = "I am by birth a Genevese, and my family is one of the most distinguished."
    opening = passage(f"Chapter 1\n{first}\nMy ancestors had been counsellors.", 0, "Chapter 1")
    question = "Where was he born?"
    embedder = Scripted(question, {first: 0.8})
    assert quoted(embedder, question, opening)[0] == first
    text = f"{end}\nChapter 1\n{first}"
    across = Passage("c1", "Letter 4", "10", "11", 0, len(text), text,
                     chapters=((text.index("Chapter 1"), "Chapter 1"),))  # fmt: skip
    quotes = best_quotes(embedder, question, [across])
    assert quotes[0].sentence == first and quotes[0].location.startswith("Chapter 1")


def test_a_speech_beside_the_first_mention_that_does_not_name_them_does_not_introduce_them() -> (
    None
):
    """Moby Dick: "Who is Captain Ahab?" led with "Well, sir, I want to see what whaling is.",
    Ishmael's speech before the first mention (a question, which does not introduce). A speech
    beside it introduces only when it names them; narration may (P&P: "The eldest of them, a
    sensible, intelligent young woman, ... was Elizabeth's intimate friend." before
    "Charlotte")."""
    before = "“Well, I want to see the world and the wide sea.”"
    first_words = "“Have ye seen Captain Hale yet?”"
    after = "“Aye, Captain Hale is the master of this ship.”"
    text = f"{before} {first_words} {after}"
    found = passage(text, 1000)
    at = 1000 + text.index(first_words)
    first = Passage(None, "Chapter 2", "12", "12", at, at + len(first_words), first_words)
    hale = Person("Captain Hale", 9, first, ("Hale",))
    question = "Who is Captain Hale?"
    quotes = quoted(Scripted(question, {before: 0.5, after: 0.4}), question, found, about=hale)
    assert quotes[0] == after


PLACE_NEWS = "The harbour families were always eager for news of newcomers."


def place_quotes(name: str, first_words: str, then: str, *, place: bool = True) -> list[str]:
    """What "What is <name>?" quotes from one passage: news of newcomers, then the sentence
    ``name`` is first met in, then ``then`` (cosines 0.5, 0.4, 0.6)."""
    text = f"{PLACE_NEWS} {first_words} {then}"
    at = 1000 + text.index(first_words)
    first = Passage(None, "Chapter 1", "1", "1", at, at + len(first_words), first_words)
    question = f"What is {name}?"
    cosines = {PLACE_NEWS: 0.5, first_words: 0.4, then: 0.6}
    asked = Person(name, 9, first, (), place=place)
    return quoted(Scripted(question, cosines), question, passage(text, 1000), about=asked)


def test_what_is_a_place_is_answered_by_the_sentences_naming_it_not_an_introduction() -> None:
    """Pride and Prejudice at Chapter V: "What is Netherfield?" led with "However little known
    the feelings or views of such a man may be ...", the narration beside its first mention in a
    speech, as if it introduced a person. A place is not introduced so: the sentences naming it
    rank by what they say, and one whose subject is a person (Mrs. Long's news) is kept."""
    first_words = "“Have you heard that Gull Hall is let at last?”"  # asks: says little
    news = "“Mrs. Long says that Gull Hall is taken by a young man of large fortune.”"
    assert place_quotes("Gull Hall", first_words, news)[0] == news
    # as a person: the narration beside their first mention introduces them
    assert place_quotes("Gull Hall", first_words, news, place=False)[0] == PLACE_NEWS


def test_what_is_a_place_leads_with_the_sentence_it_is_first_named_in() -> None:
    """Moby Dick: "What is the Pequod?" led with "The chief mate of the Pequod was Starbuck"
    once places got no introduction; the sentence the book first names it in says what it is
    ("... there were three ships up for three-years' voyages--The Devil-dam, the Tit-bit, and
    the Pequod."), not the narration beside it."""
    first_words = "There were three ships in the harbour, and the Gull was the oldest."
    mate = "The mate of the Gull was a quiet man."
    assert place_quotes("the Gull", first_words, mate)[:2] == [first_words, mate]


def test_asked_only_who_someone_is_more_of_the_sentences_naming_them_are_read() -> None:
    """Moby Dick: "Who is Queequeg?" found "Queequeg was a native of Rokovoko..." first, but the
    sentences read are chosen by the words they share with the question (and their neighbours'),
    and a question asking only who someone is has no word but the name: a scene naming him in
    every line filled them. Twice as many are read for it."""
    first = passage("Tom Hale, the keeper's son, rowed out to the wreck alone.", 9000)
    native = "Tom Hale was a native of the north isles, far away."
    best = passage(f"The rain fell. {native} The sea was grey.", 100)
    scene = passage(" ".join(f"Tom Hale sat down by fire number {n}." for n in range(12)), 900)
    question = "Who is Tom Hale?"
    embedder = Scripted(question, {native: 0.7}, floor=0.2)
    assert native in quoted(embedder, question, scene, best, about=tom_hale(first))
    asked = "Why did Tom Hale sit down?"  # asks more: the usual number is read
    assert native not in quoted(Scripted(asked, {native: 0.7}, floor=0.2), asked, scene, best,
                                about=tom_hale(first))  # fmt: skip


def test_the_sentence_a_person_is_first_met_in_introduces_them_whatever_name_opens_it() -> None:
    """The Man Who Was Thursday: "Who is Gregory?" had no introduction: his first sentence, "And
    Mr. Lucian Gregory, the red-haired poet, ...", opens (in its first three words) with "Mr.
    Lucian", which is no form of "Gregory", so it was kept out as about someone else."""
    intro = "And Mr. Lucian Gregory, the red-haired poet, was really a man worth listening to."
    first = passage(intro, 9000)
    later = passage("Gregory began in a smooth voice. Lucian smiled at the poet.", 5000)
    gregory = Person("Gregory", 9, first, ("Comrade Gregory",))
    question = "Who is Gregory?"
    embedder = Scripted(question, {"Gregory began in a smooth voice.": 0.8})
    assert quoted(embedder, question, later, about=gregory)[0] == intro


def test_first_met_in_a_speech_the_story_s_own_first_words_about_them_introduce_them() -> None:
    """Moby Dick: "Who is Flask?" had no introduction: he is first named in Captain Bildad's
    farewell ("Luck to ye, Mr. Flask"), with only speech around it; "The third mate was Flask, a
    native of Tisbury" is where the story itself first tells of him (``Person.told``). Narration
    beside a first mention in speech still comes first (P&P: "The eldest of them, ..." just before
    Mrs. Bennet's "..., Charlotte,")."""
    farewell = "“Luck to ye, Mr. Flask, and good-bye to ye all, lads!”"
    first = passage(farewell, 100)
    told = passage("The third mate was Flask, a native of Tisbury, in the islands.", 9000)
    later = passage("Flask sat down last at the dinner table.", 5000)
    flask = Person("Flask", 9, first, ("Mr Flask",), told=told)
    question = "Who is Flask?"
    embedder = Scripted(question, {"Flask sat down last at the dinner table.": 0.8})
    assert quoted(embedder, question, later, about=flask)[0] == told.text
    eldest = "The eldest of them, a sensible young woman, was the keeper's friend."
    scene = passage(f"{eldest} “You began the evening well, Flask,” said the keeper.", 100)
    at = scene.text.index("“You")
    spoken = Passage(None, "Chapter 2", "12", "12", 100 + at, 100 + len(scene.text),
                     scene.text[at:])  # fmt: skip
    flask = Person("Flask", 9, spoken, ("Mr Flask",), told=told)
    assert quoted(embedder, question, later, scene, about=flask)[0] == eldest


def test_a_play_s_speech_is_quoted_with_its_speaker_and_a_stage_direction_never_leads() -> None:
    """Macbeth: "Enter the three Witches." came closest to "Who are the witches?" and led; a
    speech was quoted with its prefix ("1. A Saylors Wife...") or none, so no reader knew who
    speaks it."""
    scene = (
        "Scena Tertia.\n\nThunder. Enter the three Witches.\n\n"
        "  1. Where hast thou beene, Sister?\n  2. Killing the Swine of the farmer\n\n"
        "   All. The weyward Sisters, hand in hand,\nPosters of the Sea and Land.\n"
        "Enter Macbeth and Banquo.\n\n  Macb. So foule and faire a day I haue not seene\n\n"
        "   Mal. This is the Sergeant\n\nExeunt.\n"
    )
    found = passage(scene, chapter="Actus Primus, Scena Tertia")
    question = "Who are the witches?"
    direction = "Enter the three Witches."
    sisters = "The weyward Sisters, hand in hand, Posters of the Sea and Land."
    speech = "So foule and faire a day I haue not seene"
    embedder = Scripted(question, {direction: 0.9, sisters: 0.5, speech: 0.6})
    quotes = best_quotes(embedder, question, [found])
    assert [(q.sentence, q.speaker) for q in quotes][:2] == [
        (speech, "Macb"),
        (sisters, "All"),
    ]
    assert quotes[-1].sentence == direction  # after every speech
    answer = compose(quotes, "up to Actus Primus, Scena Tertia")
    assert f'- Macb. "{speech}" (Actus Primus, Scena Tertia, p. 12)' in answer


def test_who_is_x_in_a_play_is_not_introduced_by_the_stage_direction_they_enter_in() -> None:
    """Julius Caesar: "Who is Cassius?" led with "Enter Caesar, Antony for the Course, ...,
    Cassius, Caska, a Soothsayer" (where the people tool first met him, a sentence alone, read
    as narration); a passage opening with a prefix its indent was trimmed from ("Mur. May we")
    is a speech too."""
    scene = (
        "Mur. May we do so?\nYou know it is the Feast of Lupercall\n\n"
        "   Fla. It is no matter, let no Images\nBe hung with Caesars Trophees\n\n"
        "  Bru. No Cassius: For the eye sees not it selfe but by reflection\n\n"
        "   Cas. Tis iust, and it is very much lamented Brutus\n"
    )
    found = passage(scene, 100, chapter="Actus Primus")
    entry = "Enter Caesar, Antony for the Course, Calphurnia, Brutus, Cassius, Caska."
    cassius = Person("Cassius", 9, passage(entry, 50, chapter="Actus Primus"), ("Cas",))
    question = "Who is Cassius?"
    speech = "No Cassius: For the eye sees not it selfe but by reflection"
    embedder = Scripted(question, {entry: 0.8, speech: 0.6}, floor=0.1)
    quotes = best_quotes(embedder, question, [found], cassius)
    assert (quotes[0].sentence, quotes[0].speaker) == (speech, "Bru")
    assert all(q.sentence != entry for q in quotes[:-1])
    assert {q.speaker for q in best_quotes(Scripted(question, {"May we do so?": 0.9}, 0.1),
                                           question, [found])} >= {"Mur"}  # fmt: skip


def test_what_follows_an_earlier_quote_is_the_next_sentence_that_says_something() -> None:
    said = compose(best_quotes(BagOfWords(), "name", [passage("His name was Willoughby.")]), "x")
    quote = lead_quote(said)
    assert quote == "His name was Willoughby."
    scene = passage(
        'He carried her in. His name was Willoughby. "Really?" Thanks. He then departed, to '
        "make himself still more interesting, in the midst of a heavy rain. Marianne watched."
    )
    after = following(scene, quote)  # not the question nor the word of thanks
    assert after is not None and after.sentence.startswith("He then departed, to make")
    assert following(passage("Nothing of him here at all."), quote) is None
    assert lead_quote("Nothing up to Chapter 5 answers this.") is None
    # the words as the phrase search reads them (accents, numbers, italics' underscores); the
    # sentence the quote opens, not an earlier one holding its words
    earlier = "Of all the men in 1792, _Zoë_ said, he was gone from the village before dawn."
    quote = '"He was gone."'
    scene = passage(f"{earlier} He was gone. He walked the long road to the sea alone that night.")
    after = following(scene, quote)
    assert after is not None and after.sentence.startswith("He walked the long road")
    accented = following(
        passage(f"{earlier} The people of the quiet village slept on until noon."), f'"{earlier}"'
    )
    assert accented is not None and accented.sentence.startswith("The people of the quiet")
    # a play's speech: its speaker's prefix is not one of its words
    play = '- Caes. "When Caesar sayes, do this, it is perform\'d" (Act I, p. 3)'
    assert (
        lead_quote(f"From the book, up to Act I:\n{play}")
        == "When Caesar sayes, do this, it is perform'd"
    )
