"""The dense model on OpenVINO in bf16, where the CPU computes bf16 natively (AMX or AVX-512 BF16).

It converts the `.onnx` file `ctxsieve prepare` exports to IR with fp16 weights (`ensure_ir`: no second
export), compiles it once with `INFERENCE_PRECISION_HINT` bf16 and keeps the compiled blob in OpenVINO's model
cache (keyed by the model's content, the OpenVINO version and the device's properties, so another CPU or version
compiles anew; it compiles the model read, not the file by path, which OpenVINO keys by where the file is and its
mtime). Before serving, it is checked on the machine that serves against ONNX Runtime fp32 on the probe texts:
the vectors must stay within cosine MIN_COSINE, so they belong to the same vector space and the same model id;
otherwise it is refused and the caller falls back to ONNX Runtime. Replicas sharing a store should run the same
runtime.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np

from ..prepared import current, record, writing
from .onnx_model import MIN_COSINE, PROBES, OnnxEmbedder, ensure_onnx, load_onnx, model_parts

log = logging.getLogger("ctxsieve")


# OpenVINO's CPU plugin keeps what it builds for each input shape it meets: batches padded to a multiple of this
# many tokens (masked out, so the vectors stay within the probe gate) meet a few dozen shapes instead of every
# width up to 512, and serving memory stops growing with the texts seen (`make loadtest`).
WIDTH_STEP = 32
IR_VERSION = "1"
# The fp32 probe vectors kept are made again when the probe texts change.
REFERENCE_VERSION = "1-" + hashlib.sha256("\n".join(PROBES).encode()).hexdigest()[:12]


class RuntimeRefused(RuntimeError):
    """The OpenVINO vectors left the quality gate on this machine (or OpenVINO could not load)."""


def native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """The CPU computes bf16 in hardware: AMX (amx_bf16) or AVX-512 BF16."""
    try:
        flags = next((line for line in cpuinfo.read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        return False
    words = set(flags.split())
    return bool({"amx_bf16", "avx512_bf16"} & words)


class _Compiled:
    """An OpenVINO compiled model behind the `run(None, feeds)` call the ONNX embedder makes."""

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.request = compiled.create_infer_request()

    def run(self, _: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        result = self.request.infer(feeds)
        return [np.asarray(result[self.compiled.output(0)])]


def ensure_ir(model_folder: Path, cache_dir: Path) -> Path:
    """The exported model as OpenVINO IR with its weights stored in fp16, converted once from the `.onnx`.

    The compiled blob keeps the weights as the model file has them, and serving maps the blob whole: fp16
    halves it (the 250k-token embedding table is most of it). Inference runs in bf16 either way, so the
    vectors stay where the probe gate checks them."""
    import openvino as ov

    onnx = ensure_onnx(model_folder, cache_dir)
    target = cache_dir / "openvino" / f"{onnx.stem}-f16.xml"
    if current(target, [onnx], IR_VERSION) and target.with_suffix(".bin").exists():
        return target
    log.info("converting the ONNX export of %s to OpenVINO IR once...", model_folder.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with writing(target) as partial:  # the .xml last: it says the pair is whole
        try:
            ov.save_model(ov.Core().read_model(str(onnx)), str(partial), compress_to_fp16=True)
            partial.with_suffix(".bin").replace(target.with_suffix(".bin"))
        finally:
            partial.with_suffix(".bin").unlink(missing_ok=True)
    record(target, [onnx], IR_VERSION)
    return target


def load_openvino(model_folder: Path, cache_dir: Path, model_id: str, threads: int | None,
                  precision: str = "bf16") -> OnnxEmbedder:
    """The ONNX embedder's tokenizer and pooling with OpenVINO's inference, checked against ONNX Runtime fp32."""
    import openvino as ov

    reference = reference_vectors(model_folder, cache_dir, model_id, threads)
    tokenizer, dim, prompts = model_parts(model_folder, cache_dir)
    core = ov.Core()
    core.set_property({"CACHE_DIR": str(cache_dir / "openvino")})
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": precision, "PERFORMANCE_HINT": "LATENCY"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    ir = ensure_ir(model_folder, cache_dir)
    blobs = _compiled_blobs(cache_dir)
    log.info("the OpenVINO %s model for this CPU: compiled on the first start, loaded from its cache after...",
             precision)
    compiled = core.compile_model(core.read_model(str(ir)), "CPU", config)  # the model, not its path: see above
    how = "loaded from its cache" if _compiled_blobs(cache_dir) == blobs else "compiled and cached"
    embedder = OnnxEmbedder(_Compiled(compiled), tokenizer, model_id, dim, prompts, f"openvino-{precision}",
                            width_step=WIDTH_STEP)
    worst = float(np.min(np.sum(_probe_vectors(embedder) * reference, axis=1)))
    if worst < MIN_COSINE:
        raise RuntimeRefused(f"OpenVINO {precision} vectors are at cosine {worst:.6f} of ONNX Runtime fp32 on the "
                             f"probe texts, below {MIN_COSINE}: not the same vector space on this machine")
    log.info("dense model on OpenVINO %s %s, %s (probe cosine to fp32 %.6f)", ov.__version__.split("-")[0],
             precision, how, worst)
    return embedder


def reference_vectors(model_folder: Path, cache_dir: Path, model_id: str, threads: int | None) -> np.ndarray:
    """ONNX Runtime fp32's vectors of the probe texts, made once per export and kept beside the IR: every start
    checks the OpenVINO model it compiled or loaded against them, without loading the fp32 session again (about
    10 s and its memory on each start before)."""
    onnx = ensure_onnx(model_folder, cache_dir)
    target = cache_dir / "openvino" / f"{onnx.stem}-fp32-probes.npy"
    if current(target, [onnx], REFERENCE_VERSION):
        try:
            return np.asarray(np.load(target), dtype=np.float32)
        except (OSError, ValueError):  # unreadable: made again below
            pass
    log.info("computing the ONNX Runtime fp32 reference the OpenVINO model is checked against (once)...")
    vectors = _probe_vectors(load_onnx(model_folder, cache_dir, model_id, threads))
    target.parent.mkdir(parents=True, exist_ok=True)
    with writing(target) as partial, partial.open("wb") as f:
        np.save(f, vectors)
    record(target, [onnx], REFERENCE_VERSION)
    return vectors


def _probe_vectors(embedder: OnnxEmbedder) -> np.ndarray:
    probes = list(PROBES)
    return np.vstack([embedder.embed_passages(probes), embedder.embed_queries(probes)])


def _compiled_blobs(cache_dir: Path) -> set[str]:
    """The compiled blobs in OpenVINO's model cache: one more after `compile_model` says it compiled; as many, that
    it loaded one (which blob fits this model, CPU and version is OpenVINO's to say)."""
    return {p.name for p in (cache_dir / "openvino").glob("*.blob")}
