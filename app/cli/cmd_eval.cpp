// `magnetar-cli eval`: teacher-forced evaluation of a token sequence. Two modes:
//   --logits OUT.f32     writes the logits of every position as raw float32 (tests, debugging);
//   --compare REFERENCE  compares the model's next-token distributions with REFERENCE's over the
//                        same tokens (mean / max KL, top-1 agreement, perplexity of each): how
//                        much quality a quantised conversion lost against the f32 one.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.h"
#include "magnetar/system.h"  // write_file_atomically
#include "magnetar/tools.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

int eval_command(const std::vector<std::string>& argv);

const Command kEval{
    "eval", "teacher-forced logits of a token sequence, or a comparison with a reference model",
    "magnetar-cli eval -m MODEL --tokens ID,ID,... --logits OUT.f32 [--threads N] [--load read|map]\n"
    "                  [--kv f32|f16|int8]\n"
    "  OUT.f32 holds little-endian float32, row-major [n_tokens, vocab]\n"
    "magnetar-cli eval -m CANDIDATE --compare REFERENCE (--tokens ID,ID,... | --text-file FILE)\n"
    "                  [--json] [--logits OUT.f32] [--threads N] [--ctx N] [--load read|map]\n"
    "                  [--kv f32|f16|int8]\n"
    "  KL(reference || candidate) of every position's next-token distribution (mean, max),\n"
    "  top-1 agreement, and the perplexity of each model on the sequence (at least 2 tokens).\n"
    "  --text-file is tokenized by the reference model, with BOS. --kv applies to the candidate;\n"
    "  the reference always runs with the exact f32 KV cache.",
    eval_command};
const CommandRegistration kRegistration(kEval);

constexpr std::streamoff kMaxTextFileBytes = 16 << 20;  // far beyond any context we can evaluate

int fail(const std::string& message) {
  std::cerr << "magnetar-cli eval: " << message << "\n";
  return 1;
}

bool read_text_file(const std::string& path, std::string* text, std::string* error) {
  std::error_code ec;  // a FIFO or device would block the open or never end
  const auto status = std::filesystem::status(std::filesystem::u8path(path), ec);
  if (!std::filesystem::exists(status)) return *error = "cannot open " + path, false;
  if (!std::filesystem::is_regular_file(status)) return *error = path + " is not a regular file", false;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return *error = "cannot open " + path, false;
  const std::streamoff size = f.tellg();
  if (size < 0 || size > kMaxTextFileBytes) return *error = path + " is larger than 16 MiB", false;
  f.seekg(0);
  text->assign(static_cast<size_t>(size), '\0');
  if (!f.read(text->data(), size)) return *error = "cannot read " + path, false;
  return true;
}

Status evaluate_all(Model& model, const std::vector<int>& tokens, std::vector<float>* logits) {
  std::unique_ptr<Session> session;
  MAGNETAR_TRY(Session::create(model, &session));
  return session->evaluate(tokens, logits);
}

Status write_logits(const std::string& out_path, const std::vector<float>& logits) {
  return write_file_atomically(
      out_path, std::string_view(reinterpret_cast<const char*>(logits.data()),
                                 logits.size() * sizeof(float)));
}

void print_comparison(const DistributionComparison& c, const ModelInfo& candidate,
                      const ModelInfo& reference, bool json) {
  if (json) {
    const nlohmann::json doc = {
        {"reference", {{"path", reference.path}, {"weight_type", reference.weight_type}}},
        {"candidate",
         {{"path", candidate.path}, {"weight_type", candidate.weight_type}, {"kv", kv_type_name(candidate.kv_type)}}},
        {"positions", c.positions},
        {"mean_kl", c.mean_kl},
        {"max_kl", c.max_kl},
        {"top1_agreement", c.top1_agreement},
        {"perplexity_reference", c.perplexity_reference},
        {"perplexity_candidate", c.perplexity_candidate},
    };
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::printf("reference        %s (%s)\n", reference.path.c_str(), reference.weight_type.c_str());
  std::printf("candidate        %s (%s, KV cache %s)\n", candidate.path.c_str(), candidate.weight_type.c_str(),
              kv_type_name(candidate.kv_type));
  std::printf("positions        %zu\n", c.positions);
  std::printf("mean KL          %.4g nats\n", c.mean_kl);
  std::printf("max KL           %.4g nats\n", c.max_kl);
  std::printf("top-1 agreement  %.2f%%\n", 100 * c.top1_agreement);
  std::printf("perplexity       %.4f reference, %.4f candidate\n", c.perplexity_reference,
              c.perplexity_candidate);
}

int compare_command(const Args& args, const std::string& reference_path) {
  const std::string text_path = args.get({"--text-file"});
  const bool have_tokens = args.has("--tokens");
  if (have_tokens == !text_path.empty())
    return usage_error(kEval, "--compare needs exactly one of --tokens and --text-file");

  int exit_code = 0;
  std::unique_ptr<Model> reference, candidate;
  if (!load_model_from_args(kEval, args, &reference, &exit_code, reference_path, KvType::F32))
    return exit_code;
  if (!load_model_from_args(kEval, args, &candidate, &exit_code)) return exit_code;
  const int vocab = reference->info().vocab_size;
  if (candidate->info().vocab_size != vocab)
    return fail("the models have different vocabularies (" + std::to_string(vocab) + " and " +
                std::to_string(candidate->info().vocab_size) + " tokens)");

  std::vector<int> tokens;
  if (have_tokens) {
    if (!parse_int_list(args.get({"--tokens"}), &tokens))
      return usage_error(kEval, "--tokens needs comma-separated token ids");
  } else {
    std::string text, error;
    if (!read_text_file(text_path, &text, &error)) return fail(error);
    if (Status s = reference->tokenize(text, true, &tokens); !s) return fail(s.message());
  }
  if (tokens.size() < 2) return fail("comparing needs at least 2 tokens (perplexity predicts the next)");

  std::vector<float> reference_logits, candidate_logits;
  if (Status s = evaluate_all(*reference, tokens, &reference_logits); !s) return fail(s.message());
  const ModelInfo reference_info = reference->info();
  reference.reset();  // two large models need not be resident at once
  if (Status s = evaluate_all(*candidate, tokens, &candidate_logits); !s) return fail(s.message());
  const std::string out_path = args.get({"--logits"});
  if (!out_path.empty())
    if (Status s = write_logits(out_path, candidate_logits); !s) return fail(s.message());

  const DistributionComparison c = compare_logits(reference_logits, candidate_logits, tokens, vocab);
  print_comparison(c, candidate->info(), reference_info, args.has("--json"));
  return 0;
}

int eval_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  value_options.insert(value_options.end(), {"--tokens", "--logits", "--compare", "--text-file"});
  Args args;
  if (int bad = parse_command_line(kEval, argv, value_options, {"--json"}, true, &args)) return bad;
  if (const std::string reference = args.get({"--compare"}); !reference.empty())
    return compare_command(args, reference);
  if (args.has("--text-file") || args.has("--json"))
    return usage_error(kEval, "--text-file and --json go with --compare");

  std::vector<int> tokens;
  if (!parse_int_list(args.get({"--tokens"}), &tokens))
    return usage_error(kEval, "--tokens needs comma-separated token ids");
  const std::string out_path = args.get({"--logits"});
  if (out_path.empty()) return usage_error(kEval, "--logits OUT.f32 is required (or --compare REFERENCE)");

  int exit_code = 0;
  std::unique_ptr<Model> model;
  if (!load_model_from_args(kEval, args, &model, &exit_code)) return exit_code;
  std::vector<float> logits;
  if (Status s = evaluate_all(*model, tokens, &logits); !s) return fail(s.message());
  if (Status s = write_logits(out_path, logits); !s) return fail(s.message());
  std::cerr << "wrote " << tokens.size() << " x " << model->info().vocab_size << " logits to "
            << out_path << "\n";
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
