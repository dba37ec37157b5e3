// The engine's public API: load a Magnetar model file, then generate from it with a per-token
// callback. Frontends (the CLI, the desktop app) include only headers from this folder.
//
//   Model  — the weights (mapped or read into memory), hyperparameters, tokenizer, template.
//   Session — one conversation's KV cache and scratch buffers; all allocated when created.
//
// A Session is used by one thread at a time. Generation stops between tokens (and between
// prefill batches) when the callback returns false or the cancel flag is set.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/status.h"

namespace magnetar {

// Model families (the table in engine/format/architecture.h). Llama also covers Mistral.
enum class Architecture : uint32_t {
  Llama = 1, Gemma = 2, Gemma2 = 3, Qwen2 = 4, Qwen3 = 5, Gemma3 = 6, Phi3 = 7,
};
const char* architecture_name(Architecture arch);          // "llama", "qwen3", ...
const char* architecture_display_name(Architecture arch);  // "Llama / Mistral", "Qwen 3", ...
// The families this build runs, for people: "Llama / Mistral, Gemma, ...".
std::string supported_model_families();

// The family a model's chat template was recognised as, for display only: every template is
// rendered from its Jinja text (ModelInfo::chat_template_source).
enum class ChatTemplate : uint32_t { None = 0, Llama2 = 1, Gemma = 2 };
const char* chat_template_name(ChatTemplate t);

enum class LoadMode { Read, Map };  // Read: anonymous memory, huge pages requested

// The KV cache's element type. F32: exact (the default). F16: half the memory. Int8: a quarter,
// each head's key and value vector at each position stored as int8 with its own float scale
// (absmax / 127), as the boot-sector demo did.
enum class KvType { F32, F16, Int8 };
const char* kv_type_name(KvType type);                   // "f32", "f16", "int8"
bool parse_kv_type(const std::string& name, KvType* out);  // false on anything else
// Bytes of one session's KV cache for these shapes (keys, values and, for Int8, their scales):
// what ModelInfo::kv_cache_bytes will say once such a model is loaded.
uint64_t kv_cache_bytes(int n_layers, int n_kv_heads, int head_dim, int context, KvType type);

struct LoadOptions {
  LoadMode mode = LoadMode::Read;
  int context_length = 0;  // KV cache size in tokens; 0 = the model's maximum, capped at 4096
  int threads = 0;         // 0 = automatic
  KvType kv_type = KvType::F32;
  // Read mode: rearrange the weights for the decode kernels (docs/PERFORMANCE.md): F16/F32
  // matrices wider than 3072 columns into column stripes (~15% faster decode), Q8_0/Q4_0
  // matrices into x16 row tiles (kernels/quant.h). Off = the file's row-major layout (to measure).
  bool decode_layouts = true;
  // With decode_layouts: the stripe width and the tile choices of the active decode tuning
  // (magnetar/tuning.h); false: the built-in ones (2048-column stripes, x16 tiles).
  bool use_tuning = true;
  std::function<void(uint64_t done, uint64_t total)> on_progress;
  const std::atomic<bool>* cancel = nullptr;
};

struct ModelInfo {
  Architecture arch = Architecture::Llama;
  std::string path;
  int n_layers = 0, dim = 0, hidden_dim = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  int vocab_size = 0, max_context = 0, context_length = 0;
  std::string weight_type;        // "f16", "f32", ... of the large matrices
  uint64_t n_params = 0;
  uint64_t file_bytes = 0;
  uint64_t weight_bytes_per_token = 0;  // bytes of weights one decode step reads
  uint64_t kv_cache_bytes = 0;  // per session
  KvType kv_type = KvType::F32;
  ChatTemplate chat_template = ChatTemplate::None;
  std::string chat_template_source;  // the Jinja text apply_chat_template renders
  std::string chat_template_origin;  // "model file" (the model's own) or "built-in (plain completion)"
  std::string chat_template_error;   // why the stored template cannot be used; empty when it can
  int bos_id = -1;
  std::vector<int> eog_ids;  // generation stops on any of these
  bool add_bos = true;
  double load_seconds = 0;
  LoadMode load_mode = LoadMode::Read;
  int striped_matrices = 0;  // matrices laid out in column stripes at load (LoadOptions)
  int stripe_cols = 0;       // their stripe width (of the last one striped; 0: none)
  int tiled_matrices = 0;    // Q8_0/Q4_0 matrices laid out in x16 row tiles at load
  // The most bytes of text one token stands for (the longest piece; at least 4, an unknown
  // UTF-8 character): a text longer than n * max_piece_bytes cannot be n tokens or fewer.
  int max_piece_bytes = 4;
};

struct SamplerParams {
  float temperature = 0.0f;  // 0 = greedy
  int top_k = 40;            // 0 = off
  float top_p = 0.95f;       // 1 = off
  float min_p = 0.05f;       // 0 = off
  float repeat_penalty = 1.0f;
  int repeat_last_n = 64;
  uint64_t seed = 0;
};

enum class StopReason { None, EndOfGeneration, MaxTokens, Cancelled, ContextFull, Error };
const char* stop_reason_name(StopReason r);

struct GenerationStats {
  int n_prompt = 0;
  int n_generated = 0;
  int n_context = 0;  // tokens in the KV cache now
  double prompt_seconds = 0, generate_seconds = 0;
  double prompt_tokens_per_second = 0, generate_tokens_per_second = 0;
  double time_to_first_token = 0;  // seconds from the call to the first generated token
  uint64_t weight_bytes_per_token = 0;
  double achieved_gbps = 0;  // weight bytes per token × generated tokens/s
  int threads = 0;
};

struct TokenEvent {
  int token = -1;
  std::string_view piece;  // the token's text (may be empty, or part of a UTF-8 character)
  const GenerationStats* stats = nullptr;
};

struct GenerateRequest {
  std::vector<int> prompt;   // appended after what the session already holds
  int max_tokens = 256;
  SamplerParams sampler;
  bool stop_at_eog = true;
  const std::atomic<bool>* cancel = nullptr;
  // Return false to stop after this token.
  std::function<bool(const TokenEvent&)> on_token;
  // Called between prefill batches with (done, total) prompt tokens.
  std::function<void(int, int)> on_prefill;
};

struct GenerateResult {
  std::vector<int> tokens;
  StopReason stop = StopReason::None;
  GenerationStats stats;
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class Tokenizer;

class Model {
 public:
  static Status load(const std::string& path, const LoadOptions& options,
                     std::unique_ptr<Model>* out);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelInfo& info() const;
  int threads() const;
  void set_threads(int n);  // 0 = automatic

  // How tokenize() reads the text.
  struct TokenizeOptions {
    // Special-token strings written in the text ("<|eot_id|>") become their ids, as Hugging Face
    // and llama.cpp do for raw prompts; false encodes them as plain text.
    bool parse_special = true;
    // > 0: a text too long to make max_tokens tokens or fewer (more bytes than
    // max_tokens * info().max_piece_bytes) is refused before the tokenizer sees it, so a hostile
    // multi-megabyte prompt costs nothing; the caller still compares the count with its limit.
    int max_tokens = 0;
  };
  Status tokenize(std::string_view text, bool add_bos, std::vector<int>* out,
                  TokenizeOptions options) const;
  Status tokenize(std::string_view text, bool add_bos, std::vector<int>* out) const {
    return tokenize(text, add_bos, out, TokenizeOptions{});
  }
  std::string token_piece(int token) const;  // text for one token (byte tokens decoded)
  std::string detokenize(const std::vector<int>& tokens) const;
  // Renders messages with the model's chat template (plain concatenation for base models)
  // and tokenizes, ending with the assistant prefix when add_generation_prompt is set.
  // Control-token strings inside message contents stay plain text.
  Status apply_chat_template(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                             std::vector<int>* out) const;
  bool is_end_of_generation(int token) const;

  struct Impl;  // defined in the engine (model/model_impl.h); frontends never see it

 private:
  friend struct ModelInternals;  // the engine's own access to Impl (model/model_impl.h)
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Session {
 public:
  static Status create(Model& model, std::unique_ptr<Session>* out);
  ~Session();

  // Prefills request.prompt (in batches), then samples up to max_tokens tokens.
  Status generate(const GenerateRequest& request, GenerateResult* result);
  // Teacher-forced logits for every position of `tokens` appended to the session:
  // logits is resized to [tokens.size(), vocab] row-major.
  Status evaluate(const std::vector<int>& tokens, std::vector<float>* logits);

  void reset();  // forget the conversation (empties the KV cache)
  void truncate(int n_tokens);  // keep only the first n_tokens of the cache
  // How many leading tokens of `tokens` the cache already holds: re-rendering a whole
  // conversation each turn then costs only the new part (truncate to this, prefill the rest).
  int matching_prefix(const std::vector<int>& tokens) const;
  int n_context() const;        // tokens in the KV cache
  const std::vector<int>& context_tokens() const;
  Model& model();

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace magnetar
