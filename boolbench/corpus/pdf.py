"""One PDF -> passages, with pdfminer.six's layout analysis (the DRC paper's pdfminer.six
baseline; its DiT layout model is not available offline).

Per page, pdfminer groups characters into lines and lines into text boxes. Then:
1. Reading order: boxes are read band by band (a band ends at a box spanning the text width),
   and within a band column by column, top to bottom.
2. Removed, and counted: page numbers; running headers and footers (the same text, digits
   aside, at the same height on at least `repeat_fraction` of the pages); tables (boxes made
   mostly of short lines laid out side by side, as cells of a row are); headings (larger type
   than the body), which only supply the title.
3. A box that continues the previous paragraph (which has no final punctuation, while this one
   starts in lower case or at the top of a column: a paragraph broken across a column or page)
   is joined to it; a word hyphenated at a line break is joined ("extra-" + "ordinary"), so a
   compound split at its own hyphen loses it, the usual trade-off.
4. Paragraphs over `max_words` are split at sentence boundaries into nearly equal parts; those
   (and parts) under `min_words` words are dropped.
Failures are `Unreadable` with a short reason (encrypted, corrupt, empty, image-only, no-text);
`extract_file` turns one file into a `FileResult`, what the collection's workers return.
"""

from __future__ import annotations

import math
import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

# Bumped when extraction changes what it returns, so cached results are not reused.
EXTRACTOR_VERSION = 1
HEADING_SCALE = 1.15  # a heading's type is at least this much larger than the body's
ROW_TOLERANCE = 0.5  # lines are in one table row when their centres are this many heights apart
CELL_WORDS = 4  # a table cell line holds at most this many words
SPANNING = 0.55  # a box wider than this share of the text area spans the columns

# "12", "Page 3 of 9", "4/10", and front-matter numerals up to xxxix (not words such as "mix")
PAGE_NUMBER = re.compile(
    r"^(?=\S)(page\s+)?(\d+|x{0,3}(ix|iv|v?i{0,3}))(\s*(of|/)\s*\d+)?$", re.IGNORECASE
)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
CID = re.compile(r"\(cid:\d+\)")
DOT_LEADER = re.compile(r"(\s?\.){4,}")  # ". . . . 15" in a table of contents
# Metadata titles that writers fill in by themselves: not a title.
PLACEHOLDER_TITLE = re.compile(
    r"^(untitled|title|unknown|none|document\d*)$|^microsoft \w+ - |\.(docx?|pdf|tex|dvi)$",
    re.IGNORECASE,
)


class Unreadable(Exception):
    """A PDF that yields no text; `reason` is one word for the report, str() the detail."""

    def __init__(self, reason: str, detail: str, pages: int = 0):
        super().__init__(detail)
        self.reason = reason
        self.pages = pages  # how many were read


@dataclass(frozen=True)
class ExtractionSettings:
    max_words: int = 150
    min_words: int = 5
    repeat_fraction: float = 0.5

    @classmethod
    def from_config(cls, section: dict) -> ExtractionSettings:
        return cls(**{k: section[k] for k in cls.__dataclass_fields__ if k in section})


@dataclass
class Box:
    """A text box of one page, with what the cleaning steps need to know about it."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    lines: list[str]
    line_spans: list[tuple[float, float, float, float]]  # x0, y0, x1, y1 of each line
    size: float  # mean character size
    chars: int

    @cached_property  # read by several cleaning steps
    def text(self) -> str:
        return join_lines(self.lines)

    @property
    def words(self) -> int:
        return sum(len(line.split()) for line in self.lines)


@dataclass
class PdfText:
    """What one file yields: its passages (text, first page) and what was dropped."""

    title: str
    pages: int
    passages: list[tuple[str, int]]
    dropped: Counter = field(default_factory=Counter)


def clean(text: str) -> str:
    """NFKC (ligatures -> letters), no (cid:N) placeholders or dot leaders, single spaces."""
    text = DOT_LEADER.sub(" ", CID.sub("", unicodedata.normalize("NFKC", text)))
    return " ".join(text.split())


def join_lines(lines: list[str]) -> str:
    """Lines of a paragraph as one string, hyphenated line breaks joined."""
    out = ""
    for line in lines:
        out = join_text(out, clean(line))
    return out


def join_text(left: str, right: str) -> str:
    """left + right with a space, or without the hyphen when right continues a split word."""
    if not (left and right):
        return left or right
    if len(left) > 1 and left[-1] == "-" and left[-2].isalpha() and right[:1].islower():
        return left[:-1] + right
    return f"{left} {right}"


# ---------------------------------------------------------------------------------------------
# Reading the file


def _decode(value) -> str:
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    value = resolve1(value)
    if isinstance(value, bytes):
        return clean(decode_text(value))
    return clean(value) if isinstance(value, str) else ""


def _open(path: Path):
    """The pdfminer document, or Unreadable(encrypted|corrupt|empty)."""
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFParser

    if path.stat().st_size == 0:
        raise Unreadable("empty", "empty file (0 bytes)")
    handle = open(path, "rb")  # noqa: SIM115  (kept open while pages are read)
    try:
        return handle, PDFDocument(PDFParser(handle), password="")
    except PDFPasswordIncorrect:
        handle.close()
        raise Unreadable("encrypted", "encrypted, a password is needed") from None
    except PDFEncryptionError as err:
        handle.close()
        raise Unreadable("encrypted", f"unsupported encryption ({err})") from None
    except Exception as err:  # pdfminer raises many kinds on malformed files
        handle.close()
        raise Unreadable("corrupt", f"not a readable PDF ({type(err).__name__}: {err})") from None


def _boxes_of(layout, page: int) -> tuple[list[Box], bool]:
    """The text boxes of a page layout, and whether it holds an image."""
    from pdfminer.layout import LTChar, LTFigure, LTImage, LTTextBox, LTTextLine

    boxes, has_image = [], False
    stack = list(layout)
    while stack:
        item = stack.pop()
        if isinstance(item, LTImage | LTFigure):
            has_image = True
            if isinstance(item, LTFigure):
                stack.extend(item)
        if not isinstance(item, LTTextBox):
            continue
        lines = [line for line in item if isinstance(line, LTTextLine)]
        sizes = [c.size for line in lines for c in line if isinstance(c, LTChar)]
        texts = [line.get_text() for line in lines]
        if not any(t.strip() for t in texts):
            continue
        boxes.append(
            Box(
                page=page,
                x0=item.x0,
                y0=item.y0,
                x1=item.x1,
                y1=item.y1,
                lines=texts,
                line_spans=[(ln.x0, ln.y0, ln.x1, ln.y1) for ln in lines],
                size=statistics.fmean(sizes) if sizes else 0.0,
                chars=len(sizes),
            )
        )
    return boxes, has_image


def read_pages(path: Path) -> tuple[str, list[list[Box]], bool]:
    """Metadata title, the text boxes of every page, and whether any page holds an image."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    handle, document = _open(path)
    with handle:
        info = document.info[0] if document.info else {}
        title = _decode(info.get("Title")) if isinstance(info, dict) else ""
        resources = PDFResourceManager(caching=True)
        device = PDFPageAggregator(resources, laparams=LAParams())
        interpreter = PDFPageInterpreter(resources, device)
        pages, has_image = [], False
        try:
            for number, page in enumerate(PDFPage.create_pages(document), 1):
                interpreter.process_page(page)
                boxes, image = _boxes_of(device.get_result(), number)
                pages.append(boxes)
                has_image |= image
        except Exception as err:
            if not pages:
                raise Unreadable(
                    "corrupt", f"pages unreadable ({type(err).__name__}: {err})"
                ) from None
            raise Unreadable(
                "corrupt", f"page {len(pages) + 1} unreadable ({type(err).__name__}: {err})"
            ) from None
    return title, pages, has_image


# ---------------------------------------------------------------------------------------------
# Cleaning


def reading_order(boxes: list[Box]) -> list[Box]:
    """Band by band (split at boxes spanning the text width), column by column, top down."""
    if not boxes:
        return []
    left, right = min(b.x0 for b in boxes), max(b.x1 for b in boxes)
    width = max(right - left, 1.0)
    ordered, band = [], []
    for box in sorted(boxes, key=lambda b: -b.y1):
        if (box.x1 - box.x0) / width > SPANNING:
            ordered += _columns(band, width) + [box]
            band = []
        else:
            band.append(box)
    return ordered + _columns(band, width)


def _columns(band: list[Box], width: float) -> list[Box]:
    # Columns start where boxes at least a quarter of the text width start (narrow boxes, such
    # as a centred page number or table cells, would bridge the gutter); a new column needs a
    # gap of 15% of the width. Every box then goes to the last column starting left of it.
    wide = sorted(b.x0 for b in band if b.x1 - b.x0 >= 0.25 * width)
    starts: list[float] = []
    for previous, x in zip([None, *wide], wide, strict=False):
        if previous is None or x - previous > 0.15 * width:
            starts.append(x)
    tolerance = 0.05 * width

    def column(box: Box) -> int:
        return sum(1 for start in starts[1:] if box.x0 >= start - tolerance)

    return sorted(band, key=lambda b: (column(b), -b.y1))


def _running_key(box: Box, page_height: float) -> tuple[str, int]:
    text = re.sub(r"\d+", "#", box.text.lower())
    return text, round(box.y0 / page_height * 50)  # height in 2% steps of the page


def running_boxes(pages: list[list[Box]], page_height: float, fraction: float) -> set[int]:
    """ids of boxes whose text, digits aside, recurs at the same height on most pages."""
    if len(pages) < 2:
        return set()
    seen: dict[tuple[str, int], set[int]] = {}
    for boxes in pages:
        for box in boxes:
            text, height = _running_key(box, page_height)
            for step in (height - 1, height, height + 1):  # tolerate a small drift
                seen.setdefault((text, step), set()).add(box.page)
    needed = max(2, math.ceil(fraction * len(pages)))
    return {
        id(box)
        for boxes in pages
        for box in boxes
        if len(seen[_running_key(box, page_height)]) >= needed
    }


def table_boxes(boxes: list[Box]) -> set[int]:
    """ids of boxes at least half of whose lines are table cells.

    A cell is a short line side by side with another short line of its own box (a paragraph's
    lines are stacked, never side by side), or with two of other boxes (a row of 3+ cells).
    """
    short = [
        (id(box), span)
        for box in boxes
        for span, text in zip(box.line_spans, box.lines, strict=True)
        if len(text.split()) <= CELL_WORDS
    ]
    cell_lines: Counter = Counter()
    for index, (owner, (x0, y0, x1, y1)) in enumerate(short):
        centre, height = (y0 + y1) / 2, max(y1 - y0, 1.0)
        mates = [
            other
            for other_index, (other, (ox0, oy0, ox1, oy1)) in enumerate(short)
            if other_index != index
            and abs((oy0 + oy1) / 2 - centre) <= ROW_TOLERANCE * height
            and (ox0 >= x1 or ox1 <= x0)
        ]
        if owner in mates or len(set(mates)) >= 2:
            cell_lines[owner] += 1
    return {id(box) for box in boxes if cell_lines[id(box)] * 2 >= len(box.lines)}


def body_size(pages: list[list[Box]]) -> float:
    """The most common character size, weighted by characters."""
    sizes: Counter = Counter()
    for boxes in pages:
        for box in boxes:
            sizes[round(box.size, 1)] += box.chars
    return sizes.most_common(1)[0][0] if sizes else 0.0


def split_paragraph(text: str, max_words: int) -> list[str]:
    """Nearly equal parts of at most max_words words, cut at sentence ends where possible."""
    words = text.split()
    if len(words) <= max_words:
        return [text]
    target = math.ceil(len(words) / math.ceil(len(words) / max_words))
    pieces = []  # sentences, and longer-than-max sentences cut into max_words chunks
    for sentence in SENTENCE_END.split(text):
        tokens = sentence.split()
        pieces += [" ".join(tokens[i : i + max_words]) for i in range(0, len(tokens), max_words)]
    parts, current = [], []
    for piece in pieces:
        size = len(piece.split())
        count = sum(len(p.split()) for p in current)
        if current and (count + size > max_words or count >= target):
            parts.append(" ".join(current))
            current = []
        current.append(piece)
    if current:
        parts.append(" ".join(current))
    return parts


def _continues(previous: str, text: str, column_top: bool) -> bool:
    """A paragraph broken by a column or page break: no final punctuation before it, and it
    goes on in lower case, or at the top of a column (a name or "I" may follow the break)."""
    return previous[-1:] not in ("", *".!?:;\"'”)") and (text[:1].islower() or column_top)


def extract_pdf(path: str | Path, settings: ExtractionSettings) -> PdfText:
    """Passages of one PDF in reading order; Unreadable when it yields none at all."""
    path = Path(path)
    meta_title, pages, has_image = read_pages(path)
    if not pages:
        raise Unreadable("empty", "no pages")
    if not any(pages):
        if has_image:
            raise Unreadable(
                "image-only", "no text layer, only images (OCR is not supported)", len(pages)
            )
        raise Unreadable("no-text", "no text on any page", len(pages))
    text = clean_pages(pages, settings)
    if PLACEHOLDER_TITLE.search(meta_title):
        meta_title = ""
    text.title = meta_title or text.title or path.stem
    return text


def clean_pages(pages: list[list[Box]], settings: ExtractionSettings) -> PdfText:
    """Passages from the text boxes of every page (the title: the first heading of page 1)."""
    dropped: Counter = Counter()
    page_height = max((b.y1 for boxes in pages for b in boxes), default=1.0) or 1.0
    running = running_boxes(pages, page_height, settings.repeat_fraction)
    body = body_size(pages)
    heading_title = ""
    paragraphs: list[list] = []  # [text, first page]
    for boxes in pages:
        tables = table_boxes(boxes)
        above = None  # the previous body box of this page
        for box in reading_order(boxes):
            text = box.text
            if PAGE_NUMBER.match(text):
                dropped["page_numbers"] += 1
            elif id(box) in running:
                dropped["running_headers_footers"] += 1
            elif id(box) in tables:
                dropped["table_cells"] += 1
            elif box.size > HEADING_SCALE * body and box.words <= 30:
                dropped["headings"] += 1
                if box.page == 1 and not heading_title:
                    heading_title = text
            else:
                # Reading order goes up only when it starts a column (or the page).
                column_top = above is None or box.y1 > above.y0
                if paragraphs and _continues(paragraphs[-1][0], text, column_top):
                    paragraphs[-1][0] = join_text(paragraphs[-1][0], text)
                else:
                    paragraphs.append([text, box.page])
                above = box

    passages = []
    for text, page in paragraphs:
        for part in split_paragraph(text, settings.max_words):
            if len(part.split()) < settings.min_words:
                dropped["short_fragments"] += 1
            else:
                passages.append((part, page))
    return PdfText(title=heading_title, pages=len(pages), passages=passages, dropped=dropped)


@dataclass
class FileResult:
    """One file's extraction, or why it was skipped; what the cache stores."""

    title: str = ""
    pages: int = 0
    passages: list | None = None  # [text, page] pairs
    dropped: dict | None = None
    reason: str | None = None  # set when skipped
    detail: str = ""


def extract_file(path: str, settings: ExtractionSettings) -> FileResult:
    """One file's passages, or the reason it gives none (run in a worker process)."""
    try:
        text = extract_pdf(path, settings)
    except Unreadable as err:
        return FileResult(pages=err.pages, reason=err.reason, detail=str(err))
    if not text.passages:
        return FileResult(
            pages=text.pages,
            dropped=dict(text.dropped),
            reason="no-passages",
            detail=f"no paragraph of at least {settings.min_words} words",
        )
    return FileResult(
        title=text.title,
        pages=text.pages,
        passages=[list(p) for p in text.passages],
        dropped=dict(text.dropped),
    )
