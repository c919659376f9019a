"""The artifact registry: where every artifact of the workflow lives, defined once.

Rules name their inputs and outputs by key (`artifact("corpus")` in rules/*.smk), input
functions and tests fill in wildcards (`artifact("run", corpus="wiki", model="bm25")`), and
docs/artifacts.md is generated from this table and the workflow's rules (which rule writes each
file, its script and the step function it calls: boolbench.artifact_reference).

Each entry: key -> path under `results/{corpus}/`, listed in pipeline order with what the file
holds; the files of one row of docs/artifacts.md share one description.
"""

from __future__ import annotations

import re

RESULTS = "results/{corpus}/"

# (description, {key: path under results/{corpus}/}); the description is Markdown.
_ROWS: list[tuple[str, dict[str, str]]] = [
    (
        "pdf corpora: `pid` (`<doc_id>#<position>`), `text`, `title`, `doc_id` (the file's path "
        "under the collection folder), `position` int64 (reading order), `page` int32 (where the "
        "passage starts). The report: files, pages, passages, files extracted, `skipped` (file, "
        "reason, detail) and `skipped_by_reason`, `dropped` (boxes removed, by kind), files read "
        "this run (`extracted_now`, the rest came from the cache), seconds, pages per second.",
        {"pdf_passages": "pdf/passages.parquet", "pdf_report": "pdf/extraction_report.json"},
    ),
    (
        "with `reference:`: per file `doc_id`, token `precision`, `recall`, `f1`, "
        "`extracted_tokens`, `reference_tokens`; the .json holds the means and the files without "
        "a reference.",
        {
            "extraction_quality": "pdf/extraction_quality.parquet",
            "extraction_quality_summary": "pdf/extraction_quality.json",
        },
    ),
    (
        "`pid` string (unique), `text` string, `title` string (nullable), `doc_id` string "
        "(nullable), `position` int64 (order within its doc, 0 without a doc). Footer metadata "
        "`boolbench`: rows read, passages, empty texts dropped.",
        {"corpus": "corpus.parquet"},
    ),
    (
        "`qid` string, `text` string: the corpus's own queries (empty if it has none). The "
        "qrels: `qid`, `pid` string, `relevance` int32; only judgments whose passage is in the "
        "corpus, and only queries with one left.",
        {
            "original_queries": "original_queries.parquet",
            "original_qrels": "original_qrels.parquet",
        },
    ),
    (
        "temporary: one contiguous slice of the corpus encoded by a model (`clustering-encoder`: "
        "the `encoder` section), removed after gathering.",
        {"embedding_shard": "models/{model}/shard-{shard}-of-{n_shards}.npy"},
    ),
    (
        "a model's passage vectors in the embedding format (below); `clustering-encoder`'s are "
        "the clustering's, and a model with the same encoding parameters reads them instead of "
        "writing its own.",
        {
            "embeddings": "models/{model}/embeddings.npy",
            "embedding_pids": "models/{model}/embeddings.pids.parquet",
        },
    ),
    (
        "the sample: `pid` string, `vector` fixed-size list<float32>[svd_components]; the "
        "variance: `component` int32, `explained_variance_ratio` float64, `cumulative` float64; "
        "the fitted projection, float32 `[svd_components, embedding dim]`.",
        {
            "svd": "svd.parquet",
            "svd_variance": "svd_variance.parquet",
            "svd_components": "svd_components.npy",
        },
    ),
    (
        "`pid` string, `cluster` int64, for the sampled passages; the report: passages, clusters, "
        "clusters with 2+ passages, largest, median size, size histogram, explained variance.",
        {"clusters": "clusters.parquet", "clustering_report": "clustering_report.json"},
    ),
    (
        "with `clustering.assign: all`: the same for every passage; the sample keeps its "
        "clusters, every other passage joins the nearest cluster centroid in SVD space "
        "(Euclidean; cosine for `metric: cosine`), computed a block of 65,536 embeddings at a "
        "time from the memory map.",
        {"corpus_clusters": "corpus_clusters.parquet"},
    ),
    (
        "same schema as `clusters.parquet`, for `grouping: document`, and its report.",
        {
            "document_groups": "document_groups.parquet",
            "document_groups_report": "document_groups_report.json",
        },
    ),
    (
        "one row per candidate: `group` int64, `cluster` int64, `slot` int32, `pid`, `title`, "
        "`text`, `construction` (the group's: kind, topic, page or story, from the corpus's "
        "genre and grouping), `copies` (list<string>: the corpus's other passages of the same "
        "text, which carry its labels); ordered by group, then slot.",
        {"candidates": "candidates.parquet"},
    ),
    (
        "temporary: one LLM job's rows and accounting (`llm.shards` jobs per stage), removed once "
        "gathered.",
        {
            "atomic_shard": "shards/{kind}/shard-{shard}-of-{n_shards}.parquet",
            "atomic_shard_accounting": "shards/{kind}/shard-{shard}-of-{n_shards}.json",
            "compose_shard": "shards/compose_{operator}/shard-{shard}-of-{n_shards}.parquet",
            "compose_shard_accounting": (
                "shards/compose_{operator}/shard-{shard}-of-{n_shards}.json"
            ),
            "answers_shard": "shards/filter/shard-{shard}-of-{n_shards}.parquet",
            "answerer_check_shard": "shards/answerer_check/shard-{shard}-of-{n_shards}.parquet",
            "pooled_shard": "shards/pooled/shard-{shard}-of-{n_shards}.parquet",
            "judge_shard_accounting": "shards/filter/shard-{shard}-of-{n_shards}.json",
            "decompose_shard": "shards/decompose/shard-{shard}-of-{n_shards}.parquet",
            "decompose_shard_accounting": "shards/decompose/shard-{shard}-of-{n_shards}.json",
        },
    ),
    (
        "`simple`: one row per member of a group's kind: `group`, `cluster`, `slot`, `pid`, `qid` "
        "(`simple-GGGGG-S`), `subject` (a member's subject, from the kinds job: its title, or a "
        "name the LLM gave), "
        '`predicate` (what follows "Which <kind>") and the question columns (below). '
        "`disjunctive`: one row per group: `group`, `cluster`, `qid` (`disj-GGGGG`), the question "
        'columns ("What are some <kind>?"), `kind`, `kind_singular`, `members` (the slots the '
        "judge read as of the kind; fewer than two: the row is dropped with a reason), `sorts` "
        '(aligned with `members`: each one\'s sort of the kind, "Hindu" of a festival, copied '
        'from its passage; "" where none holds), `places` (aligned with `members`: where its '
        'passage\'s first sentence puts it, "Vietnam" of a city; "" where none holds), `subjects` '
        '(aligned with `members`: each one\'s subject, its title or a name the LLM gave; "" '
        "where none was named), `construction` (`kind`; `story`, `topic` or `page` for groups "
        'that share a story, a web topic or a page: `kind` is the topic, the question "What is '
        'known about <topic>?", `members` the passages with an aspect of their own, `subjects` '
        "the aspects, and `simple` has each aspect's question about the topic).",
        {"atomic_questions": "questions/{kind}.parquet"},
    ),
    (
        "up to `generation.per_group` rows per group: `qid` (`and-GGGGG-K`, ...), `type`, "
        "`group`, `cluster`, the question columns, `operator`, `operand_qids` and "
        "`operand_texts` (list<string>: the Boolean expression), `positives`, `negatives` "
        "(list<string> of pids), `split` (train/test: every group of one kind in one, "
        "`split.train_fraction`); a group without a question of the type has one dropped row "
        "saying why.",
        {"composed_questions": "questions/{operator}.parquet"},
    ),
    (
        "every written (not dropped) AND/OR/NOT question with its labels and split: what the "
        "models search before the judge, so that it can pool their runs.",
        {"written_questions": "questions/written.parquet"},
    ),
    (
        "one row per (written question, labelled passage): `qid`, `type`, `pid`, `role` "
        "(positive/negative), `scope` (question/expression: what the judge read), `answer`, "
        "`answered` (bool; null if a call failed), `member` (read as of the group's kind; null "
        "when not read), `p_yes`, `prompt_hash`, `model`.",
        {"answers": "questions/answers.parquet"},
    ),
    (
        "one row per (simple question, passage): `qid`, `group`, `pid`, `relation` "
        "(own/sibling/other), `answer`, `answered`, `p_yes`, `prompt_hash`, `model`.",
        {"answerer_check": "questions/answerer_check.parquet"},
    ),
    (
        "one row per (kept question, pooled passage): `qid`, `type`, `pid`, `rank` (best rank "
        "over the pooled models), `relevant` (null if a call failed), `method` "
        "(membership/excluded/read/name_gate/story), `p_yes`, `prompt_hash`, `model`; the "
        "dataset's `pooled_positives` and `pooled_negatives` come from it.",
        {"pooled": "questions/pooled.parquet"},
    ),
    (
        "every composed question with the dataset columns plus `status`, `reason`, `attempts`, "
        "`passes_default`, `passes_strict`, `filter_reason`, `kept`, `reject_reason`, "
        "`construction` (the group's: kind, topic, page or story).",
        {"all_questions": "boolquestions_all.parquet"},
    ),
    (
        "**the dataset**: `qid`, `type`, `question`, `source` (llm/template), `operator`, "
        "`operand_qids`, `operand_texts`, `positives`, `negatives` (the group labels: the "
        "construction's positives and negatives), `pooled_positives`, `pooled_negatives` "
        "(list<string>: pooled passages the judge found relevant / not relevant; empty when "
        "nothing was pooled; a file without these columns reads as empty lists), `group`, "
        "`cluster`, `split` (train/test), `prompt_hash`, `model`. A passage is in at most one of "
        "a question's four lists (an import refuses one in two).",
        {"dataset": "boolquestions.parquet"},
    ),
    (
        "the paper's Table 1 per type and ALL (questions, avg_pos, avg_neg) with generated, llm, "
        "fallback, dropped, filtered_out and both filter pass rates (imported questions: train "
        "and test counts instead); the .html for the report.",
        {
            "table1_csv": "tables/table1.csv",
            "table1_md": "tables/table1.md",
            "table1_html": "tables/table1.html",
        },
    ),
    (
        "per step: counts by status, fallback and drop reasons, attempts; filter rejections by "
        "type; `answerer_check` (`accept_own`, `reject_sibling`, `reject_other` and their "
        "counts).",
        {"generation_report": "generation_report.json"},
    ),
    (
        "`corpus.jsonl`, `queries.jsonl` (`metadata`: type, split), `qrels/{test,train}.tsv` (the "
        "completed labels: positives and pooled positives 1, negatives and pooled negatives 0), "
        "`qrels/{test,train}_group.tsv` (the group labels: positives 1, negatives 0), "
        "`qrels/{test,train}_negatives.tsv` (the construction negatives, score 1) and "
        "`README.md`, the dataset card (below).",
        {
            "beir_corpus": "beir/corpus.jsonl",
            "beir_queries": "beir/queries.jsonl",
            "beir_qrels_test": "beir/qrels/test.tsv",
            "beir_qrels_train": "beir/qrels/train.tsv",
            "beir_qrels_test_group": "beir/qrels/test_group.tsv",
            "beir_qrels_train_group": "beir/qrels/train_group.tsv",
            "beir_qrels_test_negatives": "beir/qrels/test_negatives.tsv",
            "beir_qrels_train_negatives": "beir/qrels/train_negatives.tsv",
            "beir_card": "beir/README.md",
        },
    ),
    (
        "the dataset in the released BoolQuestions layout (JSON lines as `datasets` writes "
        "them): `qid`, `question`, `question_type` (and/or/not), `positive_ctxs`, "
        "`negative_ctxs` (the group labels), `pooled_positive_ctxs`, `pooled_negative_ctxs` "
        "(the pooled judgements; lists of `{passage_id}`), `split`; the corpus as `docid`, `doc` "
        "(and `title` when the corpus has titles); the dataset card (below).",
        {
            "released_eval": "released/eval.jsonl",
            "released_corpus": "released/corpus.jsonl",
            "released_card": "released/README.md",
        },
    ),
    (
        "the label audit's blind sheet: one row per (sampled question, passage): its labelled "
        "passages and every model's top `audit.depth`, shuffled within the question; `qid`, "
        "`type`, `question`, `pid`, `passage`, empty `answers`, `meets_part`, `natural`, "
        "`operator_expressed`. The key, row for row: `qid`, `pid`, `label` "
        "(positive/negative/pooled_positive/pooled_negative/unjudged), `source` "
        "(group/pooled/empty), `ranked_by` (`model@rank`, space-separated).",
        {
            "audit_sheet": "audit/sheet.csv",
            "audit_key": "audit/key.csv",
            "audit_sheet_html": "audit/sheet.html",
        },
    ),
    (
        "with `audit.judge`: the sheet filled by the LLM, and its accounting.",
        {
            "audit_llm_judgements": "audit/llm_judgements.csv",
            "audit_accounting": "llm_accounting/audit.json",
        },
    ),
    (
        "with `audit.judge` / `audit.judgements`: per type and ALL the group labels' confusion "
        "shares (`pos_pos`, `pos_neg`, `neg_pos`, `neg_neg`) and each figure with its count "
        "`n_<figure>`: `group_labels_right`, `positive_labels_right`, `negative_labels_right`, "
        "`pooled_labels_right`, `pooled_positives_right`, `pooled_negatives_right`, `natural`, "
        "`operator_expressed`, `and_negatives_one_condition`, `not_negatives_excluded_member`, "
        "`unjudged_answering`, `outside_group_answering`, `questions_worth_keeping`; per model and "
        "type, `n_top` and the shares of its top passages outside the group labels and outside "
        "every label that answer.",
        {
            "audit_confusion": "audit/confusion.csv",
            "audit_by_model": "audit/by_model.csv",
            "audit_confusion_html": "audit/confusion.html",
        },
    ),
    (
        "the dense model's FAISS index (flat, HNSW or IVF-PQ), rows in the id map's order.",
        {"faiss_index": "models/{model}/index.faiss"},
    ),
    (
        "a bm25s index folder plus `pids.parquet`.",
        {"bm25_index": "models/{model}/bm25"},
    ),
    (
        "the runs of every written question (generated corpora; the judge pools them, the scores "
        "keep the kept questions) or of the imported questions, and of the original queries: "
        "`qid` string, `pid` string, `rank` int32 (1-based), `score` float64; at most "
        "`evaluation.depth` rows per query, ordered by the tie rule below. Footer metadata "
        "`boolbench_provenance`: the model's provenance (below).",
        {"run": "runs/{model}.parquet", "original_run": "runs/original/{model}.parquet"},
    ),
    (
        "document-scoped runs, same columns: for each query whose relevant passages lie in one "
        'document (see docs/evaluation.md, "Metrics"), every passage of that document ranked '
        "(empty when no query is).",
        {
            "document_run": "runs/document/{model}.parquet",
            "original_document_run": "runs/document/original/{model}.parquet",
        },
    ),
    (
        "(footer: the run's provenance) one row per kept question (or original query) and label "
        "set: `model`, `query_set` (boolquestions/original), `labels` (group/completed; an "
        "original query's two rows are equal), `qid`, `type`, `split`, `MRR@10`, `NegRecall@10` "
        "(construction negatives, the same under both; NaN without negatives), `Recall@100`, "
        "`nDCG@10`, `Judged@10` (NaN when nothing was retrieved), then `Recall@k%` per "
        "`evaluation.document_recall.percents` (NaN for queries not scoped to one document).",
        {"scores": "scores/{model}.parquet"},
    ),
    (
        "(footer: `{model: provenance}`) `model`, `query_set`, `labels` (group/completed), "
        "`split` (all/train/test), `type` (ALL/AND/OR/NOT), `metric`, `value`, `n_queries` (the "
        "queries the mean is over).",
        {"metrics": "metrics.parquet"},
    ),
    (
        "the paper's Table 2 in percent, one row per model: MRR@10 original, MRR@10 under the "
        "group and under the completed labels side by side, NegRecall@10, Judged@10 under both; "
        "best per column in bold (Judged@10 is not ranked) and a dagger where a model's "
        "completed-label MRR@10 beats the row above significantly (md, tex, html); notes on the "
        "label sets and their counts.",
        {
            "table2_csv": "tables/table2.csv",
            "table2_md": "tables/table2.md",
            "table2_tex": "tables/table2.tex",
            "table2_html": "tables/table2.html",
        },
    ),
    (
        "per model: model id or path, revision (and the commit it resolved to in the hub cache), "
        "query encoder, prefixes and prompt names, passage template, library versions.",
        {"provenance_md": "tables/provenance.md", "provenance_html": "tables/provenance.html"},
    ),
    (
        "Recall@k% in percent per model, for BoolQuestions ALL/AND/OR/NOT "
        "(`evaluation.table_split`) and the original queries, with the number of scoped "
        "queries; one line instead when no query is scoped.",
        {
            "document_recall_csv": "tables/document_recall.csv",
            "document_recall_md": "tables/document_recall.md",
            "document_recall_html": "tables/document_recall.html",
        },
    ),
    (
        "the same runs as TREC files (`qid Q0 pid rank score model`), ties made impossible (see "
        'docs/evaluation.md, "Ties"); the questions\' file holds only the questions of '
        "`boolquestions.parquet` (the Parquet run may hold every written question).",
        {"trec_run": "runs/{model}.trec", "original_trec_run": "runs/original/{model}.trec"},
    ),
    (
        "TREC qrels (`qid 0 pid relevance`): the completed labels (positives and pooled "
        "positives 1, negatives and pooled negatives 0: judged not relevant), the group labels "
        "(the paper's protocol: positives 1, negatives 0), the construction negatives "
        "(relevance 1: score NegRecall@10 as recall@10 against these), the original qrels.",
        {
            "trec_qrels": "trec/qrels.txt",
            "trec_qrels_group": "trec/qrels_group.txt",
            "trec_qrels_negatives": "trec/qrels_negatives.txt",
            "trec_qrels_original": "trec/qrels_original.txt",
        },
    ),
    (
        "per question: `qid`, `type`, `status` (ok/failed), `operator`, `questions` "
        "(list<string>; NOT: asked first, excluded after), `attempts`, `reason`, `prompt_hash`, "
        "`model`.",
        {"decomposed": "baselines/decomposed.parquet"},
    ),
    (
        "runs (the run format) of the merged lists.",
        {"baseline_run": "baselines/runs/{method}.parquet"},
    ),
    (
        "a saved SentenceTransformer, then evaluated like any model.",
        {"contrastive_model": "models/contrastive-{subset}/model"},
    ),
    (
        "the paper's Table 3 in percent, under the completed labels: MRR@10, NegRecall@10, "
        "Judged@10 per type.",
        {
            "table3_csv": "tables/table3.csv",
            "table3_md": "tables/table3.md",
            "table3_tex": "tables/table3.tex",
            "table3_html": "tables/table3.html",
        },
    ),
    (
        "per Table 2 MRR@10 column (`query_set`, `labels`: completed, `type`, `split`, `metric`) "
        "and model pair (`model_a`, `model_b`): `n_queries`, `mean_a`, `mean_b`, `p_value`, "
        "`p_holm`.",
        {"significance": "significance.parquet", "significance_html": "tables/significance.html"},
    ),
    (
        "`mrr_by_type`, `negrecall_vs_mrr` (completed labels), `group_sizes`, `svd_variance` (not "
        "for `grouping: document`), `pass_rates`.",
        {"figure_png": "figures/{figure}.png", "figure_svg": "figures/{figure}.svg"},
    ),
    (
        "per LLM stage: requests, cache hits, API calls, retries, failures, prompt/completion "
        "tokens (new and from the cache), estimated cost, wall time, errors by kind: the sums "
        "over the stage's shards.",
        {
            "atomic_accounting": "llm_accounting/{kind}.json",
            "compose_accounting": "llm_accounting/compose_{operator}.json",
            "judge_accounting": "llm_accounting/filter.json",
            "decompose_accounting": "llm_accounting/decompose.json",
        },
    ),
    (
        "one row per LLM job (the columns of `llm_accounting/{step}.json` but `errors`) and a "
        "`total` row.",
        {
            "llm_accounting_csv": "tables/llm_accounting.csv",
            "llm_accounting_html": "tables/llm_accounting.html",
        },
    ),
    (
        "kept and rejected questions per type with shortened passages and the answerer's answers.",
        {"examples": "report/examples.html"},
    ),
    (
        "the validated config with defaults filled in, this corpus only.",
        {"config_yaml": "report/config.yaml", "config_html": "report/config.html"},
    ),
    (
        "per kept question, each model's top 10 with the group labels (`+` positive, `-` "
        "negative) and the pooled judgements (`p+`, `p-`, in italics) marked apart; NOT "
        "inversions (the excluded passage above every relevant one) first.",
        {"rankings": "report/rankings.html"},
    ),
]

# key -> path pattern (with its wildcards) from the repository root.
ARTIFACTS: dict[str, str] = {
    key: RESULTS + path for _, paths in _ROWS for key, path in paths.items()
}
# The rows of docs/artifacts.md: (description, keys).
DOC_ROWS: list[tuple[str, tuple[str, ...]]] = [(text, tuple(paths)) for text, paths in _ROWS]


def artifact(key: str, **values) -> str:
    """The path of artifact `key`, with the wildcards given in `values` filled in and the others
    left as {wildcard} patterns (Snakemake fills them from a job's wildcards)."""
    try:
        pattern = ARTIFACTS[key]
    except KeyError:
        raise KeyError(f"{key!r} is not an artifact of boolbench.paths") from None
    return re.sub(
        r"\{(\w+)\}",
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0),
        pattern,
    )
