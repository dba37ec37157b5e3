// Synthetic models: the known shapes against their published parameter counts, the noise
// generator's determinism, and a small synthetic file read back through the validating reader
// and the engine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "common/testdata.h"
#include "core/platform.h"
#include "format/model_reader.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "magnetar/engine.h"
#include "magnetar/tools.h"
#include "model/synth.h"

namespace magnetar {
namespace {

TEST(Synth, KnownShapesMatchPublishedParameterCounts) {
  // Totals as the Hugging Face model cards / llama2.c report them.
  const std::vector<std::pair<const char*, uint64_t>> expected = {
      {"gemma-2b", 2506172416ull},    {"gemma-7b", 8537680896ull},
      {"llama-2-7b", 6738415616ull},  {"tinyllama-1.1b", 1100048384ull},
      {"stories15M", 15191712ull},
      // Today's architectures (Hugging Face safetensors totals; tied heads counted once).
      {"llama-3.2-1b", 1235814400ull}, {"llama-3.1-8b", 8030261248ull},
      {"qwen2.5-1.5b", 1543714304ull}, {"gemma-3-1b", 999885952ull},
      {"phi-3.5-mini", 3821079552ull},
  };
  for (const auto& [name, params] : expected) {
    const synth::Spec* spec = synth::find_spec(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(synth::parameter_count(*spec), params) << name;
  }
  EXPECT_EQ(synth::find_spec("gpt-5"), nullptr);
}

TEST(Synth, Gemma2bTensorTableHasTheRealShapes) {
  const synth::Spec& s = *synth::find_spec("gemma-2b");
  const auto decls = synth::tensor_decls(s, format::DType::F16);
  ASSERT_EQ(decls.size(), 1u + 18u * 6u + 1u);  // tied: no "output"
  EXPECT_EQ(decls[0].name, "tok_embeddings");
  EXPECT_EQ(decls[0].rows, 256000u);
  EXPECT_EQ(decls[0].cols, 2048u);
  EXPECT_EQ(decls[2].name, "layers.0.wqkv");
  EXPECT_EQ(decls[2].rows, (8u + 2u) * 256u);
  EXPECT_EQ(decls[3].name, "layers.0.wo");
  EXPECT_EQ(decls[3].cols, 8u * 256u);
  EXPECT_EQ(decls[5].rows, 2u * 16384u);
  EXPECT_EQ(decls[6].cols, 16384u);
  EXPECT_EQ(decls[1].dtype, format::DType::F32);  // norms stay F32
  const format::FileHeader h = synth::make_header(s);
  EXPECT_EQ(h.activation, static_cast<uint32_t>(format::Activation::GeluTanh));
  EXPECT_TRUE(h.flags & format::kFlagTiedEmbeddings);
  EXPECT_TRUE(h.flags & format::kFlagEmbedScaleSqrtDim);
  EXPECT_FLOAT_EQ(h.query_scale, 1.0f / 16.0f);
  EXPECT_EQ(h.bos_id, 2);
  // gemma-7b: the query width (16 x 256) differs from dim (3072).
  const auto d7 = synth::tensor_decls(*synth::find_spec("gemma-7b"), format::DType::F16);
  EXPECT_EQ(d7[3].rows, 3072u);
  EXPECT_EQ(d7[3].cols, 4096u);
  // llama-2-7b has a separate LM head.
  const auto dl = synth::tensor_decls(*synth::find_spec("llama-2-7b"), format::DType::F16);
  EXPECT_EQ(dl.back().name, "output");
  EXPECT_EQ(dl.back().rows, 32000u);
}

TEST(Synth, NoiseIsSeededAndIndependentOfChunking) {
  const uint64_t n = 1001;
  std::vector<uint16_t> whole(n), pieces(n), other_seed(n), other_tensor(n);
  synth::fill_f16(42, 3, 0.05f, 0, n, whole.data());
  synth::fill_f16(42, 3, 0.05f, 0, 333, pieces.data());
  synth::fill_f16(42, 3, 0.05f, 333, n - 333, pieces.data() + 333);
  synth::fill_f16(43, 3, 0.05f, 0, n, other_seed.data());
  synth::fill_f16(42, 4, 0.05f, 0, n, other_tensor.data());
  EXPECT_EQ(whole, pieces);
  EXPECT_NE(whole, other_seed);
  EXPECT_NE(whole, other_tensor);
  double sum = 0, max_abs = 0;
  for (uint16_t h : whole) {
    const float v = kernels::f16_to_f32_scalar(h);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    max_abs = std::max(max_abs, double(std::fabs(v)));
  }
  EXPECT_LE(max_abs, 0.05 * 1.001);         // inside the scale (FP16 rounding aside)
  EXPECT_GT(max_abs, 0.04);                 // and spread over it
  EXPECT_LT(std::fabs(sum / n), 0.05 / 10);  // centred
  std::vector<float> f32(n);
  synth::fill_f32(42, 3, 0.05f, 0, n, f32.data());
  for (uint64_t i = 0; i < n; ++i)  // the same levels as the F16 noise, before rounding
    EXPECT_NEAR(f32[i], kernels::f16_to_f32_scalar(whole[i]), 0.05 * 1e-3);
}

// The whole file (parse_model_file views its bytes in place).
void read_whole_file(const std::string& path, std::vector<uint8_t>* bytes) {
  uint64_t size = 0;
  ASSERT_TRUE(platform::file_size(path, &size).is_ok()) << path;
  bytes->resize(size);
  ASSERT_TRUE(platform::read_file_range(path, 0, bytes->data(), size).is_ok()) << path;
}

// A stories15M-like spec shrunk to test size, with the real vocabulary layout.
synth::Spec tiny_spec(Architecture arch) {
  synth::Spec s = *synth::find_spec(arch == Architecture::Llama ? "stories15M" : "gemma-2b");
  s.name = "tiny";
  s.dim = 64, s.n_layers = 2, s.n_heads = 4, s.n_kv_heads = 2, s.head_dim = 16, s.hidden_dim = 96;
  s.vocab_size = 600, s.max_context = 64;
  return s;
}

TEST(Synth, WrittenFileValidatesAndRunsInTheEngine) {
  const std::string dir = test::make_temp_dir("synth");
  for (Architecture arch : {Architecture::Llama, Architecture::Gemma}) {
    const synth::Spec spec = tiny_spec(arch);
    const std::string path = dir + "/tiny.mgn";
    synth::Options options;
    options.seed = 5;
    uint64_t last_done = 0, last_total = 0;
    options.on_progress = [&](uint64_t done, uint64_t total) {
      EXPECT_GE(done, last_done);
      last_done = done, last_total = total;
    };
    ASSERT_TRUE(synth::write_model(spec, options, path).is_ok());
    EXPECT_EQ(last_done, last_total);

    std::vector<uint8_t> bytes;
    ASSERT_NO_FATAL_FAILURE(read_whole_file(path, &bytes));
    format::ModelFileView view;
    ASSERT_TRUE(format::parse_model_file(bytes.data(), bytes.size(), &view).is_ok());
    EXPECT_EQ(view.header.dim, 64u);
    EXPECT_EQ(view.header.vocab_size, 600u);
    const auto decls = synth::tensor_decls(spec, format::DType::F16);
    ASSERT_EQ(view.tensors.size(), decls.size());
    for (size_t i = 0; i < decls.size(); ++i) {
      EXPECT_EQ(view.tensors[i].name, decls[i].name);
      EXPECT_EQ(view.tensors[i].rows, decls[i].rows);
      EXPECT_EQ(view.tensors[i].cols, decls[i].cols);
    }

    std::unique_ptr<Model> model;
    LoadOptions load;
    load.threads = 2;
    const Status loaded = Model::load(path, load, &model);
    ASSERT_TRUE(loaded.is_ok()) << loaded.message();
    EXPECT_EQ(model->info().vocab_size, 600);
    // The vocabulary decodes byte pieces and knows the special ids.
    const synth::SpecialIds ids = synth::special_ids(spec);
    EXPECT_EQ(model->info().bos_id, ids.bos);
    EXPECT_EQ(model->token_piece(ids.first_byte + 'A'), "A");
    EXPECT_TRUE(model->is_end_of_generation(ids.eos));
    std::unique_ptr<Session> session;
    ASSERT_TRUE(Session::create(*model, &session).is_ok());
    GenerateRequest request;
    request.prompt = {ids.bos, 400, 401};
    request.max_tokens = 8;
    request.stop_at_eog = false;
    GenerateResult result;
    ASSERT_TRUE(session->generate(request, &result).is_ok());
    EXPECT_EQ(result.tokens.size(), 8u);
    for (int t : result.tokens) EXPECT_TRUE(t >= 0 && t < 600);
    session.reset();
    model.reset();
  }
  test::remove_tree(dir);
}

// Q8_0 / Q4_0: each matrix is the GGML quantization of the F32 noise (norms stay F32), the file
// validates and runs in the engine.
TEST(Synth, QuantizedModelsHoldTheQuantizedNoise) {
  const std::string dir = test::make_temp_dir("synth-q");
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    const synth::Spec spec = tiny_spec(Architecture::Gemma);
    const std::string path = dir + "/tiny-q.mgn";
    synth::Options options;
    options.dtype = dtype;
    options.seed = 9;
    ASSERT_TRUE(synth::write_model(spec, options, path).is_ok());
    std::vector<uint8_t> bytes;
    ASSERT_NO_FATAL_FAILURE(read_whole_file(path, &bytes));
    format::ModelFileView view;
    ASSERT_TRUE(format::parse_model_file(bytes.data(), bytes.size(), &view).is_ok());
    for (size_t t = 0; t < view.tensors.size(); ++t) {
      const format::TensorView& tv = view.tensors[t];
      if (tv.n_dims == 1) {
        EXPECT_EQ(tv.dtype, format::DType::F32) << tv.name;
        continue;
      }
      ASSERT_EQ(tv.dtype, dtype) << tv.name;
      const uint64_t n = tv.rows * tv.cols;
      std::vector<float> noise(n);
      synth::fill_f32(options.seed, t, 1.0f / std::sqrt(float(tv.cols)), 0, n, noise.data());
      std::vector<uint8_t> want(tv.bytes);
      if (dtype == format::DType::Q8_0)
        quant::quantize_row_q8_0(noise.data(), reinterpret_cast<quant::BlockQ8_0*>(want.data()), int64_t(n));
      else
        quant::quantize_row_q4_0(noise.data(), reinterpret_cast<quant::BlockQ4_0*>(want.data()), int64_t(n));
      ASSERT_EQ(tv.bytes, format::tensor_bytes(dtype, tv.rows, tv.cols)) << tv.name;
      EXPECT_EQ(0, std::memcmp(want.data(), tv.data, tv.bytes)) << tv.name;
    }
    std::unique_ptr<Model> model;
    ASSERT_TRUE(Model::load(path, LoadOptions{}, &model).is_ok());
    std::unique_ptr<Session> session;
    ASSERT_TRUE(Session::create(*model, &session).is_ok());
    GenerateRequest request;
    request.prompt = {2, 400, 401, 402, 403, 404};  // 6 tokens: the prefill kernels run
    request.max_tokens = 4;
    request.stop_at_eog = false;
    GenerateResult result;
    ASSERT_TRUE(session->generate(request, &result).is_ok());
    EXPECT_EQ(result.tokens.size(), 4u);
    session.reset();
    model.reset();
  }
  test::remove_tree(dir);
}

// K-quant mixes (synth --dtype q4_k_m): the converter's per-tensor rule on the real shapes —
// the LM head Q6_K, attn_v / ffn_down Q6_K in llama.cpp's use_more_bits layers (wqkv then
// stored as wq, wk, wv), the rest Q4_K; a 256-wide tiny model writes, loads and runs.
TEST(Synth, MixesChooseTypesPerTensorAndRun) {
  const auto decls = synth::tensor_decls(*synth::find_spec("llama-2-7b"), format::DType::F16, format::QuantMix::Q4_K_M);
  auto find = [&](const std::string& name) -> const format::TensorDecl* {
    for (const auto& d : decls)
      if (d.name == name) return &d;
    return nullptr;
  };
  ASSERT_NE(find("output"), nullptr);
  EXPECT_EQ(find("output")->dtype, format::DType::Q6_K);
  EXPECT_EQ(find("tok_embeddings")->dtype, format::DType::Q4_K);  // untied
  // 32 layers: layers 0-3, 28-31 and 6, 9, ..., 27 get more bits.
  for (int layer : {0, 3, 6, 27, 31}) {
    const std::string p = "layers." + std::to_string(layer) + ".";
    ASSERT_NE(find(p + "wv"), nullptr) << layer;
    EXPECT_EQ(find(p + "wv")->dtype, format::DType::Q6_K);
    EXPECT_EQ(find(p + "wv")->rows, 4096u);
    EXPECT_EQ(find(p + "wq")->dtype, format::DType::Q4_K);
    EXPECT_EQ(find(p + "w_down")->dtype, format::DType::Q6_K);
  }
  for (int layer : {4, 5, 7, 26}) {
    const std::string p = "layers." + std::to_string(layer) + ".";
    ASSERT_NE(find(p + "wqkv"), nullptr) << layer;
    EXPECT_EQ(find(p + "wqkv")->dtype, format::DType::Q4_K);
    EXPECT_EQ(find(p + "w_down")->dtype, format::DType::Q4_K);
    EXPECT_EQ(find(p + "w_gate_up")->dtype, format::DType::Q4_K);
  }

  const std::string dir = test::make_temp_dir("synth-mix");
  synth::Spec spec = tiny_spec(Architecture::Llama);
  spec.dim = 256, spec.hidden_dim = 512, spec.n_heads = 4, spec.head_dim = 64;
  for (format::QuantMix mix : {format::QuantMix::Q4_K_M, format::QuantMix::Q5_K_M, format::QuantMix::Q3_K_M,
                               format::QuantMix::Q2_K}) {
    const std::string path = dir + "/tiny-mix.mgn";
    synth::Options options;
    options.mix = mix;
    ASSERT_TRUE(synth::write_model(spec, options, path).is_ok());
    std::unique_ptr<Model> model;
    ASSERT_TRUE(Model::load(path, LoadOptions{}, &model).is_ok());
    std::unique_ptr<Session> session;
    ASSERT_TRUE(Session::create(*model, &session).is_ok());
    GenerateRequest request;
    request.prompt = {1, 400, 401, 402};
    request.max_tokens = 3;
    request.stop_at_eog = false;
    GenerateResult result;
    ASSERT_TRUE(session->generate(request, &result).is_ok());
    EXPECT_EQ(result.tokens.size(), 3u);
  }
  test::remove_tree(dir);
}

// Quantizing runs on a thread pool (options.threads; 0 = every core): the file's bytes are the
// same for any thread count, for a mix and for a 32-block type.
TEST(Synth, QuantizedFileIsTheSameForAnyThreadCount) {
  const std::string dir = test::make_temp_dir("synth-threads");
  synth::Spec spec = tiny_spec(Architecture::Llama);
  spec.dim = 256, spec.hidden_dim = 768, spec.n_heads = 4, spec.head_dim = 64;  // 196608-value matrices
  for (const auto& [dtype, mix] : {std::pair{format::DType::F16, std::optional{format::QuantMix::Q3_K_M}},
                                   std::pair{format::DType::IQ4_NL, std::optional<format::QuantMix>{}}}) {
    std::vector<uint8_t> first;
    for (int threads : {1, 3, 0}) {
      SCOPED_TRACE(std::string(format::dtype_name(dtype)) + (mix ? " mix" : "") + ", threads " + std::to_string(threads));
      const std::string path = dir + "/tiny-" + std::to_string(threads) + ".mgn";
      synth::Options options;
      options.dtype = dtype;
      options.mix = mix;
      options.threads = threads;
      ASSERT_TRUE(synth::write_model(spec, options, path).is_ok());
      std::vector<uint8_t> bytes;
      ASSERT_NO_FATAL_FAILURE(read_whole_file(path, &bytes));
      if (first.empty()) first = bytes;
      EXPECT_TRUE(bytes == first);
    }
  }
  test::remove_tree(dir);
}

// Read mode lays matrices of 3073+ columns out in column stripes (ops/ops.h); a mapped file keeps
// the plain layout. Both must give the same logits, for prefill and for decode steps. Two shapes
// keep the files small: a wide FFN (w_down striped) and a wide model dimension (wqkv, w_gate_up
// and the tied embedding / LM head striped; the lookup reads a striped table).
TEST(Synth, StripedLayoutGivesThePlainLayoutsLogits) {
  const std::string dir = test::make_temp_dir("synth-stripes");
  synth::Spec wide_ffn = tiny_spec(Architecture::Llama);
  wide_ffn.hidden_dim = 3100;
  synth::Spec wide_dim = tiny_spec(Architecture::Llama);
  wide_dim.dim = 3104, wide_dim.n_heads = 2, wide_dim.n_kv_heads = 1, wide_dim.head_dim = 64;
  wide_dim.hidden_dim = 32, wide_dim.vocab_size = 300, wide_dim.tied_embeddings = true;
  struct Case {
    synth::Spec spec;
    format::DType dtype;
    int striped;  // matrices Model::load should stripe
  };
  const Case cases[] = {{wide_ffn, format::DType::F16, wide_ffn.n_layers},
                        {wide_dim, format::DType::F32, 2 * wide_dim.n_layers + 1}};
  for (const Case& c : cases) {
    const std::string path = dir + "/wide.mgn";
    synth::Options options;
    options.dtype = c.dtype;
    options.seed = 11;
    ASSERT_TRUE(synth::write_model(c.spec, options, path).is_ok());
    std::vector<float> logits[2];
    for (int i = 0; i < 2; ++i) {
      LoadOptions load;
      load.threads = 2;
      load.mode = i == 0 ? LoadMode::Read : LoadMode::Map;
      std::unique_ptr<Model> model;
      const Status loaded = Model::load(path, load, &model);
      ASSERT_TRUE(loaded.is_ok()) << loaded.message();
      EXPECT_EQ(model->info().striped_matrices, i == 0 ? c.striped : 0);
      std::unique_ptr<Session> session;
      ASSERT_TRUE(Session::create(*model, &session).is_ok());
      std::vector<float> step;
      ASSERT_TRUE(session->evaluate({1, 200, 201, 202, 203, 204}, &logits[i]).is_ok());  // prefill
      ASSERT_TRUE(session->evaluate({205}, &step).is_ok());                              // decode
      logits[i].insert(logits[i].end(), step.begin(), step.end());
    }
    ASSERT_EQ(logits[0].size(), logits[1].size());
    double max_abs = 0, max_diff = 0;
    for (size_t k = 0; k < logits[0].size(); ++k) {
      max_abs = std::max(max_abs, double(std::fabs(logits[1][k])));
      max_diff = std::max(max_diff, double(std::fabs(logits[0][k] - logits[1][k])));
    }
    EXPECT_GT(max_abs, 0.0);
    EXPECT_LE(max_diff, 1e-4 * max_abs + 1e-6) << "dim=" << c.spec.dim << " hidden=" << c.spec.hidden_dim;
  }
  test::remove_tree(dir);
}

TEST(Synth, RejectsQuantizingRowsOfPartialBlocksAndLeavesNothing) {
  const std::string dir = test::make_temp_dir("synth-bad");
  synth::Spec spec = tiny_spec(Architecture::Llama);
  spec.hidden_dim = 100;  // w2's rows: 100 columns, not whole 32-blocks
  synth::Options options;
  options.dtype = format::DType::Q8_0;
  const Status s = synth::write_model(spec, options, dir + "/x.mgn");
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("32-blocks"), std::string::npos) << s.message();
  uint64_t size = 0;
  EXPECT_FALSE(platform::file_size(dir + "/x.mgn", &size).is_ok());
  test::remove_tree(dir);
}

// `synth --layers N`: a model's shapes with only its first layers, a small file that runs.
TEST(Synth, FirstLayersOnlyKeepTheShapesAndRun) {
  const std::string dir = test::make_temp_dir("synth-layers");
  const synth::Spec& full = *synth::find_spec("stories15M");
  SynthOptions options;
  options.n_layers = 2;
  const uint64_t per_layer = (synthetic_parameter_count("stories15M") - synthetic_parameter_count("stories15M", 2)) /
                             uint64_t(full.n_layers - 2);
  EXPECT_EQ(synthetic_parameter_count("stories15M", 1) + per_layer, synthetic_parameter_count("stories15M", 2));
  ASSERT_TRUE(write_synthetic_model("stories15M", options, dir + "/two.mgn").is_ok());
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::load(dir + "/two.mgn", LoadOptions{}, &model).is_ok());
  EXPECT_EQ(model->info().n_layers, 2);
  EXPECT_EQ(model->info().dim, full.dim);
  EXPECT_EQ(model->info().vocab_size, full.vocab_size);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*model, &session).is_ok());
  GenerateRequest request;
  request.prompt = {1, 400, 401};
  request.max_tokens = 4;
  request.stop_at_eog = false;
  GenerateResult result;
  ASSERT_TRUE(session->generate(request, &result).is_ok());
  EXPECT_EQ(result.tokens.size(), 4u);

  options.n_layers = full.n_layers + 1;
  const Status s = write_synthetic_model("stories15M", options, dir + "/seven.mgn");
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("has 6 layers"), std::string::npos) << s.message();
  EXPECT_EQ(synthetic_parameter_count("stories15M", full.n_layers + 1), 0u);
  uint64_t size = 0;
  EXPECT_FALSE(platform::file_size(dir + "/seven.mgn", &size).is_ok());
  session.reset();
  model.reset();
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar
