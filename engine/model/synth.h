// Synthetic model files: exactly the architecture, hyperparameters and tensor shapes of a known
// model (Gemma-2B, Llama-2-7B, ...), filled with seeded uniform noise. Decode and prefill speed
// depend only on the shapes and types, never on the values, so these files are honest stand-ins
// for benchmarks without downloading anything. They are NOT language models: they produce noise.
//
// Streamed through format::ModelWriter in parts of a few MiB (temporary file + rename): memory
// use does not grow with the model (Gemma-2B F16 is 5 GB on disk).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/model_format.h"
#include "format/model_writer.h"
#include "format/quant_mix.h"
#include "magnetar/engine.h"
#include "magnetar/status.h"

namespace magnetar::synth {

struct Spec {
  std::string name;  // "gemma-2b", "llama-2-7b", ...
  Architecture arch = Architecture::Llama;
  int dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0, hidden_dim = 0;
  int vocab_size = 0, max_context = 0;
  format::Activation activation = format::Activation::Silu;
  float norm_eps = 1e-5f, rope_theta = 10000.0f;
  bool tied_embeddings = false;
  ChatTemplate chat_template = ChatTemplate::None;
  // Options that change the work per token only a little, kept so the files match the model.
  int query_pre_attn_scalar = 0;      // 0: head_dim
  int sliding_window = 0, sliding_period = 0;  // FileHeader's meaning
  float rope_local_theta = 0.0f;
  format::RopeScaling rope_scaling = format::RopeScaling::None;
  float rope_scaling_factor = 0.0f, rope_low_freq_factor = 0.0f, rope_high_freq_factor = 0.0f;
  int rope_original_context = 0;
};

// The models `magnetar-cli synth --like` knows, with their published configurations.
const std::vector<Spec>& known_specs();
const Spec* find_spec(std::string_view name);  // nullptr when unknown

// Special-token layout of the synthetic vocabulary (Gemma's real ids, or Llama's).
struct SpecialIds {
  int bos = 1, eos = 2, unk = 0, pad = -1;
  int start_of_turn = -1, end_of_turn = -1;  // Gemma chat markers
  int first_byte = 3;                        // <0x00>; 256 byte-fallback pieces follow
};
SpecialIds special_ids(const Spec& spec);

format::FileHeader make_header(const Spec& spec);
// Every tensor in the file's canonical names and order (the architecture table's list for
// make_header(spec)); matrices in `dtype` or, given a mix, in the types its rule chooses
// (format/quant_mix.h: a fused wqkv whose attn_v gets another type is written as wq, wk, wv);
// norms and biases in F32.
std::vector<format::TensorDecl> tensor_decls(const Spec& spec, format::DType dtype,
                                             std::optional<format::QuantMix> mix = std::nullopt);
uint64_t parameter_count(const Spec& spec);
// Serialized SentencePiece ModelProto with exactly spec.vocab_size pieces: the special tokens,
// 256 byte-fallback pieces, then filler pieces "▁s<n>".
Status vocabulary_proto(const Spec& spec, std::string* out);

struct Options {
  format::DType dtype = format::DType::F16;  // F16, F32 or a type with a quantizer (type_traits.h)
  std::optional<format::QuantMix> mix;       // set: the mix's types instead of dtype
  uint64_t seed = 0;
  int threads = 0;  // threads that quantize (0: every core); the bytes are the same for any count
  // (bytes written, total bytes), called after each part.
  std::function<void(uint64_t done, uint64_t total)> on_progress;
  // Set (by a signal handler): the write stops between chunks and removes its temporary file.
  const std::atomic<bool>* cancel = nullptr;
};

// Writes the whole file atomically; on any error nothing is left at `path`.
Status write_model(const Spec& spec, const Options& options, const std::string& path);

// Fills `count` values of one tensor with uniform noise in [-scale, scale], deterministic in
// (seed, tensor_index) and independent of chunking: element i always gets the same value.
void fill_f16(uint64_t seed, uint64_t tensor_index, float scale, uint64_t first, uint64_t count,
              uint16_t* out);
void fill_f32(uint64_t seed, uint64_t tensor_index, float scale, uint64_t first, uint64_t count,
              float* out);

}  // namespace magnetar::synth
