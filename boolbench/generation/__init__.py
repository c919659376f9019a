"""LLM-written questions and the dataset: prompt sets (prompts), checks on every output
(validation), simple and disjunctive questions (questions), AND/OR/NOT composition (compose),
the answerer's filter (filtering), the dataset with its split, Table 1 and BEIR export
(dataset), their file-level steps (steps) and the label audit (audit). The LLM client is
boolbench.llm. Rules: generate.smk, dataset.smk (assemble_dataset, dataset_statistics,
export_beir, audit_sheet, audit_judge, audit_confusion).
"""
