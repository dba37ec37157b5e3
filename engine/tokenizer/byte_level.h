// GPT-2's reversible byte → character mapping used by byte-level BPE vocabularies: printable
// Latin-1 bytes stand for themselves, the other 68 bytes map to U+0100.. in order.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace magnetar::tok {

uint32_t byte_to_code_point(uint8_t byte);
// The byte a mapped character stands for; -1 when the character is not part of the mapping.
int code_point_to_byte(uint32_t cp);
// A mapped token text back to its raw bytes; false when some character is not mapped.
bool unmap_byte_level(std::string_view token, std::string* bytes);

}  // namespace magnetar::tok
