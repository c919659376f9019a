"""PDFs the tests (and bench/pdf.py) build themselves with reportlab, with their source text.

`two_column_paper` lays out known paragraphs by hand on a canvas: two columns, a running
header and a page-number footer on every page, one word hyphenated across a line break, a
paragraph that continues from one column to the next, and a 3x4 table. Its `reference` is the
primary content (the paragraphs, without header, footer, title line or table), the DRC paper's
plain-text reference for extraction precision/recall.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

PAGE_W, PAGE_H = 612, 792  # US letter, points
MARGIN = 60
GUTTER = 24
FONT, SIZE, LEADING = "Helvetica", 10, 13
COLUMN_W = (PAGE_W - 2 * MARGIN - GUTTER) / 2

WORDS = (  # noqa: SIM905  (a paragraph of words reads better than a list)
    "river valley trade empire harvest copper fleet market temple harbor bronze winter "
    "scholar treaty mountain desert canal bridge garden forest island engine signal archive "
    "library festival village council army coast plain storm journey merchant craft pottery "
    "silver weaving granary record dynasty province census ledger quarry orchard vineyard"
).split()
HYPHENATED = "extraordinary"  # split as "extra-" / "ordinary" across a line break
TABLE = [["Metric", "Alpha", "Beta", "Gamma"], ["Recall", "0.81", "0.77", "0.69"],
         ["Precision", "0.74", "0.71", "0.88"]]  # fmt: skip
HEADER = "Journal of Synthetic Studies"


@dataclass
class BuiltPdf:
    path: Path
    title: str
    paragraphs: list[str]  # the primary content, in reading order

    @property
    def reference(self) -> str:
        return "\n\n".join(self.paragraphs)


def sentences(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def make_paragraphs(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    paragraphs = [sentences(rng, rng.randint(3, 6)) for _ in range(n)]
    # One word that the layout hyphenates (the builder breaks the line inside it).
    paragraphs[1] = paragraphs[1].replace(".", f" {HYPHENATED} harvest.", 1)
    return paragraphs


def _wrap(text: str, width: float) -> list[str]:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if line and stringWidth(candidate, FONT, SIZE) > width:
            if word == HYPHENATED:  # hyphenate: "extra-" ends this line
                lines.append(f"{line} {word[:5]}-")
                line = word[5:]
                continue
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines


def _force_hyphen(lines: list[str]) -> list[str]:
    """Break the line holding HYPHENATED inside the word, if wrapping did not already."""
    for i, line in enumerate(lines):
        words = line.split()
        if HYPHENATED in words:
            at = words.index(HYPHENATED)
            head = " ".join([*words[:at], HYPHENATED[:5] + "-"])
            tail = " ".join([HYPHENATED[5:], *words[at + 1 :]])
            return [*lines[:i], head, tail, *lines[i + 1 :]]
    return lines


def _page_furniture(canvas, page: int) -> None:
    canvas.setFont(FONT, 8)
    canvas.drawString(MARGIN, PAGE_H - 40, HEADER)
    canvas.drawCentredString(PAGE_W / 2, 30, str(page))


def _draw_table(canvas, x: float, y: float) -> float:
    """A ruled 3x4 table with its top-left at (x, y); returns its height."""
    from reportlab.lib import colors
    from reportlab.platypus import Table, TableStyle

    table = Table(TABLE, colWidths=[COLUMN_W / 4] * 4)
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black),
                               ("FONTSIZE", (0, 0), (-1, -1), 8)]))  # fmt: skip
    _, height = table.wrapOn(canvas, COLUMN_W, PAGE_H)
    table.drawOn(canvas, x, y - height)
    return height


def two_column_paper(
    path: Path,
    *,
    pages_of_text: int = 3,
    seed: int = 0,
    title: str | None = "A Synthetic Study of River Trade",
    metadata_title: bool = True,
    password: str | None = None,
) -> BuiltPdf:
    """Write a two-column paper of about `pages_of_text` pages and return its primary content."""
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen.canvas import Canvas

    encrypt = StandardEncryption(password, ownerPassword="owner") if password else None
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H), encrypt=encrypt)
    if title and metadata_title:
        canvas.setTitle(title)
    paragraphs = make_paragraphs(6 * pages_of_text, seed)
    lines: list[str | None] = []  # None: the gap between paragraphs
    for paragraph in paragraphs:
        lines += [*_force_hyphen(_wrap(paragraph, COLUMN_W)), None]

    page, column = 1, 0
    _page_furniture(canvas, page)
    top = PAGE_H - 80
    y = top
    if title:
        canvas.setFont("Helvetica-Bold", 16)
        canvas.drawString(MARGIN, y, title)
        y -= 36
    column_top = y
    table_drawn = False
    canvas.setFont(FONT, SIZE)
    for line in lines:
        if y < 70:  # next column, or next page
            if column == 0:
                column, y = 1, column_top
            else:
                canvas.showPage()
                page += 1
                _page_furniture(canvas, page)
                column, y = 0, top
                column_top = top
                if not table_drawn:  # the table heads page 2's first column
                    y -= _draw_table(canvas, MARGIN, y) + 2 * LEADING
                    table_drawn = True
            canvas.setFont(FONT, SIZE)
        x = MARGIN + column * (COLUMN_W + GUTTER)
        if line is None:
            y -= LEADING  # a blank line between paragraphs
            continue
        canvas.drawString(x, y, line)
        y -= LEADING
    canvas.showPage()
    canvas.save()
    return BuiltPdf(path=path, title=title or "", paragraphs=paragraphs)


def image_only_pdf(path: Path) -> Path:
    """One page holding only a raster image (a scan without a text layer)."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    image = Image.new("RGB", (200, 100), (200, 180, 160))
    canvas.drawImage(ImageReader(image), 100, 500, width=400, height=200)
    canvas.showPage()
    canvas.save()
    return path


def corrupt_pdf(path: Path, source: Path) -> Path:
    """A PDF cut after its header and first bytes: no object or page survives."""
    path.write_bytes(source.read_bytes()[:40] + b"\x00garbage\xff" * 20)
    return path
