"""Constants every stage shares (one place for each)."""

# The Boolean question types (and operators), in the order tables and figures show them.
TYPES = ("AND", "OR", "NOT")
# The same, as config keys, prompt names and file names spell them.
OPERATORS = tuple(t.lower() for t in TYPES)
# The clustering encoder (the `encoder` section) as a model of the registry: its vectors are
# results/{corpus}/models/<this>/embeddings.npy, made by the rules that encode any model.
CLUSTERING_ENCODER = "clustering-encoder"
