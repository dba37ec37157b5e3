// Planning the conversion of a llama2.c checkpoint (legacy v0 layout): seven int32 header fields
// (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; vocab_size > 0 means the
// classifier is tied to the embedding), then float32 tensors in this order:
//   token_embedding [vocab, dim], rms_att [L, dim], wq [L, dim, dim], wk [L, kv_dim, dim],
//   wv [L, kv_dim, dim], wo [L, dim, dim], rms_ffn [L, dim], w1 (gate) [L, hidden, dim],
//   w2 (down) [L, dim, hidden], w3 (up) [L, hidden, dim], rms_final [dim],
//   freq_cis_real [seq_len, head_size/2], freq_cis_imag [same], (wcls [vocab, dim] if untied).
// q/k rows are in Meta's interleaved RoPE layout and are permuted to rotate-half while converting.
// The tokenizer is tokenizer.model / tok<vocab>.model (SentencePiece) or a llama2.c tok<vocab>.bin,
// which is turned into a SentencePiece model.
#include <cmath>
#include <cstring>

#include "convert/input_file.h"
#include "convert/plan.h"
#include "convert/tokenizer_files.h"
#include "magnetar/engine.h"
#include "tokenizer/sentencepiece_proto.h"

namespace magnetar::convert {

namespace {

constexpr uint32_t kLlama2cMagic = 0x616b3432;  // "ak42": versioned exports (v1, v2, ...)

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The tokenizer as SentencePiece model bytes, from an explicit path or found beside the checkpoint.
Status load_llama2c_tokenizer(const std::string& checkpoint, const std::string& explicit_path,
                              int vocab_size, std::string* model_bytes, std::string* used_path) {
  std::string path = explicit_path;
  if (path.empty()) {
    const std::string dir = parent_dir(checkpoint);
    const std::string v = std::to_string(vocab_size);
    for (const std::string& name : {std::string("tokenizer.model"), "tok" + v + ".model",
                                    "tok" + v + ".bin"}) {
      if (is_regular_file(join_path(dir, name))) {
        path = join_path(dir, name);
        break;
      }
    }
    if (path.empty())
      return Status::error(checkpoint + ": no tokenizer found beside it (looked for "
                           "tokenizer.model, tok" + v + ".model, tok" + v +
                           ".bin); pass one with --tokenizer PATH");
  } else if (!is_regular_file(path)) {
    return Status::error(path + ": tokenizer not found");
  }
  *used_path = path;
  std::string bytes;
  MAGNETAR_TRY(read_small_file(path, 256ull << 20, &bytes));
  if (ends_with(path, ".bin")) {
    spm::ModelSpec spec;
    MAGNETAR_TRY(spm::llama2c_vocab_to_spec(bytes, path, &spec));
    Status s = spm::build_sentencepiece_model(spec, model_bytes);
    return s.with_context(path);
  }
  *model_bytes = std::move(bytes);
  return Status::ok();
}

}  // namespace

Status plan_llama2c(const std::string& checkpoint, const std::string& tokenizer_path,
                    ConversionPlan* plan) {
  *plan = ConversionPlan{};
  plan->kind = "llama2.c checkpoint";
  plan->architecture = "LlamaForCausalLM";
  InputFile f;
  MAGNETAR_TRY(f.open(checkpoint));
  plan->source_bytes = f.size();
  int32_t hp[7];
  if (f.size() < sizeof(hp))
    return Status::error(checkpoint + ": truncated: too short for a llama2.c header");
  MAGNETAR_TRY(f.read_at(0, hp, sizeof(hp)));
  uint32_t magic;
  std::memcpy(&magic, hp, 4);
  if (magic == kLlama2cMagic)
    return Status::error(checkpoint + ": a versioned llama2.c export (version " +
                         std::to_string(hp[1]) + "); only the legacy version-0 layout is "
                         "supported (export.py --version 0)");
  const int64_t dim = hp[0], hidden = hp[1], n_layers = hp[2], n_heads = hp[3],
                n_kv_heads = hp[4], seq_len = hp[6];
  const bool tied = hp[5] > 0;
  const int64_t vocab = hp[5] > 0 ? hp[5] : -static_cast<int64_t>(hp[5]);
  auto bad = [&](const std::string& what) {
    return Status::error(checkpoint + ": not a llama2.c checkpoint (" + what + ")");
  };
  if (dim <= 0 || dim > (1 << 16)) return bad("dim " + std::to_string(dim));
  if (hidden <= 0 || hidden > (1 << 18)) return bad("hidden_dim " + std::to_string(hidden));
  if (n_layers <= 0 || n_layers > 1024) return bad("n_layers " + std::to_string(n_layers));
  if (n_heads <= 0 || dim % n_heads != 0 || (dim / n_heads) % 2 != 0)
    return bad("n_heads " + std::to_string(n_heads) + " for dim " + std::to_string(dim));
  if (n_kv_heads <= 0 || n_heads % n_kv_heads != 0)
    return bad("n_kv_heads " + std::to_string(n_kv_heads));
  if (vocab <= 0 || vocab > (1 << 24)) return bad("vocab_size " + std::to_string(hp[5]));
  if (seq_len <= 0 || seq_len > (1 << 24)) return bad("seq_len " + std::to_string(seq_len));

  const uint64_t D = dim, F = hidden, L = n_layers, V = vocab;
  const uint64_t head_dim = D / n_heads, kv_dim = head_dim * n_kv_heads;
  const uint64_t floats = V * D + L * D + L * D * D + 2 * L * kv_dim * D + L * D * D + L * D +
                          3 * L * F * D + D + 2 * seq_len * (head_dim / 2) + (tied ? 0 : V * D);
  const uint64_t expected = sizeof(hp) + floats * 4;
  if (f.size() < expected)
    return Status::error(checkpoint + ": truncated: the header describes " +
                         std::to_string(expected) + " bytes but the file has " +
                         std::to_string(f.size()));
  if (f.size() > expected)
    return Status::error(checkpoint + ": " + std::to_string(f.size() - expected) +
                         " bytes more than its header describes (not a legacy llama2.c checkpoint?)");

  format::FileHeader& h = plan->header;
  h.architecture = static_cast<uint32_t>(Architecture::Llama);
  h.flags = format::kFlagAddBos;
  if (tied) h.flags |= format::kFlagTiedEmbeddings;
  h.n_layers = static_cast<uint32_t>(L);
  h.dim = static_cast<uint32_t>(D);
  h.hidden_dim = static_cast<uint32_t>(F);
  h.n_heads = static_cast<uint32_t>(n_heads);
  h.n_kv_heads = static_cast<uint32_t>(n_kv_heads);
  h.head_dim = static_cast<uint32_t>(head_dim);
  h.vocab_size = static_cast<uint32_t>(V);
  h.max_context = static_cast<uint32_t>(seq_len);
  h.activation = static_cast<uint32_t>(format::Activation::Silu);
  h.chat_template_kind = static_cast<uint32_t>(ChatTemplate::None);
  h.norm_eps = 1e-5f;      // llama2.c's rmsnorm constant
  h.rope_theta = 10000.0f;  // llama2.c's RoPE base
  h.query_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));

  // Byte offsets of each llama2.c array.
  uint64_t pos = sizeof(hp);
  auto take = [&](uint64_t n_floats) {
    uint64_t at = pos;
    pos += n_floats * 4;
    return at;
  };
  const uint64_t tok = take(V * D), rms_att = take(L * D), wq = take(L * D * D),
                 wk = take(L * kv_dim * D), wv = take(L * kv_dim * D), wo = take(L * D * D),
                 rms_ffn = take(L * D), w1 = take(L * F * D), w2 = take(L * D * F),
                 w3 = take(L * F * D), rms_final = take(D);
  take(2 * seq_len * (head_dim / 2));  // freq_cis_real, freq_cis_imag: recomputed by the engine
  const uint64_t wcls = tied ? 0 : take(V * D);

  auto range = [&](const std::string& name, uint64_t offset, uint64_t rows, uint64_t cols,
                   uint64_t rope_heads = 0) {
    SourceRange r;
    r.file = checkpoint;
    r.name = name;
    r.offset = offset;
    r.dtype = SourceDType::F32;
    r.rows = rows;
    r.cols = cols;
    r.interleaved_rope_heads = rope_heads;
    return r;
  };
  auto add = [&](const std::string& name, int n_dims, std::vector<SourceRange> parts) {
    PlannedTensor t;
    t.name = name;
    t.n_dims = n_dims;
    t.is_norm = n_dims == 1;
    t.cols = parts[0].cols;
    t.rows = 0;
    for (const SourceRange& r : parts) t.rows += r.rows;
    t.parts = std::move(parts);
    plan->tensors.push_back(std::move(t));
  };
  add("tok_embeddings", 2, {range("token_embedding_table", tok, V, D)});
  for (uint64_t l = 0; l < L; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    std::string s = "[";  // built in steps: GCC 12 warns falsely (-Wrestrict) on "[" + x + "]"
    s += std::to_string(l);
    s += ']';
    add(p + "attn_norm", 1, {range("rms_att_weight" + s, rms_att + l * D * 4, 1, D)});
    add(p + "wqkv", 2,
        {range("wq" + s, wq + l * D * D * 4, D, D, static_cast<uint64_t>(n_heads)),
         range("wk" + s, wk + l * kv_dim * D * 4, kv_dim, D, static_cast<uint64_t>(n_kv_heads)),
         range("wv" + s, wv + l * kv_dim * D * 4, kv_dim, D)});
    add(p + "wo", 2, {range("wo" + s, wo + l * D * D * 4, D, D)});
    add(p + "ffn_norm", 1, {range("rms_ffn_weight" + s, rms_ffn + l * D * 4, 1, D)});
    add(p + "w_gate_up", 2, {range("w1" + s, w1 + l * F * D * 4, F, D),
                             range("w3" + s, w3 + l * F * D * 4, F, D)});
    add(p + "w_down", 2, {range("w2" + s, w2 + l * D * F * 4, D, F)});
  }
  add("output_norm", 1, {range("rms_final_weight", rms_final, 1, D)});
  if (!tied) add("output", 2, {range("wcls", wcls, V, D)});
  for (const PlannedTensor& t : plan->tensors)
    for (const SourceRange& r : t.parts) plan->bytes_to_read += r.bytes();

  std::string used_tokenizer;
  MAGNETAR_TRY(load_llama2c_tokenizer(checkpoint, tokenizer_path, static_cast<int>(V),
                                      &plan->tokenizer, &used_tokenizer));
  VocabInfo info;
  MAGNETAR_TRY(inspect_sentencepiece(plan->tokenizer, used_tokenizer, {}, &info));
  if (info.n_pieces != static_cast<int>(V))
    return Status::error(used_tokenizer + ": has " + std::to_string(info.n_pieces) +
                         " tokens but " + checkpoint + " has vocab_size " + std::to_string(V));
  if (info.bos_id < 0 || info.eos_id < 0)
    return Status::error(used_tokenizer + ": no <s> / </s> pieces for BOS and EOS");
  h.bos_id = info.bos_id;
  h.n_eog_ids = 1;
  h.eog_ids[0] = info.eos_id;
  return Status::ok();
}

}  // namespace magnetar::convert
