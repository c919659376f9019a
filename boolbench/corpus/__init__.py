"""Corpora and question files: source readers -> one passage table (sources), PDF extraction
(pdf: one file; pdf_collection: a folder and its extraction report), and question sets from
files (question_sets: the released BoolQuestions layout, imports, the released-layout export).
Rules: corpus.smk (ingest, extract_pdf, extraction_quality); dataset.smk (import_questions,
question_statistics, export_released).
"""
