"""Constants every stage shares (one place for each)."""

# The Boolean question types (and operators), in the order tables and figures show them.
TYPES = ("AND", "OR", "NOT")
