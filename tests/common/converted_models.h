// Converts shared test-data models once per test process into a temporary folder (removed at
// exit) and hands out the paths, so each golden test does not repeat the conversion.
#pragma once
#include <string>

#include "magnetar/convert.h"

namespace magnetar::test {

// source: path relative to the test data ("stories260K/stories260K.bin", "gemma/tiny-gemma").
// On failure returns "" and sets *error.
std::string converted_model(const std::string& source, WeightType type, std::string* error);

}  // namespace magnetar::test
