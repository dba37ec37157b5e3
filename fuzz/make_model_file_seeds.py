#!/usr/bin/env python3
"""Writes the seed files of the model-file fuzz target in fuzz/corpus/model_file/ (run from the
repo root): tiny valid model files (layout in engine/format/model_format.h, docs/MODEL_FORMAT.md)
of a 1-layer Llama and a 2-layer Gemma 2 with F32, F16, Q8_0 and Q4_0 matrices, so libFuzzer
starts from files that pass every check and mutates from there.
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "model_file")
F32, F16, Q8_0, Q4_0 = 0, 1, 2, 3
TIED, EMBED_SCALE, ADD_BOS, POST_NORMS = 1, 2, 4, 8


def tensor_bytes(dtype, rows, cols):
    if dtype == Q8_0:
        return rows * cols // 32 * 34
    if dtype == Q4_0:
        return rows * cols // 32 * 18
    return rows * cols * (4 if dtype == F32 else 2)


def align(x, a=64):
    return (x + a - 1) // a * a


def model(arch, n_layers, dim, hidden, heads, kv_heads, head_dim, vocab, dtype, flags, window=0):
    q, kv = heads * head_dim, kv_heads * head_dim
    decls = [("tok_embeddings", dtype, 2, vocab, dim)]
    for i in range(n_layers):
        p = "layers.%d." % i
        decls += [(p + "attn_norm", F32, 1, 1, dim), (p + "wqkv", dtype, 2, q + 2 * kv, dim),
                  (p + "wo", dtype, 2, dim, q), (p + "ffn_norm", F32, 1, 1, dim),
                  (p + "w_gate_up", dtype, 2, 2 * hidden, dim), (p + "w_down", dtype, 2, dim, hidden)]
        if flags & POST_NORMS:
            decls += [(p + "post_attn_norm", F32, 1, 1, dim), (p + "post_ffn_norm", F32, 1, 1, dim)]
    decls.append(("output_norm", F32, 1, 1, dim))
    tokenizer, template = b"\x0a\x05\x0a\x01a\x15\x00\x00\x00\x00", b"{{ messages }}"
    table_offset = 512
    tokenizer_offset = table_offset + 112 * len(decls)
    template_offset = tokenizer_offset + len(tokenizer)
    data_offset = align(template_offset + len(template))
    entries, offset = b"", data_offset
    for name, dt, n_dims, rows, cols in decls:
        size = tensor_bytes(dt, rows, cols)
        entries += struct.pack("<64sII2QQQQ", name.encode(), dt, n_dims, rows, cols, offset, size, 0)
        offset = align(offset + size)
    file_bytes = offset
    header = struct.pack("<8sII14I5fii8iIII7Q", b"MAGNETAR", 1, 512, arch, flags, n_layers, dim, hidden,
                         heads, kv_heads, head_dim, vocab, 16, 1 if arch != 1 else 0, window,
                         2 if window else 0, 0, 1e-5, 10000.0, 0.5, 0.0, 0.0, 1, 1, 2, 0, 0, 0, 0, 0,
                         0, 0, len(decls), 0, 0, table_offset, tokenizer_offset, len(tokenizer),
                         template_offset, len(template), data_offset, file_bytes)
    header += b"\0" * (512 - len(header))
    body = header + entries + tokenizer + template
    body += b"\0" * (data_offset - len(body))
    data = bytearray(file_bytes - data_offset)
    for i in range(len(data)):
        data[i] = (i * 7 + 1) & 0x3f  # small values: valid F16/F32 bits, sane block scales
    return body + bytes(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "llama_f32.mgn": model(1, 1, 8, 12, 2, 1, 4, 4, F32, TIED | ADD_BOS),
        "llama_f16.mgn": model(1, 1, 8, 12, 2, 1, 4, 4, F16, TIED | ADD_BOS),
        "llama_q8_0.mgn": model(1, 1, 32, 32, 2, 1, 16, 4, Q8_0, TIED | ADD_BOS),
        "gemma2_q4_0.mgn": model(3, 2, 32, 32, 2, 2, 16, 4, Q4_0, TIED | EMBED_SCALE | POST_NORMS, 8),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
