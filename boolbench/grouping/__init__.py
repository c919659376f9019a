"""Passage groups the LLM writes questions about: the clustering encoder's vectors reduced and
clustered, or windows of one document's passages (clustering), then candidate groups drawn from
the clusters (candidates). Rules: cluster.smk (reduce, cluster, assign_clusters,
group_by_document), candidates.smk (sample_candidates); the vectors come from encode.smk
(boolbench.retrieval.embeddings).
"""
