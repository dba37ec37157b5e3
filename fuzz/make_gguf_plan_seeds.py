#!/usr/bin/env python3
"""Writes the seeds of the GGUF planning fuzz target, fuzz/corpus/gguf_plan/ (run from anywhere).

Each seed is the header, metadata and tensor table of a tiny model that plans: every family of
the architecture table, both vocabulary kinds (SentencePiece "llama" and byte-level BPE "gpt2"),
chat templates, and tensors of every block type the importer copies (K-quants, IQ4, Q4_0..Q8_0,
F16, BF16, F32). The tensor data is left out: fuzz/gguf_plan_fuzz.cpp appends zeros as the data
section (planning never reads it), so a seed is a few KB while its matrices are 256 columns wide.
tests/gguf/gguf_plan_seeds_test.cpp checks that every seed plans.
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "gguf_plan")

STRING, ARRAY, U32, F32, BOOL = 8, 9, 4, 6, 7
# GGML type: (elements per block, bytes per block)
TYPES = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20), "Q5_0": (6, 32, 22),
         "Q5_1": (7, 32, 24), "Q8_0": (8, 32, 34), "Q2_K": (10, 256, 84), "Q3_K": (11, 256, 110),
         "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210), "IQ4_NL": (20, 32, 18),
         "IQ4_XS": (23, 256, 136), "BF16": (30, 1, 2)}

DIM, HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 256, 256, 2, 1, 128


def s(text):
    b = text.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


class Seed:
    def __init__(self):
        self.kvs, self.infos, self.offset = [], [], 0

    def kv(self, key, type_id, payload):
        self.kvs.append(s(key) + struct.pack("<I", type_id) + payload)

    def string(self, key, value):
        self.kv(key, STRING, s(value))

    def u32(self, key, value):
        self.kv(key, U32, struct.pack("<I", value))

    def f32(self, key, value):
        self.kv(key, F32, struct.pack("<f", value))

    def boolean(self, key, value):
        self.kv(key, BOOL, struct.pack("<B", value))

    def array(self, key, elem_type, items):
        self.kv(key, ARRAY, struct.pack("<IQ", elem_type, len(items)) + b"".join(items))

    def tensor(self, name, ne, type_name):
        ggml_type, block, block_bytes = TYPES[type_name]
        n = 1
        for d in ne:
            n *= d
        self.infos.append(s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) +
                          struct.pack("<IQ", ggml_type, self.offset))
        self.offset += -(-(n // block * block_bytes) // 32) * 32

    def blob(self):
        return b"GGUF" + struct.pack("<IQQ", 3, len(self.infos), len(self.kvs)) + b"".join(self.kvs) + \
            b"".join(self.infos)


def hyperparameters(seed, arch, n_layers=1):
    seed.string("general.architecture", arch)
    seed.u32(arch + ".block_count", n_layers)
    seed.u32(arch + ".embedding_length", DIM)
    seed.u32(arch + ".feed_forward_length", HIDDEN)
    seed.u32(arch + ".attention.head_count", HEADS)
    seed.u32(arch + ".attention.head_count_kv", KV_HEADS)
    seed.u32(arch + ".attention.key_length", HEAD_DIM)
    seed.u32(arch + ".attention.value_length", HEAD_DIM)
    seed.u32(arch + ".context_length", 4096)
    seed.f32(arch + ".attention.layer_norm_rms_epsilon", 1e-6)
    seed.f32(arch + ".rope.freq_base", 10000.0)


def sentencepiece_vocab(seed, extra=()):
    pieces = [("<unk>", 2), ("<s>", 3), ("</s>", 3), ("<0x0A>", 6), ("\u2581the", 1), ("\u2581a", 1), ("s", 1)]
    pieces += [(p, 3) for p in extra]
    seed.string("tokenizer.ggml.model", "llama")
    seed.array("tokenizer.ggml.tokens", STRING, [s(p) for p, _ in pieces])
    seed.array("tokenizer.ggml.scores", F32, [struct.pack("<f", -float(i)) for i in range(len(pieces))])
    seed.array("tokenizer.ggml.token_type", 5, [struct.pack("<i", t) for _, t in pieces])
    seed.u32("tokenizer.ggml.unknown_token_id", 0)
    seed.u32("tokenizer.ggml.bos_token_id", 1)
    seed.u32("tokenizer.ggml.eos_token_id", 2)
    seed.boolean("tokenizer.ggml.add_bos_token", True)
    return len(pieces)


def byte_level_alphabet():
    """GPT-2's printable stand-ins for the 256 bytes (bytes_to_unicode), in byte order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def bpe_vocab(seed, pre):
    """The 256 byte tokens, two merges, then the special tokens (bos 258, eos 260)."""
    tokens = byte_level_alphabet() + ["ab", "\u0120a", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    types = [1] * 258 + [3, 3, 3]
    seed.string("tokenizer.ggml.model", "gpt2")
    seed.string("tokenizer.ggml.pre", pre)
    seed.array("tokenizer.ggml.tokens", STRING, [s(t) for t in tokens])
    seed.array("tokenizer.ggml.token_type", 5, [struct.pack("<i", t) for t in types])
    seed.array("tokenizer.ggml.merges", STRING, [s("a b"), s("\u0120 a")])
    seed.u32("tokenizer.ggml.bos_token_id", 258)
    seed.u32("tokenizer.ggml.eos_token_id", 260)
    seed.boolean("tokenizer.ggml.add_bos_token", False)
    return len(tokens)


CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")
GEMMA = ("{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\\n' + "
         "message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}"
         "{{ '<start_of_turn>model\\n' }}{% endif %}")
LLAMA2 = ("{% for message in messages %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + "
          "message['content'] + ' [/INST]' }}{% else %}{{ ' ' + message['content'] + eos_token }}{% endif %}"
          "{% endfor %}")


def layer(seed, i, types, qkv_bias=False, qk_norm=False, post_norms=False, fused=False):
    p = "blk.%d." % i
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    seed.tensor(p + "attn_norm.weight", [DIM], "F32")
    q_k_v = [("q", q, types[0]), ("k", kv, types[1]), ("v", kv, types[2])]
    if fused:
        seed.tensor(p + "attn_qkv.weight", [DIM, q + 2 * kv], types[0])
    else:
        for name, rows, type_name in q_k_v:
            seed.tensor(p + "attn_%s.weight" % name, [DIM, rows], type_name)
    if qkv_bias:
        for name, rows, _ in q_k_v:
            seed.tensor(p + "attn_%s.bias" % name, [rows], "F32")
    if qk_norm:
        seed.tensor(p + "attn_q_norm.weight", [HEAD_DIM], "F32")
        seed.tensor(p + "attn_k_norm.weight", [HEAD_DIM], "F32")
    seed.tensor(p + "attn_output.weight", [q, DIM], types[3])
    if post_norms:
        seed.tensor(p + "post_attention_norm.weight", [DIM], "F32")
        seed.tensor(p + "post_ffw_norm.weight", [DIM], "F32")
    seed.tensor(p + "ffn_norm.weight", [DIM], "F32")
    if fused:
        seed.tensor(p + "ffn_up.weight", [DIM, 2 * HIDDEN], types[5])
    else:
        seed.tensor(p + "ffn_gate.weight", [DIM, HIDDEN], types[4])
        seed.tensor(p + "ffn_up.weight", [DIM, HIDDEN], types[5])
    seed.tensor(p + "ffn_down.weight", [HIDDEN, DIM], types[6])


def model(arch, vocab, template, embedding, layers, head=None, metadata=(), extra_tensors=()):
    """A seed: hyperparameters, then `metadata` (key, kind, value), the vocabulary (vocab(seed) adds
    it and returns its size), the chat template, token_embd of type `embedding`, one layer per
    (types, options) of `layers`, output_norm, an untied head of type `head`, `extra_tensors`."""
    seed = Seed()
    hyperparameters(seed, arch, n_layers=len(layers))
    for key, kind, value in metadata:
        getattr(seed, kind)(key, value)
    n_vocab = vocab(seed)
    if template:
        seed.string("tokenizer.chat_template", template)
    seed.tensor("token_embd.weight", [DIM, n_vocab], embedding)
    for i, (types, options) in enumerate(layers):
        layer(seed, i, types, **options)
    seed.tensor("output_norm.weight", [DIM], "F32")
    if head:
        seed.tensor("output.weight", [DIM, n_vocab], head)
    for name, ne, type_name in extra_tensors:
        seed.tensor(name, ne, type_name)
    return seed.blob()


def main():
    os.makedirs(OUT, exist_ok=True)
    gemma_vocab = lambda seed: sentencepiece_vocab(seed, ["<start_of_turn>", "<end_of_turn>"])
    k_quants = ["Q4_K", "Q4_K", "Q6_K", "Q4_K", "Q4_K", "Q4_K", "Q6_K"]
    seeds = {
        # Llama with every K-quant and IQ4 type, an untied head and Llama 3's rope_freqs.
        "llama_kquants.gguf": model(
            "llama", sentencepiece_vocab, LLAMA2, "Q6_K",
            [(["Q4_K", "Q5_K", "Q6_K", "Q3_K", "Q2_K", "IQ4_XS", "IQ4_NL"], {})], head="Q8_0",
            metadata=[("llama.rope.dimension_count", "u32", HEAD_DIM)],
            extra_tensors=[("rope_freqs.weight", [HEAD_DIM // 2], "F32")]),
        # Gemma 2: tied embeddings, sandwich norms, softcaps, a sliding window; the 32-block types.
        "gemma2_blocks.gguf": model(
            "gemma2", gemma_vocab, GEMMA, "Q8_0",
            [(["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_0", "Q4_1"], {"post_norms": True}),
             (["F16", "BF16", "F32", "F16", "Q5_K", "Q4_K", "Q6_K"], {"post_norms": True})],
            metadata=[("gemma2.attn_logit_softcapping", "f32", 50.0),
                      ("gemma2.final_logit_softcapping", "f32", 30.0),
                      ("gemma2.attention.sliding_window", "u32", 4096)]),
        # Gemma 3: q/k norms, a five-of-six sliding pattern given in the file, a local RoPE base.
        "gemma3_qk_norms.gguf": model(
            "gemma3", gemma_vocab, GEMMA, "Q4_K", [(k_quants, {"qk_norm": True, "post_norms": True})],
            metadata=[("gemma3.attention.sliding_window", "u32", 512),
                      ("gemma3.attention.sliding_window_pattern", "u32", 6),
                      ("gemma3.rope.freq_base_swa", "f32", 10000.0)]),
        # Qwen 2: byte-level BPE vocabulary (tokenizer.json), q/k/v biases, ChatML.
        "qwen2_bpe.gguf": model(
            "qwen2", lambda seed: bpe_vocab(seed, "qwen2"), CHATML, "F16",
            [(["Q8_0", "Q8_0", "Q8_0", "Q5_0", "Q5_1", "IQ4_NL", "Q6_K"], {"qkv_bias": True})], head="BF16"),
        # Qwen 3: q/k norms, Llama 3's pre-tokenizer.
        "qwen3_qk_norms.gguf": model(
            "qwen3", lambda seed: bpe_vocab(seed, "llama-bpe"), CHATML, "Q4_K", [(k_quants, {"qk_norm": True})]),
        # Phi-3: fused attn_qkv and gate/up (ffn_up with 2 x hidden rows), linear RoPE scaling.
        "phi3_fused.gguf": model(
            "phi3", lambda seed: sentencepiece_vocab(seed, ["<|user|>", "<|assistant|>", "<|end|>"]), None, "Q4_K",
            [(["Q5_K", None, None, "Q4_K", None, "Q4_K", "Q6_K"], {"fused": True})], head="Q6_K",
            metadata=[("phi3.rope.scaling.type", "string", "linear"), ("phi3.rope.scaling.factor", "f32", 2.0)]),
    }

    for name, blob in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(blob)
        print(name, len(blob), "bytes")


if __name__ == "__main__":
    main()
