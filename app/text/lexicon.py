"""The word lists, the light stemmer and the one "same word" rule.

Kept apart so the reading of a statement (`app/text/statements.py`) stays short. `same_word`
also compares the PostgreSQL lexemes of forget by description (`app/forgetting/topics.py`),
so both ask one rule whether two stems are one word. The lists are general English (kinship
nouns, negations, words announcing a change), not tuned to any test pair.
"""

from __future__ import annotations

import re


def words_of(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``: long word lists stay readable."""
    return frozenset(text.split())


WORD_NUMBERS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "thousand": 1000,
    # "one", "first" and "second" are left out: too often not numbers ("the blue one").
    "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12,
}

STOPWORDS = words_of("""
a an the and or but if then than so as of at by for with without about against between into
through during before after above below to from up down in out on off over under again further
once here there when where why how all any both each few more most other some such only own
same too very can will just should would could may might must shall i me my myself we our ours
ourselves you your yours yourself yourselves he him his himself she her hers herself it its
itself they them their theirs themselves what which who whom this that these those am is are
was were be been being have has had having do does did doing would 's m re ve ll d s t also
get gets got getting go goes going went gone make makes made per via one thing things
""")
# Words that change nothing about which fact is stated.
FILLER = words_of("""
really actually usually normally typically generally always often mostly basically pretty
quite just still currently totally definitely probably maybe kind sort lot lots every
""")
NEGATIONS = frozenset({"not", "no", "never", "barely", "hardly", "neither", "nor", "cannot",
                       "nothing", "nobody", "none"})
# Negated idioms that mean something positive; matched on the lowercase text.
IDIOMS = re.compile(r"\b(?:can't|cannot|can not) (?:stand|wait|bear)\b|\bno doubt\b")

# Words saying the previous state of things ended ("no longer", "sold", "passed away"): enough
# on their own, with a related old fact, to say the old one is over.
ENDING = re.compile(
    r"\b(?:no longer|not any ?more|any ?more|no more|quit|quitting|stopped|stop|gave up|"
    r"given up|giving up|sold|broke up|broken up|divorced|separated|passed away|died|"
    r"used to|retired|former|ex|cancelled|canceled|called off)\b"
)
# Words announcing a new state ("moved", "now", "switched"): a change only when the new text
# also says something the old one did not.
CHANGING = re.compile(
    r"\b(?:now|nowadays|these days|moved|moving|relocated|relocating|switched|switching|"
    r"changed|changing|new|again|upgraded|downgraded|instead|actually|correction)\b"
)

# The new fact adds to the old rather than replacing it ("I'm also learning Portuguese").
ADDITIVE = re.compile(r"\b(?:also|too|as well|another|additionally|in addition|both)\b")

RELATIONS = {
    **dict.fromkeys(("mother", "mom", "mum", "mommy", "mummy", "mama"), "mother"),
    **dict.fromkeys(("father", "dad", "daddy", "papa"), "father"),
    **dict.fromkeys(("parent", "parents"), "parent"),
    **dict.fromkeys(("kid", "kids", "child", "children"), "child"),
    **dict.fromkeys(("son", "sons"), "son"),
    **dict.fromkeys(("daughter", "daughters"), "daughter"),
    **dict.fromkeys(("sister", "sisters"), "sister"),
    **dict.fromkeys(("brother", "brothers"), "brother"),
    **dict.fromkeys(("sibling", "siblings"), "sibling"),
    **dict.fromkeys(("wife",), "wife"), **dict.fromkeys(("husband",), "husband"),
    **dict.fromkeys(("partner", "spouse"), "partner"),
    **dict.fromkeys(("girlfriend",), "girlfriend"), **dict.fromkeys(("boyfriend",), "boyfriend"),
    **dict.fromkeys(("fiance", "fiancee", "fiancé", "fiancée"), "fiance"),
    **dict.fromkeys(("grandmother", "grandma", "granny", "nan", "nana"), "grandmother"),
    **dict.fromkeys(("grandfather", "grandpa", "granddad", "grandad"), "grandfather"),
    **dict.fromkeys(("grandparent", "grandparents"), "grandparent"),
    **dict.fromkeys(("grandson", "granddaughter", "grandchild", "grandchildren",
                     "grandkids"), "grandchild"),
    **{w: w for w in ("aunt", "uncle", "cousin", "niece", "nephew", "boss", "manager",
                      "colleague", "coworker", "teammate", "roommate", "flatmate", "landlord",
                      "landlady", "neighbor", "doctor", "dentist", "therapist", "teacher",
                      "coach", "assistant", "friend", "dog", "cat", "puppy", "kitten", "pet",
                      "horse", "parrot", "rabbit", "hamster")},
    "neighbour": "neighbor", "co-worker": "coworker", "friends": "friend", "dogs": "dog",
    "cats": "cat", "pets": "pet", "colleagues": "colleague", "cousins": "cousin",
}
POSSESSIVES = frozenset({"my", "our", "his", "her", "their", "your"})
# Two adjectives may stand between the possessive and the relation: "my older sister".
POSSESSIVE_REACH = 3
# Words that open a sentence without naming anyone ("The", "My", "Yesterday").
OPENERS = STOPWORDS | FILLER | NEGATIONS | words_of("""
yesterday today tomorrow tonight recently lately since because although though while also
please yes yeah ok okay hi hello thanks note fyi email phone
""")

SPELLING = {"colour": "color", "favourite": "favorite", "favourites": "favorites",
             "neighbour": "neighbor", "centre": "center", "theatre": "theater",
             "grey": "gray", "organise": "organize", "realise": "realize", "flavour": "flavor",
             "travelling": "traveling", "cancelled": "canceled", "mobile": "phone",
             "cell": "phone", "cellphone": "phone", "kids": "child", "kid": "child",
             "children": "child", "named": "name", "called": "name", "hometown": "home"}
IRREGULAR = {"lives": "live", "living": "live", "lived": "live", "moved": "move",
              "am": "be", "is": "be", "are": "be", "was": "be", "were": "be", "men": "man",
              "women": "woman", "people": "person", "bought": "buy", "went": "go",
              "began": "begin", "begun": "begin", "spoke": "speak", "ate": "eat",
              "drove": "drive", "driven": "drive", "wore": "wear", "worn": "wear",
              "met": "meet", "known": "know", "knew": "know", "taught": "teach"}
# "can't" → "ca" + "n't", "won't" → "wo" + "n't"; the others keep their verb ("does").
NOT_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}


# Shorter stems begin too many unrelated words ("plan"/"planet"); derivational endings that keep
# the meaning ("-ic", "-er", "-ing", "-ist") are at most three letters.
_SHORTEST_ROOT = 5
_LONGEST_ENDING = 3


def stem(word: str) -> str:
    """A light English stemmer: enough to match "lives"/"living", "allergy"/"allergic"."""
    word = SPELLING.get(word, word)
    if word in IRREGULAR:
        return IRREGULAR[word]
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("ly", ""),
                         ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "sses", "xes", "zes")):
                continue
            base = word[: len(word) - len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] \
                    and base[-1] not in "lsz":
                base = base[:-1]  # running → run, stopped → stop
            return base
    return word


def same_word(a: str, b: str) -> bool:
    """Whether two stems are forms of one word: the one rule, for `stem`'s stems and for
    PostgreSQL's english lexemes (forget by description) alike.

    Equal stems; a lost silent e ("nurs"/"nurse": this stemmer strips "-ing" and "-ed" without
    restoring it); or a stem of five letters or more (its final y or i read as either) that
    begins the other, at most three letters longer: "allergy"/"allergic", PostgreSQL's
    "allerg"/"allergi", "employ"/"employer". Stems that merely start alike are different words
    ("carpet"/"carpenter", "vegetable"/"vegetarian", "555-1234"/"555-1299"), and so is a much
    longer one ("elect"/"electrician").
    """
    if a == b or a + "e" == b or b + "e" == a:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) < _SHORTEST_ROOT or len(long_) - len(short) > _LONGEST_ENDING:
        return False
    head = long_[: len(short)]
    # English writes a final y as i before an ending ("allergy"/"allergic", "study"/"studied"),
    # and PostgreSQL's lexemes do so on their own ("allergi").
    return head == short or (head[:-1] == short[:-1] and {head[-1], short[-1]} == {"y", "i"})


CUE_STEMS = frozenset(stem(word) for word in words_of("""
no longer any more anymore quit quitting stopped stop gave give given giving up sold broke
broken divorced separated passed away died used retired former ex cancelled canceled now
nowadays these days
moved moving relocated relocating switched switching changed changing new again upgraded
downgraded instead actually correction
"""))


SPEAKER_WORDS = frozenset({"i", "we", "me", "us", "my", "our", "mine", "ours"})
DETERMINERS = POSSESSIVES | frozenset({"the", "a", "an", "this", "that", "these", "those"})
# Words that may open a sentence before its subject ("Actually, now I …").
PREAMBLE = FILLER | words_of("""
now so well oh btw update correction yesterday today recently lately since then
""")
