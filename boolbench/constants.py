"""Constants every stage shares (one place for each)."""

# The Boolean question types (and operators), in the order tables and figures show them.
TYPES = ("AND", "OR", "NOT")
# The same, as config keys, prompt names and file names spell them.
OPERATORS = tuple(t.lower() for t in TYPES)
