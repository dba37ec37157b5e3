// What the CLI's measuring and inspecting subcommands need from the engine (bench, info, eval,
// synth), so that they, like every frontend, include only this folder. Not for the chat path:
// the app and `run`/`chat` need only engine.h.
//
//   clocks and cores      — the platform layer's timers, forwarded
//   kernel selection      — force the reference or asm kernels (both tables), name the active ones
//   ReadBandwidthProbe    — the read-bandwidth probe, run between decode repetitions
//   thread-pool latency   — round trip of an empty job, hot and after the workers slept
//   model files           — a header peek before loading; hyperparameters and tensors of a model
//   logit comparison      — KL, top-1 agreement and perplexity of two models' logits
//   synthetic models      — known models' shapes filled with seeded noise (speed tests only)
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "magnetar/status.h"

namespace magnetar {

// ---- Clocks and cores -----------------------------------------------------------------------
double monotonic_seconds();    // high resolution, for intervals
double process_cpu_seconds();  // user + system CPU time of this process
int physical_cores();          // the default thread count
double median(std::vector<double> values);  // 0 for an empty list

// ---- Kernel selection -----------------------------------------------------------------------
enum class KernelChoice { Reference, Asm };
// Chooses the kernel table (float kernels and every weight type's matrix kernels): the reference
// twins or the best asm kernels this CPU runs. Call before loading a model.
void select_kernels(KernelChoice choice);
std::string active_kernel_isa();        // the float kernels': "avx2" or "reference"
std::string active_quant_kernel_isa();  // the quantized types' table: "avx512vnni", "avx2" or "reference"

// ---- Read bandwidth, one thread count at a time -------------------------------------------------
inline constexpr int kBandwidthTimedPasses = 5;  // passes per thread count (median), after a warm-up

// The probe's buffer, allocated and written once, measured with the read loop the kernels use:
// the bench interleaves it with decode runs so that each run's share of the ceiling compares two
// numbers taken under the same conditions (a shared machine drifts).
class ReadBandwidthProbe {
 public:
  explicit ReadBandwidthProbe(uint64_t buffer_bytes = 0);  // 0 = the default (1 GiB, halved on failure)
  ~ReadBandwidthProbe();
  ReadBandwidthProbe(const ReadBandwidthProbe&) = delete;
  ReadBandwidthProbe& operator=(const ReadBandwidthProbe&) = delete;
  bool ok() const;  // false when not even the smallest buffer could be allocated
  uint64_t buffer_bytes() const;
  double measure(int threads);  // median GB/s of kBandwidthTimedPasses passes (0 when !ok())

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- Thread-pool latency ----------------------------------------------------------------------
struct ThreadPoolLatency {
  double round_trip_us = 0;  // median, workers spinning (back-to-back jobs)
  double wake_up_us = 0;     // median, after 50 ms idle (workers asleep)
};
ThreadPoolLatency measure_thread_pool_latency(int threads);

// ---- Model files --------------------------------------------------------------------------------
// The header's max_context, read without loading (to size a KV cache for what a tool needs).
// An error when the file is unreadable or not a Magnetar model.
Status read_model_max_context(const std::string& path, int* max_context);

struct TensorSummary {
  std::string name;  // canonical name (docs/MODEL_FORMAT.md)
  WeightType type = WeightType::F32;
  int n_dims = 0;
  uint64_t rows = 0, cols = 0;
  uint64_t bytes = 0;
};

// What `magnetar-cli info` prints beyond ModelInfo: the hyperparameters of the forward pass, the
// tensor table and the tokenizer.
struct ModelDetails {
  float norm_eps = 0, rope_theta = 0, query_scale = 0;
  float attn_softcap = 0, final_softcap = 0;  // 0 = off
  // Layer l slides when sliding_window > 0 and (period == 0 or (l + 1) % period != 0).
  int sliding_window = 0, sliding_period = 0;
  float rope_local_theta = 0;  // RoPE base of sliding layers; 0: rope_theta on every layer
  std::string rope_scaling;    // "" (none), "linear" or "llama3"
  float rope_scaling_factor = 0, rope_low_freq_factor = 0, rope_high_freq_factor = 0;
  int rope_original_context = 0;
  bool rope_freq_factors = false;  // a rope_freqs tensor divides the global layers' frequencies
  bool qkv_bias = false;           // biases on q, k and v (Qwen 2)
  bool qk_norm = false;            // per-head q/k RMSNorm before RoPE (Qwen 3, Gemma 3)
  bool gelu_activation = false;  // GELU (tanh) instead of SiLU
  bool tied_embeddings = false;
  std::vector<TensorSummary> tensors;  // in file order
  int tokenizer_pieces = 0;
  uint64_t tokenizer_bytes = 0;  // the tokenizer section of the file
  std::string tokenizer_kind;    // "sentencepiece" or "tokenizer.json"
};
ModelDetails describe_model(const Model& model);
// The raw vocabulary piece ("<bos>", "▁the"); Model::token_piece gives the text instead.
std::string vocabulary_piece(const Model& model, int token);

// ---- Logit comparison (`eval --compare`) ----------------------------------------------------
// Pure arithmetic on logits already computed (double precision, log-sum-exp stabilised).
struct DistributionComparison {
  double mean_kl = 0;         // nats: mean over positions of KL(reference || candidate)
  double max_kl = 0;          // nats: the worst position
  double top1_agreement = 0;  // fraction of positions whose argmax tokens are the same
  // exp(mean negative log-likelihood of tokens[p + 1] at position p), over positions 0..n-2;
  // NaN when there are fewer than two tokens (nothing is predicted).
  double perplexity_reference = 0;
  double perplexity_candidate = 0;
  size_t positions = 0;  // rows compared (= tokens.size())
};

// reference, candidate: [tokens.size(), vocab] row-major logits of the same token sequence.
// Preconditions (asserted): vocab > 0, both hold exactly tokens.size() * vocab values, and every
// token id is in [0, vocab).
DistributionComparison compare_logits(const std::vector<float>& reference,
                                      const std::vector<float>& candidate,
                                      const std::vector<int>& tokens, int vocab);

// ---- Synthetic models (`synth`) -----------------------------------------------------------------
// A known model's exact shapes, filled with seeded uniform noise: speed depends only on shapes
// and types, so these stand in for downloads in benchmarks. They produce noise, not language.
std::vector<std::string> synthetic_model_names();  // "gemma-2b", "llama-2-7b", ...
// Parameters of the named model's file (with only its first `n_layers` layers when 0 < n_layers);
// 0 when the name is unknown.
uint64_t synthetic_parameter_count(const std::string& like, int n_layers = 0);

struct SynthOptions {
  WeightType weight_type = WeightType::F16;  // norms stay F32
  uint64_t seed = 0;
  // 0: every layer of the model. Fewer keep its shapes (embedding, LM head, one layer's
  // matrices) in a small file, to check a shape runs end to end; speed needs them all.
  int n_layers = 0;
  int threads = 0;  // threads that quantize (0: every core); the file is the same for any count
  std::function<void(uint64_t done, uint64_t total)> on_progress;  // bytes written, after each part
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. by a signal handler) to stop early
};
// Writes the file atomically (nothing is left at `path` on an error); *file_bytes = its size.
Status write_synthetic_model(const std::string& like, const SynthOptions& options,
                             const std::string& path, uint64_t* file_bytes = nullptr);

// ---- A tokenizer on its own (`tokenize`) ---------------------------------------------------------
// The tokenizer of a model file (its weights are not read), of a tokenizer.json (with the
// tokenizer_config.json beside it) or of a SentencePiece tokenizer.model.
class StandaloneTokenizer {
 public:
  static Status open(const std::string& path, std::unique_ptr<StandaloneTokenizer>* out);
  ~StandaloneTokenizer();
  StandaloneTokenizer(const StandaloneTokenizer&) = delete;
  StandaloneTokenizer& operator=(const StandaloneTokenizer&) = delete;

  // No BOS. With parse_special, special-token strings in the text become their ids.
  Status encode(std::string_view text, bool parse_special, std::vector<int>* ids) const;
  std::string decode(const std::vector<int>& ids) const;
  std::string piece(int id) const;  // the raw vocabulary entry ("<bos>", "▁the", "Ġthe")
  bool is_special(int id) const;
  int vocab_size() const;
  const char* kind_name() const;  // "sentencepiece" or "tokenizer.json"

 private:
  struct Impl;
  explicit StandaloneTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Chat templates on their own (`template`) ---------------------------------------------------
// Renders a conversation file ({"messages": [...]}, optionally "tools", "extra_vars",
// "add_generation_prompt", as in the chat test cases) with a model file's chat template or a
// tokenizer_config.json's; with want_ids also its token ids (a tokenizer_config.json needs a
// tokenizer.json or tokenizer.model beside it). Message contents never become control tokens.
struct TemplateRequest {
  std::string model_path;             // a model file, or
  std::string tokenizer_config_path;  // a tokenizer_config.json with a chat_template
  std::string conversation_path;
  bool add_generation_prompt = false;  // or as the conversation file says
  bool want_ids = false;
};
struct TemplateResult {
  std::string text;
  std::vector<int> ids;  // with want_ids
};
Status render_chat_template(const TemplateRequest& request, TemplateResult* out);

}  // namespace magnetar
