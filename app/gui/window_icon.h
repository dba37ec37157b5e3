// The app window's icon (window_icon.cpp): GLFW, so it lives beside the window code, not the panels.
#pragma once

struct GLFWwindow;

namespace magnetar::app {
void SetWindowIcon(GLFWwindow* window);
}  // namespace magnetar::app
