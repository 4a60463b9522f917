"""The formula text grammar: a keyword ends at an identifier boundary (issue 27).

``AGX`` is one word: never ``AG X``. Every keyword of the grammar is tried glued to what
follows it; the text must be refused (naming the column) or read as the same formula as
with a space, never as another formula.
"""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.petrinets.checking.text import parse, to_text

# (keyword, a formula with it, where the keyword is followed by a space)
KEYWORDS = [
    ("AG", "AG X deadlock"), ("AF", "AF X deadlock"), ("AX", "AX X deadlock"),
    ("EG", "EG X deadlock"), ("EF", "EF X deadlock"), ("EX", "EX X deadlock"),
    ("A", "A deadlock"), ("E", "E deadlock"), ("X", "X deadlock"),
    ("F", "F deadlock"), ("G", "G deadlock"),
    ("not", "not deadlock"), ("U", "deadlock U deadlock"), ("R", "deadlock R deadlock"),
    ("W", "deadlock W deadlock"), ("and", "deadlock and deadlock"),
    ("or", "deadlock or deadlock"), ("true", "true U deadlock"),
    ("false", "false U deadlock"), ("deadlock", "deadlock U true"),
]


@pytest.mark.parametrize(("keyword", "spaced"), KEYWORDS)
def test_a_keyword_glued_to_a_word_is_not_split(keyword, spaced):
    at = spaced.index(keyword + " ")
    glued = spaced[:at + len(keyword)] + spaced[at + len(keyword) + 1:]
    assert parse(spaced)  # the spaced text is a formula
    with pytest.raises(InputError, match=r"formula, column \d+"):
        parse(glued)


@pytest.mark.parametrize("text", ["AGX deadlock", "AGXdeadlock", "EFfireable(t)",
                                  "Gtrue", "notdeadlock", "trueorfalse",
                                  "tokens(p) > 3and deadlock", "Ftokens(p) > 0",
                                  "fireable(t)Ufireable(u)", "X1e5x > 0"])
def test_glued_words_are_refused(text):
    with pytest.raises(InputError, match=r"formula, column \d+"):
        parse(text)


@pytest.mark.parametrize("text", [
    "AG(X deadlock)", "AG!deadlock", "EF(tokens(p)>0)", "deadlock->false", "deadlock<->true",
    "A[true U false]", "tokens(p)>=3&deadlock", "!deadlock|true", "X(true)", "AG~deadlock",
    "tokens(AGX, U, tokens) > 1e5", "fireable(not, AG)",
])
def test_keywords_next_to_punctuation_still_read(text):
    formula = parse(text)
    assert parse(to_text(formula)) == formula


def test_the_message_says_what_the_glued_word_is():
    with pytest.raises(InputError, match=r"column 1: unexpected word 'AGX': 'AG' and 'X' "
                       r"need a space"):
        parse("AGX deadlock")


def test_a_name_that_looks_like_keywords_reads_as_a_name():
    formula = parse("EF tokens(AGX) > 0")
    assert to_text(formula) == "EF tokens(AGX) > 0"
