// Shared steps of the golden-logit tests: load a converted model file with a session, and run a
// greedy continuation the way the goldens were made (end-of-generation tokens ignored).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "magnetar/engine.h"

namespace magnetar::test {

struct LoadedModel {
  std::unique_ptr<Model> model;
  std::unique_ptr<Session> session;
};

// Loads `path` (default options) and opens a session; records a test failure and returns false
// on any error.
bool load_with_session(const std::string& path, LoadedModel* out);

// The `n` greedy tokens after `prompt` (stop tokens ignored); empty after a recorded failure.
std::vector<int> greedy_tokens(Session& session, const std::vector<int>& prompt, int n);

}  // namespace magnetar::test
