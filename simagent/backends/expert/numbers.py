"""Numbers as people write them, rewritten the one way the reading rules expect.

Shared by the request reader (reader.normalise) and the protocol-description reader
(protocol_text): '1.0 * 10⁻⁶', '2 x 10^-4', '10^4' and '10⁻⁵' become '1.0e-6', '2e-4', '1e4' and '1e-5', a
braced (typeset) exponent '10^{-3}', '5e{-3}' or '5.0e^{-3}' likewise; digit
groups, Western ('100,000') or Indian ('1,00,000'), lose their commas, while a list such as
'1,2' keeps them.
"""

from __future__ import annotations

import re

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def plain_numbers(text: str) -> str:
    """Numbers as the rules read them: '1.0 * 10⁻⁶', '2 x 10^-4', '3 x 10^{8}', '10^{-4}', '1e^{-10}' and
    '1e{-2}' -> '1.0e-6', '2e-4', '3e8', '1e-4', '1e-10', '1e-2';
    digit groups '100,000' and '1,00,000' -> '100000' (a list '1,2' is left alone)."""
    def power(match: re.Match) -> str:
        exponent = match.group(3).translate(_SUPERSCRIPT).replace(" ", "")
        written_as_power = match.group(2) or not exponent.isdigit()  # '^', '**', a sign or superscripts
        return f"{match.group(1)}e{exponent}" if written_as_power else match.group(0)

    # braces of a typeset (LaTeX) exponent without a caret, '1e{-2}', and of a power of ten before the mantissa
    # rule below reads it, '3 x 10^{8}' (the caret forms '1e^{-2}' are read at the end)
    text = re.sub(r"\b(\d+(?:\.\d+)?)e\s*\{\s*([-+]?\d+)\s*\}", r"\1e\2", text)
    text = re.sub(r"\b10\s*(\^|\*\*)\s*\{\s*([-+]?\d+)\s*\}", r"10\1\2", text)
    text = re.sub(r"(-?\d+(?:\.\d+)?)\s*(?:\*|x|×|·)\s*10\s*(\^|\*\*)?\s*\(?\s*([-+⁻⁺]?\s*[\d⁰¹²³⁴⁵⁶⁷⁸⁹]+)\)?",
                 power, text)
    text = re.sub(r"\b10\s*(?:\^|\*\*)\s*[({]?([-+]?\d+)[)}]?", r"1e\1", text)
    text = re.sub(r"\b10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "1e" + m.group(1).translate(_SUPERSCRIPT), text)  # 10⁻⁴
    # '1e^{-10}', '5e^-8': a mantissa and 'e' written with the caret of a power of ten
    text = re.sub(r"\b(\d+(?:\.\d+)?)e\s*\^\s*[({]?\s*([-+]?\d+)(?:\s*[)}])?", r"\1e\2", text)
    return re.sub(r"\b\d{1,3}(?:,\d{2})*(?:,\d{3})+\b(?!,\d)", lambda m: m.group(0).replace(",", ""), text)
