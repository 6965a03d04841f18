"""Files as users have them -> Documents cut into titled sections.

PDF (pypdf; page numbers kept; title/authors/DOI from the PDF's metadata, DOI also from the first
page), HTML (Sphinx manuals: one section per heading and per documented option), Markdown, plain
text / reStructuredText, and JATS XML (PubMed Central full text). Reference lists are dropped."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from simagent.knowledge.documents import CorpusError, Document, Section, SourceKind

SUFFIXES = {".pdf": "pdf", ".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
            ".txt": "text", ".rst": "text", ".xml": "jats", ".nxml": "jats"}
REFERENCE_HEADINGS = re.compile(r"^\W*(\d+(\.\d+)*\.?\s*)?(references( and notes)?|bibliography|literature cited|"
                                r"works cited|cited literature)\W*$", re.IGNORECASE)
DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])")
_SPACE = re.compile(r"[ \t\r\f\v]+")


def clean(text: str) -> str:
    """Collapse runs of blanks inside lines; keep paragraph breaks; drop Sphinx's pilcrows."""
    text = text.replace("\u00b6", "").replace("\u00a0", " ")
    lines = [_SPACE.sub(" ", line).strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def is_reference_heading(title: str) -> bool:
    return bool(REFERENCE_HEADINGS.match(title.strip()))


def supported(path: Path) -> bool:
    return path.suffix.lower() in SUFFIXES


def expand(paths: list[Path]) -> list[Path]:
    """Files named, and the supported files inside folders named (recursively, sorted)."""
    files: list[Path] = []
    for path in paths:
        path = Path(path).expanduser()
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and supported(p))
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(f"{path}: no such file or folder")
    return files


def load(path: Path, kind: SourceKind = "literature") -> Document:
    """Read one file; raises CorpusError with a clear message when it holds no usable text."""
    path = Path(path)
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise CorpusError(f"{path}: unsupported file type '{path.suffix}' "
                          f"(supported: {', '.join(sorted(set(SUFFIXES)))})")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise CorpusError(f"{path}: cannot be read ({err.strerror})") from None
    if not raw.strip():
        raise CorpusError(f"{path}: the file is empty; nothing added")
    doc = {"pdf": load_pdf, "html": load_html, "markdown": load_markdown, "text": load_text,
           "jats": load_jats}[fmt](path, raw)
    doc.kind = kind
    doc.sections = [s for s in doc.sections if s.text.strip() and not is_reference_heading(s.title.split(" > ")[-1])]
    if not doc.sections:
        hint = " (a scanned PDF needs OCR first)" if fmt == "pdf" else ""
        raise CorpusError(f"{path}: no text could be extracted{hint}; nothing added")
    return doc


# ---------------------------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------------------------

_HEADING_NAMES = ("abstract", "introduction", "background", "theory", "methods", "method", "methodology",
                  "computational details", "computational methods", "simulation details", "models",
                  "experimental", "experimental section", "materials and methods", "results",
                  "results and discussion", "discussion", "conclusion", "conclusions", "summary",
                  "acknowledgements", "acknowledgments", "appendix", "supporting information",
                  "references", "bibliography", "literature cited", "references and notes")
_NUMBERED = re.compile(r"^(\d{1,2}(\.\d{1,2}){0,3}\.?|[IVX]{1,4}\.)\s+([A-Z][^.!?]{2,70})$")


def _pdf_heading(line: str) -> str | None:
    text = line.strip()
    if not text or len(text) > 80:
        return None
    bare = re.sub(r"^(\d{1,2}(\.\d{1,2}){0,3}\.?|[IVX]{1,4}\.)\s+", "", text).strip().rstrip(":")
    if bare.lower() in _HEADING_NAMES:
        return text
    match = _NUMBERED.match(text)
    if match and len(match.group(3).split()) <= 8 and sum(c.isalpha() for c in match.group(3)) >= 4 \
            and not re.search(r"\d\s*(K|ps|ns|fs|nm|Å|bar|atm|%)\b", text):
        return text
    return None


def _authors(value: str | None) -> list[str]:
    if not value:
        return []
    parts = re.split(r";|\band\b|,(?=\s*[A-Z][^,]*\s[A-Z])", value)
    return [p.strip() for p in parts if p and p.strip()]


def load_pdf(path: Path, raw: bytes) -> Document:
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(raw))
        pages = [page.extract_text() or "" for page in reader.pages]
        meta = reader.metadata or {}
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as err:
        raise CorpusError(f"{path}: not a readable PDF ({type(err).__name__}: {err}); nothing added") from None
    if not pages:
        raise CorpusError(f"{path}: the PDF has no pages; nothing added")

    def field(key: str) -> str | None:
        value = meta.get(key) if hasattr(meta, "get") else None
        return str(value).strip() if value else None

    title = field("/Title") or path.stem.replace("_", " ")
    doi = None
    for candidate in (field("/doi"), field("/DOI"), field("/Subject"), field("/Keywords"), pages[0][:3000]):
        found = DOI.search(candidate or "")
        if found:
            doi = found.group(1)
            break
    sections: list[Section] = []
    current, skipping = "", False
    for number, text in enumerate(pages, start=1):
        lines: list[str] = []
        for line in [*text.splitlines(), None]:  # None: the end of the page
            heading = _pdf_heading(line) if line is not None else None
            if line is not None and not heading:
                lines.append(line)
                continue
            if lines and not skipping:
                sections.append(Section(title=current, page=number, text=clean("\n".join(lines))))
            lines = []
            if heading:
                current, skipping = heading, is_reference_heading(heading)
    year = None
    created = field("/CreationDate")
    if created and re.match(r"D:(\d{4})", created):
        year = created[2:6]
    return Document(source=str(path.resolve()), title=title, authors=_authors(field("/Author")), doi=doi,
                    year=year, sections=sections)


# ---------------------------------------------------------------------------------------------
# HTML (Sphinx manuals and ordinary pages)
# ---------------------------------------------------------------------------------------------

_BLOCKS = {"p", "pre", "li", "table", "blockquote", "dl", "figcaption", "caption", "address"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SKIP = {"script", "style", "nav", "header", "footer", "noscript", "form", "button", "svg"}


def _text(element) -> str:
    if element.tag == "pre":
        return clean("".join(element.itertext()))
    return _SPACE.sub(" ", re.sub(r"\s+", " ", "".join(element.itertext()))).replace("\u00b6", "").strip()


def _has_own_text(element) -> bool:
    """Text directly inside the element (not only inside its child elements)."""
    return bool((element.text or "").strip()) or any((child.tail or "").strip() for child in element)


def _definitions(element) -> list[str]:
    """A definition list as one paragraph per term: "-pi (no): Calculate minimum distance with
    periodic images" (gmx option tables), instead of all terms and definitions run together."""
    lines: list[str] = []
    term = None
    for child in element:
        if child.tag == "dt":
            term = _text(child)
        elif child.tag == "dd":
            body = _text(child)
            lines.append(f"{term}: {body}" if term and body else (term or body))
            term = None
    if term:
        lines.append(term)
    return [line for line in lines if line]


def load_html(path: Path, raw: bytes) -> Document:
    import lxml.html

    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", _decode(path, raw))  # lxml refuses str with an XML declaration
    try:
        root = lxml.html.fromstring(text)
    except Exception as err:  # lxml raises several types on garbage
        raise CorpusError(f"{path}: not readable HTML ({err}); nothing added") from None
    for bad in root.xpath("//script|//style|//*[contains(@class,'headerlink')]"):
        bad.drop_tree()
    title_el = root.find(".//title")
    title = clean(title_el.text_content()) if title_el is not None else path.stem
    title = re.sub(r"\s+[—-]\s+GROMACS \S+ documentation$", "", title)
    body = (root.xpath("//div[@role='main']") or root.xpath("//main") or root.xpath("//article")
            or root.xpath("//body") or [root])[0]
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    paragraphs: list[str] = []
    anchor: list[str | None] = [None]

    def heading_path() -> str:
        return " > ".join(t for level, t in stack if level > 1 or len(stack) == 1)

    def flush() -> None:
        if paragraphs:
            sections.append(Section(title=heading_path(), text="\n\n".join(paragraphs), anchor=anchor[0]))
            paragraphs.clear()

    def walk(element) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in _SKIP or element.get("role") == "navigation":
            return
        if tag in _HEADINGS:
            flush()
            level = _HEADINGS[tag]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _text(element)))
            parent = element.getparent()
            anchor[0] = element.get("id") or (parent.get("id") if parent is not None else None)
            return
        if tag == "dl" and any(dt.get("id") for dt in element.findall("dt")):
            flush()
            term = None
            for child in element:
                if child.tag == "dt":
                    term = child
                elif child.tag == "dd" and term is not None:
                    name = _text(term)
                    body_text = _text(child)
                    if body_text:
                        sections.append(Section(title=f"{heading_path()} > {name}" if stack else name,
                                                text=f"{name}: {body_text}", anchor=term.get("id")))
            return
        if tag == "dl":
            paragraphs.extend(_definitions(element))
            return
        if tag in _BLOCKS or _has_own_text(element):
            # a container holding text of its own (Sphinx line blocks: <div class="line">text <a>..</a>)
            # is a paragraph too; walking only its child elements would lose that text
            text = _text(element)
            if text:
                paragraphs.append(text)
            return
        for child in element:
            walk(child)

    walk(body)
    flush()
    return Document(source=str(path.resolve()), title=title or path.stem, sections=sections)


# ---------------------------------------------------------------------------------------------
# Markdown, text
# ---------------------------------------------------------------------------------------------


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def load_markdown(path: Path, raw: bytes) -> Document:
    from markdown_it import MarkdownIt

    text = _decode(path, raw)
    lines = text.splitlines()
    tokens = MarkdownIt().parse(text)
    heads = [(tok.map[0], tok.map[1], int(tok.tag[1]), tokens[i + 1].content)
             for i, tok in enumerate(tokens) if tok.type == "heading_open" and tok.map]
    title = next((h[3] for h in heads if h[2] == 1), path.stem)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    starts = [*heads, (len(lines), len(lines), 0, "")]
    if heads and heads[0][0] > 0:
        sections.append(Section(title="", text=clean("\n".join(lines[:heads[0][0]]))))
    if not heads:
        sections.append(Section(title="", text=clean(text)))
    for (_, end, level, name), nxt in zip(starts, starts[1:], strict=False):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, name))
        body = clean("\n".join(lines[end:nxt[0]]))
        path_title = " > ".join(t for lv, t in stack if lv > 1) or name
        sections.append(Section(title=path_title, text=body))
    return Document(source=str(path.resolve()), title=title, sections=sections)


def load_text(path: Path, raw: bytes) -> Document:
    text = clean(_decode(path, raw))
    first = next((line for line in text.splitlines() if line.strip()), path.stem)
    return Document(source=str(path.resolve()), title=first[:120] if len(first) < 120 else path.stem,
                    sections=[Section(title="", text=text)])


# ---------------------------------------------------------------------------------------------
# JATS XML
# ---------------------------------------------------------------------------------------------


def _jats_sections(sec, prefix: str) -> Iterator[Section]:
    title_el = sec.find("title")
    title = clean(" ".join(title_el.itertext())) if title_el is not None else ""
    path_title = f"{prefix} > {title}" if prefix and title else (title or prefix)
    paragraphs = [clean(" ".join(p.itertext())) for p in sec if p.tag in ("p", "disp-quote", "list", "table-wrap")]
    if paragraphs:
        yield Section(title=path_title, text="\n\n".join(p for p in paragraphs if p))
    for sub in sec.findall("sec"):
        yield from _jats_sections(sub, path_title)


def load_jats(path: Path, raw: bytes) -> Document:
    from lxml import etree

    try:
        root = etree.fromstring(raw, parser=etree.XMLParser(resolve_entities=False, no_network=True,
                                                            recover=False))
    except etree.XMLSyntaxError as err:
        raise CorpusError(f"{path}: not well-formed XML ({err}); nothing added") from None
    for element in root.iter():  # drop namespaces: JATS elements are unqualified in practice
        if isinstance(element.tag, str) and "}" in element.tag:
            element.tag = element.tag.split("}", 1)[1]
    if root.tag != "article":
        raise CorpusError(f"{path}: not a JATS article (root element <{root.tag}>); nothing added")
    meta = root.find("front/article-meta")
    title, authors, doi, year = path.stem, [], None, None
    if meta is not None:
        title_el = meta.find("title-group/article-title")
        if title_el is not None:
            title = clean(" ".join(title_el.itertext()))
        for name in meta.findall("contrib-group/contrib[@contrib-type='author']/name"):
            surname, given = name.findtext("surname") or "", name.findtext("given-names") or ""
            authors.append(f"{given} {surname}".strip())
        doi_el = meta.find("article-id[@pub-id-type='doi']")
        doi = doi_el.text.strip() if doi_el is not None and doi_el.text else None
        year = meta.findtext("pub-date/year")
    sections: list[Section] = []
    abstract = meta.find("abstract") if meta is not None else None
    if abstract is not None:
        sections.append(Section(title="Abstract", text=clean(" ".join(abstract.itertext()))))
    body = root.find("body")
    if body is not None:
        loose = [clean(" ".join(p.itertext())) for p in body if p.tag == "p"]
        if loose:
            sections.append(Section(title="", text="\n\n".join(loose)))
        for sec in body.findall("sec"):
            sections.extend(_jats_sections(sec, ""))
    return Document(source=str(path.resolve()), title=title, authors=authors, doi=doi, year=year,
                    sections=sections)
