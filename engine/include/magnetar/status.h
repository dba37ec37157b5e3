// Status: the result of anything that can fail because of user input or the environment
// (files, folders, JSON, prompts). Programmer errors are asserts; the hot path returns nothing.
#pragma once
#include <string>
#include <utility>

namespace magnetar {

class [[nodiscard]] Status {
 public:
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("reading config.json: ...") while the error travels up.
  Status with_context(const std::string& context) const {
    return failed_ ? Status(context + ": " + message_) : *this;
  }

 private:
  Status() = default;
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

#define MAGNETAR_TRY(expr)                     \
  do {                                         \
    ::magnetar::Status status_ = (expr);       \
    if (!status_.is_ok()) return status_;      \
  } while (0)

}  // namespace magnetar
