# Helpers of rules/dataset.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


GENERATED_CORPORA = name_pattern([c for c in CORPORA if c not in IMPORTED])
IMPORTED_CORPORA = name_pattern(list(IMPORTED))


def questions_inputs(wildcards):
    """The files of a corpus's `questions:` (a BEIR folder: its queries and qrels), read in
    place when absolute (as in source_inputs)."""
    path = IMPORTED[wildcards.corpus]
    if os.path.isdir(path):
        files = [os.path.join(path, "queries.jsonl")]
        qrels = os.path.join(path, "qrels")
        if os.path.isdir(qrels):
            files += sorted(
                os.path.join(qrels, f) for f in os.listdir(qrels) if f.endswith(".tsv")
            )
    else:
        files = [path]
    return [local(f) if os.path.isabs(f) else f for f in files]


# The dataset card of the exports (boolbench/dataset_card.py) reports these settings: as
# params, a change to any of them rewrites the exports.
def card_params(wildcards):
    return card_settings(
        config,
        wildcards.corpus,
        is_imported(wildcards),
        corpus_models(wildcards.corpus),
    )


def audit_runs(wildcards):
    """The runs whose top audit.depth the audit sheet shows: every model of the corpus."""
    return [
        artifact("run", corpus=wildcards.corpus, model=model)
        for model in corpus_models(wildcards.corpus)
    ]


# The LLM judge's yes/no prompts, by the sheet column they fill (answers: the filter's judge).
AUDIT_PROMPTS = {
    "answers": prompt_params("judge"),
    "part": prompt_params("audit_part"),
    "natural": prompt_params("audit_natural"),
    "operator": prompt_params("audit_operator"),
}


def audit_judgements(wildcards):
    """The audit's sheet, its key and its judgements: a filled sheet named in
    audit.judgements, or the LLM judge's (audit.judge)."""
    corpus = wildcards.corpus
    judged = config["audit"]["judgements"]
    if judged is None:
        judged = artifact("audit_llm_judgements", corpus=corpus)
    elif os.path.isabs(judged):
        judged = local(judged)
    return {
        "sheet": artifact("audit_sheet", corpus=corpus),
        "key": artifact("audit_key", corpus=corpus),
        "judgements": judged,
    }


def audit_outputs(corpus):
    """The audit sheet of every run, and its confusion matrix when someone judges it."""
    judged = (
        config["audit"]["judgements"] is not None
        or config["audit"]["judge"] is not None
    )
    keys = ["audit_sheet", *(["audit_confusion"] if judged else [])]
    return [artifact(key, corpus=corpus) for key in keys]
