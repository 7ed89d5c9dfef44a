"""Query rewriting: the heuristic rewriter, the search query, and the LLM rewriter's fallback."""

from __future__ import annotations

from folio.agent.offline.referents import find_referents, question_subject
from folio.agent.offline.rewriter import HeuristicQueryRewriter

CLERVAL = [
    ("Who is Victor's friend from Geneva?", "Henry Clerval, the son of a merchant of Geneva.")
]


def test_a_pronoun_after_a_who_question_becomes_the_person_the_answer_named() -> None:
    assert HeuristicQueryRewriter().rewrite("What happens to him?", CLERVAL) == (
        "What happens to Henry Clerval?"
    )


def test_a_possessive_pronoun_becomes_a_possessive_name() -> None:
    history = [("Tell me about Victor Frankenstein.", None)]
    assert HeuristicQueryRewriter().rewrite("Where did his mother die?", history) == (
        "Where did Victor Frankenstein's mother die?"
    )


def test_her_as_an_object_is_not_made_possessive() -> None:
    history = [("Who is Elizabeth Lavenza?", None)]
    assert HeuristicQueryRewriter().rewrite("Did Victor marry her in Geneva?", history) == (
        "Did Victor marry Elizabeth Lavenza in Geneva?"
    )


def test_a_pronoun_of_the_other_gender_goes_to_someone_the_reader_named() -> None:
    # "he" cannot be Elizabeth; Darcy is the only man, but only the answer named him: a guess
    answer = "Elizabeth was longing to know what she thought of him. Mr. Darcy said he would come."
    rewriter = HeuristicQueryRewriter()
    guessed = [("Who had the thoughts at the beginning?", answer)]
    assert rewriter.rewrite("What was he doing?", guessed) == "What was he doing?"
    named = [("Did Elizabeth think of Mr. Darcy?", answer)]
    assert rewriter.rewrite("What was he doing?", named) == "What was Darcy doing?"


def test_it_refers_to_the_topic_the_conversation_turned_to() -> None:
    history = [("Who is Victor Frankenstein?", None), ("Tell me about the De Lacey cottage.", None)]
    assert HeuristicQueryRewriter().rewrite("Where is it?", history) == (
        "Where is the De Lacey cottage?"
    )


def test_what_about_reuses_the_previous_question_with_the_new_name() -> None:
    history = [("Who is Elizabeth?", "Elizabeth Lavenza is adopted by the Frankenstein family.")]
    assert HeuristicQueryRewriter().rewrite("What about Justine?", history) == "Who is Justine?"


def test_a_question_without_history_or_already_self_contained_is_unchanged() -> None:
    rewriter = HeuristicQueryRewriter()
    assert rewriter.rewrite("What happens to him?", []) == "What happens to him?"
    question = "Where does Victor Frankenstein study?"
    assert rewriter.rewrite(question, CLERVAL) == question


def test_search_query_adds_the_key_terms_of_earlier_questions() -> None:
    history = [("Where did Anne go after the ball?", "home"), ("Was she relieved?", "yes")]
    query = HeuristicQueryRewriter().query_with_history("Why?", history)
    assert query.startswith("Why")
    for term in ("anne", "ball", "relieved"):
        assert term in query.lower()


def test_question_subject_is_the_topic_a_question_names() -> None:
    assert question_subject("Tell me about the De Lacey family.") == "the De Lacey family"
    assert question_subject("Who is Elizabeth Lavenza?") == "Elizabeth Lavenza"
    assert question_subject("Why did Victor leave Geneva?") == "Victor"
    assert question_subject("What was his plan?") is None
    assert question_subject("What is the wedding?") == "the wedding"
    assert question_subject("What was the weather like?") == "the weather"


def test_an_act_after_who_was_is_not_a_topic_a_pronoun_can_stand_for() -> None:
    # "is" / "was" before a participle is an auxiliary: the question asks about an act
    assert question_subject("Who was waiting for someone?") is None
    assert question_subject("Who was also hurt?") is None
    assert question_subject("What is Leo relying on?") == "Leo"
    history = [("Who was waiting for someone?", "George waited by the gate.")]
    rewritten = HeuristicQueryRewriter().rewrite("Were they afraid?", history)
    assert "waiting" not in rewritten.split()[2:]


def test_search_query_resolves_the_pronoun_and_keeps_earlier_questions_not_answers() -> None:
    history = [
        (
            "Who is Victor's friend?",
            'From the book:\n- "He wept at the departure of Clerval." (Chapter 7, p. 55)',
        )
    ]
    query = HeuristicQueryRewriter().query_with_history("What happens to him?", history)
    # the reader's words kept whole, the referent added (never a pronoun replaced in the query)
    assert query.startswith("What happens to him? Clerval")
    assert "Victor's friend" in query
    assert "chapter" not in query.lower() and "departure" not in query


def test_a_self_contained_question_is_searched_as_itself() -> None:
    history = [("Who is Henry Clerval?", "The son of a merchant."), ("Why?", "He wanted to.")]
    rewriter = HeuristicQueryRewriter()
    for question in (
        "Who is Justine?",
        "Where does Victor Frankenstein study?",
        'Who says "I am malicious because I am miserable"?',
    ):
        assert rewriter.query_with_history(question, history) == question


def test_a_follow_up_borrows_only_the_turns_back_to_the_question_it_continues() -> None:
    history = [
        ("Why did Victor leave Geneva?", "To study at Ingolstadt."),
        ("Who is Henry Clerval?", "The son of a merchant of Geneva."),
        ("What did his father want him to do?", "To become a merchant."),
    ]
    query = HeuristicQueryRewriter().query_with_history("Why?", history)
    assert "Henry Clerval" in query and "father" in query
    assert "Ingolstadt" not in query and "leave" not in query


def test_what_about_a_name_takes_the_frame_of_the_question_before_not_its_subject() -> None:
    history = [("Who is Elizabeth?", "Elizabeth Lavenza is adopted by the Frankenstein family.")]
    query = HeuristicQueryRewriter().query_with_history("What about Justine?", history)
    assert "Justine" in query and "Elizabeth" not in query


def test_a_pronoun_for_someone_outside_the_question_is_a_follow_up() -> None:
    history = [("Who is Elizabeth Lavenza?", None)]
    query = HeuristicQueryRewriter().query_with_history("What did Victor give her?", history)
    assert "Elizabeth Lavenza" in query


def test_small_talk_in_the_history_never_reaches_a_search_query() -> None:
    history = [("Where did Anne go after the ball?", "home"), ("thanks!", "You're welcome!")]
    query = HeuristicQueryRewriter().query_with_history("Why?", history)
    assert "thanks" not in query.lower() and "welcome" not in query.lower()
    assert "ball" in query


# --- which person a pronoun stands for -----------------------------------------------------------
def test_a_pronoun_is_never_resolved_to_a_place_from_a_citation_s_letter_title() -> None:
    history = [
        (
            "Where did the creature learn to speak?",
            '- "I never saw a more interesting creature: his eyes have an expression of wildness."'
            " (Letter 4. To Mrs. Saville, England., p. 10)",
        )
    ]
    rewritten = HeuristicQueryRewriter().rewrite("Who were the family he watched?", history)
    assert rewritten == "Who were the family the creature watched?"


def test_it_opening_a_clause_after_a_thing_the_question_names_stands_for_that_thing() -> None:
    history = [("Who killed William?", "Nothing up to Chapter 5 mentions William.")]
    rewriter = HeuristicQueryRewriter()

    question = "How did the creature look when it opened its eye?"
    assert rewriter.rewrite(question, history) == question
    # not so a pronoun that opens no clause of its own, nor one after no thing
    assert rewriter.rewrite("What did it do then?", history) == "What did William do then?"


def test_a_citation_with_parentheses_inside_names_no_one() -> None:
    history = [
        (
            "Where did Captain Vane go?",
            '- "Captain Vane set off for the Pole." '
            "(Chapter 26. The Giant of the North (R M Ballantyne), Chapter Twenty, p. 23)",
        )
    ]
    rewritten = HeuristicQueryRewriter().rewrite("What did he forget?", history)
    assert rewritten == "What did Captain Vane forget?"
    named = {w for p in find_referents(history).people for w in p.name.split()}
    assert not named & {"Twenty", "Giant", "North", "Ballantyne"}


def test_after_who_is_a_name_the_pronoun_means_that_person_not_others_the_answer_names() -> None:
    history = [
        (
            "Who is Elizabeth Lavenza?",
            '- "Elizabeth Lavenza became the inmate of my parents\' house." (Chapter 1, p. 19)\n'
            '- "Victor was then seventeen." (Chapter 3, p. 26)',
        )
    ]
    rewritten = HeuristicQueryRewriter().rewrite("What happens to her in the end?", history)
    assert rewritten == "What happens to Elizabeth Lavenza in the end?"


def test_a_pronoun_skips_a_person_of_the_other_gender() -> None:
    history = [("Tell me about Mr. Kirwin and Mrs. Saville.", None)]
    rewriter = HeuristicQueryRewriter()
    assert rewriter.rewrite("What did she write?", history) == "What did Saville write?"
    assert rewriter.rewrite("What did he write?", history) == "What did Mr. Kirwin write?"


def test_a_name_only_spoken_to_in_a_quoted_letter_is_not_the_pronoun_s_referent() -> None:
    history = [
        (
            "Who is Robert Walton writing his letters to?",
            '- "Your affectionate brother, Robert Walton" (Letter 2, p. 7)\n'
            '- "And how, Victor, can I relate our misfortune?" (Chapter 7, p. 54)\n'
            '- "My dear Victor, you have waited impatiently." (Chapter 7, p. 53)',
        )
    ]
    rewritten = HeuristicQueryRewriter().rewrite("Where is he sailing to?", history)
    assert rewritten == "Where is Robert Walton sailing to?"


def test_a_pronoun_is_left_alone_when_the_question_names_the_salient_person_itself() -> None:
    history = [("Who is Elizabeth Lavenza?", None)]
    question = "Did Elizabeth Lavenza see her mother?"
    assert HeuristicQueryRewriter().rewrite(question, history) == question


def test_a_who_answer_names_the_person_who_acts_in_it_not_a_place_it_mentions() -> None:
    # two new names, once each: the one that is the subject of a sentence is the person
    answer = (
        'From the book:\n- "We possessed a house in Geneva, and a campagne on Belrive." '
        '(Chapter 2, p. 20)\n- "Henry Clerval was the son of a merchant of Geneva." '
        "(Chapter 2, p. 21)"
    )
    history = [("Who is Victor's friend from Geneva?", answer)]
    rewritten = HeuristicQueryRewriter().rewrite("What happens to him?", history)
    assert rewritten == "What happens to Henry Clerval?"
