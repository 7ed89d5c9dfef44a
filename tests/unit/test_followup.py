"""Follow-up and small-talk detection: cheap rules, no model."""

from __future__ import annotations

import pytest

from folio.agent.offline.followup import (
    FollowUpDetector,
    Person,
    content_words,
    infer_gender,
    is_small_talk,
    person_like,
    proper_nouns,
)

HISTORY = [("Who is Victor's friend from Geneva?", "Henry Clerval, the son of a merchant.")]


@pytest.mark.parametrize(
    "question",
    [
        "What happens to him?",
        "Why did she leave?",
        "What about Justine?",
        "and then?",
        "Why?",
        "How so?",
        "to do what?",
        "Who else?",
        "Was she relieved?",
        "Where is that?",
        "What did the letter say?",
    ],
)
def test_questions_that_lean_on_the_conversation_are_follow_ups(question: str) -> None:
    history = [*HISTORY, ("What did Victor receive?", "A letter from his father.")]
    assert FollowUpDetector().is_follow_up(question, history)


@pytest.mark.parametrize(
    "question",
    [
        "Who is Elizabeth Lavenza?",
        "Where does Victor Frankenstein study?",
        "What does the creature learn from the De Lacey family?",
    ],
)
def test_self_contained_questions_are_not_follow_ups(question: str) -> None:
    assert not FollowUpDetector().is_follow_up(question, HISTORY)


def test_nothing_is_a_follow_up_without_history() -> None:
    detector = FollowUpDetector()
    assert not detector.is_follow_up("What happens to him?", [])
    assert not detector.is_follow_up("What about Justine?", [])


def test_a_pronoun_whose_name_is_in_the_question_is_not_a_follow_up() -> None:
    assert not FollowUpDetector().is_follow_up("Did Victor see his father in Geneva?", HISTORY)


def test_small_talk_is_never_a_follow_up() -> None:
    assert not FollowUpDetector().is_follow_up("thanks!", HISTORY)


@pytest.mark.parametrize(
    "text", ["thanks!", "Thank you", "hi", "Hello there", "ok", "great", "bye", "cool, thanks", ""]
)
def test_greetings_thanks_and_acknowledgements_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "thanks, and who is Justine?",
        "Hi, what happens to Clerval?",
        "ok why?",
        "Great Expectations",
    ],
)
def test_a_message_with_a_question_in_it_is_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


def test_proper_nouns_keep_multi_word_names_and_skip_sentence_openers() -> None:
    text = "Enter the room. Then Henry Clerval spoke to Y. A. Tittle. Clerval was kind."
    names = proper_nouns(text)
    assert "Henry Clerval" in names
    assert "Y. A. Tittle" in names
    assert "Clerval" in names  # a sentence opener followed by a verb is a name
    assert "Enter" not in names and "Then" not in names


def test_a_function_word_that_opens_a_sentence_is_not_part_of_the_name_after_it() -> None:
    assert proper_nouns("Even Elizabeth had never seen him.") == ["Elizabeth"]
    assert proper_nouns("Yes--if Darcy would come.") == ["Darcy"]
    assert proper_nouns("At last Henry Clerval spoke.") == ["Henry Clerval"]
    # an indefinite pronoun opening a sentence is no one ("Nothing could equal my delight")
    assert proper_nouns("Nothing could equal my delight on seeing Clerval.") == ["Clerval"]
    assert proper_nouns("Everyone was there. Somebody said Justine did it.") == ["Justine"]


def test_content_words_drop_stopwords_and_pronouns() -> None:
    assert content_words("What did he say to the monster in Chapter 5?") == ["monster", "chapter"]
    # a contracted function word is grammar: "don't", "she'll", "I'm"
    assert content_words("I don't see why she'll never marry; I'm lost") == ["marry", "lost"]


def test_a_title_before_a_name_tells_its_gender() -> None:
    texts = ["A letter to Mrs. Saville arrived.", "Mr. Kirwin is a magistrate."]
    assert infer_gender("Saville", texts) == "f"
    assert infer_gender("Kirwin", texts) == "m"


def test_pronouns_after_a_name_tell_its_gender_only_when_no_one_else_is_named() -> None:
    assert infer_gender("Robert Walton", ["Who is Robert Walton writing his letters to?"]) == "m"
    assert infer_gender("Justine", ["Justine said she was innocent."]) == "f"
    assert infer_gender("Victor", ["Victor told Elizabeth that she was safe."]) is None
    assert infer_gender("Victor", ["Victor loved her."]) is None  # "her" is someone else
    assert infer_gender("Clerval", ["Clerval arrived."]) is None


def test_places_headings_and_people_spoken_to_are_not_person_like() -> None:
    assert not person_like("Geneva", ["He lived in Geneva.", "They met at Geneva."])
    assert not person_like("Victor", ["My dear Victor, write soon.", "And how, Victor, can I?"])
    assert not person_like("LETTER", ["LETTER IV"])
    assert person_like("Elizabeth", ["He wrote to Elizabeth.", "Elizabeth smiled."])
    assert Person("Saville", "f").agrees_with("she")
    assert not Person("Saville", "f").agrees_with("his")
    assert Person("Clerval").agrees_with("her")


@pytest.mark.parametrize(
    "question",
    [
        "Had he seen the Earl?",  # a pronoun before the name never means it
        "What did Elizabeth tell him?",  # an object pronoun never means its clause's subject
        "Justine?",  # a fragment, even with a name
        "Any others?",
        "unless what happens?",
        "What was done instead?",  # an adverb that points back
        "Does Vane think that's reliable?",  # no person is "that"
        "Did Justine go there?",
        "What did Elizabeth do then?",
    ],
)
def test_pronouns_no_name_can_stand_for_and_fragments_are_follow_ups(question: str) -> None:
    assert FollowUpDetector().is_follow_up(question, HISTORY)


@pytest.mark.parametrize(
    "question",
    [
        'Where does it say "the ancient teachers of this science"?',  # a quotation
        "Was there a storm on Lake Geneva?",  # "there" that only says something exists
        "Did Victor see his father?",
        "Did Elizabeth know that Victor loved her?",  # "that" introducing a clause
    ],
)
def test_quotations_and_existential_there_read_on_their_own(question: str) -> None:
    assert not FollowUpDetector().is_follow_up(question, HISTORY)


def test_a_follow_up_s_thread_goes_back_to_the_question_that_reads_on_its_own() -> None:
    history = [
        ("Why did Victor go to Ingolstadt?", "To study."),
        ("Who is Henry Clerval?", "The son of a merchant."),
        ("thanks!", "You're welcome!"),
        ("Where does he live?", "In Geneva."),
    ]
    detector = FollowUpDetector()
    thread = detector.thread("Why?", history)
    assert [q for q, _ in thread] == ["Who is Henry Clerval?", "Where does he live?"]
    assert detector.thread("Who is Justine?", history) == []


@pytest.mark.parametrize(
    "text", ["Thanks, that's really helpful!", "Good morning!", "How are you?"]
)
def test_small_talk_in_other_wordings(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize("text", ["Is that true?", "Really?", "Good grief, who is he?", "How?"])
def test_a_short_question_is_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


def test_heading_words_are_no_one_a_pronoun_can_stand_for() -> None:
    assert not person_like("Twenty CHAPTER TWENTY SEVEN", ["Twenty CHAPTER TWENTY SEVEN"])
    assert not person_like("XCVII", ["XCVII When"])


def test_a_question_that_names_nothing_takes_its_topic_from_the_conversation() -> None:
    detector = FollowUpDetector()
    for question in ("Who was angry?", "What did the old man want?", "Describe the creature"):
        assert detector.is_follow_up(question, HISTORY)
        assert not detector.is_follow_up(question, [])
    assert not detector.is_follow_up("Why was Victor angry?", HISTORY)
    # a place says where, not whom: its topic is still the conversation's
    assert detector.is_follow_up("Who arrived in London?", HISTORY)
    assert not detector.is_follow_up("Who arrived in London?", [])
    assert not detector.is_follow_up("Who met Elizabeth in London?", HISTORY)
    assert not detector.is_follow_up("What is the capital of France?", HISTORY)
    # the scope guardrail judges such a question itself
    assert not FollowUpDetector(nameless=False).is_follow_up("How do I bake bread?", HISTORY)
