// The app's own settings (threads, context length, sampling defaults, known models), kept in
// settings.json beside the conversations folder. Missing or damaged: defaults, never an abort.
#pragma once
#include <string>
#include <vector>

#include "app_state.h"

namespace magnetar::app {

Status load_settings(const std::string& path, Settings* settings, std::vector<std::string>* known_models);
Status save_settings(const std::string& path, const Settings& settings,
                     const std::vector<std::string>& known_models);

}  // namespace magnetar::app
