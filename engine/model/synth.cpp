// Synthetic model files (see synth.h): published shapes, seeded noise, written atomically.
#include "model/synth.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "format/architecture.h"
#include "kernels/kernels.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"
#include "kernels/type_traits.h"
#include "ops/parallel_quantize.h"
#include "tokenizer/sentencepiece_proto.h"

namespace magnetar::synth {

// ---- Known shapes ---------------------------------------------------------------------------
// From each model's published config.json (Hugging Face) or llama2.c's export settings.

const std::vector<Spec>& known_specs() {
  static const std::vector<Spec> specs = [] {
    std::vector<Spec> v;
    Spec gemma;
    gemma.arch = Architecture::Gemma;
    gemma.activation = format::Activation::GeluTanh;
    gemma.norm_eps = 1e-6f;
    gemma.rope_theta = 10000.0f;
    gemma.tied_embeddings = true;
    gemma.chat_template = ChatTemplate::Gemma;
    gemma.vocab_size = 256000;
    gemma.max_context = 8192;
    gemma.head_dim = 256;

    Spec g2b = gemma;  // google/gemma-2b
    g2b.name = "gemma-2b";
    g2b.dim = 2048, g2b.n_layers = 18, g2b.n_heads = 8, g2b.n_kv_heads = 1;
    g2b.hidden_dim = 16384;
    v.push_back(g2b);

    Spec g7b = gemma;  // google/gemma-7b: query width 16 x 256 = 4096 differs from dim 3072
    g7b.name = "gemma-7b";
    g7b.dim = 3072, g7b.n_layers = 28, g7b.n_heads = 16, g7b.n_kv_heads = 16;
    g7b.hidden_dim = 24576;
    v.push_back(g7b);

    Spec llama;
    llama.arch = Architecture::Llama;
    llama.activation = format::Activation::Silu;
    llama.vocab_size = 32000;
    llama.rope_theta = 10000.0f;

    Spec l7b = llama;  // meta-llama/Llama-2-7b-hf
    l7b.name = "llama-2-7b";
    l7b.dim = 4096, l7b.n_layers = 32, l7b.n_heads = 32, l7b.n_kv_heads = 32, l7b.head_dim = 128;
    l7b.hidden_dim = 11008, l7b.max_context = 4096, l7b.norm_eps = 1e-5f;
    v.push_back(l7b);

    Spec tiny = llama;  // TinyLlama/TinyLlama-1.1B-Chat-v1.0
    tiny.name = "tinyllama-1.1b";
    tiny.dim = 2048, tiny.n_layers = 22, tiny.n_heads = 32, tiny.n_kv_heads = 4, tiny.head_dim = 64;
    tiny.hidden_dim = 5632, tiny.max_context = 2048, tiny.norm_eps = 1e-5f;
    v.push_back(tiny);

    Spec llama3 = llama;  // meta-llama/Llama-3.2-1B: llama3 RoPE scaling, tied
    llama3.name = "llama-3.2-1b";
    llama3.dim = 2048, llama3.n_layers = 16, llama3.n_heads = 32, llama3.n_kv_heads = 8;
    llama3.head_dim = 64, llama3.hidden_dim = 8192, llama3.vocab_size = 128256;
    llama3.max_context = 131072, llama3.rope_theta = 500000.0f, llama3.tied_embeddings = true;
    llama3.rope_scaling = format::RopeScaling::Llama3, llama3.rope_scaling_factor = 32.0f;
    llama3.rope_low_freq_factor = 1.0f, llama3.rope_high_freq_factor = 4.0f;
    llama3.rope_original_context = 8192;
    v.push_back(llama3);

    Spec l8b = llama3;  // meta-llama/Llama-3.1-8B
    l8b.name = "llama-3.1-8b";
    l8b.dim = 4096, l8b.n_layers = 32, l8b.n_heads = 32, l8b.n_kv_heads = 8, l8b.head_dim = 128;
    l8b.hidden_dim = 14336, l8b.tied_embeddings = false, l8b.rope_scaling_factor = 8.0f;
    v.push_back(l8b);

    Spec qwen25 = llama;  // Qwen/Qwen2.5-1.5B-Instruct: q/k/v biases, tied
    qwen25.name = "qwen2.5-1.5b";
    qwen25.arch = Architecture::Qwen2;
    qwen25.dim = 1536, qwen25.n_layers = 28, qwen25.n_heads = 12, qwen25.n_kv_heads = 2;
    qwen25.head_dim = 128, qwen25.hidden_dim = 8960, qwen25.vocab_size = 151936;
    qwen25.max_context = 32768, qwen25.norm_eps = 1e-6f, qwen25.rope_theta = 1e6f;
    qwen25.tied_embeddings = true;
    v.push_back(qwen25);

    Spec qwen3 = qwen25;  // Qwen/Qwen3-1.7B: per-head q/k norms
    qwen3.name = "qwen3-1.7b";
    qwen3.arch = Architecture::Qwen3;
    qwen3.dim = 2048, qwen3.n_layers = 28, qwen3.n_heads = 16, qwen3.n_kv_heads = 8;
    qwen3.head_dim = 128, qwen3.hidden_dim = 6144, qwen3.max_context = 40960;
    v.push_back(qwen3);

    Spec g3 = gemma;  // google/gemma-3-1b-it: 5 of 6 layers slide over 512 tokens
    g3.name = "gemma-3-1b";
    g3.arch = Architecture::Gemma3;
    g3.dim = 1152, g3.n_layers = 26, g3.n_heads = 4, g3.n_kv_heads = 1, g3.head_dim = 256;
    g3.hidden_dim = 6912, g3.vocab_size = 262144, g3.max_context = 32768, g3.rope_theta = 1e6f;
    g3.rope_local_theta = 10000.0f, g3.query_pre_attn_scalar = 256;
    g3.sliding_window = 512, g3.sliding_period = 6;
    v.push_back(g3);

    // microsoft/Phi-3.5-mini-instruct. Its longrope per-frequency factors change the RoPE
    // table's values only, not the work per token: left out.
    Spec phi = llama;
    phi.name = "phi-3.5-mini";
    phi.arch = Architecture::Phi3;
    phi.dim = 3072, phi.n_layers = 32, phi.n_heads = 32, phi.n_kv_heads = 32, phi.head_dim = 96;
    phi.hidden_dim = 8192, phi.vocab_size = 32064, phi.max_context = 131072;
    v.push_back(phi);

    Spec s15 = llama;  // llama2.c stories15M: classifier shared with the embedding
    s15.name = "stories15M";
    s15.dim = 288, s15.n_layers = 6, s15.n_heads = 6, s15.n_kv_heads = 6, s15.head_dim = 48;
    s15.hidden_dim = 768, s15.max_context = 256, s15.norm_eps = 1e-5f;
    s15.tied_embeddings = true;
    v.push_back(s15);
    return v;
  }();
  return specs;
}

const Spec* find_spec(std::string_view name) {
  for (const auto& s : known_specs())
    if (s.name == name) return &s;
  return nullptr;
}

SpecialIds special_ids(const Spec& spec) {
  SpecialIds ids;
  if (format::find_architecture(spec.arch)->norm_plus_one) {
    // Gemma's layout: pad 0, eos 1, bos 2, unk 3, <mask> 4, unused 5..105, turn markers.
    ids.pad = 0, ids.eos = 1, ids.bos = 2, ids.unk = 3;
    ids.start_of_turn = 106, ids.end_of_turn = 107;
    ids.first_byte = 108;
  } else {
    ids.unk = 0, ids.bos = 1, ids.eos = 2, ids.first_byte = 3;  // Llama / SentencePiece default
  }
  return ids;
}

// ---- Header and tensor table ----------------------------------------------------------------

// What the published instruction-tuned models ship in tokenizer_config.json (Gemma's is
// google/gemma-*-it's); base models ship none.
std::string chat_template_text(ChatTemplate kind) {
  if (kind != ChatTemplate::Gemma) return "";
  return "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
         "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
         "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
         "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% "
         "set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' "
         "+ role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if "
         "add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}";
}

format::FileHeader make_header(const Spec& spec) {
  format::FileHeader h{};
  const format::ArchitectureTraits& arch = *format::find_architecture(spec.arch);
  h.architecture = static_cast<uint32_t>(spec.arch);
  h.flags = format::kFlagAddBos;
  if (spec.tied_embeddings) h.flags |= format::kFlagTiedEmbeddings;
  if (arch.embed_scale) h.flags |= format::kFlagEmbedScaleSqrtDim;
  if (arch.sandwich_norms) h.flags |= format::kFlagPostNorms;
  h.n_layers = static_cast<uint32_t>(spec.n_layers);
  h.dim = static_cast<uint32_t>(spec.dim);
  h.hidden_dim = static_cast<uint32_t>(spec.hidden_dim);
  h.n_heads = static_cast<uint32_t>(spec.n_heads);
  h.n_kv_heads = static_cast<uint32_t>(spec.n_kv_heads);
  h.head_dim = static_cast<uint32_t>(spec.head_dim);
  h.vocab_size = static_cast<uint32_t>(spec.vocab_size);
  h.max_context = static_cast<uint32_t>(spec.max_context);
  h.activation = static_cast<uint32_t>(spec.activation);
  h.chat_template_kind = static_cast<uint32_t>(spec.chat_template);
  h.norm_eps = spec.norm_eps;
  h.rope_theta = spec.rope_theta;
  h.query_scale = 1.0f / std::sqrt(static_cast<float>(spec.query_pre_attn_scalar > 0 ? spec.query_pre_attn_scalar
                                                                                    : spec.head_dim));
  h.sliding_window = static_cast<uint32_t>(spec.sliding_window);
  h.sliding_window_period = static_cast<uint32_t>(spec.sliding_period);
  h.rope_local_theta = spec.rope_local_theta;
  h.rope_scaling = static_cast<uint32_t>(spec.rope_scaling);
  h.rope_scaling_factor = spec.rope_scaling_factor;
  h.rope_low_freq_factor = spec.rope_low_freq_factor;
  h.rope_high_freq_factor = spec.rope_high_freq_factor;
  h.rope_original_context = static_cast<uint32_t>(spec.rope_original_context);
  const SpecialIds ids = special_ids(spec);
  h.bos_id = ids.bos;
  h.n_eog_ids = 0;
  h.eog_ids[h.n_eog_ids++] = ids.eos;
  if (ids.end_of_turn >= 0) h.eog_ids[h.n_eog_ids++] = ids.end_of_turn;
  return h;
}

std::vector<format::TensorDecl> tensor_decls(const Spec& spec, format::DType dtype,
                                             std::optional<format::QuantMix> mix) {
  const format::FileHeader h = make_header(spec);
  const format::MixModel model = format::mix_model_of(h);
  std::vector<format::TensorDecl> decls;
  for (const format::TensorSpec& t : format::model_tensors(h)) {
    if (t.n_dims == 1 || !mix) {
      decls.push_back({t.name, t.n_dims == 1 ? format::DType::F32 : dtype, t.rows, t.cols, t.n_dims});
      continue;
    }
    // The parts a Hugging Face folder of this model would give (what the converter types).
    const std::vector<format::SourcePart> parts =
        format::tensor_sources(*format::find_architecture(spec.arch), h, t, format::SourceFormat::HuggingFace);
    std::vector<format::DType> types;
    for (size_t i = 0; i < parts.size(); ++i)
      types.push_back(format::mix_tensor_type(*mix, model, t.name, i, parts.size(), t.cols));
    const std::vector<std::string> names = format::fused_parts(t.name);
    const bool split = names.size() == parts.size() &&
                       std::any_of(types.begin(), types.end(), [&](format::DType d) { return d != types[0]; });
    if (!split) {
      decls.push_back({t.name, types[0], t.rows, t.cols, t.n_dims});
      continue;
    }
    for (size_t i = 0; i < parts.size(); ++i) decls.push_back({names[i], types[i], parts[i].rows, t.cols, 2});
  }
  return decls;
}

uint64_t parameter_count(const Spec& spec) {
  uint64_t n = 0;
  for (const auto& d : tensor_decls(spec, format::DType::F32)) n += d.rows * d.cols;
  return n;
}

// ---- Vocabulary -----------------------------------------------------------------------------

Status vocabulary_proto(const Spec& spec, std::string* out) {
  using spm::PieceType;
  const SpecialIds ids = special_ids(spec);
  const bool gemma_names = ids.pad >= 0;
  spm::ModelSpec model;
  model.pieces.resize(static_cast<size_t>(spec.vocab_size));
  model.unk_id = ids.unk, model.bos_id = ids.bos, model.eos_id = ids.eos, model.pad_id = ids.pad;
  model.add_dummy_prefix = !gemma_names;  // Gemma's tokenizer has no dummy prefix
  int next_filler = 0;
  for (int id = 0; id < spec.vocab_size; ++id) {
    static const char kHex[] = "0123456789ABCDEF";
    spm::VocabPiece& p = model.pieces[static_cast<size_t>(id)];
    const int byte = id - ids.first_byte;
    p.type = PieceType::Control;
    if (id == ids.unk) p.piece = "<unk>", p.type = PieceType::Unknown;
    else if (id == ids.bos) p.piece = gemma_names ? "<bos>" : "<s>";
    else if (id == ids.eos) p.piece = gemma_names ? "<eos>" : "</s>";
    else if (id == ids.pad) p.piece = "<pad>";
    else if (id == ids.start_of_turn) p.piece = "<start_of_turn>", p.type = PieceType::UserDefined;
    else if (id == ids.end_of_turn) p.piece = "<end_of_turn>", p.type = PieceType::UserDefined;
    else if (byte >= 0 && byte < 256)
      p.piece = std::string("<0x") + kHex[byte >> 4] + kHex[byte & 15] + ">",
      p.type = PieceType::Byte;
    else if (id < ids.first_byte)  // Gemma's reserved range (<mask>, unused slots)
      p.piece = "<unused" + std::to_string(id) + ">";
    else {
      // Distinct filler pieces "▁s<n>" with falling scores.
      p.piece = "\xE2\x96\x81s" + std::to_string(next_filler);
      p.type = PieceType::Normal;
      p.score = -static_cast<float>(++next_filler);
    }
  }
  return spm::build_sentencepiece_model(model, out);
}

// ---- Noise ----------------------------------------------------------------------------------

namespace {

// Counter-based generator: word w of tensor t depends only on (seed, t, w), so any chunking of
// a tensor gives the same bytes.
inline uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t stream_key(uint64_t seed, uint64_t tensor_index) {
  return mix(mix(seed) ^ (tensor_index * 0xD1B54A32D192ED03ull));
}

// u in [0, 65536) -> the midpoint of bucket u of [-1, 1].
inline float unit(uint32_t u) { return (static_cast<float>(u) + 0.5f) / 32768.0f - 1.0f; }

}  // namespace

void fill_f16(uint64_t seed, uint64_t tensor_index, float scale, uint64_t first, uint64_t count,
              uint16_t* out) {
  // Each 16-bit random value picks one of 65536 evenly spaced levels, pre-converted to FP16.
  std::unique_ptr<uint16_t[]> levels(new uint16_t[65536]);
  for (uint32_t u = 0; u < 65536; ++u) levels[u] = kernels::f32_to_f16_scalar(scale * unit(u));
  const uint64_t key = stream_key(seed, tensor_index);
  uint64_t word = mix(key + first / 4);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t e = first + i;
    if (e % 4 == 0) word = mix(key + e / 4);  // four values per 64-bit word
    out[i] = levels[(word >> (16 * (e % 4))) & 0xFFFF];
  }
}

void fill_f32(uint64_t seed, uint64_t tensor_index, float scale, uint64_t first, uint64_t count,
              float* out) {
  const uint64_t key = stream_key(seed, tensor_index);
  uint64_t word = mix(key + first / 4);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t e = first + i;
    if (e % 4 == 0) word = mix(key + e / 4);
    out[i] = scale * unit(static_cast<uint32_t>((word >> (16 * (e % 4))) & 0xFFFF));
  }
}

// ---- Writing --------------------------------------------------------------------------------

Status write_model(const Spec& spec, const Options& options, const std::string& path) {
  if (!options.mix && format::dtype_is_quantized(options.dtype) &&
      quant::type_traits(options.dtype).quantize_row == nullptr)
    return Status::error(std::string("synthetic models are F16, F32 or a type Magnetar quantizes to, not ") +
                         format::dtype_name(options.dtype));
  const std::vector<format::TensorDecl> decls = tensor_decls(spec, options.dtype, options.mix);
  for (const auto& d : decls)
    if (!format::dtype_fits_cols(d.dtype, d.cols))
      return Status::error(d.name + ": rows are not whole " + std::to_string(format::dtype_layout(d.dtype).block_elements) +
                           "-blocks, cannot be " + format::dtype_name(d.dtype));
  std::string vocabulary;
  MAGNETAR_TRY(vocabulary_proto(spec, &vocabulary).with_context("synthetic vocabulary"));
  std::unique_ptr<format::ModelWriter> writer;
  MAGNETAR_TRY(format::ModelWriter::create(path, make_header(spec), decls, vocabulary,
                                           chat_template_text(spec.chat_template), &writer));
  uint64_t total = 0, done = 0;
  for (const auto& d : decls) total += format::tensor_bytes(d.dtype, d.rows, d.cols);

  // Streamed in parts of kChunkValues values: memory stays a few MiB whatever the model size.
  constexpr uint64_t kChunkValues = uint64_t(4) << 20;
  std::vector<float> f32(kChunkValues);
  std::vector<uint16_t> f16(kChunkValues);
  std::vector<uint8_t> blocks;  // quantized chunk: kChunkValues is whole blocks of every type
  static_assert(kChunkValues % quant::kSuperBlock == 0, "chunks hold whole quant blocks");
  ThreadPool pool(options.threads > 0 ? options.threads : ThreadPool::default_threads());
  for (size_t t = 0; t < decls.size(); ++t) {
    const format::TensorDecl& d = decls[t];
    const uint64_t count = d.rows * d.cols;
    // Matrices: uniform in ±1/sqrt(cols), so each output of a matrix-vector product stays O(|x|).
    // Norm multipliers: ones, so activations keep a sane scale through the layers.
    const float scale = 1.0f / std::sqrt(static_cast<float>(d.cols));
    for (uint64_t first = 0; first < count; first += kChunkValues) {
      if (options.cancel && options.cancel->load(std::memory_order_relaxed))
        return Status::error("cancelled: " + path + " was not written");
      const uint64_t n = std::min(kChunkValues, count - first);
      const void* data = nullptr;
      uint64_t bytes = 0;
      if (d.n_dims == 1) {
        std::fill(f32.begin(), f32.begin() + static_cast<ptrdiff_t>(n), 1.0f);
        data = f32.data(), bytes = n * sizeof(float);
      } else if (d.dtype == format::DType::F16) {
        fill_f16(options.seed, t, scale, first, n, f16.data());
        data = f16.data(), bytes = n * sizeof(uint16_t);
      } else if (format::dtype_is_quantized(d.dtype)) {
        fill_f32(options.seed, t, scale, first, n, f32.data());
        bytes = format::tensor_bytes(d.dtype, 1, n);
        blocks.resize(bytes);
        ops::quantize_parallel(pool, d.dtype, f32.data(), n, blocks.data());
        data = blocks.data();
      } else {
        fill_f32(options.seed, t, scale, first, n, f32.data());
        data = f32.data(), bytes = n * sizeof(float);
      }
      const uint64_t offset = format::tensor_bytes(d.dtype, 1, first);
      MAGNETAR_TRY(writer->write_tensor_part(t, offset, data, bytes).with_context(d.name));
      done += bytes;
      if (options.on_progress) options.on_progress(done, total);
    }
  }
  return writer->commit();
}

}  // namespace magnetar::synth
