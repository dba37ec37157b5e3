// The window icon, drawn in code (a neutron star with its two beams, the same design as
// assets/): the one piece of the look that needs the window system (GLFW).
#include "window_icon.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace magnetar::app {

void SetWindowIcon(GLFWwindow* window) {
  // A neutron star: a white-violet core with a soft glow and two beams, on a dark rounded tile.
  constexpr int kSize = 64;
  std::vector<unsigned char> pixels(kSize * kSize * 4);
  for (int y = 0; y < kSize; ++y) {
    for (int x = 0; x < kSize; ++x) {
      const float fx = (x + 0.5f) / kSize * 2 - 1, fy = (y + 0.5f) / kSize * 2 - 1;
      // Rounded square mask.
      const float ax = std::fabs(fx), ay = std::fabs(fy), corner = 0.3f;
      float mask = 1.0f;
      if (ax > 1 - corner && ay > 1 - corner) {
        const float d = std::hypot(ax - (1 - corner), ay - (1 - corner));
        mask = std::clamp((corner - d) * kSize * 0.5f, 0.0f, 1.0f);
      }
      const float r = std::hypot(fx, fy);
      // Beams along the diagonal (tilted axis), fading outwards.
      const float along = (fx - fy) * 0.7071f, across = (fx + fy) * 0.7071f;
      const float beam = std::exp(-across * across * 160.0f) * std::clamp(1.2f - std::fabs(along), 0.0f, 1.0f);
      const float glow = std::exp(-r * r * 9.0f);
      const float core = std::clamp((0.2f - r) * 40.0f, 0.0f, 1.0f);
      float red = 22 + 110 * glow + 150 * beam + 255 * core;
      float green = 24 + 90 * glow + 140 * beam + 255 * core;
      float blue = 34 + 255 * glow + 255 * beam + 255 * core;
      unsigned char* p = &pixels[(y * kSize + x) * 4];
      p[0] = static_cast<unsigned char>(std::min(red, 255.0f));
      p[1] = static_cast<unsigned char>(std::min(green, 255.0f));
      p[2] = static_cast<unsigned char>(std::min(blue, 255.0f));
      p[3] = static_cast<unsigned char>(255 * mask);
    }
  }
  GLFWimage image{kSize, kSize, pixels.data()};
  glfwSetWindowIcon(window, 1, &image);
}

}  // namespace magnetar::app
