// GGUF import: turns a GGUF file (the architecture table's gguf names: llama, gemma, gemma2,
// qwen2, qwen3, gemma3, phi3) into a conversion plan — header from the GGUF metadata, canonical
// tensors from llama.cpp's tensor names (format/architecture.h), and a tokenizer from the
// tokenizer.ggml.* vocabulary (a SentencePiece model for "llama", a tokenizer.json for "gpt2").
//
// GGUF conventions mapped back to what the forward pass expects:
//   - llama q/k rows are stored in the interleaved RoPE order (llama.cpp's converter permutes
//     Hugging Face's rotate-half rows); the plan marks them like llama2.c's, so the runner
//     permutes them back. Gemma's q/k are not permuted by llama.cpp (NeoX-style RoPE).
//   - Gemma norm weights (Gemma 3's q/k norms too) are stored with the "1 +" already folded in:
//     taken as is.
//   - Llama 3's llama3 RoPE scaling is a rope_freqs tensor of per-frequency divisors: kept as
//     the model file's rope_freqs. Gemma 3's layer pattern and local RoPE base are llama.cpp's
//     defaults (5 of 6 layers slide, base 10000) unless the file gives
//     attention.sliding_window_pattern / rope.freq_base_swa.
//   - ne = {cols, rows}: GGUF lists the innermost dimension first.
//   - Block-quantized tensors (Q8_0, Q4_0, K-quants, IQ4, ...) converted to the same type are
//     copied block for block (never requantised); to other types they are dequantized. A fused
//     matrix whose sources differ in type is stored as its parts (format::fused_parts).
// Not here: architectures outside the table, Gemma 3 27B's query scale (GGUF has no
// query_pre_attn_scalar).
#pragma once
#include <cstdint>
#include <string>

#include "convert/gguf_reader.h"
#include "convert/plan.h"
#include "magnetar/status.h"
#include "tokenizer/sentencepiece_proto.h"

namespace magnetar::convert {

// The SentencePiece vocabulary of a GGUF file (tokenizer.ggml.model "llama": tokens, scores,
// token_type, special ids, add_space_prefix) as a ModelSpec for spm::build_sentencepiece_model.
Status gguf_vocab_to_spec(const gguf::File& file, spm::ModelSpec* out);

// Plans converting the GGUF file at `path`. Errors name the file and what is unsupported.
Status plan_gguf(const std::string& path, ConversionPlan* plan);

// The same for a GGUF file already in memory (data[size], the whole file); `path` names it in
// messages and in the plan's source ranges. Planning reads the header, metadata and tensor
// table only (the fuzz target fuzz/gguf_plan_fuzz.cpp drives this).
Status plan_gguf_bytes(const std::string& path, const uint8_t* data, uint64_t size, ConversionPlan* plan);

// True when the file starts with the GGUF magic (cheap; for choosing the planner).
bool looks_like_gguf(const std::string& path);

}  // namespace magnetar::convert
