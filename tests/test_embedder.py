"""Real-model tests for the ONNX embedder (no mocks).

The first run exports the bundled all-MiniLM-L6-v2 weights to ONNX (needs torch; ~10 s), later runs
reuse the cached file under $LOREGRAPH_CACHE_DIR / ~/.cache/loregraph.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from loregraph.models.embedder import (
    Embedder,
    EmbedderUnavailable,
    OnnxEmbedder,
    get_default_embedder,
    prepare_model,
)

SENTENCES = [
    "Alice moved to Berlin in 2021 and joined Umbrella Corp as CTO.",
    "Bob prefers green tea over coffee.",
    "The quarterly budget review was rescheduled to next Tuesday.",
    "The deployment failed because the database migration timed out.",
    "My sister's birthday is on March 3rd.",
    "where does Alice work",
    "who is the CEO of Umbrella",
    "Berlin",
]


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


@pytest.fixture(scope="module")
def emb(embedder) -> OnnxEmbedder:
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


def test_default_embedder_is_shared_and_named(emb):
    assert get_default_embedder() is emb
    assert isinstance(emb, Embedder)
    assert emb.name == "all-MiniLM-L6-v2"
    assert emb.dim == 384


def test_shape_dtype_and_normalization(emb):
    vecs = emb.embed(SENTENCES)
    assert vecs.shape == (len(SENTENCES), emb.dim)
    assert vecs.dtype == np.float32
    assert np.all(np.isfinite(vecs))
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    # distinct texts give distinct vectors
    sims = vecs @ vecs.T
    assert np.all(sims[~np.eye(len(SENTENCES), dtype=bool)] < 0.99)

    one = emb.embed_one("Bob prefers green tea over coffee.")
    assert one.shape == (emb.dim,)
    assert one.dtype == np.float32
    assert abs(float(np.linalg.norm(one)) - 1.0) < 1e-4


def test_empty_input(emb):
    out = emb.embed([])
    assert out.shape == (0, emb.dim)
    assert out.dtype == np.float32


def test_empty_string_is_embedded(emb):
    vec = emb.embed_one("")
    assert vec.shape == (emb.dim,)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4


def test_rejects_bare_string(emb):
    with pytest.raises(TypeError):
        emb.embed("not a list")  # type: ignore[arg-type]


def test_semantic_similarity(emb):
    query, close, far = emb.embed(
        [
            "Which city does Alice live in?",
            "Alice lives in Berlin, Germany.",
            "The stock market fell sharply after the interest rate announcement.",
        ]
    )
    assert float(query @ close) > float(query @ far) + 0.2
    cat, kitten, car = emb.embed(
        ["A cat sleeps on the sofa.", "A kitten is napping on the couch.", "A red car parked outside."]
    )
    assert float(cat @ kitten) > float(cat @ car)


def test_batch_matches_single_and_order_is_preserved(emb):
    emb.clear_cache()
    texts = [*SENTENCES, "x " * 300, "short"]
    batched = emb.embed(texts)
    emb.clear_cache()
    singles = np.stack([emb.embed_one(t) for t in texts])
    # int8 dynamic quantization makes results depend slightly on batch composition
    assert np.all(np.sum(batched * singles, axis=1) > 0.97)


def test_tokens_are_what_the_tokenizers_batch_encoding_gives(emb):
    """The runner encodes each text on its own thread and pads them itself: the model must see exactly the ids,
    mask and type ids of ``encode_batch`` (so embeddings do not move), for one text and for a padded batch."""
    runner = emb._get_runner()
    texts = [*SENTENCES, "", "word " * 600, "Émile's café — naïve 🎉 test"]
    for batch in ([texts[0]], [texts[-1]], [texts[-3]], texts, texts[::-1]):
        ids, mask, type_ids = runner.encode(batch)
        ref = runner.tokenizer.encode_batch(batch)
        assert ids.tolist() == [e.ids for e in ref]
        assert mask.tolist() == [e.attention_mask for e in ref]
        assert type_ids.tolist() == [e.type_ids for e in ref]
        assert ids.dtype == mask.dtype == type_ids.dtype == np.int64


def test_one_intra_op_thread_by_default_and_vectors_do_not_depend_on_threads(emb, monkeypatch):
    """One thread unless LOREGRAPH_ORT_THREADS says otherwise (a second one only slowed calls down on 2 cores),
    and the thread count never moves a vector (so changing it changes nothing stored)."""
    from loregraph.models.onnx_runtime import OnnxRunner

    monkeypatch.delenv("LOREGRAPH_ORT_THREADS", raising=False)
    runner = emb._get_runner()
    assert runner.session.get_session_options().intra_op_num_threads == 1
    monkeypatch.setenv("LOREGRAPH_ORT_THREADS", "2")
    assert emb.onnx_path is not None
    two = OnnxRunner(emb.onnx_path, emb.model_dir, emb.max_seq_length, emb.pooling)
    assert two.session.get_session_options().intra_op_num_threads == 2
    texts = [*SENTENCES, "x " * 300]
    np.testing.assert_array_equal(runner(texts), two(texts))
    for t in texts:
        np.testing.assert_array_equal(runner([t]), two([t]))


def test_duplicates_and_cache(emb):
    emb.clear_cache()
    texts = ["Carol is allergic to peanuts.", "Dave plays the violin.", "Carol is allergic to peanuts."]
    first = emb.embed(texts)
    np.testing.assert_array_equal(first[0], first[2])
    first[0] *= 0  # mutating a result must not corrupt the cache
    again = emb.embed_one("Carol is allergic to peanuts.")
    np.testing.assert_array_equal(again, first[2])
    assert abs(float(np.linalg.norm(again)) - 1.0) < 1e-4


def test_lru_cache_is_bounded():
    small = OnnxEmbedder(cache_size=3)
    small.embed([f"fact number {i}" for i in range(10)])
    assert len(small._cache) == 3
    assert list(small._cache) == [f"fact number {i}" for i in range(7, 10)]


def test_long_input_is_truncated(emb):
    long_text = " ".join(["memory graphs store facts about people and places"] * 200)  # >> 256 tokens
    vec = emb.embed_one(long_text)
    assert vec.shape == (emb.dim,)
    assert np.isfinite(vec).all()
    # Truncation at 256 tokens: anything after the cut-off cannot change the embedding.
    tail_changed = emb.embed_one(long_text + " completely different ending about volcanoes")
    np.testing.assert_allclose(vec, tail_changed, atol=1e-6)
    assert emb.max_seq_length == 256


def test_agrees_with_sentence_transformers(emb):
    st_mod = pytest.importorskip("sentence_transformers")
    model = st_mod.SentenceTransformer(str(emb.model_dir), device="cpu")
    texts = [*SENTENCES, "word " * 400]
    ref = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    ours = emb.embed(texts)
    cos = np.sum(ours * ref, axis=1)
    assert cos.min() >= 0.98, dict(zip(texts, cos.round(4).tolist(), strict=True))


def test_prepare_model_reuses_cached_export(emb):
    emb.load()
    assert emb.onnx_path is not None and emb.onnx_path.is_file()
    assert prepare_model() == emb.onnx_path
    meta = json.loads(emb.onnx_path.with_suffix(".json").read_text())
    assert meta["min_cosine_vs_reference"] >= 0.98
    assert emb.onnx_path.name.startswith("model.int8" if meta["variant"].startswith("int8") else "model.fp32")


def test_import_does_not_load_torch():
    proc = _run_python(
        """
        import sys
        import loregraph.models.embedder
        heavy = [m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules]
        print(heavy)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_embedding_in_fresh_process_does_not_load_torch(emb):
    emb.load()  # make sure the ONNX file is cached
    proc = _run_python(
        """
        import sys
        from loregraph.models.embedder import get_default_embedder
        vec = get_default_embedder().embed_one("where does Alice work")
        print(vec.shape[0], "torch" in sys.modules, "sentence_transformers" in sys.modules)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["384", "False", "False"]


def test_missing_onnx_without_torch_raises_clear_error(tmp_path):
    proc = _run_python(
        """
        import sys
        sys.modules["torch"] = None  # torch not installed
        from loregraph.models.embedder import EmbedderUnavailable, OnnxEmbedder
        try:
            OnnxEmbedder().embed(["hello"])
        except EmbedderUnavailable as exc:
            print("ERR", exc)
        else:
            print("NO ERROR")
        """,
        LOREGRAPH_CACHE_DIR=str(tmp_path / "empty-cache"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ERR"), proc.stdout
    assert "loregraph[export]" in proc.stdout
    assert "loregraph models prepare" in proc.stdout


def test_unknown_model_without_files_is_rejected(tmp_path):
    with pytest.raises(EmbedderUnavailable):
        OnnxEmbedder(model_name="someone/unknown-model")
    with pytest.raises(EmbedderUnavailable):
        OnnxEmbedder(model_dir=tmp_path)


def test_custom_model_dir_uses_its_config(emb):
    other = OnnxEmbedder(model_name="my-minilm", model_dir=emb.model_dir)
    assert other.name == "my-minilm"
    assert other.dim == 384
    assert other._runner is None  # construction is lazy
