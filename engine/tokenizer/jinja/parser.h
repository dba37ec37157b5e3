// Template parser: tokens (lexer.h) to statements and expressions (ast.h), with Jinja's operator
// precedence (filters and tests bind tighter than arithmetic: `xs|length - 1`). Unknown
// statements, filters and tests are errors here, so they show when a model is converted.
#pragma once
#include <string_view>

#include "tokenizer/jinja/ast.h"

namespace magnetar::jinja {

// Throws Error ("template line N: ...") on a syntax error or an unsupported construct.
Body parse_template(std::string_view source);

}  // namespace magnetar::jinja
