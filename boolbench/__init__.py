"""boolbench: regenerate the BoolQuestions benchmark and evaluate retrievers on it."""

__version__ = "0.1.0"
