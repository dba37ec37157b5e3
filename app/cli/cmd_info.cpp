// `magnetar-cli info`: what a model file holds — header, tensors, sizes, tokenizer, template.
#include <cstdio>
#include <iostream>
#include <map>

#include "cli.h"
#include "magnetar/tools.h"
#include "magnetar/tuning.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

int info_command(const std::vector<std::string>& argv);

const Command kInfo{"info", "describe a model file",
                    "magnetar-cli info -m MODEL [--tensors]", info_command};
const CommandRegistration kRegistration(kInfo);

std::string mib(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f MiB", double(bytes) / (1 << 20));
  return b;
}

bool is_block_quantized(WeightType t) { return t != WeightType::F32 && t != WeightType::F16 && t != WeightType::Auto; }

// "q8_0 36 (1.2 MiB), f32 11 (0.0 MiB)": how many tensors, and bytes, of each type; then the
// embedding table's and LM head's types (convert --output-dtype sets them apart).
void print_type_summary(const std::vector<TensorSummary>& tensors) {
  std::map<std::string, std::pair<int, uint64_t>> by_type;  // type name -> (tensors, bytes)
  for (const auto& t : tensors) {
    auto& entry = by_type[weight_type_name(t.type)];
    entry.first += 1;
    entry.second += t.bytes;
  }
  std::printf("tensor types    ");
  const char* separator = "";
  for (const auto& [name, entry] : by_type) {
    std::printf("%s%s %d (%s)", separator, name.c_str(), entry.first, mib(entry.second).c_str());
    separator = ", ";
  }
  std::printf("\n");
  const TensorSummary *embeddings = nullptr, *head = nullptr;
  for (const auto& t : tensors) {
    if (t.name == "tok_embeddings") embeddings = &t;
    if (t.name == "output") head = &t;
  }
  if (embeddings)
    std::printf("embeddings      %s, LM head %s\n", weight_type_name(embeddings->type),
                head ? weight_type_name(head->type) : "tied (the same table)");
}

// A quantized conversion keeps matrices whose rows are not whole 32-blocks in F16: name them.
void print_kept_f16(const std::vector<TensorSummary>& tensors) {
  bool any_quantized = false;
  for (const auto& t : tensors) any_quantized |= is_block_quantized(t.type);
  if (!any_quantized) return;
  std::string names;
  for (const auto& t : tensors)
    if (t.type == WeightType::F16 && t.n_dims == 2 && t.cols % 32 != 0)
      names += (names.empty() ? "" : ", ") + t.name;
  if (!names.empty()) std::printf("kept f16        %s (rows not whole 32-blocks)\n", names.c_str());
}

// "18 matrices in 2048-column stripes, 0 in x16 tiles" (read mode lays them out at load).
std::string describe_layouts(const ModelInfo& i) {
  if (i.striped_matrices == 0 && i.tiled_matrices == 0) return "plain (row-major, as in the file)";
  std::string s;
  if (i.striped_matrices > 0)
    s = std::to_string(i.striped_matrices) + " matrices in " + std::to_string(i.stripe_cols) + "-column stripes";
  if (i.tiled_matrices > 0) s += (s.empty() ? "" : ", ") + std::to_string(i.tiled_matrices) + " in x16 tiles";
  return s;
}

int info_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  Args args;
  if (int bad = parse_command_line(kInfo, argv, value_options, {"--tensors"}, true, &args)) return bad;
  int exit_code = 0;
  std::unique_ptr<Model> model;
  if (!load_model_from_args(kInfo, args, &model, &exit_code)) return exit_code;
  const ModelInfo& i = model->info();
  const ModelDetails c = describe_model(*model);
  std::printf("file            %s (%s)\n", i.path.c_str(), mib(i.file_bytes).c_str());
  std::printf("architecture    %s (%s)\n", architecture_name(i.arch), architecture_display_name(i.arch));
  std::printf("parameters      %.2f M\n", double(i.n_params) / 1e6);
  std::printf("layers          %d\n", i.n_layers);
  std::printf("dim / ffn       %d / %d\n", i.dim, i.hidden_dim);
  std::printf("heads           %d query, %d key/value, head_dim %d\n", i.n_heads, i.n_kv_heads, i.head_dim);
  std::printf("vocabulary      %d\n", i.vocab_size);
  std::printf("context         %d max (%d allocated, KV cache %s %s)\n", i.max_context,
              i.context_length, kv_type_name(i.kv_type), mib(i.kv_cache_bytes).c_str());
  std::printf("weights         %s, %s read per token\n", i.weight_type.c_str(),
              mib(i.weight_bytes_per_token).c_str());
  std::printf("decode layout   %s\n", describe_layouts(i).c_str());
  std::printf("decode tuning   %s\n", describe_decode_tuning(active_decode_tuning()).c_str());
  print_type_summary(c.tensors);
  print_kept_f16(c.tensors);
  std::printf("norm eps        %g\n", double(c.norm_eps));
  std::printf("rope theta      %g", double(c.rope_theta));
  if (c.rope_local_theta > 0) std::printf(" (global layers), %g (sliding layers)", double(c.rope_local_theta));
  std::printf("\n");
  if (c.rope_scaling == "linear") std::printf("rope scaling    linear, factor %g\n", double(c.rope_scaling_factor));
  if (c.rope_scaling == "llama3")
    std::printf("rope scaling    llama3, factor %g, low/high freq factor %g/%g, original context %d\n",
                double(c.rope_scaling_factor), double(c.rope_low_freq_factor), double(c.rope_high_freq_factor),
                c.rope_original_context);
  if (c.rope_freq_factors) std::printf("rope factors    per frequency (rope_freqs tensor)\n");
  if (c.qkv_bias) std::printf("qkv bias        yes\n");
  if (c.qk_norm) std::printf("q/k norm        per head, before RoPE\n");
  std::printf("query scale     %g\n", double(c.query_scale));
  std::printf("activation      %s\n", c.gelu_activation ? "GELU (tanh)" : "SiLU");
  if (c.attn_softcap > 0) std::printf("attn softcap    %g\n", double(c.attn_softcap));
  if (c.final_softcap > 0) std::printf("final softcap   %g\n", double(c.final_softcap));
  if (c.sliding_window > 0) {
    if (c.sliding_period == 0)
      std::printf("sliding window  %d tokens on every layer\n", c.sliding_window);
    else
      std::printf("sliding window  %d tokens on layers l with (l + 1) %% %d != 0\n", c.sliding_window, c.sliding_period);
  }
  std::printf("tied embeddings %s\n", c.tied_embeddings ? "yes" : "no");
  std::printf("chat template   %s", i.chat_template_origin.c_str());
  if (i.chat_template != ChatTemplate::None) std::printf(" (%s)", chat_template_name(i.chat_template));
  std::printf("\n");
  if (!i.chat_template_error.empty()) std::printf("                unusable: %s\n", i.chat_template_error.c_str());
  std::printf("BOS             %d \"%s\" (%s)\n", i.bos_id, vocabulary_piece(*model, i.bos_id).c_str(),
              i.add_bos ? "added to prompts" : "not added");
  std::printf("end of turn     ");
  for (int id : i.eog_ids) std::printf("%d \"%s\"  ", id, vocabulary_piece(*model, id).c_str());
  std::printf("\ntokenizer       %s, %d pieces, %s\n", c.tokenizer_kind.c_str(), c.tokenizer_pieces,
              mib(c.tokenizer_bytes).c_str());
  std::printf("\nchat template source (%s):\n%s\n", i.chat_template_origin.c_str(), i.chat_template_source.c_str());
  if (args.has("--tensors")) {
    std::printf("\n%-32s %-6s %-16s %12s\n", "tensor", "type", "shape", "bytes");
    for (const auto& t : c.tensors) {
      std::string shape = t.n_dims == 1 ? std::to_string(t.cols)
                                        : std::to_string(t.rows) + " x " + std::to_string(t.cols);
      std::printf("%-32s %-6s %-16s %12llu\n", t.name.c_str(), weight_type_name(t.type),
                  shape.c_str(), static_cast<unsigned long long>(t.bytes));
    }
  }
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
