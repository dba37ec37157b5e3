// SHA-256 of a byte range (FIPS 180-4), for tests that check data against published digests
// (the K-quant goldens' sha256 of each fully dequantized tensor).
#pragma once
#include <cstddef>
#include <string>

namespace magnetar::test {

// Lower-case hex digest of data[0, size).
std::string sha256_hex(const void* data, size_t size);

}  // namespace magnetar::test
