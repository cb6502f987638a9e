"""Text as people see it, and moments as people and programs read them: pure, no I/O;
domain/produtos.py words the refusals for people.

A product's text must not lie about itself: look empty and be filled, show its letters in
another order than they are stored, sit on two lines where one is meant, or be two different
names that look alike. So characters that reorder or break a line are refused, every text is
stored in one spelling (NFC), and what draws nothing is trimmed from its ends
(docs/behaviour.md, "Fields").
"""

import datetime
import functools
import re
import time
import unicodedata
from typing import Literal

from catalogo.domain.errors import Invalid

# What each kind of text refuses wherever it stands, as regex classes in ECMA-262 escapes,
# which Python's `re` reads too: `read` searches for them and the API description's patterns
# exclude them, so the two cannot disagree.
_CONTROLS = "\\u0000-\\u001f\\u007f-\\u009f"  # Unicode's Cc: C0, DEL and C1
_SURROGATES = "\\ud800-\\udfff"  # no character at all; only a JSON escape ("\\ud800") says it
_DIRECTION_CONTROLS = "\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069"  # Bidi_Control
REFUSED_IN_ONE_LINE = _CONTROLS + _SURROGATES + _DIRECTION_CONTROLS + "\\u2028\\u2029"
# Tab and line breaks pass: CR, U+2028 and U+2029 are read as LF, which stays.
REFUSED_IN_LINES = "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f" + _SURROGATES

_REFUSED = {
    True: re.compile(f"[{REFUSED_IN_ONE_LINE}]"),
    False: re.compile(f"[{REFUSED_IN_LINES}]"),
}
_DIRECTION_CONTROL = re.compile(f"[{_DIRECTION_CONTROLS}]")
_LINE_BREAKS = frozenset("\n\x0b\x0c\r\x85\u2028\u2029")  # Unicode's mandatory breaks
_AS_LINE_FEED = str.maketrans({"\r": "\n", "\u2028": "\n", "\u2029": "\n"})

# Format characters that are drawn after all (Unicode's Prepended_Concatenation_Mark: the
# Arabic number signs and their kin, which span the digits after them).
_DRAWN_FORMAT_CHARACTERS = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
# Letters and symbols drawn blank by design: the usual filling of names that only look filled.
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")

Kind = Literal["control_character", "line_break", "direction_control"]


class RefusedCharacter(Invalid, ValueError):
    """A character the text may not hold, with its code (`U+202E`): people cannot see it."""

    def __init__(self, character: str, kind: Kind) -> None:
        super().__init__(character)
        self.code = f"U+{ord(character):04X}"
        self.kind = kind


def read(text: str, one_line: bool) -> str:
    """`text` as it is stored, or RefusedCharacter.

    Refused characters are found as typed, before trimming could silently drop a trailing one.
    Then NFC, so that a composed and a decomposed "Café" are one name and lengths count what
    people see; then the ends are trimmed, so that a text made only of what draws nothing is
    empty. In text of many lines each kind of line break (a browser's CRLF, CR, U+2028, U+2029)
    is kept as LF.
    """
    if not one_line:
        text = text.replace("\r\n", "\n").translate(_AS_LINE_FEED)
    if found := _REFUSED[one_line].search(text):
        raise RefusedCharacter(found.group(), _kind(found.group(), one_line))
    return _trim(unicodedata.normalize("NFC", text))


def _kind(character: str, one_line: bool) -> Kind:
    if one_line and character in _LINE_BREAKS:
        return "line_break"
    if _DIRECTION_CONTROL.fullmatch(character):
        return "direction_control"
    return "control_character"


def _trim(text: str) -> str:
    """`text` without what draws nothing at its ends. A mark or tag at the start has nothing to
    belong to and goes; at the end it belongs to the character before it and stays (❤️ keeps
    its U+FE0F). Inside, everything stays: ZWJ joins emoji (👩‍💻), ZWNJ shapes Persian words."""
    start, end = 0, len(text)
    while start < end and (_invisible(text[start]) or _attached(text[start])):
        start += 1
    while end > start and _invisible(text[end - 1]) and not _attached(text[end - 1]):
        end -= 1
    return text[start:end]


def _invisible(character: str) -> bool:
    """Draws nothing: white space, a format character (Cf: U+200B, U+FEFF, U+00AD, ...), a blank
    letter, or a code point Unicode reserves as default-ignorable for the future."""
    if character.isspace() or character in _BLANK:
        return True
    if unicodedata.category(character) == "Cf":
        return character not in _DRAWN_FORMAT_CHARACTERS
    return (
        character == "\u2065"
        or "\ufff0" <= character <= "\ufff8"
        or "\U000e0000" <= character <= "\U000e0fff"
    )


def _attached(character: str) -> bool:
    """Belongs to the character before it: a combining mark (an accent, a variation selector)
    or an emoji tag (the flag of Scotland is a black flag and seven tags)."""
    return unicodedata.category(character)[0] == "M" or "\U000e0020" <= character <= "\U000e007f"


# Moments, as people and programs read them.


def format_moment(em: float) -> str:
    """A moment as a clerk reads it: the day and the minute, in the shop's time zone (the
    process's, runtime/time_zone.py)."""
    return _minute(int(em // 60))


def forget_moments() -> None:
    """The time zone changed: moments already written read in the one before."""
    _minute.cache_clear()


@functools.lru_cache(maxsize=4096)
def _minute(minute: int) -> str:
    """Every moment of a minute reads the same (time zones are whole minutes apart): a page's
    dates are made once a minute, not on every page."""
    return time.strftime("%d/%m/%Y %H:%M", time.localtime(minute * 60))


def as_datetime(em: float) -> datetime.datetime:
    """A moment for JSON: orjson writes it as RFC 3339 in UTC (`OPT_UTC_Z`), to the
    microsecond, in C: isoformat() cost a JSON page of 50 products a third of its speed."""
    return datetime.datetime.fromtimestamp(em, datetime.UTC)
