"""PDF extraction: pages per second (1 and 2 workers) and token precision/recall/F1 against
the source text, beside pdfminer.six's plain extract_text (the DRC paper's pdfminer.six*).

The collection is the tests' generated two-column papers (tests/pdf_builder.py: running header,
page numbers, a table, hyphenation, paragraphs across columns and pages), so the reference
text is exactly what was laid out. Needs reportlab (the test extra).

    python bench/pdf.py [--papers 20] [--pages 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from boolbench.pdf import ExtractionSettings  # noqa: E402
from boolbench.pdf_corpus import extract_collection, pdf_files, token_prf  # noqa: E402
from tests.pdf_builder import two_column_paper  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=20)
    parser.add_argument("--pages", type=int, default=10, help="about this many pages each")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pdfs"
        root.mkdir()
        # The builder's pages_of_text counts 6 paragraphs a page; they fill about 2/3 of one.
        built = [
            two_column_paper(root / f"paper{i:03d}.pdf", pages_of_text=args.pages * 3 // 2, seed=i)
            for i in range(args.papers)
        ]
        files = pdf_files(str(root))
        rates = {}
        for workers in (1, 2):
            report = extract_collection(
                files,
                ExtractionSettings(),
                passages_out=Path(tmp) / f"passages-{workers}.parquet",
                report_out=Path(tmp) / f"report-{workers}.json",
                workers=workers,
                cache_dir=None,
            )
            rates[workers] = report["pages_per_second"]
        pages = report["pages"]

        import pandas as pd
        from pdfminer.high_level import extract_text

        passages = pd.read_parquet(Path(tmp) / "passages-2.parquet")
        texts = passages.groupby("doc_id")["text"].agg(" ".join)
        ours, plain = [], []
        start = time.perf_counter()
        for paper in built:
            plain.append(token_prf(extract_text(paper.path), paper.reference))
        plain_rate = pages / (time.perf_counter() - start)
        for paper in built:
            ours.append(token_prf(texts.get(paper.path.name, ""), paper.reference))

    def mean(scores, i):
        return statistics.fmean(s[i] for s in scores)

    print(f"{len(built)} papers, {pages} pages (2 cores)")
    speedup = rates[2] / rates[1]
    print(f"pages/s: 1 worker {rates[1]:.1f}, 2 workers {rates[2]:.1f} (ratio {speedup:.2f})")
    print(f"pages/s of plain extract_text (1 process): {plain_rate:.1f}")
    print("                      precision  recall     F1")
    for name, scores in (("boolbench", ours), ("pdfminer extract_text", plain)):
        print(f"{name:<22}{mean(scores, 0):>9.4f}{mean(scores, 1):>8.4f}{mean(scores, 2):>7.4f}")
    print(f"F1 ratio boolbench / extract_text: {mean(ours, 2) / mean(plain, 2):.3f}")


if __name__ == "__main__":
    main()
