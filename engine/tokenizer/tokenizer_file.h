// Loading a Tokenizer straight from a file, for `magnetar-cli tokenize` and tests: a Magnetar
// model (its tokenizer section; the weights are not read), a tokenizer.json (with the
// tokenizer_config.json beside it, when there is one), or a SentencePiece tokenizer.model.
#pragma once
#include <string>

#include "magnetar/status.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {

Status load_tokenizer_file(const std::string& path, Tokenizer* out);

}  // namespace magnetar
