# Every dependency comes from a Debian package (or, for the Windows cross build, from Debian's
# source packages built by installer/windows/build-deps.sh into MAGNETAR_WIN_DEPS).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

# SentencePiece ships a pkg-config file on Debian; the Windows deps prefix provides the same.
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
# tokenizer.json pipelines: PCRE2 runs the pre-tokenizer regexes, utf8proc does NFC/NFD/NFKC.
# The Windows deps prefix builds both static, so the static flag travels with them.
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)

if(MAGNETAR_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

execute_process(COMMAND ${CMAKE_ASM_NASM_COMPILER} -v OUTPUT_VARIABLE MAGNETAR_NASM_VERSION_TEXT)
string(REGEX MATCH "[0-9]+\\.[0-9]+" MAGNETAR_NASM_VERSION "${MAGNETAR_NASM_VERSION_TEXT}")
if(MAGNETAR_NASM_VERSION VERSION_LESS 2.14)
  message(FATAL_ERROR "NASM ${MAGNETAR_NASM_VERSION} is too old: the kernels need 2.14+ (apt-get install nasm)")
endif()
