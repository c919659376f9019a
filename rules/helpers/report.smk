# Helpers of rules/report.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def figures_of(corpus):
    """The report's figures of a corpus (grouping by document has no SVD; imported
    questions only the retrieval figures)."""
    names = corpus_figures(corpus in IMPORTED, config["corpora"][corpus]["grouping"])
    return [artifact("figure_png", corpus=corpus, figure=name) for name in names]


def figure_inputs(wildcards):
    """The artifacts one figure is drawn from."""
    corpus = wildcards.corpus
    return {
        "mrr_by_type": {"metrics": artifact("metrics", corpus=corpus)},
        "negrecall_vs_mrr": {"metrics": artifact("metrics", corpus=corpus)},
        "group_sizes": {"groups": groups_file(wildcards)},
        "svd_variance": {"variance": artifact("svd_variance", corpus=corpus)},
        "pass_rates": {
            "all": artifact("all_questions", corpus=corpus),
            "simple": artifact("atomic_questions", corpus=corpus, kind="simple"),
            "disjunctive": artifact(
                "atomic_questions", corpus=corpus, kind="disjunctive"
            ),
        },
    }[wildcards.figure]


def figure_settings(wildcards):
    """The models and split of a retrieval figure (so a registry change reruns only those)."""
    if FIGURES[wildcards.figure].category == "Retrieval":
        return {
            "models": corpus_models(wildcards.corpus),
            "split": config["evaluation"]["table_split"],
        }
    return {}


def llm_accounting_inputs(wildcards):
    """Every LLM job's accounting, by step name (imported questions: the decomposition)."""
    corpus = wildcards.corpus
    accounting = {}
    if not is_imported(wildcards):
        for kind in ("simple", "disjunctive"):
            accounting[kind] = artifact("atomic_accounting", corpus=corpus, kind=kind)
        for op in OPERATORS:
            accounting[f"compose_{op}"] = artifact(
                "compose_accounting", corpus=corpus, operator=op
            )
        accounting["filter"] = artifact("judge_accounting", corpus=corpus)
    return accounting | {"decompose": artifact("decompose_accounting", corpus=corpus)}


def report_inputs(corpus):
    """What `snakemake --report` shows of a corpus beyond Tables 1-3 (imported questions have
    no generation examples)."""
    pages = ["rankings", "significance_html", "llm_accounting_html"]
    pages += [] if corpus in IMPORTED else ["examples"]
    return [
        *figures_of(corpus),
        *audit_outputs(corpus),
        *[artifact(key, corpus=corpus) for key in [*pages, "config_html"]],
    ]
