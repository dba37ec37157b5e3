// ConversationStore: the chats on disk, one JSON file per conversation in one folder
// (user_data_dir()/conversations). Every change is written at once and atomically; a file that
// cannot be read is reported and renamed aside (<name>.corrupt-<time>), never deleted or crashed on.
#pragma once
#include <string>
#include <vector>

#include "conversation.h"
#include "magnetar/status.h"

namespace magnetar::app {

class ConversationStore {
 public:
  // Opens (creating if needed) the folder. Problems found while loading are in load_problems().
  Status open(const std::string& directory);

  const std::string& directory() const { return directory_; }
  const std::vector<Conversation>& conversations() const { return conversations_; }
  // Human-readable lines: "conversations/x.json is damaged (…); moved to x.json.corrupt-…".
  const std::vector<std::string>& load_problems() const { return load_problems_; }

  Conversation* find(const std::string& id);
  const Conversation* find(const std::string& id) const;

  // Adds a new empty chat (first in the list) and saves it; returns its id.
  std::string create(const std::string& model_path, const std::string& system_prompt,
                     const SamplingSettings& sampling);
  // Writes one conversation (after any change to it), bumping `updated`.
  Status save(const std::string& id);
  Status rename(const std::string& id, const std::string& title);
  Status remove(const std::string& id);
  // Most recently updated first.
  void sort_by_recent();
  // Ids of conversations whose title contains `query` (case-insensitive), in list order.
  std::vector<std::string> search(const std::string& query) const;

  std::string file_path(const std::string& id) const;

 private:
  std::string directory_;
  std::vector<Conversation> conversations_;
  std::vector<std::string> load_problems_;
};

}  // namespace magnetar::app
