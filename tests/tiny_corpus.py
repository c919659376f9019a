"""Five short passages of distinct topics, and the corpus file of them, for retrieval tests."""

import pyarrow as pa
import pyarrow.parquet as pq

PASSAGES = {
    "p1": "The cat sat on the warm mat in the kitchen.",
    "p2": "Dogs are loyal animals that love running in parks.",
    "p3": "The stock market fell sharply on Monday morning.",
    "p4": "Cats and dogs can live together peacefully.",
    "p5": "Volcanoes erupt when magma rises to the surface.",
}


def write_corpus(path, passages=PASSAGES):
    table = pa.table({"pid": list(passages), "text": list(passages.values())})
    pq.write_table(table, path)
    return path
