// magnetar/tools.h: the engine's internals that the CLI's bench, info and synth need, behind the
// public API (compare_logits lives in model/compare.cpp). Thin: each function forwards to the
// layer that owns the work.
#include "magnetar/tools.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "convert/plan.h"
#include "core/bandwidth.h"
#include "core/platform.h"
#include "core/thread_pool.h"
#include "format/model_format.h"
#include "kernels/kernels.h"
#include "model/model_impl.h"
#include "model/synth.h"
#include "api/tokenizer_file.h"

namespace magnetar {

// ---- Clocks and cores -----------------------------------------------------------------------

double monotonic_seconds() { return platform::now_seconds(); }
double process_cpu_seconds() { return platform::process_cpu_seconds(); }
int physical_cores() { return platform::physical_cores(); }

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t m = values.size() / 2;
  return values.size() % 2 ? values[m] : 0.5 * (values[m - 1] + values[m]);
}

// ---- Kernel selection -----------------------------------------------------------------------

void select_kernels(KernelChoice choice) {
  const auto table_choice =
      choice == KernelChoice::Reference ? kernels::KernelChoice::Reference : kernels::KernelChoice::Asm;
  kernels::select(table_choice);
}

std::string active_kernel_isa() { return kernels::active().float_isa; }
std::string active_quant_kernel_isa() { return kernels::active().isa; }

// ---- Read bandwidth -------------------------------------------------------------------------

class ReadBandwidthProbe::Impl {
 public:
  explicit Impl(uint64_t buffer_bytes) : probe(buffer_bytes, kernels::streaming_read_loop(nullptr)) {}
  bandwidth::ReadProbe probe;
};

ReadBandwidthProbe::ReadBandwidthProbe(uint64_t buffer_bytes)
    : impl_(std::make_unique<Impl>(buffer_bytes)) {}
ReadBandwidthProbe::~ReadBandwidthProbe() = default;
bool ReadBandwidthProbe::ok() const { return impl_->probe.ok(); }
uint64_t ReadBandwidthProbe::buffer_bytes() const { return impl_->probe.buffer_bytes(); }
double ReadBandwidthProbe::measure(int threads) { return impl_->probe.measure(threads); }

// ---- Thread-pool latency --------------------------------------------------------------------

ThreadPoolLatency measure_thread_pool_latency(int threads) {
  ThreadPool pool(threads);
  ThreadPool::Job empty = [](void*, int, int) {};
  for (int i = 0; i < 200; ++i) pool.run(empty, nullptr);
  std::vector<double> hot;
  for (int i = 0; i < 2000; ++i) {
    const double t0 = platform::now_seconds();
    pool.run(empty, nullptr);
    hot.push_back((platform::now_seconds() - t0) * 1e6);
  }
  std::vector<double> cold;  // after 50 ms the workers have left their spin and sleep
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double t0 = platform::now_seconds();
    pool.run(empty, nullptr);
    cold.push_back((platform::now_seconds() - t0) * 1e6);
  }
  return {median(hot), median(cold)};
}

// ---- Model files ----------------------------------------------------------------------------

Status read_model_max_context(const std::string& path, int* max_context) {
  format::FileHeader header{};
  if (!platform::read_file_range(path, 0, &header, sizeof header) ||
      std::memcmp(header.magic, format::kMagic, sizeof header.magic) != 0 || header.max_context == 0 ||
      header.max_context > static_cast<uint32_t>(INT32_MAX))
    return Status::error(path + " is not a readable Magnetar model");
  *max_context = static_cast<int>(header.max_context);
  return Status::ok();
}

ModelDetails describe_model(const Model& model) {
  const Model::Impl& m = ModelInternals::impl(model);
  const Config& c = m.config;
  ModelDetails d;
  d.norm_eps = c.norm_eps;
  d.rope_theta = c.rope_theta;
  d.query_scale = c.query_scale;
  d.attn_softcap = c.attn_softcap;
  d.final_softcap = c.final_softcap;
  d.sliding_window = c.sliding_window;
  d.sliding_period = c.sliding_period;
  d.gelu_activation = c.activation == format::Activation::GeluTanh;
  d.tied_embeddings = c.tied_embeddings;
  const format::FileHeader& h = m.view.header;
  d.rope_local_theta = h.rope_local_theta;
  switch (static_cast<format::RopeScaling>(h.rope_scaling)) {
    case format::RopeScaling::None: break;
    case format::RopeScaling::Linear: d.rope_scaling = "linear"; break;
    case format::RopeScaling::Llama3: d.rope_scaling = "llama3"; break;
  }
  d.rope_scaling_factor = h.rope_scaling_factor;
  d.rope_low_freq_factor = h.rope_low_freq_factor;
  d.rope_high_freq_factor = h.rope_high_freq_factor;
  d.rope_original_context = int(h.rope_original_context);
  d.rope_freq_factors = m.weights.rope_freqs != nullptr;
  d.qkv_bias = c.qkv_bias;
  d.qk_norm = c.qk_norm;
  for (const auto& t : m.view.tensors)
    d.tensors.push_back({t.name, convert::weight_type_of(t.dtype), t.n_dims, t.rows, t.cols, t.bytes});
  d.tokenizer_pieces = m.tokenizer.vocab_size();
  d.tokenizer_bytes = m.view.tokenizer.size();
  d.tokenizer_kind = tokenizer_kind_name(m.tokenizer.kind());
  return d;
}

std::string vocabulary_piece(const Model& model, int token) {
  return ModelInternals::impl(model).tokenizer.piece_string(token);
}

// ---- Synthetic models -----------------------------------------------------------------------

std::vector<std::string> synthetic_model_names() {
  std::vector<std::string> names;
  for (const auto& s : synth::known_specs()) names.push_back(s.name);
  return names;
}

namespace {

// The named spec, cut to its first `n_layers` layers when 0 < n_layers.
Status synthetic_spec(const std::string& like, int n_layers, synth::Spec* out) {
  const synth::Spec* spec = synth::find_spec(like);
  if (!spec) return Status::error("no synthetic model is named '" + like + "'");
  if (n_layers < 0 || n_layers > spec->n_layers)
    return Status::error(like + " has " + std::to_string(spec->n_layers) + " layers; " +
                         std::to_string(n_layers) + " cannot be kept");
  *out = *spec;
  if (n_layers > 0) out->n_layers = n_layers;
  return Status::ok();
}

}  // namespace

uint64_t synthetic_parameter_count(const std::string& like, int n_layers) {
  synth::Spec spec;
  return synthetic_spec(like, n_layers, &spec) ? synth::parameter_count(spec) : 0;
}

Status write_synthetic_model(const std::string& like, const SynthOptions& options,
                             const std::string& path, uint64_t* file_bytes) {
  synth::Spec spec;
  MAGNETAR_TRY(synthetic_spec(like, options.n_layers, &spec));
  synth::Options o;
  format::QuantMix mix;
  if (convert::weight_mix_for(options.weight_type, &mix))
    o.mix = mix;
  else
    MAGNETAR_TRY(convert::weight_dtype_for(options.weight_type, &o.dtype));
  o.seed = options.seed;
  o.threads = options.threads;
  o.on_progress = options.on_progress;
  o.cancel = options.cancel;
  MAGNETAR_TRY(synth::write_model(spec, o, path));
  if (file_bytes && !platform::file_size(path, file_bytes)) *file_bytes = 0;
  return Status::ok();
}

struct StandaloneTokenizer::Impl {
  Tokenizer tokenizer;
};

StandaloneTokenizer::StandaloneTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StandaloneTokenizer::~StandaloneTokenizer() = default;

Status StandaloneTokenizer::open(const std::string& path, std::unique_ptr<StandaloneTokenizer>* out) {
  auto impl = std::make_unique<Impl>();
  MAGNETAR_TRY(load_tokenizer_file(path, &impl->tokenizer));
  out->reset(new StandaloneTokenizer(std::move(impl)));
  return Status::ok();
}

Status StandaloneTokenizer::encode(std::string_view text, bool parse_special, std::vector<int>* ids) const {
  return parse_special ? impl_->tokenizer.encode_with_special(text, ids) : impl_->tokenizer.encode(text, ids);
}
std::string StandaloneTokenizer::decode(const std::vector<int>& ids) const { return impl_->tokenizer.decode(ids); }
std::string StandaloneTokenizer::piece(int id) const { return impl_->tokenizer.piece_string(id); }
bool StandaloneTokenizer::is_special(int id) const { return impl_->tokenizer.is_special(id); }
int StandaloneTokenizer::vocab_size() const { return impl_->tokenizer.vocab_size(); }
const char* StandaloneTokenizer::kind_name() const { return tokenizer_kind_name(impl_->tokenizer.kind()); }

}  // namespace magnetar
