# Helpers of rules/baselines.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def baseline_retriever_params(wildcards):
    """The baselines' retriever entry (loading keys at their defaults left out), with the
    corpus's passage template."""
    entry = config["models"][retriever_of(wildcards.corpus)]
    return {
        k: entry[k] for k in non_default_keys(entry, entry)
    } | passage_template_param(wildcards)


def baseline_run_inputs(wildcards):
    """A Boolean-operation run needs the retriever's index, run and the expressions."""
    retriever = retriever_of(wildcards.corpus)
    base = f"results/{wildcards.corpus}"
    inputs = {
        "questions": f"{base}/boolquestions.parquet",
        "base_run": f"{base}/runs/{retriever}.parquet",
    }
    if wildcards.method == "decomposed":
        inputs["decomposed"] = f"{base}/baselines/decomposed.parquet"
    return inputs | retriever_index(as_retriever(wildcards))


def has_oracle(corpus):
    """The oracle baseline needs the Boolean expressions recorded at generation."""
    return corpus not in IMPORTED or QUESTION_FACTS[corpus].has_expressions


def has_train_split(corpus):
    """Contrastive training needs a train split (generated questions always have one)."""
    return corpus not in IMPORTED or QUESTION_FACTS[corpus].has_train


def trained_models_of(corpus):
    """The contrastive models of a corpus: none when its questions have no train split."""
    if not has_train_split(corpus):
        return []
    return [f"contrastive-{subset}" for subset in CORPUS_BASELINES[corpus].train_on]


def not_computed(wildcards):
    """Table 3 rows that the corpus's questions or models cannot give, and why."""
    corpus = wildcards.corpus
    return CORPUS_BASELINES[corpus].not_computed(
        has_oracle(corpus), has_train_split(corpus)
    )


def table3_inputs(wildcards):
    base = f"results/{wildcards.corpus}"
    inputs = {
        "base_scores": f"{base}/scores/{retriever_of(wildcards.corpus)}.parquet",
        "decomposed": f"{base}/baselines/runs/decomposed.parquet",
        "expressions": f"{base}/baselines/decomposed.parquet",
        "questions": f"{base}/boolquestions.parquet",
        "contrastive": [
            f"{base}/scores/{m}.parquet" for m in trained_models_of(wildcards.corpus)
        ],
    }
    if has_oracle(wildcards.corpus):
        inputs["oracle"] = f"{base}/baselines/runs/oracle.parquet"
    return inputs


def training_inputs(wildcards):
    """A contrastive model's training data: the simple questions too, where there are some;
    query-side training also reads the retriever's passage vectors."""
    base = f"results/{wildcards.corpus}"
    inputs = {
        "questions": f"{base}/boolquestions.parquet",
        "corpus": f"{base}/corpus.parquet",
    }
    if not is_imported(wildcards):
        inputs["simple"] = f"{base}/questions/simple.parquet"
    if QUERY_SIDE_ONLY:
        inputs |= model_embeddings(as_retriever(wildcards))
    return inputs
