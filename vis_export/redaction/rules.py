"""What redaction looks for: the built-in kinds (``redact.md``) and custom rules.

A rule is a regular expression compiled once, with the kind its marker names and
the literal hints one of which a string must hold before the expression is run.
``TRIGGERS`` names what every find holds, ``TRIGGER`` is all of it in one RE2
expression: text it finds nothing in is not looked at further (``detect``).
Provider tokens come from detect-secrets' plugins (their ``denylist``
expressions, maintained upstream) beside the spec's own rules; its keyword and
entropy plugins are run only on lines with a secret-like assignment (``KEYWORDS``).
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any

from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

# What replaces a secret, and how any marker reads (never taken for a secret; styled in HTML).
MARKER = "[redacted: {kind} {number}]"
# Folders under a home folder's parent that no user is named by.
SHARED_HOMES = ("shared", "public", "default", "all users", "user", "username", "runner", "guest")
MARKERS = re.compile(r"\[redacted: [a-z0-9-]+ \d+\]")


# A detect-secrets expression's secret: its last group that matched when the match ends
# with it (npm's ``_authToken=(npm_.+)``), else the whole match: its scanner yields the
# groups, which are as often a prefix (``(ghp|gho)_…``, ``glcbt-([0-9a-f]{2}_)?…``) and
# left the token's body shown.
PLUGIN_GROUP = -1


@dataclass(frozen=True)
class Rule:
    """``group``: the part of a match that is the secret (0: all of it; a name or
    number: that group; ``None``: the last group that matched; ``PLUGIN_GROUP``: that
    group if the match ends with it, else all of it). ``hints``: literals one of which a string must hold (none:
    always run). ``check``: a test the secret must pass (a JWT's header)."""

    kind: str
    regex: re.Pattern[str]
    hints: tuple[str, ...] = ()
    group: int | str | None = 0
    check: Any = None
    keyworded: bool = False


# A secret-like word followed by an assignment (``password=``, ``"api_key": "``,
# ``secret.assign("``): the lines detect-secrets' keyword and entropy plugins and the
# ``secret`` rule look at. The same text compiles in Python's ``re`` and in RE2.
KEYWORD = r"(?i:pass|pwd|secret|token|key|auth|credential|cookie|contrase)"
# A pin is a secret's name only as a whole word (not ``spinner``, ``gpio_pin``): a second expression.
KEYWORD_LINE = (
    KEYWORD + r"[A-Za-z0-9_.\-]*[\\\"'\]]*[ \t]*(?:[=:!]|\.assign\(|\(\")"
    r"|(?:^|[^A-Za-z0-9_-])(?i:pin(?:[_-]?code)?)[\"'\]]*[ \t]*[=:]"
)
KEYWORDS = re.compile(KEYWORD_LINE)
SECRET_HINT = re.compile(KEYWORD)

# Every built-in find holds one of these, named for what they hint at (RE2 syntax, all searched in one
# pass per message or block in linear time): text that holds none is not looked at further. The
# prefilter reads each on JSON text (``jsontext.json_form``), so a trigger is written here only.
TRIGGERS: dict[str, str] = {
    "assignment": KEYWORD_LINE,
    "email": r"(?:@|%40)[A-Za-z0-9-]+\.",
    "uri-credentials": r"://[^\s/?#@]*:[^\s/?#@]+@",
    # a slash written or escaped (once or twice) on each side; a backslash after a Windows folder or a share's
    # ``home``, or any slash after a drive's colon
    "home-user": r"(?:/|%(?:25)?2[Ff])(?:home|Users)(?:/|%(?:25)?2[Ff])|home(?:\\|%(?:25)?5[Cc])"
    r"|(?i:users(?:\\|%(?:25)?5c)|(?::|%(?:25)?3a)(?:[\\/]|%(?:25)?(?:2f|5c))+users(?:/|%(?:25)?2f))",
    "prompt": r"[A-Za-z0-9_.-]@[A-Za-z0-9.-]+(?::[~/]|[ \t]+(?:MINGW|UCRT|CLANG|MSYS|[^\s%]+[ \t]+%))"
    r"|\[[A-Za-z0-9_.-]+@",
    "private-key": r"PRIVATE KEY",
    "openai-anthropic": r"sk-",
    "github": r"gh[pousr]_|github_pat_",
    "gitlab": r"gl[a-z]+-|GR1348941",
    "slack": r"(?i:xox[a-z]-|hooks\.slack)",
    "google": r"AIza",
    "stripe": r"[rsp]k_(?:live|test)_",
    "npm": r"npm_|_authToken",
    "pypi": r"pypi-",
    "aws": r"A3T|AKIA|ASIA|ABIA|ACCA|(?i:aws)",
    "jwt": r"eyJ",
    "authorization": r"(?i:authorization)|Bearer\s",
    "azure": r"AccountKey=",
    "sendgrid": r"SG\.",
    "square": r"sq0csp-",
    "openai-plugin": r"T3BlbkFJ",
    "mailchimp": r"[0-9a-z]{32}-us[0-9]",
    "telegram": r"\d{8,10}:[0-9A-Za-z_-]{35}",
    "twilio": r"(?:AC|SK)[a-z0-9]{32}",
    "discord": r"[MNO][a-zA-Z0-9_-]{23,25}\.[a-zA-Z0-9_-]{6}\.",
}
TRIGGER = "|".join(TRIGGERS.values())

_KEY_NAME = (
    r"(?:password|passwd|passphrase|passcode|pwd|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key"
    r"|auth[_-]?token|access[_-]?token|refresh[_-]?token|api[_-]?token|client[_-]?secret|token|auth|cookie|credentials?)"
)
# An assigned value that is no secret: a type, a name or an expression in code, a word that
# stands for no value; a reference to one is ``reference``'s.
_PLACEHOLDER = re.compile(
    r"^(?:x{3,}|\.{3,}|none|null|nil|true|false|undefined|changeme|password|secret"
    r"|str|string|int|bytes|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$",  # with brackets: ``_expression``
    re.IGNORECASE,
)


# A map key whose string value is a secret as a whole (``{"db_password": "..."}``).
# ``pin`` only alone (``gpio_pin`` is a pin of a board).
SECRET_KEY = re.compile(
    r"(?i)(?:[a-z0-9]+[_-])*(?:password|passwd|passphrase|passcode|secret|api[_-]?key|apikey|access[_-]?key"
    r"|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token"
    r"|session[_-]?token|api[_-]?token|auth|cookie|credentials?)|pin(?:[_-]?code)?"
)


def literal_secret(value: str) -> bool:
    """A string held under a secret's key that is one: anything but a ``reference``."""
    return not reference(value)


# A whole value that is clearly a reference to a secret, not one: ``${NAME}`` (dotted, as
# ``${var.db_password}``), ``$NAME`` in capitals, digits and underscores, ``{{ name }}``,
# ``<a placeholder>``, stars, nothing; or markers alone (what redacting left). A secret may
# start with ``$`` (a bcrypt hash, ``$ecr3t!``) or a brace (``{SSHA}…``): only these forms
# are kept. ``cut``: as an assignment's rule takes a value, which ends before a ``}``.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_REFERENCE = (
    rf"\$\{{{_NAME}\}}|\$[A-Z_][A-Z0-9_]*|\{{\{{[ \t]*{_NAME}[ \t]*\}}\}}|<[A-Za-z][A-Za-z0-9 _.-]*>|\*{{3,}}"
    r"|(?:\[redacted: [a-z0-9-]+ \d+\]\s*)+|"  # the last: nothing
)
_REFERENCES = re.compile(_REFERENCE, re.ASCII)
_CUT_REFERENCES = re.compile(rf"{_REFERENCE}|\$\{{{_NAME}|\{{\{{{_NAME}", re.ASCII)
# A word no name is made of: a run of 8 letters and digits or more that mixes both, as a
# generated token does (``$X7K9Q2M4P8R3T6W1``, ``<sk-proj-aB3dE5fG7hJ9>``); a name's words
# are words (``$OAUTH2_TOKEN``, ``${SHA256}``, ``<your-api-key>``).
_GENERATED = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{8,}(?![A-Za-z0-9])")


def reference(value: str, cut: bool = False) -> bool:
    """Whether ``value`` is, whole, a reference to a secret (``_REFERENCE``), not a secret:
    a token in a reference's form (``$`` and capitals, angle brackets) is a secret still."""
    return (_CUT_REFERENCES if cut else _REFERENCES).fullmatch(value) is not None and not _GENERATED.search(value)


def _jwt_header(secret: str) -> bool:
    """Whether the first part of a JWT decodes to a JSON object (a JWT's header)."""
    import base64
    import json

    head = secret.split(".", 1)[0]
    try:
        value = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(value, dict)


# Where an unquoted assigned value ends: at a blank; at what closes the string, call, list, map or
# code span the pair is written in (a quote, ``,``, ``;``, ``)``, ``]``, ``}``, a backtick) where a
# blank, the end or another of these follows, else those characters are the value's (``ab'12cd34``,
# ``ab12),cd34``); at the punctuation that ends a sentence, at its very end. ``&`` is a character of
# the value (``Tr0ub4dor&3xq``) except in a query string, where it starts the next pair: the name
# right after ``?`` or ``&`` (``?password=x&user=bob``).
_QUERY = r"(?:(?<=[?&])(?P<query>)|(?<![?&]))"
_STOPS = r"\"',;)}\]`"


def _value_char(ends: str = "") -> str:
    stops = rf"\s{_STOPS}{ends}"
    return rf"(?(query)[^{stops}&]|[^{stops}])"


_INSIDE = rf"(?![{_STOPS}]*\]\()[{_STOPS}]++(?={_value_char()})"  # not a Markdown link's ``](``
_UNQUOTED = rf"{_value_char()}(?:{_value_char()}|{_INSIDE}){{4,}}{_value_char('.:!?')}"
_OPENERS = {"(": ")", "[": "]"}


def _closed(value: str) -> str | None:
    """``value`` with the brackets and the string it leaves open closed, as an assigned value
    is cut before ``)``, ``]`` and a closing quote; ``None`` when its brackets do not pair."""
    expected: list[str] = []
    quote = ""
    for char in value:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in _OPENERS:
            expected.append(_OPENERS[char])
        elif char in ")]" and (not expected or expected.pop() != char):
            return None
    return value + quote + "".join(reversed(expected))


# Where a name turns from letters to digits or back: three times or more is a token's look
# (``ab12cd34``, ``A0b1c2``); a name in code turns once or twice (``sha256``, ``b64decode``, ``i18n``).
_SHIFTS = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def _expression(value: str) -> bool:
    """Whether ``value`` (cut as an assigned value is) reads as an expression in code that
    yields a secret, not as one (``get_password()``, ``os.environ["X"]``, ``Optional[str]``,
    ``(blah|fake)``, ``('user', 'pass')``): names, attributes, calls, subscripts, operators,
    tuples and lists of them, no name in it with a token's look (``ab12cd34(ef)``, ``A0b1c2(x)``
    are passwords), no string in it a secret's (``_secret_literal``), no number without a name."""
    closed = _closed(value)
    if closed is None:
        return False
    try:
        tree = ast.parse(closed, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    parts = list(ast.walk(tree))
    if not all(isinstance(part, _CODE) for part in parts):
        return False
    names = [
        part.id if isinstance(part, ast.Name) else part.attr
        for part in parts
        if isinstance(part, ast.Name | ast.Attribute)
    ]
    literals = [part.value for part in parts if isinstance(part, ast.Constant)]
    strings = [literal for literal in literals if isinstance(literal, str | bytes)]
    if len(strings) < len(literals) and not any(isinstance(part, ast.Name) for part in parts):
        return False  # a number in brackets with no name is a value (``(84629173)``), not code
    if any(isinstance(part, _JOINED) for part in parts) and any(_GENERATED.search(name) for name in names):
        return False  # ``(first|AAAAAAAAq7Z)``: names joined by operators or in a tuple are words, not tokens
    if any(isinstance(part, _JOINED) for part in parts) and not any(isinstance(part, _CALLED) for part in parts):
        if any(_LETTER_BY_DIGIT.search(name) for name in names):
            return False  # ``(Hunter2+Horse2)``, ``(Zq7+Lp2)``: pieces of a password, with no call to say it is code
    return not any(len(_SHIFTS.findall(name)) > 2 for name in names) and not any(map(_secret_literal, strings))


_JOINED = (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Tuple, ast.List)
_CALLED = (ast.Call, ast.Attribute, ast.Subscript)
_LETTER_BY_DIGIT = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")
# What an expression in code that yields a secret is made of (``_expression``): anything else, a
# lambda, a comprehension, a formatted string, an assignment, is a value or wraps one (``_secret_literal``).
_CODE = (
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Subscript,
    ast.Slice,
    ast.keyword,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.BinOp,
    ast.BoolOp,
    ast.UnaryOp,
    ast.operator,
    ast.boolop,
    ast.unaryop,
    ast.expr_context,
)


# A sign of a password between letters (``P@ssw!rd#``): no name, key or prompt is written so.
_SYMBOLED = re.compile(r"[A-Za-z][!#$%^&*][A-Za-z0-9]")
# A string in an expression written as an environment variable's name (``"API_KEY_V2"``), not a token.
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _secret_literal(literal: str | bytes) -> bool:
    """A string in an assigned expression that is the secret the expression only wraps
    (``f("hunter2secret")``, ``b64decode(b"aGVsbG8x")``): one that would be a secret assigned
    alone and sets a digit beside a letter; a name (``"DB_PASSWORD"``, ``"utf-8"``), a prompt or a
    key (``"Password: "``, ``"db.password"``) is the code's."""
    text = literal.decode("latin-1") if isinstance(literal, bytes) else literal
    if _mixed_case(text) or " " not in text and _SYMBOLED.search(text) and _assigned(text):
        return True  # ``('admin', 'QxZvBnMkLpWr')``, ``('admin', 'P@ssw!rd#')``: a password's look, no name's
    if not re.search(r"[A-Za-z]\d|\d[A-Za-z]", text) or not _assigned(text):
        return False
    return not (_ENV_NAME.fullmatch(text) and len(_SHIFTS.findall(text)) <= 2)


def _assigned(secret: str) -> bool:
    """An assigned value that reads as a secret: not a placeholder, not a bare name
    in code (``password: str``, ``token = get_token()``) unless it mixes letters
    and digits, as generated secrets do, not words that say what they stand for
    (``not-a-real-secret``, ``My API Key``); a cookie (``name=value``) by its value."""
    if len(secret) < 6 or reference(secret, cut=True) or self_described(secret):
        return False
    pair = _PAIR.fullmatch(secret)
    if pair:
        return cookie_value(pair[2] if pair[1] is None else pair[1])
    if "(" in secret or "[" in secret:
        return not _expression(secret)
    if not any(c.isdigit() for c in secret) and _PLACEHOLDER.match(secret):
        return False
    return not (secret.isdigit() or _PLACEHOLDER.match(secret) and not re.search(r"[A-Za-z]\d|\d[A-Za-z]", secret))


# Words that say what a value stands for, not what it is: two words or more of letters alone
# (``not-a-real-secret``, ``yh^%#rest-of-my-password``, ``My API Key``), one of them a secret's
# own name or a word for an example. A passphrase of other words (``correct-horse-battery``) is one.
_SELF_DESCRIBED = re.compile(
    r"(?i)[^A-Za-z0-9]*(?=(?:[A-Za-z]+[^A-Za-z0-9]+)*?(?:password|passwd|passphrase|secret|key|token|example"
    r"|fake|dummy|placeholder|sample)(?:[^A-Za-z0-9]|$))[A-Za-z]+(?:[^A-Za-z0-9]+[A-Za-z]+)+[^A-Za-z0-9]*"
)


def self_described(value: str) -> bool:
    """Whether ``value`` is words that say what it stands for (``_SELF_DESCRIBED``): ASCII words, none
    with a generated token's case (``QxZvBnMkLpWr-secret`` is a token with a word beside it), and no
    other letter taken for what parts them (``secret-Аbc``, ``Passwörd-secret`` are not words of ASCII)."""
    return value.isascii() and _SELF_DESCRIBED.fullmatch(value) is not None and not _mixed_case(value)


# A lower-case letter before a capital: a word in a name or a brand turns so once or twice (``OpenAI``,
# ``NotARealSecret``); a generated token of letters alone, at every other letter or so (``QxZvBnMkLp``).
_TURNS = re.compile(r"[a-z](?=[A-Z])")
_LETTERS = re.compile(r"[A-Za-z]{6,}")


def _mixed_case(value: str) -> bool:
    """Whether a run of letters in ``value`` has a generated token's case: it turns from lower case to
    a capital at more than one letter in four."""
    return any(len(_TURNS.findall(word)) * 4 > len(word) for word in _LETTERS.findall(value))


# A value that is itself one ``name=value`` pair: a cookie (``Set-Cookie: theme=dark``).
# Its value is quoted (``keebler="E=everybody``, cut as an assigned value is), or ends at a line break
# as a string's literal writes it (``'Set-Cookie: a=7\\r\\nSet-Cookie: …'``).
_PAIR = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*=(?:\"([^\"]*)\"?|([^=\s;\\\"]+)(?:;|\\[rn].*)?)", re.DOTALL)


def cookie_value(value: str) -> bool:
    """Whether a cookie's value is a secret: a session's token, not a preference that is a word
    or a number (``theme=dark``, ``fig=newton``, ``number=7``): judged as an assigned value is,
    and long values of letters alone, or letters in a generated token's case, are tokens too."""
    value = value.strip('"')
    return _assigned(value) or len(value) >= 16 and not value.isdigit() or _mixed_case(value)


def _cookie_header(pairs: str) -> bool:
    """A request's ``Cookie:`` pairs hold a secret when one of the cookies' values is one
    (``cookie_value``); an attribute (``Path=/cookie``) is no cookie, but a cookie named as one whose
    value has no attribute's form (``path=Zq7Lp2Xw9Rt4AbCd``) is a cookie: a request sends no attributes."""
    return any(
        cookie_value(value)
        for name, _, value in (pair.strip().partition("=") for pair in pairs.split(";"))
        if not _COOKIE_ATTRIBUTES.get(name.lower(), _NO_ATTRIBUTE).fullmatch(value)
    )


# Each cookie attribute, by the form of its value.
_NO_ATTRIBUTE = re.compile(r"(?!)")
_COOKIE_ATTRIBUTES = {
    "path": re.compile(r"/[^;]*"),
    "domain": re.compile(r"\.?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    "expires": re.compile(r"[A-Za-z]{3},?(?:[ -][A-Za-z0-9:]+)*|\d+"),
    "max-age": re.compile(r"-?\d+"),
    "version": re.compile(r"\d+"),
    "samesite": re.compile(r"(?i:strict|lax|none)"),
    "secure": re.compile(r""),
    "httponly": re.compile(r""),
}


def _R(pattern: str, flags: int = 0, folded: bool = False) -> re.Pattern[str]:
    """A built-in rule's expression: ``\\b`` and ``\\w`` of ASCII, as tokens are written
    (and as RE2 reads them): a token beside a CJK or Cyrillic letter, which Unicode
    counts as a word's, was not found (``令牌AIza…``, ``見/home/alice``). ``folded``: a
    keyword's rule, which has no ``\\b`` and keeps Unicode's case folding (``paſsword``)."""
    return re.compile(pattern, flags if folded else flags | re.ASCII)


def _unglued(word: str, prefix: str) -> str:
    """A look-behind at the end of a token's ``prefix``: no ``word`` character before it, or one that
    ends an escape (``%3D``, ``\\u0027``, a literal ``\\n``), which glues the token to no name."""
    back = "." * len(prefix)
    escape = r"%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\[nrt]"
    return f"(?:(?<!{word}{back})" + "".join(f"|(?<={one}{back})" for one in escape.split("|")) + ")"


# A percent escape, once or twice (``%2F``, and ``%252F``: a URI in another's query), of the two ``digits``.
def _escape(digits: str) -> str:
    return f"%(?:25)?{digits}"


_JSON_LETTER = r"u(?!00[0-7])[0-9A-Fa-f]{4}"  # after a backslash: a letter past ASCII, JSON-escaped
# What stands before an escape's last digit: a path after it starts there (``path%3D/home/…``, ``%252Fc%253A…``).
_AFTER_ESCAPE = r"(?<=%[0-9A-Fa-f]{2})|(?<=%25[0-9A-Fa-f]{2})"
# A path's first folder: no name's end before it, nor ``~/`` (a folder in a home), nor a web page's ``#/`` route.
_PATH_START = rf"(?:(?<![\w.~#-])|(?:{_AFTER_ESCAPE})(?<!23)(?<!7[Ee]))"  # an escape's: but ``#`` and ``~``
# A folder's end in a path, as written, JSON-escaped (PHP's ``\/``) or percent-escaped (``%2Fhome%2Falice``);
# in a Windows path a backslash too.
_SLASH = rf"(?:\\?/|{_escape('2[Ff]')})"
# A backslash that starts a JSON escape of a name's letter (``C:\\Users\\Jos\u00e9``) is the name's.
_BACKSLASH = rf"(?:\\(?!{_JSON_LETTER})|{_escape('5[Cc]')})"
_ANY_SLASH = rf"(?:/|{_BACKSLASH}|{_escape('2[Ff]')})"
_COLON = rf"(?::|{_escape('3[Aa]')})"
_SCHEME_END = rf"{_COLON}(?://|{_escape('2[Ff]')}{_escape('2[Ff]')})"  # ``://``, escaped or not
# A host's or a share's name, up to the slash after it (escaped or not).
_HOST = r"(?:[^\\/\s\"'<>|*?%]|%(?!(?:25)?(?:2[Ff]|5[Cc]))[0-9A-Fa-f]{2})"
# A URI that names a machine before the path (VS Code's ``vscode-remote://ssh-remote+host/home/…``, escaped
# whole too: ``vscode-remote%3A%2F%2Fssh-remote%2Bhost%2Fhome%2F…``; ``ssh://host/home/…``): its host's end
# starts the path; VS Code's link to a file (``vscode://file/home/…``, an extension's host is none) too.
_REMOTE = rf"\b(?:(?:vscode-remote|file|ssh|sftp|scp){_SCHEME_END}{_HOST}*+|vscode(?:-insiders)?{_SCHEME_END}file)"
# A web page's address (``http``, ``https``, ``ws``, ``wss``; escaped whole in a query too) up to its query:
# its path is a site's, never a folder of this machine (``https://x.com/home/about``, ``https://x.com/c:/Users/x``),
# and the rule takes it whole to find no user in it. A loopback host's is left to be read as text
# (``http://localhost:8000/C:/Users/…`` serves a local folder); so is the query (``?path=/home/…``).
_LOOPBACK = r"(?!(?:localhost|127(?:\.[0-9]+){3}|\[::1\]|0\.0\.0\.0)(?![A-Za-z0-9.-]))"
_WEB = (
    r"(?<![A-Za-z0-9_.+-])(?:https?|wss?)"
    rf"(?:://{_LOOPBACK}(?:[A-Za-z0-9._~!$&*+=:@/-]|%(?!2[Ff]|5[Cc]|3[Ff]|23)[0-9A-Fa-f]{{2}})*+"
    rf"|{_escape('3[Aa]')}{_escape('2[Ff]')}{_escape('2[Ff]')}{_LOOPBACK}"
    r"(?:[A-Za-z0-9._~!$*+=:@-]|%(?:25)?(?!3[Ff]|23|25)[0-9A-Fa-f]{2})*+)"
)
# A Windows share (UNC: ``\\server\share\Users\<user>``, ``\\wsl$\Ubuntu\home\<user>``, ``\\?\UNC\…``, written
# with its backslashes JSON-escaped or percent-escaped too; ``smb://server/share/…``; ``//server/Users/<user>``):
# a server, a share that may be left out (``\\server\Users\…`` shares the folder itself), then the folder.
# With forward slashes ``home`` only on WSL's host (``//cdn.example.com/home/…`` is a web address).
_UNC_BEFORE = rf"(?:(?<![\w\\/:.%-])|(?:{_AFTER_ESCAPE})(?<!5[Cc]))"  # no name, path or escape goes on into it
_UNC = (
    rf"(?:{_UNC_BEFORE}{_BACKSLASH}{{2,}}+(?:[?.]{_BACKSLASH}++(?i:unc){_BACKSLASH}++)?"
    rf"{_HOST}++(?:{_BACKSLASH}++{_HOST}++)?{_BACKSLASH}++(?:(?i:users)|home)"
    rf"|\b(?i:smb|cifs){_SCHEME_END}{_HOST}++(?:{_SLASH}{_HOST}++)?{_SLASH}(?:(?i:users)|home)"
    rf"|{_UNC_BEFORE}//(?:(?i:wsl\$|wsl\.localhost)/{_HOST}++/home|{_HOST}++(?:/{_HOST}++)?/Users))"
)
# A drive's user folder, in any case and with either slash (``C:\Users\``, ``c:/users/``, ``c%3A%5CUsers%5C``),
# after a word's start or an escape (``file:///c%3A/…``, ``%252Fc%253A…``).
_DRIVE = rf"(?:\b|{_AFTER_ESCAPE})[A-Za-z]{_COLON}{_ANY_SLASH}++(?i:users)"
# Unix-like homes: /var/home and /usr/home: where a linked /home leads (Silverblue, FreeBSD); macOS' data
# volume and any volume by name (``/Volumes/Macintosh HD/Users``: the start-up disk as another's Finder and
# Terminal name it, a name of blanks up to its slash); /mnt/c/Users: Windows' seen from WSL, /c/Users and
# /cygdrive/c/Users as Git Bash (Claude Code's shell on Windows), MSYS2 and Cygwin write it.
_UNIX = (
    rf"(?:{_PATH_START}|{_REMOTE})(?:(?:{_SLASH}(?:var|usr))?{_SLASH}home"
    rf"|(?:{_SLASH}System{_SLASH}Volumes{_SLASH}Data|{_SLASH}Volumes{_SLASH}(?:{_HOST}| )++"
    rf"|(?:{_SLASH}(?:mnt|cygdrive))?{_SLASH}[A-Za-z])?{_SLASH}Users)"
)
# A user name's characters: none that Windows refuses in one or that ends a name in text (a blank, a quote,
# a bracket of any kind, ``,;=&#``, a backtick, ``$`` of a variable, a ``%`` but in an escape); a dot or ``!``
# only inside (``/home/alice.`` ends a sentence); a percent escape of a sign a name may hold (``%40`` of ``@``)
# or of a byte of a UTF-8 letter (``Jos%C3%A9``), a JSON one of a letter past ASCII (``Jos\u00e9``).
_SPACES = "\\s\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_NAME_CHAR = rf"[^/\\{_SPACES}\"'<>:*?|$%{{}}\[\]()`,;=&#.!]"
_NAME_ESCAPE = rf"{_escape('(?:2[1BDEbde]|40|5[EFef]|7[Ee]|[89A-Fa-f][0-9A-Fa-f])')}|\\{_JSON_LETTER}"
_PART = rf"(?:[.!]*+(?:{_NAME_CHAR}|{_NAME_ESCAPE}))++"
# A name's words joined by a space no prose writes: escaped for a shell (``John\ Smith``) or in a URI (``%20``).
_ESCAPED_SPACE = rf"(?:\\ |{_escape('20')})"
_WORD = rf"{_PART}(?:{_ESCAPED_SPACE}{_PART})*+"
# A name of several words joined by blanks (``C:\Users\John Smith\``) ends where a path would go on: at a
# folder's end, a prompt's ``>``, the quote that opened the path, the end of the line where the path starts it
# or is a Windows one (``Directory: C:\Users\John Smith``). Elsewhere prose goes on after a blank
# (``in /Users/bob and then``): the name is its first word.
_LINE_END = r"[ \t\r]*+(?:\n|\Z)"
_NAME_END = rf"(?:{_ANY_SLASH}|>|(?(quote)(?P=quote)|(?!))|(?(line){_LINE_END}|(?(windows){_LINE_END}|(?!))))"
_SHARED = "|".join(name.replace(" ", f"(?: |{_ESCAPED_SPACE})") for name in SHARED_HOMES)
# The rule: a web page's address, whole and with no ``user`` (nothing taken: finds are searched past it), or a
# home folder, after the quote or the line's start that may end its user's name, and its user.
_HOME_USER = (
    rf"(?=[\"'`]?(?:[/\\%]|[A-Za-z](?::[/\\%]|%)|(?i:https?|wss?|vscode(?:-remote|-insiders)?|file|ssh|sftp|scp|smb|cifs)[:%]))"
    rf"(?:{_WEB}"
    rf"|(?:(?P<quote>[\"'`])|(?P<line>(?<![^\n])))?"
    rf"(?:{_UNIX}{_SLASH}|(?:{_DRIVE}|{_UNC})(?P<windows>){_ANY_SLASH}++)"
    # Generic folders as a whole name (``/home/user``, ``C:\Users\Default User``; not ``/home/user.bob``)
    # are no users; nor are ``.``, ``..``, ``...``: a name is no dots alone (``_PART``).
    rf"(?!(?i:{_SHARED})[.!]*+(?!{_NAME_CHAR}|{_NAME_ESCAPE}))"
    rf"(?P<user>{_WORD}(?:(?: {_WORD}){{1,3}}(?={_NAME_END}))?))"
)

# A shell's prompt names its user before the host, where no home folder is written (``alice@host:~$``):
# bash's (``alice@host:~/src$``, ``[alice@host src]$``) anywhere, zsh's (``alice@MacBook-Pro src %``) and
# Git Bash's (``alice@DESKTOP MINGW64 ~/src``) at a line's start (a literal ``\n`` too: a JSON string's),
# after a virtual environment's name (``(venv)``). ``root`` is no person's, nor a generic home's name. A bash
# prompt's folder holds no ``@``: each place a name may start is read up to the next one (linear).
_PROMPT = (
    r"(?:(?P<line>(?:^|(?<=\\n))(?:\([^()\s]{1,64}\)[ \t]+)?)|(?<![\w.@\\-])(?P<bracket>\[)?)"
    rf"(?!(?i:root|{_SHARED})@)(?P<user>[A-Za-z_][A-Za-z0-9_.-]{{0,31}})@[A-Za-z0-9][A-Za-z0-9.-]{{0,252}}"
    r"(?(bracket)[ \t]+[^\]\s]{1,255}\][$#]|(?::[~/][^\s$#@]*+[$#](?=[ \t]|$)|(?(line)[ \t]+"
    r"(?:(?:(?:MINGW|UCRT|CLANG)(?:32|64)|MSYS)\b|[^\s%]{1,255}[ \t]+%(?=[ \t]|$))|(?!))))"
)

# ``users`` in each of its 32 cases, as hints are literals (``UsErS`` too: a Windows folder's name has no case).
_ANY_CASE_USERS = tuple(map("".join, product(*zip("users", "USERS", strict=True))))


BUILT_IN: tuple[Rule, ...] = (
    Rule(
        "private-key",
        _R(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)",
            re.DOTALL,
        ),
        ("PRIVATE KEY",),
    ),
    # A token's literal first, what must not stand before it looked behind after: Python's search
    # skips to a leading literal fast, and tries a leading look-behind at every place. A provider's
    # token glued to a name (``DB_AIza…``, ``MY_ghp_…``, ``xoxb-…`` after a letter) is one: its prefix is
    # no word's end. ``sk-`` is one (``task-PROJ-1234-fix``, a branch named after an issue): OpenAI's
    # generic shape is taken only after a blank, ``_`` or ``-`` (a key glued to a letter is detect-secrets'
    # by its ``T3BlbkFJ``), Anthropic's after a letter or digit only as its keys are written (``sk-ant-api03-``).
    # An AWS key id is a run of 20 capitals and digits: glued to a small letter, ``_`` or ``-`` it is one
    # (``keyAKIA…``, ``DB_AKIA…``); a capital or digit beside it makes the run longer, and ``AKIA`` or ``ACCA``
    # there is chance (DNA, ``…GGTAAAACCACGCTGACG…``; base64; an upper-case hex digest), not a key.
    # An escape's last character is no name's (``_unglued``): ``%3DAKIA…`` (a presigned URL in a query), ``\nsk-…``.
    # Stripe's after a letter or digit only with a digit in it: ``benchmark_test_SerializationPerformance`` is a name.
    Rule("anthropic-key", _R(r"sk-ant-(?:(?<![A-Za-z0-9]sk-ant-)|(?=[a-z]+\d+-))[A-Za-z0-9_-]{20,}"), ("sk-ant-",)),
    Rule(
        "openai-key",
        _R(
            f"sk-{_unglued('[A-Za-z0-9]', 'sk-')}"
            r"(?!ant-)(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{20,}"
        ),
        ("sk-",),
    ),
    Rule("github-token", _R(r"github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9]{30,}"), ("gh", "github_pat_")),
    Rule("gitlab-token", _R(r"glpat-[A-Za-z0-9_-]{20,}"), ("glpat-",)),
    Rule("slack-token", _R(r"xox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",)),
    Rule("slack-webhook", _R(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/+-]{20,}"), ("hooks.",)),
    Rule("google-api-key", _R(r"AIza[0-9A-Za-z_-]{35}"), ("AIza",)),
    Rule(
        "stripe-key",
        _R(f"[rsp]k_(?:live|test)_(?:{_unglued('[A-Za-z0-9]', 'rk_live_')}|(?=[0-9A-Za-z]*\\d))[0-9A-Za-z]{{16,}}"),
        ("k_live_", "k_test_"),
    ),
    Rule("npm-token", _R(r"npm_[A-Za-z0-9]{36}\b"), ("npm_",)),
    Rule("pypi-token", _R(r"pypi-AgE[A-Za-z0-9_-]{50,}"), ("pypi-",)),
    Rule(
        "aws-access-key",
        _R(f"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA){_unglued('[A-Z0-9]', 'AKIA')}[0-9A-Z]{{16}}(?![A-Z0-9])"),
        ("A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    Rule(
        "aws-secret-key",
        _R(r"(?i:aws).{0,20}?(?i:secret|key).{0,20}?['\"\s:=]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", folded=True),
        ("aws", "AWS", "Aws"),
        1,
    ),
    Rule(
        "jwt",
        _R(r"eyJ[A-Za-z0-9_-]{8,}={0,2}\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]*={0,2}"),
        ("eyJ",),
        check=_jwt_header,
    ),
    Rule("uri-credentials", _R(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\"'<>]*:([^\s/?#@\"'<>]+)@"), ("://",), 1),
    Rule(
        "authorization",
        _R(
            r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?:(?i:bearer|basic|token|bot)\s+)?([A-Za-z0-9._~+/=-]{7,}[A-Za-z0-9_~+/=-])"
            r"|\bBearer\s+((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{15,}[A-Za-z0-9_~+/-]=*)"
        ),
        ("uthorization", "UTHORIZATION", "Bearer"),
        None,
    ),
    Rule(
        "secret",
        _R(
            rf"(?i){_QUERY}(?:(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*{_KEY_NAME}|(?<![A-Za-z0-9_-])pin(?:[_-]?code)?)"
            rf"(?![A-Za-z0-9_-])[\"']?\s*(?:=|:=|:|=>)[ \t]*"
            rf"(?:\"([^\s\"]{{4,}})\"|'([^\s']{{4,}})'|({_UNQUOTED}))",
            folded=True,
        ),
        (),
        None,
        check=_assigned,
        keyworded=True,
    ),
    # A string with a secret's look later in an assigned expression than its value's first blank, which
    # ends what the rule above sees (``password = os.environ.get("DB", "hunter2secret")``, ``x() or "…"``).
    Rule(
        "secret",
        _R(
            rf"(?i)(?:(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*{_KEY_NAME}|(?<![A-Za-z0-9_-])pin(?:[_-]?code)?)"
            r"(?![A-Za-z0-9_-])[\"']?[ \t]*(?:=|:=|:|=>)[ \t]*[A-Za-z_([][^\n]{0,200}?[ \t]"
            r"[^\n\"']{0,40}?([\"'])(?=[^\"'\s]*(?:[A-Za-z]\d|\d[A-Za-z]|[a-z][A-Z]|[A-Za-z][!#$%^&*]))"
            r"([^\"'\s]{6,200})\1",
            folded=True,
        ),
        (),
        2,
        check=lambda literal: _secret_literal(literal),
        keyworded=True,
    ),
    # A number under a name only a secret's number stands beside (``pin = 4821``, ``password: 84629173``):
    # an assigned value's rule takes six characters or more and never digits alone (a count, a port).
    Rule(
        "secret",
        _R(
            r"(?i)(?:(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*(?:password|passwd|passcode|passphrase|pwd|secret)"
            r"|(?<![A-Za-z0-9_-])pin(?:[_-]?code)?)(?![A-Za-z0-9_-])[\"']?\s*(?:=|:=|:|=>)[ \t]*[\"']?"
            r"(\d{4,})(?![A-Za-z0-9_]|\.\d)",
            folded=True,
        ),
        (),
        1,
        keyworded=True,
    ),
    # A request's ``Cookie:`` header holds every cookie (``a=1; sessionid=…``): all its pairs are the secret,
    # where an assigned value's rule took the first only, and only under a secret's name.
    Rule(
        "secret",
        _R(
            r"(?im)(?:^|(?<=[\s'\"]))cookie:[ \t]*"
            r"([^\s=;\"']+=[^\s;\"']*(?:;[ \t]*[^\s=;\"']+(?:=[^\s;\"']*)?)*)"
        ),
        ("ookie:", "OOKIE:"),
        1,
        check=_cookie_header,
    ),
    # An address in a query is written with its @ escaped (``?email=alice%40corp.com``).
    Rule("email", _R(r"\b[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"), ("@", "%40")),
    Rule("home-user", _R(_HOME_USER), ("home/", "home%", "home\\", *_ANY_CASE_USERS), "user"),
    # Hinted by what follows a prompt's host, not its ``@``: every address in a text would run the expression.
    Rule(
        "home-user",
        _R(_PROMPT, re.MULTILINE),
        (":~", ":/", "]$", "]#", " %", "\t%", "MINGW", "UCRT", "CLANG", "MSYS"),
        "user",
    ),
)

# detect-secrets plugins whose expressions are run as they are, with the literals that hint at them.
_PLUGINS: tuple[tuple[type[RegexBasedDetector], tuple[str, ...]], ...] = (
    (AzureStorageKeyDetector, ("AccountKey=",)),
    (DiscordBotTokenDetector, (".",)),  # weak hints: TRIGGER holds these plugins' own shapes
    (GitHubTokenDetector, ("gh",)),
    (GitLabTokenDetector, ("gl", "GR1348941")),
    (MailchimpDetector, ("-us",)),
    (NpmDetector, ("_authToken",)),
    (OpenAIDetector, ("T3BlbkFJ",)),
    (PypiTokenDetector, ("pypi-",)),
    (SendGridDetector, ("SG.",)),
    (SlackDetector, ("xox", "hooks.")),
    (SquareOAuthDetector, ("sq0csp-",)),
    (StripeDetector, ("k_live_",)),
    (TelegramBotTokenDetector, (":",)),
    (TwilioKeyDetector, ("AC", "SK")),
)


# A plugin's kind where the spec's rules name the same thing: one secret, one kind, one marker.
_SAME_KIND = {"npm-tokens": "npm-token", "openai-token": "openai-key", "stripe-access-key": "stripe-key"}


def _kind(secret_type: str) -> str:
    kind = re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
    return _SAME_KIND.get(kind, kind)


def plugin_rules() -> tuple[Rule, ...]:
    """The detect-secrets provider expressions as rules. Its AWS plugin's are left to the built-in
    rules: its key id has no bounds (``aws-access-key`` bounds it), and its secret key beside a
    variable name is ``aws-secret-key``'s (which takes the value only)."""
    rules = []
    for plugin, hints in _PLUGINS:
        for regex in plugin.denylist:  # type: ignore[attr-defined]
            rules.append(Rule(_kind(plugin.secret_type), regex, hints, PLUGIN_GROUP))  # type: ignore[arg-type]
    return tuple(rules)


class RulesError(ValueError):
    """A custom rule that cannot be used; the message names it."""


@dataclass(frozen=True)
class Redaction:
    """What to redact: the built-in kinds plus ``patterns`` (``kind``, regex)
    and never what an ``allow`` expression finds in a secret. Plain data, so it
    is compared, hashed, pickled to Dask workers and digested into an index as is."""

    patterns: tuple[tuple[str, str], ...] = ()
    allow: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Lists from a caller become tuples (hashable, cached); a bare expression is of kind "custom".
        given: Any = self.patterns
        object.__setattr__(self, "patterns", tuple(("custom", p) if isinstance(p, str) else tuple(p) for p in given))
        object.__setattr__(self, "allow", tuple(self.allow))
        for _, pattern in self.patterns:
            _compile(pattern, "--redact-pattern")
        for pattern in self.allow:
            _compile(pattern, "--redact-allow")

    def describe(self) -> str:
        """A stable text of the options, for digests."""
        return repr((self.patterns, self.allow))


def _compile(pattern: str, what: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise RulesError(f"{what} {pattern!r}: not a regular expression ({error})") from None


@cache
def custom_rules(patterns: tuple[tuple[str, str], ...]) -> tuple[Rule, ...]:
    """A custom pattern's secret is its group ``secret``, else its first group, else all it matches."""
    rules = []
    for kind, pattern in patterns:
        regex = _compile(pattern, "--redact-pattern")
        group: int | str = "secret" if "secret" in regex.groupindex else 1 if regex.groups else 0
        rules.append(Rule(kind, regex, (), group))
    return tuple(rules)


@cache
def allow_rules(allow: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(_compile(pattern, "--redact-allow") for pattern in allow)


_KIND = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


def read_rules(path: Path) -> Redaction:
    """A rules file (TOML): ``[[pattern]]`` tables of ``regex`` and an optional
    ``kind`` (``custom`` when none), and ``allow``, a list of expressions."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RulesError(f"{path}: cannot read the rules ({error})") from None
    patterns = []
    for index, entry in enumerate(data.get("pattern", [])):
        where = f"{path}: pattern[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("regex"), str):
            raise RulesError(f"{where}: needs a string 'regex'")
        kind = entry.get("kind", "custom")
        if not isinstance(kind, str) or not _KIND.match(kind):
            raise RulesError(f"{where}: kind must be lowercase words joined by '-'")
        _compile(entry["regex"], where)
        patterns.append((kind, entry["regex"]))
    allow = data.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(item, str) for item in allow):
        raise RulesError(f"{path}: allow must be a list of strings")
    for index, pattern in enumerate(allow):
        _compile(pattern, f"{path}: allow[{index}]")
    return Redaction(tuple(patterns), tuple(allow))
