// Recursive-descent parser for templates: see parser.h. Mirrors jinja2/parser.py's grammar.
#include "tokenizer/jinja/parser.h"

#include <algorithm>
#include <initializer_list>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/lexer.h"

namespace magnetar::jinja {

namespace {

constexpr int kMaxNesting = 128;  // expression and block nesting (keeps the C++ stack bounded)
constexpr int kMaxHeight = 256;   // expression tree height: `a + a + a ...` builds no recursion here
                                  // but the interpreter walks it recursively

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Body parse() {
    std::string end;
    Body body = parse_body({}, &end);
    return body;
  }

 private:
  // ---- token helpers ------------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = t_[i_];
    if (i_ + 1 < t_.size()) ++i_;
    return t;
  }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::Op && peek(ahead).value == op;
  }
  bool is_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::Name && peek(ahead).value == name;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }
  [[noreturn]] void error(const std::string& what, int line = -1) const {
    fail("template line " + std::to_string(line < 0 ? peek().line : line) + ": " + what);
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Token::Type::Text: return "text";
      case Token::Type::VarBegin: return "'{{'";
      case Token::Type::VarEnd: return "'}}'";
      case Token::Type::BlockBegin: return "'{%'";
      case Token::Type::BlockEnd: return "'%}'";
      case Token::Type::Name: return "'" + t.value + "'";
      case Token::Type::String: return "a string";
      case Token::Type::Int:
      case Token::Type::Float: return "a number";
      case Token::Type::Op: return "'" + t.value + "'";
      case Token::Type::End: return "the end of the template";
    }
    return "?";
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) error(std::string("expected '") + op + "', found " + describe(peek()));
  }
  void expect(Token::Type type, const char* what) {
    if (peek().type != type) error(std::string("expected ") + what + ", found " + describe(peek()));
    next();
  }
  std::string expect_name() {
    if (peek().type != Token::Type::Name) error("expected a name, found " + describe(peek()));
    return next().value;
  }

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > kMaxNesting) p_->error("template nested too deeply");
    }
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };

  static ExprPtr make(Expr::Kind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }
  // Records a finished node's height; fails past kMaxHeight.
  ExprPtr seal(ExprPtr e) const {
    int h = 0;
    if (e->target) h = e->target->height;
    for (const ExprPtr& a : e->args)
      if (a) h = std::max(h, a->height);
    e->height = h + 1;
    if (e->height > kMaxHeight) error("expression nested too deeply", e->line);
    return e;
  }

  static NodePtr make_node(Node::Kind kind, int line) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->line = line;
    return n;
  }

  // ---- statements ---------------------------------------------------------------------------
  // Nodes up to a {% tag %} named in `ends` (consumed up to and including its keyword).
  Body parse_body(std::initializer_list<const char*> ends, std::string* found) {
    DepthGuard guard(this);
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.type == Token::Type::End) {
        if (ends.size() == 0) return body;
        std::string wanted;
        for (const char* e : ends) wanted += std::string(wanted.empty() ? "" : " or ") + "{% " + e + " %}";
        error("unexpected end of template, expected " + wanted);
      }
      if (t.type == Token::Type::Text) {
        auto n = make_node(Node::Kind::Text, t.line);
        n->text = Text(next().value);
        body.push_back(std::move(n));
      } else if (t.type == Token::Type::VarBegin) {
        auto n = make_node(Node::Kind::Output, next().line);
        n->expr = parse_tuple(true);
        expect(Token::Type::VarEnd, "'}}'");
        body.push_back(std::move(n));
      } else if (t.type == Token::Type::BlockBegin) {
        const Token& keyword = peek(1);
        if (keyword.type != Token::Type::Name) {
          next();
          error("expected a statement name after '{%', found " + describe(keyword));
        }
        for (const char* e : ends)
          if (keyword.value == e) {
            next();
            *found = next().value;
            return body;
          }
        next();
        body.push_back(parse_statement());
      } else {
        error("unexpected " + describe(t));
      }
    }
  }

  void end_tag() { expect(Token::Type::BlockEnd, "'%}'"); }

  NodePtr parse_statement() {
    const Token& kw = next();
    const int line = kw.line;
    const std::string& k = kw.value;
    if (k == "if") return parse_if(line);
    if (k == "for") return parse_for(line);
    if (k == "set") return parse_set(line);
    if (k == "macro") return parse_macro(line);
    if (k == "call") return parse_call_block(line);
    if (k == "filter") return parse_filter_block(line);
    if (k == "with") return parse_with(line);
    if (k == "generation") {  // transformers' AssistantTracker: rendered as is
      auto n = make_node(Node::Kind::Scope, line);
      end_tag();
      std::string end;
      n->bodies.push_back(parse_body({"endgeneration"}, &end));
      end_tag();
      return n;
    }
    if (k == "break" || k == "continue") {
      if (loop_depth_ == 0) error("'" + k + "' outside a loop", line);
      auto n = make_node(k == "break" ? Node::Kind::Break : Node::Kind::Continue, line);
      end_tag();
      return n;
    }
    static const char* const kUnsupported[] = {"include", "import", "from", "extends", "block",
                                               "do", "autoescape", "trans", "pluralize"};
    for (const char* u : kUnsupported)
      if (k == u) error("the '{% " + k + " %}' statement is not supported in chat templates", line);
    error("unknown statement '{% " + k + " %}'", line);
  }

  NodePtr parse_if(int line) {
    auto n = make_node(Node::Kind::If, line);
    n->conditions.push_back(parse_expression(true));
    end_tag();
    while (true) {
      std::string end;
      n->bodies.push_back(parse_body({"elif", "else", "endif"}, &end));
      if (end == "elif") {
        n->conditions.push_back(parse_expression(true));
        end_tag();
      } else if (end == "else") {
        end_tag();
        n->bodies.push_back(parse_body({"endif"}, &end));
        end_tag();
        return n;
      } else {
        end_tag();
        return n;
      }
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = skip_op("(");
    do {
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    return names;
  }

  NodePtr parse_for(int line) {
    auto n = make_node(Node::Kind::For, line);
    n->names = parse_targets();
    if (!skip_name("in")) error("expected 'in' in the for statement");
    n->expr = parse_tuple(false);
    if (skip_name("if")) n->condition = parse_expression(true);
    if (is_name("recursive")) error("recursive for loops are not supported");
    end_tag();
    ++loop_depth_;
    std::string end;
    n->bodies.push_back(parse_body({"else", "endfor"}, &end));
    --loop_depth_;
    if (end == "else") {
      end_tag();
      const int saved = loop_depth_;
      loop_depth_ = 0;  // break/continue in the else branch do not belong to this loop
      n->bodies.push_back(parse_body({"endfor"}, &end));
      loop_depth_ = saved;
    }
    end_tag();
    return n;
  }

  NodePtr parse_set(int line) {
    auto n = make_node(Node::Kind::Set, line);
    const std::string first = expect_name();
    if (skip_op(".")) {
      n->names.push_back(first);
      n->name = expect_name();
    } else {
      n->names.push_back(first);
      while (skip_op(",")) n->names.push_back(expect_name());
    }
    if (skip_op("=")) {
      n->expr = parse_tuple(true);
      end_tag();
      return n;
    }
    if (n->names.size() != 1 || !n->name.empty()) error("a block {% set %} takes one name", line);
    end_tag();
    std::string end;
    n->bodies.push_back(parse_body({"endset"}, &end));
    end_tag();
    return n;
  }

  // "(a, b='x')" of macros and call blocks.
  void parse_params(Node* n) {
    expect_op("(");
    while (!is_op(")")) {
      if (!n->names.empty()) expect_op(",");
      if (is_op(")")) break;
      n->names.push_back(expect_name());
      n->conditions.push_back(skip_op("=") ? parse_expression(true) : nullptr);
    }
    expect_op(")");
  }

  NodePtr parse_macro(int line) {
    auto n = make_node(Node::Kind::Macro, line);
    n->name = expect_name();
    parse_params(n.get());
    end_tag();
    const int saved = loop_depth_;
    loop_depth_ = 0;
    std::string end;
    n->bodies.push_back(parse_body({"endmacro"}, &end));
    loop_depth_ = saved;
    end_tag();
    return n;
  }

  NodePtr parse_call_block(int line) {
    auto n = make_node(Node::Kind::CallBlock, line);
    if (is_op("(")) parse_params(n.get());
    n->expr = parse_expression(true);
    if (n->expr->kind != Expr::Kind::Call) error("{% call %} needs a macro call", line);
    end_tag();
    std::string end;
    n->bodies.push_back(parse_body({"endcall"}, &end));
    end_tag();
    return n;
  }

  NodePtr parse_filter_block(int line) {
    auto n = make_node(Node::Kind::FilterBlock, line);
    ExprPtr chain;
    do {
      chain = parse_filter(std::move(chain));
    } while (skip_op("|"));
    n->expr = std::move(chain);
    end_tag();
    std::string end;
    n->bodies.push_back(parse_body({"endfilter"}, &end));
    end_tag();
    return n;
  }

  NodePtr parse_with(int line) {
    auto n = make_node(Node::Kind::With, line);
    while (peek().type != Token::Type::BlockEnd) {
      if (!n->names.empty()) expect_op(",");
      n->names.push_back(expect_name());
      expect_op("=");
      n->conditions.push_back(parse_expression(true));
    }
    end_tag();
    std::string end;
    n->bodies.push_back(parse_body({"endwith"}, &end));
    end_tag();
    return n;
  }

  // ---- expressions --------------------------------------------------------------------------
  ExprPtr parse_tuple(bool with_condexpr) {
    const int line = peek().line;
    ExprPtr first = parse_expression(with_condexpr);
    if (!is_op(",")) return first;
    auto tuple = make(Expr::Kind::TupleLit, line);
    tuple->args.push_back(std::move(first));
    while (skip_op(",")) {
      if (peek().type == Token::Type::VarEnd || peek().type == Token::Type::BlockEnd || is_op(")")) break;
      tuple->args.push_back(parse_expression(with_condexpr));
    }
    return seal(std::move(tuple));
  }

  ExprPtr parse_expression(bool with_condexpr) {
    DepthGuard guard(this);
    ExprPtr e = parse_or();
    if (!with_condexpr) return e;
    while (is_name("if")) {
      const int line = next().line;
      auto cond = make(Expr::Kind::Conditional, line);
      cond->args.push_back(parse_or());
      cond->args.push_back(std::move(e));
      cond->args.push_back(skip_name("else") ? parse_expression(true) : nullptr);
      e = seal(std::move(cond));
    }
    return e;
  }

  ExprPtr binary(const char* op, ExprPtr left, ExprPtr right, int line) {
    auto e = make(Expr::Kind::Binary, line);
    e->name = op;
    e->args.push_back(std::move(left));
    e->args.push_back(std::move(right));
    return seal(std::move(e));
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      const int line = next().line;
      left = binary("or", std::move(left), parse_and(), line);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      const int line = next().line;
      left = binary("and", std::move(left), parse_not(), line);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard guard(this);
      auto e = make(Expr::Kind::Not, next().line);
      e->target = parse_not();
      return seal(std::move(e));
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = peek().line;
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (peek().type == Token::Type::Op &&
          (peek().value == "==" || peek().value == "!=" || peek().value == "<" ||
           peek().value == ">" || peek().value == "<=" || peek().value == ">=")) {
        op = next().value;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "notin";
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(Expr::Kind::Compare, line);
        cmp->args.push_back(std::move(first));
      }
      cmp->arg_names.push_back(op);
      cmp->args.push_back(parse_math1());
    }
    return cmp ? seal(std::move(cmp)) : std::move(first);
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& op = next();
      const std::string name = op.value;
      left = binary(name == "+" ? "+" : "-", std::move(left), parse_concat(), op.line);
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (is_op("~")) {
      const int line = next().line;
      left = binary("~", std::move(left), parse_math2(), line);
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& op = next();
      static const char* const kOps[] = {"*", "/", "//", "%"};
      const char* name = *std::find_if(std::begin(kOps), std::end(kOps),
                                       [&](const char* o) { return op.value == o; });
      left = binary(name, std::move(left), parse_pow(), op.line);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const int line = next().line;
      left = binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      const Token& op = next();
      node = make(op.value == "-" ? Expr::Kind::Neg : Expr::Kind::Pos, op.line);
      node->target = parse_unary(false);
      node = seal(std::move(node));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    const int line = t.line;
    switch (t.type) {
      case Token::Type::Name: {
        const std::string& v = next().value;
        auto e = make(Expr::Kind::Literal, line);
        if (v == "true" || v == "True") e->value = Value::boolean(true);
        else if (v == "false" || v == "False") e->value = Value::boolean(false);
        else if (v == "none" || v == "None") e->value = Value::none();
        else {
          e->kind = Expr::Kind::Name;
          e->name = v;
        }
        return e;
      }
      case Token::Type::String: {
        std::string s;
        while (peek().type == Token::Type::String) s += next().value;
        auto e = make(Expr::Kind::Literal, line);
        e->value = Value::string(std::move(s));
        return e;
      }
      case Token::Type::Int: {
        auto e = make(Expr::Kind::Literal, line);
        e->value = Value::from_int(next().integer);
        return e;
      }
      case Token::Type::Float: {
        auto e = make(Expr::Kind::Literal, line);
        e->value = Value::from_float(next().number);
        return e;
      }
      case Token::Type::Op:
        if (t.value == "(") {
          next();
          if (skip_op(")")) return make(Expr::Kind::TupleLit, line);
          ExprPtr inner = parse_tuple(true);
          expect_op(")");
          return inner;
        }
        if (t.value == "[") {
          next();
          auto e = make(Expr::Kind::ListLit, line);
          while (!is_op("]")) {
            if (!e->args.empty()) expect_op(",");
            if (is_op("]")) break;
            e->args.push_back(parse_expression(true));
          }
          expect_op("]");
          return seal(std::move(e));
        }
        if (t.value == "{") {
          next();
          auto e = make(Expr::Kind::DictLit, line);
          while (!is_op("}")) {
            if (!e->args.empty()) expect_op(",");
            if (is_op("}")) break;
            e->args.push_back(parse_expression(true));
            expect_op(":");
            e->args.push_back(parse_expression(true));
          }
          expect_op("}");
          return seal(std::move(e));
        }
        break;
      default: break;
    }
    error("unexpected " + describe(t) + " in an expression");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      const int line = peek().line;
      if (is_op(".")) {
        next();
        if (peek().type == Token::Type::Int) {  // x.0 is x[0]
          auto e = make(Expr::Kind::Index, line);
          auto index = make(Expr::Kind::Literal, line);
          index->value = Value::from_int(next().integer);
          e->target = std::move(node);
          e->args.push_back(std::move(index));
          node = seal(std::move(e));
          continue;
        }
        auto e = make(Expr::Kind::Attr, line);
        e->name = expect_name();
        e->target = std::move(node);
        node = seal(std::move(e));
      } else if (is_op("[")) {
        next();
        node = parse_subscript(std::move(node), line);
      } else if (is_op("(")) {
        auto e = make(Expr::Kind::Call, line);
        e->target = std::move(node);
        parse_call_args(e.get());
        node = seal(std::move(e));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr target, int line) {
    ExprPtr parts[3];
    int n_colons = 0;
    while (!is_op("]")) {
      if (skip_op(":")) {
        if (++n_colons > 2) error("too many ':' in a subscript");
        continue;
      }
      if (parts[n_colons]) error("expected ':' or ']' in a subscript");
      parts[n_colons] = parse_expression(true);
    }
    expect_op("]");
    if (n_colons == 0 && !parts[0]) error("empty subscript", line);
    auto e = make(n_colons == 0 ? Expr::Kind::Index : Expr::Kind::Slice, line);
    e->target = std::move(target);
    e->args.push_back(std::move(parts[0]));
    if (n_colons > 0) {
      e->args.push_back(std::move(parts[1]));
      e->args.push_back(std::move(parts[2]));
    }
    return seal(std::move(e));
  }

  void parse_call_args(Expr* call) {
    expect_op("(");
    bool keyword_seen = false;
    while (!is_op(")")) {
      if (!call->args.empty()) expect_op(",");
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) error("*args and **kwargs in calls are not supported");
      if (peek().type == Token::Type::Name && is_op("=", 1)) {
        call->arg_names.push_back(next().value);
        next();
        keyword_seen = true;
      } else {
        if (keyword_seen) error("a positional argument follows a keyword argument");
        call->arg_names.emplace_back();
      }
      call->args.push_back(parse_expression(true));
    }
    expect_op(")");
  }

  ExprPtr parse_filter(ExprPtr target) {
    const int line = peek().line;
    std::string name = expect_name();
    while (skip_op(".")) name += "." + expect_name();
    if (!has_filter(name)) error("unknown filter '" + name + "'", line);
    auto e = make(Expr::Kind::Filter, line);
    e->name = name;
    e->target = std::move(target);
    if (is_op("(")) parse_call_args(e.get());
    return seal(std::move(e));
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (skip_op("|")) {
        node = parse_filter(std::move(node));
      } else if (is_name("is")) {
        const int line = next().line;
        auto e = make(Expr::Kind::Test, line);
        e->negated = skip_name("not");
        e->name = expect_name();
        if (!has_test(e->name)) error("unknown test '" + e->name + "'", line);
        e->target = std::move(node);
        if (is_op("(")) {
          parse_call_args(e.get());
        } else if (starts_bare_test_argument()) {
          e->arg_names.emplace_back();
          e->args.push_back(parse_postfix(parse_primary()));
        }
        node = seal(std::move(e));
      } else if (is_op("(")) {
        auto e = make(Expr::Kind::Call, peek().line);
        e->target = std::move(node);
        parse_call_args(e.get());
        node = seal(std::move(e));
      } else {
        return node;
      }
    }
  }

  // `x is divisibleby 3`: a test takes one argument without parentheses.
  bool starts_bare_test_argument() const {
    const Token& t = peek();
    if (t.type == Token::Type::Name) {
      static const char* const kStop[] = {"else", "or", "and", "if", "in", "not", "is"};
      return std::none_of(std::begin(kStop), std::end(kStop), [&](const char* s) { return t.value == s; });
    }
    return t.type == Token::Type::String || t.type == Token::Type::Int || t.type == Token::Type::Float ||
           is_op("[") || is_op("{");
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source) { return Parser(tokenize(source)).parse(); }

}  // namespace magnetar::jinja
