// xdev-op-table: the op table of docs/ops.md and the plugins' header of op
// and attribute names (<xdev/op_names.h>), generated from the core's op
// table (core/opdefs/op_table.cpp), so neither can drift from the code.
//
//   xdev-op-table --markdown          print the table
//   xdev-op-table --check docs/ops.md exit 1 unless the page's marked table is current
//   xdev-op-table --update docs/ops.md rewrite the page's marked table
//   xdev-op-table --check-header sdk/include/xdev/op_names.h   exit 1 unless current
//   xdev-op-table --update-header sdk/include/xdev/op_names.h  rewrite it
//
// The table sits between the lines kBegin and kEnd of the page; the meson
// tests `ops_md_table` and `op_names_header` run the checks.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "opdefs/op_table.hpp"

namespace {

using xdev::DType;
using xdev::detail::AttrDef;
using xdev::detail::DTypeRule;
using xdev::detail::OpDef;

constexpr const char* kBegin =
    "<!-- op-table begin: generated from core/opdefs/op_table.cpp by "
    "`build/tools/op-table/xdev-op-table --update docs/ops.md`; edit the table there -->";
constexpr const char* kEnd = "<!-- op-table end -->";

// "f32, f64, f16, bf16, i32, i64", "all nine".
std::string dtypes_text(uint64_t dtypes) {
  if (dtypes == xdev::detail::kAllDTypes) return "all nine";
  std::string text;
  const std::pair<DType, const char*> names[] = {
      {DType::kFloat32, "f32"}, {DType::kFloat64, "f64"}, {DType::kFloat16, "f16"},
      {DType::kBFloat16, "bf16"}, {DType::kInt32, "i32"}, {DType::kInt64, "i64"},
      {DType::kBool, "bool"},   {DType::kUInt8, "u8"},   {DType::kInt8, "i8"}};
  for (const auto& [d, name] : names) {
    if ((dtypes & xdev::detail::dtype_bit(d)) != 0) text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text;
}

// Table cells may not hold a bare '|'.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string attr_text(const AttrDef& a) {
  std::string text = "`" + std::string(a.name) + "` (" + xdev::detail::attr_kind_name(a.kind);
  if (!a.required) {
    switch (a.kind) {
      case XDEV_ATTR_BOOL: text += ", default " + std::string(a.default_bool ? "true" : "false"); break;
      case XDEV_ATTR_INT: text += ", default " + std::to_string(a.default_int); break;
      case XDEV_ATTR_FLOAT: text += ", default " + number(a.default_float); break;
      case XDEV_ATTR_DTYPE: text += ", default " + std::string(xdev::to_string(a.default_dtype)); break;
      case XDEV_ATTR_STRING: text += ", default " + std::string(a.choices[0]); break;
      default: break;
    }
  }
  if (a.kind == XDEV_ATTR_INT || a.kind == XDEV_ATTR_INTS) {
    const std::string each = a.kind == XDEV_ATTR_INTS ? "each " : "";
    if (a.min != INT64_MIN && a.max != INT64_MAX) {
      text += ", " + each + "in [" + std::to_string(a.min) + ", " + std::to_string(a.max) + "]";
    } else if (a.min != INT64_MIN) {
      text += ", " + each + "≥ " + std::to_string(a.min);
    } else if (a.max != INT64_MAX) {
      text += ", " + each + "≤ " + std::to_string(a.max);
    }
  }
  if (a.kind == XDEV_ATTR_FLOAT && a.finite) text += ", finite";
  if (a.kind == XDEV_ATTR_STRING) {
    text += ", one of";
    for (size_t k = 0; k < a.choices.size(); ++k) text += std::string(k ? "," : "") + " " + a.choices[k];
  }
  if (a.kind == XDEV_ATTR_DTYPE && a.dtypes != xdev::detail::kAllDTypes) {
    text += ", " + dtypes_text(a.dtypes);
  }
  if (!a.to_kernel) text += ", core only";
  return text + "): " + a.doc;
}

std::string inputs_text(const OpDef& def) {
  if (def.inputs.empty()) return "—";
  std::string text;
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    const std::string name = def.inputs[i].name;
    const bool repeats = def.variadic && i + 1 == def.inputs.size();
    text += (i ? ", " : "") +
            (repeats ? "`" + name + "0` … `" + name + "(n-1)`, n ≥ " + std::to_string(def.min_inputs)
                     : "`" + name + "`");
  }
  if (def.shape_class == xdev::detail::ShapeClass::kSame && def.inputs.size() + def.variadic > 1) {
    text += ", same shape (no broadcasting)";
  }
  if (def.shape_class == xdev::detail::ShapeClass::kMatMul) text += ", rank 2";
  if (def.broadcast_inputs) {
    text += ", already broadcast to the output shape (stride 0 on broadcast axes)";
  }
  if (def.contiguous_inputs) text += ", *contiguous*";
  // Inputs that accept other dtypes than input 0 say so.
  for (size_t i = 1; i < def.inputs.size(); ++i) {
    if (def.inputs[i].same_dtype_as < 0) {
      text += "; `" + std::string(def.inputs[i].name) + "`: " + dtypes_text(def.inputs[i].dtypes);
    }
  }
  return text;
}

std::string dtype_column(const OpDef& def) {
  const auto& out = def.outputs[0];
  std::string result;
  if (out.dtype_rule == DTypeRule::kAttr) result = dtypes_text(def.attr(out.attr)->dtypes);
  if (out.dtype_rule == DTypeRule::kFixed) result = std::string(xdev::to_string(out.fixed));
  if (def.inputs.empty()) return result;
  const std::string in = dtypes_text(def.inputs[0].dtypes);
  if (out.dtype_rule == DTypeRule::kInput) return in;
  return in + " → " + result;
}

std::string markdown() {
  std::string text =
      "| op | computes | inputs | attributes | output | dtypes |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const OpDef& def : xdev::detail::op_defs()) {
    std::string attrs;
    for (const AttrDef& a : def.attrs) attrs += (attrs.empty() ? "" : "; ") + attr_text(a);
    std::string output = def.output_doc;
    if (def.outputs.size() > 1) {
      output = "";
      for (const auto& o : def.outputs) output += (output.empty() ? "`" : ", `") + std::string(o.name) + "`";
      output += ": " + std::string(def.output_doc);
    }
    text += "| `" + std::string(def.name) + "` | " + cell(def.summary) + " | " +
            cell(inputs_text(def)) + " | " + cell(attrs.empty() ? "—" : attrs) + " | " +
            cell(output) + " | " + cell(dtype_column(def)) + " |\n";
  }
  return text;
}

constexpr const char* kHeaderPath = "sdk/include/xdev/op_names.h";

// A comment's text: never a "*/" that would end it early.
std::string comment(std::string text) {
  for (size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at)) {
    text.replace(at, 2, "* /");
  }
  return text;
}

// <xdev/op_names.h>: a macro per op name and per attribute name, so that a
// plugin's misspelled name fails to compile.
std::string header() {
  std::string text =
      "/* xdev/op_names.h: the names of the ops of xdev's op table and of their\n"
      " * attributes, for plugins in C or C++: what a kernel registers under\n"
      " * (xdev_kernel_info_t::op) and what it finds in xdev_attr_t::name.\n"
      " *\n"
      " * Generated from core/opdefs/op_table.cpp by\n"
      " *   build/tools/op-table/xdev-op-table --update-header sdk/include/xdev/op_names.h\n"
      " * (the meson test op_names_header fails when it is stale); do not edit.\n"
      " *\n"
      " * An op is XDEV_OP_<name> (\"MatMul\": XDEV_OP_MatMul), an attribute\n"
      " * XDEV_ATTR_NAME_<name> (\"transpose_a\": XDEV_ATTR_NAME_transpose_a),\n"
      " * each a string literal spelled as the op table spells it. A misspelled\n"
      " * macro is a compile error; a misspelled string is a kernel the core never\n"
      " * calls (a load warning, and a conformance failure) or an attribute never\n"
      " * found. docs/ops.md says what each op computes and takes.\n"
      " */\n"
      "#ifndef XDEV_OP_NAMES_H_\n"
      "#define XDEV_OP_NAMES_H_\n\n"
      "/* The ops, in the op table's order. */\n";
  std::map<std::string, std::set<std::string>> attrs;  // attribute -> ops taking it
  for (const OpDef& def : xdev::detail::op_defs()) {
    text += "#define XDEV_OP_" + std::string(def.name) + " \"" + def.name + "\" /* " +
            comment(def.summary) + " */\n";
    for (const AttrDef& a : def.attrs) {
      if (a.to_kernel) attrs[a.name].insert(def.name);
    }
  }
  text += "#define XDEV_OP_COUNT " + std::to_string(xdev::detail::op_defs().size()) + "\n\n";
  text += "/* The attributes kernels receive, by name; the comment lists the ops\n"
          " * that take each. (Attributes the core alone reads are not here.) */\n";
  for (const auto& [name, ops] : attrs) {
    std::string users;
    for (const std::string& op : ops) users += (users.empty() ? "" : ", ") + op;
    text += "#define XDEV_ATTR_NAME_" + name + " \"" + name + "\" /* " + users + " */\n";
  }
  text += "\n#endif /* XDEV_OP_NAMES_H_ */\n";
  return text;
}

// The page split around its marked table: before (through kBegin), the
// table, after (from kEnd). False when the markers are missing.
bool split(const std::string& page, std::string& before, std::string& table, std::string& after) {
  const size_t begin = page.find(kBegin);
  if (begin == std::string::npos) return false;
  const size_t table_start = page.find('\n', begin);
  const size_t end = page.find(kEnd, begin);
  if (table_start == std::string::npos || end == std::string::npos || end < table_start) return false;
  before = page.substr(0, table_start + 1);
  table = page.substr(table_start + 1, end - table_start - 1);
  after = page.substr(end);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xdev-op-table: docs/ops.md's op table, from the core's op table"};
  bool print = false;
  std::string check, update;
  app.add_flag("--markdown", print, "Print the table as Markdown");
  app.add_option("--check", check, "Exit 1 unless FILE's marked table is the generated one")
      ->option_text("FILE");
  app.add_option("--update", update, "Rewrite FILE's marked table")->option_text("FILE");
  std::string check_header, update_header;
  app.add_option("--check-header", check_header,
                 "Exit 1 unless FILE is the generated <xdev/op_names.h>")
      ->option_text("FILE");
  app.add_option("--update-header", update_header, "Write <xdev/op_names.h> to FILE")
      ->option_text("FILE");
  CLI11_PARSE(app, argc, argv);

  if (!check_header.empty() || !update_header.empty()) {
    const std::string generated = header();
    if (!check_header.empty()) {
      std::ifstream in(check_header);
      std::stringstream current;
      current << in.rdbuf();
      if (!in.is_open() || current.str() != generated) {
        std::cerr << "xdev-op-table: " << check_header
                  << (in.is_open() ? " is stale: it differs from core/opdefs/op_table.cpp"
                         : " cannot be read")
                  << ". Regenerate it with\n"
                     "  ninja -C build tools/op-table/xdev-op-table && "
                     "build/tools/op-table/xdev-op-table --update-header "
                  << kHeaderPath << "\n";
        return 1;
      }
      std::cout << check_header << ": current (" << xdev::detail::op_defs().size() << " ops)\n";
    }
    if (!update_header.empty()) {
      std::ofstream out(update_header, std::ios::trunc);
      out << generated;
      if (!out) {
        std::cerr << "xdev-op-table: cannot write " << update_header << "\n";
        return 2;
      }
      std::cout << update_header << ": written (" << xdev::detail::op_defs().size() << " ops)\n";
    }
    if (check.empty() && update.empty() && !print) return 0;
  }

  const std::string table = markdown();
  if (print) std::cout << table;
  for (const bool checking : {true, false}) {
    const std::string& path = checking ? check : update;
    if (path.empty()) continue;
    std::ifstream in(path);
    if (!in) {
      std::cerr << "xdev-op-table: cannot read " << path << "\n";
      return 2;
    }
    std::stringstream page;
    page << in.rdbuf();
    std::string before, current, after;
    if (!split(page.str(), before, current, after)) {
      std::cerr << "xdev-op-table: " << path << " lacks the lines\n  " << kBegin << "\n  " << kEnd
                << "\naround its op table\n";
      return 2;
    }
    if (checking) {
      if (current != table) {
        std::cerr << "xdev-op-table: the op table in " << path
                  << " is stale: it differs from core/opdefs/op_table.cpp. Regenerate it with\n"
                     "  ninja -C build tools/op-table/xdev-op-table && "
                     "build/tools/op-table/xdev-op-table --update docs/ops.md\n"
                     "--- in the page\n"
                  << current << "+++ generated\n"
                  << table;
        return 1;
      }
      std::cout << path << ": the op table is current (" << xdev::detail::op_defs().size()
                << " ops)\n";
    } else {
      std::ofstream out(path, std::ios::trunc);
      out << before << table << after;
      if (!out) {
        std::cerr << "xdev-op-table: cannot write " << path << "\n";
        return 2;
      }
      std::cout << path << ": op table updated (" << xdev::detail::op_defs().size() << " ops)\n";
    }
  }
  return 0;
}
