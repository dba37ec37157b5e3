#!/usr/bin/env python3
"""Writes the small synthetic GGUF seed files in fuzz/corpus/gguf_reader/ (run from the repo root).

The seeds give libFuzzer every structure of the format to start from: each metadata value
type, nested arrays, a tokenizer-like vocabulary, and aligned tensors of several types.
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "gguf_reader")


def s(text):
    b = text.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, type_id, payload):
    return s(key) + struct.pack("<I", type_id) + payload


def array(elem_type, items):
    return struct.pack("<IQ", elem_type, len(items)) + b"".join(items)


def header(version, n_tensors, n_kv):
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


def tensor_info(name, ne, ggml_type, offset):
    return s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) + \
        struct.pack("<IQ", ggml_type, offset)


def pad(data, alignment):
    return data + b"\0" * ((-len(data)) % alignment)


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    seeds["empty_v2.gguf"] = header(2, 0, 0)

    kvs = [
        kv("u8", 0, struct.pack("<B", 7)), kv("i8", 1, struct.pack("<b", -7)),
        kv("u16", 2, struct.pack("<H", 700)), kv("i16", 3, struct.pack("<h", -700)),
        kv("u32", 4, struct.pack("<I", 70000)), kv("i32", 5, struct.pack("<i", -70000)),
        kv("f32", 6, struct.pack("<f", 0.5)), kv("bool", 7, b"\x01"),
        kv("general.architecture", 8, s("llama")), kv("u64", 10, struct.pack("<Q", 1 << 40)),
        kv("i64", 11, struct.pack("<q", -(1 << 40))), kv("f64", 12, struct.pack("<d", 0.25)),
        kv("nested", 9, array(9, [array(2, [struct.pack("<H", 1), struct.pack("<H", 2)]), array(8, [s("x")])])),
    ]
    seeds["all_value_types.gguf"] = header(3, 0, len(kvs)) + b"".join(kvs)

    vocab = ["<unk>", "<s>", "</s>", "<0x00>", "\u2581the", "\u2581a", "s"]
    kvs = [
        kv("tokenizer.ggml.model", 8, s("llama")),
        kv("tokenizer.ggml.tokens", 9, array(8, [s(t) for t in vocab])),
        kv("tokenizer.ggml.scores", 9, array(6, [struct.pack("<f", -float(i)) for i in range(len(vocab))])),
        kv("tokenizer.ggml.token_type", 9, array(5, [struct.pack("<i", t) for t in [2, 3, 3, 6, 1, 1, 1]])),
        kv("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1)),
    ]
    seeds["vocab.gguf"] = header(3, 0, len(kvs)) + b"".join(kvs)

    # Tensors: F32 [4], F16 [8, 2], Q8_0 [32, 2], Q4_0 [32, 1], BF16 [2, 2]; alignment 32.
    specs = [("norm", [4], 0, 16), ("embd", [8, 2], 1, 32), ("wq", [32, 2], 8, 68), ("wk", [32, 1], 2, 18),
             ("bf", [2, 2], 30, 8)]
    kvs = [kv("general.alignment", 4, struct.pack("<I", 32))]
    infos, data, offset = [], b"", 0
    for name, ne, ggml_type, nbytes in specs:
        infos.append(tensor_info(name, ne, ggml_type, offset))
        blob = bytes((i * 37 + 11) & 0xFF for i in range(nbytes))
        data = pad(data, 32) + blob
        offset = len(pad(data, 32))
    body = header(3, len(specs), len(kvs)) + b"".join(kvs) + b"".join(infos)
    seeds["tensors.gguf"] = pad(body, 32) + data

    for name, blob in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
