"""End-to-end runs of the real Snakefile on tiny corpora, with the real embedded encoder, up to
the candidate groups (the LLM stages have their own tests)."""

import json
import random
import shutil

import numpy as np
import pandas as pd
import pytest

from boolbench.constants import CLUSTERING_ENCODER
from boolbench.paths import artifact
from tests.conftest import tiny_config

pytestmark = pytest.mark.workflow  # runs the real Snakefile

FULL_CHAIN = {
    "ingest": 1,
    "encode_shard": 2,
    "gather_embeddings": 1,
    "reduce": 1,
    "cluster": 1,
    "sample_candidates": 1,
}


def candidates_of(corpus: str) -> str:
    return f"results/{corpus}/candidates.parquet"


TINY = candidates_of("tiny")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished run of the tiny config, shared by the rerun checks."""
    from tests.conftest import Workflow

    flow = Workflow(tmp_path_factory.mktemp("run"))
    flow.write_config(tiny_config())
    assert flow.planned_jobs(TINY) == FULL_CHAIN
    flow.run(TINY)
    return flow


def test_run_produces_every_artifact(finished):
    base = "results/tiny/"
    corpus = pd.read_parquet(finished.path(base + "corpus.parquet"))
    assert len(corpus) == 60 and corpus["pid"].is_unique
    encoder = base + "models/clustering-encoder/"
    vectors = np.load(finished.path(encoder + "embeddings.npy"))
    assert vectors.shape == (60, 384)
    pids = pd.read_parquet(finished.path(encoder + "embeddings.pids.parquet"))["pid"]
    assert pids.tolist() == corpus["pid"].tolist()
    clusters = pd.read_parquet(finished.path(base + "clusters.parquet"))
    assert len(clusters) == 40 and clusters["cluster"].nunique() == 8
    candidates = pd.read_parquet(finished.path(base + "candidates.parquet"))
    assert candidates["group"].nunique() == 4
    assert set(candidates.groupby("group").size()) <= {2, 3}
    assert set(candidates["pid"]) <= set(clusters["pid"])
    texts = dict(zip(corpus["pid"], corpus["text"], strict=True))
    assert (candidates["text"] == candidates["pid"].map(texts)).all()
    report = json.loads(finished.path(base + "clustering_report.json").read_text())
    assert report["clusters"] == 8 and 0 < report["explained_variance"] <= 1
    queries = pd.read_parquet(finished.path(base + "original_queries.parquet"))
    assert 0 < len(queries) <= 60
    # Shards are temporary: gathered, then removed.
    assert not list(finished.path(encoder).glob("shard-*.npy"))
    log = finished.path("logs/tiny/models/clustering-encoder/encode_shard-0-of-2.log")
    assert log.read_text().count("shard 0/2")


def test_finished_run_reruns_nothing(finished):
    assert finished.planned_jobs(TINY) == {}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # An SVD parameter: SVD and what follows, not ingestion or encoding.
        (
            {"clustering": {"svd_components": 6}},
            {"reduce": 1, "cluster": 1, "sample_candidates": 1},
        ),
        # The encoder: encoding and what follows.
        (
            {"encoder": {"max_seq_length": 96}},
            {k: v for k, v in FULL_CHAIN.items() if k != "ingest"},
        ),
        # A clustering parameter: clustering and candidates.
        ({"clustering": {"n_clusters": 7}}, {"cluster": 1, "sample_candidates": 1}),
        # More groups: only the candidates.
        ({"candidates": {"n_groups": 5}}, {"sample_candidates": 1}),
        # Grouping the whole corpus: the assignment to centroids, then the candidates.
        ({"clustering": {"assign": "all"}}, {"assign_clusters": 1, "sample_candidates": 1}),
        # The corpus: everything.
        ({"corpora": {"tiny": {"source": "vital_articles", "limit": 61}}}, FULL_CHAIN),
    ],
)
def test_a_change_reruns_exactly_what_depends_on_it(finished, change, expected):
    try:
        finished.write_config(tiny_config(**change))
        assert finished.planned_jobs(TINY) == expected
    finally:
        finished.write_config(tiny_config())


def test_growing_n_groups_keeps_earlier_groups(finished, tmp_path):
    from tests.conftest import Workflow

    before = pd.read_parquet(finished.path(artifact("candidates", corpus="tiny")))
    # A copy of the finished run (times kept), so the shared one stays as it was.
    flow = Workflow(tmp_path / "grown")
    shutil.copytree(finished.workdir, flow.workdir)
    flow.write_config(tiny_config(candidates={"n_groups": 6}))
    assert flow.planned_jobs(TINY) == {"sample_candidates": 1}
    flow.run(TINY)
    after = pd.read_parquet(flow.path(artifact("candidates", corpus="tiny")))
    assert after["group"].nunique() == 6
    assert after[after["group"] < 4].reset_index(drop=True).equals(before)


def test_the_closest_draw_reads_the_clustering_vectors(finished, tmp_path):
    from boolbench.grouping.candidates import closest
    from boolbench.retrieval.embeddings import load_embeddings
    from tests.conftest import Workflow

    flow = Workflow(tmp_path / "closest")
    shutil.copytree(finished.workdir, flow.workdir)
    flow.write_config(tiny_config(candidates={"draw": "closest", "sizes": [2]}))
    assert flow.planned_jobs(TINY) == {"sample_candidates": 1}  # the vectors are there
    flow.run(TINY)
    drawn = pd.read_parquet(flow.path(artifact("candidates", corpus="tiny")))
    clusters = pd.read_parquet(flow.path(artifact("clusters", corpus="tiny")))
    pids, vectors = load_embeddings(flow.path(artifact("embeddings", corpus="tiny",
                                                       model=CLUSTERING_ENCODER)))  # fmt: skip
    row = {pid: i for i, pid in enumerate(pids)}
    for cluster, group in drawn.groupby("cluster"):
        members = sorted(clusters.loc[clusters["cluster"] == cluster, "pid"])
        best = closest(np.asarray(vectors[[row[p] for p in members]]), 2)
        assert sorted(group["pid"]) == [members[i] for i in best]


def test_a_truncated_artifact_is_named_with_its_rule_and_the_command_that_regenerates_it(
    finished, tmp_path
):
    from tests.conftest import Workflow

    flow = Workflow(tmp_path / "corrupt")
    shutil.copytree(finished.workdir, flow.workdir)
    before = pd.read_parquet(flow.path(TINY))
    clusters = flow.path(artifact("clusters", corpus="tiny"))
    clusters.write_bytes(clusters.read_bytes()[:-100])  # e.g. a full disk
    result = flow.run(TINY, check=False)
    assert result.returncode != 0
    expected = (
        "boolbench: rule sample_candidates failed: results/tiny/clusters.parquet: not a "
        "readable Parquet file (Parquet magic bytes not found in footer): the file is corrupt "
        "or truncated (made by rule cluster); regenerate it by running your snakemake command "
        "again with --forcerun results/tiny/clusters.parquet"
    )
    assert expected in result.stderr
    assert flow.path("logs/tiny/sample_candidates.log").read_text() == expected + "\n"
    # The command it names regenerates the file, and the same candidates follow.
    flow.run(TINY, "--forcerun", artifact("clusters", corpus="tiny"))
    pd.testing.assert_frame_equal(pd.read_parquet(flow.path(TINY)), before)


def test_a_refused_llm_endpoint_fails_the_job_fast_with_one_line(finished, tmp_path):
    from types import SimpleNamespace

    from boolbench.llm.server import free_port
    from tests.conftest import Workflow
    from tests.scripted_llm import scripted_config

    flow = Workflow(tmp_path / "refused")
    shutil.copytree(finished.workdir, flow.workdir)
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there (a wrong port)
    flow.write_config(scripted_config(SimpleNamespace(base_url=url)))
    result = flow.run("results/tiny/questions/simple.parquet", check=False)
    assert result.returncode != 0
    expected = (
        f"boolbench: rule atomic_questions failed: cannot reach the LLM endpoint at {url}: "
        "connection refused (3 attempts in a row over "
    )
    assert expected in result.stderr
    # the first LLM job: each group's kind
    log = flow.path("logs/tiny/disjunctive_questions/shard-0-of-1.log").read_text()
    assert log.splitlines()[-1].startswith(expected)
    assert "Traceback" not in log


def test_bad_input_fails_with_one_clear_line(workflow):
    corpus = workflow.path("corpus.jsonl")
    corpus.write_text(
        '{"pid": "a", "text": "x"}\n{"pid": "b", "text": "y"}\n{"pid": "a", "text": "z"}\n'
    )
    workflow.write_config(tiny_config(corpora={"bad": {"source": "jsonl", "path": str(corpus)}}))
    result = workflow.run(candidates_of("bad"), check=False)
    assert result.returncode != 0
    expected = f"boolbench: rule ingest failed: {corpus}, line 3: duplicate passage id 'a'"
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    log = workflow.path("logs/bad/ingest.log").read_text()
    assert expected in log and "Traceback" not in log
    assert not workflow.path(artifact("corpus", corpus="bad")).exists()


def test_missing_corpus_file_is_named_before_anything_runs(workflow):
    missing = workflow.path("nowhere/collection.tsv")
    workflow.write_config(tiny_config(corpora={"m": {"source": "msmarco", "path": str(missing)}}))
    result = workflow.run(check=False)
    assert result.returncode != 0
    assert "Missing input files for rule ingest" in result.stderr
    assert str(missing) in result.stderr


def test_invalid_config_is_one_message(workflow):
    workflow.write_config(tiny_config(clustering={"linkage": "median"}))
    result = workflow.run("--dry-run", check=False)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "config.yaml: clustering.linkage: 'median' is not one of" in output
    assert output.count("is not one of") == 1


def test_sample_larger_than_a_known_corpus_size_fails_before_anything_runs(workflow):
    # vital_articles with a limit: at most `limit` passages.
    workflow.write_config(tiny_config(clustering={"sample_size": 100, "n_clusters": 8}))
    result = workflow.run("--dry-run", TINY, check=False)
    assert result.returncode != 0
    config = workflow.path("config.yaml")
    assert (
        f"{config}: corpora.tiny.clustering.sample_size: 100 is more than the corpus's at "
        "most 60 passages (limit: 60); lower it, or set it to null to cluster every passage"
    ) in result.stdout + result.stderr
    # A Parquet corpus: its row count, from the file's footer.
    table = workflow.path("passages.parquet")
    pd.DataFrame({"pid": ["a", "b", "c"], "text": ["x", "y", "z"]}).to_parquet(table)
    corpora = {"t": {"source": "parquet", "path": str(table)}}
    workflow.write_config(
        tiny_config(corpora=corpora, clustering={"sample_size": None, "n_clusters": 8})
    )
    result = workflow.run("--dry-run", check=False)
    assert (
        f"{config}: corpora.t.clustering.n_clusters: 8 clusters cannot be formed from the "
        f"corpus's at most 3 passages (the rows of {table})"
    ) in result.stdout + result.stderr
    assert not workflow.path("results").exists()


def test_document_grouping_needs_no_encoding(workflow):
    lines = ["id\ttext\ttitle"]
    for page in range(4):
        for i in range(5):
            lines.append(
                f"{page * 5 + i}\tPassage {i} of page {page} about topic {page}.\tPage{page}"
            )
    path = workflow.path("psgs_w100.tsv")
    path.write_text("\n".join(lines) + "\n")
    config = tiny_config(
        corpora={"nq": {"source": "dpr", "path": str(path), "grouping": "document"}},
        candidates={"n_groups": 6},
    )
    workflow.write_config(config)
    target = candidates_of("nq")
    assert workflow.planned_jobs(target) == {
        "ingest": 1,
        "group_by_document": 1,
        "sample_candidates": 1,
    }
    workflow.run(target)
    candidates = pd.read_parquet(workflow.path(artifact("candidates", corpus="nq")))
    corpus = pd.read_parquet(workflow.path(artifact("corpus", corpus="nq")))
    doc_of = dict(zip(corpus["pid"], corpus["doc_id"], strict=True))
    position = dict(zip(corpus["pid"], corpus["position"], strict=True))
    for _, group in candidates.groupby("group"):
        assert group["pid"].map(doc_of).nunique() == 1
        spread = group["pid"].map(position)
        assert spread.max() - spread.min() <= 2  # within one window of 3


def test_a_document_grouped_corpus_asks_about_each_pages_story(workflow):
    """grouping: document on the real workflow, to the dataset: each page's paragraphs are a
    story (stories.py); its AND, OR and NOT questions ask about the story and its paragraphs'
    aspects, and the judge reads pooled passages of another story as no answer."""
    from boolbench.llm.fake_server import FakeOpenAIServer
    from tests.scripted_llm import respond, scripted_config

    lines = ["id\ttext\ttitle"]
    aspects = [["Harbour", "Ferries", "Schools", "Mayors", "Rescue"],
               ["Trains", "Buses", "Shops", "Unions", "Police"]]  # fmt: skip
    for page, topic in enumerate(["storm", "strike"]):
        for i, word in enumerate(aspects[page]):
            text = f"{word}: {word.lower()} suffered in the Norland {topic}."
            lines.append(f"{page * 5 + i}\t{text}\tPage{page}")
    path = workflow.path("psgs_w100.tsv")
    path.write_text("\n".join(lines) + "\n")
    with FakeOpenAIServer(responder=respond) as server:
        corpora = {"nq": {"source": "dpr", "path": str(path), "grouping": "document",
                          "genre": "news"}}  # fmt: skip
        config = scripted_config(server, corpora=corpora, document_grouping={"window": 5},
                                 candidates={"n_groups": 2, "sizes": [5]})  # fmt: skip
        workflow.write_config(config)
        workflow.run(artifact("dataset", corpus="nq"))
    kinds = pd.read_parquet(workflow.path(artifact("atomic_questions", corpus="nq",
                                                   kind="disjunctive")))  # fmt: skip
    assert sorted(kinds["kind"]) == ["the storm", "the strike"]
    assert (kinds["construction"] == "story").all() and kinds["members"].map(len).eq(5).all()
    kept = pd.read_parquet(workflow.path(artifact("dataset", corpus="nq")))
    assert set(kept["type"]) == {"AND", "OR", "NOT"}
    corpus = pd.read_parquet(workflow.path(artifact("corpus", corpus="nq")))
    page = dict(zip(corpus["pid"], corpus["doc_id"], strict=True))
    for row in kept.itertuples():
        own = {page[p] for p in [*row.positives, *row.negatives]}
        assert len(own) == 1 and ("storm" if own == {"Page0"} else "strike") in row.question
        # the other page's passages, pooled, answer no question of this one
        assert not {page[p] for p in row.pooled_positives} - own
    nots = kept[kept["type"] == "NOT"]
    assert (nots["negatives"].map(len) == 1).all() and (nots["positives"].map(len) == 4).all()


def test_a_corpus_of_pages_asks_about_each_pages_subject(workflow):
    """A DPR corpus is of pages (its genre, from the source): each window's questions ask
    about its page's subject, the title, and its passages' parts, construction page, a column
    of the questions and a row of Table 1."""
    from boolbench.llm.fake_server import FakeOpenAIServer
    from tests.scripted_llm import respond, scripted_config

    lines = ["id\ttext\ttitle"]
    parts = [["Harbour", "Towers", "Gardens"], ["Trains", "Tracks", "Stations"]]
    for page, title in enumerate(["Norland Castle", "Norland Railway"]):
        for i, word in enumerate(parts[page]):
            text = f"{word} of {title} are described here: {word.lower()} and more."
            lines.append(f"{page * 3 + i}\t{text}\t{title}")
    path = workflow.path("psgs_w100.tsv")
    path.write_text("\n".join(lines) + "\n")
    with FakeOpenAIServer(responder=respond) as server:
        corpora = {"nq": {"source": "dpr", "path": str(path), "grouping": "document"}}
        config = scripted_config(server, corpora=corpora, document_grouping={"window": 3},
                                 candidates={"n_groups": 2, "sizes": [3]})  # fmt: skip
        workflow.write_config(config)
        workflow.run(artifact("table1_md", corpus="nq"))
    kinds = pd.read_parquet(workflow.path(artifact("atomic_questions", corpus="nq",
                                                   kind="disjunctive")))  # fmt: skip
    assert sorted(kinds["kind"]) == ["Norland Castle", "Norland Railway"]
    assert (kinds["construction"] == "page").all()
    every = pd.read_parquet(workflow.path(artifact("all_questions", corpus="nq")))
    assert (every["construction"] == "page").all()
    kept = every[every["kept"]]
    assert set(kept["type"]) == {"AND", "OR", "NOT"}
    assert kept["question"].str.contains("Norland Castle|Norland Railway").all()
    table1 = workflow.path(artifact("table1_md", corpus="nq")).read_text()
    assert "ALL page" in table1


def random_text(rng, words):
    return " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=7)) for _ in range(words))


def test_identical_rewrite_of_a_large_corpus_does_not_cascade(workflow):
    # corpus.parquet above Snakemake's default 1 MB checksum limit: only the profile's
    # max-checksum-file-size lets Snakemake see that a rewritten file did not change.
    rng = random.Random(0)
    path = workflow.path("big.jsonl")
    with path.open("w") as handle:
        for i in range(60):
            handle.write(json.dumps({"pid": str(i), "text": random_text(rng, 3000)}) + "\n")
    config = tiny_config(corpora={"big": {"source": "jsonl", "path": str(path)}})
    workflow.write_config(config)
    target = "results/big/models/clustering-encoder/embeddings.npy"  # the step after ingestion
    workflow.run(target)
    assert workflow.path(artifact("corpus", corpus="big")).stat().st_size > 1_000_000

    # Rerun ingestion alone (a code or option change that leaves the corpus as it was).
    workflow.run(target, "--forcerun", "ingest", "--until", "ingest")
    assert workflow.planned_jobs(target) == {}
    # Control: with Snakemake's default limit the same state would re-encode everything.
    result = workflow.run(target, "--dry-run", "--max-checksum-file-size", "1MB")
    assert "encode_shard" in result.stdout
