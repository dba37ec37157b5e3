// ConversationStore: files on disk, atomic saves, damaged files set aside and reported.
#include "core/conversation_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/testdata.h"
#include "core/text_util.h"

namespace magnetar::app {
namespace {

namespace fs = std::filesystem;

class ConversationStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("store"); }
  void TearDown() override { test::remove_tree(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(fs::path(dir_) / name, std::ios::binary) << text;
  }
  std::string dir_;
};

TEST_F(ConversationStoreTest, CreateSaveAndReopen) {
  ConversationStore store;
  ASSERT_TRUE(store.open(dir_).is_ok());
  EXPECT_TRUE(store.conversations().empty());
  const std::string id = store.create("/m.mgn", "sys", SamplingSettings{});
  store.find(id)->messages.push_back(Message{"user", "hello", 1, {}});
  ASSERT_TRUE(store.save(id).is_ok());
  ASSERT_TRUE(store.rename(id, "  Greeting  ").is_ok());
  EXPECT_TRUE(fs::exists(fs::path(dir_) / (id + ".json")));
  for (const auto& entry : fs::directory_iterator(dir_))  // no temporary file is left behind
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();

  ConversationStore again;
  ASSERT_TRUE(again.open(dir_).is_ok());
  ASSERT_EQ(again.conversations().size(), 1u);
  const Conversation& c = again.conversations()[0];
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.title, "Greeting");
  EXPECT_EQ(c.model_path, "/m.mgn");
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_EQ(c.messages[0].content, "hello");
  EXPECT_TRUE(again.load_problems().empty());
}

// A model streams raw bytes (byte-fallback tokens, a character cut between tokens): a reply that
// is not UTF-8 is saved with U+FFFD in place of the bad bytes, and the save never throws.
TEST_F(ConversationStoreTest, ReplyThatIsNotUtf8IsSavedWithReplacementCharacters) {
  ConversationStore store;
  ASSERT_TRUE(store.open(dir_).is_ok());
  const std::string id = store.create("", "", SamplingSettings{});
  store.find(id)->messages.push_back(Message{"assistant", "ok \x9E\xE2\x82 end", 1, {}});
  ASSERT_TRUE(store.save(id).is_ok());

  ConversationStore again;
  ASSERT_TRUE(again.open(dir_).is_ok());
  ASSERT_EQ(again.conversations().size(), 1u);
  ASSERT_EQ(again.conversations()[0].messages.size(), 1u);
  const std::string& content = again.conversations()[0].messages[0].content;
  EXPECT_EQ(content.rfind("ok ", 0), 0u) << content;
  EXPECT_NE(content.find("\xEF\xBF\xBD"), std::string::npos) << "no U+FFFD in " << content;
  EXPECT_EQ(content.find('\x9E'), std::string::npos) << "the stray byte was kept";
}

TEST_F(ConversationStoreTest, DeleteRemovesTheFile) {
  ConversationStore store;
  ASSERT_TRUE(store.open(dir_).is_ok());
  const std::string keep = store.create("", "", SamplingSettings{});
  const std::string gone = store.create("", "", SamplingSettings{});
  ASSERT_TRUE(store.remove(gone).is_ok());
  EXPECT_FALSE(fs::exists(fs::path(dir_) / (gone + ".json")));
  EXPECT_TRUE(fs::exists(fs::path(dir_) / (keep + ".json")));
  EXPECT_FALSE(store.remove(gone).is_ok());
  EXPECT_EQ(store.conversations().size(), 1u);
}

TEST_F(ConversationStoreTest, DamagedFilesAreMovedAsideAndReported) {
  ConversationStore store;
  ASSERT_TRUE(store.open(dir_).is_ok());
  const std::string good = store.create("", "", SamplingSettings{});
  write("20260101-000000-aaaaaa.json", "{\"format\": \"magnetar-conversation\", \"format_ver");
  write("20260101-000000-bbbbbb.json", "[1, 2, 3]");
  write("20260101-000000-cccccc.json", "\x89PNG\r\n\x1a\n binary garbage \xff\xfe");
  // Valid JSON whose id does not match its name (someone copied a file): also set aside.
  write("20260101-000000-dddddd.json",
        "{\"format\":\"magnetar-conversation\",\"format_version\":1,\"id\":\"other\",\"messages\":[]}");

  ConversationStore again;
  ASSERT_TRUE(again.open(dir_).is_ok());
  ASSERT_EQ(again.conversations().size(), 1u);
  EXPECT_EQ(again.conversations()[0].id, good);
  EXPECT_EQ(again.load_problems().size(), 4u);
  int aside = 0;
  for (const auto& entry : fs::directory_iterator(dir_))
    if (entry.path().string().find(".json.corrupt-") != std::string::npos) ++aside;
  EXPECT_EQ(aside, 4);
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "20260101-000000-aaaaaa.json"));
}

TEST_F(ConversationStoreTest, NewerFormatIsSkippedButLeftInPlace) {
  write("20260101-000000-eeeeee.json",
        "{\"format\":\"magnetar-conversation\",\"format_version\":99,\"id\":\"20260101-000000-eeeeee\","
        "\"messages\":[]}");
  ConversationStore store;
  ASSERT_TRUE(store.open(dir_).is_ok());
  EXPECT_TRUE(store.conversations().empty());
  ASSERT_EQ(store.load_problems().size(), 1u);
  EXPECT_NE(store.load_problems()[0].find("newer"), std::string::npos);
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "20260101-000000-eeeeee.json"));
}

TEST_F(ConversationStoreTest, SearchMatchesTitlesCaseInsensitively) {
  ConversationStore store;
  ASSERT_TRUE(store.open(dir_).is_ok());
  const std::string a = store.create("", "", SamplingSettings{});
  const std::string b = store.create("", "", SamplingSettings{});
  ASSERT_TRUE(store.rename(a, "AVX2 kernels").is_ok());
  ASSERT_TRUE(store.rename(b, "Bedtime story").is_ok());
  EXPECT_EQ(store.search("kern"), std::vector<std::string>{a});
  EXPECT_EQ(store.search("STORY"), std::vector<std::string>{b});
  EXPECT_EQ(store.search("").size(), 2u);
  EXPECT_TRUE(store.search("gemma").empty());
}

TEST_F(ConversationStoreTest, AtomicWriteReplacesWholeFile) {
  const std::string path = from_path(fs::path(dir_) / "x.txt");
  ASSERT_TRUE(write_file_atomically(path, std::string(10000, 'a')).is_ok());
  ASSERT_TRUE(write_file_atomically(path, "short").is_ok());
  std::string text;
  ASSERT_TRUE(read_whole_file(path, &text).is_ok());
  EXPECT_EQ(text, "short");
  EXPECT_FALSE(write_file_atomically(from_path(fs::path(dir_) / "no" / "such" / "dir.txt"), "x").is_ok());
}

}  // namespace
}  // namespace magnetar::app
