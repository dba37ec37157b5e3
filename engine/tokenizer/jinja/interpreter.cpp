// The Jinja tree-walking interpreter: see interpreter.h.
//
// Index: globals · scopes · statements · loops · macros and call blocks · expressions ·
//        operators
#include "tokenizer/jinja/interpreter.h"

#include <cmath>
#include <ctime>
#include <limits>
#include <mutex>
#include <string_view>

#include "tokenizer/jinja/builtins.h"

namespace magnetar::jinja {

namespace {

enum class Flow { Normal, Break, Continue };

// Error carrying the template line and construct, so the outer catch does not re-wrap it.
struct LocatedError {
  Error error;
};

// ---- globals ------------------------------------------------------------------------------

std::string strftime_now(const std::string& format) {
  if (format.size() > 256) fail("strftime_now: format too long");
  // Only the portable conversions: some C runtimes abort on the others.
  for (size_t i = 0; i < format.size(); ++i)
    if (format[i] == '%') {
      const char c = i + 1 < format.size() ? format[++i] : '\0';
      if (c == '\0' || std::string_view("aAbBcdHIjmMpSUwWxXyYZ%").find(c) == std::string_view::npos)
        fail(std::string("strftime_now: unsupported conversion '%") + c + "'");
    }
  static std::mutex mutex;  // std::localtime shares one buffer
  std::tm local{};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const std::time_t now = std::time(nullptr);
    const std::tm* t = std::localtime(&now);
    if (!t) fail("strftime_now: no local time");
    local = *t;
  }
  char buf[1024];
  const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &local);
  if (n == 0 && !format.empty()) fail("strftime_now: the formatted date is too long or empty");
  return std::string(buf, n);
}

Value range_global(const CallArgs& a, const Budget& budget) {
  if (!a.keyword.empty() || a.positional.empty() || a.positional.size() > 3)
    fail("range takes 1 to 3 integer arguments");
  int64_t v[3] = {0, 0, 1};
  for (size_t i = 0; i < a.positional.size(); ++i) {
    const Value& x = a.positional[i];
    if (!x.is(Value::Kind::Int) && !x.is(Value::Kind::Bool)) fail("range takes integers");
    v[a.positional.size() == 1 ? 1 : i] = x.is(Value::Kind::Int) ? x.integer : x.flag;
  }
  const int64_t start = v[0], stop = v[1], step = v[2];
  if (step == 0) fail("range step cannot be zero");
  const double count = std::max(0.0, std::ceil((static_cast<double>(stop) - static_cast<double>(start)) /
                                               static_cast<double>(step)));
  budget.check_items(static_cast<size_t>(std::min(count, 1e18)));
  List items;
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) items.push_back(Value::from_int(start + i * step));
  return Value::from_list(std::move(items));
}

Dict keyword_dict(const CallArgs& a, const char* what) {
  if (!a.positional.empty()) fail(std::string(what) + " takes keyword arguments only");
  Dict d;
  for (const auto& [k, v] : a.keyword) d.set(k, v);
  return d;
}

class Interpreter {
 public:
  Interpreter(const Dict& variables, const RenderLimits& limits) : limits_(limits) {
    budget_.max_string_bytes = limits.max_output_bytes;
    budget_.bytes_left = limits.max_created_bytes;
    budget_.max_items = limits.max_list_items;
    iterations_left_ = limits.max_loop_iterations;
    auto root = std::make_shared<Dict>(variables);
    root->set("raise_exception", Value::callable("raise_exception", [](const CallArgs& a) -> Value {
      const Value* msg = a.get(0, "message");
      throw Error{msg ? to_text(*msg).bytes() : std::string("raise_exception called"), true};
    }));
    root->set("strftime_now", Value::callable("strftime_now", [](const CallArgs& a) {
      const Value* f = a.get(0, "format");
      if (!f || !f->is(Value::Kind::String)) fail("strftime_now needs a format string");
      return Value::string(strftime_now(f->text.bytes()));
    }));
    root->set("range", Value::callable("range", [this](const CallArgs& a) { return range_global(a, budget_); }));
    root->set("namespace", Value::callable("namespace", [](const CallArgs& a) {
      return Value::name_space(keyword_dict(a, "namespace"));
    }));
    root->set("dict", Value::callable("dict", [](const CallArgs& a) {
      return Value::from_dict(keyword_dict(a, "dict"));
    }));
    scopes_.push_back(std::move(root));
  }

  Text run(const Body& body) {
    Text out;
    try {
      exec_body(body, &out);
    } catch (LocatedError& e) {
      throw e.error;
    } catch (Error& e) {
      throw located(std::move(e)).error;
    }
    return out;
  }

 private:
  LocatedError located(Error e) const {
    std::string where = "template line " + std::to_string(line_);
    if (construct_) where += std::string(" (") + construct_ + ")";
    e.message = where + ": " + e.message;
    return LocatedError{std::move(e)};
  }

  // ---- scopes -----------------------------------------------------------------------------
  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (const Value* v = (*it)->find(name)) return *v;
    return Value::undefined("'" + name + "' is undefined");
  }
  void assign(const std::string& name, Value v) { scopes_.back()->set(name, std::move(v)); }

  struct ScopeGuard {
    ScopeGuard(Interpreter* in, std::vector<std::shared_ptr<Dict>> replacement) : in_(in) {
      saved_.swap(in_->scopes_);
      in_->scopes_ = std::move(replacement);
    }
    ScopeGuard(Interpreter* in) : in_(in), saved_(in->scopes_) { in_->scopes_.push_back(std::make_shared<Dict>()); }
    ~ScopeGuard() { in_->scopes_.swap(saved_); }
    Interpreter* in_;
    std::vector<std::shared_ptr<Dict>> saved_;
  };

  void emit(Text* out, const Text& t) {
    if (out->size() + t.size() > limits_.max_output_bytes)
      fail("the output would exceed " + std::to_string(limits_.max_output_bytes) + " bytes");
    out->append(t);
  }

  // ---- statements --------------------------------------------------------------------------
  Flow exec_body(const Body& body, Text* out) {
    for (const NodePtr& n : body) {
      const Flow f = exec(*n, out);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  Flow exec(const Node& n, Text* out) {
    line_ = n.line;
    switch (n.kind) {
      case Node::Kind::Text: emit(out, n.text); return Flow::Normal;
      case Node::Kind::Output: {
        construct_ = "{{ ... }}";
        const Value v = eval(*n.expr);
        emit(out, to_text(v));
        return Flow::Normal;
      }
      case Node::Kind::If:
        construct_ = "{% if %}";
        for (size_t i = 0; i < n.bodies.size(); ++i) {
          if (i < n.conditions.size()) {
            line_ = n.conditions[i]->line;
            if (!truthy(eval(*n.conditions[i]))) continue;
          }
          return exec_body(n.bodies[i], out);
        }
        return Flow::Normal;
      case Node::Kind::For: return exec_for(n, out);
      case Node::Kind::Set: exec_set(n); return Flow::Normal;
      case Node::Kind::Macro: assign(n.name, make_macro(n)); return Flow::Normal;
      case Node::Kind::CallBlock: exec_call_block(n, out); return Flow::Normal;
      case Node::Kind::FilterBlock: {
        construct_ = "{% filter %}";
        Text inner;
        exec_scoped(n.bodies[0], &inner);
        line_ = n.line;
        emit(out, to_text(eval_filter_chain(*n.expr, Value::string(std::move(inner)))));
        return Flow::Normal;
      }
      case Node::Kind::With: {
        construct_ = "{% with %}";
        std::vector<Value> values;
        for (const ExprPtr& e : n.conditions) values.push_back(eval(*e));
        ScopeGuard scope(this);
        for (size_t i = 0; i < n.names.size(); ++i) assign(n.names[i], values[i]);
        return exec_body(n.bodies[0], out);
      }
      case Node::Kind::Scope: return exec_body(n.bodies[0], out);
      case Node::Kind::Break: return Flow::Break;
      case Node::Kind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  void exec_scoped(const Body& body, Text* out) {
    ScopeGuard scope(this);
    exec_body(body, out);
  }

  void unpack(const std::vector<std::string>& names, const Value& v) {
    if (names.size() == 1) {
      assign(names[0], v);
      return;
    }
    const List items = iterate(v, budget_.max_items);
    if (items.size() != names.size())
      fail("cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(names.size()) + " names");
    for (size_t i = 0; i < names.size(); ++i) assign(names[i], items[i]);
  }

  void exec_set(const Node& n) {
    construct_ = "{% set %}";
    Value v;
    if (n.expr) {
      v = eval(*n.expr);
    } else {
      Text inner;
      exec_scoped(n.bodies[0], &inner);
      v = Value::string(std::move(inner));
    }
    line_ = n.line;
    if (!n.name.empty()) {
      Value target = lookup(n.names[0]);
      if (!target.is(Value::Kind::Namespace))
        fail("cannot set attribute '" + n.name + "' of '" + n.names[0] + "': only namespace() objects can be changed");
      // Namespaces are shared and mutable: one stored in another could hold itself, a cycle
      // that would outlive the render.
      if (holds_namespace(v, 0))
        fail("cannot set attribute '" + n.name + "' of '" + n.names[0] + "' to a value holding a namespace()");
      target.dict->set(n.name, std::move(v));
      return;
    }
    unpack(n.names, v);
  }

  static bool holds_namespace(const Value& v, int depth) {
    if (v.is(Value::Kind::Namespace) || depth > 200) return true;
    if (v.is(Value::Kind::List) && v.list)
      for (const Value& item : *v.list)
        if (holds_namespace(item, depth + 1)) return true;
    if (v.is(Value::Kind::Dict) && v.dict)
      for (const auto& entry : v.dict->entries)
        if (holds_namespace(entry.second, depth + 1)) return true;
    return false;
  }

  // ---- loops -------------------------------------------------------------------------------
  Flow exec_for(const Node& n, Text* out) {
    construct_ = "{% for %}";
    const Value iterable = eval(*n.expr);
    if (iterable.is(Value::Kind::None) || iterable.is(Value::Kind::Int) || iterable.is(Value::Kind::Float) ||
        iterable.is(Value::Kind::Bool) || iterable.is(Value::Kind::Function) || iterable.is(Value::Kind::Namespace))
      fail(std::string("'") + type_name(iterable) + "' object is not iterable");
    List items = iterate(iterable, budget_.max_items);
    if (n.condition) {  // the loop filter runs before loop.index/length are counted
      List kept;
      for (Value& item : items) {
        ScopeGuard scope(this);
        unpack(n.names, item);
        line_ = n.condition->line;
        if (truthy(eval(*n.condition))) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    const int64_t length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      if (--iterations_left_ < 0)
        fail("more than " + std::to_string(limits_.max_loop_iterations) + " loop iterations");
      ScopeGuard scope(this);
      Dict loop;
      loop.set("index0", Value::from_int(i));
      loop.set("index", Value::from_int(i + 1));
      loop.set("revindex0", Value::from_int(length - i - 1));
      loop.set("revindex", Value::from_int(length - i));
      loop.set("first", Value::boolean(i == 0));
      loop.set("last", Value::boolean(i == length - 1));
      loop.set("length", Value::from_int(length));
      loop.set("depth", Value::from_int(1));
      loop.set("depth0", Value::from_int(0));
      loop.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
      loop.set("nextitem", i + 1 < length ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
      loop.set("cycle", Value::callable("cycle", [i](const CallArgs& a) {
        if (a.positional.empty()) fail("loop.cycle needs at least one value");
        return a.positional[static_cast<size_t>(i) % a.positional.size()];
      }));
      assign("loop", Value::name_space(std::move(loop)));
      unpack(n.names, items[static_cast<size_t>(i)]);
      if (exec_body(n.bodies[0], out) == Flow::Break) break;
      construct_ = "{% for %}";
    }
    if (length == 0 && n.bodies.size() > 1) exec_scoped(n.bodies[1], out);
    return Flow::Normal;
  }

  // ---- macros and call blocks ---------------------------------------------------------------
  Value make_macro(const Node& n) {
    const Node* node = &n;
    return Value::callable(n.name, [this, node](const CallArgs& a) { return call_macro(*node, a); });
  }

  Value call_macro(const Node& m, const CallArgs& a) {
    if (++call_depth_ > limits_.max_call_depth)
      fail("macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
    Value caller = std::move(pending_caller_);
    pending_caller_ = Value();
    if (a.positional.size() > m.names.size())
      fail("macro '" + m.name + "' takes " + std::to_string(m.names.size()) + " argument(s), got " +
           std::to_string(a.positional.size()));
    for (const auto& [k, v] : a.keyword)
      if (std::find(m.names.begin(), m.names.end(), k) == m.names.end())
        fail("macro '" + m.name + "' has no argument '" + k + "'");
    ScopeGuard scope(this, {scopes_.front(), std::make_shared<Dict>()});
    for (size_t i = 0; i < m.names.size(); ++i) {
      if (const Value* v = a.get(i, m.names[i])) assign(m.names[i], *v);
      else if (m.conditions[i]) assign(m.names[i], eval(*m.conditions[i]));
      else assign(m.names[i], Value::undefined("'" + m.names[i] + "' is undefined (a missing macro argument)"));
    }
    if (!caller.is_undefined()) assign("caller", caller);
    Text out;
    const char* saved_construct = construct_;
    exec_body(m.bodies[0], &out);
    construct_ = saved_construct;
    --call_depth_;
    return Value::string(std::move(out));
  }

  void exec_call_block(const Node& n, Text* out) {
    construct_ = "{% call %}";
    const Node* node = &n;
    auto captured = scopes_;
    Value caller = Value::callable("caller", [this, node, captured](const CallArgs& a) {
      if (++call_depth_ > limits_.max_call_depth)
        fail("macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
      auto scopes = captured;
      scopes.push_back(std::make_shared<Dict>());
      ScopeGuard scope(this, std::move(scopes));
      for (size_t i = 0; i < node->names.size(); ++i) {
        if (const Value* v = a.get(i, node->names[i])) assign(node->names[i], *v);
        else if (node->conditions[i]) assign(node->names[i], eval(*node->conditions[i]));
        else assign(node->names[i], Value::undefined("'" + node->names[i] + "' is undefined"));
      }
      Text body;
      exec_body(node->bodies[0], &body);
      --call_depth_;
      return Value::string(std::move(body));
    });
    const Expr& call = *n.expr;
    const Value callee = eval_callee(call);
    const CallArgs args = eval_args(call);
    pending_caller_ = caller;
    line_ = n.line;
    const Value result = invoke(callee, args);
    pending_caller_ = Value();
    emit(out, to_text(result));
  }

  // ---- expressions -------------------------------------------------------------------------
  CallArgs eval_args(const Expr& e) {
    CallArgs a;
    for (size_t i = 0; i < e.args.size(); ++i) {
      Value v = eval(*e.args[i]);
      if (e.arg_names[i].empty()) a.positional.push_back(std::move(v));
      else a.keyword.emplace_back(e.arg_names[i], std::move(v));
    }
    return a;
  }

  Value eval_callee(const Expr& call) { return eval(*call.target); }

  Value invoke(const Value& callee, const CallArgs& args) {
    if (callee.is_undefined()) fail(callee.text.empty() ? "calling an undefined value" : callee.text.bytes());
    if (!callee.is(Value::Kind::Function)) fail(std::string("'") + type_name(callee) + "' object is not callable");
    return callee.function->call(args);
  }

  Value eval_filter_chain(const Expr& e, Value input) {
    const Value subject = e.target ? eval_filter_chain(*e.target, std::move(input)) : std::move(input);
    line_ = e.line;
    return apply_filter(e.name, subject, eval_args(e), budget_);
  }

  Value eval(const Expr& e) {
    line_ = e.line;
    switch (e.kind) {
      case Expr::Kind::Literal: return e.value;
      case Expr::Kind::Name: return lookup(e.name);
      case Expr::Kind::ListLit:
      case Expr::Kind::TupleLit: {
        List items;
        for (const ExprPtr& x : e.args) items.push_back(eval(*x));
        return Value::from_list(std::move(items));
      }
      case Expr::Kind::DictLit: {
        Dict d;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value key = eval(*e.args[i]);
          if (!key.is(Value::Kind::String)) fail("dict keys must be strings in chat templates");
          d.set(key.text.bytes(), eval(*e.args[i + 1]));
        }
        return Value::from_dict(std::move(d));
      }
      case Expr::Kind::Attr: {
        const Value target = eval(*e.target);
        line_ = e.line;
        return get_attribute(target, e.name, budget_);
      }
      case Expr::Kind::Index: {
        const Value target = eval(*e.target);
        const Value key = eval(*e.args[0]);
        line_ = e.line;
        return get_item(target, key, budget_);
      }
      case Expr::Kind::Slice: {
        const Value target = eval(*e.target);
        Value parts[3];
        for (int i = 0; i < 3; ++i)
          parts[i] = e.args[static_cast<size_t>(i)] ? eval(*e.args[static_cast<size_t>(i)]) : Value::none();
        line_ = e.line;
        return get_slice(target, parts[0], parts[1], parts[2]);
      }
      case Expr::Kind::Call: {
        const Value callee = eval_callee(e);
        const CallArgs args = eval_args(e);
        line_ = e.line;
        return invoke(callee, args);
      }
      case Expr::Kind::Filter: {
        const Value input = eval(*e.target);
        const CallArgs args = eval_args(e);
        line_ = e.line;
        return apply_filter(e.name, input, args, budget_);
      }
      case Expr::Kind::Test: {
        const Value input = eval(*e.target);
        const CallArgs args = eval_args(e);
        line_ = e.line;
        return Value::boolean(apply_test(e.name, input, args) != e.negated);
      }
      case Expr::Kind::Neg:
      case Expr::Kind::Pos: {
        const Value v = eval(*e.target);
        if (v.is_undefined()) fail(v.text.bytes());
        if (v.is(Value::Kind::Float)) return Value::from_float(e.kind == Expr::Kind::Neg ? -v.number : v.number);
        if (!v.is(Value::Kind::Int) && !v.is(Value::Kind::Bool))
          fail(std::string("bad operand type for unary -: '") + type_name(v) + "'");
        const int64_t i = v.is(Value::Kind::Int) ? v.integer : v.flag;
        if (e.kind == Expr::Kind::Pos) return Value::from_int(i);
        if (i == std::numeric_limits<int64_t>::min()) fail("integer overflow");
        return Value::from_int(-i);
      }
      case Expr::Kind::Not: return Value::boolean(!truthy(eval(*e.target)));
      case Expr::Kind::Binary: return eval_binary(e);
      case Expr::Kind::Compare: return eval_compare(e);
      case Expr::Kind::Conditional:
        if (truthy(eval(*e.args[0]))) return eval(*e.args[1]);
        return e.args[2] ? eval(*e.args[2]) : Value::undefined("the inline if had no else");
    }
    return Value();
  }

  // ---- operators ---------------------------------------------------------------------------
  Value eval_compare(const Expr& e) {
    Value left = eval(*e.args[0]);
    for (size_t i = 0; i < e.arg_names.size(); ++i) {
      Value right = eval(*e.args[i + 1]);
      line_ = e.line;
      const std::string& op = e.arg_names[i];
      bool r;
      if (op == "==") r = equals(left, right);
      else if (op == "!=") r = !equals(left, right);
      else if (op == "in" || op == "notin") r = (op == "in") == apply_test("in", left, CallArgs{{right}, {}});
      else {
        if (left.is_undefined()) fail(left.text.bytes());
        if (right.is_undefined()) fail(right.text.bytes());
        const int c = compare(left, right);
        r = op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0;
      }
      if (!r) return Value::boolean(false);
      left = std::move(right);
    }
    return Value::boolean(true);
  }

  Value eval_binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      Value left = eval(*e.args[0]);
      return truthy(left) ? eval(*e.args[1]) : left;
    }
    if (op == "or") {
      Value left = eval(*e.args[0]);
      return truthy(left) ? left : eval(*e.args[1]);
    }
    const Value a = eval(*e.args[0]);
    const Value b = eval(*e.args[1]);
    line_ = e.line;
    if (op == "~") {
      Text t = to_text(a);
      t.append(to_text(b));
      budget_.charge_string(t.size());
      return Value::string(std::move(t));
    }
    if (a.is_undefined()) fail(a.text.bytes());
    if (b.is_undefined()) fail(b.text.bytes());
    const auto type_error = [&]() -> Value {
      fail("unsupported operand types for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
    };
    if (op == "+") {
      if (a.is(Value::Kind::String) && b.is(Value::Kind::String)) {
        budget_.charge_string(a.text.size() + b.text.size());
        Text t = a.text;
        t.append(b.text);
        return Value::string(std::move(t));
      }
      if (a.is(Value::Kind::List) && b.is(Value::Kind::List)) {
        budget_.check_items(a.list->size() + b.list->size());
        List items = *a.list;
        items.insert(items.end(), b.list->begin(), b.list->end());
        return Value::from_list(std::move(items));
      }
    }
    if (op == "*") {
      const Value* seq = a.is(Value::Kind::String) || a.is(Value::Kind::List) ? &a : &b;
      const Value* times = seq == &a ? &b : &a;
      if ((seq->is(Value::Kind::String) || seq->is(Value::Kind::List)) &&
          (times->is(Value::Kind::Int) || times->is(Value::Kind::Bool)))
        return repeat(*seq, times->is(Value::Kind::Int) ? times->integer : times->flag);
    }
    if (!a.is_number() || !b.is_number()) return type_error();
    return arithmetic(op, a, b);
  }

  Value repeat(const Value& seq, int64_t n) {
    n = std::max<int64_t>(n, 0);
    if (seq.is(Value::Kind::String)) {
      const double bytes = static_cast<double>(seq.text.size()) * static_cast<double>(n);
      if (bytes > static_cast<double>(limits_.max_output_bytes)) fail("a string would exceed the template size limit");
      budget_.charge_string(static_cast<size_t>(bytes));
      Text t;
      for (int64_t i = 0; i < n; ++i) t.append(seq.text);
      return Value::string(std::move(t));
    }
    const double items = static_cast<double>(seq.list->size()) * static_cast<double>(n);
    budget_.check_items(static_cast<size_t>(std::min(items, 1e18)));
    List out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.list->begin(), seq.list->end());
    return Value::from_list(std::move(out));
  }

  static Value arithmetic(const std::string& op, const Value& a, const Value& b) {
    const bool floats = a.is(Value::Kind::Float) || b.is(Value::Kind::Float);
    if (op == "/") {
      if (b.as_double() == 0) fail("division by zero");
      return Value::from_float(a.as_double() / b.as_double());
    }
    if (floats) {
      const double x = a.as_double(), y = b.as_double();
      if (op == "+") return Value::from_float(x + y);
      if (op == "-") return Value::from_float(x - y);
      if (op == "*") return Value::from_float(x * y);
      if (op == "**") return Value::from_float(std::pow(x, y));
      if (y == 0) fail("division by zero");
      const double q = std::floor(x / y);
      if (op == "//") return Value::from_float(q);
      return Value::from_float(x - q * y);  // %: the sign of the divisor, as Python
    }
    const int64_t x = a.is(Value::Kind::Int) ? a.integer : a.flag;
    const int64_t y = b.is(Value::Kind::Int) ? b.integer : b.flag;
    int64_t r = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
    else if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
    else if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
    else if (op == "**") {
      if (y < 0) return Value::from_float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      r = 1;
      for (int64_t i = 0; i < y && !overflow; ++i) {
        overflow = __builtin_mul_overflow(r, x, &r);
        if (r == 0 || r == 1) break;
        if (r == -1) {
          r = (y % 2 == 0) ? 1 : -1;
          break;
        }
      }
    } else {
      if (y == 0) fail("division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) fail("integer overflow");
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;  // floor division
      r = op == "//" ? q : x - q * y;
    }
    if (overflow) fail("integer overflow");
    return Value::from_int(r);
  }

  const RenderLimits& limits_;
  Budget budget_;
  int64_t iterations_left_ = 0;
  int call_depth_ = 0;
  std::vector<std::shared_ptr<Dict>> scopes_;
  Value pending_caller_;
  int line_ = 0;
  const char* construct_ = nullptr;
};

}  // namespace

Text render_body(const Body& body, const Dict& variables, const RenderLimits& limits) {
  Interpreter interpreter(variables, limits);
  return interpreter.run(body);
}

}  // namespace magnetar::jinja
