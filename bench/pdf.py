"""PDF extraction: pages per second (1 and 2 workers) and token precision/recall/F1 against
the source text, beside pdfminer.six's plain extract_text (the DRC paper's pdfminer.six*).

Two collections:
- the tests' generated two-column papers (tests/pdf_builder.py: running header, page numbers,
  a table, hyphenation, paragraphs across columns and pages; needs reportlab, the test extra);
- when a `chromium` binary is installed, documents from another producer: Wikipedia Vital
  Articles (the embedded corpus) as HTML pages with headings and a table, printed to PDF by
  headless Chromium with its own running header (date, title) and footer (URL, page n/m).
The reference text is exactly the paragraphs that were laid out.

    python bench/pdf.py [--papers 20] [--pages 10] [--chromium-docs 10]
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from boolbench.corpus.pdf import ExtractionSettings  # noqa: E402
from boolbench.corpus.pdf_collection import extract_collection, pdf_files, token_prf  # noqa: E402
from boolbench.corpus.sources import vital_articles_path  # noqa: E402
from tests.pdf_builder import two_column_paper  # noqa: E402


def chromium_documents(root: Path, n_docs: int, articles_per_doc: int = 40) -> dict[str, str]:
    """Print HTML pages of Vital Articles to PDF with Chromium; file name -> reference text."""
    articles = json.loads(vital_articles_path().read_text(encoding="utf-8"))
    keys = sorted(articles)
    references = {}
    for doc in range(n_docs):
        parts, paragraphs = [], []
        for i, key in enumerate(keys[doc * articles_per_doc : (doc + 1) * articles_per_doc]):
            parts.append(f"<h2>{html.escape(articles[key].get('title') or key)}</h2>")
            for paragraph in articles[key]["extract"].split("\n"):
                if paragraph.strip():
                    parts.append(f"<p>{html.escape(paragraph)}</p>")
                    paragraphs.append(paragraph)
            if i == 5:
                parts.append(
                    "<table border=1><tr><th>Metric</th><th>A</th><th>B</th></tr>"
                    "<tr><td>Recall</td><td>0.8</td><td>0.7</td></tr>"
                    "<tr><td>Precision</td><td>0.6</td><td>0.9</td></tr></table>"
                )
        page = root / f"doc{doc:03d}.html"
        page.write_text(
            f"<html><head><title>Vital articles {doc}</title><style>body {{font-family: serif; "
            f"font-size: 11pt; text-align: justify}} h2 {{font-size: 14pt}}</style></head>"
            f"<body>{''.join(parts)}</body></html>",
            encoding="utf-8",
        )
        subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             f"--print-to-pdf={page.with_suffix('.pdf')}", page.as_uri()],
            check=True, capture_output=True,
        )  # fmt: skip
        page.unlink()
        references[page.with_suffix(".pdf").name] = "\n".join(paragraphs)
    return references


def measure(root: Path, references: dict[str, str], name: str) -> None:
    """Extract the folder with 1 and 2 workers and with extract_text; print rates and scores."""
    import pandas as pd
    from pdfminer.high_level import extract_text

    files = pdf_files(str(root))
    rates = {}
    for workers in (1, 2):
        report = extract_collection(
            files,
            ExtractionSettings(),
            passages_out=root.parent / f"{name}-{workers}.parquet",
            report_out=root.parent / f"{name}-{workers}.json",
            workers=workers,
            cache_dir=None,
        )
        rates[workers] = report["pages_per_second"]
    pages = report["pages"]
    passages = pd.read_parquet(root.parent / f"{name}-2.parquet")
    texts = passages.groupby("doc_id")["text"].agg(" ".join)
    ours = [token_prf(texts.get(doc, ""), ref) for doc, ref in references.items()]
    start = time.perf_counter()
    plain = [token_prf(extract_text(files[doc]), ref) for doc, ref in references.items()]
    plain_rate = pages / (time.perf_counter() - start)

    def mean(scores, i):
        return statistics.fmean(s[i] for s in scores)

    print(f"\n{name}: {len(references)} documents, {pages} pages (2 cores)")
    speedup = rates[2] / rates[1]
    print(f"pages/s: 1 worker {rates[1]:.1f}, 2 workers {rates[2]:.1f} (ratio {speedup:.2f})")
    print(f"pages/s of plain extract_text (1 process): {plain_rate:.1f}")
    print("                      precision  recall     F1")
    for label, scores in (("boolbench", ours), ("pdfminer extract_text", plain)):
        print(f"{label:<22}{mean(scores, 0):>9.4f}{mean(scores, 1):>8.4f}{mean(scores, 2):>7.4f}")
    print(f"F1 ratio boolbench / extract_text: {mean(ours, 2) / mean(plain, 2):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=20)
    parser.add_argument("--pages", type=int, default=10, help="about this many pages each")
    parser.add_argument("--chromium-docs", type=int, default=10)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "papers"
        root.mkdir()
        # The builder's pages_of_text counts 6 paragraphs a page; they fill about 2/3 of one.
        built = [
            two_column_paper(root / f"paper{i:03d}.pdf", pages_of_text=args.pages * 3 // 2, seed=i)
            for i in range(args.papers)
        ]
        measure(root, {p.path.name: p.reference for p in built}, "generated two-column papers")
        if shutil.which("chromium") and args.chromium_docs:
            root = Path(tmp) / "chromium"
            root.mkdir()
            references = chromium_documents(root, args.chromium_docs)
            measure(root, references, "Chromium-printed Wikipedia pages")
        else:
            print("\n(no chromium binary: the second collection is skipped)")


if __name__ == "__main__":
    main()
