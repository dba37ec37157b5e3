// Per-process cache of converted test models (see converted_models.h).
#include "common/converted_models.h"

#include <map>
#include <mutex>

#include "common/testdata.h"

namespace magnetar::test {

namespace {

struct Cache {
  std::mutex mutex;
  std::string dir;
  std::map<std::string, std::string> paths;
  ~Cache() {
    if (!dir.empty()) remove_tree(dir);
  }
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

std::string converted_model(const std::string& source, WeightType type, std::string* error) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  const std::string key = source + "|" + weight_type_name(type);
  if (auto it = c.paths.find(key); it != c.paths.end()) return it->second;
  if (c.dir.empty()) c.dir = make_temp_dir("models");
  std::string name = key;
  for (char& ch : name)
    if (ch == '/' || ch == '|' || ch == '.') ch = '_';
  const std::string out = c.dir + "/" + name + ".mgn";
  ConvertOptions options;
  options.weight_type = type;
  Status s = convert_model(testdata_path(source), out, options);
  if (!s) {
    *error = s.message();
    return "";
  }
  c.paths[key] = out;
  return out;
}

}  // namespace magnetar::test
