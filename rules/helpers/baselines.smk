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
    corpus, retriever = wildcards.corpus, retriever_of(wildcards.corpus)
    inputs = {
        "questions": artifact("dataset", corpus=corpus),
        "base_run": artifact("run", corpus=corpus, model=retriever),
    }
    if wildcards.method == "decomposed":
        inputs["decomposed"] = artifact("decomposed", corpus=corpus)
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
    corpus = wildcards.corpus
    inputs = {
        "base_scores": artifact("scores", corpus=corpus, model=retriever_of(corpus)),
        "decomposed": artifact("baseline_run", corpus=corpus, method="decomposed"),
        "expressions": artifact("decomposed", corpus=corpus),
        "questions": artifact("dataset", corpus=corpus),
        "contrastive": [
            artifact("scores", corpus=corpus, model=m)
            for m in trained_models_of(corpus)
        ],
    }
    if has_oracle(corpus):
        inputs["oracle"] = artifact("baseline_run", corpus=corpus, method="oracle")
    return inputs


def training_inputs(wildcards):
    """A contrastive model's training data: the simple questions too, where there are some;
    query-side training also reads the retriever's passage vectors."""
    corpus = wildcards.corpus
    inputs = {
        "questions": artifact("dataset", corpus=corpus),
        "corpus": artifact("corpus", corpus=corpus),
    }
    if not is_imported(wildcards):
        inputs["simple"] = artifact("atomic_questions", corpus=corpus, kind="simple")
    if QUERY_SIDE_ONLY:
        inputs |= model_embeddings(as_retriever(wildcards))
    return inputs
