"""Retrievers and their evaluation: the registry of `models:` entries (registry), the dense
encoders (encoders; e5 runs the bundled multilingual-e5-small in torch), embedding files
(embeddings), FAISS (dense), BM25 (bm25), cross-encoder re-ranking (rerank), runs and the
search jobs (runs, search), document scopes (document_scope), per-query metrics, scores and
Table 2 (metrics, evaluation), TREC files (trec) and what produced a run (provenance).
Rules: evaluate.smk; encode.smk (the clustering encoder's shards, through embeddings).
"""
