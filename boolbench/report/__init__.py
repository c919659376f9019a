"""The HTML report: figures (figures), pages that are not metric tables (pages: LLM accounting,
examples, the run's config, rankings), paired significance tests (significance: Table 2's
daggers) and the self-contained HTML pages every table is also written as (html, used by the
dataset, evaluation and audit tables too). Rules: report.smk.
"""
