// The parsed form of a template: expressions and statements, each with its source line for
// error messages. Built by parser.cpp, walked by interpreter.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace magnetar::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,    // value
    Name,       // name
    ListLit,    // args
    TupleLit,   // args
    DictLit,    // args: key, value, key, value...
    Attr,       // target.name
    Index,      // target[args[0]]
    Slice,      // target[args[0]:args[1]:args[2]] (null = absent)
    Call,       // target(args; arg_names: "" = positional)
    Filter,     // target|name(args) (target null inside {% filter %})
    Test,       // target is [not] name(args)
    Neg,        // -target
    Pos,        // +target
    Not,        // not target
    Binary,     // args[0] op args[1]: + - * / // % ** ~ and or
    Compare,    // args[0] ops[0] args[1] ops[1] args[2]...: == != < > <= >= in notin
    Conditional // args[1] if args[0] else args[2] (args[2] may be null)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;  // Name, Attr, Filter, Test, Binary operator
  ExprPtr target;
  std::vector<ExprPtr> args;
  std::vector<std::string> arg_names;  // Call/Filter/Test keyword names; Compare operators
  bool negated = false;                // Test: "is not"
  int height = 1;                      // longest path to a leaf (bounded by the parser)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    Text,        // text
    Output,      // {{ expr }}
    If,          // conditions[i] → bodies[i]; bodies.back() is else when it has no condition
    For,         // for names in expr [if condition]: bodies[0], else bodies[1]
    Set,         // names = expr, or target.attr = expr, or {% set name %}bodies[0]{% endset %}
    Macro,       // name(params = defaults): bodies[0]
    CallBlock,   // {% call(params) expr %}bodies[0]{% endcall %}
    FilterBlock, // {% filter expr %}bodies[0]{% endfilter %} (expr: Filter chain on null)
    With,        // {% with names = conditions %}bodies[0]{% endwith %}
    Scope,       // bodies[0] rendered as is ({% generation %} of transformers)
    Break,
    Continue,
  };
  Kind kind;
  int line = 0;
  Text text;
  ExprPtr expr;
  ExprPtr condition;                  // For's filter
  std::vector<ExprPtr> conditions;    // If's branches; With's values; Macro's defaults (null = none)
  std::vector<std::string> names;     // For/Set targets; Macro/CallBlock parameters; With names
  std::string name;                   // Macro name; Set attribute (names[0].name)
  std::vector<Body> bodies;
};

}  // namespace magnetar::jinja
