// ConversationStore: loading, atomic saving, renaming aside of damaged files.
#include "conversation_store.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "text_util.h"

namespace magnetar::app {

namespace fs = std::filesystem;

Status ConversationStore::open(const std::string& directory) {
  directory_ = directory;
  conversations_.clear();
  load_problems_.clear();
  std::error_code ec;
  fs::create_directories(to_path(directory), ec);
  if (ec) return Status::error("cannot create " + directory + ": " + ec.message());

  std::vector<fs::path> files;
  for (fs::directory_iterator it(to_path(directory), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") files.push_back(it->path());
  }
  if (ec) return Status::error("cannot list " + directory + ": " + ec.message());

  for (const fs::path& file : files) {
    const std::string name = from_path(file.filename());
    std::string bytes;
    Status status = read_whole_file(from_path(file), &bytes);
    Conversation conversation;
    bool newer_format = false;
    if (status) {
      nlohmann::json json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
      if (json.is_discarded()) {
        status = Status::error("not valid JSON");
      } else {
        status = conversation_from_json(json, &conversation);
        newer_format = !status && status.message().find("newer Magnetar") != std::string::npos;
        if (status && from_path(file.stem()) != conversation.id)
          status = Status::error("its id does not match the file name");
      }
    }
    if (status) {
      conversations_.push_back(std::move(conversation));
      continue;
    }
    if (newer_format) {  // not damaged: leave it for the newer version, just skip it
      load_problems_.push_back(name + " was skipped: " + status.message());
      continue;
    }
    const std::string aside = from_path(file) + ".corrupt-" + std::to_string(unix_now());
    fs::rename(file, to_path(aside), ec);
    load_problems_.push_back(name + " could not be read (" + status.message() + ")" +
                             (ec ? "" : "; it was moved to " + from_path(to_path(aside).filename())));
  }
  sort_by_recent();
  return Status::ok();
}

Conversation* ConversationStore::find(const std::string& id) {
  for (Conversation& c : conversations_)
    if (c.id == id) return &c;
  return nullptr;
}

const Conversation* ConversationStore::find(const std::string& id) const {
  return const_cast<ConversationStore*>(this)->find(id);
}

std::string ConversationStore::file_path(const std::string& id) const {
  return from_path(to_path(directory_) / to_path(id + ".json"));
}

std::string ConversationStore::create(const std::string& model_path,
                                      const std::string& system_prompt,
                                      const SamplingSettings& sampling) {
  Conversation c;
  do c.id = make_conversation_id();
  while (find(c.id));
  c.title = "New chat";
  c.created = c.updated = unix_now();
  c.model_path = model_path;
  c.system_prompt = system_prompt;
  c.sampling = sampling;
  conversations_.insert(conversations_.begin(), std::move(c));
  const std::string id = conversations_.front().id;
  (void)save(id);  // a failed save is reported on the next save of this chat
  return id;
}

Status ConversationStore::save(const std::string& id) {
  Conversation* c = find(id);
  if (!c) return Status::error("no conversation " + id);
  c->updated = unix_now();
  // A model can stream bytes that are not UTF-8 (a byte-fallback token, a cut character): they
  // are saved as U+FFFD rather than failing the save (or throwing, which ended the app).
  const std::string text =
      conversation_to_json(*c).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  return write_file_atomically(file_path(id), text)
      .with_context("saving chat '" + c->title + "'");
}

Status ConversationStore::rename(const std::string& id, const std::string& title) {
  Conversation* c = find(id);
  if (!c) return Status::error("no conversation " + id);
  const std::string trimmed = trim(title);
  c->title = trimmed.empty() ? "New chat" : trimmed;
  return save(id);
}

Status ConversationStore::remove(const std::string& id) {
  auto it = std::find_if(conversations_.begin(), conversations_.end(),
                         [&](const Conversation& c) { return c.id == id; });
  if (it == conversations_.end()) return Status::error("no conversation " + id);
  std::error_code ec;
  fs::remove(to_path(file_path(id)), ec);
  if (ec) return Status::error("cannot delete " + file_path(id) + ": " + ec.message());
  conversations_.erase(it);
  return Status::ok();
}

void ConversationStore::sort_by_recent() {
  std::stable_sort(conversations_.begin(), conversations_.end(),
                   [](const Conversation& a, const Conversation& b) {
                     return a.updated != b.updated ? a.updated > b.updated : a.id > b.id;
                   });
}

std::vector<std::string> ConversationStore::search(const std::string& query) const {
  std::vector<std::string> ids;
  const std::string q = trim(query);
  for (const Conversation& c : conversations_)
    if (contains_case_insensitive(c.title, q)) ids.push_back(c.id);
  return ids;
}

}  // namespace magnetar::app
