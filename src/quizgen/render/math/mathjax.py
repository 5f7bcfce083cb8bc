"""The TeX that Anki's MathJax may read: an allow-list of commands, checked on every token of the math.

The quiz shows math through latex2mathml, Anki through its own MathJax, and the two read TeX differently:
latex2mathml reads `\\text{...}` as letters, while MathJax reads a `$...$` or `\\(...\\)` inside it (and
inside `\\mbox`, `\\hbox`, `\\textrm`, ...) as math again, where `\\href{javascript:...}`, `\\class`,
`\\style` or `\\require` do what they say. So the check does not depend on how either of them nests
things: every command anywhere in the math, text arguments included, must be a plain one of the list
below, and nothing may open math of its own (`$`, `\\(`, `\\[`). Whatever MathJax makes of the structure,
it then meets only these commands.
"""

from __future__ import annotations

import re

# Plain math: symbols, operators, structure, fonts, spacing. Nothing that links, styles, loads, defines
# or reads its argument as anything but TeX or text (no \href, \class, \style, \cssId, \html..., \unicode,
# \require, \color, \bbox, \def, \newcommand, \ref, \tag, \verb, \mbox and the other boxes).
_COMMANDS = frozenset({
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
    "iota", "kappa", "varkappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "varpi", "rho", "varrho",
    "sigma", "varsigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta",
    "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega", "pm", "mp", "times",
    "div", "cdot", "ast", "star", "circ", "bullet", "oplus", "ominus", "otimes", "oslash", "odot",
    "cap", "cup", "setminus", "wedge", "vee", "land", "lor", "neg", "lnot", "dagger", "ddagger",
    "amalg", "sqcap", "sqcup", "uplus", "wr", "diamond", "triangleleft", "triangleright", "leq", "le",
    "geq", "ge", "neq", "ne", "equiv", "approx", "sim", "simeq", "cong", "propto", "ll", "gg", "subset",
    "supset", "subseteq", "supseteq", "in", "notin", "ni", "mid", "nmid", "parallel", "perp", "prec",
    "succ", "preceq", "succeq", "doteq", "models", "vdash", "dashv", "asymp", "lesssim", "gtrsim",
    "leqslant", "geqslant", "coloneqq", "not", "to", "gets", "leftarrow", "rightarrow",
    "leftrightarrow", "Leftarrow", "Rightarrow", "Leftrightarrow", "longleftarrow", "longrightarrow",
    "longleftrightarrow", "Longleftarrow", "Longrightarrow", "Longleftrightarrow", "mapsto",
    "longmapsto", "implies", "iff", "uparrow", "downarrow", "updownarrow", "Uparrow", "Downarrow",
    "Updownarrow", "nearrow", "searrow", "swarrow", "nwarrow", "hookleftarrow", "hookrightarrow",
    "rightleftharpoons", "leftharpoonup", "rightharpoonup", "infty", "nabla", "partial", "forall",
    "exists", "nexists", "emptyset", "varnothing", "ell", "hbar", "Re", "Im", "aleph", "prime", "angle",
    "triangle", "top", "bot", "ldots", "cdots", "vdots", "ddots", "dots", "colon", "surd", "imath",
    "jmath", "wp", "sum", "prod", "coprod", "int", "iint", "iiint", "oint", "bigcup", "bigcap",
    "bigoplus", "bigotimes", "bigodot", "biguplus", "bigvee", "bigwedge", "bigsqcup", "limits",
    "nolimits", "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "coth", "log", "ln", "lg", "exp", "lim", "liminf", "limsup", "sup", "inf", "max", "min",
    "arg", "det", "dim", "gcd", "hom", "ker", "deg", "Pr", "mod", "bmod", "pmod", "argmax", "argmin",
    "hat", "widehat", "tilde", "widetilde", "bar", "overline", "underline", "vec", "dot", "ddot",
    "acute", "grave", "breve", "check", "mathring", "overbrace", "underbrace", "overrightarrow",
    "overleftarrow", "frac", "dfrac", "tfrac", "cfrac", "binom", "dbinom", "tbinom", "sqrt", "over",
    "choose", "atop", "overset", "underset", "stackrel", "left", "right", "middle", "big", "Big",
    "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr", "begin", "end",
    "operatorname", "substack", "mathbf", "mathrm", "mathit", "mathsf", "mathtt", "mathcal", "mathbb",
    "mathfrak", "mathscr", "boldsymbol", "bm", "displaystyle", "textstyle", "scriptstyle",
    "scriptscriptstyle", "text", "textrm", "textbf", "textit", "textsf", "texttt", "textnormal", "quad",
    "qquad", "enspace", "thinspace", "hline", "hdashline", "langle", "rangle", "lceil", "rceil",
    "lfloor", "rfloor", "lvert", "rvert", "lVert", "rVert", "vert", "Vert", "backslash", "lbrace",
    "rbrace",
})  # fmt: skip
# `\\` (a new row), spacing, and escaped special characters (`\$` is a dollar sign, not math).
_SYMBOLS = frozenset({"\\", ",", ":", ";", "!", " ", "\n", "{", "}", "|", "$", "%", "&", "#", "_", ">"})
_ENVIRONMENTS = frozenset({
    "matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "cases", "array",
    "aligned", "gathered", "split",
})  # fmt: skip
# MathJax's reading of a command: a backslash and letters, or a backslash and one character.
_TOKEN = re.compile(r"\\([a-zA-Z]+|.?)|\$", re.S)
_ENVIRONMENT = re.compile(r"\s*\{([^{}]*)\}")
_ACTIVE = frozenset({
    "href", "class", "style", "cssId", "require", "unicode", "bbox", "color", "mmlToken", "toggle",
    "mathtip", "texttip",
})  # fmt: skip
_INSTEAD = "write a link in Markdown, outside the math"
_OWN_MATH = "it opens math of its own, which Anki's MathJax reads (in \\text{} too) and quizgen cannot check"


def problem(tex: str) -> str | None:
    """Why Anki's MathJax must not read this TeX (the math between the delimiters), or None."""
    for m in _TOKEN.finditer(tex):
        name = m.group(1)
        if name is None:  # a bare `$`
            return f"'$' in math: {_OWN_MATH}; write \\$ for a dollar sign"
        if name in ("(", ")", "[", "]"):
            return f"'\\{name}' in math: {_OWN_MATH}"
        if name == "":
            return "it ends in a lone '\\'"
        if len(name) == 1 and not name.isalpha():
            if name not in _SYMBOLS:
                return f"'\\{name}' is not allowed in math"
        elif name in _ACTIVE or name.startswith("html"):
            return f"\\{name} is not allowed in math: in Anki it links, styles or loads; {_INSTEAD}"
        elif name not in _COMMANDS:
            return f"unknown command \\{name} (math takes the plain commands listed in docs/cards.md)"
        elif name in ("begin", "end"):
            env = _ENVIRONMENT.match(tex, m.end())
            if env is None or env.group(1) not in _ENVIRONMENTS:
                shown = f"{{{env.group(1)}}}" if env else "without {name}"
                return f"\\{name}{shown} is not an environment quizgen shows"
    return None
