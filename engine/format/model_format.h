// The Magnetar model file (.mgn): one file is the whole model.
//
// Goals: the kernels read tensor data in place (mapped or read into memory), so every tensor
// starts on a 64-byte boundary; the loader can validate everything against the file size before
// use; the forward pass needs nothing but this file. Non-goals: editing in place, streaming
// over a network, architectures other than those in Architecture.
//
// Layout (all little-endian), described in docs/MODEL_FORMAT.md:
//   FileHeader (512 bytes) | TensorEntry[n_tensors] | tokenizer bytes | chat template text |
//   padding | tensor data, each tensor 64-byte aligned.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace magnetar::format {

inline constexpr char kMagic[8] = {'M', 'A', 'G', 'N', 'E', 'T', 'A', 'R'};
// 2: FileHeader::tokenizer_kind, then the RoPE scaling and local-RoPE fields. Version-1 files
// still load (tokenizer_kind reads as SentencePiece, the RoPE fields as zero: no scaling, one
// RoPE base).
inline constexpr uint32_t kVersion = 2;
inline constexpr uint32_t kOldestReadableVersion = 1;
inline constexpr uint64_t kAlignment = 64;
inline constexpr int kMaxEogIds = 8;
inline constexpr int kMaxTensorName = 64;

// The one enum of tensor data types (file, engine and kernels). Values are stored in files: only
// append. Q*/IQ* types are GGUF's block formats, bit for bit (kernels/quant.h, kernels/kquants.h).
enum class DType : uint32_t {
  F32 = 0, F16 = 1, Q8_0 = 2, Q4_0 = 3,
  Q2_K = 4, Q3_K = 5, Q4_K = 6, Q5_K = 7, Q6_K = 8, IQ4_NL = 9, IQ4_XS = 10,
  Q4_1 = 11, Q5_0 = 12, Q5_1 = 13,
};
inline constexpr uint32_t kDTypeCount = 14;

// What the file layer knows of a type: its name, its block (elements per block and bytes per
// block; 1 and the element size for F32/F16) and GGML's id for it (GGUF import copies tensors
// whose GGML type has a DType). The kernels' half of the type record is kernels/type_traits.h.
struct DTypeLayout {
  const char* name;         // "q4_k", as `convert --dtype` and `info` spell it
  uint32_t block_elements;  // a row of a quantized tensor is a whole number of blocks
  uint32_t block_bytes;
  uint32_t ggml_type;       // GGML's enum ggml_type value
  bool quantized() const { return block_elements > 1; }
};

enum class Activation : uint32_t { Silu = 0, GeluTanh = 1 };

// How RoPE frequencies are rescaled (Hugging Face rope_scaling.rope_type).
enum class RopeScaling : uint32_t { None = 0, Linear = 1, Llama3 = 2 };

enum HeaderFlags : uint32_t {
  kFlagTiedEmbeddings = 1u << 0,  // no "output" tensor: the LM head is tok_embeddings
  kFlagEmbedScaleSqrtDim = 1u << 1,  // Gemma: embeddings × sqrt(dim)
  kFlagAddBos = 1u << 2,             // prompts start with BOS
  kFlagPostNorms = 1u << 3,          // Gemma 2/3: post-attention and post-FFN norms
  // Version 2: a "rope_freqs" [head_dim / 2] F32 tensor divides the RoPE frequencies of global
  // layers (llama.cpp's per-frequency factors, e.g. GGUF Llama 3.1's llama3 scaling).
  kFlagRopeFreqFactors = 1u << 4,
};

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // sizeof(FileHeader)
  uint32_t architecture;  // magnetar::Architecture
  uint32_t flags;         // HeaderFlags
  uint32_t n_layers;
  uint32_t dim;           // hidden size
  uint32_t hidden_dim;    // feed-forward size
  uint32_t n_heads;
  uint32_t n_kv_heads;
  uint32_t head_dim;
  uint32_t vocab_size;
  uint32_t max_context;
  uint32_t activation;    // Activation
  uint32_t sliding_window;          // 0 = none
  uint32_t sliding_window_period;   // layer i slides when (i + 1) % period != 0; 0: every layer
                                    // (version 1: 0 = none; its only period, 2, reads the same)
  uint32_t chat_template_kind;      // magnetar::ChatTemplate
  float norm_eps;
  float rope_theta;
  float query_scale;      // multiplies q·k (1/sqrt(head_dim) or 1/sqrt(query_pre_attn_scalar))
  float attn_softcap;     // 0 = off
  float final_softcap;    // 0 = off
  int32_t bos_id;
  int32_t n_eog_ids;
  int32_t eog_ids[kMaxEogIds];
  uint32_t n_tensors;
  uint32_t reserved0;
  uint32_t reserved1;  // keeps the 64-bit fields 8-byte aligned with no implicit padding
  uint64_t tensor_table_offset;
  uint64_t tokenizer_offset;   // tokenizer bytes, of the kind tokenizer_kind says
  uint64_t tokenizer_bytes;
  uint64_t template_offset;    // chat_template text from tokenizer_config.json (informational)
  uint64_t template_bytes;
  uint64_t data_offset;        // first tensor byte; 64-byte aligned
  uint64_t file_bytes;         // total size; a shorter file is truncated
  // Version 2. magnetar::TokenizerKind: 0 = SentencePiece ModelProto, 1 = a stored
  // tokenizer.json (tokenizer/hf_tokenizer.h). Version-1 files read it as 0.
  uint32_t tokenizer_kind;
  // Version 2, RoPE (version-1 files read these as zero).
  uint32_t rope_scaling;          // RopeScaling
  float rope_scaling_factor;      // Linear / Llama3: the factor
  float rope_low_freq_factor;     // Llama3
  float rope_high_freq_factor;    // Llama3
  uint32_t rope_original_context; // Llama3: original_max_position_embeddings
  float rope_local_theta;         // RoPE base of sliding-window layers (0: rope_theta, unscaled)
  uint8_t reserved[512 - 228];
};
static_assert(sizeof(FileHeader) == 512, "FileHeader must stay 512 bytes");
static_assert(offsetof(FileHeader, tensor_table_offset) == 144, "FileHeader layout changed");
static_assert(offsetof(FileHeader, tokenizer_kind) == 200, "FileHeader layout changed");
static_assert(offsetof(FileHeader, rope_scaling) == 204, "FileHeader layout changed");
static_assert(offsetof(FileHeader, rope_local_theta) == 224, "FileHeader layout changed");

struct TensorEntry {
  char name[kMaxTensorName];  // NUL-terminated
  uint32_t dtype;             // DType
  uint32_t n_dims;            // 1 or 2
  uint64_t shape[2];          // shape[0] = rows (outer), shape[1] = cols (inner, contiguous)
  uint64_t offset;            // absolute file offset, 64-byte aligned
  uint64_t bytes;
  uint64_t reserved;
};
static_assert(sizeof(TensorEntry) == 112, "TensorEntry layout changed");

// The layout of a valid dtype (dtype_is_valid).
const DTypeLayout& dtype_layout(DType dtype);
// Bytes of a [rows, cols] tensor of this type (cols must be a block multiple for quantized types).
uint64_t tensor_bytes(DType dtype, uint64_t rows, uint64_t cols);
const char* dtype_name(DType dtype);
bool dtype_is_valid(uint32_t dtype);
bool dtype_is_quantized(DType dtype);
// Whether a [.., cols] matrix can be stored as dtype (quantized: whole blocks per row).
bool dtype_fits_cols(DType dtype, uint64_t cols);
// The DType of GGML type `ggml_type`, if Magnetar has one.
bool dtype_from_ggml(uint32_t ggml_type, DType* out);
// The DType named `name` (dtype_name's spelling, any case).
bool dtype_from_name(const char* name, DType* out);

inline uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// The part names of a fused tensor ("layers.3.wqkv" -> wq, wk, wv; "w_gate_up" -> w_gate,
// w_up), in row order; empty for other names.
std::vector<std::string> fused_parts(const std::string& name);

// Canonical tensor names. Per layer "layers.<i>.<name>".
//   tok_embeddings [vocab, dim]          output_norm [dim] (F32)
//   output [vocab, dim] (absent when tied)
//   layers.i.attn_norm [dim] (F32)        layers.i.wqkv [(n_heads + 2 n_kv_heads) head_dim, dim]
//   layers.i.wo [dim, n_heads head_dim]   layers.i.ffn_norm [dim] (F32)
//   layers.i.w_gate_up [2 hidden, dim]    (gate rows, then up rows)
//   layers.i.w_down [dim, hidden]
//   Gemma 2/3: layers.i.post_attn_norm, layers.i.post_ffn_norm [dim] (F32)
//   Qwen 2: layers.i.bqkv [(n_heads + 2 n_kv_heads) head_dim] (F32, q, k, v biases)
//   Qwen 3, Gemma 3: layers.i.q_norm, layers.i.k_norm [head_dim] (F32, per-head norms)
//   with kFlagRopeFreqFactors: rope_freqs [head_dim / 2] (F32)
// The full list, per architecture, is format/architecture.h's table.
// A fused matrix whose sources have different block types (a GGUF *_K_M file's attn_v beside
// attn_q / attn_k) is stored as its parts instead, each in its own type:
//   layers.i.wqkv    -> layers.i.wq [n_heads head_dim, dim], layers.i.wk, layers.i.wv [kv, dim]
//   layers.i.w_gate_up -> layers.i.w_gate, layers.i.w_up [hidden, dim]
// Norm weights are stored as the multiplier the forward pass applies: Gemma's (1 + w) is folded
// in by the converter. q/k rows are in Hugging Face's rotate-half RoPE layout.

}  // namespace magnetar::format
