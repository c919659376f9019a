# Helpers of rules/report.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def figures_of(corpus):
    """The report's figures of a corpus (grouping by document has no SVD; imported
    questions only the retrieval figures)."""
    names = corpus_figures(corpus in IMPORTED, config["corpora"][corpus]["grouping"])
    return [f"results/{corpus}/figures/{name}.png" for name in names]


def figure_inputs(wildcards):
    """The artifacts one figure is drawn from."""
    base = f"results/{wildcards.corpus}"
    return {
        "mrr_by_type": {"metrics": f"{base}/metrics.parquet"},
        "negrecall_vs_mrr": {"metrics": f"{base}/metrics.parquet"},
        "group_sizes": {"groups": groups_file(wildcards)},
        "svd_variance": {"variance": f"{base}/svd_variance.parquet"},
        "pass_rates": {
            "all": f"{base}/boolquestions_all.parquet",
            "simple": f"{base}/questions/simple.parquet",
            "disjunctive": f"{base}/questions/disjunctive.parquet",
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
    base = f"results/{wildcards.corpus}/llm_accounting"
    steps = []
    if not is_imported(wildcards):
        steps = ["simple", "disjunctive"]
        steps += [f"compose_{op}" for op in OPERATORS] + ["filter"]
    return {step: f"{base}/{step}.json" for step in [*steps, "decompose"]}


def report_inputs(corpus):
    """What `snakemake --report` shows of a corpus beyond Tables 1-3 (imported questions have
    no generation examples)."""
    base = f"results/{corpus}"
    examples = [] if corpus in IMPORTED else [f"{base}/report/examples.html"]
    return [
        *figures_of(corpus),
        *audit_outputs(corpus),
        f"{base}/report/rankings.html",
        f"{base}/tables/significance.html",
        f"{base}/tables/llm_accounting.html",
        *examples,
        f"{base}/report/config.html",
    ]
