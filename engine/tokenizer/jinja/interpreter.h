// Walks a parsed template (ast.h) and produces its text with content ranges: scopes, loops,
// macros, call blocks, expression evaluation and the global functions. Throws Error; the
// Template class (template.h) turns that into a Status.
#pragma once
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/template.h"

namespace magnetar::jinja {

Text render_body(const Body& body, const Dict& variables, const RenderLimits& limits);

}  // namespace magnetar::jinja
