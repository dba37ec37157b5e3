// InputTrickle: which queued input events one frame takes (see input_trickle.h).
#include "input_trickle.h"

namespace magnetar::app {

void InputTrickle::take_frame(std::vector<InputEvent>* out) {
  out->clear();
  std::bitset<kKeys> keys_changed;
  std::bitset<kButtons> buttons_changed;
  bool text = false, moved = false, scrolled = false, key_pressed = false;
  while (!queue_.empty()) {
    const InputEvent& e = queue_.front();
    const bool first = out->empty();  // a frame always takes at least one event
    switch (e.kind) {
      case InputEvent::Kind::Key: {
        const bool valid = e.code >= 0 && e.code < kKeys;
        const bool down = e.action != kRelease;
        if (valid && down != key_down(e.code)) {
          if (!first && (keys_changed[e.code] || key_pressed || text || buttons_changed.any())) return;
          keys_down_[e.code] = down;
          keys_changed[e.code] = true;
          key_pressed = down;
        }
        break;
      }
      case InputEvent::Kind::Char:
        if (!first && (keys_changed.any() || buttons_changed.any() || moved || scrolled)) return;
        text = true;
        break;
      case InputEvent::Kind::MouseButton: {
        const bool valid = e.code >= 0 && e.code < kButtons;
        const bool down = e.action != kRelease;
        if (valid && down != button_down(e.code)) {
          if (!first && (buttons_changed[e.code] || scrolled || moved)) return;
          buttons_down_[e.code] = down;
          buttons_changed[e.code] = true;
        }
        break;
      }
      case InputEvent::Kind::MouseMove:
        if (!first && (buttons_changed.any() || keys_changed.any() || text || scrolled)) return;
        has_position_ = true;
        mouse_x_ = e.x;
        mouse_y_ = e.y;
        moved = true;
        break;
      case InputEvent::Kind::Scroll:
        if (!first && (moved || buttons_changed.any())) return;
        scrolled = true;
        break;
    }
    out->push_back(e);
    queue_.pop_front();
  }
}

}  // namespace magnetar::app
