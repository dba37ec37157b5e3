// Session: one conversation's KV cache and buffers; batched prefill, then token-by-token decode
// with a per-token callback. See engine.h for the contract.
#include <algorithm>
#include <cstring>

#include "model/model_impl.h"
#include "model/sampler.h"

namespace magnetar {

namespace {
constexpr int kPrefillBatch = 64;  // tokens per prefill forward pass
}

struct Session::Impl {
  Model* model = nullptr;
  RunState state;
  int state_threads = 0;  // workers the scratch buffers were sized for
  std::vector<int> tokens;  // what the KV cache holds, capacity = context
  bool logits_valid = false;  // state.logits belong to tokens.back()
  Sampler sampler;
  std::vector<int> generated;  // scratch for results, capacity reserved per request
};

// The pool may have grown (Model::set_threads) since the session was created: grow the per-worker
// attention scratch between calls, never inside the forward pass.
static Status fit_scratch_to_pool(Session::Impl& s, int pool_size) {
  if (s.state_threads >= pool_size) return Status::ok();
  if (!allocate_attention_scratch(ModelInternals::impl(*s.model).config, pool_size, &s.state))
    return Status::error("out of memory for attention scratch");
  s.state_threads = pool_size;
  return Status::ok();
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Status Session::create(Model& model, std::unique_ptr<Session>* out) {
  auto s = std::make_unique<Impl>();
  s->model = &model;
  const Model::Impl& m = ModelInternals::impl(model);
  s->state_threads = std::max(model.threads(), ThreadPool::default_threads());
  if (!allocate_run_state(m.config, m.info.context_length, kPrefillBatch, s->state_threads,
                          m.info.kv_type, &s->state))
    return Status::error("not enough memory for a " + std::to_string(m.info.context_length) +
                         "-token context (" + std::to_string(m.info.kv_cache_bytes >> 20) +
                         " MiB of KV cache)");
  s->tokens.reserve(m.info.context_length);
  out->reset(new Session(std::move(s)));
  return Status::ok();
}

Model& Session::model() { return *impl_->model; }
int Session::n_context() const { return static_cast<int>(impl_->tokens.size()); }
const std::vector<int>& Session::context_tokens() const { return impl_->tokens; }

void Session::reset() {
  impl_->tokens.clear();
  impl_->logits_valid = false;
}

void Session::truncate(int n_tokens) {
  if (n_tokens < 0) n_tokens = 0;
  if (n_tokens < n_context()) {
    impl_->tokens.resize(n_tokens);
    impl_->logits_valid = false;
  }
}

int Session::matching_prefix(const std::vector<int>& tokens) const {
  const auto& have = impl_->tokens;
  size_t n = 0;
  while (n < have.size() && n < tokens.size() && have[n] == tokens[n]) ++n;
  return static_cast<int>(n);
}

Status Session::evaluate(const std::vector<int>& tokens, std::vector<float>* logits) {
  Impl& s = *impl_;
  Model::Impl& m = ModelInternals::impl(*s.model);
  const int vocab = m.config.vocab_size;
  if (tokens.empty()) return Status::error("no tokens to evaluate");
  for (int t : tokens)
    if (t < 0 || t >= vocab) return Status::error("token id " + std::to_string(t) + " is outside the vocabulary");
  if (n_context() + tokens.size() > size_t(s.state.context))
    return Status::error("the tokens do not fit in the " + std::to_string(s.state.context) +
                         "-token context");
  MAGNETAR_TRY(fit_scratch_to_pool(s, m.pool->size()));
  logits->assign(tokens.size() * size_t(vocab), 0.0f);
  for (size_t done = 0; done < tokens.size();) {
    const int n = static_cast<int>(std::min<size_t>(kPrefillBatch, tokens.size() - done));
    forward(m, s.state, tokens.data() + done, n, n_context(), logits->data() + done * vocab);
    s.tokens.insert(s.tokens.end(), tokens.begin() + done, tokens.begin() + done + n);
    done += n;
  }
  std::memcpy(s.state.logits.get(), logits->data() + (tokens.size() - 1) * vocab,
              sizeof(float) * vocab);
  s.logits_valid = true;
  return Status::ok();
}

Status Session::generate(const GenerateRequest& request, GenerateResult* result) {
  Impl& s = *impl_;
  Model& model = *s.model;
  Model::Impl& m = ModelInternals::impl(model);
  const int vocab = m.config.vocab_size;
  const double t_start = platform::now_seconds();
  *result = GenerateResult();
  GenerationStats& stats = result->stats;
  stats.weight_bytes_per_token = m.info.weight_bytes_per_token;
  stats.threads = m.pool->size();
  stats.n_prompt = static_cast<int>(request.prompt.size());

  for (int t : request.prompt)
    if (t < 0 || t >= vocab) return Status::error("token id " + std::to_string(t) + " is outside the vocabulary");
  if (request.prompt.empty() && !s.logits_valid)
    return Status::error("empty prompt: nothing to continue from");
  if (request.max_tokens < 0) return Status::error("max_tokens must not be negative");
  MAGNETAR_TRY(fit_scratch_to_pool(s, m.pool->size()));
  if (n_context() + request.prompt.size() > size_t(s.state.context)) {
    result->stop = StopReason::ContextFull;
    stats.n_context = n_context();
    return Status::ok();
  }

  // --- prefill, in batches, stoppable between batches ---
  const int n_prompt = static_cast<int>(request.prompt.size());
  for (int done = 0; done < n_prompt;) {
    if (request.cancel && request.cancel->load(std::memory_order_relaxed)) {
      result->stop = StopReason::Cancelled;
      break;
    }
    const int n = std::min(kPrefillBatch, n_prompt - done);
    forward(m, s.state, request.prompt.data() + done, n, n_context(), nullptr);
    s.tokens.insert(s.tokens.end(), request.prompt.begin() + done, request.prompt.begin() + done + n);
    s.logits_valid = true;
    done += n;
    if (request.on_prefill) request.on_prefill(done, n_prompt);
  }
  // Decode uses one row of each batch buffer: a multi-token prompt's pages go back to the OS
  // (resident memory while generating stays small; the next prompt touches them again).
  if (n_prompt > 1) release_batch_scratch(&s.state);
  const double t_prefilled = platform::now_seconds();
  stats.prompt_seconds = t_prefilled - t_start;
  stats.prompt_tokens_per_second = n_prompt > 0 && stats.prompt_seconds > 0 ? n_prompt / stats.prompt_seconds : 0;
  if (result->stop == StopReason::Cancelled) {
    stats.n_context = n_context();
    return Status::ok();
  }

  // --- decode ---
  s.sampler.reset(request.sampler);
  // Never more than the context can still hold: max_tokens is the caller's, possibly huge.
  result->tokens.reserve(static_cast<size_t>(
      std::min<int64_t>(request.max_tokens, s.state.context - n_context() + 1)));
  const bool strip_first_space = m.tokenizer.adds_dummy_prefix();
  double decode_seconds = 0;
  int n_decoded = 0;
  for (int i = 0;; ++i) {
    if (i >= request.max_tokens) {
      result->stop = StopReason::MaxTokens;
      break;
    }
    const int token = s.sampler.sample(s.state.logits.get(), vocab, s.tokens.data(), n_context(),
                                       s.state.sampler_probs.data(), s.state.sampler_ids.data());
    s.logits_valid = false;  // the sampler modified them
    if (i == 0) stats.time_to_first_token = platform::now_seconds() - t_start;
    if (request.stop_at_eog && model.is_end_of_generation(token)) {
      result->stop = StopReason::EndOfGeneration;
      break;
    }
    result->tokens.push_back(token);
    stats.n_generated = i + 1;
    std::string_view piece = m.tokenizer.piece_text(token);
    if (i == 0 && strip_first_space && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);

    const bool room = n_context() < s.state.context;
    if (room && i + 1 < request.max_tokens) {
      // Feed the token back before reporting it, so the statistics include its cost.
      const double t0 = platform::now_seconds();
      forward(m, s.state, &token, 1, n_context(), nullptr);
      decode_seconds += platform::now_seconds() - t0;
      ++n_decoded;
      s.tokens.push_back(token);
      s.logits_valid = true;
    }
    stats.n_context = n_context();
    stats.generate_seconds = decode_seconds;
    stats.generate_tokens_per_second = decode_seconds > 0 ? n_decoded / decode_seconds : 0;
    stats.achieved_gbps = stats.generate_tokens_per_second * double(stats.weight_bytes_per_token) / 1e9;
    if (request.on_token) {
      TokenEvent ev{token, piece, &stats};
      if (!request.on_token(ev)) {
        result->stop = StopReason::Cancelled;
        break;
      }
    }
    if (request.cancel && request.cancel->load(std::memory_order_relaxed)) {
      result->stop = StopReason::Cancelled;
      break;
    }
    if (!room) {
      result->stop = StopReason::ContextFull;
      break;
    }
  }
  stats.n_context = n_context();
  return Status::ok();
}

}  // namespace magnetar
