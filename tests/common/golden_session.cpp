// Shared steps of the golden-logit tests (see golden_session.h).
#include "common/golden_session.h"

#include <gtest/gtest.h>

namespace magnetar::test {

bool load_with_session(const std::string& path, LoadedModel* out) {
  Status s = Model::load(path, LoadOptions{}, &out->model);
  EXPECT_TRUE(s) << s.message();
  if (!s) return false;
  s = Session::create(*out->model, &out->session);
  EXPECT_TRUE(s) << s.message();
  return s.is_ok();
}

std::vector<int> greedy_tokens(Session& session, const std::vector<int>& prompt, int n) {
  GenerateRequest request;
  request.prompt = prompt;
  request.max_tokens = n;
  request.stop_at_eog = false;
  GenerateResult result;
  const Status s = session.generate(request, &result);
  EXPECT_TRUE(s) << s.message();
  return s ? result.tokens : std::vector<int>{};
}

}  // namespace magnetar::test
