#include "models/scenario/expression.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "models/core/scenario_error.hpp"
#include "models/scenario/json_reader.hpp"

namespace trainsim {

struct Expression::Node {
  enum Kind { kNumber, kName, kUnary, kBinary } kind = kNumber;
  double number = 0;
  std::string name;  // kName, or the operator
  std::shared_ptr<const Node> left, right;
};

namespace {

using NodePtr = std::shared_ptr<const Expression::Node>;

class Parser {
 public:
  Parser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  NodePtr parse() {
    if (s_.size() > 4096) fail("expression longer than 4096 characters");
    NodePtr n = parse_or();
    skip();
    if (i_ != s_.size()) fail("unexpected \"" + safe_excerpt(s_.substr(i_, 12)) + "\"");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw ScenarioError(path_, "in \"" + safe_excerpt(s_, 120) + "\" at column " + std::to_string(i_ + 1) + ": " + why);
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(const char* op) {
    skip();
    const std::size_t n = std::char_traits<char>::length(op);
    if (s_.compare(i_, n, op) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }
  static NodePtr binary(const std::string& op, NodePtr l, NodePtr r) {
    auto n = std::make_shared<Expression::Node>();
    n->kind = Expression::Node::kBinary;
    n->name = op;
    n->left = std::move(l);
    n->right = std::move(r);
    return n;
  }
  NodePtr parse_or() {
    NodePtr l = parse_and();
    while (eat("||")) l = binary("||", l, parse_and());
    return l;
  }
  NodePtr parse_and() {
    NodePtr l = parse_cmp();
    while (eat("&&")) l = binary("&&", l, parse_cmp());
    return l;
  }
  NodePtr parse_cmp() {
    NodePtr l = parse_sum();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (eat(op)) return binary(op, l, parse_sum());
    return l;
  }
  NodePtr parse_sum() {
    NodePtr l = parse_product();
    while (true) {
      if (eat("+")) l = binary("+", l, parse_product());
      else if (eat("-")) l = binary("-", l, parse_product());
      else return l;
    }
  }
  NodePtr parse_product() {
    NodePtr l = parse_unary();
    while (true) {
      if (eat("*")) l = binary("*", l, parse_unary());
      else if (eat("/")) l = binary("/", l, parse_unary());
      else return l;
    }
  }
  NodePtr parse_unary() {
    if (++depth_ > 64) fail("nested deeper than 64");
    NodePtr n;
    if (eat("-")) {
      auto u = std::make_shared<Expression::Node>();
      u->kind = Expression::Node::kUnary;
      u->name = "-";
      u->left = parse_unary();
      n = u;
    } else if (eat("(")) {
      n = parse_or();
      if (!eat(")")) fail("missing \")\"");
    } else {
      n = parse_atom();
    }
    --depth_;
    return n;
  }
  NodePtr parse_atom() {
    skip();
    if (i_ >= s_.size()) fail("expected a number or a name");
    auto n = std::make_shared<Expression::Node>();
    const char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = s_.c_str() + i_;
      char* end = nullptr;
      n->number = std::strtod(begin, &end);
      if (end == begin || !std::isfinite(n->number)) fail("bad number");
      i_ += static_cast<std::size_t>(end - begin);
      n->kind = Expression::Node::kNumber;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' ||
                                s_[i_] == '.'))
        ++i_;
      n->kind = Expression::Node::kName;
      n->name = s_.substr(start, i_ - start);
      return n;
    }
    fail("unexpected \"" + safe_excerpt(std::string(1, c)) + "\"");
  }

  const std::string& s_;
  std::string path_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

double eval(const Expression::Node& n, const Expression::Lookup& lookup, const std::string& path,
            const std::string& text) {
  switch (n.kind) {
    case Expression::Node::kNumber: return n.number;
    case Expression::Node::kName: {
      const auto v = lookup(n.name);
      if (!v)
        throw ScenarioError(path, "in \"" + safe_excerpt(text, 120) + "\": unknown name \"" +
                                      safe_excerpt(n.name) + "\"");
      return *v;
    }
    case Expression::Node::kUnary: return -eval(*n.left, lookup, path, text);
    case Expression::Node::kBinary: {
      const std::string& op = n.name;
      const double a = eval(*n.left, lookup, path, text);
      if (op == "&&" && a == 0) return 0;
      if (op == "||" && a != 0) return 1;
      const double b = eval(*n.right, lookup, path, text);
      if (op == "+") return a + b;
      if (op == "-") return a - b;
      if (op == "*") return a * b;
      if (op == "/") return b == 0 ? (a == 0 ? 0 : HUGE_VAL) : a / b;
      if (op == "<") return a < b;
      if (op == "<=") return a <= b;
      if (op == ">") return a > b;
      if (op == ">=") return a >= b;
      if (op == "==") return a == b;
      if (op == "!=") return a != b;
      if (op == "&&" || op == "||") return b != 0;
      return 0;
    }
  }
  return 0;
}

void collect(const Expression::Node& n, std::vector<std::string>& out) {
  if (n.kind == Expression::Node::kName) out.push_back(n.name);
  if (n.left) collect(*n.left, out);
  if (n.right) collect(*n.right, out);
}

}  // namespace

Expression Expression::parse(const std::string& text, const std::string& path) {
  Expression e;
  e.text_ = text;
  e.path_ = path;
  e.root_ = Parser(text, path).parse();
  return e;
}

double Expression::evaluate(const Lookup& lookup) const { return eval(*root_, lookup, path_, text_); }

std::vector<std::string> Expression::names() const {
  std::vector<std::string> out;
  if (root_) collect(*root_, out);
  return out;
}

}  // namespace trainsim
