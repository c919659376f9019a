"""The paper's baselines (section 6.3): LLM decomposition of Boolean questions (decompose),
Boolean operations on the runs of simple questions (boolean_ops), contrastive training
(contrastive), and their file-level steps with Table 3 (steps). Rules: baselines.smk.
"""
